"""Randomized online PCA learners of Warmuth & Kuzmin with a compiled core.

Learners (scikit-learn style, one trial per row of ``partial_fit``):

========================  =============================================
``Hedge``                 WK Algorithm 1
``CappedHedge``           WK Algorithm 3 (YL Algorithm 1 with fixed share)
``OnlinePCA``             WK Algorithm 5 (mixing: WK Sec. 8, YL Alg. 4)
``OnlineAdaptivePCA``     YL Algorithm 4
``CenteredOnlinePCA``     WK Algorithm 6
``FollowTheLeader``       WK Section 7 baseline
``VarianceMinimizer``     YL Algorithm 5 / Warmuth & Kuzmin 2006
``SimplexVarianceMinimizer``  YL Algorithm 6
``OnlineKernelPCA``       KW Algorithm 6 (Kuzmin & Warmuth 2007)
========================  =============================================

Submodules
----------
kernels
    Compiled building blocks: capping, mixture decomposition, sampling,
    rank-one eigen updates.
reference
    Plain NumPy versions of everything, the oracle of the tests.
metrics
    Losses of the best subspaces in hindsight, regrets, bounds.
datasets
    The synthetic streams of the papers' experiments.
"""

from importlib.metadata import version as _version

from . import datasets, kernels, metrics, reference
from .learners import (CappedHedge, CenteredOnlinePCA, FollowTheLeader, Hedge,
                       OnlineAdaptivePCA, OnlinePCA, SimplexVarianceMinimizer,
                       VarianceMinimizer)
from .kernel_pca import OnlineKernelPCA

__version__ = _version("onlinepca_fast")

__all__ = [
    "Hedge", "CappedHedge", "OnlinePCA", "OnlineAdaptivePCA", "CenteredOnlinePCA",
    "FollowTheLeader", "VarianceMinimizer", "SimplexVarianceMinimizer",
    "OnlineKernelPCA",
    "kernels", "reference", "metrics", "datasets", "__version__",
]
