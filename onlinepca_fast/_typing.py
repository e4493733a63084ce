"""Type aliases of the public API's annotations (checked by mypy, see
tests/test_typing.py)."""

from collections.abc import Callable
from typing import Any, Literal, Optional, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ArrayLike", "FloatArray", "IndexArray", "SeedLike", "Share", "Sampler", "State", "KernelLike",
           "Result"]

#: float64 arrays returned by the learners, kernels and metrics
FloatArray = NDArray[np.float64]
#: index arrays (drawn corners)
IndexArray = NDArray[np.intp]
#: what ``random_state`` accepts
SeedLike = Union[None, int, np.random.Generator]
#: the mixing steps of ``share=``
Share = Optional[Literal["fixed", "uniform", "past"]]
#: the corner samplers
Sampler = Literal["decomposition", "systematic"]
#: How OnlinePCA keeps log W.
State = Literal["auto", "dense", "clustered"]
#: the kernels of OnlineKernelPCA: a name, or k(X, Y) -> the matrix
KernelLike = Union[Literal["rbf", "poly", "linear"], Callable[[FloatArray, FloatArray], ArrayLike]]
#: an experiment's result (see :mod:`onlinepca_fast.app.experiments`)
Result = dict[str, Any]
