"""The cumulative online PCA learners: WK Algorithm 6 (centered and
uncentered) and the Follow-the-Leader baseline, whose state is the
eigensystem of ``A = log W^0 - eta C^t`` (dense, or clustered: the
directions no instance has reached form one cluster, :mod:`._state`).

``explained_variance_`` is read off that state.  WK Algorithm 6 and Follow
the Leader keep the eigensystem of ``A = a0 I - eta C^t`` (``a0 =
log(1/n)``, or 0 and ``eta = 1`` for Follow the Leader), where ``C^t`` is the scatter of the rows seen so far about the
center (eq. 16).  So the covariance's eigenvalues are ``(a0 - lambda_i) /
eta``, in the order of ``components_``, and as scikit-learn's
``IncrementalPCA`` defines them:

- ``explained_variance_[i]``: the variance of the data seen so far along
  ``components_[i]``, i.e. the i-th largest eigenvalue of ``C^t / d``;
- ``explained_variance_ratio_[i]``: that over the total variance
  ``trace(C^t) / d``;

with ``d = t - 1`` (the sample variance, ``ddof=1``, as IncrementalPCA)
when centered by the running mean, ``d = c + t - 1`` for a center learned
with ``center_lr_inv = c > 0`` (eq. 15-16 are then the scatter of the rows
and of c phantom rows at ``mean_init``: the same formula over the c + t
rows), and ``d = t`` when uncentered (the mean square of ``(x - mean_)``
along the component: the variance about the fixed center).  A single row
(``d = 0``) has no spread: variances 0, ratios 0 (as for a total variance
of 0).

The other learners do not have these attributes: :class:`OnlinePCA` and
:class:`OnlineAdaptivePCA` keep ``log W``, the learning rate times the
losses so far, mixed and capped (WK Alg. 5, YL Alg. 4), not the data's
second moments, and :class:`OnlineKernelPCA` works in feature space.

The papers (WK) are cited in full in the README's references.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _kernels
from .._docs import fill_doc
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
    store_params,
)
from . import _aliases
from ._base import SAMPLERS, reads_state
from ._pca import _PCALearner, _reject_step, _step_limit, meg_step_box, row_norms
from ._rates import MasterMixin, Rate
from ._scale import check_norm_range, norm_box, short_path_norm2_min

__all__ = ["CenteredOnlinePCA", "FollowTheLeader", "EIGEN_SPAN", "LEADER_SPAN"]

#: The span the compiled loop keeps the eigenvalues of A within
#: (``OPF_EIGEN_FLOOR`` of ``src/logweights.h``): only a spread beyond it
#: (eta times ~1e18 times the smallest variance) floors a variance.
EIGEN_SPAN = 2.0 ** 60

#: Follow the Leader's span (``OPF_LOG_SPAN``): finiteness only, beyond any
#: covariance of the rows it accepts (``opf_cumulative_floor``).
LEADER_SPAN = 2.0 ** 1020


def _rates_of(config):
    """(eta or "auto", center_lr_inv, centered) of an engine configuration."""
    eta = "auto" if config.auto_rate else config.eta
    return (eta, config.center_lr_inv, config.centered)


class _Cumulative(_PCALearner):
    """WK Algorithm 6's state: the eigensystem of A = log W^0 - eta C^t,
    dense or clustered (``state``), from which ``explained_variance_`` is
    read (see the module doc)."""

    _state_leads = True

    _law = "cumulative"
    #: A's level at reset: log(1/n) (Follow the Leader: 0)
    _a0_is_zero = False

    def _a0(self, n):
        return 0.0 if self._a0_is_zero else -math.log(n)  # libm's log, as the C code

    def _share(self, p):
        return None  # no mixing: see CenteredOnlinePCA's Notes

    #: the floor of A below its largest entry (explained_variance_'s warning)
    _floor_span = EIGEN_SPAN

    @staticmethod
    def _scale_free(config):
        """eta="auto" and Follow the Leader: exact on the rows of ``_scale``."""
        return config.auto_rate or config.sampler == _kernels.SAMPLER_LEADER

    def _short_path_norm2_min(self, config):
        return short_path_norm2_min(self._scale_free(config))

    def _check_steps(self, X, amax, name, matrix, config, mean, rate):
        self._check_step_bound(X, amax, name, config, mean, rate)
        if self._scale_free(config):  # the range where it is exact
            check_norm_range(X, amax, name, type(self).__name__)

    def _check_step_bound(self, X, amax, name, config, mean, rate):
        """The steps ``eta f |y|^2`` (``y = x - m``, ``f <= 1``) and losses
        ``|y|^2`` must be at most :data:`MAX_STEP`.  For the learned center,
        ``m`` stays in the convex hull of the current center and the batch's
        rows (eq. 15 with ``c >= 0``), so ``|y| <= |x| + max(|m|, max |x_j|)``
        is checked, with the ``x_j`` before ``x``."""
        limit = _step_limit(rate.bound)
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
            _reject_step(name, i, bound[i], what, rate)

    def _short_path_region(self, config, rate):
        """The cheap test of :meth:`_check_steps` as a box on max |x_i|.

        Learned center: ``sqrt(n) (amax + max(|m|, amax)) <= limit`` holds
        for ``amax, max |m_i| <= limit / (2 sqrt(n))``, and stays so: each
        trial's center is a convex combination of the last one and the row,
        so ``max |m_i|`` never exceeds the box.  Fixed center: ``amax <=
        limit / sqrt(n) - max |m_i|``."""
        box = meg_step_box(rate.bound, config.n)
        am = float(np.abs(self._mean).max())
        box = box / 2 if config.centered else box - am * (1 + 1e-12)
        if am > box:
            box = -1.0  # no row is taken: the validating path decides
        elif self._scale_free(config):
            box = min(box, norm_box(config.n))
        return -math.inf, math.inf, box, math.inf

    def _reorthogonalize_every(self, p):
        return p["reorthogonalize_every"] or 0

    # -- explained_variance_: the rates of the stream since the last reset -----------
    # (eta, c, centered); a change (set_params mid-stream) leaves A a mix of rates
    def _reset(self, n, plan):
        super()._reset(n, plan)
        self._stat_rates = _rates_of(plan.config)

    def _run(self, X, plan):
        if _rates_of(plan.config) != self.__dict__.get("_stat_rates"):
            self._stat_rates = None  # A no longer gives C^t
        return super()._run(X, plan)

    def _scatter_spectrum(self):
        """(eigenvalues of C^t in the order of the learner's eigenvectors,
        number of cluster directions, trace of C^t, divisor d)."""
        self._check_fitted()
        rates = self.__dict__.get("_stat_rates")
        if rates is None:
            raise ValueError(
                f"{type(self).__name__}: explained_variance_ needs the rates of the "
                "stream since the last reset (eta, center_lr_inv, centered), which "
                "changed mid-stream; refit to use it")
        eta, c, centered = rates
        n = self.n_features_in_
        a0 = self._a0(n)
        lam, cluster, extra = self._state.spectrum()
        if cluster is None:
            cluster = a0
        present = ([float(lam[0]), float(lam[-1])] if lam.size else []) + (
            [cluster] if extra else [])
        top, low = max(present), min(present)
        if top - low >= self._floor_span * (1 - 1e-9):
            warnings.warn(
                f"{type(self).__name__}: eta times the spread of the covariance's "
                f"eigenvalues has reached 2**{round(math.log2(self._floor_span))}, where "
                "the state keeps its eigenvalues "
                "(see eigenvalues_): the largest variances are floored, "
                "explained_variance_ underestimates them", RuntimeWarning, stacklevel=4)
        if eta == "auto":
            # A = eta_t (K - C^t) with a level K that the step sizes decided:
            # the trace of C^t (kept by the compiled loop, rate[2]) fixes it
            eta, trace = float(self._rate[1]), float(self._rate[2])
            if not (np.isfinite(eta) and eta > 0.0) or trace <= 0.0:
                return np.zeros(lam.size), extra, 0.0, 0
            a0 = (eta * trace + float(np.sum(lam)) + extra * cluster) / n
        values = np.maximum((a0 - lam) / eta, 0.0)
        total = float(values.sum()) + extra * max((a0 - cluster) / eta, 0.0)
        t = int(self._t[0])
        d = (c + t - 1) if centered else t
        return values, extra, total, d

    @property
    @reads_state
    def explained_variance_(self) -> FloatArray:
        """Variance of the data seen so far along each of ``components_``:
        the k largest eigenvalues of the covariance ``C^t / d`` (see the
        module :mod:`onlinepca_fast.learners._cumulative`; as
        ``IncrementalPCA.explained_variance_`` when centered)."""
        values, extra, _, d = self._scatter_spectrum()
        k = self.n_components
        out = np.zeros(k)
        top = values[:k]
        out[:top.size] = top  # the rest: cluster directions, variance 0
        return out / d if d > 0 else np.zeros(k)

    @property
    @reads_state
    def explained_variance_ratio_(self) -> FloatArray:
        """``explained_variance_`` over the total variance ``trace(C^t) / d``
        (zeros while the total is 0)."""
        values, extra, total, d = self._scatter_spectrum()
        k = self.n_components
        out = np.zeros(k)
        top = values[:k]
        if d > 0 and total > 0 and math.isfinite(total):
            out[:top.size] = top / total
        return out

    singular_values_ = property(reads_state(_aliases.singular_values_.fget))
    noise_variance_ = property(reads_state(_aliases.noise_variance_.fget))


@fill_doc
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
    eta : "auto", "adahedge" or float, default="auto"
        Learning rate.  ``"auto"``: each trial plays one of three learners,
        drawn with the weights of a master AdaHedge (``D = log 3``) on their
        expected losses, all on the instances ``y = x - m^{t-1}``:

        - the rate learner: ``W^t = cap(exp(eta_t (log W^0 - C^t)))`` with
          the AdaHedge rate ``eta_t = D / Delta_{t-1}`` (follow the
          regularised leader: any ``eta_t`` is allowed; ``Delta`` uses the
          two-point bound on the mixability gap, ``mixability_gap_``); for
          ``centered=False`` its regret against every rank-k subspace is
          ``R_T <= 2 Delta_T`` (the bound of :class:`OnlinePCA`'s rate
          learner); with ``centered=True`` no bound is derived beyond WK's;
        - the eta -> infinity limit of the capped update and Follow the
          Leader on a Frequent Directions sketch of ``ell = min(n, max(4k, 24))``
          directions refreshed in batches, both of the scatter ``C^t``
          (exact Follow the Leader on the rows it absorbed for ``n <=
          max(4k, 24)``), as for :class:`OnlinePCA`.

        The loss is at most that of the best of the three plus ``2
        Delta^M`` (``master_gap_``), ``Delta^M <= sqrt(log 3 sum_t |y_t|^4
        / 4) + (2/3 log 3 + 1) max_t |y_t|^2``.  Scale-free (rows of norm
        0 or ``2**-480 .. 2**480``; others are refused, see
        ``learners._scale``).  Cost per
        trial: the fixed-rate trial plus O(n k + k^3) and O(n ell + ell^2)
        on average (docs: adaptive_rates).  A number: WK
        Alg. 6 with that rate (> 0).
        ``"adahedge"``: the rate learner alone, without the master and its
        other learners (the rate learner's bound only; scale-free as
        ``"auto"``).
    center_lr_inv : float, default=0.0
        ``eta~^{-1} >= 0``, the inverse learning rate of the center; 0 makes
        ``m^t`` the empirical mean of ``x^1..x^t`` (WK Corollary 9).
    mean_init : array_like of shape (n,) or None, default=None
        The initial center ``m^0``.  None: the first row (``y_1 = 0``: the
        first trial costs nothing and sets no rate; with ``center_lr_inv =
        0`` only trial 1 differs from ``m^0 = 0``, WK's choice, which
        ``mean_init=np.zeros(n)`` keeps).
    centered : bool, default=True
        False gives "the uncentered version of Algorithm 6" (WK Sec. 6.2,
        Fig. 4): step (15) is skipped, the center stays ``mean_init``
        (zeros by default) and (16) uses factor 1: ``C^t = sum y y^T``.
    %(draws_and_records)s
    %(reorthogonalize_every)s
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
    eta_, mixability_gap_ : float
        The rate learner's rate of the next trial and ``Delta_T`` (as for
        :class:`OnlinePCA`).
    master_gap_, limit_weight_, leader_weight_ : float
        ``eta="auto"``: ``Delta^M`` of the master and its weights of the
        limit and of Follow the Leader on the sketch (0 with a numeric eta).
        ``components_`` are those of the learner it weighs most.
    singular_values_ : ndarray of shape (n_components,)
        ``sqrt(explained_variance_ * d)``: the norms of the rows' centered
        coordinates on ``components_`` (as ``IncrementalPCA``).
    noise_variance_ : float
        Mean variance of the ``n - k`` other directions (as ``PCA``).
    n_components_, n_samples_seen_ : int
        ``n_components`` and ``n_trials_``, under IncrementalPCA's names.

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
        store_params(self, locals())

    def _engine_options(self, p, n):
        return dict(kind=_kernels.KIND_CUMULATIVE, d=n - p["n_components"],
                    **Rate(p["eta"]).fields(),
                    sampler=SAMPLERS[p["sampler"]], centered=p["centered"],
                    center_lr_inv=p["center_lr_inv"],
                    mean_first=bool(p["centered"]) and p["mean_init"] is None)

    master_gap_ = MasterMixin.master_gap_
    limit_weight_ = MasterMixin.limit_weight_
    leader_weight_ = MasterMixin.leader_weight_

    def _initial_mean(self, p, n):
        return np.zeros(n) if p["mean_init"] is None else np.array(p["mean_init"], dtype=float)


@fill_doc
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
    %(record_losses)s
    %(reorthogonalize_every)s
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
    singular_values_, noise_variance_, n_components_, n_samples_seen_
        As for :class:`CenteredOnlinePCA`.

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
        store_params(self, locals())

    _law = "leader"
    _a0_is_zero = True  # A = -C^t

    def _sampler_name(self):
        return "decomposition"  # never used: the projection is deterministic

    def _engine_options(self, p, n):
        return dict(kind=_kernels.KIND_CUMULATIVE, d=n - p["n_components"], eta=1.0,
                    sampler=_kernels.SAMPLER_LEADER, centered=p["centered"])
