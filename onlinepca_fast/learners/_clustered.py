"""The capped-structure state of the online PCA learners.

``log W = Q diag(mu) Q^T + mu_c (I - Q Q^T)``: m explicit eigenpairs (the
columns of Q, ``Q = B^T R``) plus one implicit cluster, the orthogonal
complement of Q, with the single log-eigenvalue ``mu_c`` and multiplicity
``n - m``.  ``W^0 = I/n`` is the pure cluster; capped eigenvalues merge back
into it.  Memory and time per trial follow m, not n (``src/state_clustered.c``).

The cumulative learners (WK Algorithm 6, Follow the Leader) keep
``A = log W^0 - eta C^t`` the same way: the directions no instance has
reached are the cluster (``mu_c = -log n``, or 0 for Follow the Leader), so
a stream of t rows in n dimensions costs O(n t) per trial, not O(n^2);
``W = cap(exp(A))`` is formed from the m + 1 groups when needed.
Nothing n x n is formed unless asked for, and then only up to
``max_features`` (default :data:`MAX_DENSE`).
"""

from __future__ import annotations

import dataclasses

import math

import numpy as np

from .. import _kernels
from .._typing import FloatArray
from .._validation import as_generator
from ..kernels import sample_corner

#: Dense n x n objects (``density_``, ``sample_projection``,
#: ``full_eigensystem``) are formed only up to this n unless asked otherwise.
MAX_DENSE = 10_000
#: First capacity (explicit columns) of a reset learner.
_FIRST_CAPACITY = 32
#: ``state="auto"`` chooses the representation by m, the number of explicit
#: directions, at every n: dense once m >= densify_at(n) n (and n <=
#: MAX_DENSE), clustered again once m <= densify_at(n) n / 2 (capping
#: collapsed the spectrum; the gap keeps it from flipping every trial).
#: Decided by the state after each trial (:func:`auto_bounds`, the trial
#: loops' ``m_stop``), never by chunk timing or the caller's batch split.
#: A clustered trial costs O(n m + m^3), a dense one O(n^2) plus the
#: non-deflated block.  Crossover measured by ``benchmarks/crossover_state.py``
#: in the steady state (OnlinePCA, k = 10, m explicit directions held, one
#: BLAS thread; clustered / dense per-trial time): at n = 50 0.5-0.8 up to
#: m/n = 0.4, par at 0.5; at n = 200 0.35-0.9 up to m/n = 0.6; at n = 1000
#: 0.06 at m/n = 0.05, 0.8 at 0.4.  Below 40 features the two are within
#: ~15% at every m and the dense state (whose draw the NumPy reference
#: reproduces trial by trial) is kept.
AUTO_DENSE_BELOW = 40


def densify_at(n):
    """The fraction of explicit directions from which ``state="auto"`` keeps
    a learner with n features dense (0: always dense)."""
    if n < AUTO_DENSE_BELOW:
        return 0.0
    return 0.5


def auto_bounds(n):
    """(lo, hi): ``state="auto"`` is dense once m >= hi (and n <= MAX_DENSE),
    clustered once m <= lo; lo < hi (hysteresis), lo = -1: never clustered,
    hi = n + 1: never dense."""
    f = densify_at(n)
    if f == 0.0:
        return -1, 0
    hi = max(1, math.ceil(f * n)) if n <= MAX_DENSE else n + 1
    lo = min(hi - 1, math.floor(f * n / 2))
    return lo, hi


def explicit_count(lam):
    """m of a dense ascending spectrum: n minus its top group (within
    4 eps max(1, |top|) of the largest), as ``opf_explicit_count`` (C)."""
    n = lam.shape[0]
    top = float(lam[n - 1])
    tol = 4.0 * 2.220446049250313e-16 * max(1.0, abs(top))
    c = 0
    while c < n and lam[n - 1 - c] >= top - tol:
        c += 1
    return n - c


def refuse_dense(n, what, max_features):
    if max_features is None:
        return
    if n > max_features:
        raise ValueError(
            f"{what} is an n x n matrix and n_features = {n} > max_features = "
            f"{max_features} ({n * n * 8 / 2**30:.3g} GiB); pass a larger "
            "max_features to form it anyway")


class ClusteredState:
    """The clustered state's arrays and operations (a mixin of OnlinePCA and
    of the cumulative learners).

    Arrays (owned by the learner, pickled with it): ``_b`` (cap, n),
    ``_r`` (cap, cap), ``_cmu`` and ``_comega`` (cap,), ``_clus`` =
    [mu_c, exp(mu_c)], ``_dims`` = [m, nb], ``_t``.
    """

    def _cl_reset(self, n):
        cap = min(n, _FIRST_CAPACITY)
        self._b = np.zeros((cap, n))
        self._r = np.zeros((cap, cap))
        self._cmu = np.zeros(cap)
        self._comega = np.zeros(cap)
        mu_c = self._cluster_init(n)
        self._clus = np.array([mu_c, math.exp(mu_c)])
        self._dims = np.zeros(2, dtype=np.intp)

    def _cluster_init(self, n):
        """The cluster's value at reset: log(1/n) (hook)."""
        return -math.log(n)  # libm's log, as the C code

    #: Whether the state is A of WK Algorithm 6 (set by the cumulative learners).
    _cumulative = False

    def _cl_cumulative(self):
        return self._cumulative

    def _cl_m(self):
        return int(self._dims[0])

    def _cl_basis(self, cols=None):
        """Q[:, :cols] (n x cols), the explicit eigenvectors."""
        m, nb = int(self._dims[0]), int(self._dims[1])
        cols = m if cols is None else min(cols, m)
        return self._b[:nb].T @ self._r[:nb, :cols]

    def _cl_complement(self, count, Q):
        """`count` orthonormal directions of the cluster (orthogonal to Q),
        chosen deterministically: the unit vectors e_0, e_1, ... in turn,
        each projected out of Q and of the ones taken (twice), taken when
        more than half its norm remains (as Follow the Leader's loss in
        ``src/state_clustered.c``).  Fewer than 2 count + 2 m vectors are tried.
        Any orthonormal basis of the complement is an eigenbasis of W."""
        n = Q.shape[0]
        if count <= 0:
            return np.zeros((n, 0))
        out = np.zeros((n, count))
        got = 0
        for i in range(n):
            v = np.zeros(n)
            v[i] = 1.0
            for _ in range(2):
                v -= Q @ (Q.T @ v)
                v -= out[:, :got] @ (out[:, :got].T @ v)
            norm = np.linalg.norm(v)
            if norm > 0.5:
                out[:, got] = v / norm
                got += 1
                if got == count:
                    break
        return out

    def _cl_kept_basis(self):
        """The k eigenvectors of W with the smallest eigenvalues: the
        explicit ones (all below the cluster), then cluster directions."""
        k = self.n_components
        Q = self._cl_basis()
        if Q.shape[1] >= k:
            return Q[:, :k].copy()
        return np.hstack([Q, self._cl_complement(k - Q.shape[1], Q)])

    def _cl_weights(self):
        """(explicit weights, cluster weight, multiplicity, cluster's capped
        log-weight) of W: the state's (OnlinePCA), or cap(exp(A)) formed as
        ``src/state_clustered.c`` does (the cumulative learners)."""
        m = self._cl_m()
        n = self.n_features_in_
        c = n - m
        if not self._cl_cumulative():
            return self._comega[:m].copy(), float(self._clus[1]), c, float(self._clus[0])
        d = n - self.n_components
        mu, mu_c = self._cmu[:m], float(self._clus[0])
        vd = mu_c if c >= d else float(mu[m - 1 - (d - c - 1)])
        # the level shift of src/logweights.h (opf_cap_level)
        shift = vd if abs(vd) > _kernels.CAP_SHIFT_AT and math.isfinite(vd) else 0.0
        values = np.concatenate([[mu_c] * (c > 0), mu[::-1]]) - shift
        mult = np.concatenate([[float(c)] * (c > 0), np.ones(m)])
        out = np.empty_like(values)
        _kernels.cap_groups(values, mult, d, out)
        lc = float(out[0]) if c > 0 else 0.0
        return np.exp(out[int(c > 0):][::-1]), math.exp(lc) if c > 0 else 0.0, c, lc

    def _cl_sampled_basis(self, random_state):
        """The k directions outside a corner drawn as the trials draw it
        (n x k); cluster slots left out of the corner are directions drawn
        uniformly in the complement with the same generator."""
        rng = self._rng if random_state is None else as_generator(random_state)
        n, k = self.n_features_in_, self.n_components
        d = n - k
        if not self._randomized:
            return self._cl_kept_basis()  # Follow the Leader
        w, wc, c, lc = self._cl_weights()
        m = w.shape[0]
        Q = self._cl_basis()
        if c > 0 and lc == -math.log(d):  # exactly the C code's cap
            dd = d - c  # the cluster is in every corner
            corner = (sample_corner(w, dd, rng, method=self._sampler_name())
                      if dd > 0 else np.zeros(0, dtype=np.intp))
            out_cluster = 0
        elif c > k:
            # as src/state_clustered.c: c - k cluster slots in every corner, k
            # virtual ones with the rest of the cluster's mass; corners of m
            if m:
                pv = min(1.0, max(0.0, 1.0 - c * (1.0 - d * wc) / k))
                reduced = np.concatenate([d * w, np.full(k, pv)])
                corner = sample_corner(reduced, m, rng, method=self._sampler_name())
            else:
                corner = np.zeros(0, dtype=np.intp)
            out_cluster = k - int(np.count_nonzero(corner >= m))
            corner = corner[corner < m]
        else:
            full = np.concatenate([w, np.full(c, wc)])
            corner = sample_corner(full, d, rng, method=self._sampler_name())
            out_cluster = c - int(np.count_nonzero(corner >= m))
            corner = corner[corner < m]
        keep = np.setdiff1d(np.arange(m), corner)
        V = Q[:, keep]
        if out_cluster:
            G = rng.standard_normal((n, out_cluster))
            for _ in range(2):
                G -= Q @ (Q.T @ G)
            G = np.linalg.qr(G)[0]
            V = np.hstack([V, G])
        return V

    def _cl_grow(self):
        """Larger arrays, the state copied (the engine's callback when a
        trial needs room: by half, and to 3m/2 + 17 so that B is compressed
        at most every ~m/2 trials); returns (b, r, mu, omega)."""
        n = self.n_features_in_
        cap = self._b.shape[0]
        m, nb = int(self._dims[0]), int(self._dims[1])
        new = min(n, max(cap + 1, cap + cap // 2, (3 * m) // 2 + 17))
        b = np.zeros((new, n))
        b[:nb] = self._b[:nb]
        r = np.zeros((new, new))
        r[:nb, :m] = self._r[:nb, :m]
        mu = np.zeros(new)
        mu[:m] = self._cmu[:m]
        om = np.zeros(new)
        om[:m] = self._comega[:m]
        # one update (an interruption cannot leave a mix of old and new)
        self.__dict__.update(_b=b, _r=r, _cmu=mu, _comega=om)
        return b, r, mu, om

    def _cl_engine(self, config):
        return _kernels.Engine(
            state=_kernels.STATE_CLUSTERED, lam=self._cmu, omega=self._comega,
            b=self._b, r=self._r, clus=self._clus, dims=self._dims, t=self._t,
            grow=self._cl_grow, mean=self._mean, rate=self._rate,
            limit=self._limit_option(config), **dataclasses.asdict(config))

    def _cl_reorthogonalize(self):
        """B <- R^T B (m rows), R <- I, then one Newton-Schulz step on B's
        rows (see the dense ``_reorthogonalize``): O(n m^2), in place."""
        m, nb = int(self._dims[0]), int(self._dims[1])
        B = self._r[:nb, :m].T @ self._b[:nb]
        B += 0.5 * ((np.eye(m) - B @ B.T) @ B)
        self._b[:m] = B
        self._b[m:nb] = 0.0
        self._r[:nb, :] = 0.0
        self._r[np.arange(m), np.arange(m)] = 1.0
        self._dims[1] = m

    def _cl_snapshot(self):
        m, nb = int(self._dims[0]), int(self._dims[1])
        return (self._dims.copy(), self._b[:nb].copy(), self._r[:nb, :m].copy())

    # -- the learner's hooks and attributes: dense, or clustered ----------------
    def _auto_switches(self, p):
        """Whether ``state="auto"`` may change representation mid-stream."""
        return p["state"] == "auto" and self._share(p) != "past"

    def _wants_clustered(self, p, n):
        share = self._share(p)
        if p["state"] == "clustered":
            if share == "past":
                raise ValueError("state='clustered' cannot mix in the past average "
                                 "(share='past' changes the eigenbasis); use "
                                 "state='dense' or another share")
            return True
        # auto at reset (m = 0): clustered unless dense wins at every m
        return self._auto_switches(p) and auto_bounds(n)[1] > 0

    def _is_clustered(self):
        return self.__dict__.get("_clustered", False)

    def _plan(self, X, matrix, amax, name, reset):
        plan = super()._plan(X, matrix, amax, name, reset)
        clustered = self._wants_clustered(plan[2], X.shape[1])
        if (not reset and clustered != self._is_clustered()
                and not self._auto_switches(plan[2])):
            raise ValueError(
                f"state={self.state!r} would change how the fitted learner keeps "
                f"log W (it is {'clustered' if self._is_clustered() else 'dense'}); "
                "set state before fit, not mid-stream")
        return plan

    def _reset(self, n, plan):
        self._clustered = self._wants_clustered(plan[2], n)
        super()._reset(n, plan)

    def _reset_state(self, p, n):
        if not self._is_clustered():
            for key in ("_b", "_r", "_cmu", "_comega", "_clus", "_dims"):
                self.__dict__.pop(key, None)  # a refit may leave the clustered state
            return super()._reset_state(p, n)
        self._lam = self._omega = self._q = None
        self._mean = self._initial_mean(p, n)
        self._cl_reset(n)

    def _get_engine(self, config):
        if not self._is_clustered():
            return super()._get_engine(config)
        engine = getattr(self, "_engine", None)
        # (an engine interrupted while growing may still hold the old arrays)
        if engine is None or self._engine_key != config or engine.bound_b is not self._b:
            self._engine = self._cl_engine(config)
            self._engine_key = config
        return self._engine

    def _next_engine(self, engine, config, p):
        """``state="auto"``, before the first trial of a batch and whenever
        the trial loop stopped: the representation the state calls for (a
        rule of the state alone, :func:`auto_bounds`, so the change lands
        after the same trial whatever the batch split, timing, pickling or
        interruption).  Dense once m >= hi (n <= MAX_DENSE): the same log W
        (or A) with an orthonormal basis of the cluster appended;
        clustered once m <= lo: the explicit eigenpairs, the top group as
        the cluster.  Sets the engine's ``m_stop`` so that its loop stops
        after the trial that makes the other representation due."""
        if not self._auto_switches(p):
            return super()._next_engine(engine, config, p)
        lo, hi = auto_bounds(config.n)
        if self._is_clustered() and self._cl_m() >= hi:
            self._densify()
        elif not self._is_clustered() and explicit_count(self._lam) <= lo:
            self._clusterify()
        if self.__dict__.get("_engine") is not engine:  # the state changed
            engine = self._get_engine(config)
        engine.m_stop = hi if self._is_clustered() else lo
        return engine

    def _densify(self):
        values, vectors = self.full_eigensystem(max_features=None)
        lam = np.ascontiguousarray(values)
        # one update (an interruption leaves one state or the other)
        self.__dict__.update(_lam=lam, _omega=np.exp(lam), _q=np.ascontiguousarray(vectors),
                             _clustered=False, _engine=None,
                             _engine_key=None)
        for key in ("_b", "_r", "_cmu", "_comega", "_clus", "_dims"):
            self.__dict__.pop(key, None)

    def _clusterify(self):
        lam, q = self._lam, self._q
        n = lam.shape[0]
        m = explicit_count(lam)
        cap = min(n, max(_FIRST_CAPACITY, (3 * m) // 2 + 17))
        b = np.zeros((cap, n))
        b[:m] = q[:, :m].T
        r = np.zeros((cap, cap))
        r[np.arange(m), np.arange(m)] = 1.0
        mu = np.zeros(cap)
        mu[:m] = lam[:m]
        om = np.zeros(cap)
        om[:m] = np.exp(lam[:m])
        mu_c = float(lam[n - 1])
        self.__dict__.update(_b=b, _r=r, _cmu=mu, _comega=om,
                             _clus=np.array([mu_c, math.exp(mu_c)]),
                             _dims=np.array([m, m], dtype=np.intp), _clustered=True,
                             _lam=None, _omega=None, _q=None, _engine=None,
                             _engine_key=None)

    def _basis_snapshot(self):
        return self._cl_snapshot() if self._is_clustered() else super()._basis_snapshot()

    def _reorthogonalize(self):
        if self._is_clustered():
            self._cl_reorthogonalize()
        else:
            super()._reorthogonalize()

    def _kept_basis(self):
        return self._cl_kept_basis() if self._is_clustered() else super()._kept_basis()

    def _sampled_basis(self, random_state):
        if self._is_clustered():
            return self._cl_sampled_basis(random_state)
        return super()._sampled_basis(random_state)

    @property
    def eigenvalues_(self) -> FloatArray:
        """Ascending eigenvalues of ``log W`` (of ``A`` for the cumulative
        learners): all n (dense state) or the m explicit ones (clustered
        state)."""
        self._check_fitted()
        if self._is_clustered():
            return self._cmu[:self._cl_m()].copy()
        return self._lam.copy()

    @property
    def eigenvectors_(self) -> FloatArray:
        """Orthonormal eigenvectors (columns) matching ``eigenvalues_``."""
        self._check_fitted()
        if self._is_clustered():
            return self._cl_basis()
        return self._q.copy()

    @property
    def cluster_value_(self) -> float:
        """The eigenvalue (of ``log W``, or ``A``) of every direction
        orthogonal to ``eigenvectors_`` (NaN in the dense state)."""
        self._check_fitted()
        return float(self._clus[0]) if self._is_clustered() else math.nan

    @property
    def cluster_multiplicity_(self) -> int:
        """How many eigenvalues equal ``cluster_value_`` (0 in the dense state)."""
        self._check_fitted()
        return self.n_features_in_ - self._cl_m() if self._is_clustered() else 0

    @property
    def density_(self) -> FloatArray:
        """The density matrix W, formed on request (the clustered state
        refuses above 10,000 features)."""
        self._check_fitted()
        if not self._is_clustered():
            return (self._q * self._weights()) @ self._q.T
        n = self.n_features_in_
        refuse_dense(n, "density_", MAX_DENSE)
        if not self._randomized:  # Follow the Leader: uniform off the k leading
            V = self._cl_kept_basis()
            return (np.eye(n) - V @ V.T) / (n - self.n_components)
        w, wc, c, _ = self._cl_weights()
        Q = self._cl_basis()
        return (Q * (w - wc)) @ Q.T + wc * np.eye(n)

    def full_eigensystem(self, max_features: int | None = MAX_DENSE) -> tuple[FloatArray, FloatArray]:
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
        if not self._is_clustered():
            return self._lam.copy(), self._q.copy()
        n = self.n_features_in_
        refuse_dense(n, "full_eigensystem()", max_features)
        m = self._cl_m()
        Q = self._cl_basis()
        full = np.linalg.qr(Q, mode="complete")[0] if m else np.eye(n)
        full[:, :m] = Q
        values = np.concatenate([self._cmu[:m], np.full(n - m, self._clus[0])])
        return values, full
