"""Checks of a batch of :class:`OnlineKernelPCA` before any trial: row sizes,
kernel values within the bounds that keep the eigen-updates finite, and
(callable kernels) positive semi-definiteness of the grown kernel matrix.
Each raises a ``ValueError`` naming the argument; nothing is changed."""

from __future__ import annotations

import numpy as np

from .._validation import MAX_STEP
from ._pca import row_norms

__all__ = ["PSD_TOLERANCE"]


def _check_rows(X, name):
    """Reject a row with ``|x|^2 > MAX_STEP``: beyond it the built-in kernels'
    distances and inner products overflow (``inf - inf`` in "rbf")."""
    limit = 2.0 ** 510
    bad = np.flatnonzero(~(row_norms(X) <= limit))
    if bad.size:
        i = int(bad[0])
        with np.errstate(over="ignore"):
            square = row_norms(X[i:i + 1])[0] ** 2
        raise ValueError(
            f"{name} row {i} is too large for a kernel: |x|^2 = {square:.3g} exceeds "
            "2**1020 (MAX_STEP); rescale the data (nothing was changed)")


#: eta="auto" (scale-free: c X gives c**2 the losses with the linear
#: kernel) refuses a row whose kernel value k(x, x) is neither 0 nor at
#: least this: below, the bordered update's squares come within 2**-60 of
#: the subnormal range and lose their precision (issue 35, item 5: kernel
#: values ~1e-160 were off by 2e-2 of the largest loss; exact down to
#: ~2**-490).  The eigen-learners' rows: ``_scale``.
KERNEL_MIN = 2.0 ** -480


def _check_kernel_values(G, name, eta, scale_free=False):
    """Reject a batch with a kernel value beyond :data:`KERNEL_BOUND` / t,
    or (`scale_free`: eta="auto") a value ``k(x, x)`` of a new row in
    ``(0, KERNEL_MIN)``.

    With t instances and every ``|k(x, y)| <= B / t``, the kernel matrix's
    eigenvalues are at most ``B`` (Gershgorin), the bordered update's
    squares at most ``B^2`` and the log-weights ``-eta lambda`` at most
    ``eta B`` in magnitude: all finite when ``B = min(2**500, 2**1020 /
    max(1, eta))``.
    """
    T, m = G.shape[0], G.shape[1] - G.shape[0]
    diag = np.abs(G[np.arange(T), m + np.arange(T)])
    tiny = np.flatnonzero((diag > 0) & (diag < KERNEL_MIN) & scale_free)
    if tiny.size:
        i = int(tiny[0])
        raise ValueError(
            f"{name} row {i} has the kernel value k(x, x) = {diag[i]:.3g}, outside the range "
            "OnlineKernelPCA computes exactly in float64: k(x, x) must be 0 or at least "
            "2**-480 (about 3e-145); rescale the data, gamma or coef0 (nothing was changed)")
    t = G.shape[1]
    bound = min(2.0 ** 500, MAX_STEP / max(1.0, eta)) / t
    big = np.abs(G).max(axis=1)
    bad = np.flatnonzero(big > bound)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"{name} row {i} is too large for the kernel: max |k(x, y)| = {big[i]:.3g} "
            f"exceeds min(2**500, 2**1020 / max(1, eta)) / t = {bound:.3g} with t = {t} "
            "instances, beyond which the eigen-updates would overflow; rescale the data, "
            "gamma or coef0 (nothing was changed)")


#: A callable kernel is refused if its kernel matrix has an eigenvalue below
#: ``-PSD_TOLERANCE`` times its scale (largest entry or eigenvalue).
PSD_TOLERANCE = 1e-6


def _check_psd(G, evals, q, name):
    """Reject a batch whose rows make the kernel matrix not positive semi-definite.

    `G`: the new rows' kernel values against the ``m`` past instances and
    themselves (the trials use ``G[j, :m + j + 1]``); ``K = q diag(evals)
    q^T`` the past kernel matrix.  With ``tau = PSD_TOLERANCE * scale``,
    ``[[K, B], [B^T, C]]`` has no eigenvalue ``<= -tau`` iff the Schur
    complement ``C + tau I - B^T (K + tau I)^{-1} B`` is positive definite
    (Cholesky; its failing order names the row).  Its rounding errors, about
    ``eps scale / tau``, are far below ``tau``: kernels PSD up to rounding
    pass.  Cost ``O(m^2 T + m T^2 + T^3)``, callable kernels only.
    """
    from scipy.linalg import lapack
    T, m = G.shape[0], evals.shape[0]
    diag = G[np.arange(T), m + np.arange(T)]
    bad = np.flatnonzero(diag < 0)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"kernel is not positive semi-definite: k(x, x) = {diag[i]:.6g} < 0 for {name} "
            f"row {i} (a kernel must give a symmetric positive semi-definite Gram matrix; "
            "nothing was changed)")
    scale = max(float(np.abs(G).max()), float(evals.max()) if m else 0.0)
    if scale == 0.0:  # all zeros: PSD
        return
    tau = PSD_TOLERANCE * scale
    C = np.tril(G[:, m:])  # the entries the trials use (dpotrf reads the lower triangle)
    S = C + C.T + np.diag(tau - diag)
    if m:
        W = q.T @ G[:, :m].T  # (m, T): the new rows in the eigenbasis of K
        W /= np.sqrt(np.maximum(evals + tau, tau))[:, np.newaxis]
        S -= W.T @ W
    _, info = lapack.dpotrf(S, lower=1, overwrite_a=1, clean=0)
    if info > 0:
        i = int(info) - 1
        raise ValueError(
            f"kernel is not positive semi-definite: with {name} row {i} the kernel matrix "
            f"has an eigenvalue below -{PSD_TOLERANCE:g} times its scale ({scale:.3g}), "
            "which no rounding explains (a kernel must give a symmetric positive "
            "semi-definite Gram matrix, e.g. not the sigmoid kernel; nothing was changed)")
