"""The trial-to-trial online PCA learners: WK Algorithm 5 and YL Algorithm 4
(the cumulative ones, WK Algorithm 6 and Follow the Leader, are in
``_cumulative``), over :class:`_PCALearner`, the projection API every PCA
learner shares.

The papers (WK, YL) are cited in full in the README's references.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin

from .. import _kernels
from .._docs import fill_doc
from .._typing import ArrayLike, FloatArray, Sampler, SeedLike, Share, State
from .._validation import REORTHOGONALIZE, STATE, as_real_array, store_params
from . import _aliases, _scoring
from ._base import CAPPED_MIXING, SAMPLERS, SHARES, reads_state
from ._rates import MasterMixin, Mixing, Rate, SketchMaster
from ._scale import check_norm_range, norm_box, short_path_norm2_min
from ._sparse import is_sparse, map_sparse, project_rows
from ._state import MAX_DENSE, auto_bounds, refuse_dense
from ._trial_loop import TrialLoopLearner

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


def _reject_step(name, i, bound, what, rate):
    eta = rate.bound
    with np.errstate(over="ignore"):
        step = max(1.0, eta) * np.float64(bound) ** 2
    if rate.value is None:  # "auto" (steps of |x|^2 at most), or no rate at all
        size, fix = f"{what}^2 = {step:.3g}", "rescale the data"
    else:
        size, fix = f"max(1, eta) * {what}^2 = {step:.3g}", "rescale the data or eta"
    raise ValueError(
        f"{name} row {i} is too large{rate.label and ' for ' + rate.label}: {size} "
        f"exceeds 2**1020, the largest step a log-weight can take; {fix} (nothing was "
        "changed)")


def meg_step_box(eta, n):
    """A bound on max |x_i| under which :func:`check_meg_steps` passes
    (with a margin for the rounding of its cheap test)."""
    return _step_limit(eta) / math.sqrt(n) * (1 - 1e-12)


def check_meg_steps(X, amax, name, rate):
    """Reject a batch with an instance x whose step ``eta |x|^2`` (or loss
    ``|x|^2``) would exceed :data:`MAX_STEP` (the trial-to-trial learners)."""
    limit = _step_limit(rate.bound)
    if math.sqrt(X.shape[1]) * amax <= limit:  # |x| <= sqrt(n) max|x_i|: the cheap test
        return
    bad = np.flatnonzero(~(row_norms(X) <= limit))
    if bad.size:
        i = int(bad[0])
        _reject_step(name, i, row_norms(X[i:i + 1])[0], "|x|", rate)


@fill_doc
class _PCALearner(ClassNamePrefixFeaturesOutMixin, TransformerMixin, TrialLoopLearner):
    """What every PCA learner offers over its state object: the projection
    (``components_``, ``transform``, draws) and the maintained eigensystem.

    Hooks: :meth:`_kept_basis` and :meth:`_sampled_basis` (OnlinePCA's
    master chooses between its learners), ``_a0`` (the level of A at reset,
    the cumulative learners).
    """

    def _corner_size(self, n):
        return n - self.n_components

    def _params(self, n):
        if n < 2:
            raise ValueError(f"online PCA needs at least 2 features, got {n} feature(s)")
        return super()._params(n)

    # -- the state's representation (the learners with a ``state`` parameter) ------
    def _share(self, p):
        return p.get("share")

    def _representation(self, p, n):
        """clustered for state="clustered", and for "auto" unless the dense
        state wins at every m (fewer than 40 features)."""
        if p["state"] == "auto":
            return "clustered" if self._switches(p) and auto_bounds(n)[1] > 0 else "dense"
        return p["state"]

    def _switches(self, p):
        return p["state"] == "auto" and self._share(p) != "past"

    def _check_representation(self, p):
        if p["state"] not in ("auto", self._state.representation):
            raise ValueError(
                f"state={self.state!r} would change how the fitted learner keeps "
                f"log W (it is {self._state.representation}); set state before fit, "
                "not mid-stream")

    # -- the projection ---------------------------------------------------------------
    @property
    def _n_features_out(self):
        self._check_fitted()
        return self.n_components

    #: the state's k leading directions are Follow the Leader's (the
    #: cumulative learners: eigenvectors of the scatter C^t), so that where
    #: eta="auto"'s master weighs F most, components_ are those exact ones
    #: rather than F's sketch at its last refresh
    _state_leads = False

    def _kept_basis(self):
        """The k leading directions (n x k): those of the learner eta="auto"'s
        master weighs most, if it is the limit or Follow the Leader on the
        sketch (and it has k; the cumulative learners: the state's, exact
        Follow the Leader, for F); else the eigenvectors of W with the
        smallest eigenvalues."""
        master = self._master_view()
        kept = None if master is None else master.kept_basis(leader=not self._state_leads)
        return self._state.kept_basis(self.n_components) if kept is None else kept

    def _sampled_basis(self, random_state):
        """The k directions of a drawn projection (n x k); with eta="auto"'s
        master, one uniform of the generator first chooses the learner."""
        rng = self._draw_rng(random_state)
        k, sampler = self.n_components, self._sampler_name()
        master = self._master_view()
        if master is None:
            return self._state.sampled_basis(k, rng, sampler)
        return master.sampled_basis(rng, lambda r: self._state.sampled_basis(k, r, sampler))

    # -- eta="auto": the master over the rate learner, its eta -> inf limit and
    # Follow the Leader on a sketch (src/limit.h; OnlinePCA, OnlineAdaptivePCA,
    # CenteredOnlinePCA; Follow the Leader has no rate) ------------------------------
    def _limit_len(self, p, n):
        return SketchMaster.layout(n, p["n_components"])[-1] if p.get("eta") == "auto" else 0

    def _master_view(self):
        """The master's view, or None without it (a numeric eta)."""
        if getattr(self, "eta", None) != "auto":
            return None
        return SketchMaster.of(self.__dict__.get("_limit"), self.n_features_in_,
                               self.n_components)

    def _sampler_name(self):
        return self.sampler

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

    singular_values_ = _aliases.absent("singular_values_")
    noise_variance_ = _aliases.absent("noise_variance_")
    n_components_ = _aliases.n_components_
    score = _scoring.score

    @property
    @reads_state
    def components_(self) -> FloatArray:
        """The k leading directions (rows): top-k of E[P] = I - (n-k) W (with
        ``eta="auto"``, of the learner its master weighs most, see
        ``limit_weight_`` and ``leader_weight_``)."""
        self._check_fitted()
        return np.ascontiguousarray(self._kept_basis().T)

    @property
    @reads_state
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
        %(y)s

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
        ``limit_weight_``, else the draw from W.  Follow the Leader's is
        the projection onto ``components_`` (deterministic).

        %(draw_parameters)s

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

        %(draw_parameters)s

        Returns
        -------
        V : ndarray of shape (k, n)
            Orthonormal rows spanning the drawn subspace.
        """
        self._check_fitted()
        return np.ascontiguousarray(self._sampled_basis(random_state).T)

    # -- the maintained eigensystem (VarianceMinimizer borrows these) -----------------
    @property
    @reads_state
    def eigenvalues_(self) -> FloatArray:
        """Ascending eigenvalues of the maintained matrix (``log W``, or
        ``A`` for the cumulative learners): all n (dense state) or the m
        explicit ones (clustered state)."""
        self._check_fitted()
        return self._state.eigenvalues()

    @property
    @reads_state
    def eigenvectors_(self) -> FloatArray:
        """Orthonormal eigenvectors (columns) matching ``eigenvalues_``."""
        self._check_fitted()
        return self._state.eigenvectors()

    @property
    @reads_state
    def cluster_value_(self) -> float:
        """The eigenvalue (of ``log W``, or ``A``) of every direction
        orthogonal to ``eigenvectors_`` (NaN in the dense state)."""
        self._check_fitted()
        return self._state.cluster_value

    @property
    @reads_state
    def cluster_multiplicity_(self) -> int:
        """How many eigenvalues equal ``cluster_value_`` (0 in the dense state)."""
        self._check_fitted()
        return self._state.cluster_multiplicity

    @property
    @reads_state
    def density_(self) -> FloatArray:
        """The density matrix W, formed on request (the clustered state
        refuses above 10,000 features)."""
        self._check_fitted()
        return self._state.density(self.n_features_in_ - self._corner_size(self.n_features_in_))

    @reads_state
    def full_eigensystem(self, max_features: int | None = MAX_DENSE
                         ) -> tuple[FloatArray, FloatArray]:
        """All n ascending eigenvalues of ``log W`` (or ``A``) and an n x n
        eigenbasis.

        Parameters
        ----------
        max_features : int or None, default=10000
            The clustered state refuses (``ValueError``) to form the n x n
            basis when n is larger; None never refuses.

        Returns
        -------
        eigenvalues : ndarray of shape (n,)
            Ascending: ``eigenvalues_``, then ``cluster_value_`` repeated
            ``cluster_multiplicity_`` times.
        eigenvectors : ndarray of shape (n, n)
            Orthonormal columns: ``eigenvectors_``, then an orthonormal basis
            of their complement (any is an eigenbasis of the cluster).
        """
        self._check_fitted()
        return self._state.full_eigensystem(max_features)


@fill_doc
class OnlinePCA(_PCALearner):
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
    eta : "auto", "adahedge" or float, default="auto"
        Learning rate.  ``"auto"``: no tuning, no horizon, scale-free (``c
        X`` gives the same W and losses times ``c^2``; exactly so on rows of
        norm 0 or ``2**-480 .. 2**480``, and others are refused, see
        ``learners._scale``).  Each trial plays
        one of three learners, drawn with the weights of a master AdaHedge
        (``D = log 3``) on their expected losses:

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
          Leader, O(n k + k^3) per trial on average; it wins when the data favour
          large rates (the digits class by class: every eta >= 100 ties
          with it);
        - Follow the Leader on a Frequent Directions sketch of ``ell =
          min(n, max(4k, 24))`` directions of ``sum x x^T`` (the limit is the same
          sketch with ``ell = k``; ``ell = n`` is exact Follow the Leader),
          refreshed in batches: it plays its sketch at its last refresh and
          absorbs the rows since every ``min(ell, ceil(t/4))`` rows or so, so
          its leader misses at most ``min(ell, t/5)`` rows; O(n ell + ell^2)
          per trial on average: it wins on stationary streams, where the
          running covariance is the best predictor.

        The loss is at most that of the best of the three plus ``2
        Delta^M`` (``master_gap_``), ``Delta^M <= sqrt(log 3 sum_t |x_t|^4
        / 4) + (2/3 log 3 + 1) max_t |x_t|^2``; ``limit_weight_`` and
        ``leader_weight_`` are the master's weights of the limit and of
        Follow the Leader.  Cost per trial: the fixed-rate trial at the
        rate in use plus O(n k + k^3) and O(n ell + ell^2) on average
        (measured 2.1-2.3x the fixed rate at n = 400-4000, docs:
        adaptive_rates).  Setting ``eta`` or
        ``n_components`` mid-stream restarts the master and its two
        sketches at the next batch.  A number: the fixed-rate algorithm
        (> 0); the tuned value of WK eq. (3) is
        :func:`onlinepca_fast.metrics.tuned_learning_rate`.
        ``"adahedge"``: the rate learner above alone (the same ``D``),
        without the master and its other learners: the rate learner's bound
        only, at 1.1-1.2x the cost of a fixed rate at the same rate where
        ``"auto"`` costs 2.1-2.4x (k = 10, n = 400-10,000, docs:
        adaptive_rates, *Cost*); scale-free as ``"auto"``.
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
    %(draws_and_records)s
    %(reorthogonalize_every)s
    %(state_log_w)s

    Attributes
    ----------
    components_ : ndarray of shape (k, n)
        Orthonormal rows: the k eigenvectors of W with the smallest
        eigenvalues, i.e. the top-k directions of ``E[P]``.  With
        ``eta="auto"``: those of the learner the master weighs most (the
        limit's k directions, or the k leading ones of Follow the Leader's
        sketch, if it has k; else those of W); ``sample_projection`` draws
        the learner with the master's weights, then its projection.
        ``eigenvalues_``,
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
        ``Delta_T`` of the rate learner of ``eta="auto"`` or ``"adahedge"``
        (0 with a numeric eta).
    master_gap_ : float
        ``Delta^M`` of ``eta="auto"``'s master (0 with a numeric eta or
        ``"adahedge"``).
    limit_weight_ : float
        ``eta="auto"``: the master's weight of the limit learner for the
        next trial (0 with a numeric eta or ``"adahedge"``).
    leader_weight_ : float
        ``eta="auto"``: the master's weight of Follow the Leader on the
        sketch for the next trial (0 with a numeric eta or ``"adahedge"``).
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
        store_params(self, locals())

    def _params(self, n):
        p = super()._params(n)
        if p["state"] == "clustered" and self._share(p) == "past":
            raise ValueError("state='clustered' cannot mix in the past average "
                             "(share='past' changes the eigenbasis); use "
                             "state='dense' or another share")
        return p

    def _share(self, p):
        return p["share"]

    def _engine_options(self, p, n):
        rate = Rate(p["eta"])
        # "auto" and "adahedge" run the same rate learner (src/learner.c, rate_n)
        return dict(kind=_kernels.KIND_MEG, d=n - p["n_components"], **rate.fields(),
                    adaptive_d=rate.auto, **Mixing(p["alpha"]).fields(),
                    share=SHARES[self._share(p)], sampler=SAMPLERS[p["sampler"]])

    def _check_steps(self, X, amax, name, matrix, config, mean, rate):
        check_meg_steps(X, amax, name, rate)
        if rate.auto:  # scale-free: the range where it is exact
            check_norm_range(X, amax, name, type(self).__name__)

    def _short_path_norm2_min(self, config):
        return short_path_norm2_min(config.auto_rate)

    def _short_path_region(self, config, rate):
        box = meg_step_box(rate.bound, config.n)
        if rate.auto:
            box = min(box, norm_box(config.n))
        return -math.inf, math.inf, box, math.inf

    def _reorthogonalize_every(self, p):
        return p["reorthogonalize_every"] or 0

    master_gap_ = MasterMixin.master_gap_
    limit_weight_ = MasterMixin.limit_weight_
    leader_weight_ = MasterMixin.leader_weight_


@fill_doc
class OnlineAdaptivePCA(OnlinePCA):
    """Online adaptive PCA (YL Algorithm 4): :class:`OnlinePCA` with fixed share.

    The fixed-share step ``w <- alpha/n + (1-alpha) w`` on the eigenvalues of
    W, applied before capping (YL eq. 11b), bounds the regret on every
    interval (adaptive regret, YL eq. 3 and Theorem 3).

    Parameters
    ----------
    n_components : int
        Rank k, ``1 <= k < n_features``.
    eta : "auto", "adahedge" or float, default="auto"
        Learning rate.  ``"auto"``: the master of :class:`OnlinePCA` over
        the rate learner, its eta -> infinity limit and Follow the Leader on
        a sketch; with a constant
        alpha the rate learner's constant is ``D = d log(n/(d alpha))``
        (every eigenvalue of W is at least ``alpha/n``), which bounds its
        regret on every interval ``[r, s]`` by ``Delta_[r,s] + Delta_s (1 +
        (s - r + 1) log(1/(1-alpha)) / log(n/(d alpha)))`` and the static
        regret by ``Delta_T (1 + (log(n/d) + T log(1/(1-alpha))) /
        log(n/(d alpha)))`` (``Delta = mixability_gap_``; docs:
        adaptive_rates).  A number: YL Theorem 3 tunes it with
        :func:`onlinepca_fast.metrics.adaptive_parameters`.
        ``"adahedge"``: that rate learner alone (the same ``D = d log(n/(d
        alpha))`` and interval bound), without the master and its other
        learners; its cost: see :class:`OnlinePCA`.
    alpha : float or "auto", default=1e-5
        Fixed-share rate, ``0 <= alpha < 1`` (YL Sec. 6.1 uses 1e-5).
        ``"auto"``: ``alpha_t = 1/(t+1)^2``, with adaptive regret on every
        interval ``[r, s]`` at most ``Delta_s (2 + log(2 n r^2/d) /
        log(n/d))`` (measured no better than 1e-5 on real streams).
    %(draws_and_records)s
    %(reorthogonalize_every)s
    %(state_log_w)s

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
        store_params(self, locals())

    def _share(self, p):
        return "fixed"  # YL Algorithm 4 is OnlinePCA with fixed share
