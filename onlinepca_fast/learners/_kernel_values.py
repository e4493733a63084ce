"""The kernel values of :class:`OnlineKernelPCA`: Gram blocks and diagonals
of the built-in kernels (scikit-learn's formulas) or a callable, validated,
and ``gamma="scale"``.

Every entry of a built-in kernel is rounded the same whatever the shape of
the block it is computed in -- by numpy's pairwise sums (the exact
learner's blocks) or one GEMV per row (the bounded mode's rows against the
landmarks) -- so that a stream split into other batches, or cut short by
Ctrl-C, sees the same kernel values bit for bit.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import _kernels

__all__ = ["SCALE_ROWS", "gram", "diagonal", "row_inner", "resolve_gamma", "scale_gamma"]

#: ``gamma="scale"`` is computed from the first this many rows of the first batch.
SCALE_ROWS = 100
# rows of a callable kernel's diagonal per call
_DIAGONAL_ROWS = 256


def gram(X, Y, p, inner=None, offset=0):
    """Gram matrix k(X, Y) of shape (len(X), len(Y)) for the checked
    hyper-parameters `p` (``gamma`` resolved), validated: finite, and of
    the right shape and type from a callable.  `inner(X, Y)`: the inner
    products of a built-in kernel (:func:`inner_products` unless given);
    `offset`: the index in the batch of the first row of X (messages)."""
    kernel = p["kernel"]
    if callable(kernel):
        G = kernel(X, Y)
        arr = np.asarray(G)
        if arr.dtype.kind not in "iuf":
            raise TypeError(f"kernel must return a real numeric Gram matrix, got "
                            f"{type(G).__name__} of dtype {arr.dtype}")
        expected = (X.shape[0], Y.shape[0])
        if arr.shape != expected:
            raise ValueError(f"kernel(X, Y) must return an array of shape (len(X), "
                             f"len(Y)) = {expected}, got {arr.shape}")
        G = np.ascontiguousarray(arr, dtype=np.float64)
    else:
        with np.errstate(over="ignore", invalid="ignore"):  # checked below
            G = builtin_gram(X, Y, p, inner or inner_products)
    if not np.isfinite(G).all():
        _not_finite(int(np.flatnonzero(~np.isfinite(G).all(axis=1))[0]) + offset, kernel)
    return G


def diagonal(X, p, offset=0):
    """``k(x, x)`` of each row of X, validated (the bounded mode's)."""
    kernel = p["kernel"]
    if not callable(kernel):
        with np.errstate(over="ignore", invalid="ignore"):
            d = builtin_diagonal(X, p)
    else:
        d = np.empty(X.shape[0])
        for a in range(0, X.shape[0], _DIAGONAL_ROWS):
            b = min(X.shape[0], a + _DIAGONAL_ROWS)
            d[a:b] = np.diagonal(gram(X[a:b], X[a:b], p, offset=offset + a))
    if not np.isfinite(d).all():
        _not_finite(int(np.flatnonzero(~np.isfinite(d))[0]) + offset, kernel)
    return d


def _not_finite(i, kernel):
    raise ValueError(f"X row {i}: the kernel returned NaN or infinite values"
                     + (" (nothing was changed)" if callable(kernel) else
                        " (scale the data, gamma or coef0 down; nothing was changed)"))


def inner_products(X, Y):
    """X @ Y.T with every entry rounded the same whatever the shapes: each is
    numpy's pairwise sum of the elementwise products of its two rows.  A BLAS
    GEMM picks other kernels (other summation orders and FMA use) for other
    matrix sizes, so a batch and its prefix (after Ctrl-C) or two splits of a
    stream would see kernel values differing in the last bit."""
    G = np.empty((X.shape[0], Y.shape[0]))
    rows = max(1, (1 << 21) // max(1, Y.shape[0] * X.shape[1]))  # ~16 MB products
    for i in range(0, X.shape[0], rows):
        np.add.reduce(X[i:i + rows, np.newaxis, :] * Y[np.newaxis, :, :], axis=-1,
                      out=G[i:i + rows])
    return G


def row_inner(YT):
    """Inner products with the rows of Y (given as ``YT = Y.T``,
    C-contiguous), one GEMV per row of X: as :func:`inner_products`, a row's
    values do not depend on the other rows, at BLAS speed (the bounded
    mode's rows against its fixed landmarks)."""
    def inner(X, Y):
        G = np.empty((X.shape[0], YT.shape[1]))
        _kernels.kpca_map(YT, X, G)
        return G
    return inner


def builtin_gram(X, Y, p, inner=inner_products):
    """The built-in kernels' block k(X, Y) (not validated)."""
    kernel = p["kernel"]
    G = inner(X, Y)
    if kernel == "poly":
        G *= p["gamma"]
        G += p["coef0"]
        G **= p["degree"]
    elif kernel == "rbf":  # |x - y|^2 = |x|^2 + |y|^2 - 2 x.y, clipped at 0
        G *= -2.0
        G += np.einsum("ij,ij->i", X, X)[:, np.newaxis]
        G += np.einsum("ij,ij->i", Y, Y)[np.newaxis, :]
        np.maximum(G, 0.0, out=G)
        G *= -p["gamma"]
        np.exp(G, out=G)
    return G


def builtin_diagonal(X, p):
    """``k(x, x)`` of the built-in kernels, row by row (not validated)."""
    kernel = p["kernel"]
    if kernel == "rbf":
        return np.ones(X.shape[0])
    d = np.einsum("ij,ij->i", X, X)
    if kernel == "poly":
        d *= p["gamma"]
        d += p["coef0"]
        d **= p["degree"]
    return d


def resolve_gamma(gamma, X):
    """The value of the parameter `gamma` for a reset on the batch X."""
    if gamma is None:
        warnings.warn("gamma=None is deprecated: it means 1 / n_features, which depends "
                      "on the scale of the data; pass gamma='auto' for that value, or "
                      "leave the default 'scale'", DeprecationWarning, stacklevel=6)
        gamma = "auto"
    if gamma == "auto":
        return 1.0 / X.shape[1]
    if gamma == "scale":
        return scale_gamma(X)
    return float(gamma)


def scale_gamma(X):
    """``gamma="scale"``: ``1 / (n_features * var)`` with ``var`` the variance
    of all entries of the first :data:`SCALE_ROWS` rows of X (scikit-learn's
    SVC on those rows; 1.0 if they are constant).  Computed on X scaled by
    its largest entry, so that neither the variance nor its inverse
    overflows unnoticed: a value beyond the float range is refused."""
    rows = X[:SCALE_ROWS]
    top = float(np.abs(rows).max())
    if top == 0.0:
        return 1.0
    v = float((rows / top).var())
    if v == 0.0:
        return 1.0
    with np.errstate(over="ignore"):  # (numpy scalars: inf, not OverflowError)
        inv = np.float64(1.0) / np.float64(top)
        gamma = float(inv * inv / (X.shape[1] * v))
    if not (0.0 < gamma < np.inf):
        raise ValueError(f"gamma='scale' is 1 / (n_features * X.var()) = {gamma!r} for "
                         f"these rows (their largest entry is {top:.3g}): rescale the data "
                         "or pass a number (nothing was changed)")
    return gamma
