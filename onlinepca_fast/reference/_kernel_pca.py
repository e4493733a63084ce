"""Plain NumPy online kernel PCA (re-exported by :mod:`onlinepca_fast.reference`).

KW Algorithm 6 written out literally: every trial forms the kernel matrix of
all past instances, diagonalises it with ``numpy.linalg.eigh``, caps the
softmin of its eigenvalues with the sort-based ``reference.cap_log``, draws
the corner with ``reference.sample_corner`` and evaluates the matrices
``P~`` and ``W~`` of the paper.  O(t^3) per trial; the oracle of the tests
and the baseline of the benchmarks.

Conventions shared with :class:`onlinepca_fast.OnlineKernelPCA` (so that the
same seed and data give the same loss trajectories):

* ``rng = numpy.random.default_rng(random_state)`` at reset and exactly one
  ``u = rng.random()`` at the start of every trial, used by the draw.
* Trial t has m = t - 1 past instances and corner size D = m - r.  D <= 0:
  the hypothesis is the span of all past instances, expected = realized =
  ``k(x, x) - y^T K^+ y`` (``k(x, x)`` when m = 0).
* Eigenvalues with ``|lambda| <= m * eps * max|lambda|`` are zero:
  ``Lambda^-1`` is 0 there (pseudo-inverse) and the softmin sees 0.
* ``gamma="scale"``: ``1 / (n * var)``, ``var`` the variance of the entries
  of the first 100 rows of the first batch (of ``fit``; of the first row
  for ``learn_one``); ``"auto"`` or None: ``1 / n``.
* The bounded mode (``budget`` not None): the trials with ``m >= budget``
  stored instances (``m = budget`` from then on, the landmarks) take the
  landmarks' kernel matrix ``K = U diag(lambda) U^T`` (``eigh``), the
  ``D <= map_size`` leading eigenpairs with ``lambda`` above the null-space
  tolerance, the map ``phi(x) = diag(lambda_D)^-1/2 U_D^T k(L, x)`` and the
  matrix ``C = diag(lambda_D) + sum phi phi^T`` of the bounded mode's past
  trials; a trial is KW Alg. 6 in that D-dimensional space: ``eigh(C)``,
  ``p_i = (v_i^T phi)^2``, ``kappa^ = |phi|^2`` in place of ``z_i^2 /
  lambda_i`` and ``k(x, x)``, cap ``D - r``; the rate's gap and the master
  see those losses, and the recorded ones add the residual ``k(x, x) -
  kappa^``.
* ``eta="auto"`` (docs/adaptive_rates.md, "OnlineKernelPCA"): trial t uses
  ``eta_t = r / Delta_{t-1}`` (``inf`` while ``Delta = 0``), at most
  ``2**1000 / max|lambda|``; its gap is ``h (1 - (1 - exp(-x)) / x)``,
  ``x = eta_t k(x, x)`` (D >= 1) or ``h`` (D <= 0, and m = 0), with ``h``
  the expected loss; ``Delta_t = Delta_{t-1} + gap``.  The trial then
  plays that learner or Follow the Leader (the r leading eigenvectors of
  K) under ``_auto_rate.Master``: the learner if ``u < weight``, drawing
  its corner with ``u / weight``; the expected loss is the master's.

References
----------
KW: D. Kuzmin and M. K. Warmuth, "Online kernel PCA with entropic matrix
updates", ICML 2007, Algorithms 2 and 6.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.distance import cdist
from scipy.special import betaincinv

from .._docs import fill_doc
from .._typing import ArrayLike, FloatArray, SeedLike
from .._validation import store_params
from ._auto_rate import Master
from ._kernels import PresetUniform, cap_log, sample_corner
from ._learners import _Learner

__all__ = ["OnlineKernelPCA", "gram"]


def gram(X: ArrayLike, Y: ArrayLike,
         kernel: str | Callable[[FloatArray, FloatArray], ArrayLike] = "rbf", degree: int = 3,
         gamma: float | str | None = None, coef0: float = 1.0) -> FloatArray:
    """Kernel matrix k(X, Y) of shape (len(X), len(Y)), scikit-learn's formulas.

    Parameters
    ----------
    X : array_like of shape (m, n)
        First points.
    Y : array_like of shape (p, n)
        Second points.
    kernel : {"rbf", "poly", "linear"} or callable, default="rbf"
        The kernel; a callable gets ``(X, Y)`` and returns the matrix.
    degree : int, default=3
        Degree of ``"poly"``.
    gamma : float, "auto" or None, default=None
        Scale of ``"rbf"`` and ``"poly"`` (None or "auto": ``1 / n``).
    coef0 : float, default=1.0
        Offset of ``"poly"``.

    Returns
    -------
    K : ndarray of shape (m, p)
        The kernel values.
    """
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    Y = np.atleast_2d(np.asarray(Y, dtype=np.float64))
    if callable(kernel):
        return np.asarray(kernel(X, Y), dtype=np.float64)
    g = 1.0 / X.shape[1] if gamma in (None, "auto") else gamma
    if kernel == "linear":
        return X @ Y.T
    if kernel == "poly":
        return (g * (X @ Y.T) + coef0) ** degree
    if kernel == "rbf":
        return np.exp(-g * cdist(X, Y, "sqeuclidean"))
    raise ValueError(f"kernel must be 'linear', 'poly', 'rbf' or a callable, got {kernel!r}")


@fill_doc
def _leader(lam, p, kappa, r, u, U=None, inv=None, y=None):
    """Follow the Leader's (expected, realized) losses: the r leading
    eigenvectors of the eigenvalues ``lam`` (ascending), or, when the r-th
    largest ties with others (within 1e-9 of the largest |lambda|), those
    above the tie group fully and the rest of r shared equally by its
    members, the realized loss keeping ``r - a`` directions drawn
    uniformly in the tie group's span: a Beta((r - a)/2, (c - r + a)/2)
    share of x's energy there, its quantile at ``u`` (``src/kernel_pca.c``,
    leader_losses, draws it from u's bits instead).  ``p``: the squared coordinates along the
    eigenvectors, or None to form them from ``U``, ``inv`` and ``y``."""
    m = lam.shape[0]
    kth = m - r
    tol = 1e-9 * max(abs(lam[0]), abs(lam[-1]))
    lo, hi = kth, kth + 1
    while lo > 0 and lam[lo - 1] >= lam[kth] - tol:
        lo -= 1
    while hi < m and lam[hi] <= lam[kth] + tol:
        hi += 1
    if hi - lo == 1:  # no tie
        if p is None:
            Ut = U[:, kth:]
            loss = kappa - y @ (Ut * inv[kth:]) @ Ut.T @ y
        else:
            loss = kappa - p[kth:].sum()
        return loss, loss
    if p is None:
        p = (U.T @ y) ** 2 * inv
    c, take = hi - lo, r - (m - hi)
    above, tied = p[hi:].sum(), p[lo:hi].sum()
    drawn = tied * float(betaincinv(take / 2, (c - take) / 2, u)) if take < c else tied
    return (max(0.0, kappa - above - take / c * tied), max(0.0, kappa - above - drawn))


class OnlineKernelPCA(_Learner):
    """KW Algorithm 6 with ``eigh`` of the full kernel matrix every trial.

    Besides ``expected_losses_`` and ``realized_losses_`` it records per
    trial ``corners_[t]`` (the drawn corner, indices into the ascending
    eigenvalues; None when D <= 0) and ``eigenvalues_history_[t]`` (the
    eigenvalues of the kernel matrix the trial used).
    """

    def __init__(self, n_components: int,
                 kernel: str | Callable[[FloatArray, FloatArray], ArrayLike] = "rbf",
                 eta: float | str = "auto", degree: int = 3,
                 gamma: float | str | None = "scale", coef0: float = 1.0,
                 budget: int | None = None, map_size: int = 64,
                 sampler: str = "decomposition", random_state: SeedLike = None) -> None:
        store_params(self, locals())

    @property
    def _auto(self):
        """The AdaHedge rate: eta="auto" (under the master) or "adahedge"
        (alone)."""
        return self.eta in ("auto", "adahedge")

    def _k(self, X, Y):
        return gram(X, Y, self.kernel, self.degree, self.gamma_, self.coef0)

    def _begin_batch(self, X):
        """The first batch since the reset sets ``gamma_``."""
        if not hasattr(self, "n_trials_"):
            self._reset(X.shape[1])
        if self.gamma_ is None:
            self._set_gamma(X)

    def _set_gamma(self, X):
        """``gamma_`` from the first batch X (its first 100 rows for "scale")."""
        n = X.shape[1]
        if self.gamma == "scale":
            v = float(np.var(X[:100]))
            self.gamma_ = 1.0 / (n * v) if v > 0 else 1.0
        elif self.gamma in ("auto", None):
            self.gamma_ = 1.0 / n
        else:
            self.gamma_ = float(self.gamma)

    def _reset(self, n):
        self.gamma_ = None  # set by the first batch
        self._map = None  # the bounded mode's (M, C) after the switch
        self.approximation_error_ = 0.0
        self.n_features_in_ = n
        self._rng = np.random.default_rng(self.random_state)
        self._past = np.empty((0, n))
        self._expected, self._realized = [], []
        self.corners_, self.eigenvalues_history_ = [], []
        self.n_trials_ = 0
        self.mixability_gap_, self.eta_ = 0.0, (np.inf if self._auto else self.eta)
        self._master = Master() if self.eta == "auto" else None
        self.rate_learner_losses_ = []  # eta="auto": the rate learner's, before the master

    def learn_one(self, x: ArrayLike) -> OnlineKernelPCA:
        x = np.asarray(x, dtype=np.float64)
        if not hasattr(self, "n_trials_"):
            self._reset(x.shape[0])
        if self.gamma_ is None:
            self._set_gamma(x[np.newaxis])
        if self.budget is not None and self._past.shape[0] >= self.budget:
            return self._bounded_trial(x)
        u, play = self._play()
        Xp = self._past
        m, r = Xp.shape[0], self.n_components
        kappa = float(self._k(x, x)[0, 0])
        corner = None
        lam: NDArray[Any]  # (numpy's stubs type eigh's result by version)
        if m == 0:
            lam = np.empty(0)
            expected = realized = kappa
            leader = (kappa, kappa)
        else:
            K = self._k(Xp, Xp)  # "compute kernel matrix on data so far"
            lam, U = np.linalg.eigh((K + K.T) / 2)
            y = self._k(Xp, x)[:, 0]
            tol = m * np.finfo(np.float64).eps * np.abs(lam).max()
            null = np.abs(lam) <= tol
            inv = np.where(null, 0.0, 1.0 / np.where(null, 1.0, lam))  # Lambda^+
            D = m - r
            if D <= 0:  # all eigenvectors: P~ = W~ = K^+
                Kplus = (U * inv) @ U.T
                expected = realized = kappa - y @ Kplus @ y
                leader = (expected, expected)
            else:
                eta = self._step(lam)
                mu = np.zeros(m)
                mu[~null] = -eta * lam[~null]
                lbar = np.exp(cap_log(mu, D))
                corner = sample_corner(lbar, D, PresetUniform(u), self.sampler)
                keep = np.setdiff1d(np.arange(m), corner)  # the r zero entries of c
                Ur = U[:, keep]
                P = (Ur * inv[keep]) @ Ur.T  # P~ = U_r Lambda_r^-1 U_r^T
                W = (U * ((1.0 - D * lbar) * inv)) @ U.T  # W~
                expected = kappa - y @ W @ y
                realized = kappa - y @ P @ y
                leader = _leader(lam, None, kappa, r, u, U=U, inv=inv, y=y)
        self._past = np.vstack([Xp, x])
        return self._commit(expected, realized, leader, play, kappa, corner, lam)

    learn_one.__doc__ = _Learner.learn_one.__doc__

    def _play(self):
        """The trial's uniform: with eta="auto" the master plays the learner
        with its weight w (and the learner draws with u / w), else Follow
        the Leader (which draws with (u - w) / (1 - w)).  Returns (the
        drawn learner's uniform, whether the learner plays)."""
        u = self._rng.random()
        play = self._master is None or u < self._master.weight
        if self._master is not None:
            w = self._master.weight
            u = u / w if play else min((u - w) / (1.0 - w), float(np.nextafter(1.0, 0.0)))
        return u, play

    def _step(self, lam):
        """The trial's rate: eta, or eta_ limited to 2**1000 / max|lambda|."""
        eta, top = self.eta_, np.abs(lam).max()
        if self._auto and top > 0 and eta * top > 2.0 ** 1000:
            eta = 2.0 ** 1000 / top
        return eta

    def _commit(self, expected, realized, leader, play, kappa, corner, lam, residual=0.0):
        """eta="auto": the trial's gap (``x = eta k(x, x)``; for the span
        projection, no corner, the whole loss) and rate, the master's step;
        then the records (the losses plus `residual`)."""
        if self._auto:
            with np.errstate(over="ignore"):
                xs = self._step(lam) * kappa if corner is not None else np.inf
            if np.isinf(xs):
                gap = max(expected, 0.0)
            else:
                gap = max(expected, 0.0) * (1.0 + np.expm1(-xs) / xs) if xs > 0 else 0.0
            self.mixability_gap_ += gap
            self.eta_ = (self.n_components / self.mixability_gap_ if self.mixability_gap_ > 0
                         else np.inf)
        self.rate_learner_losses_.append(float(expected))
        if self._master is not None:
            leader, leader_real = leader
            expected = self._master.step(expected, leader)
            realized = realized if play else leader_real
        self._expected.append(float(expected + residual))
        self._realized.append(float(realized + residual))
        self.corners_.append(corner)
        self.eigenvalues_history_.append(lam)
        self.n_trials_ += 1
        return self

    def _switch(self):
        """The bounded mode's map and matrix from ``eigh`` of the landmarks'
        kernel matrix (the instances stored)."""
        K = self._k(self._past, self._past)
        lam, U = np.linalg.eigh((K + K.T) / 2)
        tol = lam.shape[0] * np.finfo(np.float64).eps * np.abs(lam).max()
        keep = np.flatnonzero(lam > tol)[-self.map_size:]
        M = U[:, keep] / np.sqrt(lam[keep])
        if keep.size == 0:
            M = np.zeros((lam.shape[0], 1))
        self._map = (M, np.diag(lam[keep]) if keep.size else np.zeros((1, 1)))
        self.truncation_error_ = float(np.sum(np.maximum(np.delete(lam, keep), 0.0)))

    def _bounded_trial(self, x):
        """One trial of the bounded mode: KW Alg. 6 in the map's feature space."""
        if self._map is None:
            self._switch()
        M, C = self._map
        u, play = self._play()
        phi = (self._k(x[np.newaxis], self._past) @ M)[0]
        kappa = float(self._k(x, x)[0, 0])
        khat = float(phi @ phi)
        mu, V = np.linalg.eigh(C)
        Dm, r = mu.shape[0], self.n_components
        tol = Dm * np.finfo(np.float64).eps * np.abs(mu).max()
        p = np.where(np.abs(mu) > tol, (V.T @ phi) ** 2, 0.0)
        D = Dm - r
        corner = None
        if D <= 0:
            expected = realized = khat - p.sum()
            leader = (expected, expected)
        else:
            eta = self._step(mu)
            nu = np.zeros(Dm)
            live = np.abs(mu) > tol
            nu[live] = -eta * mu[live]
            lbar = np.exp(cap_log(nu, D))
            corner = sample_corner(lbar, D, PresetUniform(u), self.sampler)
            keep = np.setdiff1d(np.arange(Dm), corner)
            expected = khat - np.sum((1.0 - D * lbar) * p)
            realized = khat - p[keep].sum()
            leader = _leader(mu, p, khat, r, u)
        res = kappa - khat
        self.approximation_error_ += res
        self._map = (M, C + np.outer(phi, phi))
        return self._commit(expected, realized, leader, play, khat, corner, mu, res)

    @property
    def eigenvalues_(self) -> FloatArray:
        """Ascending eigenvalues of the kernel matrix of the instances so far
        (in the bounded mode: of ``C``)."""
        if self._map is not None:
            return np.linalg.eigvalsh(self._map[1])
        K = self._k(self._past, self._past)
        return np.linalg.eigvalsh((K + K.T) / 2)
