"""The trial-to-trial online PCA learners: WK Algorithm 5 and YL Algorithm 4
(the cumulative ones, WK Algorithm 6 and Follow the Leader, are in
``_cumulative``).

References
----------
.. [WK] M. K. Warmuth and D. Kuzmin, "Randomized online PCA algorithms with
   regret bounds that are logarithmic in the dimension", JMLR 9, 2008.
.. [YL] J. Yuan and A. Lamperski, "Online adaptive principal component
   analysis and its extensions", preprint (ICML 2019).
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin

from .. import _kernels
from .._typing import ArrayLike, FloatArray, Sampler, SeedLike, Share, State
from .._validation import (
    REORTHOGONALIZE,
    STATE,
    as_generator,
    as_real_array,
)
from ._clustered import MAX_DENSE, ClusteredState, refuse_dense
from ._rates import MasterMixin
from ._scale import check_norm_range, norm_box, short_path_norm2_min
from ._sparse import is_sparse, map_sparse, project_rows
from ._base import (
    rate_options, mixing_options,
    CAPPED_MIXING,
    SAMPLERS,
    SHARES,
    CappedDraws,
    EigensystemMixin,
    TrialLoopLearner,
    reads_state,
)

__all__ = ["OnlinePCA", "OnlineAdaptivePCA"]


def row_norms(Y):
    """Euclidean norms of the rows of Y without overflow (inf if they overflow)."""
    with np.errstate(over="ignore", invalid="ignore"):
        s = np.abs(Y).max(axis=1)
        safe = np.where(s > 0, s, 1.0)[:, np.newaxis]
        norms = s * np.sqrt(np.einsum("ij,ij->i", Y / safe, Y / safe))
    return np.where(np.isnan(norms), np.inf, norms)


def _step_limit(eta):
    """The largest |y| with max(1, eta) |y|^2 <= MAX_STEP (= 2**1020)."""
    return 2.0 ** 510 / math.sqrt(max(1.0, eta))


def _reject_step(name, i, bound, what, eta):
    with np.errstate(over="ignore"):
        step = max(1.0, eta) * np.float64(bound) ** 2
    raise ValueError(
        f"{name} row {i} is too large for eta = {eta!r}: max(1, eta) * "
        f"{what}^2 = {step:.3g} exceeds 2**1020, the largest step a log-weight "
        "can take; rescale the data or eta (nothing was changed)")


def meg_step_box(eta, n):
    """A bound on max |x_i| under which :func:`check_meg_steps` passes
    (with a margin for the rounding of its cheap test)."""
    return _step_limit(eta) / math.sqrt(n) * (1 - 1e-12)


def check_meg_steps(X, amax, name, eta):
    """Reject a batch with an instance x whose step ``eta |x|^2`` (or loss
    ``|x|^2``) would exceed :data:`MAX_STEP` (the trial-to-trial learners)."""
    limit = _step_limit(eta)
    if math.sqrt(X.shape[1]) * amax <= limit:  # |x| <= sqrt(n) max|x_i|: the cheap test
        return
    bad = np.flatnonzero(~(row_norms(X) <= limit))
    if bad.size:
        i = int(bad[0])
        _reject_step(name, i, row_norms(X[i:i + 1])[0], "|x|", eta)


class _Projections(ClassNamePrefixFeaturesOutMixin, TransformerMixin, EigensystemMixin,
                   CappedDraws):
    """The projection API of the PCA learners (components, transforms, draws)."""

    def _corner_size(self, n):
        return n - self.n_components

    def _params(self, n):
        if n < 2:
            raise ValueError(f"online PCA needs at least 2 features, got {n} feature(s)")
        return super()._params(n)

    @property
    def _n_features_out(self):
        self._check_fitted()
        return self.n_components

    @property
    def explained_variance_(self) -> FloatArray:
        """Absent here (the cumulative learners have it): see the message."""
        raise AttributeError(
            f"{type(self).__name__} has no explained_variance_: it keeps log W, the "
            "losses so far times the learning rate, mixed and capped (WK Alg. 5, YL "
            "Alg. 4), not the data's second moments; CenteredOnlinePCA and "
            "FollowTheLeader keep the covariance and have it")

    @property
    def explained_variance_ratio_(self) -> FloatArray:
        """Absent here, as ``explained_variance_``."""
        return self.explained_variance_

    def _kept_basis(self):
        """The k eigenvectors of W with the smallest eigenvalues (n x k)."""
        return self._q[:, :self.n_components]

    def _sampled_basis(self, random_state):
        """The k directions outside a drawn corner (n x k)."""
        corner = self._draw(random_state)
        keep = np.setdiff1d(np.arange(self.n_features_in_), corner)
        return self._q[:, keep]

    @property
    def components_(self) -> FloatArray:
        """The k leading directions (rows): top-k of E[P] = I - (n-k) W (with
        ``eta="auto"``, of the learner its master weighs more, see
        ``limit_weight_``)."""
        self._check_fitted()
        return np.ascontiguousarray(self._kept_basis().T)

    @property
    def mean_(self) -> FloatArray:
        """The center subtracted before projecting (zeros when uncentered)."""
        self._check_fitted()
        return self._mean.copy()

    def fit_transform(self, X: ArrayLike, y: None = None) -> FloatArray:
        """:meth:`fit` on X, then :meth:`transform` X with the final components.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            The instances, one trial per row.
        y : None
            Ignored.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
            Coordinates of X on the final ``components_``.
        """
        return self.fit(X).transform(X)

    @reads_state
    def transform(self, X: ArrayLike) -> FloatArray:
        """Project X on ``components_`` (after subtracting ``mean_``).

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n_samples, n_features)
            Rows to project (sparse rows are densified a chunk at a time).

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
            ``(X - mean_) @ components_.T``, computed in the same chunks of
            rows for dense and sparse X (the same numbers).
        """
        if is_sparse(X):
            return map_sparse(X, self.transform)
        X = self._validate_for_transform(X)
        return project_rows(X, self._mean, self._kept_basis())

    @reads_state
    def inverse_transform(self, X: ArrayLike) -> FloatArray:
        """Map coordinates back: ``X @ components_ + mean_``.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_components)
            Coordinates on ``components_``.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            Points of the projected subspace.
        """
        self._check_fitted()
        Y = as_real_array(X, "X")
        if Y.ndim != 2 or Y.shape[1] != self.n_components:
            raise ValueError(f"X must have shape (n_samples, {self.n_components}), "
                             f"got {Y.shape}")
        if not np.isfinite(Y).all():
            raise ValueError("X contains NaN or infinity")
        return Y @ self._kept_basis().T + self._mean

    @reads_state
    def sample_projection(self, random_state: SeedLike = None) -> FloatArray:
        """Draw a rank-k projection matrix P from the current parameter.

        P = I - (n-k) R for a matrix corner R drawn so that E[R] = W (WK
        Alg. 5), i.e. ``P = Q_k Q_k^T`` over the directions outside the
        drawn corner.  With ``eta="auto"`` (OnlinePCA and its subclass) one
        uniform first draws the learner with the master's weights: the
        limit learner's projection (its k directions) with weight
        ``limit_weight_``, else the draw from W.

        Parameters
        ----------
        random_state : None, int or Generator, default=None
            None uses (and advances) the learner's own generator.

        Returns
        -------
        P : ndarray of shape (n, n)
            The drawn projection (refused above 10,000 features, where it
            exceeds 800 MB: see :meth:`sample_components`).
        """
        self._check_fitted()
        refuse_dense(self.n_features_in_, "sample_projection()", MAX_DENSE)
        V = self._sampled_basis(random_state)
        return V @ V.T

    @reads_state
    def sample_components(self, random_state: SeedLike = None) -> FloatArray:
        """The projection of :meth:`sample_projection` as k orthonormal rows V
        (``P = V.T @ V``), in O(n k) memory.

        Parameters
        ----------
        random_state : None, int or Generator, default=None
            None uses (and advances) the learner's own generator.

        Returns
        -------
        V : ndarray of shape (k, n)
            Orthonormal rows spanning the drawn subspace.
        """
        self._check_fitted()
        return np.ascontiguousarray(self._sampled_basis(random_state).T)


class OnlinePCA(ClusteredState, _Projections, MasterMixin, TrialLoopLearner):
    """Uncentered randomized online PCA (WK Algorithm 5).

    At each trial a rank-k projection ``P`` is drawn with ``E[P] = I -
    (n-k) W``, the instance ``x`` costs ``||x - P x||^2``, and the density
    matrix is updated by the matrix exponentiated gradient step followed by
    capping::

        W <- cap_{n-k}( exp(log W - eta x x^T) / tr(...) )

    The eigensystem of ``log W`` is maintained by one rank-one update per
    trial (Gu & Eisenstat), with log-eigenvalues kept exactly (no weight
    ever underflows to 0), and capped with :func:`~onlinepca_fast.kernels.cap_log`.

    Parameters
    ----------
    n_components : int
        Rank k of the projection, ``1 <= k < n_features``.
    eta : "auto" or float, default="auto"
        Learning rate.  ``"auto"``: no tuning, no horizon, scale-free (``c
        X`` gives the same W and losses times ``c^2``; exactly so on rows of
        norm 0 or ``2**-480 .. 2**480``, and others are refused, see
        ``learners._scale``).  Each trial plays
        one of two learners, drawn with the weights of a master AdaHedge
        (``D = log 2``) on their expected losses:

        - the rate learner: this algorithm at the AdaHedge rate ``eta_t =
          D / Delta_{t-1}`` (``D = d log(n/d)``, ``d = n-k``, or ``d
          log(n/(d alpha))`` when mixing at a constant alpha: the constant
          of the adaptive-regret bound; ``Delta`` its cumulative mixability
          gap, ``mixability_gap_``) with the stabilised step ``log W <-
          (eta_{t+1}/eta_t)(log W - eta_t x x^T)``.  Its regret against
          every rank-k subspace is ``R_T <= 2 Delta_T <= 2 sqrt(log(n/d)
          sum_t s_t^2 / 4) + (4/3 log(n/d) + 2) max_t s_t``, ``s_t = d
          |x_t|^2`` (no mixing; with mixing see docs: adaptive_rates);
        - the limit eta -> infinity of the capped update (zero temperature):
          it keeps k directions and one flat level, a tracking Follow the
          Leader, O(n k^2) per trial; it wins when the data favour
          large rates (the digits class by class: every eta >= 100 ties
          with it).

        The loss is at most that of the better of the two plus ``2
        Delta^M`` (``master_gap_``), ``Delta^M <= sqrt(log 2 sum_t |x_t|^4
        / 4) + (2/3 log 2 + 1) max_t |x_t|^2``; ``limit_weight_`` is the
        master's weight of the limit.  Setting ``eta`` or ``n_components``
        mid-stream restarts the master and its limit at the next batch.  A
        number: the fixed-rate algorithm
        (> 0); the tuned value of WK eq. (3) is
        :func:`onlinepca_fast.metrics.tuned_learning_rate`.
    share : {None, "fixed", "uniform", "past"}, default=None
        Mixing step for shifting data:

        - ``"fixed"``: fixed share of YL Algorithm 4, eq. (11b), applied
          *before* capping: ``w <- alpha/n + (1-alpha) w`` on the
          normalised eigenvalues.
        - ``"uniform"``: WK Section 8, *after* capping, at the end of the
          trial: ``W <- (1-alpha) W + alpha I/n``.
        - ``"past"``: WK eq. (20), after capping: ``W <- (1-alpha) W +
          alpha (W^0 + ... + W^{t-1})/t`` ("long-term memory").  This
          changes the eigenbasis, so each trial costs a full O(n^3)
          eigendecomposition.
    alpha : float or "auto", default=0.0
        Mixing rate, ``0 <= alpha < 1``; 0 disables mixing.  ``"auto"``:
        ``alpha_t = 1/(t+1)^2`` at trial t (adaptive regret on every interval
        ``[r, s]`` at most ``Delta_s (2 + log(2 n r^2/d) / log(n/d))`` with
        ``eta="auto"``; docs: adaptive_rates).
    sampler : {"decomposition", "systematic"}, default="decomposition"
        How the projection is drawn, see
        :func:`onlinepca_fast.kernels.sample_corner`.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the draws.
    record_losses : bool, default=True
        Keep the per-trial losses; turn off for unbounded streams (then
        memory does not grow with the number of trials).
    reorthogonalize_every : int or None, default=10000
        Every this many trials (counted since the reset, so independently
        of how the stream is split into batches) the eigenvectors are
        re-orthogonalised by one Newton-Schulz step, O(n^3) (clustered
        state: O(n m^2)).  Rounding in the rank-one updates makes
        ``||Q^T Q - I||`` grow by ~1e-18 to 1e-16 per trial; the default
        keeps it below ~1e-12.  None never re-orthogonalises.
    state : {"auto", "dense", "clustered"}, default="auto"
        How ``log W`` is kept.  ``"dense"``: all n eigenpairs (n x n).
        ``"clustered"``: m explicit eigenpairs plus one cluster, their
        orthogonal complement, with one eigenvalue (``cluster_value_``):
        capped and never-seen directions, so memory and time per trial are
        O(n m), m ~ 2k in steady state.  Expected losses agree with the
        dense state to rounding, draws too while the cluster is at the cap
        (before, a corner's left-out cluster directions are drawn uniformly
        in the complement).  ``"auto"``: chosen by the number m of
        explicit directions, whichever is faster (measured,
        ``benchmarks/crossover_state.py``): clustered while m < n / 2
        (dense at every m below 40 features),
        dense from there (n <= 10,000), clustered again once capping
        collapses m to half that; decided after each trial by the state
        alone, so a fit is the same however it is split, timed, pickled
        or interrupted.  ``share="past"`` needs the dense state.

    Attributes
    ----------
    components_ : ndarray of shape (k, n)
        Orthonormal rows: the k eigenvectors of W with the smallest
        eigenvalues, i.e. the top-k directions of ``E[P]``.  With
        ``eta="auto"``: those of the learner the master weighs more (the
        limit's k directions when ``limit_weight_ > 1/2``, else those of
        W); ``sample_projection`` draws the learner with the master's
        weights, then its projection; both jump to the other learner's
        when ``limit_weight_`` crosses 1/2.  ``eigenvalues_``,
        ``eigenvectors_``, ``cluster_value_`` and ``density_`` are the rate
        learner's W.
    eigenvalues_ : ndarray of shape (n,) or (m,)
        Ascending eigenvalues of ``log W`` (normalised and capped: the
        capped ones are exactly ``-log(n-k)``); in the clustered state the
        m explicit ones (all below ``cluster_value_``).
    eigenvectors_ : ndarray of shape (n, n) or (n, m)
        Orthonormal columns matching ``eigenvalues_``.
    cluster_value_ : float
        The log-eigenvalue of every direction orthogonal to
        ``eigenvectors_`` (NaN in the dense state).
    cluster_multiplicity_ : int
        ``n - m`` in the clustered state, 0 in the dense one.
    density_ : ndarray of shape (n, n)
        The density matrix W (formed on request; the clustered state
        refuses above 10,000 features).
    mean_ : ndarray of shape (n,)
        Zeros (uncentered).
    expected_losses_, realized_losses_ : ndarray of shape (n_trials,)
        ``(n-k) tr(W^{t-1} x x^T)`` and ``||x - P x||^2`` per trial.
    eta_ : float
        The rate of the next trial (``eta`` if numeric; ``inf`` until the
        first nonzero row with ``"auto"``).
    mixability_gap_ : float
        ``Delta_T`` of ``eta="auto"``'s rate learner (0 with a numeric eta).
    master_gap_ : float
        ``Delta^M`` of ``eta="auto"``'s master (0 with a numeric eta).
    limit_weight_ : float
        ``eta="auto"``: the master's weight of the limit learner for the
        next trial (0 with a numeric eta).
    alpha_ : float
        The mixing rate of the next trial.
    n_features_in_ : int
    n_trials_ : int

    Notes
    -----
    The mathematics is exact: after a few hundred trials along one subspace
    its weight in W is like ``exp(-250)``; it is kept as such (a linear-
    domain implementation rounds it to 0 or clamps it, which silently acts
    as a fixed share).  Faster recovery after a shift is what ``share`` and
    ``alpha`` are for.

    References
    ----------
    WK Algorithm 5, Theorem 6; Section 8 and eq. (20) for mixing; YL
    Algorithm 4 for ``share="fixed"``.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import OnlinePCA
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2)) @ rng.normal(size=(2, 10)) / 10
    >>> pca = OnlinePCA(n_components=2, eta=1.0, random_state=0).fit(X)
    >>> pca.components_.shape
    (2, 10)
    >>> bool(pca.expected_losses_[-100:].mean() < pca.expected_losses_[:100].mean())
    True
    """

    _constraints = {**CAPPED_MIXING, "reorthogonalize_every": REORTHOGONALIZE,
                    "state": STATE}

    def __init__(self, n_components: int, *, eta: float | str = "auto", share: Share = None,
                 alpha: float | str = 0.0, sampler: Sampler = "decomposition",
                 random_state: SeedLike = None, record_losses: bool = True,
                 reorthogonalize_every: int | None = 10_000,
                 state: State = "auto") -> None:
        self.n_components = n_components
        self.eta = eta
        self.share = share
        self.alpha = alpha
        self.sampler = sampler
        self.random_state = random_state
        self.record_losses = record_losses
        self.reorthogonalize_every = reorthogonalize_every
        self.state = state

    def _share(self, p):
        return p["share"]

    def _engine_options(self, p, n):
        return dict(kind=_kernels.KIND_MEG, d=n - p["n_components"], **rate_options(p["eta"]),
                    **mixing_options(p["alpha"]), share=SHARES[self._share(p)],
                    sampler=SAMPLERS[p["sampler"]])

    def _initial_state(self, p, n):
        return np.full(n, -np.log(n)), np.eye(n), np.zeros(n)

    def _initial_mean(self, p, n):
        return np.zeros(n)  # uncentered

    def _check_steps(self, X, amax, name, matrix, config, mean):
        check_meg_steps(X, amax, name, config.eta)
        if config.auto_rate:  # scale-free: the range where it is exact
            check_norm_range(X, amax, name, type(self).__name__)

    def _short_path_norm2_min(self, config):
        return short_path_norm2_min(config.auto_rate)

    def _short_path_region(self, config):
        box = meg_step_box(config.eta, config.n)
        if config.auto_rate:
            box = min(box, norm_box(config.n))
        return -math.inf, math.inf, box, math.inf

    def _reorthogonalize_every(self, p):
        return p["reorthogonalize_every"] or 0

    # -- eta="auto": the master over the learner and its eta -> inf limit ----------
    def _limit_len(self, p, n):
        k = p["n_components"]
        return 6 + k + k * n if p["eta"] == "auto" else 0  # src/limit.h

    def _limit_parts(self):
        """(weight of the limit learner, its r explicit directions as n x r
        columns), or None without the master."""
        lim = self.__dict__.get("_limit")
        if lim is None or self.eta != "auto":
            return None
        n, k = self.n_features_in_, self.n_components
        if lim.size != 6 + k + k * n:  # n_components set since: restarts with the next batch
            return None
        r = int(lim[5])  # layout: src/limit.h
        U = lim[6 + k:6 + k + r * n].reshape(r, n).T
        return 1.0 - float(lim[3]), U

    def _kept_basis(self):
        """The learner's k directions: the rate learner's, or the limit
        learner's while the master weighs it more (and it has k)."""
        parts = self._limit_parts()
        if parts is not None and parts[0] > 0.5 and parts[1].shape[1] == self.n_components:
            return parts[1].copy()
        return super()._kept_basis()

    def _sampled_basis(self, random_state):
        """With the master: the rate learner's draw with its weight, else
        the limit learner's (its r directions and k - r drawn uniformly in
        their complement), one uniform of the generator choosing."""
        parts = self._limit_parts()
        if parts is None:
            return super()._sampled_basis(random_state)
        rng = self._rng if random_state is None else as_generator(random_state)
        wb, U = parts
        if rng.random() >= wb:
            return super()._sampled_basis(rng)
        extra = self.n_components - U.shape[1]
        if not extra:
            return U.copy()
        G = rng.standard_normal((self.n_features_in_, extra))
        for _ in range(2):
            G -= U @ (U.T @ G)
        return np.hstack([U, np.linalg.qr(G)[0]])

    def _master_view(self):
        return None if self._limit_parts() is None else self._limit[:4]


class OnlineAdaptivePCA(OnlinePCA):
    """Online adaptive PCA (YL Algorithm 4): :class:`OnlinePCA` with fixed share.

    The fixed-share step ``w <- alpha/n + (1-alpha) w`` on the eigenvalues of
    W, applied before capping (YL eq. 11b), bounds the regret on every
    interval (adaptive regret, YL eq. 3 and Theorem 3).

    Parameters
    ----------
    n_components : int
        Rank k, ``1 <= k < n_features``.
    eta : "auto" or float, default="auto"
        Learning rate.  ``"auto"``: the master of :class:`OnlinePCA` over
        the rate learner and its eta -> infinity limit; with a constant
        alpha the rate learner's constant is ``D = d log(n/(d alpha))``
        (every eigenvalue of W is at least ``alpha/n``), which bounds its
        regret on every interval ``[r, s]`` by ``Delta_[r,s] + Delta_s (1 +
        (s - r + 1) log(1/(1-alpha)) / log(n/(d alpha)))`` and the static
        regret by ``Delta_T (1 + (log(n/d) + T log(1/(1-alpha))) /
        log(n/(d alpha)))`` (``Delta = mixability_gap_``; docs:
        adaptive_rates).  A number: YL Theorem 3 tunes it with
        :func:`onlinepca_fast.metrics.adaptive_parameters`.
    alpha : float or "auto", default=1e-5
        Fixed-share rate, ``0 <= alpha < 1`` (YL Sec. 6.1 uses 1e-5).
        ``"auto"``: ``alpha_t = 1/(t+1)^2``, with adaptive regret on every
        interval ``[r, s]`` at most ``Delta_s (2 + log(2 n r^2/d) /
        log(n/d))`` (measured no better than 1e-5 on real streams).
    sampler : {"decomposition", "systematic"}, default="decomposition"
        As for :class:`OnlinePCA`.
    random_state : None, int or numpy.random.Generator, default=None
        As for :class:`OnlinePCA`.
    record_losses : bool, default=True
        As for :class:`OnlinePCA`.
    reorthogonalize_every : int or None, default=10000
        As for :class:`OnlinePCA`.
    state : {"auto", "dense", "clustered"}, default="auto"
        As for :class:`OnlinePCA`.

    Attributes
    ----------
    See :class:`OnlinePCA`.

    References
    ----------
    YL Algorithm 4, eq. (11a-c), Theorem 3.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import OnlineAdaptivePCA
    >>> X = np.random.default_rng(0).normal(size=(200, 8)) / 4
    >>> OnlineAdaptivePCA(n_components=2, random_state=0).fit(X).n_trials_
    200
    """

    _constraints = {k: v for k, v in OnlinePCA._constraints.items() if k != "share"}

    def __init__(self, n_components: int, *, eta: float | str = "auto", alpha: float | str = 1e-5,
                 sampler: Sampler = "decomposition", random_state: SeedLike = None,
                 record_losses: bool = True, reorthogonalize_every: int | None = 10_000,
                 state: State = "auto") -> None:
        self.n_components = n_components
        self.eta = eta
        self.alpha = alpha
        self.sampler = sampler
        self.random_state = random_state
        self.record_losses = record_losses
        self.reorthogonalize_every = reorthogonalize_every
        self.state = state

    def _share(self, p):
        return "fixed"  # YL Algorithm 4 is OnlinePCA with fixed share
