"""``explained_variance_`` of the cumulative learners, read off their state.

WK Algorithm 6 and Follow the Leader keep the eigensystem of
``A = a0 I - eta C^t`` (``a0 = log(1/n)``, or 0 and ``eta = 1`` for Follow
the Leader), where ``C^t`` is the scatter of the rows seen so far about the
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
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from .._typing import FloatArray

__all__ = ["ExplainedVariance", "EIGEN_SPAN", "LEADER_SPAN"]

#: The span the compiled loop keeps the eigenvalues of A within
#: (``OPF_EIGEN_FLOOR`` of ``src/logweights.h``): only a spread beyond it
#: (eta times ~1e18 times the smallest variance) floors a variance.
EIGEN_SPAN = 2.0 ** 60

#: Follow the Leader's span (``OPF_LOG_SPAN``): finiteness only, beyond any
#: covariance of the rows it accepts (``opf_cumulative_floor``).
LEADER_SPAN = 2.0 ** 1020


def _rates_of(config):
    """(eta or "auto", center_lr_inv, centered) of an engine configuration."""
    eta = "auto" if getattr(config, "auto_rate", False) else config.eta
    return (eta, config.center_lr_inv, config.centered)


class ExplainedVariance:
    """``explained_variance_`` and ``explained_variance_ratio_`` of the
    cumulative learners (see the module doc): a mixin of ``_Cumulative``."""

    if TYPE_CHECKING:  # attributes of the learner
        _t: Any
        n_components: int
        n_features_in_: int

    _floor_span = EIGEN_SPAN  # the floor of A below its largest entry

    # the rates of the stream since the last reset: (eta, c, centered); a
    # change (set_params mid-stream) leaves A a mix of rates
    def _reset(self, n, plan):
        super()._reset(n, plan)  # type: ignore[misc]
        self._stat_rates = _rates_of(plan[0])

    def _run(self, X, plan):
        if _rates_of(plan[0]) != self.__dict__.get("_stat_rates"):
            self._stat_rates = None  # A no longer gives C^t
        return super()._run(X, plan)  # type: ignore[misc]

    def _scatter_spectrum(self):
        """(eigenvalues of C^t in the order of the learner's eigenvectors,
        number of cluster directions, trace of C^t, eta, divisor d)."""
        self._check_fitted()  # type: ignore[attr-defined]
        rates = self.__dict__.get("_stat_rates")
        if rates is None:
            raise ValueError(
                f"{type(self).__name__}: explained_variance_ needs the rates of the "
                "stream since the last reset (eta, center_lr_inv, centered), which "
                "changed mid-stream; refit to use it")
        eta, c, centered = rates
        n = self.n_features_in_
        a0 = self._cluster_init(n)  # type: ignore[attr-defined]
        if self._is_clustered():  # type: ignore[attr-defined]
            m = self._cl_m()  # type: ignore[attr-defined]
            lam = self._cmu[:m]  # type: ignore[attr-defined]
            cluster = float(self._clus[0])  # type: ignore[attr-defined]
            extra = n - m
            present = ([float(lam[0]), float(lam[-1])] if m else []) + (
                [cluster] if extra else [])
            top, low = max(present), min(present)
        else:
            lam = self._lam  # type: ignore[attr-defined]
            top, low, extra = float(lam[-1]), float(lam[0]), 0
            cluster = a0
        if top - low >= self._floor_span * (1 - 1e-9):
            warnings.warn(
                f"{type(self).__name__}: eta times the spread of the covariance's "
                f"eigenvalues has reached 2**{round(math.log2(self._floor_span))}, where "
                "the state keeps its eigenvalues "
                "(see eigenvalues_): the largest variances are floored, "
                "explained_variance_ underestimates them", RuntimeWarning, stacklevel=3)
        if eta == "auto":
            # A = eta_t (K - C^t) with a level K that the step sizes decided:
            # the trace of C^t (kept by the compiled loop, rate[2]) fixes it
            eta, trace = float(self._rate[1]), float(self._rate[2])  # type: ignore[attr-defined]
            if not (np.isfinite(eta) and eta > 0.0) or trace <= 0.0:
                return np.zeros(lam.size), extra, 0.0, 0
            a0 = (eta * trace + float(np.sum(lam)) + extra * cluster) / n
        values = np.maximum((a0 - lam) / eta, 0.0)
        total = float(values.sum()) + extra * max((a0 - cluster) / eta, 0.0)
        t = int(self._t[0])
        d = (c + t - 1) if centered else t
        return values, extra, total, d

    @property
    def explained_variance_(self) -> FloatArray:
        """Variance of the data seen so far along each of ``components_``:
        the k largest eigenvalues of the covariance ``C^t / d`` (see the
        module :mod:`onlinepca_fast.learners._explained`; as
        ``IncrementalPCA.explained_variance_`` when centered)."""
        values, extra, _, d = self._scatter_spectrum()
        k = self.n_components
        out = np.zeros(k)
        top = values[:k]
        out[:top.size] = top  # the rest: cluster directions, variance 0
        return out / d if d > 0 else np.zeros(k)

    @property
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
