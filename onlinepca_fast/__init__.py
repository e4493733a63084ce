"""Randomized online PCA learners of Warmuth & Kuzmin with a compiled core.

Learners (scikit-learn estimators, one trial per row of ``partial_fit``):

============================  =============================================
``Hedge``                     WK Algorithm 1
``CappedHedge``               WK Algorithm 3 (YL Algorithm 1 with fixed share)
``OnlinePCA``                 WK Algorithm 5 (mixing: WK Sec. 8, YL Alg. 4)
``OnlineAdaptivePCA``         YL Algorithm 4
``CenteredOnlinePCA``         WK Algorithm 6
``FollowTheLeader``           WK Section 7 baseline
``VarianceMinimizer``         YL Algorithm 5 / Warmuth & Kuzmin 2006
``SimplexVarianceMinimizer``  YL Algorithm 6
``OnlineKernelPCA``           KW Algorithm 6 (Kuzmin & Warmuth 2007)
============================  =============================================

Submodules
----------
kernels
    Compiled building blocks: capping, mixture decomposition, sampling,
    rank-one and bordered eigen-updates.
reference
    Plain NumPy versions of everything, the oracle of the tests.
metrics
    Losses of the best subspaces in hindsight, regrets, bounds.
datasets
    The synthetic streams of the papers' experiments.
app
    The application: the papers' experiments rerun, the sweep, the plots,
    the command line ``onlinepca-fast`` (not imported by the library).

The papers are cited in full in the README's references (WK, KW, YL, ...).
"""

try:
    from . import _kernels  # noqa: F401  (the compiled core)
except ImportError:  # pragma: no cover - depends on how it is imported
    import os as _os

    _here = _os.path.dirname(_os.path.abspath(__file__))
    if not any(name.startswith("_kernels.") and not name.endswith((".pyx", ".pxd"))
               for name in _os.listdir(_here)):
        raise ImportError(
            "onlinepca_fast's compiled core (onlinepca_fast._kernels) is not built "
            f"here: you are importing the package from its source tree ({_here}), "
            "which holds the C and Cython sources but not the compiled extension. "
            "Install the package (`pip install .`, or `pip install "
            "--no-build-isolation -e .` for development) and import it from "
            "outside the source tree.") from None
    raise

from . import datasets, kernels, metrics, reference
from ._version import __version__
from .learners import (
    CappedHedge,
    CenteredOnlinePCA,
    FollowTheLeader,
    Hedge,
    OnlineAdaptivePCA,
    OnlineKernelPCA,
    OnlinePCA,
    SimplexVarianceMinimizer,
    VarianceMinimizer,
)

__all__ = [
    "Hedge", "CappedHedge", "OnlinePCA", "OnlineAdaptivePCA", "CenteredOnlinePCA",
    "FollowTheLeader", "VarianceMinimizer", "SimplexVarianceMinimizer",
    "OnlineKernelPCA",
    "kernels", "reference", "metrics", "datasets", "__version__",
]
