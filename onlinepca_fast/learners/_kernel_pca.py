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
from typing import Literal

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin

from .. import _kernels
from .._typing import ArrayLike, FloatArray, KernelLike, Sampler, SeedLike
from .._validation import (
    ETA,
    POSITIVE,
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
from .._guard import guard_of
from ._base import SAMPLERS, OnlineLearner, reads_state
from ._batch import run_batch
from ._kernel_checks import _check_kernel_values, _check_psd, _check_rows
from . import _aliases, _scoring
from ._rates import Master, MasterMixin, RatesMixin, rate_options
from ._sparse import is_sparse, map_sparse, row_chunks

__all__ = ["OnlineKernelPCA"]

_MAX_COMPONENTS = sys.maxsize >> 2


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
    n_features_in_, n_trials_, n_samples_seen_, n_components_ : int
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
    finite input yields a NaN state.  With ``eta="auto"`` (scale-free: the
    linear kernel on ``c X`` gives ``c**2`` the losses) a row's ``k(x, x)``
    must also be 0 or at least ``2**-480``, below which its squares lose
    their precision.

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
        "gamma": none_or(POSITIVE),
        "coef0": Interval("real"),
        "sampler": SAMPLER,
        "random_state": RandomState(),
        "record_losses": Boolean(),
    }

    def __init__(self, n_components: int, *, kernel: KernelLike = "rbf",
                 eta: float | Literal["auto"] = "auto",
                 degree: int = 3, gamma: float | None = None, coef0: float = 1.0,
                 sampler: Sampler = "decomposition", random_state: SeedLike = None,
                 record_losses: bool = True) -> None:
        self.n_components = n_components
        self.kernel = kernel
        self.eta = eta
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.sampler = sampler
        self.random_state = random_state
        self.record_losses = record_losses

    # -- hyper-parameters --------------------------------------------------
    def _config(self, n):
        """The checked hyper-parameters, gamma resolved for n features."""
        p = self._params(n)
        if p["gamma"] is None:
            p["gamma"] = 1.0 / n
        return p

    @staticmethod
    def _kernel_key(p):
        """The hyper-parameters the kernel values depend on."""
        kernel = p["kernel"]
        if kernel == "poly":
            return (kernel, p["degree"], p["gamma"], p["coef0"])
        if kernel == "rbf":
            return (kernel, p["gamma"])
        return (kernel,)

    @property
    def _n_features_out(self):
        self._check_fitted()
        return self.n_components

    # -- the kernel --------------------------------------------------------
    @staticmethod
    def _gram(X, Y, p):
        """Gram matrix k(X, Y) of shape (len(X), len(Y)), validated."""
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
                G = _builtin_gram(X, Y, p)
        if not np.isfinite(G).all():
            i = int(np.flatnonzero(~np.isfinite(G).all(axis=1))[0])
            raise ValueError(f"X row {i}: the kernel returned NaN or infinite values"
                             + (" (nothing was changed)" if callable(kernel) else
                                " (scale the data, gamma or coef0 down; nothing was "
                                "changed)"))
        return G

    # -- the trial protocol --------------------------------------------------
    def _plan(self, X, matrix, amax, name, reset):
        """Checked hyper-parameters and the kernel block, before any state change."""
        p = self._config(X.shape[1])
        if reset:
            as_generator(self.random_state)  # checked before the reset uses it
        else:
            self._check_kernel_unchanged(p)
        past = X[:0] if reset else self._X[:int(self._m[0])]
        _check_rows(X, name)
        G = self._gram(X, np.concatenate([past, X]), p)
        _check_kernel_values(G, name, rate_options(p["eta"])["eta"],
                             scale_free=p["eta"] == "auto")
        if callable(p["kernel"]):  # the built-in kernels are PSD by construction
            m0 = past.shape[0]
            evals, q = ((np.empty(0), np.empty((0, 0))) if reset else
                        (self._evals[:m0], self._q[:m0, :m0]))
            _check_psd(G, evals, q, name)
        return p, G

    def _reset(self, n, plan):
        p, _ = plan
        self._kernel_params = self._kernel_key(p)
        self._X = np.empty((0, n))
        self._evals = np.empty(0)
        self._q = np.empty((0, 0))
        self._m = np.zeros(1, dtype=np.intp)
        self._t = np.zeros(1, dtype=np.intp)
        # eta="auto" (src/adaptive_rate.h): [cumulative mixability gap, rate, 0]
        self._rate = np.array([0.0, np.inf, 0.0])
        # eta="auto": the master over the learner and Follow the Leader (src/limit.h)
        self._master = _kernels.master_state() if p["eta"] == "auto" else None
        self._start_records()
        self._rng = as_generator(self.random_state)
        self.n_eigh_fallbacks_ = 0
        self._engine = None
        self._engine_key = None
        self.__dict__.pop("_pace", None)

    def _check_kernel_unchanged(self, p):
        if self._kernel_key(p) != self._kernel_params:
            raise ValueError("the kernel parameters (kernel, degree, gamma, coef0) changed "
                             "since the learner was reset; the kernel matrix of the past "
                             "instances would be inconsistent: call fit to restart")

    def _ensure_capacity(self, need, p):
        """Grow the buffers (and the engine) to hold `need` instances: all
        allocated before any is installed, so a MemoryError changes nothing."""
        cap = self._q.shape[0]
        if need <= cap:
            return
        new = need if cap == 0 else max(need, cap + cap // 2, 16)
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
        key = (self._q.shape[0], p["n_components"], p["eta"], p["sampler"])
        if getattr(self, "_engine", None) is None or self._engine_key != key:
            self._engine, self._engine_key = self._new_engine(p, self._evals, self._q)
        return self._engine

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

    _TRANSIENT = OnlineLearner._TRANSIENT + ("_engine_key",)  # rebuilt, never pickled
    def _state_dict(self):
        state = super()._state_dict()
        if "_m" in state:  # only the used part of the grown buffers (copied by the caller)
            m = int(self._m[0])
            state["_X"] = self._X[:m]
            state["_evals"] = self._evals[:m]
            state["_q"] = self._q[:m, :m]
        return state

    def _run(self, X, plan):
        p, G = plan
        T = X.shape[0]
        m0 = int(self._m[0])
        with guard_of(self).mutation():
            if (p["eta"] == "auto") != (self.__dict__.get("_master") is not None):
                # eta set mid-stream: the master restarts with "auto", none with a number
                self._master = _kernels.master_state() if p["eta"] == "auto" else None
                self._engine = None
            self._ensure_capacity(m0 + T, p)
            self._X[m0:m0 + T] = X
        losses = np.empty((2, T))
        ctx = {"start": m0, "n0": self._records.count, "saved": None, "drawn": 0}

        def step(done, size):
            ctx.update(start=int(self._m[0]), n0=self._records.count, saved=None, drawn=0)
            engine, stop, paced = self._get_engine(p), min(T, done + size), True
            ctx["saved"] = self._rng.bit_generator.state
            u = self._rng.random(stop - done)
            ctx["drawn"] = stop - done
            try:  # Ctrl-C inside: KeyboardInterrupt, the interrupted trial undone
                engine.run(G[done:stop], u, losses[0, done:stop], losses[1, done:stop])
            except _kernels.TrialError as exc:
                if exc.status != _kernels.STATUS_EFAILED:
                    raise
                # the failed trial has its losses; redo its eigen-update by eigh
                self._rebuild(int(self._m[0]) + 1)
                self.n_eigh_fallbacks_ += 1
                paced = False  # the time includes the O(m^3) rebuild
            settle()
            return int(self._m[0]) - ctx["start"], paced

        def settle():
            """Make the state that of the rows the engine processed: counter,
            losses recorded, one uniform consumed per row.  Safe to repeat."""
            done = int(self._m[0]) - ctx["start"]
            self._t[0] = self._m[0]
            if self.record_losses:
                have = self._records.count - ctx["n0"]
                if have < done:
                    first = ctx["start"] - m0
                    self._record(losses[:, first + have:first + done])
            if ctx["saved"] is not None and done < ctx["drawn"]:
                self._rng.bit_generator.state = ctx["saved"]
                self._rng.random(done)
                ctx["drawn"] = done
            return int(self._m[0]) - m0

        run_batch(self, T, step, settle)
        return self

    # -- fitted attributes -------------------------------------------------------
    @property
    @reads_state
    def eigenvalues_(self) -> FloatArray:
        """Ascending eigenvalues of the kernel matrix of the instances seen."""
        self._check_fitted()
        return self._evals[:int(self._m[0])].copy()

    @property
    @reads_state
    def eigenvectors_(self) -> FloatArray:
        """Orthonormal eigenvectors (columns) matching ``eigenvalues_``."""
        self._check_fitted()
        m = int(self._m[0])
        return self._q[:m, :m].copy()

    @property
    @reads_state
    def update_stats_(self) -> dict[str, int]:
        """Diagnostics of the bordered updates since the engine was last built
        (at a reset, a growth of the buffers or unpickling): a dict with
        ``n_updates``, ``secular_sum`` (the sum of their secular orders: the
        non-deflated size + 1; ``secular_sum / n_updates`` is the typical
        cost driver) and ``n_fallbacks`` (bisection roots + dsyevr blocks)."""
        self._check_fitted()
        engine = self.__dict__.get("_engine")
        if engine is None:
            return {"n_updates": 0, "secular_sum": 0, "n_fallbacks": 0}
        return dict(engine.stats)

    @property
    @reads_state
    def X_fit_(self) -> FloatArray:
        """The instances seen, in order."""
        self._check_fitted()
        return self._X[:int(self._m[0])].copy()

    @property
    @reads_state
    def weights_(self) -> FloatArray | None:
        """The capped softmin ``lambdabar`` of the next trial (None while m <= r)."""
        self._check_fitted()
        p = self._config(self.n_features_in_)
        m = int(self._m[0])
        D = m - p["n_components"]
        if D < 1:
            return None
        lam = self._evals[:m]
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

    def _master_view(self):
        m = self.__dict__.get("_master") if self.eta == "auto" else None
        return None if m is None else Master(m)

    eta_, mixability_gap_ = RatesMixin.eta_, RatesMixin.mixability_gap_
    master_gap_, limit_weight_ = MasterMixin.master_gap_, MasterMixin.limit_weight_

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

    score, n_components_ = _scoring.kernel_score, _aliases.n_components_

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
        m = int(self._m[0])
        r = p["n_components"]
        Z = np.zeros((rows.shape[0], r))
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


def _builtin_gram(X, Y, p):
    kernel = p["kernel"]
    G = _inner_products(X, Y)
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
