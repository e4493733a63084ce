"""``eta="auto"`` and ``alpha="auto"`` on the Python side: the engine's
fields for a rate, and the attributes that report it (the per-trial logic
is ``src/adaptive_rate.c``; derivation and bounds: docs/adaptive_rates.md).
"""

from __future__ import annotations

__all__ = ["RatesMixin", "rate_options", "mixing_options"]


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
    learners (state: ``_rate`` = [Delta, eta], ``_t``)."""

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
