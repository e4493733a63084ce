"""Online kernel PCA (Kuzmin & Warmuth, ICML 2007, Algorithm 6).

:class:`OnlineKernelPCA` keeps the eigensystem of the kernel matrix of all
past instances, grown by one bordered (arrowhead) update per trial in
compiled code (``src/bordered_update.c``, ``src/kernel_pca.c``), and draws
its rank-r projection from the capped softmin of the kernel-matrix
eigenvalues.

References
----------
.. [KW] D. Kuzmin and M. K. Warmuth, "Online kernel PCA with entropic matrix
   updates", ICML 2007.
.. [WK] M. K. Warmuth and D. Kuzmin, "Randomized online PCA algorithms with
   regret bounds that are logarithmic in the dimension", JMLR 9, 2008.
"""

from __future__ import annotations

import sys
import warnings
from typing import Literal

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin

from .. import _kernels
from .._typing import ArrayLike, FloatArray, KernelLike, Sampler, SeedLike
from .._validation import (
    ETA,
    POSITIVE,
    POSITIVE_INT,
    SAMPLER,
    Boolean,
    Interval,
    IsCallable,
    OneOf,
    Options,
    RandomState,
    as_generator,
    none_or,
)
from ..kernels import cap_log, null_space_tol
from ._base import SAMPLERS, OnlineLearner, reads_state
from ._batch import run_batch
from ._kernel_checks import (
    _check_bounded_values,
    _check_kernel_values,
    _check_psd,
    _check_residuals,
    _check_rows,
)
from ._rates import MasterMixin, RatesMixin, rate_options
from ._sparse import is_sparse, map_sparse, row_chunks

__all__ = ["OnlineKernelPCA"]

_MAX_COMPONENTS = sys.maxsize >> 2

#: Default ``budget``: the exact learner's instances before the bounded mode.
BUDGET = 1000
#: Default ``map_size``: the dimension of the bounded mode's feature space.
MAP_SIZE = 64
#: ``gamma="scale"`` is computed from the first this many rows of the first batch.
SCALE_ROWS = 100
# kernel values computed at a time in the bounded mode (~16 MB), and rows of
# a callable kernel's diagonal per call
_GRAM_ENTRIES = 1 << 21
_DIAGONAL_ROWS = 256


class OnlineKernelPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, OnlineLearner):
    """Online kernel PCA with a capped softmin of the kernel matrix (KW Alg. 6).

    At trial t the learner holds the kernel matrix ``K`` of the ``m = t - 1``
    past instances, ``K = U diag(lambda) U^T``.  With ``D = m - r``
    (``r = n_components``) it

    1. transforms the eigenvalues into ``lambdabar = cap_D(exp(-eta lambda)
       / Z)`` (softmin, then capping at ``1/D``; computed in the log domain
       by :func:`~onlinepca_fast.kernels.cap_log`, so large kernel
       eigenvalues -- KW Sec. 5's overflow -- are harmless and no weight
       underflows before capping);
    2. draws a corner of ``D`` eigenvectors from ``lambdabar`` (WK Alg. 2, or
       systematic sampling) and projects on the ``r`` others:
       ``P~ = U_r Lambda_r^-1 U_r^T``;
    3. receives ``x``, evaluates ``y = (k(x_i, x))_i`` and ``k(x, x)``, and
       incurs the approximation error ``k(x, x) - y^T P~ y`` (realized) and
       ``k(x, x) - y^T W~ y`` (expected), ``W~ = U (I - D
       diag(lambdabar)) Lambda^-1 U^T``;
    4. grows the eigensystem by the new row and column ``[y; k(x, x)]``: in
       the basis ``blockdiag(U, 1)`` the grown matrix is the arrowhead
       ``[[diag(lambda), z], [z^T, k(x, x)]]``, ``z = U^T y``, whose
       non-deflated part is solved by one secular equation (Gu-Eisenstat,
       Loewner eigenvectors) and one matrix product with ``U``.  ``K`` is
       never re-diagonalised.

    Parameters
    ----------
    n_components : int
        Rank r of the projection in feature space, ``r >= 1``.
    kernel : {"linear", "poly", "rbf"} or callable, default="rbf"
        ``"linear"``: ``<x, y>``; ``"poly"``: ``(gamma <x, y> + coef0) **
        degree``; ``"rbf"``: ``exp(-gamma |x - y|^2)`` (scikit-learn's
        names and formulas).  A callable ``kernel(X, Y)`` must return the
        ``(len(X), len(Y))`` Gram matrix of a symmetric positive
        semi-definite kernel; it is called once per batch with the new rows
        as ``X`` and all instances so far (the new rows included) as ``Y``.
        A batch whose Gram rows make the kernel matrix indefinite beyond
        rounding (an eigenvalue below ``-1e-6`` times its scale, or a
        negative ``k(x, x)``) raises ``ValueError`` and changes nothing.
        KW's Sec. 5 kernel ``(x . y)^2`` is ``kernel="poly", degree=2,
        gamma=1, coef0=0``.
    eta : float or "auto", default="auto"
        Learning rate.  ``"auto"``: the AdaHedge rate ``eta_t = r /
        Delta_{t-1}`` in feature space (see Notes), which needs neither the
        horizon, nor the loss of the best subspace, nor the scale of the
        kernel, under a master AdaHedge (``D = log 2``) that plays, each
        trial, either that learner or Follow the Leader (its eta -> infinity
        limit: the projection onto the r leading eigenvectors of K); a
        number (> 0) runs KW Alg. 6 at that rate (KW eq. (6) gives the
        tuned value).
    degree : int, default=3
        Degree of the polynomial kernel (>= 1).
    gamma : float or None, default=None
        Kernel coefficient of "poly" and "rbf" (> 0); None means
        ``1 / n_features``.
    coef0 : float, default=1.0
        Independent term of the polynomial kernel.
    sampler : {"decomposition", "systematic"}, default="decomposition"
        How the corner is drawn, see
        :func:`onlinepca_fast.kernels.sample_corner`.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the draws.  Every trial draws exactly one uniform number
        (``rng.random()``) before its update, also the deterministic first
        trials, so that the stream of draws does not depend on r.
    record_losses : bool, default=True
        Keep the per-trial losses.

    Attributes
    ----------
    eigenvalues_ : ndarray of shape (m,)
        Ascending eigenvalues of the kernel matrix of the ``m`` instances
        seen (the maintained eigensystem, for monitoring accuracy).
    eigenvectors_ : ndarray of shape (m, m)
        Orthonormal eigenvectors (columns) matching ``eigenvalues_``.
    weights_ : ndarray of shape (m,) or None
        ``lambdabar`` for the next trial (None while ``m <= r``).
    X_fit_ : ndarray of shape (m, n_features)
        The instances seen.
    expected_losses_, realized_losses_ : ndarray of shape (n_trials,)
        Expected and realized approximation errors in feature space.
    n_features_in_, n_trials_ : int
    eta_ : float
        The rate of the next trial: ``eta``, or with ``eta="auto"``
        ``r / mixability_gap_`` (``inf`` while every gap is 0).
    mixability_gap_ : float
        ``eta="auto"``: ``Delta_T``, the cumulative mixability gap of the
        rate learner, which bounds its regret (Notes); 0 with a numeric eta.
    master_gap_ : float
        ``eta="auto"``: the master's ``Delta^M``; 0 with a numeric eta.
    limit_weight_ : float
        ``eta="auto"``: the master's weight of Follow the Leader for the
        next trial; 0 with a numeric eta.
    n_eigh_fallbacks_ : int
        Trials whose eigen-update failed and was replaced by
        ``numpy.linalg.eigh`` of the kernel matrix (see Notes); 0 in
        practice.

    Notes
    -----
    **First trials.**  KW start at ``t = r + 1`` with ``x^1..x^r`` "given",
    and at ``t = r + 1`` the corner size ``D = t - 1 - r`` is 0.  Here every
    instance is a trial.  While ``D <= 0`` (``t - 1 <= r``) there are at most
    r eigenvectors to choose from and all are taken: the hypothesis is the
    projection onto the span of all past instances (rank ``t - 1 <= r``,
    deterministic), and expected = realized = ``k(x, x) - y^T K^+ y``
    (``k(x, x)`` at ``t = 1``).  This is the ``D -> 0`` limit of Alg. 6
    (``W~ = K^+`` at ``D = 0``).  These trials consume their uniform like
    any other.

    **Zero eigenvalues.**  A kernel matrix of rank ``rho < m`` (e.g. the
    linear kernel on ``n``-dimensional data has ``rho <= n``) has ``m -
    rho`` zero eigenvalues, computed as rounding noise, and ``Lambda^-1``
    blows up there.  In exact arithmetic ``y = X^T phi(x)`` lies in the
    range of K, so ``u_i^T y = 0`` on the null space and its terms of
    ``y^T W~ y`` and ``y^T P~ y`` are ``0/0``; their meaning is 0 (the
    feature-space eigenvector ``X u_i / sqrt(lambda_i)`` does not exist:
    projecting onto it projects onto nothing).  So eigenvalues with
    ``|lambda| <= m * eps * max|lambda|`` (``numpy.linalg.matrix_rank``'s
    threshold, see :func:`null_space_tol`) are taken as exactly 0: their
    terms are dropped and their softmin weight is ``exp(0)``.  They then
    have the largest weight and are capped whenever the cap binds, and a
    capped direction contributes exactly 0 to the expected error
    (``1 - D lambdabar_i`` is computed as ``-expm1(nu_i + log D)``, exactly 0
    at the cap).  Positive eigenvalues below the threshold are below the
    accuracy of any computed eigensystem of K (its backward error is a few
    ``eps |K|``).

    **Linear kernel and KW footnote 2.**  With ``kernel="linear"`` the
    feature space is ``R^N``, ``N = n_features``, and KW update (2) is
    ``W^t = cap_{N-r}(exp(-eta C^t) / Z)``, ``C^t = sum_{s<t} x_s x_s^T``:
    :class:`~onlinepca_fast.CenteredOnlinePCA` with ``centered=False``
    (the uncentered WK Alg. 6 from ``W^0 = I/N``).  Let ``a_i =
    exp(-eta lambda_i)`` over the ``rho`` non-zero eigenvalues of ``K^t``
    (= those of ``C^t``) and ``S^t = sum_i (1 - a_i) = tr(I - exp(-eta
    C^t))``.  Both cappings have the form ``(cap size) * weight_i = min(1,
    s a_i)`` with a zero-eigenvalue direction weighted ``min(1, s)``.

    - If ``S^t >= r``, both solve ``sum_i min(1, s a_i) = rho - r`` with
      ``s >= 1``: every zero-eigenvalue direction -- the ``N - rho`` of
      ``C^t`` and the ``t - 1 - rho`` of ``K^t`` -- is at the cap, the
      data directions get the same weights, and the expected losses are
      equal, whether ``t - 1 < N`` or ``t - 1 >= N``.  Footnote 2 ("the two
      types of capping have the same effect") holds exactly in this case.
    - If ``S^t < r`` the cap does not bind on the zero-eigenvalue
      directions.  The linear learner gives each of the ``N - rho`` null
      directions of ``C^t`` the weight ``s < 1`` with ``(N - rho) s +
      sum_i min(1, s a_i) = N - r``: it sometimes projects onto directions
      no instance has touched.  The kernel learner solves ``(t - 1 - rho)
      s + sum_i min(1, s a_i) = t - 1 - r`` instead; its hypothesis lies in
      the span of the past instances (the null directions of ``C^t`` are
      never projected onto, weight 1) and the null directions of ``K^t``,
      which have no feature-space counterpart, absorb weight ``s`` each.
      The two expected losses then differ, unless ``rho = N = t - 1``.
      Since ``1 - e^-x <= x``, ``S^t <= eta tr(K^t)``: this is the case at
      least while ``eta sum_{s<t} |x_s|^2 < r`` (and always while
      ``t - 1 <= r``, where the kernel learner is deterministic, see above).

    **eta="auto"** (docs/adaptive_rates.md, "OnlineKernelPCA").  The
    learner is follow-the-regularised-leader (KW update (2)): its state is
    the eigensystem of K, independent of the rate, and trial t simply uses
    ``eta_t = r / Delta_{t-1}``, ``Delta_t = delta_1 + ... + delta_t``.  The
    gap of a trial with ``D >= 1`` is ``delta_t = h_t (1 - (1 - e^-x) /
    x)``, ``x = eta_t k(x, x)``, ``h_t`` its expected loss: the limit, as the
    feature dimension N grows, of the two-point gap of the N-dimensional
    learner (and at least that gap for every N); ``r`` is the supremum over
    N of the comparator's entropy term ``(N - r) log(N / (N - r))``.  The
    first trials (``D <= 0``, deterministic) add their whole loss.  Then
    ``R_T <= 2 Delta_T <= 2 sqrt(r sum_t h_t k(x_t, x_t)) + 2 (r + 2)
    max_t k(x_t, x_t)`` for any kernel, finite or not (proved where the
    learner is update (2) in feature space: after the first trials wherever
    the cap binds on the null space, ``S^t >= r`` in "Linear kernel and KW
    footnote 2" above, whose argument holds in any feature space; checked
    numerically on the other trials).  Scaling the kernel by ``c > 0`` scales every loss and gap by
    ``c`` and the rate by ``1/c``: the weights are unchanged.  The rate is
    limited to ``2**1000 / max|lambda|``.  The master plays the learner
    with its weight (the trial's uniform, rescaled, then draws its corner)
    and Follow the Leader otherwise: the loss is at most the better one's
    plus ``2 Delta^M <= 2 sqrt(log 2 sum_t k(x_t, x_t)^2 / 4) + (4/3 log 2 +
    2) max_t k(x_t, x_t)`` (``master_gap_``), so the bound above holds up
    to that term, and streams where the best rate is infinite (the
    digits, the image patches) get Follow the Leader's loss.  ``transform``
    projects on the r leading eigenvectors of K, Follow the Leader's
    hypothesis.

    **Numerics.**  KW Sec. 5 note that large feature norms make the kernel
    eigenvalues, and ``exp(-eta lambda)``, overflow; in the log domain they
    do not, but ``eta lambda`` of hundreds makes the softmin a hard top-r
    choice (Follow the Leader): with a numeric eta, scale the data (or
    ``gamma``) so that ``k(x, x) <= 1``, as KW's bound assumes, and tune
    ``eta`` (KW eq. 6); ``eta="auto"`` needs neither.
    The remaining-mass underflow of KW's capping is handled by ``cap_log``.
    A batch is rejected, before any state change, with a ``ValueError``
    naming the row of ``X``, if a row has ``|x|^2 > 2**1020`` or a kernel
    value exceeds ``min(2**500, 2**1020 / max(1, eta)) / t`` with ``t`` the
    number of instances so far (the eigenvalues of the kernel matrix then
    stay below ``2**500``, their squares and ``eta lambda`` finite): no
    finite input yields a NaN state.

    **Cost.**  The kernel is evaluated once per batch (one call of a
    callable kernel), between the new rows and all instances so far, which
    takes ``len(X) * (m + len(X))`` doubles; then the whole batch runs in
    compiled code with the GIL released.  A trial with ``m`` past
    instances costs O(m^2) (GEMVs, deflation, gathers) plus one GEMM of
    the ``m x k`` non-deflated eigenvectors by the ``k x (k + 1)`` secular
    eigenvectors: ``k`` is about ``rho + 1`` for a kernel of rank ``rho``
    (linear: ``n_features``; ``(x . y)^2``: ``n(n+1)/2``), but up to all
    ``m`` for a numerically full-rank kernel such as "rbf", where a trial
    is O(m^3) like a fresh ``eigh``, but one GEMM (measured about 5x faster
    than a reference trial, which calls ``eigh``, at ``m = 1000``; about 9x
    at ``m = 2000``).
    Memory: about ``3 c^2`` doubles for a capacity ``c >= m`` (the
    eigenvectors and the bordered update's workspace; ``c`` grows by half
    when needed, and ``fit`` sizes it exactly): ``t`` instances need about
    ``24 t^2`` bytes -- 2.4 GB at ``t = 10,000``, 240 GB at ``100,000``.  A
    batch whose growth cannot be allocated is refused up front with a
    ``MemoryError`` giving the figure, and nothing changes.

    No bounded-memory option (a window of the last instances, removed by
    downdates) is provided: it would change the algorithm -- ``C^t`` would
    be a windowed sum, a different update than KW (2), with no regret bound
    from KW Theorem 1 against the best fixed subspace.

    If a bordered update fails (its root finder and both of its fallbacks
    failing -- not observed), the eigensystem is
    recomputed by ``numpy.linalg.eigh`` of the kernel matrix of the
    stored instances and ``n_eigh_fallbacks_`` counts it.

    References
    ----------
    KW Algorithms 2 and 6, update (2), footnote 2, Sec. 5; WK Algorithm 6;
    de Rooij, van Erven, Grunwald and Koolen, JMLR 15 (2014) (AdaHedge).

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import OnlineKernelPCA
    >>> from onlinepca_fast.datasets import noisy_cone
    >>> X = noisy_cone(200, embedding="padded", random_state=0)
    >>> kpca = OnlineKernelPCA(5, kernel="poly", degree=2, gamma=1.0, coef0=0.0,
    ...                        random_state=0).fit(X)
    >>> kpca.eigenvalues_.shape
    (200,)
    >>> bool(kpca.expected_losses_[-50:].mean() < kpca.expected_losses_[:50].mean())
    True
    """

    _constraints = {
        "n_components": Interval("int", 1, _MAX_COMPONENTS),
        "kernel": OneOf(Options("linear", "poly", "rbf"), IsCallable()),
        "eta": ETA,
        "degree": Interval("int", 1, None),
        "gamma": OneOf(Options("scale", "auto", None), POSITIVE),
        "coef0": Interval("real"),
        "budget": none_or(POSITIVE_INT),
        "map_size": POSITIVE_INT,
        "sampler": SAMPLER,
        "random_state": RandomState(),
        "record_losses": Boolean(),
    }

    def __init__(self, n_components: int, *, kernel: KernelLike = "rbf",
                 eta: float | Literal["auto"] = "auto",
                 degree: int = 3, gamma: float | Literal["scale", "auto"] | None = "scale",
                 coef0: float = 1.0, budget: int | None = BUDGET, map_size: int = MAP_SIZE,
                 sampler: Sampler = "decomposition", random_state: SeedLike = None,
                 record_losses: bool = True) -> None:
        self.n_components = n_components
        self.kernel = kernel
        self.eta = eta
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.budget = budget
        self.map_size = map_size
        self.sampler = sampler
        self.random_state = random_state
        self.record_losses = record_losses

    # -- hyper-parameters --------------------------------------------------
    def _config(self, n):
        """The checked hyper-parameters, ``gamma`` resolved: the value fixed
        at the last reset (``gamma_``)."""
        p = self._params(n)
        p["gamma"] = self.__dict__.get("_gamma")
        return p

    def _resolve_gamma(self, X):
        """The value of ``gamma`` for a reset on the batch X (checked)."""
        gamma = self.gamma
        if gamma is None:
            warnings.warn("gamma=None is deprecated: it means 1 / n_features, which "
                          "depends on the scale of the data; pass gamma='auto' for that "
                          "value, or leave the default 'scale'", DeprecationWarning,
                          stacklevel=5)
            gamma = "auto"
        if gamma == "auto":
            return 1.0 / X.shape[1]
        if gamma == "scale":
            return _scale_gamma(X)
        return float(gamma)

    @staticmethod
    def _kernel_key(p):
        """The hyper-parameters the kernel values depend on."""
        kernel = p["kernel"]
        if kernel == "poly":
            return (kernel, p["degree"], p["gamma"], p["coef0"])
        if kernel == "rbf":
            return (kernel, p["gamma"])
        return (kernel,)

    def _key_of_params(self):
        """:meth:`_kernel_key` of the hyper-parameters as set (gamma unresolved)."""
        return self._kernel_key({"kernel": self.kernel, "degree": self.degree,
                                 "gamma": self.gamma, "coef0": self.coef0})

    @property
    def _n_features_out(self):
        self._check_fitted()
        return self.n_components

    # -- the kernel --------------------------------------------------------
    @staticmethod
    def _gram(X, Y, p, inner=None):
        """Gram matrix k(X, Y) of shape (len(X), len(Y)), validated.

        `inner(X, Y)`: the inner products of a built-in kernel
        (:func:`_inner_products` unless given)."""
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
                G = _builtin_gram(X, Y, p, inner or _inner_products)
        if not np.isfinite(G).all():
            i = int(np.flatnonzero(~np.isfinite(G).all(axis=1))[0])
            raise ValueError(f"X row {i}: the kernel returned NaN or infinite values"
                             + (" (nothing was changed)" if callable(kernel) else
                                " (scale the data, gamma or coef0 down; nothing was "
                                "changed)"))
        return G

    def _diagonal(self, X, p):
        """``k(x, x)`` of each row of X (the bounded mode; validated)."""
        kernel = p["kernel"]
        if not callable(kernel):
            with np.errstate(over="ignore", invalid="ignore"):
                d = _builtin_diagonal(X, p)
        else:
            d = np.empty(X.shape[0])
            for a in range(0, X.shape[0], _DIAGONAL_ROWS):
                b = min(X.shape[0], a + _DIAGONAL_ROWS)
                d[a:b] = np.diagonal(self._gram(X[a:b], X[a:b], p))
        if not np.isfinite(d).all():
            i = int(np.flatnonzero(~np.isfinite(d))[0])
            raise ValueError(f"X row {i}: the kernel returned NaN or infinite values"
                             " (nothing was changed)")
        return d

    # -- the trial protocol --------------------------------------------------
    def _plan(self, X, matrix, amax, name, reset):
        """Checked hyper-parameters and the kernel values of the batch, before
        any state change: ``(p, G, n_exact, bounded)`` with G the kernel block
        of the first ``n_exact`` rows (the exact learner's trials) and
        `bounded` the plan of the rest (:meth:`_plan_bounded`), or None."""
        p = self._config(X.shape[1])
        if reset:
            as_generator(self.random_state)  # checked before the reset uses it
            p["gamma"] = self._resolve_gamma(X)
        else:
            self._check_kernel_unchanged(p)
        _check_rows(X, name)
        T = X.shape[0]
        m0 = 0 if reset else int(self._m[0])
        switched = not reset and self._switched()
        budget = p["budget"]
        n_exact = 0 if switched else T if budget is None else min(T, max(budget - m0, 0))
        past = X[:0] if reset else self._X[:m0]
        Xe = X[:n_exact]
        G = self._gram(Xe, np.concatenate([past, Xe]), p)
        eta = rate_options(p["eta"])["eta"]
        _check_kernel_values(G, name, eta)
        if callable(p["kernel"]) and n_exact:  # the built-in kernels are PSD by construction
            evals, q = ((np.empty(0), np.empty((0, 0))) if reset else
                        (self._evals[:m0], self._q[:m0, :m0]))
            _check_psd(G, evals, q, name)
        bounded = None
        if n_exact < T:
            count = 0 if reset else self._count()
            bounded = self._plan_bounded(X[n_exact:], np.concatenate([past, Xe]), G, p,
                                         name, n_exact, count + T, eta, reset)
        return p, G, n_exact, bounded

    def _plan_bounded(self, X, landmarks, G, p, name, offset, t_end, eta, reset):
        """The bounded mode's rows X (``offset`` rows into the batch): their
        feature vectors and kernel diagonals, checked.

        Already switched: ``(Phi, kappa)``.  Switching within this batch (the
        map is made from the eigensystem after the exact rows): ``(None,
        kappa)``, after checking the kernel values with the landmarks (and,
        for a callable kernel, its positive semi-definiteness with the map
        computed here by ``eigh``, which the switch's agrees with to
        rounding); the run maps the rows after the switch.
        """
        kappa = self._diagonal(X, p)
        switched = not reset and self._switched()
        if switched:
            M = self._fmap
        else:
            M, scale = self._plan_map(landmarks, G, p, reset)
        Phi = np.empty((X.shape[0], M.shape[1]))
        khat = np.empty(X.shape[0])
        LT = np.ascontiguousarray(landmarks.T)
        step = max(1, _GRAM_ENTRIES // max(1, landmarks.shape[0]))
        for a in range(0, X.shape[0], step):
            b = min(X.shape[0], a + step)
            K = self._gram(X[a:b], landmarks, p, inner=_row_inner(LT))
            _check_bounded_values(K, kappa[a:b], name, offset + a, t_end, eta)
            _kernels.kpca_map(M, K, Phi[a:b], khat[a:b])
        if callable(p["kernel"]):
            if switched:
                scale = max(float(np.abs(kappa).max(initial=0.0)),
                            float(self._fevals.max(initial=0.0)))
            _check_residuals(kappa, khat, scale, name, offset)
        return (Phi if switched else None), kappa

    def _plan_map(self, landmarks, G, p, reset):
        """For a batch that switches: the map of the switch, computed by
        ``eigh`` of the landmarks' kernel matrix (callable kernels, to check
        the rows after the switch), or a map of the right shape (built-in
        kernels: nothing to check with it); and the scale of the check."""
        nl = landmarks.shape[0]
        if not callable(p["kernel"]):
            return np.zeros((nl, 1)), 0.0
        m0 = nl - G.shape[0]
        K = np.empty((nl, nl))
        if m0:
            lam0, q0 = self._evals[:m0], self._q[:m0, :m0]
            K[:m0, :m0] = (q0 * lam0) @ q0.T
        K[m0:, :] = G
        K[:m0, m0:] = G[:, :m0].T
        K = np.tril(K) + np.tril(K, -1).T  # the entries the trials use
        lam, U = np.linalg.eigh(K)
        M, _, _ = _nystroem_map(lam, U, p["map_size"])
        return M, float(max(np.abs(G).max(initial=0.0), lam.max(initial=0.0)))

    def _reset(self, n, plan):
        p = plan[0]
        self._gamma = p["gamma"]
        self._kernel_params = self._key_of_params()  # gamma as set ("scale" ...)
        self._X = np.empty((0, n))
        self._evals = np.empty(0)
        self._q = np.empty((0, 0))
        self._m = np.zeros(1, dtype=np.intp)
        self._t = np.zeros(1, dtype=np.intp)
        # eta="auto" (src/adaptive_rate.h): [cumulative mixability gap, rate, 0]
        self._rate = np.array([0.0, np.inf, 0.0])
        # eta="auto": the master over the learner and Follow the Leader (src/limit.h)
        self._master = _kernels.master_state() if p["eta"] == "auto" else None
        # the bounded mode (None until the switch): see _switch
        self._fmap = None
        self._start_records()
        self._rng = as_generator(self.random_state)
        self.n_eigh_fallbacks_ = 0
        self._engine = None
        self._engine_key = None
        self.__dict__.pop("_pace", None)

    def _check_kernel_unchanged(self, p):
        if self._key_of_params() != self._kernel_params:
            raise ValueError("the kernel parameters (kernel, degree, gamma, coef0) changed "
                             "since the learner was reset; the kernel matrix of the past "
                             "instances would be inconsistent: call fit to restart")

    def _switched(self):
        return self.__dict__.get("_fmap") is not None

    def _count(self):
        """Trials done since the reset: the instances stored, plus the
        bounded mode's trials."""
        return int(self._m[0]) + (int(self._ft[0]) if self._switched() else 0)

    def _ensure_capacity(self, need, p):
        """Grow the buffers (and the engine) to hold `need` instances: all
        allocated before any is installed, so a MemoryError changes nothing."""
        cap = self._q.shape[0]
        if need <= cap:
            return
        new = need if cap == 0 else max(need, cap + cap // 2, 16)
        if p["budget"] is not None:
            new = max(need, min(new, p["budget"]))  # never beyond the budget
        m = int(self._m[0])
        try:
            X = np.empty((new, self.n_features_in_))
            evals = np.empty(new)
            q = np.empty((new, new))
            engine, key = self._new_engine(p, evals, q)
        except MemoryError:
            gib = _memory_bytes(new, self.n_features_in_) / 2 ** 30
            raise MemoryError(
                f"OnlineKernelPCA: {need} instances need room for {new} (it grows by "
                f"half), about {gib:.3g} GiB (3 c^2 + c n doubles), which could not be "
                "allocated; nothing was changed") from None
        X[:m] = self._X[:m]
        evals[:m] = self._evals[:m]
        q[:m, :m] = self._q[:m, :m]
        self._X, self._evals, self._q, self._engine, self._engine_key = (
            X, evals, q, engine, key)

    def _new_engine(self, p, evals, q):
        key = (q.shape[0], p["n_components"], p["eta"], p["sampler"])
        engine = _kernels.KernelPCAEngine(
            r=p["n_components"], sampler=SAMPLERS[p["sampler"]], evals=evals, q=q,
            m=self._m, rate=self._rate,
            master=self.__dict__.get("_master") if p["eta"] == "auto" else None,
            **rate_options(p["eta"]))
        return engine, key

    def _get_engine(self, p):
        if self._switched():
            key = ("features", self._fq.shape[0], p["n_components"], p["eta"],
                   p["sampler"])
            if getattr(self, "_engine", None) is None or self._engine_key != key:
                self._engine = _kernels.KernelPCAEngine(
                    r=p["n_components"], sampler=SAMPLERS[p["sampler"]],
                    evals=self._fevals, q=self._fq, m=self._fdim, t=self._ft,
                    residual=self._residual, rate=self._rate,
                    master=self.__dict__.get("_master") if p["eta"] == "auto" else None,
                    **rate_options(p["eta"]))
                self._engine_key = key
            return self._engine
        key = (self._q.shape[0], p["n_components"], p["eta"], p["sampler"])
        if getattr(self, "_engine", None) is None or self._engine_key != key:
            self._engine, self._engine_key = self._new_engine(p, self._evals, self._q)
        return self._engine

    def _switch(self, p):
        """Enter the bounded mode (before the first trial with ``budget``
        instances stored; idempotent).

        The ``m`` stored instances become the landmarks.  With ``K = U
        diag(lambda) U^T`` their kernel matrix and ``v_i = Phi u_i /
        sqrt(lambda_i)`` its feature-space eigenvectors, the map is ``phi(x)
        = diag(lambda_D)^-1/2 U_D^T k_L(x)``: the coordinates of ``P_V
        phi(x)`` along the ``D = map_size`` leading ``v_i`` (those with
        ``lambda_i`` above the null-space tolerance).  In those coordinates
        ``P_V C^t P_V = diag(lambda_D)`` (``C^t = sum phi(x_s) phi(x_s)^T``,
        the ``x_s`` being the landmarks), so the state becomes the
        eigensystem ``(lambda_D, I)`` of the learner's matrix in ``V`` -- no
        new eigen-decomposition -- and the trials go on with KW update (2)
        in ``V`` (cap ``D - r``).  ``tau = sum`` of the other eigenvalues of
        ``K`` is the trace the projection drops (``truncation_error_``).
        """
        if self._switched():
            return
        m = int(self._m[0])
        M, fevals, tau = _nystroem_map(self._evals[:m], self._q[:m, :m], p["map_size"])
        dim = fevals.shape[0]
        state = dict(_fmap=M, _fevals=fevals, _fq=np.eye(dim),
                     _fdim=np.array([dim], dtype=np.intp), _ft=np.zeros(1, dtype=np.intp),
                     _residual=np.array([0.0, tau]), _X=self._X[:m].copy(),
                     _evals=np.empty(0), _q=np.empty((0, 0)), _engine=None,
                     _engine_key=None)
        self.__dict__.update(state)  # one step: a Ctrl-C cannot split it

    def _rebuild(self, m):
        """Eigensystem of the kernel matrix of the first m stored instances by eigh."""
        p = self._config(self.n_features_in_)
        X = self._X[:m]
        K = self._gram(X, X, p)
        lam, U = np.linalg.eigh(0.5 * (K + K.T))
        self._evals[:m] = lam
        self._q[:m, :m] = U
        self._m[0] = m
        self._engine = None

    def _rebuild_features(self, phi):
        """The bounded mode's eigensystem after ``C += phi phi^T`` by eigh
        (a failed rank-one update), and the trial counted."""
        Q, lam = self._fq, self._fevals
        C = (Q * lam) @ Q.T + np.outer(phi, phi)
        lam, U = np.linalg.eigh(0.5 * (C + C.T))
        self._fevals[:] = lam
        self._fq[:] = U
        self._ft[0] += 1

    def _state_dict(self):
        state = super()._state_dict()
        if "_m" in state and not self._switched():
            # only the used part of the grown buffers (copied by the caller)
            m = int(self._m[0])
            state["_X"] = self._X[:m]
            state["_evals"] = self._evals[:m]
            state["_q"] = self._q[:m, :m]
        return state

    def _run(self, X, plan):
        p, G, n_exact, bounded = plan
        T = X.shape[0]
        c0 = self._count()
        m0 = int(self._m[0])
        if (p["eta"] == "auto") != (self.__dict__.get("_master") is not None):
            # eta set mid-stream: the master restarts with "auto", none with a number
            self._master = _kernels.master_state() if p["eta"] == "auto" else None
            self._engine = None
        if n_exact:
            self._ensure_capacity(m0 + n_exact, p)
            self._X[m0:m0 + n_exact] = X[:n_exact]
        Phi, kappa = bounded if bounded is not None else (None, None)
        engine = self._get_engine(p) if n_exact else None
        saved = self._rng.bit_generator.state
        n0 = self._n_recorded
        losses = np.empty((2, T))
        u = np.empty(T)

        def begin():
            u[:] = self._rng.random(T)

        def chunk(done, size):
            nonlocal Phi, engine
            start = self._count() - c0  # the engines' count: rows done
            if start < n_exact:
                stop = min(n_exact, start + size)
            else:
                if engine is None or not engine.features:
                    self._switch(p)  # (done by _settle, unless budget was lowered since)
                    engine = self._get_engine(p)
                if Phi is None:  # the batch switched: map its remaining rows now
                    Phi = self._map_rows(X[n_exact:], p)
                stop = min(T, start + size)
            try:
                # Ctrl-C inside: KeyboardInterrupt, the interrupted trial
                # undone (fewer done if the handler does not raise)
                if start < n_exact:
                    ran = engine.run(G[start:stop], u[start:stop], losses[0, start:stop],
                                     losses[1, start:stop])
                else:
                    f, g = start - n_exact, stop - n_exact
                    ran = engine.run_features(Phi[f:g], kappa[f:g], u[start:stop],
                                              losses[0, start:stop], losses[1, start:stop])
                return ran, True
            except _kernels.TrialError as exc:
                if exc.status != _kernels.STATUS_EFAILED:
                    raise
            # the failed trial has its losses; redo its eigen-update by eigh
            if start < n_exact:
                self._rebuild(int(self._m[0]) + 1)
            else:
                self._rebuild_features(Phi[self._count() - c0 - n_exact])
            self.n_eigh_fallbacks_ += 1
            engine = self._get_engine(p)
            # (not paced: the time includes the rebuild)
            return self._count() - c0 - start, False

        run_batch(self, T, chunk, lambda: self._settle(c0, n0, saved, losses, T, p), begin)
        return self

    def _map_rows(self, X, p):
        """Feature vectors of rows X in the bounded mode (after the switch)."""
        L = self._X
        LT = np.ascontiguousarray(L.T)
        Phi = np.empty((X.shape[0], self._fmap.shape[1]))
        step = max(1, _GRAM_ENTRIES // max(1, L.shape[0]))
        for a in range(0, X.shape[0], step):
            b = min(X.shape[0], a + step)
            K = self._gram(X[a:b], L, p, inner=_row_inner(LT))
            _kernels.kpca_map(self._fmap, K, Phi[a:b])
        return Phi

    def _settle_switch(self, p):
        """The switch is due once ``budget`` instances are stored: made at
        once (also when a batch ends or is interrupted there), so that the
        state after a given number of trials is one and the same."""
        if p["budget"] is not None and int(self._m[0]) >= p["budget"]:
            self._switch(p)

    def _settle(self, c0, n0, saved, losses, T, p):
        """Make the state that of the rows the engines processed: counter,
        losses recorded, one uniform consumed per row, the switch made if due.
        Safe to repeat."""
        self._settle_switch(p)
        done = self._count() - c0
        self._t[0] = c0 + done
        if self.record_losses:
            have = self._n_recorded - n0
            if have < done:
                self._record(losses[:, have:done])
        if done < T:
            self._rng.bit_generator.state = saved
            self._rng.random(done)
        return done

    # -- fitted attributes -------------------------------------------------------
    @property
    def eigenvalues_(self) -> FloatArray:
        """Ascending eigenvalues of the learner's matrix: the kernel matrix of
        the instances stored, or in the bounded mode ``C``, the sum of the
        past ``phi(x) phi^T(x)`` in the map's feature space."""
        self._check_fitted()
        if self._switched():
            return self._fevals.copy()
        return self._evals[:int(self._m[0])].copy()

    @property
    def eigenvectors_(self) -> FloatArray:
        """Orthonormal eigenvectors (columns) matching ``eigenvalues_`` (in the
        bounded mode: in the map's coordinates, see ``feature_map_``)."""
        self._check_fitted()
        if self._switched():
            return self._fq.copy()
        m = int(self._m[0])
        return self._q[:m, :m].copy()

    @property
    def update_stats_(self) -> dict[str, int]:
        """Diagnostics of the eigen-updates since the engine was last built
        (at a reset, a growth of the buffers, the switch to the bounded mode
        or unpickling): a dict with ``n_updates``, ``secular_sum`` (the sum
        of their secular orders: the non-deflated size + 1; ``secular_sum /
        n_updates`` is the typical cost driver) and ``n_fallbacks``
        (bisection roots + dsyevr blocks)."""
        self._check_fitted()
        engine = self.__dict__.get("_engine")
        if engine is None:
            return {"n_updates": 0, "secular_sum": 0, "n_fallbacks": 0}
        return dict(engine.stats)

    @property
    def X_fit_(self) -> FloatArray:
        """The instances stored, in order: all those seen, or in the bounded
        mode the first ``budget`` (the landmarks)."""
        self._check_fitted()
        return self._X[:int(self._m[0])].copy()

    @property
    def gamma_(self) -> float | None:
        """The value of ``gamma`` in use (fixed at the last reset; see ``gamma``)."""
        self._check_fitted()
        return self._gamma

    @property
    def feature_map_(self) -> FloatArray | None:
        """The bounded mode's map ``M`` (``X_fit_`` rows x D): ``phi(x) =
        k(x, X_fit_) @ M``; None before the switch."""
        self._check_fitted()
        return self._fmap.copy() if self._switched() else None

    @property
    def approximation_error_(self) -> float:
        """The bounded mode's residuals so far, ``sum_t (k(x_t, x_t) -
        |phi(x_t)|^2)`` over its trials: the part of the instances outside the
        map's feature space, counted in the losses (0 before the switch)."""
        self._check_fitted()
        return float(self._residual[0]) if self._switched() else 0.0

    @property
    def truncation_error_(self) -> float:
        """The trace the switch to the bounded mode dropped: the sum of the
        eigenvalues of the landmarks' kernel matrix outside the map (0 before
        the switch)."""
        self._check_fitted()
        return float(self._residual[1]) if self._switched() else 0.0

    def _next_eigenvalues(self, p):
        """The eigenvalues the next trial uses: the bounded mode's, also when
        the budget is reached and the switch is due."""
        if self._switched():
            return self._fevals
        m = int(self._m[0])
        lam = self._evals[:m]
        if p["budget"] is not None and m >= p["budget"]:
            return _nystroem_map(lam, self._q[:m, :m], p["map_size"])[1]
        return lam

    @property
    def weights_(self) -> FloatArray | None:
        """The capped softmin ``lambdabar`` of the next trial (None while it
        has at most r eigenvalues)."""
        self._check_fitted()
        p = self._config(self.n_features_in_)
        lam = self._next_eigenvalues(p)
        m = lam.shape[0]
        D = m - p["n_components"]
        if D < 1:
            return None
        eta = self._step(lam)
        live = np.abs(lam) > null_space_tol(lam)
        mu = np.zeros(m)
        mu[live] = -eta * lam[live]
        return np.exp(cap_log(mu, D))

    def _step(self, lam):
        """The rate the next trial's softmin uses: ``eta``, or with
        ``eta="auto"`` the rate of ``eta_`` limited to ``2**1000 /
        max|lambda|`` (``opf_rate_step``)."""
        if self.eta != "auto":
            return float(self.eta)
        eta, top = float(self._rate[1]), float(np.abs(lam).max(initial=0.0))
        return 2.0 ** 1000 / top if top > 0 and eta * top > 2.0 ** 1000 else eta

    eta_ = RatesMixin.eta_
    mixability_gap_ = RatesMixin.mixability_gap_

    def _master_view(self):
        return self.__dict__.get("_master") if self.eta == "auto" else None

    master_gap_ = MasterMixin.master_gap_
    limit_weight_ = MasterMixin.limit_weight_

    def fit_transform(self, X: ArrayLike, y: None = None) -> FloatArray:
        """:meth:`fit` on X, then :meth:`transform` X with the final eigensystem.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            The instances, one trial per row.
        y : None
            Ignored.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
            Coordinates of X on the final feature-space directions.
        """
        return self.fit(X).transform(X)

    @reads_state
    def transform(self, X: ArrayLike) -> FloatArray:
        """Coordinates of ``phi(x)`` on the r leading feature-space directions.

        The directions are ``X u_i / sqrt(lambda_i)`` for the r largest
        eigenvalues of the current kernel matrix (those with the smallest
        weights, i.e. the top-r of ``E[P~]``; KW Alg. 2 on the past
        instances), and the coordinates ``u_i^T y / sqrt(lambda_i)`` are
        orthonormal ones (KW's compression vector ``Lambda_r^-1 U_r^T y``
        scaled by ``Lambda_r^{1/2}``, as scikit-learn's ``KernelPCA``).
        Columns of directions in the numerical null space are 0.

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n_samples, n_features)
            Rows to project.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
            The coordinates.
        """
        if is_sparse(X):
            return map_sparse(X, self.transform)
        rows = self._validate_for_transform(X)
        chunks = row_chunks(*rows.shape)
        if len(chunks) > 1:  # the chunks of a sparse X: the same numbers
            return np.concatenate([self.transform(rows[a:b]) for a, b in chunks])
        p = self._config(self.n_features_in_)
        self._check_kernel_unchanged(p)
        r = p["n_components"]
        Z = np.zeros((rows.shape[0], r))
        if self._switched():  # the r leading eigenvectors of C in the map's space
            lam = self._fevals
            top = np.arange(lam.shape[0] - 1, max(lam.shape[0] - r, 0) - 1, -1)
            keep = top[np.abs(lam[top]) > null_space_tol(lam)]
            Z[:, :keep.size] = self._map_rows(rows, p) @ self._fq[:, keep]
            return Z
        m = int(self._m[0])
        if m == 0:
            return Z
        lam = self._evals[:m]
        top = np.arange(m - 1, max(m - r, 0) - 1, -1)
        keep = top[np.abs(lam[top]) > null_space_tol(lam)]
        Y = self._gram(rows, self._X[:m], p)
        Z[:, :keep.size] = (Y @ self._q[:m, keep]) / np.sqrt(lam[keep])
        return Z


def _memory_bytes(capacity, n_features):
    """Bytes of the state and workspace for `capacity` instances."""
    return 8 * (3 * capacity * capacity + capacity * (n_features + 20))


def _scale_gamma(X):
    """``gamma="scale"``: ``1 / (n_features * var)`` with ``var`` the variance
    of all entries of the first :data:`SCALE_ROWS` rows of X (scikit-learn's
    SVC on those rows; 1.0 if they are constant).  Computed on X scaled by
    its largest entry, so that neither the variance nor its inverse
    overflows for any finite X that passes the row checks."""
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


def _nystroem_map(lam, U, size):
    """The bounded mode's map from the eigensystem ``(lam, U)`` (ascending)
    of the landmarks' kernel matrix: ``(M, evals, tau)`` with ``M = U_D
    diag(lam_D)^-1/2`` (landmarks x D) over the ``D = min(size, #{lam_i >
    tol})`` leading eigenpairs above the null-space tolerance, their
    eigenvalues (ascending) and ``tau``, the sum of the positive eigenvalues
    left out.  With no eigenvalue above the tolerance, one zero column (the
    map to {0})."""
    m = lam.shape[0]
    live = np.flatnonzero(lam > null_space_tol(lam)) if m else np.empty(0, dtype=np.intp)
    keep = live[max(0, live.size - size):]
    if keep.size == 0:
        return np.zeros((m, 1)), np.zeros(1), float(np.maximum(lam, 0.0).sum())
    M = np.ascontiguousarray(U[:, keep] / np.sqrt(lam[keep]))
    dropped = np.ones(m, dtype=bool)
    dropped[keep] = False
    return M, lam[keep].copy(), float(np.maximum(lam[dropped], 0.0).sum())


def _inner_products(X, Y):
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


def _row_inner(YT):
    """Inner products with the rows of Y (given as ``YT = Y.T``,
    C-contiguous), one GEMV per row of X: as :func:`_inner_products`, a row's
    values do not depend on the other rows, at BLAS speed (the bounded
    mode's rows against a fixed set of landmarks)."""
    def inner(X, Y):
        G = np.empty((X.shape[0], YT.shape[1]))
        _kernels.kpca_map(YT, X, G)
        return G
    return inner


def _builtin_gram(X, Y, p, inner=_inner_products):
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


def _builtin_diagonal(X, p):
    """``k(x, x)`` of the built-in kernels, row by row."""
    kernel = p["kernel"]
    if kernel == "rbf":
        return np.ones(X.shape[0])
    d = np.einsum("ij,ij->i", X, X)
    if kernel == "poly":
        d *= p["gamma"]
        d += p["coef0"]
        d **= p["degree"]
    return d
