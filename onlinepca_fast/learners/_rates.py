"""``eta="auto"`` and ``alpha="auto"`` on the Python side: the engine's
fields for a rate, and the attributes that report it (the per-trial logic
is ``src/adaptive_rate.c``; derivation and bounds: docs/adaptive_rates.md).
"""

from __future__ import annotations

from .. import _kernels

__all__ = ["RatesMixin", "MasterMixin", "rate_options", "mixing_options"]


def rate_options(eta):
    """The EngineConfig fields of a learning rate: a number as it is, or
    ``"auto"`` (the AdaHedge rate kept in the learner's ``_rate`` state,
    ``src/adaptive_rate.h``; eta = 1 bounds the steps the Python layer
    checks: ``|x|^2 <= 2**1020``, finite losses)."""
    if eta == "auto":
        return dict(eta=1.0, auto_rate=True)
    return dict(eta=eta)


def mixing_options(alpha):
    """The EngineConfig fields of a mixing rate: a number as it is, or
    ``"auto"``: ``alpha_t = 1/(t+1)**2`` at trial t (``opf_rate_alpha``; the
    0.5 stands for "mixing on" and is replaced in every trial)."""
    if alpha == "auto":
        return dict(alpha=0.5, alpha_auto=True)
    return dict(alpha=alpha)


class RatesMixin:
    """``eta_``, ``mixability_gap_`` and ``alpha_`` of the trial-loop
    learners (state: ``_rate`` = [Delta, eta], ``_t``), and the hooks of
    eta="auto"'s master (state ``_limit``, ``src/limit.h``)."""

    def _limit_len(self, p, n):
        """Hook: the length of eta="auto"'s master state (0: none)."""
        return 0

    def _limit_state(self, p, n):
        """The initial state of eta="auto"'s master over the learner and its
        eta -> infinity limit (``src/limit.h``; OnlinePCA), or None."""
        if not self._limit_len(p, n):
            return None
        return _kernels.limit_state(n, p["n_components"])

    def _sync_limit(self, config, p):
        """Before a batch: the master's state that the rate calls for.  None
        while the rate is a number; a fresh one when the learner has none or
        one of another shape -- the rate became "auto", or n_components
        changed, mid-stream (the master and its limit then restart, the
        learner's own state continues)."""
        lim = self.__dict__.get("_limit")
        need = self._limit_len(p, config.n) if config.auto_rate else 0
        if need == (0 if lim is None else lim.size):
            return
        self._limit = self._limit_state(p, config.n) if need else None
        self._engine = None

    def _limit_option(self, config):
        """The engine's ``limit`` argument: the master's state while the
        rate is "auto" (a rate set to a number mid-stream runs without it)."""
        return self.__dict__.get("_limit") if config.auto_rate else None

    @property
    def eta_(self) -> float:
        """The learning rate in use: ``eta`` if it is a number; with
        ``eta="auto"``, the rate of the next trial, ``D / Delta`` (``inf``
        while every mixability gap so far is 0: Follow the Leader on W^0)."""
        self._check_fitted()
        if self.eta == "auto":
            return float(self._rate[1])
        return float(self.eta)

    @property
    def mixability_gap_(self) -> float:
        """``eta="auto"``: the cumulative mixability gap ``Delta_T`` (in the
        learner's loss scale) that bounds the regret, ``R_T <= 2 Delta_T``
        (see the learner's Notes); 0 with a numeric eta."""
        self._check_fitted()
        return float(self._rate[0]) if self.eta == "auto" else 0.0

    @property
    def alpha_(self) -> float:
        """The mixing rate of the next trial: ``alpha`` if it is a number;
        with ``alpha="auto"``, ``1/(t+2)**2`` after t trials."""
        self._check_fitted()
        if getattr(self, "alpha", 0.0) == "auto":
            return 1.0 / (int(self._t[0]) + 2) ** 2
        return float(getattr(self, "alpha", 0.0))


class MasterMixin:
    """``master_gap_`` and ``limit_weight_`` of a learner whose eta="auto"
    runs a master over its rate learner and that learner's eta -> infinity
    limit (``src/limit.h``); hook :meth:`_master_view`."""

    def _master_view(self):
        """The master's state [L_B - L_A, scale, Delta^M, weight of A], or
        None (a numeric eta)."""
        raise NotImplementedError

    @property
    def master_gap_(self) -> float:
        """``eta="auto"``: the master's cumulative mixability gap ``Delta^M``:
        the loss is at most that of the better of its two learners plus ``2
        Delta^M``; 0 with a numeric eta."""
        self._check_fitted()
        m = self._master_view()
        return 0.0 if m is None else float(m[2])

    @property
    def limit_weight_(self) -> float:
        """``eta="auto"``: the master's weight of the eta -> infinity limit
        learner for the next trial (the rate learner has the rest); 0 with a
        numeric eta."""
        self._check_fitted()
        m = self._master_view()
        return 0.0 if m is None else 1.0 - float(m[3])
