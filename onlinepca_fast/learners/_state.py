"""The state objects of the learners: what the compiled trial loop keeps.

A learner holds one state object and never asks which kind it is.  Each
kind owns its arrays (pickled with the learner), its binding to the
compiled engine (``src/learner.c`` over ``src/state_dense.c`` or
``src/state_clustered.c``), its accessors (eigenvalues, components, the
density matrix, the weights and draws of the parameter) and its
conversion to the other kind:

:class:`DenseState`
    all n eigenpairs of ``log W`` (or ``A = log W^0 - eta C^t`` for the
    cumulative learners): ``lam`` and ``omega = exp(lam)`` (n,), ``q``
    (n, n).  The experts' and the simplex learner's weights are its
    diagonal without a basis (``q`` is then 1 x 1).
:class:`ClusteredState`
    ``log W = Q diag(mu) Q^T + mu_c (I - Q Q^T)``: m explicit eigenpairs
    (the columns of ``Q = B^T R``) plus one implicit cluster, the orthogonal
    complement of Q, with the single log-eigenvalue ``mu_c`` and
    multiplicity ``n - m``.  ``W^0 = I/n`` is the pure cluster; capped
    eigenvalues merge back into it.  Memory and time per trial follow m,
    not n.  The cumulative learners keep A the same way: the directions no
    instance has reached are the cluster (``mu_c = -log n``, or 0 for
    Follow the Leader).

What W is, given the state, is the learner's *law*: ``"meg"`` (W's
eigenvalues are ``omega``, capped by the trial itself: WK Alg. 5, YL
Alg. 4 and 5), ``"cumulative"`` (``W = cap(exp(A))``, WK Alg. 6) or
``"leader"`` (Follow the Leader: the projection onto the k leading
directions).  Nothing n x n is formed unless asked for, and then only up
to ``max_features`` (default :data:`MAX_DENSE`).

``state="auto"`` (:func:`auto_bounds`) chooses the representation by m,
the number of explicit directions, at every n: dense once ``m >= hi`` (and
n <= MAX_DENSE), clustered again once ``m <= lo`` (capping collapsed the
spectrum; the gap keeps it from flipping every trial).  The trial loop
stops after the trial that makes the other representation due
(``m_stop``); :meth:`switched` then converts.  Decided by the state alone,
never by chunk timing or the caller's batch split.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _kernels
from .._validation import as_generator
from ..kernels import cap_log, sample_corner
from ._base import SAMPLERS

__all__ = ["DenseState", "ClusteredState", "MAX_DENSE", "auto_bounds", "refuse_dense",
           "initial_state"]

#: Dense n x n objects (``density_``, ``sample_projection``,
#: ``full_eigensystem``) are formed only up to this n unless asked otherwise.
MAX_DENSE = 10_000
#: First capacity (explicit columns) of a new clustered state.
_FIRST_CAPACITY = 32
#: Below this many features ``state="auto"`` keeps the dense state: the two
#: are within ~15% at every m there, and the dense draw is the one the NumPy
#: reference reproduces trial by trial.  Above it the crossover measured in
#: the steady state (OnlinePCA, k = 10, one BLAS thread; clustered / dense
#: per-trial time) is near m = n / 2: at n = 50 0.5-0.8 up to m/n = 0.4,
#: par at 0.5; at n = 200 0.35-0.9 up to m/n = 0.6; at n = 1000 0.06 at
#: m/n = 0.05, 0.8 at 0.4 (docs: performance).
AUTO_DENSE_BELOW = 40
#: The fraction of explicit directions from which ``state="auto"`` is dense.
AUTO_DENSE_FRACTION = 0.5


def auto_bounds(n):
    """(lo, hi): ``state="auto"`` is dense once m >= hi (and n <= MAX_DENSE),
    clustered once m <= lo; lo < hi (hysteresis), lo = -1: never clustered,
    hi = n + 1: never dense."""
    if n < AUTO_DENSE_BELOW:
        return -1, 0
    f = AUTO_DENSE_FRACTION
    hi = max(1, math.ceil(f * n)) if n <= MAX_DENSE else n + 1
    lo = min(hi - 1, math.floor(f * n / 2))
    return lo, hi


def refuse_dense(n, what, max_features):
    """Refuse (ValueError) to form an n x n object beyond `max_features`."""
    if max_features is None:
        return
    if n > max_features:
        raise ValueError(
            f"{what} is an n x n matrix and n_features = {n} > max_features = "
            f"{max_features} ({n * n * 8 / 2**30:.3g} GiB); pass a larger "
            "max_features to form it anyway")


def _complement(count, Q):
    """`count` orthonormal directions orthogonal to Q, chosen
    deterministically: the unit vectors e_0, e_1, ... in turn, each
    projected out of Q and of the ones taken (twice), taken when more than
    half its norm remains (as Follow the Leader's loss in
    ``src/state_clustered_draw.c``).  Fewer than 2 count + 2 m vectors are
    tried.  Any orthonormal basis of the complement is an eigenbasis of W."""
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


def _haar_directions(rng, Q, count):
    """`count` orthonormal directions drawn uniformly in the complement of Q."""
    G = rng.standard_normal((Q.shape[0], count))
    for _ in range(2):
        G -= Q @ (Q.T @ G)
    return np.linalg.qr(G)[0]


class _State:
    """What both representations share.  ``law`` is the learner's (see the
    module doc); ``n`` the number of features."""

    law: str
    n: int

    def density(self, k):  # pragma: no cover - abstract
        raise NotImplementedError

    def drawn(self, u):
        """The uniform of a draw: a float in [0, 1) or a Generator."""
        return u


class DenseState(_State):
    """All n eigenpairs (see the module doc).  ``basis`` False: weights
    only (the experts, the simplex learner)."""

    clustered = False
    representation = "dense"

    def __init__(self, law, lam, q):
        self.law = law
        self.n = lam.shape[0]
        self.lam = lam
        self.omega = np.exp(lam)
        self.q = q

    @classmethod
    def initial(cls, law, n, value, basis=True):
        """W^0 = I/n: every log-eigenvalue `value`, the standard basis."""
        return cls(law, np.full(n, value), np.eye(n) if basis else np.zeros((1, 1)))

    # -- the compiled engine ---------------------------------------------------------
    def engine(self, config, shared):
        return _kernels.Engine.dense(config, self.lam, self.omega, self.q, shared)

    def switched(self, lo, hi):
        """The clustered state once the explicit directions are at most lo
        (``state="auto"``), else None."""
        if _kernels.explicit_count(self.lam) > lo:
            return None
        return ClusteredState.from_dense(self)

    def m_stop(self, lo, hi):
        return lo

    def grown(self):  # pragma: no cover - the dense state never needs room
        raise RuntimeError("the dense state has no capacity to grow")

    # -- re-orthogonalisation ----------------------------------------------------------
    def snapshot(self):
        """What re-orthogonalisation changes (to tell whether an interrupted
        one was applied)."""
        return self.q.copy()

    def reorthogonalize(self):
        """One Newton-Schulz step towards the nearest orthogonal matrix.

        Each rank-one update leaves the eigenvectors orthonormal to working
        precision, but the rounding accumulates: ``||Q^T Q - I||`` grows by
        about 1e-18 to 1e-16 per trial (measured at n = 20..200), i.e. past
        1e-10 after 10^6..10^8 trials.  ``Q <- Q (I + (I - Q^T Q)/2)`` takes
        an error e to ~ e^2 (plus rounding, ~1e-15) and moves each column by
        O(e), the size of the error it already carries as an eigenvector; it
        keeps the columns' order, so eigenvalues and draws are unaffected.
        In place: the engine points into ``q``.
        """
        q = self.q
        q += 0.5 * (q @ (np.eye(q.shape[0]) - q.T @ q))

    # -- accessors ------------------------------------------------------------------
    def weights(self, d):
        """The eigenvalues of W (probabilities, in the order of ``q``)."""
        if self.law == "cumulative":  # cap_log is accurate at any level of lam
            return np.exp(cap_log(self.lam, d))
        if self.law == "leader":
            w = np.zeros(self.n)
            w[self.n - d:] = 1.0 / d
            return w
        return self.omega.copy()

    def eigenvalues(self):
        return self.lam.copy()

    def eigenvectors(self):
        return self.q.copy()

    cluster_value = math.nan
    cluster_multiplicity = 0

    @property
    def explicit(self):
        """m: n minus the top group (``opf_explicit_count``)."""
        return _kernels.explicit_count(self.lam)

    def full_eigensystem(self, max_features):
        return self.lam.copy(), self.q.copy()

    def kept_basis(self, k):
        """The k eigenvectors of W with the smallest eigenvalues (n x k)."""
        return self.q[:, :k]

    def corner(self, d, rng, sampler):
        """A corner of size d drawn from the weights of W (WK Alg. 2)."""
        return sample_corner(self.weights(d), d, rng, method=sampler)

    def sampled_basis(self, k, rng, sampler):
        """The k directions outside a drawn corner (n x k)."""
        if self.law == "leader":
            return self.kept_basis(k).copy()
        corner = self.corner(self.n - k, rng, sampler)
        keep = np.setdiff1d(np.arange(self.n), corner)
        return self.q[:, keep]

    def density(self, k):
        return (self.q * self.weights(self.n - k)) @ self.q.T

    def spectrum(self):
        """(ascending explicit eigenvalues, cluster value or None, its
        multiplicity) -- the cumulative learners' scatter read-out."""
        return self.lam, None, 0

    def direction(self, i):
        return self.q[:, i].copy()


class ClusteredState(_State):
    """m explicit eigenpairs plus one cluster (see the module doc).

    Arrays: ``b`` (cap, n), ``r`` (cap, cap), ``mu`` and ``omega`` (cap,),
    ``clus`` = [mu_c, exp(mu_c)], ``dims`` = [m, nb].
    """

    clustered = True
    representation = "clustered"

    def __init__(self, law, n, b, r, mu, omega, clus, dims):
        self.law = law
        self.n = n
        self.b, self.r, self.mu, self.omega = b, r, mu, omega
        self.clus = clus
        self.dims = dims

    @classmethod
    def initial(cls, law, n, value):
        """The pure cluster at `value` (W^0 = I/n: log(1/n); Follow the
        Leader's A = -C^0 = 0)."""
        cap = min(n, _FIRST_CAPACITY)
        return cls(law, n, np.zeros((cap, n)), np.zeros((cap, cap)), np.zeros(cap),
                   np.zeros(cap), np.array([value, math.exp(value)]),
                   np.zeros(2, dtype=np.intp))

    @classmethod
    def from_dense(cls, dense):
        """The explicit eigenpairs of a dense state, its top group as the
        cluster (the same log W, or A)."""
        lam, q = dense.lam, dense.q
        n = lam.shape[0]
        m = _kernels.explicit_count(lam)
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
        return cls(dense.law, n, b, r, mu, om, np.array([mu_c, math.exp(mu_c)]),
                   np.array([m, m], dtype=np.intp))

    @property
    def m(self):
        return int(self.dims[0])

    explicit = m

    # -- the compiled engine ---------------------------------------------------------
    def engine(self, config, shared):
        return _kernels.Engine.clustered(config, self.b, self.r, self.mu, self.omega,
                                         self.clus, self.dims, shared)

    def switched(self, lo, hi):
        """The dense state once the explicit directions are at least hi
        (``state="auto"``): the same log W (or A) with an orthonormal basis
        of the cluster appended; else None."""
        if self.m < hi:
            return None
        values, vectors = self.full_eigensystem(None)
        return DenseState(self.law, np.ascontiguousarray(values),
                          np.ascontiguousarray(vectors))

    def m_stop(self, lo, hi):
        return hi

    def grown(self):
        """Larger arrays, the state copied (when a trial needs room: by
        half, and to 3m/2 + 17, so that B is compressed at most every ~m/2
        trials).  A new object: the old one stays valid until the learner
        takes this one (an interruption leaves one or the other)."""
        n = self.n
        cap = self.b.shape[0]
        m, nb = int(self.dims[0]), int(self.dims[1])
        new = min(n, max(cap + 1, cap + cap // 2, (3 * m) // 2 + 17))
        b = np.zeros((new, n))
        b[:nb] = self.b[:nb]
        r = np.zeros((new, new))
        r[:nb, :m] = self.r[:nb, :m]
        mu = np.zeros(new)
        mu[:m] = self.mu[:m]
        om = np.zeros(new)
        om[:m] = self.omega[:m]
        return ClusteredState(self.law, n, b, r, mu, om, self.clus.copy(), self.dims.copy())

    # -- re-orthogonalisation ----------------------------------------------------------
    def snapshot(self):
        m, nb = int(self.dims[0]), int(self.dims[1])
        return (self.dims.copy(), self.b[:nb].copy(), self.r[:nb, :m].copy())

    def reorthogonalize(self):
        """B <- R^T B (m rows), R <- I, then one Newton-Schulz step on B's
        rows (see :meth:`DenseState.reorthogonalize`): O(n m^2), in place."""
        m, nb = int(self.dims[0]), int(self.dims[1])
        B = self.r[:nb, :m].T @ self.b[:nb]
        B += 0.5 * ((np.eye(m) - B @ B.T) @ B)
        self.b[:m] = B
        self.b[m:nb] = 0.0
        self.r[:nb, :] = 0.0
        self.r[np.arange(m), np.arange(m)] = 1.0
        self.dims[1] = m

    # -- accessors ------------------------------------------------------------------
    def basis(self, cols=None):
        """Q[:, :cols] (n x cols), the explicit eigenvectors."""
        m, nb = int(self.dims[0]), int(self.dims[1])
        cols = m if cols is None else min(cols, m)
        return self.b[:nb].T @ self.r[:nb, :cols]

    def eigenvalues(self):
        return self.mu[:self.m].copy()

    def eigenvectors(self):
        return self.basis()

    @property
    def cluster_value(self):
        return float(self.clus[0])

    @property
    def cluster_multiplicity(self):
        return self.n - self.m

    def full_eigensystem(self, max_features):
        n = self.n
        refuse_dense(n, "full_eigensystem()", max_features)
        m = self.m
        Q = self.basis()
        full = np.linalg.qr(Q, mode="complete")[0] if m else np.eye(n)
        full[:, :m] = Q
        values = np.concatenate([self.mu[:m], np.full(n - m, self.clus[0])])
        return values, full

    def kept_basis(self, k):
        """The k eigenvectors of W with the smallest eigenvalues: the
        explicit ones (all below the cluster), then cluster directions."""
        Q = self.basis()
        if Q.shape[1] >= k:
            return Q[:, :k].copy()
        return np.hstack([Q, _complement(k - Q.shape[1], Q)])

    def weights(self, d):
        """(explicit weights, cluster weight, multiplicity, cluster's capped
        log-weight) of W: the state's (law "meg"), or cap(exp(A)) as the
        trial forms it (law "cumulative", ``opf_cl_capped_weights``)."""
        m = self.m
        c = self.n - m
        if self.law != "cumulative":
            return self.omega[:m].copy(), float(self.clus[1]), c, float(self.clus[0])
        w, wc, lc = _kernels.cluster_capped_weights(self.n, d, self.mu[:m],
                                                    float(self.clus[0]))
        return w, wc, c, lc

    def sampled_basis(self, k, rng, sampler):
        """The k directions outside a corner drawn as the trials draw it
        (``opf_cl_corner_plan``, n x k); cluster directions left out of the
        corner are drawn uniformly in the complement with the same
        generator."""
        if self.law == "leader":
            return self.kept_basis(k)
        d = self.n - k
        w, wc, _, lc = self.weights(d)
        corner, out_cluster = _kernels.cluster_corner(
            self.n, d, w, lc, wc, SAMPLERS[sampler], rng)
        Q = self.basis()
        V = Q[:, np.setdiff1d(np.arange(w.shape[0]), corner)]
        if out_cluster:
            V = np.hstack([V, _haar_directions(rng, Q, out_cluster)])
        return V

    def density(self, k):
        n = self.n
        refuse_dense(n, "density_", MAX_DENSE)
        if self.law == "leader":  # uniform off the k leading
            V = self.kept_basis(k)
            return (np.eye(n) - V @ V.T) / (n - k)
        w, wc, c, _ = self.weights(n - k)
        Q = self.basis()
        return (Q * (w - wc)) @ Q.T + wc * np.eye(n)

    def spectrum(self):
        return self.mu[:self.m], float(self.clus[0]), self.n - self.m


def initial_state(law, n, representation, basis=True):
    """The state at reset, W^0 = I/n (Follow the Leader: A = -C^0 = 0), in
    the representation ``"dense"`` or ``"clustered"``; ``basis`` False: the
    weights alone (the experts, the simplex learner)."""
    if representation == "clustered":
        value = 0.0 if law == "leader" else -math.log(n)  # libm's log, as the C code
        return ClusteredState.initial(law, n, value)
    value = 0.0 if law == "leader" else -np.log(n)
    return DenseState.initial(law, n, value, basis)


def random_basis_with(rng, U, k):
    """U's columns completed to k by directions drawn uniformly in their
    complement (the limit learner's draw)."""
    extra = k - U.shape[1]
    if not extra:
        return U.copy()
    return np.hstack([U, _haar_directions(rng, U, extra)])


def as_rng(learner_rng, random_state):
    """The generator of a draw: the learner's own, or one from random_state."""
    return learner_rng if random_state is None else as_generator(random_state)
