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
from ._kernels import (
    bordered_update,
    cap,
    cap_log,
    decompose,
    rank_one_update,
    sample_corner,
)
from ._learners import (
    CappedHedge,
    CenteredOnlinePCA,
    FollowTheLeader,
    Hedge,
    OnlineAdaptivePCA,
    OnlinePCA,
    SimplexVarianceMinimizer,
    VarianceMinimizer,
)

# The reference learners take the parameters of their compiled twins (a
# subset: nothing about loss records or re-orthogonalisation); their
# docstrings say so in a Parameters section built from the signatures.
_TYPES = {
    "n_components": "int", "eta": "float", "alpha": "float",
    "share": '{None, "fixed", "uniform", "past"}',
    "sampler": '{"decomposition", "systematic"}',
    "random_state": "None, int or numpy.random.Generator",
    "center_lr_inv": "float", "mean_init": "None or array_like of shape (n,)",
    "centered": "bool", "kernel": '{"rbf", "poly", "linear"} or callable',
    "degree": "int", "gamma": '"scale", "auto", float or None', "coef0": "float",
    "budget": "int or None", "map_size": "int",
}


def _document_parameters(cls):
    import inspect

    lines = ["", "    Parameters", "    ----------"]
    for name, param in inspect.signature(cls).parameters.items():
        default = "" if param.default is param.empty else f", default={param.default!r}"
        lines += [f"    {name} : {_TYPES[name]}{default}",
                  f"        As for :class:`onlinepca_fast.{cls.__name__}`."]
    cls.__doc__ = cls.__doc__.rstrip() + "\n" + "\n".join(lines) + "\n"


for _cls in (CappedHedge, CenteredOnlinePCA, FollowTheLeader, Hedge, OnlineAdaptivePCA,
             OnlinePCA, SimplexVarianceMinimizer, VarianceMinimizer, OnlineKernelPCA):
    _document_parameters(_cls)

__all__ = ["cap", "cap_log", "decompose", "sample_corner", "rank_one_update",
           "bordered_update", "gram", "Hedge", "CappedHedge", "OnlinePCA",
           "OnlineAdaptivePCA", "CenteredOnlinePCA", "FollowTheLeader",
           "VarianceMinimizer", "SimplexVarianceMinimizer", "OnlineKernelPCA"]
