"""Online variance minimisation: over the unit sphere (YL Algorithm 5,
Warmuth & Kuzmin 2006) and over the simplex (YL Algorithm 6).

The papers (YL, WK06) are cited in full in the README's references.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from .. import _kernels
from .._docs import fill_doc
from .._typing import FloatArray, SeedLike
from .._validation import ALPHA, ETA, REORTHOGONALIZE, Boolean, Options, RandomState, store_params
from . import _rates
from ._base import SHARES, reads_state
from ._trial_loop import TrialLoopLearner
from ._pca import _PCALearner, check_meg_steps, meg_step_box
from ._rates import MasterMixin, Mixing, Rate

__all__ = ["VarianceMinimizer", "SimplexVarianceMinimizer"]


def check_covariances(X, name, matrix, tol=1e-10):
    """Instances with 0 <= C <= I (vectors: ||x|| <= 1)."""
    if matrix:
        if not np.allclose(X, np.swapaxes(X, 1, 2), rtol=0, atol=tol):
            raise ValueError(f"{name} must hold symmetric matrices")
        ev = np.linalg.eigvalsh(X)
        if ev.min() < -tol or ev.max() > 1 + tol:
            raise ValueError(f"{name} must hold matrices with eigenvalues in [0, 1] "
                             f"(0 <= C <= I), got eigenvalues in [{ev.min():.3g}, "
                             f"{ev.max():.3g}]")
    else:
        norms = np.einsum("ij,ij->i", X, X)
        if norms.max() > 1 + tol:
            raise ValueError(f"{name} must hold vectors of norm at most 1 (C = x x^T "
                             f"<= I), got a norm of {np.sqrt(norms.max()):.6g}")


class _Covariances:
    """Instances are covariance matrices 0 <= C <= I, or vectors x of norm at
    most 1 standing for x x^T."""

    _batch_ndims: tuple[int, ...] = (2, 3)

    def _check_values(self, X, name, matrix, lo, hi):
        check_covariances(X, name, matrix)

    def _short_path_region(self, config, rate):
        # |x|^2 <= 1 + tol, with room for the rounding of the two sums
        return -math.inf, math.inf, math.inf, 1.0 + 0.5e-10


@fill_doc
class VarianceMinimizer(_Covariances, TrialLoopLearner):
    """Online variance minimisation over the unit sphere (YL Alg. 5, WK 2006).

    Keeps a density matrix Y; each trial draws an eigenvector ``y`` of Y
    with probability its eigenvalue, receives a covariance matrix ``C``
    (``0 <= C <= I``; a vector ``x`` means ``C = x x^T`` with ``||x|| <= 1``)
    and incurs ``y^T C y`` (expected ``tr(Y C)``); then::

        Y <- exp(log Y - eta C) / tr(...)        (YL eq. 22a)

    optionally followed by the fixed share ``sigma <- alpha/n + (1-alpha)
    sigma`` on its eigenvalues (22b).  This is the k = n - 1 case of
    :class:`OnlinePCA` without capping.  Vectors cost one rank-one update;
    a matrix ``C`` costs an O(n^3) eigendecomposition.

    Parameters
    ----------
    eta : "auto", "adahedge" or float, default="auto"
        Learning rate.  ``"auto"``: the AdaHedge rate of
        :class:`~onlinepca_fast.OnlinePCA` with ``k = n-1`` (``D = log n``;
        the two-point bound on the gap for matrix instances, ``s = tr C``):
        ``R_T <= 2 Delta_T`` without mixing (``Delta_T =
        mixability_gap_``).  Without mixing, each trial plays that learner
        or its eta -> infinity limit, Follow the Leader (the eigenvectors of
        the smallest eigenvalue of the past instances' sum ``C^{t-1}``, a
        tie within 1e-9 of the eigenvalues' spread sharing), drawn with the
        weights of a master AdaHedge (``D = log 2``) on their expected
        losses: the loss is at most the better learner's plus ``2 Delta^M``
        (``master_gap_``; ``limit_weight_`` is the leader's weight).  The
        learner's state is ``log Y = -eta_t C^{t-1}`` up to a constant (the
        stabilised step without mixing is follow the regularised leader),
        so the leader is read off it: O(n m) a trial for a group of m
        directions (m = 1 once the instances span every direction), within
        the learner's O(n^2) (vectors) or O(n^3) (matrices).  With
        ``share="fixed"``, the AdaHedge learner alone (setting it
        mid-stream drops the master; back to None starts a fresh one).  A
        number: the fixed rate (> 0).
        ``"adahedge"``: the rate learner alone, without the master and
        Follow the Leader (the rate learner's bound only; the master costs
        little here, so this is for comparing, not for speed); with
        ``share="fixed"`` it is ``"auto"`` bit for bit.
    share : {None, "fixed"}, default=None
        ``"fixed"``: the fixed share of YL eq. (22b) on the eigenvalues.
    alpha : float or "auto", default=0.0
        Fixed-share rate, ``0 <= alpha < 1``; ``"auto"``: ``1/(t+1)^2``.
    %(random_state)s
    %(record_losses)s
    %(reorthogonalize_every)s
        Vector instances only: matrix instances recompute the
        eigenvectors every trial.

    Attributes
    ----------
    eigenvalues_, eigenvectors_ : ndarray
        Eigensystem of ``log Y`` (ascending).
    density_ : ndarray of shape (n, n)
        ``Y`` of the rate learner (with ``eta="auto"`` the trials play it
        with the master's weight ``1 - limit_weight_``).
    mixability_gap_, eta_ : float
        ``eta="auto"`` or ``"adahedge"``: the rate learner's ``Delta_T`` and
        rate.
    master_gap_, limit_weight_ : float
        ``eta="auto"`` without mixing: the master's ``Delta^M`` and its
        weight of Follow the Leader for the next trial (0 otherwise).
    expected_losses_, realized_losses_, n_features_in_, n_trials_

    References
    ----------
    YL Algorithm 5, Theorems 4 and 5; M. K. Warmuth and D. Kuzmin, "Online
    variance minimization", COLT 2006.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import VarianceMinimizer
    >>> X = np.random.default_rng(0).normal(size=(300, 3)) * [0.5, 0.3, 0.01]
    >>> X /= np.linalg.norm(X, axis=1).max()          # C = x x^T <= I
    >>> vm = VarianceMinimizer(random_state=0).fit(X)
    >>> int(np.argmax(np.abs(vm.eigenvectors_[:, -1])))
    2
    """

    _constraints = {
        "eta": ETA,
        "share": Options(None, "fixed"),
        "alpha": ALPHA,
        "random_state": RandomState(),
        "record_losses": Boolean(),
        "reorthogonalize_every": REORTHOGONALIZE,
    }

    def __init__(self, *, eta: float | str = "auto", share: Literal["fixed"] | None = None,
                 alpha: float | str = 0.0, random_state: SeedLike = None,
                 record_losses: bool = True,
                 reorthogonalize_every: int | None = 10_000) -> None:
        store_params(self, locals())

    def _corner_size(self, n):
        return 1

    def _engine_options(self, p, n):
        return dict(kind=_kernels.KIND_MEG, d=1, **Rate(p["eta"]).fields(),
                    **Mixing(p["alpha"]).fields(),
                    share=SHARES[p["share"]], sampler=_kernels.SAMPLER_DECOMPOSITION)

    def _check_steps(self, X, amax, name, matrix, config, mean, rate):
        if not matrix:
            check_meg_steps(X, amax, name, rate)

    def _short_path_region(self, config, rate):
        return -math.inf, math.inf, meg_step_box(rate.bound, config.n), 1.0 + 0.5e-10

    # the maintained eigensystem, as the PCA learners report it
    eigenvalues_ = _PCALearner.eigenvalues_
    eigenvectors_ = _PCALearner.eigenvectors_
    cluster_value_ = _PCALearner.cluster_value_
    cluster_multiplicity_ = _PCALearner.cluster_multiplicity_
    density_ = _PCALearner.density_
    full_eigensystem = _PCALearner.full_eigensystem

    def _reorthogonalize_every(self, p):
        return p["reorthogonalize_every"] or 0

    # eta="auto" without mixing: the master over the rate learner and Follow the
    # Leader read off its state (src/learner.c, trial_led)
    _limit_len, _limit_state = _rates.leader_limit_len, _rates.leader_limit_state
    _master_view = _rates.leader_master_view
    master_gap_, limit_weight_ = MasterMixin.master_gap_, MasterMixin.limit_weight_

    @reads_state
    def sample_direction(self, random_state: SeedLike = None) -> FloatArray:
        """Draw a unit vector: eigenvector i of Y with probability sigma_i
        (with ``eta="auto"`` and no mixing, one uniform of the generator first
        chooses the learner by the master's weights: Follow the Leader draws
        one of its tied eigenvectors uniformly).

        %(draw_parameters)s

        Returns
        -------
        y : ndarray of shape (n,)
            The drawn eigenvector.
        """
        self._check_fitted()
        rng = self._draw_rng(random_state)
        i = _rates.leader_draw(self, rng)
        if i is None:
            (i,) = self._state.corner(1, rng, "decomposition")
        return self._state.direction(i)


@fill_doc
class SimplexVarianceMinimizer(_Covariances, TrialLoopLearner):
    """Online variance minimisation over the simplex (YL Algorithm 6).

    Deterministic: keeps a probability vector ``y`` (a portfolio), incurs
    ``y^T C y`` for the revealed ``C`` (``0 <= C <= I``; a vector ``x``
    means ``C = x x^T``), and updates by exponentiated gradient plus fixed
    share::

        v_i = y_i exp(-eta (C y)_i) / sum_j y_j exp(-eta (C y)_j)   (29a)
        y_i = alpha/n + (1-alpha) v_i                               (29b)

    Parameters
    ----------
    eta : "auto", "adahedge" or float, default="auto"
        Learning rate.  ``"auto"``: AdaHedge on the linearised loss ``C y``
        (``D = log n``, exact gap, stabilised step); the loss ``y^T C y`` is
        convex with gradient ``2 C y``, so ``R_T <= 4 Delta_T`` without mixing
        (``Delta_T = mixability_gap_``).  ``"adahedge"``: the same learner,
        bit for bit (this learner has no master).  A number: the fixed rate
        (> 0).
    alpha : float or "auto", default=0.0
        Fixed-share rate of YL eq. (29b), ``0 <= alpha < 1``; ``"auto"``:
        ``1/(t+1)^2`` at trial t.
    %(record_losses)s

    Attributes
    ----------
    weights_ : ndarray of shape (n,)
        The current ``y``.
    expected_losses_, realized_losses_ : ndarray
        Both ``y^T C y`` (no randomisation).
    n_features_in_, n_trials_, n_samples_seen_ : int

    References
    ----------
    YL Algorithm 6, Theorem 6.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import SimplexVarianceMinimizer
    >>> X = np.random.default_rng(0).normal(size=(500, 3)) * [0.5, 0.5, 0.05]
    >>> X /= np.linalg.norm(X, axis=1).max()          # C = x x^T <= I
    >>> y = SimplexVarianceMinimizer(eta=2.0).fit(X).weights_
    >>> int(np.argmax(y))
    2
    """

    _randomized = False
    _constraints = {
        "eta": ETA,
        "alpha": ALPHA,
        "record_losses": Boolean(),
    }

    def __init__(self, *, eta: float | str = "auto", alpha: float | str = 0.0,
                 record_losses: bool = True) -> None:
        store_params(self, locals())

    _basis = False

    def _engine_options(self, p, n):
        return dict(kind=_kernels.KIND_SIMPLEX_VAR, d=1, **Rate(p["eta"]).fields(),
                    **Mixing(p["alpha"]).fields(),
                    share=_kernels.SHARE_FIXED)

    @property
    @reads_state
    def weights_(self) -> FloatArray:
        """The current probability vector y."""
        self._check_fitted()
        return self._state.weights(1)
