"""Plain NumPy reference implementations: the oracle of the tests and the
baseline of the benchmarks.

Every compiled kernel and learner of :mod:`onlinepca_fast` has a
straightforward NumPy counterpart here: sort-based capping, the loop of
Algorithm 2 of Warmuth & Kuzmin (2008), ``numpy.linalg.eigh`` for every
eigen-update and every trial.  They favour obviousness over speed.

Layers (no cycle): ``_kernels`` (cap, cap_log, decompose, sample_corner,
rank_one_update, bordered_update) is the floor; ``_learners`` and
``_kernel_pca`` are built on it.
"""

from ._kernel_pca import OnlineKernelPCA, gram
from ._kernels import (bordered_update, cap, cap_log, decompose, rank_one_update,
                       sample_corner)
from ._learners import (CappedHedge, CenteredOnlinePCA, FollowTheLeader, Hedge,
                        OnlineAdaptivePCA, OnlinePCA, SimplexVarianceMinimizer,
                        VarianceMinimizer)

__all__ = ["cap", "cap_log", "decompose", "sample_corner", "rank_one_update",
           "bordered_update", "gram", "Hedge", "CappedHedge", "OnlinePCA",
           "OnlineAdaptivePCA", "CenteredOnlinePCA", "FollowTheLeader",
           "VarianceMinimizer", "SimplexVarianceMinimizer", "OnlineKernelPCA"]
