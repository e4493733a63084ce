"""The maintained eigensystem, for the learners that keep one (dense state)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .._typing import FloatArray

__all__ = ["EigensystemMixin"]


class EigensystemMixin:
    """The maintained eigensystem, for the learners that keep one."""

    if TYPE_CHECKING:  # provided by the learner classes
        _lam: FloatArray
        _q: FloatArray

        def _check_fitted(self) -> None: ...

        def _weights(self) -> FloatArray: ...

    @property
    def eigenvalues_(self) -> FloatArray:
        """Ascending eigenvalues of the maintained matrix (see the class doc)."""
        self._check_fitted()
        return self._lam.copy()

    @property
    def eigenvectors_(self) -> FloatArray:
        """Orthonormal eigenvectors (columns) matching ``eigenvalues_``."""
        self._check_fitted()
        return self._q.copy()

    @property
    def density_(self) -> FloatArray:
        """The density matrix W of the current parameter, formed on request."""
        self._check_fitted()
        return (self._q * self._weights()) @ self._q.T

    @property
    def cluster_value_(self) -> float:
        """The eigenvalue shared by every direction orthogonal to
        ``eigenvectors_`` (NaN when there are none: every eigenpair is
        explicit, as in the dense state)."""
        self._check_fitted()
        return math.nan

    @property
    def cluster_multiplicity_(self) -> int:
        """How many eigenvalues equal ``cluster_value_``: ``n_features_in_ -
        len(eigenvalues_)`` (0 in the dense state)."""
        self._check_fitted()
        return 0

    def full_eigensystem(self, max_features: int | None = 10_000) -> tuple[FloatArray, FloatArray]:
        """All n ascending eigenvalues and an orthonormal n x n eigenbasis.

        Parameters
        ----------
        max_features : int or None, default=10000
            Refuse (``ValueError``) to form an n x n basis that the learner
            does not keep when n is larger; None never refuses.

        Returns
        -------
        eigenvalues : ndarray of shape (n,)
            Ascending, ``eigenvalues_`` and ``cluster_value_`` repeated
            ``cluster_multiplicity_`` times.
        eigenvectors : ndarray of shape (n, n)
            Orthonormal columns; the cluster's are one (arbitrary)
            orthonormal basis of the complement of ``eigenvectors_``.
        """
        self._check_fitted()
        return self._lam.copy(), self._q.copy()
