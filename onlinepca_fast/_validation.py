"""Every argument check of the package, in one place.

Hyper-parameters are declared, per estimator, as a small table of
constraints (``_constraints``: argument name -> :class:`Constraint`) and
checked at once by :func:`check_params` when data arrives, so that a bad
value is reported before any state changes.  Functions (kernels, metrics,
experiments, the command line) use the same constraints for their scalar
arguments and the converters below for their arrays.  The rules are the
same everywhere:

- a wrong type is a ``TypeError`` (bools are not numbers, floats are not
  integers, strings are not numbers), a wrong value a ``ValueError``;
- complex data is a ``ValueError`` ("Complex data not supported", as
  scikit-learn says), NaN and infinity are ``ValueError``;
- object arrays of real numbers are converted as scikit-learn converts them;
- every message names the argument.
"""

from __future__ import annotations

import math
import numbers
import operator
from typing import Any

import numpy as np

from ._typing import FloatArray

#: The largest step a trial may subtract from a log-weight: ``eta * |x|^2``
#: (and ``|x|^2``, the loss) for the PCA learners, ``eta`` for the others,
#: whose instances are at most 1.  The compiled loop keeps log-weights within
#: this distance of the largest (see ``src/state_dense.c``); with steps bounded
#: too, nothing can overflow.  2**1020 ~ 1.1e307.
MAX_STEP = 2.0 ** 1020


def _type_name(value):
    return type(value).__name__


def _is_bool(value):
    return isinstance(value, (bool, np.bool_))


# --- constraints on scalar arguments ------------------------------------------


class Constraint:
    """A rule for one argument: ``check(value, name, context)`` returns the
    value converted to its canonical type, or raises naming the argument.

    ``context`` holds what data-dependent bounds need (e.g. ``n``, the
    number of features)."""

    def check(self, value, name, context=None):
        value, error = self.examine(value, name, context)
        if error is not None:
            try:
                raise error
            finally:
                error = None  # the frame must not hold its own exception (a cycle)
        return value

    def examine(self, value, name, context=None):
        """``(converted value, None)``, or ``(None, error)`` with the
        exception :meth:`check` would raise, *not* raised.

        Constraints implement this (or only :meth:`check`): no exception is
        raised, hence no traceback kept and no reference cycle made, when a
        value passes -- :class:`OneOf` tries its alternatives this way on
        every call of a learner.
        """
        try:
            return self.check(value, name, context), None
        except (TypeError, ValueError) as exc:
            exc.__traceback__ = None  # keeps no frame (no reference cycle)
            return None, exc

    def describe(self):  # pragma: no cover - abstract
        raise NotImplementedError


def _bound(bound, context):
    return bound(context) if callable(bound) else bound


class Interval(Constraint):
    """A real (``kind="real"``, finite) or integer (``kind="int"``) number in
    an interval; ``low``/``high`` may be None (unbounded) or callables of the
    context; ``closed`` is "both", "left", "right" or "neither"; ``text``
    replaces the generic description in messages; ``note`` (a callable of
    the context) adds a reason in parentheses to a bounded one."""

    def __init__(self, kind, low=None, high=None, closed="both", text=None, note=None):
        if kind not in ("real", "int") or closed not in ("both", "left", "right",
                                                         "neither"):
            raise ValueError("Interval: bad kind or closed")
        self.kind, self.low, self.high, self.closed = kind, low, high, closed
        self.text, self.note = text, note

    def _phrase(self, name, context):
        """"must <phrase>": e.g. "satisfy 1 <= k <= 4", "be a finite number > 0"."""
        if self.text is not None:
            return self.text
        lo, hi = _bound(self.low, context), _bound(self.high, context)
        fmt = (lambda v: f"{v:g}") if self.kind == "real" else str
        lo_op = "<=" if self.closed in ("both", "left") else "<"
        hi_op = "<=" if self.closed in ("both", "right") else "<"
        if lo is not None and hi is not None:
            note = "" if self.note is None else f" ({self.note(context)})"
            return f"satisfy {fmt(lo)} {lo_op} {name} {hi_op} {fmt(hi)}{note}"
        what = "be a finite number" if self.kind == "real" else "be an integer"
        if lo is not None:
            return f"{what} {'>=' if lo_op == '<=' else '>'} {fmt(lo)}"
        if hi is not None:
            return f"{what} {hi_op} {fmt(hi)}"
        return what

    def describe(self, context=None):
        if self.text is not None and self.text.startswith("be "):
            return self.text[3:]
        lo, hi = _bound(self.low, context or {}), _bound(self.high, context or {})
        if lo is None or hi is None:
            return self._phrase("the value", context or {})[3:]
        fmt = (lambda v: f"{v:g}") if self.kind == "real" else str
        left = "[" if self.closed in ("both", "left") else "("
        right = "]" if self.closed in ("both", "right") else ")"
        what = "an integer" if self.kind == "int" else "a finite number"
        return f"{what} in {left}{fmt(lo)}, {fmt(hi)}{right}"

    def examine(self, value, name, context=None):
        context = context or {}
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]  # a 0-d array is a scalar
        if self.kind == "int":
            if _is_bool(value) or not isinstance(value, numbers.Integral):
                return None, TypeError(f"{name} must be an integer, got "
                                       f"{_type_name(value)} {value!r}")
            value = operator.index(value)
        else:
            if _is_bool(value) or not isinstance(value, numbers.Real):
                return None, TypeError(f"{name} must be a real number, got "
                                       f"{_type_name(value)} {value!r}")
            try:
                value = float(value)
            except OverflowError:  # an int beyond the float range (an error path)
                return None, ValueError(f"{name} must be a finite number, got an int of "
                                        f"{int(value).bit_length()} bits")
            if not math.isfinite(value):
                return None, ValueError(f"{name} must {self._phrase(name, context)}, "
                                        f"got {value!r}")
        lo, hi = _bound(self.low, context), _bound(self.high, context)
        closed_lo = self.closed in ("both", "left")
        closed_hi = self.closed in ("both", "right")
        if ((lo is not None and (value < lo or (value == lo and not closed_lo)))
                or (hi is not None and (value > hi or (value == hi and not closed_hi)))):
            return None, ValueError(f"{name} must {self._phrase(name, context)}, "
                                    f"got {value!r}")
        return value, None


class Options(Constraint):
    """One of a few values (``None`` by identity, the rest by equality with
    a value of the same type, so that ``1 == True`` cannot slip through).
    A value of none of the choices' types is a TypeError."""

    def __init__(self, *choices):
        self.choices = choices

    def describe(self, context=None):
        if self.choices == (None,):
            return "None"
        return f"one of {list(self.choices)}"

    def examine(self, value, name, context=None):
        for c in self.choices:
            if value is c or (c is not None and type(value) is type(c) and value == c):
                return c, None
        types = {type(c) for c in self.choices}
        exc = ValueError if type(value) in types else TypeError
        return None, exc(f"{name} must be {self.describe()}, got {value!r}")


class Boolean(Constraint):
    def describe(self, context=None):
        return "a bool"

    def examine(self, value, name, context=None):
        if not _is_bool(value):
            return None, TypeError(f"{name} must be a bool, got {_type_name(value)} "
                                   f"{value!r}")
        return bool(value), None


class RandomState(Constraint):
    """None, a non-negative int seed or a ``numpy.random.Generator``."""

    def describe(self, context=None):
        return "None, an int seed or a numpy.random.Generator"

    def examine(self, value, name, context=None):
        error = _seed_error(value, name)
        return (value, None) if error is None else (None, error)


class IsCallable(Constraint):
    def describe(self, context=None):
        return "a callable"

    def examine(self, value, name, context=None):
        if not callable(value):
            return None, TypeError(f"{name} must be callable, got {_type_name(value)}")
        return value, None


class OneOf(Constraint):
    """What any of several constraints accepts (the first that does).  The
    error is a ValueError if some constraint took the value's type but not
    its value, a TypeError otherwise."""

    def __init__(self, *constraints):
        self.constraints = constraints

    def describe(self, context=None):
        return " or ".join(c.describe(context) for c in self.constraints)

    def examine(self, value, name, context=None):
        # no exception raised unless the value fails every alternative:
        # this runs on every call of a learner, and a caught exception's
        # traceback would keep the caller's frames (its batch) alive in a
        # reference cycle until the cyclic garbage collector ran
        errors = []
        for c in self.constraints:
            converted, error = c.examine(value, name, context)
            if error is None:
                return converted, None
            errors.append(error)
        specific = [e for c, e in zip(self.constraints, errors)
                    if not (isinstance(c, Options) and c.choices == (None,))]
        if len(specific) == 1:  # none_or(rule): what the rule says is clearest
            return None, specific[0]
        kind = ValueError if any(isinstance(e, ValueError) for e in errors) else TypeError
        return None, kind(f"{name} must be {self.describe(context)}, got "
                          f"{_type_name(value)} {value!r}")


def none_or(constraint):
    """``None`` or what `constraint` accepts."""
    return OneOf(Options(None), constraint)


class Vector(Constraint):
    """A finite real vector of ``length(context)`` entries (a copy)."""

    def __init__(self, length):
        self.length = length

    def describe(self, context=None):
        return "a vector"

    def check(self, value, name, context=None):
        v = as_float_vector(value, name).copy()
        n = _bound(self.length, context or {})
        if n is not None and v.shape[0] != n:
            raise ValueError(f"{name} must have {n} entries, got {v.shape[0]}")
        return v


# The constraints shared by several estimators and functions.
ALPHA_VALUE = Interval("real", 0.0, 1.0, closed="left")
ETA_VALUE = Interval("real", 0.0, MAX_STEP, closed="right",
                     text="be a finite number > 0 (at most 2**1020)")


class AutoOr(Constraint):
    """One of the strings `words` (``"auto"``) or what `constraint` accepts
    (another string is a TypeError; anything else is judged by `constraint`,
    whose messages are kept)."""

    def __init__(self, constraint, words=("auto",)):
        self.constraint = constraint
        self.words = tuple(words)

    def _names(self):
        quoted = [f'"{w}"' for w in self.words]
        return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]

    def describe(self, context=None):
        return f'{self._names()} or {self.constraint.describe(context)}'

    def check(self, value, name, context=None):
        if isinstance(value, str):  # a wrong type, as for the number alone
            if value in self.words:
                return value
            sep = " or " if len(self.words) == 1 else ", "
            raise TypeError(f'{name} must be a real number{sep}{self._names()}, '
                            f'got str {value!r}')
        return self.constraint.check(value, name, context)


#: A learning rate: "auto" (AdaHedge, and for the learners that have one the
#: master over it, src/adaptive_rate.h, src/limit.h), "adahedge" (the
#: AdaHedge learner alone) or a number.
ETA = AutoOr(ETA_VALUE, ("auto", "adahedge"))
#: A mixing rate: "auto" (alpha_t = 1/(t+1)) or a number in [0, 1).
ALPHA = AutoOr(ALPHA_VALUE)
POSITIVE = Interval("real", 0.0, None, closed="neither")
NONNEGATIVE = Interval("real", 0.0, None)
POSITIVE_INT = Interval("int", 1, None)
NONNEGATIVE_INT = Interval("int", 0, None)
SAMPLER = Options("decomposition", "systematic")
STATE = Options("auto", "dense", "clustered")
#: ``1 <= k <= n - 1`` for ``n`` (``context["n"]``) features.
N_COMPONENTS = Interval("int", 1, lambda context: context["n"] - 1,
                        note=lambda context: f"fewer than the {context['n']} features")
#: Period of the Newton-Schulz re-orthogonalisation, or None.
REORTHOGONALIZE = none_or(Interval("int", 1, 2 ** 62))


def argparse_type(constraint, label, parse=float):
    """An argparse ``type=``: parse the text, then check it (argparse turns
    the ValueError into a usage error that names the option)."""
    def convert(text):
        try:
            value = parse(text)
        except ValueError:
            raise ValueError(text) from None
        try:
            return constraint.check(value, "value")
        except (TypeError, ValueError):
            raise ValueError(text) from None
    convert.__name__ = label
    return convert


def store_params(estimator: Any, args: dict[str, Any]) -> None:
    """Store ``__init__``'s arguments, its ``locals()`` on entry, on the
    estimator under their own names and unchanged: scikit-learn's contract
    (``get_params`` and ``clone`` read them back by the names of the
    signature, which stays written out in each ``__init__``); they are
    checked by :func:`check_params` when data arrives."""
    for name, value in args.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


def check_params(constraints, values, context=None):
    """Check every ``values[name]`` against ``constraints[name]``; return the
    converted values as a dict (raises at the first bad one, naming it)."""
    return {name: rule.check(values[name], name, context)
            for name, rule in constraints.items()}


def check_scalar(value: Any, name: str, constraint: Any, context: Any = None) -> Any:
    """One argument against one constraint (functions use this)."""
    return constraint.check(value, name, context)


# --- arrays -----------------------------------------------------------------------


def _object_to_float(arr, name):
    """An object array of real numbers as float64 (as scikit-learn converts
    it); strings, bools and anything else are a TypeError naming `name`."""
    for v in arr.flat:
        if isinstance(v, (str, bytes)):
            raise TypeError(f"{name} must hold real numbers, got the string {v!r}")
        if _is_bool(v):
            raise TypeError(f"{name} must hold real numbers, got the bool {v!r}")
        if isinstance(v, complex) or (isinstance(v, np.generic)
                                      and np.iscomplexobj(v)):
            raise ValueError(f"Complex data not supported: {name} holds {v!r}")
    try:
        return arr.astype(np.float64)
    except OverflowError:  # a Python int beyond the float64 range
        raise ValueError(f"{name} holds a number beyond the float64 range") from None
    except TypeError as exc:  # e.g. a dict: "argument must be a string or a number"
        raise TypeError(f"{name} must hold real numbers: {exc}") from None
    except ValueError as exc:
        raise TypeError(f"{name} must hold real numbers: {exc}") from None


def _frame_to_array(X, name):
    """A pandas DataFrame (or anything with ``dtypes`` and ``to_numpy``) as
    float64: numeric columns, including the nullable ``Float64``/``Int64``
    ones when they hold no missing value, and object columns of numbers."""
    dtypes = list(getattr(X, "dtypes", []))
    for dt in dtypes:
        kind = getattr(dt, "kind", "O")
        if kind == "b" or str(dt).lower() == "boolean":
            raise TypeError(f"{name} must hold real numbers, got a column of dtype {dt}")
        if kind in "SUMmV" or str(dt) in ("string", "category"):
            raise TypeError(f"{name} must hold real numbers, got a column of dtype {dt}")
        if kind == "c":
            raise ValueError(f"Complex data not supported: {name} has a column of "
                             f"dtype {dt}")
    try:
        has_na = bool(X.isna().to_numpy().any())
    except (AttributeError, TypeError):
        has_na = False
    if has_na:
        raise ValueError(f"{name} contains NaN or missing values")
    arr = np.asarray(X.to_numpy())
    if arr.dtype.kind == "O":
        return _object_to_float(arr, name)
    return arr


def _check_real_dtype(dtype, name, what):
    """Refuse complex data (ValueError) and non-numeric dtypes (TypeError)."""
    if dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} must be real, got dtype {dtype}")
    if dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real numeric {what} (int or float), got dtype {dtype}")


def as_real_array(X: Any, name: str, convert: bool = True) -> FloatArray:
    """`X` as a float64 ndarray (not necessarily a copy), or raise.

    With ``convert=False`` an int or float array of another precision is
    returned as it is (:func:`private_copy` converts it in steps).

    TypeError for sparse matrices, strings, bools and other non-numeric
    data; ValueError for complex data, ragged sequences and masked arrays
    with masked entries (their data would be used as values).  Object arrays
    of real numbers and pandas frames (nullable numeric columns without
    missing values included) are converted as scikit-learn converts them.
    Finiteness is not checked here.
    """
    if X is None:
        raise TypeError(f"{name} must be an array of real numbers, got None")
    if isinstance(X, np.ma.MaskedArray):
        masked = int(np.ma.count_masked(X))
        if masked:
            raise ValueError(f"{name} is a masked array with {masked} masked "
                             "entr" + ("y" if masked == 1 else "ies") + "; a masked "
                             f"entry has no value here: fill it ({name}.filled(value)) "
                             "or drop its row first")
        X = X.data  # no entry masked: the values are the data
    if hasattr(X, "toarray") or hasattr(X, "tocsr"):
        raise TypeError(f"{name} is a sparse matrix; dense data is required here "
                        "(use X.toarray()); the learners' fit, partial_fit, learn_one "
                        "and transform accept it")
    if hasattr(X, "dtypes") and hasattr(X, "to_numpy") and getattr(X, "ndim", 2) == 2:
        arr = _frame_to_array(X, name)
    else:
        try:
            arr = np.asarray(X)
        except ValueError as exc:  # ragged nested sequences
            raise ValueError(f"{name} must be a rectangular numeric array: {exc}") from None
    if arr.dtype.kind == "O":
        return _object_to_float(arr, name)
    _check_real_dtype(arr.dtype, name, "array")
    if arr.dtype != np.float64 and convert:
        with np.errstate(over="ignore"):  # float128 beyond range -> inf, checked later
            arr = arr.astype(np.float64)
    return arr


#: Bytes a batch's private copy converts and checks per step (see
#: :func:`private_copy`): ~10 ms of memory traffic, so that Ctrl-C is seen
#: within that while an 800 MB batch is copied.
COPY_STEP_BYTES = 1 << 23


def private_copy(arr: Any, owned: bool = False) -> tuple[FloatArray, float, float]:
    """``(rows, lo, hi)``: the real ndarray `arr` as a C-contiguous float64
    array that nobody else holds, with its smallest and largest entry.

    The copy (and conversion) and the range pass run together in steps of
    about :data:`COPY_STEP_BYTES` along the first axis: the interpreter
    regains control (and sees Ctrl-C, or a pool thread its stop flag:
    ``_kernels.check_stop``) between steps, and each block is checked while
    it is in cache.  A NaN or infinity stops the copy at its block (the
    batch will be rejected) and is reported as ``lo = hi = nan`` (NaN) or
    as the infinite bound.  With `owned` (an array the caller made
    and holds alone) a float64 C-contiguous `arr` is not copied.
    """
    from . import _kernels  # (the compiled module imports this one)
    if owned and arr.dtype == np.float64 and arr.flags.c_contiguous:
        out = arr
    else:
        out = np.empty(arr.shape, dtype=np.float64)
    rows = arr.shape[0]
    step = max(1, COPY_STEP_BYTES // max(1, out[:1].nbytes))
    lo, hi = math.inf, -math.inf
    with np.errstate(over="ignore"):  # float128 beyond range -> inf, rejected
        for start in range(0, rows, step):
            _kernels.check_stop()
            block = out[start:start + step]
            if out is not arr:
                np.copyto(block, arr[start:start + step], casting="unsafe")
            block_lo, block_hi = _kernels.value_range(block)
            if not (math.isfinite(block_lo) and math.isfinite(block_hi)):
                return out, block_lo, block_hi
            lo, hi = min(lo, block_lo), max(hi, block_hi)
    return out, lo, hi


def is_sparse(X: Any) -> bool:
    """Whether X is a scipy.sparse matrix or array (any format)."""
    if not (hasattr(X, "tocsr") and hasattr(X, "toarray")):
        return False
    import scipy.sparse
    return bool(scipy.sparse.issparse(X))


def as_sparse_rows(X: Any, name: str) -> Any:
    """A scipy.sparse `X` (CSR, CSC, COO, ... matrix or array) as a 2-D
    float64 CSR matrix whose stored values are checked, or raise.

    The rules of :func:`as_real_array` on the stored values (int and float
    dtypes convert to float64, float32 exactly; bool, complex and object
    data are rejected) plus finiteness: a NaN or infinity anywhere is a
    ``ValueError`` naming `name`.  Memory: O(nnz) (a CSR copy), never the
    dense matrix.
    """
    import scipy.sparse
    _check_real_dtype(X.dtype, name, "sparse matrix")
    if X.ndim != 2:
        raise ValueError(f"{name} must have 2 dimensions, got a sparse array of shape "
                         f"{X.shape}")
    # a private copy (another thread may write into the caller's arrays)
    csr = scipy.sparse.csr_matrix(X, dtype=np.float64, copy=True)
    csr.sum_duplicates()  # COO duplicates add up, as toarray() adds them
    if not np.isfinite(csr.data).all():
        raise ValueError(f"{name} contains NaN or infinity")
    return csr


def as_float_vector(
        x: Any, name: str, *, allow_neg_inf: bool = False, nonnegative: bool = False,
) -> FloatArray:
    """Return `x` as a C-contiguous 1-D float64 array, or raise.

    ValueError for a wrong number of dimensions, an empty vector, NaN, +inf
    (and -inf unless `allow_neg_inf`), or negative entries when
    `nonnegative`; the type rules of :func:`as_real_array`.
    """
    arr = as_real_array(x, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    arr = np.ascontiguousarray(arr)
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


def as_finite_array(a: Any, name: str, shape: tuple[int, ...] | None = None) -> FloatArray:
    """`a` as a finite float64 array (of the given shape), or raise."""
    arr = as_real_array(a, name)
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (it contains NaN or inf)")
    return arr


def as_int(value: Any, name: str, low: int | None, high: int | None) -> int:
    """`value` as a Python int in [low, high] (None: unbounded), or raise."""
    return Interval("int", low, high).check(value, name)


def _seed_error(random_state, name):
    """The error (not raised) if `random_state` is not None, a non-negative
    int or a Generator; None if it is."""
    if random_state is None or isinstance(random_state, np.random.Generator):
        return None
    if isinstance(random_state, numbers.Integral) and not _is_bool(random_state):
        if random_state < 0:
            return ValueError(f"{name} must be a non-negative seed, got {random_state}")
        return None
    return TypeError(f"{name} must be None, an int or a numpy.random.Generator, "
                     f"got {_type_name(random_state)}")


def as_generator(random_state: Any, name: str = "random_state") -> np.random.Generator:
    """Return a numpy Generator from None, an int seed or a Generator."""
    error = _seed_error(random_state, name)
    if error is not None:
        try:
            raise error
        finally:
            error = None  # the frame must not hold its own exception (a cycle)
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(None if random_state is None else int(random_state))
