"""Online kernel PCA (Kuzmin & Warmuth, ICML 2007, Algorithm 6).

:class:`OnlineKernelPCA` keeps the eigensystem of the kernel matrix of all
past instances, grown by one bordered (arrowhead) update per trial in
compiled code (``src/bordered_update.c``, ``src/kernel_pca.c``), and draws
its rank-r projection from the capped softmin of the kernel-matrix
eigenvalues.

The papers (KW, WK) are cited in full in the README's references.
"""

from __future__ import annotations

import sys
from typing import Literal

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin

from .. import _kernels
from .._docs import fill_doc
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
    store_params,
)
from ..kernels import cap_log, null_space_tol
from .._guard import guard_of
from ._base import SAMPLERS, OnlineLearner, reads_state
from . import _aliases, _scoring
from ._batch import run_batch
from ._kernel_bounded import BoundedState, check_map, plan_rows
from ._kernel_checks import _check_kernel_scale, _check_kernel_values, _check_psd, _check_rows
from ._kernel_values import gram, resolve_gamma
from ._rates import Master, MasterMixin, Rate, RatesMixin, rate_options
from ._sparse import is_sparse, map_sparse, row_chunks

__all__ = ["OnlineKernelPCA"]

_MAX_COMPONENTS = sys.maxsize >> 2

#: Default ``budget``: the exact learner's instances before the bounded mode.
BUDGET = 1000
#: Default ``map_size``: the dimension of the bounded mode's feature space.
MAP_SIZE = 64


@fill_doc
class OnlineKernelPCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, OnlineLearner):
    """Online kernel PCA with a capped softmin of the kernel matrix (KW Alg. 6).

    For its first ``budget`` trials (default 1000) the learner is KW
    Algorithm 6 exactly; then it goes on with the same update in a fixed
    feature space of dimension ``map_size`` (a Nystrom map onto the leading
    feature-space directions of those first instances), at a cost and
    memory per trial that no longer grow with t (see Notes, "Long streams").

    At trial t the exact learner holds the eigensystem ``K = U diag(lambda)
    U^T`` of the kernel matrix of the ``m = t - 1`` past instances.  With
    ``D = m - r`` (``r = n_components``) it takes ``lambdabar = cap_D(exp(-eta
    lambda) / Z)`` (in the log domain, :func:`~onlinepca_fast.kernels.cap_log`),
    draws a corner of D eigenvectors from it (WK Alg. 2, or systematic
    sampling) and projects on the r others, ``P~ = U_r Lambda_r^-1 U_r^T``;
    receives x, with ``y = (k(x_i, x))_i``, and incurs ``k(x, x) - y^T P~
    y`` (realized) and ``k(x, x) - y^T W~ y`` (expected), ``W~ = U (I - D
    diag(lambdabar)) Lambda^-1 U^T``; then grows the eigensystem by the row
    ``[y; k(x, x)]`` with one bordered (arrowhead) update: one secular
    equation (Gu-Eisenstat) and one product with U, never re-diagonalising.

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
    eta : "auto", "adahedge" or float, default="auto"
        Learning rate.  ``"auto"``: the AdaHedge rate ``eta_t = r /
        Delta_{t-1}`` in feature space (see Notes), which needs neither the
        horizon, nor the loss of the best subspace, nor the scale of the
        kernel, under a master AdaHedge (``D = log 2``) that plays, each
        trial, either that learner or Follow the Leader (its eta -> infinity
        limit: the projection onto the r leading eigenvectors of K); a
        number (> 0) runs KW Alg. 6 at that rate (KW eq. (6) gives the
        tuned value).
        ``"adahedge"``: the rate learner alone, without the master and
        Follow the Leader (the rate learner's bound only; the master costs
        little here, so this is for comparing, not for speed; scale-free as
        ``"auto"``).
    degree : int, default=3
        Degree of the polynomial kernel (>= 1).
    gamma : "scale", "auto" or float, default="scale"
        Kernel coefficient of "poly" and "rbf" (> 0).  ``"scale"``: ``1 /
        (n_features * var)`` (scikit-learn's SVC), ``var`` the variance of
        all entries of the first 100 rows of the first batch (1.0 if
        constant), fixed at the reset (``gamma_``): ``c X`` gives the kernel
        values of X, the same learner.  The same numbers for any split whose
        first batch has at least 100 rows (``learn_one`` on a new learner:
        its row's scale).  ``"auto"``: ``1 / n_features`` (not scale-free);
        ``None``: deprecated, as "auto".
    coef0 : float, default=1.0
        Independent term of the polynomial kernel.
    budget : int or None, default=1000
        The trials of the exact learner: once ``budget`` instances are
        stored they become landmarks and the learner switches to the
        bounded mode (Notes).  ``None``: always exact (a trial at t costs
        up to O(t^3), the state ``24 t^2`` bytes).  Lowered mid-stream, the
        switch is made at the next batch; after it, budget is not read.
    map_size : int, default=64
        D, the dimension of the bounded mode's feature space: the D leading
        feature-space eigenvectors of the landmarks (fewer if their kernel
        matrix has a lower numerical rank).  Read at the switch.  A trial
        then costs O(D^2) plus an eigenvector product of at most D^3.
    %(sampler)s
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the draws.  Every trial draws exactly one uniform number
        (``rng.random()``) before its update, also the deterministic first
        trials, so that the stream of draws does not depend on r.
    %(record_losses)s

    Attributes
    ----------
    eigenvalues_, eigenvectors_ : ndarray of shape (m,), (m, m) or (D,), (D, D)
        The maintained eigensystem (ascending; columns): of the kernel
        matrix of the m instances stored, or in the bounded mode of C, the
        sum of the past ``phi phi^T`` in the map's coordinates.
    weights_ : ndarray of shape (m,) or (D,), or None
        ``lambdabar`` for the next trial (None while ``m <= r``).
    X_fit_ : ndarray of shape (m, n_features)
        The instances stored (in the bounded mode: the landmarks).
    gamma_ : float
        The kernel coefficient in use.
    feature_map_ : ndarray of shape (m, D) or None
        The bounded mode's map M, ``phi(x) = k(x, X_fit_) @ M`` (None before
        the switch).
    approximation_error_, truncation_error_ : float
        ``eps_T``, the sum of the bounded mode's residuals ``k(x, x) -
        |phi(x)|^2`` so far, and ``tau``, the eigenvalues of the landmarks'
        kernel matrix left out of the map (both 0 before the switch).
    expected_losses_, realized_losses_ : ndarray of shape (n_trials,)
        Expected and realized approximation errors in feature space.
    n_features_in_, n_trials_ : int
    eta_, mixability_gap_, master_gap_, limit_weight_ : float
        The rate of the next trial (``r / mixability_gap_`` with "auto"),
        ``Delta_T``, the master's ``Delta^M`` and its weight of Follow the
        Leader (the last three 0 with a numeric eta).
    n_eigh_fallbacks_ : int
        Eigen-updates redone by ``numpy.linalg.eigh`` (Notes); 0 in practice.

    Notes
    -----
    The user guide (docs/kernel_pca.md) derives these notes.

    **First trials.**  KW start at ``t = r + 1``; here every instance is a
    trial.  While ``t - 1 <= r`` all eigenvectors are taken: the hypothesis
    is the projection onto the span of the past instances (deterministic),
    expected = realized = ``k(x, x) - y^T K^+ y`` (``k(x, x)`` at ``t =
    1``), the ``D -> 0`` limit of Alg. 6.  These trials consume their
    uniform like any other.

    **Zero eigenvalues.**  Eigenvalues of K with ``|lambda| <= m eps
    max|lambda|`` (:func:`null_space_tol`) are exactly 0: their terms of
    ``y^T W~ y`` and ``y^T P~ y``, ``0/0`` in exact arithmetic, are 0, and
    their softmin weight is ``exp(0)``; a capped direction contributes
    exactly 0 (``1 - D lambdabar_i = -expm1(nu_i + log D)``).

    **Linear kernel and KW footnote 2.**  With ``kernel="linear"`` the
    expected losses are those of KW update (2), ``CenteredOnlinePCA(
    centered=False)``, whenever the cap binds on the null space, ``S^t =
    tr(I - exp(-eta C^t)) >= r``; before, they differ.

    **eta="auto"** (docs/adaptive_rates.md).  The learner is follow the
    regularised leader: trial t takes the softmin at ``eta_t = r /
    Delta_{t-1}`` (at most ``2**1000 / max|lambda|``), the gap of a trial
    being ``h_t (1 - (1 - e^-x) / x)``, ``x = eta_t k(x, x)`` (the limit of
    the N-dimensional learner's as N grows; the first trials add their
    whole loss).  Then ``R_T <= 2 Delta_T <= 2 sqrt(r sum_t h_t k(x_t,
    x_t)) + 2 (r + 2) max_t k(x_t, x_t)`` for any kernel (proved wherever
    ``S^t >= r``, checked numerically elsewhere).  The master plays the
    learner or Follow the Leader (the r leading eigenvectors of K, what
    ``transform`` projects on): the loss is at most the better one's plus
    ``2 Delta^M`` (``master_gap_``).  Scaling the kernel by ``c`` scales
    losses and gaps by ``c``: the weights are unchanged.

    **Numerics.**  In the log domain ``exp(-eta lambda)`` cannot overflow
    (KW Sec. 5).  With a numeric eta, scale the data (or ``gamma``) so
    that ``k(x, x) <= 1``, as KW's bound assumes.  A batch is
    rejected before any state change, naming the row of ``X``, if a row has
    ``|x|^2 > 2**1020`` or a kernel value exceeds ``min(2**500, 2**1020 /
    max(1, eta)) / t`` (t instances or trials): no finite input yields a
    NaN state.

    **Long streams: the bounded mode.**  Once ``budget`` instances are
    stored (``K = U diag(lambda) U^T`` their kernel matrix), every later
    instance is mapped to the coordinates of its projection on the span V
    of the ``D = map_size`` leading feature-space eigenvectors, ``phi(x) =
    diag(lambda_D)^-1/2 U_D^T k(X_fit_, x)`` (Nystrom).  In V the landmarks'
    ``C^t`` is ``diag(lambda_D)``: the state becomes ``(lambda_D, I)``, the
    rate, gap and master carry over, and each trial is KW's in V (cap ``D -
    r``) followed by ``C += phi phi^T`` (one rank-one update): the exact
    capped learner in the feature space V.  The losses recorded are on the
    kernel's feature vector: those in V plus ``k(x, x) - |phi(x)|^2``.
    Guarantee (eta="auto"; ``L*``: the best rank-r subspace of the kernel's
    feature space in hindsight)::

        L_T <= L* + 2 Delta_T + 2 Delta^M_T + tau + eps_T

    with ``Delta_T = mixability_gap_``, ``Delta^M_T = master_gap_``, ``tau =
    truncation_error_`` and ``eps_T = approximation_error_``: the exact
    learner's bound in V, plus the error of the approximation (with the
    caveat of footnote 2 above).  ``eps_T`` grows when the stream leaves
    the region of the landmarks.  Measured against the exact learner on
    real streams of 2000 rows the defaults lose 0-0.3% more, and a budget
    of 250 at most 3%.

    **Cost.**  The exact learner evaluates the kernel once per batch (one
    call of a callable); a trial with m past instances costs O(m^2) plus a
    GEMM of the non-deflated eigenvectors (O(m^3) for a full-rank kernel
    such as "rbf": ~100 ms at m = 2000), its state ``24 m^2`` bytes (a
    growth that cannot be allocated raises ``MemoryError``, nothing
    changed).  The bounded mode computes a row's features by GEMVs,
    O(budget (n_features + D)), and a trial costs O(D^2) plus at most a D x
    D x D product; memory ``budget (n_features + D) + 2 D^2`` doubles and
    the batch's features.  A 50,000-row stream of 64 features with the
    defaults: 12-15 s of CPU, mostly the first 1000 (exact) trials.  A
    failed eigen-update (not observed) is redone by ``numpy.linalg.eigh``
    (``n_eigh_fallbacks_``).

    References
    ----------
    KW Algorithms 2 and 6, update (2), footnote 2, Sec. 5; WK Algorithm 6;
    de Rooij, van Erven, Grunwald and Koolen, JMLR 15 (2014) (AdaHedge);
    Williams and Seeger, NIPS 2000 (the Nystrom method).

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

    A budget of 100 instances: the exact learner for 100 trials, then a
    32-dimensional feature space.

    >>> short = OnlineKernelPCA(5, budget=100, map_size=32, random_state=0).fit(X)
    >>> short.X_fit_.shape, short.eigenvalues_.shape
    ((100, 20), (32,))
    >>> bool(short.approximation_error_ >= 0.0)
    True
    """

    _constraints = {
        "n_components": Interval("int", 1, _MAX_COMPONENTS,
                                 text="be an integer >= 1 (and below 2**61)"),
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
                 eta: float | Literal["auto", "adahedge"] = "auto",
                 degree: int = 3, gamma: float | Literal["scale", "auto"] | None = "scale",
                 coef0: float = 1.0, budget: int | None = BUDGET, map_size: int = MAP_SIZE,
                 sampler: Sampler = "decomposition", random_state: SeedLike = None,
                 record_losses: bool = True) -> None:
        store_params(self, locals())

    # -- hyper-parameters --------------------------------------------------
    def _config(self, n):
        """The checked hyper-parameters, ``gamma`` resolved: the value fixed
        at the last reset (``gamma_``)."""
        p = self._params(n)
        p["gamma"] = self.__dict__.get("_gamma")
        return p

    def _kernel_key(self):
        """The hyper-parameters the kernel values depend on, as set."""
        kernel = self.kernel
        return ((kernel, self.degree, self.gamma, self.coef0) if kernel == "poly" else
                (kernel, self.gamma) if kernel == "rbf" else (kernel,))

    @property
    def _n_features_out(self):
        self._check_fitted()
        return self.n_components

    # -- the trial protocol --------------------------------------------------
    def _plan(self, X, matrix, amax, name, reset):
        """Everything checked before any state change: ``(p, G, n_exact,
        bounded)``, G the kernel block of the exact learner's ``n_exact``
        rows, `bounded` the rest's plan (:meth:`_plan_bounded`) or None."""
        p = self._config(X.shape[1])
        if reset:
            as_generator(self.random_state)  # checked before the reset uses it
            p["gamma"] = resolve_gamma(self.gamma, X)
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
        G = gram(Xe, np.concatenate([past, Xe]), p)
        eta = rate_options(p["eta"])["eta"]
        if Rate(p["eta"]).auto:  # scale-free: the range where it is exact
            _check_kernel_scale(G[np.arange(n_exact), m0 + np.arange(n_exact)], name)
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
            if Rate(p["eta"]).auto:
                _check_kernel_scale(bounded[1], name, n_exact)
        return p, G, n_exact, bounded

    def _plan_bounded(self, X, landmarks, G, p, name, offset, t_end, eta, reset):
        """The bounded mode's rows X (from row `offset`), checked: ``(Phi,
        kappa)``; ``(None, kappa)`` if the batch switches (mapped then)."""
        if not reset and self._switched():
            return self._bounded.plan_rows(X, landmarks, p, name, offset, t_end, eta)
        m0 = landmarks.shape[0] - G.shape[0]
        M, scale = check_map(G, self._evals[:m0] if m0 else np.empty(0),
                             self._q[:m0, :m0] if m0 else np.empty((0, 0)), p)
        return None, plan_rows(X, landmarks, M, p, name, offset, t_end, eta, scale)[1]

    def _reset(self, n, plan):
        p = plan[0]
        self._gamma = p["gamma"]
        self._kernel_params = self._kernel_key()  # gamma as set ("scale" ...)
        self._X = np.empty((0, n))
        self._evals = np.empty(0)
        self._q = np.empty((0, 0))
        self._m = np.zeros(1, dtype=np.intp)
        self._t = np.zeros(1, dtype=np.intp)
        # eta="auto" (src/adaptive_rate.h): [cumulative mixability gap, rate, 0]
        self._rate = np.array([0.0, np.inf, 0.0])
        # eta="auto": the master over the learner and Follow the Leader (src/limit.h)
        self._master = _kernels.master_state() if p["eta"] == "auto" else None
        self._bounded = None  # the bounded mode's state, from the switch on
        self._start_records()
        self._rng = as_generator(self.random_state)
        self.n_eigh_fallbacks_ = 0
        self._engine = None
        self._engine_key = None
        self.__dict__.pop("_pace", None)

    def _check_kernel_unchanged(self, p):
        if self._kernel_key() != self._kernel_params:
            raise ValueError("the kernel parameters (kernel, degree, gamma, coef0) changed "
                             "since the learner was reset; the kernel matrix of the past "
                             "instances would be inconsistent: call fit to restart")

    def _switched(self):
        return self.__dict__.get("_bounded") is not None

    def _count(self):
        """Trials done since the reset: the instances stored, plus the
        bounded mode's trials."""
        return int(self._m[0]) + (int(self._bounded.trials[0]) if self._switched() else 0)

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
        X[:m], evals[:m], q[:m, :m] = self._X[:m], self._evals[:m], self._q[:m, :m]
        self._X, self._evals, self._q, self._engine, self._engine_key = (
            X, evals, q, engine, key)

    def _engine_args(self, p):
        return dict(r=p["n_components"], sampler=SAMPLERS[p["sampler"]], rate=self._rate,
                    master=self.__dict__.get("_master") if p["eta"] == "auto" else None,
                    **rate_options(p["eta"]))

    def _new_engine(self, p, evals, q):
        engine = _kernels.KernelPCAEngine(evals=evals, q=q, m=self._m, **self._engine_args(p))
        return engine, (False, q.shape[0], p["n_components"], p["eta"], p["sampler"])

    def _get_engine(self, p):
        bounded = self.__dict__.get("_bounded")
        q = self._q if bounded is None else bounded.q
        key = (bounded is not None, q.shape[0], p["n_components"], p["eta"], p["sampler"])
        if getattr(self, "_engine", None) is None or self._engine_key != key:
            self._engine = (self._new_engine(p, self._evals, q)[0] if bounded is None
                            else bounded.engine(**self._engine_args(p)))
            self._engine_key = key
        return self._engine

    def _switch(self, p):
        """Enter the bounded mode (idempotent): the stored instances become
        the landmarks, the state the map's (``_kernel_bounded``)."""
        m = int(self._m[0])
        if not self._switched():  # one step: a Ctrl-C cannot split it
            self.__dict__.update(
                _bounded=BoundedState(self._evals[:m], self._q[:m, :m], p["map_size"]),
                _X=self._X[:m].copy(), _evals=np.empty(0), _q=np.empty((0, 0)),
                _engine=None, _engine_key=None)

    def _rebuild(self, m):
        """Eigensystem of the kernel matrix of the first m stored instances by eigh."""
        K = gram(self._X[:m], self._X[:m], self._config(self.n_features_in_))
        self._evals[:m], self._q[:m, :m] = np.linalg.eigh(0.5 * (K + K.T))
        self._m[0], self._engine = m, None

    _TRANSIENT = OnlineLearner._TRANSIENT + ("_engine_key",)  # rebuilt, never pickled

    def _state_dict(self):
        state = super()._state_dict()
        if "_m" in state:  # only the used part of the grown buffers (copied by the caller)
            m = int(self._m[0])
            state["_X"], state["_evals"] = self._X[:m], self._evals[:m]
            state["_q"] = self._q[:m, :m]
        return state

    def _run(self, X, plan):
        p, G, n_exact, bounded = plan
        T = X.shape[0]
        c0 = self._count()
        m0 = int(self._m[0])
        with guard_of(self).mutation():
            if (p["eta"] == "auto") != (self.__dict__.get("_master") is not None):
                # eta set mid-stream: the master restarts with "auto", none with a number
                self._master = _kernels.master_state() if p["eta"] == "auto" else None
                self._engine = None
            if n_exact:
                self._ensure_capacity(m0 + n_exact, p)
                self._X[m0:m0 + n_exact] = X[:n_exact]
        Phi, kappa = bounded if bounded is not None else (None, None)
        losses = np.empty((2, T))
        ctx = {"start": c0, "n0": self._records.count, "saved": None, "drawn": 0, "Phi": Phi}

        def step(done, size):  # exact trials up to the budget, the bounded mode's after
            ctx.update(start=self._count(), n0=self._records.count, saved=None, drawn=0)
            start = ctx["start"] - c0
            if start >= n_exact:
                self._switch(p)  # (done by settle, unless budget was lowered since)
                if ctx["Phi"] is None:  # the batch switched: map its remaining rows now
                    ctx["Phi"] = self._bounded.map_rows(X[n_exact:], self._X, p)
            engine = self._get_engine(p)
            stop = min(n_exact if start < n_exact else T, start + size)
            ctx["saved"], ctx["drawn"] = self._rng.bit_generator.state, stop - start
            u, paced = self._rng.random(stop - start), True
            try:  # Ctrl-C inside: KeyboardInterrupt, the interrupted trial undone
                if start < n_exact:
                    engine.run(G[start:stop], u, losses[0, start:stop], losses[1, start:stop])
                else:
                    f, g = start - n_exact, stop - n_exact
                    engine.run_features(ctx["Phi"][f:g], kappa[f:g], u, losses[0, start:stop],
                                        losses[1, start:stop])
            except _kernels.TrialError as exc:
                if exc.status != _kernels.STATUS_EFAILED:
                    raise
                # the failed trial has its losses; redo its eigen-update by eigh
                if start < n_exact:
                    self._rebuild(int(self._m[0]) + 1)
                else:
                    self._bounded.rebuild(ctx["Phi"][self._count() - c0 - n_exact])
                self.n_eigh_fallbacks_ += 1
                paced = False  # the time includes the rebuild
            settle()
            return self._count() - ctx["start"], paced

        def settle():
            # the learner of the rows done: counter, losses, one uniform a row,
            # the switch once ``budget`` instances are stored (idempotent)
            if p["budget"] is not None and int(self._m[0]) >= p["budget"]:
                self._switch(p)
            done = self._count() - ctx["start"]
            self._t[0] = self._count()
            if self.record_losses:
                have = self._records.count - ctx["n0"]
                if have < done:
                    first = ctx["start"] - c0
                    self._record(losses[:, first + have:first + done])
            if ctx["saved"] is not None and done < ctx["drawn"]:
                self._rng.bit_generator.state = ctx["saved"]
                self._rng.random(done)
                ctx["drawn"] = done
            return self._count() - c0

        run_batch(self, T, step, settle)
        return self

    # -- fitted attributes -------------------------------------------------------
    @property
    @reads_state
    def eigenvalues_(self) -> FloatArray:
        """Ascending eigenvalues of the kernel matrix (bounded mode: of C)."""
        self._check_fitted()
        if self._switched():
            return self._bounded.evals.copy()
        return self._evals[:int(self._m[0])].copy()

    @property
    @reads_state
    def eigenvectors_(self) -> FloatArray:
        """Orthonormal eigenvectors (columns) matching ``eigenvalues_``."""
        self._check_fitted()
        if self._switched():
            return self._bounded.q.copy()
        m = int(self._m[0])
        return self._q[:m, :m].copy()

    @property
    @reads_state
    def update_stats_(self) -> dict[str, int]:
        """Eigen-updates since the engine was built (reset, growth, switch or
        unpickling): ``n_updates``, ``secular_sum`` (the sum of their secular
        orders: the cost driver), ``n_fallbacks`` (bisection or dsyevr)."""
        self._check_fitted()
        engine = self.__dict__.get("_engine")
        if engine is None:
            return {"n_updates": 0, "secular_sum": 0, "n_fallbacks": 0}
        return dict(engine.stats)

    @property
    @reads_state
    def X_fit_(self) -> FloatArray:
        """The instances stored (bounded mode: the landmarks)."""
        self._check_fitted()
        return self._X[:int(self._m[0])].copy()

    @property
    @reads_state
    def gamma_(self) -> float | None:
        """The value of ``gamma`` in use (fixed at the last reset)."""
        self._check_fitted()
        return self._gamma

    @property
    @reads_state
    def feature_map_(self) -> FloatArray | None:
        """The bounded mode's map (None before the switch)."""
        self._check_fitted()
        return self._bounded.map.copy() if self._switched() else None

    @property
    @reads_state
    def approximation_error_(self) -> float:
        """The bounded mode's residuals so far, ``eps_T`` (0 before it)."""
        self._check_fitted()
        return float(self._bounded.residual[0]) if self._switched() else 0.0

    @property
    @reads_state
    def truncation_error_(self) -> float:
        """The trace the switch dropped, ``tau`` (0 before it)."""
        self._check_fitted()
        return float(self._bounded.residual[1]) if self._switched() else 0.0

    @property
    @reads_state
    def weights_(self) -> FloatArray | None:
        """The capped softmin ``lambdabar`` of the next trial (None while
        there are at most r eigenvalues)."""
        self._check_fitted()
        lam = self.eigenvalues_
        D = lam.shape[0] - self.n_components
        if D < 1:
            return None
        live = np.abs(lam) > null_space_tol(lam)
        mu = np.zeros(lam.shape[0])
        mu[live] = -self._step(lam) * lam[live]
        return np.exp(cap_log(mu, D))

    def _step(self, lam):
        """The rate the next trial's softmin uses: ``eta``, or with
        ``eta="auto"`` the rate of ``eta_`` limited to ``2**1000 /
        max|lambda|`` (``opf_rate_step``)."""
        if not Rate(self.eta).auto:
            return float(self.eta)
        eta, top = float(self._rate[1]), float(np.abs(lam).max(initial=0.0))
        return 2.0 ** 1000 / top if top > 0 and eta * top > 2.0 ** 1000 else eta

    def _master_view(self):
        m = self.__dict__.get("_master") if self.eta == "auto" else None
        return None if m is None else Master(m)

    eta_, mixability_gap_ = RatesMixin.eta_, RatesMixin.mixability_gap_
    master_gap_, limit_weight_ = MasterMixin.master_gap_, MasterMixin.limit_weight_
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
        Columns of directions in the numerical null space are 0.  In the
        bounded mode: the coordinates ``q_i^T phi(x)`` on the r leading
        eigenvectors of ``C`` in the map's space (at the switch, the same
        as the exact learner's).

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
            return self._bounded.transform(rows, self._X, p, r)
        m = int(self._m[0])
        if m == 0:
            return Z
        lam = self._evals[:m]
        top = np.arange(m - 1, max(m - r, 0) - 1, -1)
        keep = top[np.abs(lam[top]) > null_space_tol(lam)]
        Y = gram(rows, self._X[:m], p)
        Z[:, :keep.size] = (Y @ self._q[:m, keep]) / np.sqrt(lam[keep])
        return Z


def _memory_bytes(capacity, n_features):
    """Bytes of the state and workspace for `capacity` instances."""
    return 8 * (3 * capacity * capacity + capacity * (n_features + 20))
