"""The bounded mode of :class:`OnlineKernelPCA` (issue 39): the Nystrom map
made at the switch from the exact learner's eigensystem, and the rows of a
batch mapped and checked before any trial (docs/kernel_pca.md).

With ``K = U diag(lambda) U^T`` the kernel matrix of the landmarks (the
instances stored when ``budget`` is reached) and ``v_i = Phi u_i /
sqrt(lambda_i)`` its feature-space eigenvectors, the map sends x to the
coordinates of the projection of its feature vector on the span V of the
D leading ``v_i``: ``phi(x) = diag(lambda_D)^-1/2 U_D^T k(L, x)``.  The
landmarks' own coordinates are ``diag(lambda_D)^1/2 U_D^T``, so the
projected ``C = sum phi phi^T`` is ``diag(lambda_D)``: the state at the
switch is the eigensystem ``(lambda_D, I)``, without a new decomposition.
"""

from __future__ import annotations

import numpy as np

from .. import _kernels
from ..kernels import null_space_tol
from ._kernel_checks import _check_kernel_values, _check_residuals
from ._kernel_values import diagonal, gram, row_inner

__all__ = ["BoundedState", "nystroem_map", "map_rows", "plan_rows", "check_map"]

# kernel values computed at a time (~16 MB)
_GRAM_ENTRIES = 1 << 21


def nystroem_map(lam, U, size):
    """The map from the eigensystem ``(lam, U)`` (ascending) of the
    landmarks' kernel matrix: ``(M, evals, tau)`` with ``M = U_D
    diag(lam_D)^-1/2`` (landmarks x D) over the ``D = min(size, #{lam_i >
    tol})`` leading eigenpairs above the null-space tolerance
    (:func:`~onlinepca_fast.kernels.null_space_tol`), their eigenvalues
    (ascending) and ``tau``, the sum of the positive eigenvalues left out.
    With no eigenvalue above the tolerance: one zero column (the map to 0)."""
    m = lam.shape[0]
    live = np.flatnonzero(lam > null_space_tol(lam)) if m else np.empty(0, dtype=np.intp)
    keep = live[max(0, live.size - size):]
    if keep.size == 0:
        return np.zeros((m, 1)), np.zeros(1), float(np.maximum(lam, 0.0).sum())
    M = np.ascontiguousarray(U[:, keep] / np.sqrt(lam[keep]))
    dropped = np.ones(m, dtype=bool)
    dropped[keep] = False
    return M, lam[keep].copy(), float(np.maximum(lam[dropped], 0.0).sum())


class BoundedState:
    """The bounded mode's state, made at the switch from the exact learner's
    eigensystem ``(lam, U)`` of the landmarks' kernel matrix: the map ``M``,
    the eigensystem ``(evals, q)`` of C (``(lambda_D, I)`` at the switch),
    its order, the trials done in this mode and ``residual = [eps_T,
    tau]``.  The compiled engine points into these arrays; the learner
    pickles them with it.  Equal states have equal arrays, bit for bit."""

    def __init__(self, lam, U, size):
        self.map, self.evals, tau = nystroem_map(lam, U, size)
        dim = self.evals.shape[0]
        self.q = np.eye(dim)
        self.order = np.array([dim], dtype=np.intp)
        self.trials = np.zeros(1, dtype=np.intp)
        self.residual = np.array([0.0, tau])

    def _arrays(self):
        return (self.map, self.evals, self.q, self.order, self.trials, self.residual)

    def __eq__(self, other):
        return (isinstance(other, BoundedState) and
                all(a.dtype == b.dtype and np.array_equal(a, b)
                    for a, b in zip(self._arrays(), other._arrays())))

    __hash__ = None  # mutable

    def engine(self, **common):
        """The compiled feature-form engine on this state."""
        return _kernels.KernelPCAEngine(evals=self.evals, q=self.q, m=self.order,
                                        t=self.trials, residual=self.residual, **common)

    def plan_rows(self, X, landmarks, p, name, offset, t_end, eta):
        """:func:`plan_rows` with this state's map."""
        return plan_rows(X, landmarks, self.map, p, name, offset, t_end, eta,
                         float(self.evals.max(initial=0.0)))

    def map_rows(self, X, landmarks, p):
        """Feature vectors of the rows of X."""
        return map_rows(X, landmarks, self.map, p)[0]

    def rebuild(self, phi):
        """After a failed rank-one update: C's eigensystem with ``phi phi^T``
        added, by ``eigh``, in place, and the trial counted."""
        C = (self.q * self.evals) @ self.q.T + np.outer(phi, phi)
        self.evals[:], self.q[:] = np.linalg.eigh(0.5 * (C + C.T))
        self.trials[0] += 1

    def transform(self, rows, landmarks, p, r):
        """Coordinates of the rows on the r leading eigenvectors of C."""
        Z = np.zeros((rows.shape[0], r))
        lam = self.evals
        top = np.arange(lam.shape[0] - 1, max(lam.shape[0] - r, 0) - 1, -1)
        keep = top[np.abs(lam[top]) > null_space_tol(lam)]
        Z[:, :keep.size] = self.map_rows(rows, landmarks, p) @ self.q[:, keep]
        return Z


def map_rows(X, landmarks, M, p, offset=0, check=None):
    """``(Phi, khat)``: the feature vectors of the rows of X under the map M
    and their squared norms, kernel values and map one GEMV per row (the
    same bits however X is split), in blocks of about 16 MB of kernel
    values; ``check(K, a)`` sees each block (rows ``a..``)."""
    Phi = np.empty((X.shape[0], M.shape[1]))
    khat = np.empty(X.shape[0])
    inner = row_inner(np.ascontiguousarray(landmarks.T))
    step = max(1, _GRAM_ENTRIES // max(1, landmarks.shape[0]))
    for a in range(0, X.shape[0], step):
        b = min(X.shape[0], a + step)
        K = gram(X[a:b], landmarks, p, inner=inner, offset=offset + a)
        if check is not None:
            check(K, a)
        _kernels.kpca_map(M, K, Phi[a:b], khat[a:b])
    return Phi, khat


def plan_rows(X, landmarks, M, p, name, offset, t_end, eta, scale=0.0):
    """The bounded mode's rows X of a batch (`offset` rows into it), checked
    before any trial: ``(Phi, kappa)``, their feature vectors and kernel
    diagonals.  Kernel values beyond the bound of ``t_end`` trials are
    refused (``_check_kernel_values``); with a callable kernel, a row
    longer in the map than ``k(x, x)`` allows (``_check_residuals``,
    scale: the largest of ``k(x, x)`` and `scale`)."""
    kappa = diagonal(X, p, offset)

    def check(K, a):
        _check_kernel_values(K, name, eta, t_end, kappa[a:a + K.shape[0]], offset + a)

    Phi, khat = map_rows(X, landmarks, M, p, offset, check)
    if callable(p["kernel"]):
        scale = max(float(np.abs(kappa).max(initial=0.0)), scale)
        _check_residuals(kappa, khat, scale, name, offset)
    return Phi, kappa


def check_map(G, evals, q, p):
    """For a batch that switches: the map the switch will make, computed
    here by ``eigh`` of the landmarks' kernel matrix (the past one ``q
    diag(evals) q^T`` bordered by the batch's block G), to check its rows
    after the switch with a callable kernel (the switch's map agrees to
    rounding); and the scale of that check.  Built-in kernels need no check
    (positive semi-definite by construction): a one-column stand-in."""
    m0 = evals.shape[0]
    nl = m0 + G.shape[0]
    if not callable(p["kernel"]):
        return np.zeros((nl, 1)), 0.0
    K = np.empty((nl, nl))
    K[:m0, :m0] = (q * evals) @ q.T
    K[m0:, :] = G
    K[:m0, m0:] = G[:, :m0].T
    K = np.tril(K) + np.tril(K, -1).T  # the entries the trials use
    lam, U = np.linalg.eigh(K)
    M = nystroem_map(lam, U, p["map_size"])[0]
    return M, float(max(np.abs(G).max(initial=0.0), lam.max(initial=0.0)))
