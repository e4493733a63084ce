"""The cumulative online PCA learners: WK Algorithm 6 (centered and
uncentered) and the Follow-the-Leader baseline, whose state is the
eigensystem of ``A = log W^0 - eta C^t`` (dense, or on the capped structure
of ``_clustered``: the directions no instance has reached form one cluster).

References
----------
.. [WK] M. K. Warmuth and D. Kuzmin, "Randomized online PCA algorithms with
   regret bounds that are logarithmic in the dimension", JMLR 9, 2008.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _kernels
from .._typing import ArrayLike, FloatArray, Sampler, SeedLike, State
from .._validation import (
    ETA,
    N_COMPONENTS,
    NONNEGATIVE,
    REORTHOGONALIZE,
    SAMPLER,
    STATE,
    Boolean,
    RandomState,
    Vector,
    none_or,
)
from ..kernels import cap_log
from ._base import SAMPLERS, TrialLoopLearner, rate_options, reads_state
from ._clustered import MAX_DENSE, ClusteredState, refuse_dense
from ._explained import LEADER_SPAN, ExplainedVariance
from ._pca import _Projections, _reject_step, _step_limit, meg_step_box, row_norms
from ._scale import check_norm_range, norm_box, short_path_norm2_min

__all__ = ["CenteredOnlinePCA", "FollowTheLeader"]


class _Cumulative(ExplainedVariance, ClusteredState, _Projections, TrialLoopLearner):
    """WK Algorithm 6's state: the eigensystem of A = log W^0 - eta C^t,
    dense or clustered (``state``, see :class:`ClusteredState`), from which
    ``explained_variance_`` is read (see :mod:`._explained`)."""

    _cumulative = True

    @staticmethod
    def _scale_free(config):
        """eta="auto" and Follow the Leader: exact on the rows of ``_scale``."""
        return config.auto_rate or config.sampler == _kernels.SAMPLER_LEADER

    def _short_path_norm2_min(self, config):
        return short_path_norm2_min(self._scale_free(config))

    def _share(self, p):
        return None  # no mixing: see CenteredOnlinePCA's Notes

    def _check_steps(self, X, amax, name, matrix, config, mean):
        self._check_step_bound(X, amax, name, config, mean)
        if self._scale_free(config):  # the range where it is exact
            check_norm_range(X, amax, name, type(self).__name__)

    def _check_step_bound(self, X, amax, name, config, mean):
        """The steps ``eta f |y|^2`` (``y = x - m``, ``f <= 1``) and losses
        ``|y|^2`` must be at most :data:`MAX_STEP`.  For the learned center,
        ``m`` stays in the convex hull of the current center and the batch's
        rows (eq. 15 with ``c >= 0``), so ``|y| <= |x| + max(|m|, max |x_j|)``
        is checked, with the ``x_j`` before ``x``."""
        limit = _step_limit(config.eta)
        root_n = math.sqrt(X.shape[1])
        am = float(np.abs(mean).max())
        if config.centered:
            if root_n * (amax + max(am, amax)) <= limit:
                return
            norms = row_norms(X)
            # |m^{t-1}| <= max(|m|, |x_1|, ..., |x_{t-1}|)
            reach = np.maximum.accumulate(np.concatenate([row_norms(mean[np.newaxis]),
                                                          norms[:-1]]))
            bound, what = norms + reach, "(|x| + |mean|)"
        else:
            if root_n * (amax + am) <= limit:
                return
            with np.errstate(over="ignore"):
                bound, what = row_norms(X - mean), "|x - mean|"
        bad = np.flatnonzero(~(bound <= limit))
        if bad.size:
            i = int(bad[0])
            _reject_step(name, i, bound[i], what, config.eta)

    def _short_path_region(self, config):
        """The cheap test of :meth:`_check_steps` as a box on max |x_i|.

        Learned center: ``sqrt(n) (amax + max(|m|, amax)) <= limit`` holds
        for ``amax, max |m_i| <= limit / (2 sqrt(n))``, and stays so: each
        trial's center is a convex combination of the last one and the row,
        so ``max |m_i|`` never exceeds the box.  Fixed center: ``amax <=
        limit / sqrt(n) - max |m_i|``."""
        box = meg_step_box(config.eta, config.n)
        am = float(np.abs(self._mean).max())
        box = box / 2 if config.centered else box - am * (1 + 1e-12)
        if am > box:
            box = -1.0  # no row is taken: the validating path decides
        elif self._scale_free(config):
            box = min(box, norm_box(config.n))
        return -math.inf, math.inf, box, math.inf

    def _reorthogonalize_every(self, p):
        return p["reorthogonalize_every"] or 0


class CenteredOnlinePCA(_Cumulative):
    """Centered randomized online PCA (WK Algorithm 6).

    Learns a center ``m`` and a density matrix ``W`` together.  With
    ``y = x - m^{t-1}`` the trial costs ``||y - P y||^2``, then::

        m^t = m^{t-1} - (m^{t-1} - x) / (c + t)                       (15)
        C^t = C^{t-1} + (c + t - 1)/(c + t) y y^T                     (16)
        W^t = cap_{n-k}( exp(log W^0 - eta C^t) / tr(...) )           (14)

    with ``c = center_lr_inv``.  The eigensystem of ``log W^0 - eta C^t``
    is kept by one rank-one update per trial; capping is applied to its
    eigenvalues each trial (W is never stored).

    Parameters
    ----------
    n_components : int
        Rank k, ``1 <= k < n_features``.
    eta : "auto" or float, default="auto"
        Learning rate.  ``"auto"``: ``W^t = cap(exp(eta_t (log W^0 -
        C^t)))`` with the AdaHedge rate ``eta_t = D / Delta_{t-1}``
        (follow the regularised leader: any ``eta_t`` is allowed; ``Delta``
        uses the two-point bound on the mixability gap, see
        ``mixability_gap_``).  Scale-free (rows of norm 0 or ``2**-480 ..
        2**480``; others are refused, see ``learners._scale``); for
        ``centered=False`` the regret
        against every rank-k subspace is ``R_T <= 2 Delta_T`` (the bound of
        :class:`OnlinePCA`'s eta); with ``centered=True`` the same rate is
        used without a derived bound (docs: adaptive_rates).  A number: WK
        Alg. 6 with that rate (> 0).
    center_lr_inv : float, default=0.0
        ``eta~^{-1} >= 0``, the inverse learning rate of the center; 0 makes
        ``m^t`` the empirical mean of ``x^1..x^t`` (WK Corollary 9).
    mean_init : array_like of shape (n,) or None, default=None
        The initial center ``m^0`` (zeros if None).
    centered : bool, default=True
        False gives "the uncentered version of Algorithm 6" (WK Sec. 6.2,
        Fig. 4): step (15) is skipped, the center stays ``mean_init``
        (zeros by default) and (16) uses factor 1: ``C^t = sum y y^T``.
    sampler : {"decomposition", "systematic"}, default="decomposition"
        As for :class:`OnlinePCA`.
    random_state : None, int or numpy.random.Generator, default=None
        As for :class:`OnlinePCA`.
    record_losses : bool, default=True
        As for :class:`OnlinePCA`.
    reorthogonalize_every : int or None, default=10000
        As for :class:`OnlinePCA`.
    state : {"auto", "dense", "clustered"}, default="auto"
        How ``A = log W^0 - eta C^t`` is kept.  "clustered": m explicit
        eigenpairs plus one cluster, the directions no instance has reached
        (value ``-log n``): a trial costs O(n m + m^3) time and the state
        O(n m) memory, m <= t, instead of O(n^2) (a dense stream reaches
        m = n).  Expected losses agree with the dense state to rounding,
        draws too unless a corner splits the cluster (its directions are
        then drawn uniformly in it, as in :class:`OnlinePCA`).  "auto"
        (default): chosen by the number m of explicit directions, as for
        :class:`OnlinePCA` (clustered from the start from 40 features on,
        dense once m >= n / 2, n <= 10,000).

    Attributes
    ----------
    mean_ : ndarray of shape (n,)
        The center ``m^t``.
    eigenvalues_, eigenvectors_ : ndarray
        Eigensystem of ``log W^0 - eta C^t = -log(n) I - eta C^t``
        (ascending; not capped; in the clustered state the m explicit
        eigenpairs, the rest being ``cluster_value_``).  Exactly so unless an eigenvalue falls
        more than 2**60 below the largest (its weight is then 0 in float64
        either way): it is kept at that distance (``src/logweights.h``);
        and if the largest leaves the float64 range all are shifted by a
        constant.
    components_, density_, expected_losses_, realized_losses_, n_trials_
        As for :class:`OnlinePCA` (W is ``cap(exp(eigenvalues_))``).
    explained_variance_ : ndarray of shape (n_components,)
        Variance of the data seen so far along each of ``components_``, as
        ``IncrementalPCA`` defines it: the eigenvalues of the scatter
        ``C^t``, ``(-log(n) - eigenvalues_[:k]) / eta``, over ``t - 1``
        (centered by the running mean: the sample variance), ``c + t - 1``
        (``center_lr_inv = c > 0``: the rows and c phantom rows at
        ``mean_init``) or ``t`` (uncentered: about ``mean_``).  Exact to
        rounding while ``eta`` times the spread of the eigenvalues of
        ``C^t`` stays below 2**60 (the floor described above; a
        ``RuntimeWarning`` says when the state shows it reached) and
        ``eta``, ``center_lr_inv`` and ``centered`` are unchanged since the
        last reset (else ``ValueError``).
    explained_variance_ratio_ : ndarray of shape (n_components,)
        ``explained_variance_`` over the total variance ``trace(C^t) / d``.

    Notes
    -----
    There is no ``share`` option: Algorithm 6 recomputes ``W^t`` from
    ``W^0`` and ``C^t`` every trial, so anything mixed into ``W^t`` would
    not carry over to the next trial; WK Sec. 8 and YL define mixing for
    the trial-to-trial update of Algorithm 5 (:class:`OnlinePCA`).

    References
    ----------
    WK Algorithm 6, eqs. (14)-(16), Theorem 8, Corollary 9.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import CenteredOnlinePCA
    >>> rng = np.random.default_rng(0)
    >>> X = 5.0 + rng.normal(size=(300, 1)) @ rng.normal(size=(1, 6)) / 6
    >>> pca = CenteredOnlinePCA(n_components=1, random_state=0).fit(X)
    >>> bool(np.allclose(pca.mean_, X.mean(axis=0)))
    True
    """

    _constraints = {
        "n_components": N_COMPONENTS,
        "eta": ETA,
        "center_lr_inv": NONNEGATIVE,
        "mean_init": none_or(Vector(lambda context: context["n"])),
        "centered": Boolean(),
        "sampler": SAMPLER,
        "random_state": RandomState(),
        "record_losses": Boolean(),
        "reorthogonalize_every": REORTHOGONALIZE,
        "state": STATE,
    }

    def __init__(self, n_components: int, *, eta: float | str = "auto", center_lr_inv: float = 0.0,
                 mean_init: ArrayLike | None = None, centered: bool = True,
                 sampler: Sampler = "decomposition", random_state: SeedLike = None,
                 record_losses: bool = True, reorthogonalize_every: int | None = 10_000,
                 state: State = "auto") -> None:
        self.n_components = n_components
        self.eta = eta
        self.center_lr_inv = center_lr_inv
        self.mean_init = mean_init
        self.centered = centered
        self.sampler = sampler
        self.random_state = random_state
        self.record_losses = record_losses
        self.reorthogonalize_every = reorthogonalize_every
        self.state = state

    def _engine_options(self, p, n):
        return dict(kind=_kernels.KIND_CUMULATIVE, d=n - p["n_components"],
                    **rate_options(p["eta"]),
                    sampler=SAMPLERS[p["sampler"]], centered=p["centered"],
                    center_lr_inv=p["center_lr_inv"])

    def _initial_state(self, p, n):
        return np.full(n, -np.log(n)), np.eye(n), self._initial_mean(p, n)

    def _initial_mean(self, p, n):
        return np.zeros(n) if p["mean_init"] is None else np.array(p["mean_init"], dtype=float)

    def _weights(self):
        # cap_log is accurate at any level of lam
        return np.exp(cap_log(self._lam, self.n_features_in_ - self.n_components))


class FollowTheLeader(_Cumulative):
    """Follow the Leader: the top-k subspace of the covariance so far (WK Sec. 7).

    Deterministic baseline: at trial t it projects onto the k leading
    eigenvectors of ``C^{t-1}`` (``sum x x^T``, or the scatter around the
    running mean when ``centered``), ties broken by the order of the
    maintained eigensystem.  It is the limit ``eta -> inf`` of WK
    Algorithm 6 and uses the same rank-one machinery.  Expected and
    realized losses are equal.  Scale-free (``c X`` gives ``c^2`` the
    losses): exact on rows of norm 0 or ``2**-480 .. 2**480``; others are
    refused (see ``learners._scale``).

    Parameters
    ----------
    n_components : int
        Rank k, ``1 <= k < n_features``.
    centered : bool, default=False
        Center by the running mean (``m^0 = 0``; WK eq. 15 with
        ``center_lr_inv = 0``).
    record_losses : bool, default=True
        As for :class:`OnlinePCA`.
    reorthogonalize_every : int or None, default=10000
        As for :class:`OnlinePCA`.
    state : {"auto", "dense", "clustered"}, default="auto"
        As for :class:`CenteredOnlinePCA` (the cluster's value is 0).  In
        the clustered state, while fewer than k directions have been
        reached, the leading directions are completed by directions of the
        cluster chosen deterministically (unit vectors projected out of the
        explicit ones); the dense state completes them with whatever its
        eigenbasis holds, so the first realized losses may differ.

    Attributes
    ----------
    eigenvalues_, eigenvectors_ : ndarray
        Eigensystem of ``-C^t`` (ascending, so the leading directions of
        ``C^t`` come first), exact at every scale: no floor ties the
        leading variances (Follow the Leader has no exponential weights;
        the rows it accepts keep ``C^t`` below 2**1020, its finiteness
        floor, on any stream of fewer than 2**40 of them).
    components_, mean_, expected_losses_, realized_losses_, n_trials_
        As for :class:`OnlinePCA`.
    explained_variance_, explained_variance_ratio_ : ndarray of shape (n_components,)
        As for :class:`CenteredOnlinePCA`: the eigenvalues of ``C^t`` are
        ``-eigenvalues_`` (eta = 1, exact), over ``t - 1`` (centered) or
        ``t``.

    References
    ----------
    WK Section 7 (lower bounds for FL) and Section 8, Fig. 4.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import FollowTheLeader
    >>> X = np.random.default_rng(0).normal(size=(100, 3)) * [3.0, 1.0, 0.1]
    >>> ftl = FollowTheLeader(n_components=1).fit(X)
    >>> np.round(np.abs(ftl.components_), 1)
    array([[1., 0., 0.]])
    """

    _randomized = False
    _floor_span = LEADER_SPAN  # no exponential weights: finiteness only
    _constraints = {
        "n_components": N_COMPONENTS,
        "centered": Boolean(),
        "record_losses": Boolean(),
        "reorthogonalize_every": REORTHOGONALIZE,
        "state": STATE,
    }

    def __init__(self, n_components: int, *, centered: bool = False, record_losses: bool = True,
                 reorthogonalize_every: int | None = 10_000, state: State = "auto") -> None:
        self.n_components = n_components
        self.centered = centered
        self.record_losses = record_losses
        self.reorthogonalize_every = reorthogonalize_every
        self.state = state

    def _engine_options(self, p, n):
        return dict(kind=_kernels.KIND_CUMULATIVE, d=n - p["n_components"], eta=1.0,
                    sampler=_kernels.SAMPLER_LEADER, centered=p["centered"])

    def _cluster_init(self, n):
        return 0.0  # A = -C^t

    def _initial_state(self, p, n):
        return np.zeros(n), np.eye(n), np.zeros(n)

    def _initial_mean(self, p, n):
        return np.zeros(n)

    def _weights(self):
        n, k = self.n_features_in_, self.n_components
        w = np.zeros(n)
        w[k:] = 1.0 / (n - k)
        return w

    @reads_state
    def sample_projection(self, random_state: SeedLike = None) -> FloatArray:
        """The projection onto ``components_`` (deterministic).

        Parameters
        ----------
        random_state : None, int or Generator, default=None
            Ignored (Follow the Leader does not randomise).

        Returns
        -------
        P : ndarray of shape (n, n)
            ``components_.T @ components_``.
        """
        self._check_fitted()
        refuse_dense(self.n_features_in_, "sample_projection()", MAX_DENSE)
        V = self._kept_basis()
        return V @ V.T
