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

from .._guard import reads_state

__all__ = ["Rate", "Mixing", "Master", "rate_options", "mixing_options", "RatesMixin",
           "MasterMixin"]


class Rate:
    """A learning rate: ``"auto"`` (AdaHedge, the rate is state: ``_rate``
    = [Delta, eta_t, ...], ``src/adaptive_rate.h``), a number, or None (a
    learner without one: Follow the Leader)."""

    __slots__ = ("auto", "value")

    def __init__(self, eta):
        self.auto = isinstance(eta, str) and eta == "auto"
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
            return 'eta="auto"'
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
    """A read-only view of eta="auto"'s master state (``src/limit.h``):
    ``[L_B - L_A, scale, Delta^M, weight of A, ...]``, then, for
    OnlinePCA's limit learner, its r explicit directions."""

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
        """The weight of the eta -> infinity limit for the next trial."""
        return 1.0 - float(self.lim[3])

    def limit_basis(self, n, k):
        """The limit learner's r explicit directions (n x r columns), or
        None if the state is not OnlinePCA's for these n and k."""
        if self.lim.size != 6 + k + k * n:
            return None
        r = int(self.lim[5])
        return self.lim[6 + k:6 + k + r * n].reshape(r, n).T


class RatesMixin:
    """The rate attributes, defined once, as properties the learner classes
    take by assignment (``eta_ = RatesMixin.eta_``), not by inheritance:
    state ``_rate`` and hyper-parameter ``eta``."""

    @property
    @reads_state
    def eta_(self) -> float:
        """The learning rate in use: ``eta`` if it is a number; with
        ``eta="auto"``, the rate of the next trial, ``D / Delta`` (``inf``
        while every mixability gap so far is 0: Follow the Leader on W^0)."""
        self._check_fitted()
        return Rate(self.eta).current(self._rate)

    @property
    @reads_state
    def mixability_gap_(self) -> float:
        """``eta="auto"``: the cumulative mixability gap ``Delta_T`` (in the
        learner's loss scale) that bounds the regret, ``R_T <= 2 Delta_T``
        (see the learner's Notes); 0 with a numeric eta."""
        self._check_fitted()
        return Rate(self.eta).gap(self._rate)


class MasterMixin:
    """The master's attributes, defined once, as properties the learner
    classes take by assignment; hook ``_master_view()`` (the master state,
    or None with a numeric eta)."""

    @property
    @reads_state
    def master_gap_(self) -> float:
        """``eta="auto"``: the master's cumulative mixability gap ``Delta^M``:
        the loss is at most that of the better of its two learners plus ``2
        Delta^M``; 0 with a numeric eta."""
        self._check_fitted()
        m = self._master_view()
        return 0.0 if m is None else Master(m).gap

    @property
    @reads_state
    def limit_weight_(self) -> float:
        """``eta="auto"``: the master's weight of the eta -> infinity limit
        learner for the next trial (the rate learner has the rest); 0 with a
        numeric eta."""
        self._check_fitted()
        m = self._master_view()
        return 0.0 if m is None else Master(m).limit_weight
