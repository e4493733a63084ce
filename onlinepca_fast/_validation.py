"""Input validation shared by the kernels and the learners.

Everything a compiled routine receives passes through here first, so that
bad input is rejected with a message naming the argument before any state
is touched.
"""

import numbers
import operator

import numpy as np


class NotFittedError(ValueError, AttributeError):
    """Raised when a learner is used before it has seen any data."""


def as_float_vector(x, name, *, allow_neg_inf=False, nonnegative=False):
    """Return `x` as a C-contiguous 1-D float64 array, or raise.

    Raises TypeError for non-numeric, boolean, complex or object input and
    ValueError for a wrong number of dimensions, an empty vector, NaN, +inf
    (and -inf unless `allow_neg_inf`), or negative entries when
    `nonnegative`.
    """
    try:
        arr = np.asarray(x)
    except ValueError as exc:  # ragged nested sequences
        raise ValueError(f"{name} must be a 1-D numeric array: {exc}") from None
    kind = arr.dtype.kind
    if kind not in "iuf":
        if kind == "c":
            raise TypeError(f"{name} must be real, got complex dtype {arr.dtype}")
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    with np.errstate(over="ignore"):  # float128 beyond range -> inf, caught below
        arr = np.ascontiguousarray(arr, dtype=np.float64)
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    if allow_neg_inf:
        if np.isposinf(arr).any():
            raise ValueError(f"{name} contains +inf")
    elif not np.isfinite(arr).all():
        raise ValueError(f"{name} contains infinite values")
    if nonnegative and (arr < 0).any():
        raise ValueError(f"{name} must be non-negative, got min {arr.min()!r}")
    return arr


def as_int(value, name, low, high):
    """Return `value` as a Python int in [low, high], or raise.

    Booleans and floats are rejected with TypeError even when integral, so
    that ``d=2.0`` or ``d=True`` is never silently accepted.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    value = operator.index(value)
    if not low <= value <= high:
        raise ValueError(f"{name} must satisfy {low} <= {name} <= {high}, got {value}")
    return value


def as_generator(random_state, name="random_state"):
    """Return a numpy Generator from None, an int seed or a Generator."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or (isinstance(random_state, numbers.Integral)
                                and not isinstance(random_state, (bool, np.bool_))):
        if random_state is not None and random_state < 0:
            raise ValueError(f"{name} must be a non-negative seed, got {random_state}")
        return np.random.default_rng(random_state)
    raise TypeError(f"{name} must be None, an int or a numpy.random.Generator, "
                    f"got {type(random_state).__name__}")
