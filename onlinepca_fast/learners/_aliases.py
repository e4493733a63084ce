"""Attributes under the names scikit-learn's ``IncrementalPCA`` uses (issue 38, item 5).

Each is a property a learner class binds in one line:

- ``n_samples_seen_`` (every learner): ``n_trials_``, the rows seen since
  the last reset;
- ``n_components_`` (the PCA learners): ``n_components``, checked against
  the data when fitted;
- ``singular_values_`` and ``noise_variance_`` (the cumulative learners,
  which keep the covariance: :mod:`onlinepca_fast.learners._explained`
  says what ``C^t`` and the divisor ``d`` are): the square roots of the k
  largest eigenvalues of the scatter ``C^t`` (IncrementalPCA's
  ``singular_values_``, ``explained_variance_ * d``), and the mean variance
  of the ``n - k`` directions outside ``components_`` (probabilistic PCA's
  noise, as scikit-learn's ``PCA.noise_variance_``).

:class:`~onlinepca_fast.OnlinePCA` and
:class:`~onlinepca_fast.OnlineAdaptivePCA` keep ``log W`` (the losses so
far times the learning rate, mixed and capped), not the data's second
moments, so they have neither (:func:`absent` gives the reason), as they
have no ``explained_variance_``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._typing import FloatArray


def _n_samples_seen(self: Any) -> int:
    """Number of rows (trials) since the last reset: ``n_trials_``, under
    the name of scikit-learn's ``IncrementalPCA``."""
    return int(self.n_trials_)


def _n_components(self: Any) -> int:
    """Number of components kept: ``n_components`` once fitted (the name of
    scikit-learn's ``IncrementalPCA.n_components_``)."""
    self._check_fitted()
    return int(self.n_components)


def _singular_values(self: Any) -> FloatArray:
    """Square roots of the k largest eigenvalues of the scatter ``C^t`` of
    the rows seen (about the center, see ``explained_variance_``), in the
    order of ``components_``: the norms of the rows' coordinates on each
    component, ``sqrt(explained_variance_ * d)`` (as scikit-learn's
    ``IncrementalPCA.singular_values_`` when centered)."""
    values, _, _, _ = self._scatter_spectrum()
    k = self.n_components
    out = np.zeros(k)
    top = values[:k]
    out[:top.size] = np.sqrt(top)
    return out


def _noise_variance(self: Any) -> float:
    """Mean variance of the ``n - k`` directions outside ``components_``:
    ``(trace(C^t) - sum of the k largest eigenvalues) / d / (n - k)``
    (probabilistic PCA's noise; scikit-learn's ``PCA.noise_variance_``
    when there are at least n rows); 0 while ``d = 0``."""
    values, _, total, d = self._scatter_spectrum()
    n, k = self.n_features_in_, self.n_components
    if d <= 0:
        return 0.0
    return max(total - float(values[:k].sum()), 0.0) / d / (n - k)


n_samples_seen_ = property(_n_samples_seen)
n_components_ = property(_n_components)
singular_values_ = property(_singular_values)
noise_variance_ = property(_noise_variance)


def absent(name: str) -> property:
    """A property `name` that raises ``AttributeError`` saying why the
    learner has no such attribute (:class:`~onlinepca_fast.OnlinePCA` and
    :class:`~onlinepca_fast.OnlineAdaptivePCA`)."""
    def missing(self: Any) -> Any:
        raise AttributeError(
            f"{type(self).__name__} has no {name}: it keeps log W, the losses so far "
            "times the learning rate, mixed and capped (WK Alg. 5, YL Alg. 4), not the "
            "data's second moments; CenteredOnlinePCA and FollowTheLeader keep the "
            "covariance and have it")
    missing.__doc__ = "Absent here (the cumulative learners have it): see the message."
    return property(missing)
