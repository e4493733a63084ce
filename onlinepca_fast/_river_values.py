"""Values for the river wrappers (``onlinepca_fast.river``): a dict's or a
DataFrame's values checked and converted as the array learners take them
(real numbers only: bools and masked values are refused, as by
``partial_fit``).  No river import here."""

from __future__ import annotations

import struct

import numpy as np

__all__ = ["SUSPECT", "check_kinds", "frame_rows", "value_error"]

#: Value types that struct would convert but that are not numbers here:
#: bools (the array learners reject them), masked values and arrays (looked
#: at one by one by check_kinds).
SUSPECT = frozenset({bool, np.bool_, np.ndarray, np.ma.MaskedArray,
                     np.ma.core.MaskedConstant})


def check_kinds(x, keys):
    """TypeError naming the first key whose value is a bool (the array
    learners reject bools) or masked (it has no value), as numbers would
    otherwise convert them (True -> 1.0, a masked value -> its data)."""
    for key in keys:
        v = x.get(key, 0.0)
        if isinstance(v, np.ndarray):
            if isinstance(v, np.ma.MaskedArray) and np.ma.count_masked(v):
                raise ValueError(f"x[{key!r}] is masked: a masked value has no value")
            if v.dtype.kind == "b":
                raise TypeError(f"x[{key!r}] must be a real number, got a bool array")
            continue
        if isinstance(v, np.ma.core.MaskedConstant):
            raise ValueError(f"x[{key!r}] is masked: a masked value has no value")
        if isinstance(v, (bool, np.bool_)):
            raise TypeError(f"x[{key!r}] must be a real number, got "
                            f"{type(v).__name__} {v!r}")

def value_error(x, keys):
    for key in keys:
        v = x.get(key, 0.0)
        try:
            struct.pack("d", v)
        except (struct.error, TypeError, OverflowError):
            return TypeError(f"x[{key!r}] must be a real number, got "
                             f"{type(v).__name__} {v!r}")
    return TypeError("x must hold real numbers")  # pragma: no cover

def frame_rows(X, keys):
    """The rows of the DataFrame X in the layout's column order (a
    missing column is 0, a column not in the layout is ignored), each
    value converted as ``learn_one`` converts it; finite, or
    ValueError/TypeError naming the column."""
    if not (hasattr(X, "columns") and hasattr(X, "index") and hasattr(X, "iloc")):
        raise TypeError(f"X must be a pandas DataFrame, got {type(X).__name__}")
    if not X.columns.is_unique:
        raise ValueError("X has duplicate column names")
    rows = np.zeros((len(X), len(keys)))
    present = set(X.columns)
    for j, key in enumerate(keys):
        if key not in present:
            continue
        col = X[key].to_numpy()
        if col.dtype.kind == "b":  # rejected as learn_one rejects bools
            raise TypeError(f"X[{key!r}] must hold real numbers, got bools")
        if col.dtype.kind in "iuf":
            rows[:, j] = col
        else:  # object, nullable, ...: each value as float(v), as in learn_one
            for i, v in enumerate(col.tolist()):
                try:
                    if isinstance(v, (bool, np.bool_)):
                        raise TypeError
                    rows[i, j] = struct.unpack("d", struct.pack("d", v))[0]
                except (struct.error, TypeError, OverflowError):
                    raise TypeError(f"X[{key!r}] must hold real numbers, got "
                                    f"{type(v).__name__} {v!r}") from None
    bad = np.flatnonzero(~np.isfinite(rows).all(axis=0))
    if bad.size:
        key = keys[int(bad[0])]
        col = rows[:, bad[0]]
        v = col[~np.isfinite(col)][0]
        raise ValueError(f"X[{key!r}] holds {float(v)!r}: the values must be finite")
    return rows
