"""The compression score of the PCA learners, for model selection (issue 38, item 4).

scikit-learn's model selection (``GridSearchCV``, ``cross_val_score`` ...)
calls ``estimator.score(X_test)`` and keeps the greatest.  A PCA learner's
score is minus the mean compression loss of the rows of ``X`` under its
current deterministic projection -- the k directions of ``components_``
around ``mean_`` --

    score(X) = -1/T sum_t || x_t - mean_ - P (x_t - mean_) ||^2,
    P = components_.T @ components_,

the loss WK Sec. 1 charges a fixed subspace, so that greater is better.  For
:class:`~onlinepca_fast.OnlineKernelPCA` it is the same loss in the feature
space, ``k(x, x) - || z ||^2`` with ``z = transform(x)`` (the orthonormal
coordinates on the r leading feature-space directions, KW Sec. 3's
compression loss of that projection).

:func:`score` and :func:`kernel_score` are the learners' ``score`` methods
(each class binds one in one line).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._typing import ArrayLike, FloatArray
from ._base import reads_state
from ._kernel_values import diagonal
from ._sparse import is_sparse, map_sparse, row_chunks


def compression_losses(learner: Any, X: Any) -> FloatArray:
    """The compression loss of each row of X under the learner's current
    projection (see the module doc), shape ``(n_samples,)``."""
    if is_sparse(X):
        return map_sparse(X, lambda rows: compression_losses(learner, rows))
    rows = learner._validate_for_transform(X)
    basis, mean = learner.components_, learner.mean_
    out = np.empty(rows.shape[0])
    for a, b in row_chunks(*rows.shape):
        centered = rows[a:b] - mean
        residual = centered - (centered @ basis.T) @ basis
        out[a:b] = np.einsum("ij,ij->i", residual, residual)
    return out


def kernel_compression_losses(learner: Any, X: Any) -> FloatArray:
    """:func:`compression_losses` of an OnlineKernelPCA: in the feature space."""
    if is_sparse(X):
        return map_sparse(X, lambda rows: kernel_compression_losses(learner, rows))
    Z = learner.transform(X)
    rows = learner._validate_for_transform(X)
    kxx = diagonal(rows, learner._config(learner.n_features_in_))  # k(x, x)
    # (a residual is a squared norm: rounding alone makes it negative)
    return np.maximum(kxx - np.einsum("ij,ij->i", Z, Z), 0.0)


@reads_state
def score(self: Any, X: ArrayLike, y: None = None) -> float:
    """Minus the mean compression loss of X under the current projection.

    ``-1/T sum_t ||x_t - mean_ - P (x_t - mean_)||^2`` over the T rows of X,
    with ``P = components_.T @ components_``: the loss WK charge a fixed
    subspace, so greater is better and scikit-learn's model selection needs
    no scorer (``GridSearchCV(OnlinePCA(2), {"eta": [...]})``; the ready
    scorer is :func:`onlinepca_fast.metrics.compression_scorer`).  Unlike
    scikit-learn's ``PCA.score``, not a log-likelihood.
    {sections}
    """
    return _minus_mean(compression_losses(self, X))


@reads_state
def kernel_score(self: Any, X: ArrayLike, y: None = None) -> float:
    """Minus the mean compression loss of X in the feature space.

    ``-1/T sum_t (k(x_t, x_t) - ||z_t||^2)`` with ``z_t = transform(x_t)``:
    the squared distance of ``phi(x_t)`` from its projection on the r
    leading feature-space directions (KW's compression loss of that
    projection), so greater is better and scikit-learn's model selection
    needs no scorer (see :func:`onlinepca_fast.metrics.compression_scorer`).
    {sections}
    """
    return _minus_mean(kernel_compression_losses(self, X))


# the two methods take and return the same
_SECTIONS = """
    Parameters
    ----------
    X : array_like or scipy.sparse matrix of shape (n_samples, n_features)
        Rows to compress (at least one).
    y : None
        Ignored.

    Returns
    -------
    score : float
        Minus the mean compression loss (<= 0; greater is better).\
"""
for _method in (score, kernel_score):
    _method.__doc__ = _method.__doc__.replace("{sections}", _SECTIONS)


def _minus_mean(losses):
    if losses.size == 0:
        raise ValueError("X has no rows: the compression score needs at least one")
    return -float(np.mean(losses))
