"""The rate modes, decided once: ``eta`` and ``alpha`` as "auto" or a number.

A :class:`Rate` (and a :class:`Mixing`) is made from the checked
hyper-parameter and answers every question the learner layer asks of it:
the engine's fields, the step bound the input checks use, the label of a
message, the reported ``eta_`` / ``mixability_gap_`` / ``alpha_``.  The
per-trial logic is ``src/adaptive_rate.c`` (derivation and bounds:
docs/adaptive_rates.md); eta="auto"'s master over a learner and its
eta -> infinity limit is ``src/limit.c``, read here by :class:`Master`.
"""

from __future__ import annotations

import numpy as np

from .. import _kernels
from .._guard import reads_state
from .._validation import ETA

__all__ = ["Rate", "Mixing", "Master", "SketchMaster", "rate_options", "mixing_options",
           "RatesMixin", "MasterMixin"]


#: The rates that are state (AdaHedge, src/adaptive_rate.h): "auto", with the
#: master over the rate learner where the learner has one, and "adahedge",
#: the rate learner alone -- the words the eta check accepts.
AUTO_RATES = ETA.words


class Rate:
    """A learning rate: ``"auto"`` or ``"adahedge"`` (AdaHedge, the rate is
    state: ``_rate`` = [Delta, eta_t, ...], ``src/adaptive_rate.h``; with
    ``"auto"`` the learners that have a master run it), a number, or None (a
    learner without one: Follow the Leader)."""

    __slots__ = ("auto", "value", "word")

    def __init__(self, eta):
        self.auto = isinstance(eta, str) and eta in AUTO_RATES
        self.word = eta if self.auto else None
        self.value = None if self.auto or eta is None else float(eta)

    @property
    def bound(self):
        """The rate that bounds a step in the input checks: the number, or 1
        for "auto" (whose steps are ``|x|^2`` at most: ``src/adaptive_rate.c``
        rescales the state instead of taking larger ones) and without a rate."""
        return 1.0 if self.value is None else self.value

    @property
    def label(self):
        """How a message names it ("" without a rate)."""
        if self.auto:
            return f'eta="{self.word}"'
        return "" if self.value is None else f"eta = {self.value!r}"

    def fields(self):
        """The engine's fields (``opf_learner``: eta, and rate != NULL)."""
        return dict(eta=1.0, auto_rate=True) if self.auto else dict(eta=self.value)

    def current(self, rate_state):
        """``eta_``: the number, or the rate of the next trial."""
        return float(rate_state[1]) if self.auto else self.value

    def gap(self, rate_state):
        """``mixability_gap_``: Delta_T of "auto", 0 with a number."""
        return float(rate_state[0]) if self.auto else 0.0


class Mixing:
    """A mixing rate: a number in [0, 1), or ``"auto"``: ``alpha_t =
    1/(t+1)**2`` at trial t (``opf_rate_alpha``)."""

    __slots__ = ("auto", "value")

    def __init__(self, alpha):
        self.auto = isinstance(alpha, str) and alpha == "auto"
        self.value = 0.0 if self.auto else float(alpha)

    def fields(self):
        return dict(alpha=self.value, alpha_auto=self.auto)

    def current(self, t):
        """``alpha_``: the mixing rate of the next trial after t trials."""
        return 1.0 / (t + 2) ** 2 if self.auto else self.value


def rate_options(eta):
    """The EngineConfig fields of a learning rate (see :meth:`Rate.fields`)."""
    return Rate(eta).fields()


def mixing_options(alpha):
    """The EngineConfig fields of a mixing rate (see :meth:`Mixing.fields`)."""
    return Mixing(alpha).fields()


class Master:
    """A read-only view of a two-learner master's state (``src/limit.h``,
    OnlineKernelPCA's over its learner and Follow the Leader): ``[L_B -
    L_A, scale, Delta^M, weight of A]``."""

    __slots__ = ("lim",)

    def __init__(self, lim):
        self.lim = lim

    @property
    def gap(self):
        """``Delta^M``: the loss is at most that of the better of the two
        learners plus ``2 Delta^M``."""
        return float(self.lim[2])

    @property
    def limit_weight(self):
        """The weight of the other learner (B) for the next trial."""
        return 1.0 - float(self.lim[3])


def _sketch_len(n, ell):
    cap = 2 * (ell + 1)  # OPF_SKETCH_CAP
    return 3 + (ell + 1) * (1 + cap) + cap * n


def _leader_len(n, ell):
    return 4 + ell + 2 * ell * n  # OPF_LEADER_LEN


def _sketch_rows(sk, n, ell):
    """A sketch's r explicit directions (n x r) and its stored tie group (n x
    c, or None): R Bb (src/limit.h)."""
    c, r, nb = int(sk[0]), int(sk[1]), int(sk[2])
    cap = 2 * (ell + 1)
    R = sk[4 + ell:4 + ell + (ell + 1) * cap].reshape(ell + 1, cap)
    Bb = sk[4 + ell + (ell + 1) * cap:].reshape(cap, n)
    rows = R[:r + c, :nb] @ Bb[:nb]
    return rows[:r].T, (rows[r:].T if c else None)


class SketchMaster:
    """A read-only view of eta="auto"'s state of the PCA learners
    (``src/limit.h``): the master over the rate learner (A), its eta -> inf
    limit (B, a sketch of k directions) and Follow the Leader on a Frequent
    Directions sketch of ell directions (F)."""

    __slots__ = ("master", "b_sketch", "f_sketch", "n", "k", "ell")

    @staticmethod
    def layout(n, k):
        """Offsets of the state: B's sketch, F's sketch, F's size ell, the
        length."""
        ell = _kernels.leader_ell(n, k)
        b = 8
        f = b + _sketch_len(n, k)
        return b, f, ell, f + _leader_len(n, ell)

    @classmethod
    def of(cls, lim, n, k):
        """The view of `lim` for n features and k components, or None if it
        is not such a state (no master, or n_components set since: it
        restarts with the next batch)."""
        if lim is None:
            return None
        b, f, ell, size = cls.layout(n, k)
        if lim.size != size:
            return None
        view = cls.__new__(cls)
        view.master, view.b_sketch, view.f_sketch = lim[:b], lim[b:f], lim[f:]
        view.n, view.k, view.ell = n, k, ell
        return view

    @property
    def gap(self):
        """``Delta^M``: the loss is at most that of the best of the three
        learners plus ``2 Delta^M``."""
        return float(self.master[1])

    @property
    def limit_weight(self):
        return float(self.master[6])

    @property
    def leader_weight(self):
        return float(self.master[7])

    def limit_parts(self):
        """(B's r explicit directions as n x r columns, the c rows of its
        tie group as n x c columns or None: the whole complement)."""
        return _sketch_rows(self.b_sketch, self.n, self.k)

    def leader_directions(self):
        """F's explicit directions (its sketch's at its last refresh) as n x r
        columns, largest first."""
        f, ell, n = self.f_sketch, self.ell, self.n
        r = int(f[1])
        return f[4 + ell:4 + ell + r * n].reshape(r, n).T.copy()

    def leader_values(self):
        """F's sketch at its last refresh: its r eigenvalues sigma, largest
        first, and its buffer (the rows since, g x each, as nbuf x n)."""
        f, ell, n = self.f_sketch, self.ell, self.n
        r, nbuf = int(f[1]), int(f[2])
        start = 4 + ell + ell * n
        return -f[4:4 + r], f[start:start + nbuf * n].reshape(nbuf, n).copy()

    def kept_basis(self, leader=True):
        """The k directions of the learner the master weighs most, if it is
        B or F (with `leader`) and has k of them; else None (the rate
        learner's)."""
        wb, wf = self.limit_weight, self.leader_weight
        wa = 1.0 - wb - wf
        if wb > max(wa, wf):
            U = self.limit_parts()[0]
            if U.shape[1] == self.k:
                return U.copy()
        if leader and wf > max(wa, wb):
            V = self.leader_directions()
            if V.shape[1] >= self.k:
                return V[:, :self.k].copy()
        return None

    def sampled_basis(self, rng, rate_learner_draw):
        """The k directions of a draw: one uniform of `rng` chooses the
        learner with the master's weights; the rate learner's draw
        (``rate_learner_draw(rng)``), or B's r directions (F's k leading)
        and the rest drawn uniformly in their complement (or B's tie
        group)."""
        wb, wf = self.limit_weight, self.leader_weight
        u = rng.random()
        if u < 1.0 - wb - wf:
            return rate_learner_draw(rng)
        if u >= 1.0 - wf:
            U, T = self.leader_directions()[:, :self.k], None
        else:
            U, T = self.limit_parts()
        extra = self.k - U.shape[1]
        if not extra:
            return U.copy()
        if T is not None:  # k - r directions drawn uniformly in the tie group
            G = T @ rng.standard_normal((T.shape[1], extra))
        else:
            G = rng.standard_normal((self.n, extra))
            for _ in range(2):
                G -= U @ (U.T @ G)
        return np.hstack([U, np.linalg.qr(G)[0]])


class RatesMixin:
    """The rate attributes, defined once, as properties the learner classes
    take by assignment (``eta_ = RatesMixin.eta_``), not by inheritance:
    state ``_rate`` and hyper-parameter ``eta``."""

    @property
    @reads_state
    def eta_(self) -> float:
        """The learning rate in use: ``eta`` if it is a number; with
        ``eta="auto"`` or ``"adahedge"``, the rate of the next trial, ``D / Delta`` (``inf``
        while every mixability gap so far is 0: Follow the Leader on W^0)."""
        self._check_fitted()
        return Rate(self.eta).current(self._rate)

    @property
    @reads_state
    def mixability_gap_(self) -> float:
        """``eta="auto"`` or ``"adahedge"``: the cumulative mixability gap ``Delta_T`` (in the
        learner's loss scale) that bounds the regret, ``R_T <= 2 Delta_T``
        (see the learner's Notes); 0 with a numeric eta."""
        self._check_fitted()
        return Rate(self.eta).gap(self._rate)



# -- eta="auto" of VarianceMinimizer without mixing: the master over the rate
# learner and Follow the Leader read off its state (src/learner.c, trial_led),
# taken by assignment ------------------------------------------------------------------
#: the master's state, src/limit.h's OPF_MASTER_LEN doubles
MASTER_LEN = _kernels.master_state().size


def leader_limit_len(self, p, n):
    """The master's state length: with eta="auto" and no mixing only."""
    return MASTER_LEN if p["eta"] == "auto" and p["share"] is None else 0


def leader_limit_state(self, p, n):
    return _kernels.master_state() if self._limit_len(p, n) else None


def leader_master_view(self):
    """A :class:`Master` view, or None (a numeric eta, or mixing)."""
    if getattr(self, "eta", None) != "auto" or getattr(self, "share", None) is not None:
        return None
    m = self.__dict__.get("_limit")
    return None if m is None else Master(m)


def leader_group(lam, rate):
    """Follow the Leader's tie group in the log-weights ``lam`` (any order):
    the top entry and those within 1e-9 of the spread of it or within
    rounding, 1e-12 of the largest |entry| or of ``eta_t tr C^{t-1}``
    (``rate[1] rate[2]``), as the trials take it (``src/learner.c``,
    leader_start; indices, ascending)."""
    top, low = lam.max(), lam.min()
    scale = float(rate[1]) * float(rate[2])
    tol = max(1e-9 * (top - low), 1e-12 * max(abs(top), abs(low)),
              1e-12 * scale if np.isfinite(scale) else 0.0)
    return np.flatnonzero(lam >= top - tol)


def leader_draw(self, rng):
    """With the master: one uniform of `rng` chooses the learner by its
    weights, and returns the index (into the state's log-weights) Follow the
    Leader draws, or None when the rate learner is drawn (it then draws with
    the same generator)."""
    master = self._master_view()
    if master is None:
        return None
    u, pa = float(rng.random()), float(master.lim[3])  # A's weight, as the trials read it
    if u < pa:
        return None
    group = leader_group(self._state.lam, self._rate)
    uf = min((u - pa) / (1.0 - pa), float(np.nextafter(1.0, 0.0)))
    return int(group[min(int(uf * group.size), group.size - 1)])

class MasterMixin:
    """The master's attributes, defined once, as properties the learner
    classes take by assignment; hook ``_master_view()`` (a view with
    ``gap``, ``limit_weight`` and ``leader_weight``: :class:`Master` or
    :class:`SketchMaster`; None with a numeric eta)."""

    @property
    @reads_state
    def master_gap_(self) -> float:
        """``eta="auto"``: the master's cumulative mixability gap ``Delta^M``:
        the loss is at most that of the better of its two learners plus ``2
        Delta^M``; 0 with a numeric eta or ``"adahedge"``."""
        self._check_fitted()
        m = self._master_view()
        return 0.0 if m is None else m.gap

    @property
    @reads_state
    def limit_weight_(self) -> float:
        """``eta="auto"``: the master's weight of the eta -> infinity limit
        learner for the next trial (the rate learner has the rest); 0 with a
        numeric eta."""
        self._check_fitted()
        m = self._master_view()
        return 0.0 if m is None else m.limit_weight

    @property
    @reads_state
    def leader_weight_(self) -> float:
        """``eta="auto"``: the master's weight of Follow the Leader on the
        sketch for the next trial; 0 with a numeric eta."""
        self._check_fitted()
        m = self._master_view()
        return 0.0 if m is None else m.leader_weight
