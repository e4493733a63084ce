"""Evaluation tools: comparator losses, regrets, bounds and tuned parameters.

Plain NumPy.  Losses are compression losses ``||y - P y||^2`` summed over
trials (``y = x`` uncentered, ``y = x - m`` centered), the quantity the
learners record per trial in ``expected_losses_`` / ``realized_losses_``.

References
----------
WK: Warmuth & Kuzmin, JMLR 9 (2008); YL: Yuan & Lamperski, ICML 2019 (the
full titles are in the README's references).
"""

from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._docs import doc_filler
from ._typing import ArrayLike, FloatArray
from ._validation import (
    N_COMPONENTS,
    NONNEGATIVE,
    POSITIVE,
    as_int,
    as_real_array,
    check_scalar,
)

__all__ = [
    "best_subspace_loss",
    "regret",
    "partition_regret",
    "adaptive_regret",
    "expert_best_subset_loss",
    "expert_regret",
    "regret_bound",
    "tuned_regret_bound",
    "tuned_learning_rate",
    "adaptive_parameters",
    "AdaptiveParameters",
    "average_density",
    "batch_loss",
    "compression_scorer",
]

# the parameters the regrets against subspaces share
_fill_doc = doc_filler({"losses_X_k": """\
losses : array_like of shape (T,)
    The learner's loss in each trial.
X : array_like of shape (T, n)
    The instances, one row per trial.
n_components : int
    ``1 <= k < n``."""})


# --- validation -------------------------------------------------------------

def _matrix(X: Any, name: str = "X") -> FloatArray:
    arr = as_real_array(X, name)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def _losses(losses: Any, T: int) -> FloatArray:
    arr = as_real_array(losses, "losses")
    if arr.shape != (T,):
        raise ValueError(f"losses must have shape ({T},) (one per row of X), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError("losses contains NaN or infinite values")
    return arr


def _k(n_components: Any, n: int) -> int:
    if n < 2:
        raise ValueError(f"n_components needs n >= 2 features, got n = {n}")
    return check_scalar(n_components, "n_components", N_COMPONENTS, {"n": n})


def _nonnegative(value: Any, name: str) -> float:
    return check_scalar(value, name, NONNEGATIVE)


def _positive(value: Any, name: str) -> float:
    return check_scalar(value, name, POSITIVE)


# --- comparator losses and regrets ------------------------------------------

def _tail_energy(Y: FloatArray, k: int) -> float:
    """Sum of the n - k smallest eigenvalues of Y^T Y, from the singular values of Y."""
    s = np.linalg.svd(Y, compute_uv=False)
    return float(np.sum(s[k:] ** 2))


def best_subspace_loss(X: ArrayLike, n_components: int, centered: bool = False) -> float:
    """Total compression loss of the best fixed rank-k subspace in hindsight.

    ``min_P sum_t ||y_t - P y_t||^2`` over rank-``k`` orthogonal projections
    ``P``, with ``y_t = x_t`` (uncentered; WK eq. (1), batch uncentered PCA)
    or ``y_t = x_t - mean(X)`` (centered: the best center is the mean).  It
    equals the sum of the ``n - k`` smallest eigenvalues of ``Y^T Y`` (the
    total energy minus the top ``k`` eigenvalues), computed here from the
    singular values of ``Y`` so that small losses keep their relative
    accuracy.

    Parameters
    ----------
    X : array_like of shape (T, n)
        The instances, one per row.
    n_components : int
        ``k``, with ``1 <= k < n``.
    centered : bool, default=False
        Compare against the best affine subspace (centered PCA).

    Returns
    -------
    loss : float

    References
    ----------
    WK Sec. 2 (batch PCA) and Fig. 4 (the "best projection in hindsight").

    Examples
    --------
    >>> X = [[3.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 1.0]]
    >>> best_subspace_loss(X, 2)  # the smallest eigenvalue of X^T X
    1.0
    >>> X = [[1.0, 0.0], [1.0, 2.0]]
    >>> round(best_subspace_loss(X, 1), 4)  # 3 - sqrt(5)
    0.7639
    >>> round(best_subspace_loss(X, 1, centered=True), 12)  # a line through the mean
    0.0
    """
    rows = _matrix(X)
    k = _k(n_components, rows.shape[1])
    if centered:
        rows = rows - rows.mean(axis=0)
    return _tail_energy(rows, k)


def regret(losses: ArrayLike, X: ArrayLike, n_components: int, centered: bool = False) -> float:
    """Total loss minus the loss of the best fixed rank-k subspace (WK Thm. 6, YL eq. (1)).

    Parameters
    ----------
    losses : array_like of shape (T,)
        Per-trial losses of a learner on the rows of ``X`` (usually its
        ``expected_losses_``).
    X : array_like of shape (T, n)
        The instances, one row per trial.
    n_components : int
        ``1 <= k < n``.
    centered : bool, default=False
        See :func:`best_subspace_loss`.

    Returns
    -------
    regret : float

    Examples
    --------
    >>> X = [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]
    >>> regret([0.5, 0.5, 0.25], X, 1)  # best: keep e_1, loss 1
    0.25
    """
    X = _matrix(X)
    losses = _losses(losses, X.shape[0])
    return float(np.sum(losses)) - best_subspace_loss(X, n_components, centered)


def _segments(boundaries: Any, T: int) -> list[tuple[int, int]]:
    b = np.asarray(boundaries)
    if b.ndim != 1 or (b.size and b.dtype.kind not in "iu"):
        raise ValueError(f"boundaries must be a 1-D sequence of integers, got {boundaries!r}")
    b = b.astype(np.intp)
    if b.size and (b[0] <= 0 or b[-1] >= T or np.any(np.diff(b) <= 0)):
        raise ValueError(f"boundaries must be strictly increasing in [1, {T - 1}], "
                         f"got {b.tolist()}")
    starts = np.concatenate([[0], b])
    stops = np.concatenate([b, [T]])
    return list(zip(starts.tolist(), stops.tolist()))


@_fill_doc
def partition_regret(losses: ArrayLike, X: ArrayLike, n_components: int, boundaries: Sequence[int],
                     centered: bool = False, cumulative: bool = False) -> float | FloatArray:
    """Regret against the best subspace per segment of a given partition (WK Fig. 6).

    The trials ``0..T-1`` are split at ``boundaries`` into segments
    ``[0, b_1), [b_1, b_2), ..., [b_last, T)``; the comparator uses, on each
    segment, the best rank-``k`` subspace (and, if ``centered``, the best
    center: the segment mean) for that segment.

    Parameters
    ----------
    %(losses_X_k)s
    boundaries : sequence of int
        The 0-based start indices of the segments after the first, strictly
        increasing in ``[1, T-1]``; empty for a single segment (then this is
        :func:`regret`).
    centered : bool, default=False
        Compare with the best affine subspaces (centered data).
    cumulative : bool, default=False
        If true, return the curve ``R`` of shape (T,) with ``R[t] = sum_{s<=t}
        losses[s] - sum_{s<=t} ||y_s - P_{seg(s)} y_s||^2``, where
        ``P_{seg(s)}`` (and the center) is the best one for the *whole*
        segment containing ``s`` (computed in hindsight from all its
        points).  This is the "regret w.r.t. the indicated partition" plotted
        over time in WK Fig. 6; ``R[-1]`` is the total.

    Returns
    -------
    regret : float, or ndarray of shape (T,) if ``cumulative``

    Examples
    --------
    >>> X = [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
    >>> partition_regret([0.5, 0.5, 0.5, 0.5], X, 1, boundaries=[2])
    2.0
    >>> curve = partition_regret([0.5, 0.5, 0.5, 0.5], X, 1, [2], cumulative=True)
    >>> np.round(curve, 12).tolist()
    [0.5, 1.0, 1.5, 2.0]
    """
    X = _matrix(X)
    T, n = X.shape
    losses = _losses(losses, T)
    k = _k(n_components, n)
    comparator = np.empty(T)
    for start, stop in _segments(boundaries, T):
        Y = X[start:stop]
        if centered:
            Y = Y - Y.mean(axis=0)
        V = np.linalg.svd(Y, full_matrices=False)[2][:k]  # top-k right singular vectors
        comparator[start:stop] = np.sum(Y**2, axis=1) - np.sum((Y @ V.T) ** 2, axis=1)
    if cumulative:
        return np.cumsum(losses) - np.cumsum(comparator)
    total = float(np.sum(losses))
    for start, stop in _segments(boundaries, T):
        total -= best_subspace_loss(X[start:stop], k, centered)
    return total


@_fill_doc
def adaptive_regret(losses: ArrayLike, X: ArrayLike, n_components: int, centered: bool = False,
                    return_interval: bool = False) -> float | tuple[float, tuple[int, int]]:
    """Adaptive regret, YL eq. (3): the worst regret over all intervals.

    ``max_{0 <= r <= s < T} ( sum_{t=r}^{s} losses_t - min_P sum_{t=r}^{s} ||y_t - P y_t||^2 )``
    where the comparator is the best rank-``k`` subspace for the interval
    (and its mean if ``centered``).  All ``T (T + 1) / 2`` intervals are
    visited: for each start ``r`` the scatter matrix is extended one row at
    a time and its eigenvalues computed (one ``eigvalsh`` per interval), so
    the cost is ``O(T^2 n^3)``: meant for small ``T`` (up to a few hundred).

    Parameters
    ----------
    %(losses_X_k)s
    centered : bool, default=False
        Compare with the best affine subspaces (centered data).
    return_interval : bool, default=False
        Also return the maximising interval ``(r, s)`` (0-based, inclusive).

    Returns
    -------
    regret : float
    interval : tuple of int, only if ``return_interval``

    Examples
    --------
    >>> X = [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]
    >>> adaptive_regret([0.0, 0.0, 1.0, 0.0], X, 1, return_interval=True)
    (1.0, (2, 2))
    """
    X = _matrix(X)
    T, n = X.shape
    losses = _losses(losses, T)
    d = n - _k(n_components, n)
    best, where = -np.inf, (0, 0)
    for r in range(T):
        S = np.zeros((n, n))
        m = np.zeros(n)
        loss = 0.0
        for s in range(r, T):
            x = X[s]
            if centered:  # Welford: scatter around the running mean
                j = s - r + 1
                S += (j - 1) / j * np.outer(x - m, x - m)
                m += (x - m) / j
            else:
                S += np.outer(x, x)
            loss += losses[s]
            value = loss - float(np.sum(np.linalg.eigvalsh(S)[:d]))
            if value > best:
                best, where = value, (r, s)
    return (float(best), where) if return_interval else float(best)


def expert_best_subset_loss(L: ArrayLike, n_components: int) -> float:
    """Total loss of the best set of ``n - k`` experts in hindsight (WK Sec. 4, Thm. 3).

    In the set-expert view of WK Alg. 3 the learner's corner is a set of
    ``d = n - k`` experts and its loss is the sum of their losses; the best
    set has the ``d`` smallest column totals of the loss matrix.  With
    ``n_components = n - 1`` this is the loss of the best single expert
    (Hedge, WK Thm. 1).

    Parameters
    ----------
    L : array_like of shape (T, n)
        Loss vectors, one per trial.
    n_components : int
        ``k``, with ``1 <= k < n``.

    Returns
    -------
    loss : float

    Examples
    --------
    >>> L = [[1.0, 0.0, 0.5], [1.0, 0.0, 0.5]]
    >>> expert_best_subset_loss(L, 2)  # best single expert
    0.0
    >>> expert_best_subset_loss(L, 1)  # best pair
    1.0
    """
    L = _matrix(L, "L")
    k = _k(n_components, L.shape[1])
    return float(np.sum(np.sort(L.sum(axis=0))[: L.shape[1] - k]))


def expert_regret(losses: ArrayLike, L: ArrayLike, n_components: int) -> float:
    """Total loss minus :func:`expert_best_subset_loss` (WK Thm. 1 and 3).

    Parameters
    ----------
    losses : array_like of shape (T,)
        Per-trial losses of the learner (e.g. ``expected_losses_`` of
        ``CappedHedge``, which are already multiplied by ``n - k``).
    L : array_like of shape (T, n)
        The loss vectors, one row per trial, entries in [0, 1].
    n_components : int
        The number k: the learner competes with the best ``n - k`` experts.

    Returns
    -------
    regret : float

    Examples
    --------
    >>> expert_regret([0.5, 0.25], [[1.0, 0.0], [1.0, 0.0]], 1)
    0.75
    """
    L = _matrix(L, "L")
    losses = _losses(losses, L.shape[0])
    return float(np.sum(losses)) - expert_best_subset_loss(L, n_components)


# --- bounds and tuned parameters --------------------------------------------

def _divergence_bound(n, n_components):
    n = as_int(n, "n", 2, np.iinfo(np.int64).max)
    k = _k(n_components, n)
    return (n - k) * math.log(n / (n - k))


def regret_bound(comparator_loss: float, n: int, n_components: int, eta: float) -> float:
    """WK Thm. 6 (and Thm. 3): bound on the total expected loss.

    ``(eta * L + (n-k) log(n/(n-k))) / (1 - exp(-eta))``, i.e. Thm. 6 with
    ``Delta(U, W^0) - Delta(U, W^T) <= log(n/(n-k))`` for any capped
    comparator ``U`` (WK, after Thm. 6).  It holds for every sequence of
    instances of 2-norm at most one (or loss vectors in ``[0, 1]^n`` for
    capped Hedge), ``L`` being the comparator's total compression loss, and
    for the uncentered version of Alg. 6 as well (WK Sec. 6.2).

    Parameters
    ----------
    comparator_loss : float
        ``L >= 0``, e.g. :func:`best_subspace_loss`.
    n : int
        Dimension (number of experts), ``n >= 2``.
    n_components : int
        ``1 <= k < n``.
    eta : float
        Learning rate, ``> 0``.

    Returns
    -------
    bound : float
        Upper bound on ``sum_t (n-k) tr(W^{t-1} x_t x_t^T)``.

    Examples
    --------
    >>> round(regret_bound(10.0, 4, 2, 1.0), 6)  # (10 + 2 log 2) / (1 - 1/e)
    18.012852
    """
    L = _nonnegative(comparator_loss, "comparator_loss")
    eta = _positive(eta, "eta")
    return (eta * L + _divergence_bound(n, n_components)) / -math.expm1(-eta)


def tuned_regret_bound(comparator_loss: float, n: int, n_components: int) -> float:
    """WK eq. (7) (and (4)): regret bound with the tuned learning rate.

    With ``D = (n-k) log(n/(n-k))`` and ``eta = log(1 + sqrt(2D/L))``
    (:func:`tuned_learning_rate`), Thm. 6 gives
    ``expected total loss - L <= sqrt(2 L D) + D``.  WK state (7) as
    ``sqrt(2 L k log(n/k)) + k log(n/k)``, using ``D <= k log(n/k)``, which
    holds for ``k <= n/2``; this function returns the exact ``D`` form, valid
    for every ``1 <= k < n``.

    Parameters
    ----------
    comparator_loss : float
        ``L >= 0`` (an upper bound on the comparator's total loss).
    n : int
        Dimension.
    n_components : int
        Rank k of the projection.

    Returns
    -------
    bound : float
        Upper bound on the regret (expected total loss minus ``L``).

    Examples
    --------
    >>> D = 2 * math.log(2)  # n = 4, k = 2
    >>> tuned_regret_bound(8.0, 4, 2) == math.sqrt(16 * D) + D
    True
    """
    L = _nonnegative(comparator_loss, "comparator_loss")
    D = _divergence_bound(n, n_components)
    return math.sqrt(2 * L * D) + D


def tuned_learning_rate(comparator_loss_bound: float, D: float) -> float:
    """WK eq. (3): ``eta = log(1 + sqrt(2 D / L))``.

    Parameters
    ----------
    comparator_loss_bound : float
        ``L > 0``, an upper bound on the comparator's total loss.
    D : float
        ``> 0``, a bound on the divergence term, e.g. ``(n-k) log(n/(n-k))``
        (WK Thm. 6) or the ``D`` of YL Thm. 3 (:func:`adaptive_parameters`).

    Returns
    -------
    eta : float

    Examples
    --------
    >>> math.isclose(tuned_learning_rate(2.0, 4.0), math.log(3.0), rel_tol=1e-15)
    True
    """
    L = _positive(comparator_loss_bound, "comparator_loss_bound")
    D = _positive(D, "D")
    return math.log1p(math.sqrt(2 * D / L))


AdaptiveParameters = namedtuple("AdaptiveParameters", ["alpha", "eta", "D"])
AdaptiveParameters.__doc__ = """The alpha, eta and D of YL Thm. 1 / Thm. 3.

Parameters
----------
alpha : float
    The fixed-share rate.
eta : float
    The learning rate.
D : float
    The bound on the comparator's relative entropy.
"""
AdaptiveParameters.alpha.__doc__ = "The fixed-share rate alpha."
AdaptiveParameters.eta.__doc__ = "The learning rate eta."
AdaptiveParameters.D.__doc__ = "The bound D on the comparator's relative entropy."


def adaptive_parameters(T: int, n: int, n_components: int, L: float) -> AdaptiveParameters:
    """YL Thm. 1 / Thm. 3: fixed-share rate, divergence bound and learning rate.

    ``alpha = 1/(T(n-k) + 1)``, ``D = (n-k) ln(n(1 + (n-k)T)) + 1`` and
    ``eta = ln(1 + sqrt(2D/L))``, for which YL Alg. 1 / Alg. 4 have adaptive
    regret ``O(sqrt(2LD) + D)``; with ``k = n - 1`` these are the parameters
    of YL Thm. 4 (Alg. 5).

    Parameters
    ----------
    T : int
        Number of trials, ``>= 1``.
    n : int
        Dimension.
    n_components : int
        ``1 <= k < n``.
    L : float
        ``> 0``, an upper bound on the comparator's loss on every interval.

    Returns
    -------
    AdaptiveParameters
        Named tuple ``(alpha, eta, D)``.

    Examples
    --------
    >>> p = adaptive_parameters(100, 3, 2, 4.0)
    >>> p.alpha == 1 / 101
    True
    >>> p.D == math.log(3 * 101) + 1
    True
    """
    T = as_int(T, "T", 1, np.iinfo(np.int64).max)
    n = as_int(n, "n", 2, np.iinfo(np.int64).max)
    d = n - _k(n_components, n)
    alpha = 1.0 / (T * d + 1)
    D = d * math.log(n * (1 + d * T)) + 1
    return AdaptiveParameters(alpha, tuned_learning_rate(L, D), D)


# --- online-to-batch conversion ---------------------------------------------

def average_density(learner: Any, X: ArrayLike) -> FloatArray:
    """Online-to-batch conversion (WK Sec. 6.3): the average density matrix of a pass.

    Runs ``learner.learn_one(x)`` on every row of ``X`` in order and returns
    ``(W^0 + ... + W^{T-1}) / T``, where ``W^{t-1}`` is the density matrix
    the learner used for prediction at trial ``t`` (``learner.density_``
    read just before the trial).  The learner continues from its current
    state; if it has not seen data yet (no ``density_``), ``W^0 = I/n``.

    Parameters
    ----------
    learner : object
        Has ``learn_one(x)`` and ``density_`` (e.g. ``OnlinePCA``).
    X : array_like of shape (T, n)
        The instances, one row per trial.

    Returns
    -------
    W : ndarray of shape (n, n)
        In the capped set ``B_{n-k}`` (a convex combination of its members);
        ``I - (n-k) W`` is the expected projection of the batch hypothesis.

    Examples
    --------
    >>> class Fixed:
    ...     density_ = np.diag([0.0, 0.5, 0.5])
    ...     def learn_one(self, x):
    ...         return self
    >>> average_density(Fixed(), np.ones((2, 3))).diagonal().tolist()
    [0.0, 0.5, 0.5]
    """
    X = _matrix(X)
    T, n = X.shape
    total = np.zeros((n, n))
    for x in X:
        W = getattr(learner, "density_", None)
        total += np.eye(n) / n if W is None else np.asarray(W, dtype=np.float64)
        learner.learn_one(x)
    return total / T


def batch_loss(
        W: ArrayLike, X: ArrayLike, n_components: int, mean: ArrayLike | None = None,
) -> float:
    """Total expected compression loss of a fixed density matrix on X.

    ``(n-k) sum_t tr(W y_t y_t^T)``, ``y_t = x_t - mean`` (WK Alg. 5: the
    expected loss of a projection drawn from ``W``'s decomposition).  For a
    corner ``W = (I - P)/(n-k)`` this is the loss ``sum_t ||y_t - P y_t||^2``
    of the projection ``P``.

    Parameters
    ----------
    W : array_like of shape (n, n)
        Symmetric, e.g. from :func:`average_density`.
    X : array_like of shape (T, n)
        The instances, one row per trial.
    n_components : int
        ``1 <= k < n``.
    mean : array_like of shape (n,), default=None
        Center; zero if None.

    Returns
    -------
    loss : float

    Examples
    --------
    >>> W = np.diag([0.0, 0.5, 0.5])  # keep e_1 (k = 1)
    >>> batch_loss(W, [[1.0, 2.0, 2.0]], 1)
    8.0
    """
    rows = _matrix(X)
    T, n = rows.shape
    k = _k(n_components, n)
    dens = _matrix(W, "W")
    if dens.shape != (n, n):
        raise ValueError(f"W must have shape ({n}, {n}), got {dens.shape}")
    if mean is not None:
        center = np.asarray(mean, dtype=np.float64)
        if center.shape != (n,):
            raise ValueError(f"mean must have shape ({n},), got {center.shape}")
        rows = rows - center
    return float((n - k) * np.sum((rows @ dens) * rows))


def compression_scorer(estimator: Any, X: ArrayLike, y: Any = None) -> float:
    """Scorer for scikit-learn's model selection: ``estimator.score(X)``.

    The PCA learners' ``score`` is minus the mean compression loss of X
    under the current projection (``-mean ||x - mean_ - P (x - mean_)||^2``;
    for :class:`~onlinepca_fast.OnlineKernelPCA` in the feature space), so
    greater is better.  ``GridSearchCV`` and ``cross_val_score`` use it by
    default when given a learner; pass this scorer where a scorer must be
    named (``scoring=compression_scorer``, a dict of several scorers, or a
    pipeline whose last step is such a learner: the pipeline's ``score``
    transforms X by the earlier steps first).

    Parameters
    ----------
    estimator : estimator
        A fitted PCA learner of :mod:`onlinepca_fast`, or a pipeline ending
        in one.
    X : array_like or scipy.sparse matrix of shape (n_samples, n_features)
        Held-out rows.
    y : None
        Ignored.

    Returns
    -------
    score : float
        Minus the mean compression loss (<= 0; greater is better).

    Examples
    --------
    >>> from sklearn.model_selection import GridSearchCV
    >>> from onlinepca_fast import OnlinePCA
    >>> X = np.random.default_rng(0).normal(size=(120, 5)) * [3, 2, 1, 0.1, 0.1]
    >>> search = GridSearchCV(OnlinePCA(2, random_state=0), {"eta": [0.1, 1.0, 10.0]},
    ...                       scoring=compression_scorer, cv=3).fit(X)
    >>> sorted(search.best_params_)
    ['eta']
    >>> bool(search.best_score_ <= 0)
    True
    """
    return float(estimator.score(X))
