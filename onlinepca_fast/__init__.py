"""Randomized online PCA learners of Warmuth & Kuzmin with a compiled core.

Submodules
----------
kernels
    Compiled building blocks: capping, mixture decomposition, sampling.
reference
    Plain NumPy versions of everything, the oracle of the tests.
"""

from importlib.metadata import version as _version

from . import kernels, reference

__version__ = _version("onlinepca_fast")

__all__ = ["kernels", "reference", "__version__"]
