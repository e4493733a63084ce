"""Plain NumPy reference learners (re-exported by :mod:`onlinepca_fast.reference`).

Every learner of the package, written as directly as possible from the
papers and from the shared conventions of the compiled learners: the
updated matrix is formed explicitly and diagonalised with
``numpy.linalg.eigh`` in every trial (so the oracle is independent of the
compiled rank-one update), capping is the sort-based
``reference.cap_log`` and corners are drawn by ``reference.sample_corner``.
Slow on purpose: O(n^3) per trial.

Conventions (identical in the compiled learners, so that the same seed and
data give the same expected-loss trajectory):

* ``W^0 = I/n``; ``d = n - k`` is the corner size.
* ``rng = numpy.random.default_rng(random_state)`` is created at reset (``fit``,
  or the first ``partial_fit``/``learn_one``) and exactly one ``u =
  rng.random()`` is drawn at the start of every trial of a randomised learner.
* Weights are kept in the ascending order of the maintained matrix (experts:
  in expert order); ``corners_[t]`` holds the drawn indices into that order.
* PCA learners, instance ``y`` (``x - m`` when centered), ``z = Q^T y``:
  expected loss ``(n-k) sum_i omega_i z_i^2``, realized ``sum_{corner} z_i^2``.

Besides the attributes of the compiled learners, each records, per trial,
``corners_[t]`` (the drawn subset, sorted indices) and
``eigenvalues_history_[t]`` (``eigenvalues_`` before the trial: the
spectrum the corner was drawn from; log-weights for the expert learners), so
that tests can tell whether a corner split a cluster of equal eigenvalues.

The papers (WK, YL) are cited in full in the README's references.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from scipy.special import logsumexp

from .._docs import fill_doc
from .._typing import ArrayLike, FloatArray, SeedLike
from .._validation import store_params
from ._kernels import PresetUniform, cap_log, sample_corner

_Self = TypeVar("_Self", bound="_Learner")

__all__ = [
    "Hedge",
    "CappedHedge",
    "OnlinePCA",
    "OnlineAdaptivePCA",
    "CenteredOnlinePCA",
    "FollowTheLeader",
    "VarianceMinimizer",
    "SimplexVarianceMinimizer",
]


def _draw(omega, d, u, sampler):
    return sample_corner(omega, d, PresetUniform(u), sampler)


def _mix_uniform(lam, alpha):
    """log(alpha/n + (1 - alpha) exp(lam)) for normalised log-weights lam."""
    return np.logaddexp(np.log(alpha / lam.size), np.log1p(-alpha) + lam)


def _eigh(M):
    return np.linalg.eigh((M + M.T) / 2)


@fill_doc
class _Learner:
    """Reset, the trial loop and the loss records shared by all learners."""

    _randomised = True

    if TYPE_CHECKING:  # the hooks of each learner
        random_state: SeedLike

        def _init_state(self, n: int) -> None: ...

        def _levels(self) -> FloatArray: ...

        def _trial(self, x: FloatArray, u: float | None) -> tuple[float, float, Any]: ...

    def _reset(self, n):
        self.n_features_in_ = n
        self._rng = np.random.default_rng(self.random_state) if self._randomised else None
        self._expected, self._realized, self.corners_ = [], [], []
        self.eigenvalues_history_ = []
        self.n_trials_ = 0
        self._init_state(n)

    def fit(self: _Self, X: ArrayLike) -> _Self:
        """Reset, then :meth:`partial_fit` on X.

        %(reference_batch)s
        """
        X = np.asarray(X, dtype=np.float64)
        self._reset(X.shape[-1])
        return self.partial_fit(X)

    def partial_fit(self: _Self, X: ArrayLike) -> _Self:
        """One trial per row of X (:meth:`learn_one` on each).

        %(reference_batch)s
        """
        X = np.asarray(X, dtype=np.float64)
        self._begin_batch(X)
        for x in X:
            self.learn_one(x)
        return self

    def _begin_batch(self, X):
        """A hook run before each batch's trials (kernel PCA's first batch
        sets its kernel parameter)."""

    def learn_one(self: _Self, x: ArrayLike) -> _Self:
        """One trial on the instance x (the first one resets the learner).

        Parameters
        ----------
        x : array_like of shape (n,), or (n, n) for the learners of matrix instances
            The instance.

        Returns
        -------
        %(returns_self)s
        """
        x = np.asarray(x, dtype=np.float64)
        if not hasattr(self, "n_trials_"):
            self._reset(x.shape[-1])
        u = self._rng.random() if self._randomised else None
        before = self._levels()
        expected, realized, corner = self._trial(x, u)
        self._expected.append(expected)
        self._realized.append(realized)
        self.corners_.append(corner)
        self.eigenvalues_history_.append(before)
        self.n_trials_ += 1
        return self

    @property
    def expected_losses_(self) -> FloatArray:
        """Expected loss of each trial since the reset."""
        return np.array(self._expected, dtype=np.float64)

    @property
    def realized_losses_(self) -> FloatArray:
        """Realized loss of each trial since the reset."""
        return np.array(self._realized, dtype=np.float64)


class _Shares:
    """The parameters and mixing steps of OnlinePCA and CappedHedge
    (conventions steps 3-5)."""

    def __init__(
            self, n_components: int | None, eta: float = 1.0, share: str | None = None,
            alpha: float = 0.0, sampler: str = "decomposition", random_state: SeedLike = None,
    ) -> None:
        store_params(self, locals())

    def _n_components(self, n):
        return self.n_components

    def _check_share(self):
        if self.share not in (None, "fixed", "uniform", "past"):
            raise ValueError("share must be None, 'fixed', 'uniform' or 'past', "
                             f"got {self.share!r}")

    @property
    def _mixing(self):
        return self.share is not None and self.alpha > 0

    def _before_cap(self, lam):
        if self._mixing and self.share == "fixed":  # YL eq. (4b)/(11b)/(22b)
            return _mix_uniform(lam - logsumexp(lam), self.alpha)
        return lam

    def _after_cap(self, lam):
        if self._mixing and self.share == "uniform":  # WK Sec. 8
            return _mix_uniform(lam, self.alpha)
        return lam


class CappedHedge(_Learner, _Shares):
    """Capped Hedge over n experts, best k-subset (WK Alg. 3; YL Alg. 1 with share="fixed").

    Log-weights ``lw`` in expert order; ``corners_[t]`` is the drawn set of
    d = n - k experts whose losses are incurred (YL Alg. 1 step 5 keeps the
    complement, k experts).  Loss vectors must lie in [0, 1]^n.
    """

    def _init_state(self, n):
        self._check_share()
        self._d = n - self._n_components(n)
        self._lw = np.full(n, -np.log(n))
        self._wsum = np.zeros(n)

    def _trial(self, loss, u):
        if loss.shape != (self.n_features_in_,) or not (np.all(loss >= 0) and np.all(loss <= 1)):
            raise ValueError("loss vectors must lie in [0, 1]^n")
        w = np.exp(self._lw)
        corner = _draw(w, self._d, u, self.sampler)
        expected, realized = self._d * (w @ loss), loss[corner].sum()
        self._wsum += w
        lw = cap_log(self._before_cap(self._lw - self.eta * loss), self._d)
        lw = self._after_cap(lw)
        if self._mixing and self.share == "past":  # WK eq. (20) on weight vectors
            t = self.n_trials_ + 1
            w = (1 - self.alpha) * np.exp(lw) + self.alpha * self._wsum / t
            lw = np.log(np.maximum(w, 1e-300))
        self._lw = lw
        return expected, realized, corner

    @property
    def density_(self) -> FloatArray:
        """The weight vector (also ``weights_``)."""
        return np.exp(self._lw)

    weights_ = density_  # the name used by the compiled expert learners

    def _levels(self):
        return self._lw.copy()


class Hedge(CappedHedge):
    """Hedge over n experts (WK Alg. 1): CappedHedge with k = n - 1 (d = 1)."""

    def __init__(self, eta: float = 1.0, share: str | None = None, alpha: float = 0.0,
                 sampler: str = "decomposition", random_state: SeedLike = None) -> None:
        super().__init__(None, eta, share, alpha, sampler, random_state)

    def _n_components(self, n):
        return n - 1


class _PCAState:
    """Attributes of the PCA learners from (lam, Q) and the density weights."""

    if TYPE_CHECKING:  # set by each learner's _init_state
        n_features_in_: int
        _lam: FloatArray
        _Q: FloatArray
        _m: FloatArray
        _d: int

        def _omega(self) -> FloatArray: ...

    @property
    def eigenvalues_(self) -> FloatArray:
        """Ascending eigenvalues of the maintained matrix."""
        return self._lam.copy()

    def _levels(self):
        return self._lam.copy()

    @property
    def eigenvectors_(self) -> FloatArray:
        """Eigenvectors (columns) matching ``eigenvalues_``."""
        return self._Q.copy()

    @property
    def components_(self) -> FloatArray:
        """The k directions of the smallest weights of W, in the rows."""
        # smallest eigenvalues of W = the first k columns in ascending order
        return self._Q[:, : self.n_features_in_ - self._d].T.copy()

    @property
    def density_(self) -> FloatArray:
        """The density matrix W."""
        return (self._Q * self._omega()) @ self._Q.T

    @property
    def mean_(self) -> FloatArray:
        """The center (zeros for the uncentered learners)."""
        return self._m.copy()

    def _losses(self, omega, x, corner):
        # v_i = q_i^T S q_i, the loss of direction i (S = x x^T for a vector)
        Q = self._Q
        v = (Q.T @ x) ** 2 if x.ndim == 1 else np.sum(Q * (x @ Q), axis=0)
        return self._d * (omega @ v), v[corner].sum()


class OnlinePCA(_Learner, _Shares, _PCAState):
    """Uncentered online PCA (WK Alg. 5), optional mixing (WK Sec. 8, eq. 20; YL Alg. 4).

    Keeps ``lam`` = log-eigenvalues of the capped W (ascending) and Q.
    """

    def _init_state(self, n):
        self._check_share()
        self._d = n - self._n_components(n)
        self._lam = np.full(n, -np.log(n))
        self._Q = np.eye(n)
        self._m = np.zeros(n)
        self._wsum = np.zeros((n, n))

    def _omega(self):
        return np.exp(self._lam)

    def _trial(self, x, u):
        omega = self._omega()
        corner = _draw(omega, self._d, u, self.sampler)
        expected, realized = self._losses(omega, x, corner)
        if self._mixing and self.share == "past":
            self._wsum += self.density_  # W^{t-1}
        S = np.outer(x, x) if x.ndim == 1 else x
        lam, Q = _eigh((self._Q * self._lam) @ self._Q.T - self.eta * S)
        lam = self._after_cap(cap_log(self._before_cap(lam), self._d))
        if self._mixing and self.share == "past":  # WK eq. (20)
            t = self.n_trials_ + 1
            W = (1 - self.alpha) * (Q * np.exp(lam)) @ Q.T + self.alpha * self._wsum / t
            ev, Q = _eigh(W)
            lam = np.log(np.maximum(ev, 1e-300))
        # no floor: lam is kept exact (src/state_dense.c floors only at 2**1020)
        self._lam, self._Q = lam, Q
        return expected, realized, corner


class OnlineAdaptivePCA(OnlinePCA):
    """Online adaptive PCA (YL Alg. 4): OnlinePCA with share="fixed"."""

    def __init__(self, n_components: int, eta: float = 1.0, alpha: float = 1e-5,
                 sampler: str = "decomposition", random_state: SeedLike = None) -> None:
        super().__init__(n_components, eta, "fixed", alpha, sampler, random_state)


class VarianceMinimizer(OnlinePCA):
    """Online (adaptive) variance minimisation over the unit sphere (YL Alg. 5).

    OnlinePCA with k = n - 1 (d = 1, capping is normalisation); an instance
    is a vector x (C = x x^T) or a symmetric matrix C.  ``corners_[t]`` is
    the drawn eigenvector index j (y = Q[:, j]).
    """

    def __init__(self, eta: float = 1.0, share: str | None = None, alpha: float = 0.0,
                 random_state: SeedLike = None) -> None:
        super().__init__(None, eta, share, alpha, "decomposition", random_state)

    def _n_components(self, n):
        if self.share not in (None, "fixed"):
            raise ValueError(f"share must be None or 'fixed', got {self.share!r}")
        return n - 1


class CenteredOnlinePCA(_Learner, _PCAState):
    """Centered online PCA (WK Alg. 6, eqs. (15)-(16)).

    Keeps the matrix ``A = log W0 - eta C^t`` explicitly (uncapped) and its
    eigensystem ``lam, Q`` (ascending) from ``eigh(A)``; ``W = cap(exp(A))``.
    """

    _log_w0 = True  # A starts at log W0 = -log(n) I
    _mean_first = True  # centered, mean_init None: m^0 is the first row

    def __init__(self, n_components: int, eta: float = 1.0, center_lr_inv: float = 0.0,
                 mean_init: ArrayLike | None = None, centered: bool = True,
                 sampler: str = "decomposition", random_state: SeedLike = None) -> None:
        store_params(self, locals())

    def _init_state(self, n):
        self._d = n - self.n_components
        self._A = -np.log(n) * np.eye(n) if self._log_w0 else np.zeros((n, n))
        self._lam, self._Q = np.diag(self._A).copy(), np.eye(n)
        m0 = self.mean_init
        self._m = np.zeros(n) if m0 is None else np.array(m0, dtype=np.float64)

    def _omega(self):
        return np.exp(cap_log(self._lam, self._d))

    def _draw_corner(self, omega, u):
        return _draw(omega, self._d, u, self.sampler)

    def _trial(self, x, u):
        omega = self._omega()
        corner = self._draw_corner(omega, u)
        t = self.n_trials_ + 1
        if t == 1 and self.centered and self._mean_first and self.mean_init is None:
            self._m = np.array(x, dtype=np.float64)  # y_1 = 0
        y = x - self._m
        expected, realized = self._losses(omega, y, corner)
        if self.centered:
            c = self.center_lr_inv
            self._A -= self.eta * (c + t - 1) / (c + t) * np.outer(y, y)  # eq. (16)
            self._m = self._m - (self._m - x) / (c + t)  # eq. (15)
        else:  # "uncentered version of Alg. 6" (WK Sec. 6.2)
            self._A -= self.eta * np.outer(y, y)
        # A is kept exact: no floor (capping exponentiates lam, where the
        # far-below entries give weight 0 by themselves)
        self._lam, self._Q = _eigh(self._A)
        return expected, realized, corner


class FollowTheLeader(CenteredOnlinePCA):
    """Follow the Leader (WK Sec. 7 baseline): the top-k eigenvectors of C^{t-1}.

    ``A = -C^t`` (eta = 1, log W0 = 0, center_lr_inv = 0, mean_init = 0), so
    the top-k directions are the first k columns of Q; the corner is
    positions k..n-1 and expected loss = realized loss.  ``density_`` is the
    corner ``Q[:, k:] Q[:, k:]^T / (n - k)``.
    """

    _randomised = False
    _log_w0 = False
    _mean_first = False  # m^0 = 0

    def __init__(self, n_components: int, centered: bool = False) -> None:
        super().__init__(n_components, 1.0, 0.0, None, centered, "leader", None)

    def _omega(self):
        omega = np.zeros(self.n_features_in_)
        omega[self.n_components:] = 1.0 / self._d
        return omega

    def _draw_corner(self, omega, u):
        return np.arange(self.n_components, self.n_features_in_)

    def _losses(self, omega, y, corner):
        realized = np.sum((self._Q[:, corner].T @ y) ** 2)
        return realized, realized


class SimplexVarianceMinimizer(_Learner):
    """Online adaptive variance minimisation over the simplex (YL Alg. 6), deterministic.

    ``y`` starts uniform; instance x (C = x x^T) or C; loss ``y^T C y``;
    ``v_i ~ y_i exp(-eta (C y)_i)`` (29a), ``y = alpha/n + (1 - alpha) v`` (29b).
    """

    _randomised = False

    def __init__(self, eta: float = 1.0, alpha: float = 0.0) -> None:
        store_params(self, locals())

    def _init_state(self, n):
        self._y = np.full(n, 1.0 / n)

    def _trial(self, x, u):
        C = np.outer(x, x) if x.ndim == 1 else x
        y = self._y
        g = C @ y
        loss = y @ g
        v = y * np.exp(-self.eta * g)
        self._y = self.alpha / y.size + (1 - self.alpha) * v / v.sum()
        return loss, loss, None

    def _levels(self):
        return np.log(self._y)

    @property
    def density_(self) -> FloatArray:
        """The probability vector y (also ``weights_``)."""
        return self._y.copy()

    weights_ = density_  # the name used by the compiled learner
