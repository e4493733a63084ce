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


def _check_kernel_scale(diag, name, offset=0):
    """Reject (eta="auto") a row whose ``k(x, x)`` (`diag`, the rows from
    batch row `offset` on) is in ``(0, KERNEL_MIN)``."""
    diag = np.abs(diag)
    tiny = np.flatnonzero((diag > 0) & (diag < KERNEL_MIN))
    if tiny.size:
        i = int(tiny[0])
        raise ValueError(
            f"{name} row {offset + i} has the kernel value k(x, x) = {diag[i]:.3g}, outside "
            "the range OnlineKernelPCA computes exactly in float64: k(x, x) must be 0 or at "
            "least 2**-480 (about 3e-145); rescale the data, gamma or coef0 (nothing was "
            "changed)")


def _check_kernel_values(G, name, eta, t=None, kappa=None, offset=0):
    """Reject a batch with a kernel value beyond ``B / t``, ``B = min(2**500,
    2**1020 / max(1, eta))``.

    The exact learner (`t` None: the ``G.shape[1]`` instances): with every
    ``|k(x, y)| <= B / t`` the kernel matrix's eigenvalues are at most ``B``
    (Gershgorin), the bordered update's squares at most ``B^2`` and the
    log-weights ``-eta lambda`` at most ``eta B`` in magnitude: all finite.
    The bounded mode (`t` the trials at the end of the batch, `kappa` the
    rows' ``k(x, x)``, `offset` the batch index of G's first row): its C is a
    sum of at most t terms ``phi phi^T`` with ``|phi|^2 <= k(x, x)`` (up to
    :data:`PSD_TOLERANCE`, checked for callable kernels), so the same bound
    keeps its eigenvalues below ``B``.
    """
    t = G.shape[1] if t is None else t
    bound = min(2.0 ** 500, MAX_STEP / max(1.0, eta)) / t
    big = np.abs(G).max(axis=1, initial=0.0)
    if kappa is not None:
        big = np.maximum(big, np.abs(kappa))
    bad = np.flatnonzero(big > bound)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"{name} row {offset + i} is too large for the kernel: max |k(x, y)| = "
            f"{big[i]:.3g} exceeds min(2**500, 2**1020 / max(1, eta)) / t = {bound:.3g} "
            f"with t = {t} instances or trials, beyond which the eigen-updates would "
            "overflow; rescale the data, gamma or coef0 (nothing was changed)")


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


def _check_residuals(kappa, khat, scale, name, offset):
    """A callable kernel in the bounded mode: reject a row whose feature
    vector is longer than the kernel allows, ``|phi(x)|^2 > k(x, x) +
    PSD_TOLERANCE * scale`` -- the kernel matrix of the landmarks and x
    would then have a negative eigenvalue (its Schur complement ``k(x, x)
    - k_L^T K_L^+ k_L`` is below ``k(x, x) - |phi(x)|^2``, the map keeping
    part of ``K_L^+``)."""
    bad = np.flatnonzero(khat - kappa > PSD_TOLERANCE * scale)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"kernel is not positive semi-definite: with {name} row {offset + i}, "
            f"k(x, x) = {kappa[i]:.6g} is below |phi(x)|^2 = {khat[i]:.6g}, the squared "
            "norm of its projection on the span of the landmarks, by more than "
            f"{PSD_TOLERANCE:g} times the scale ({scale:.3g}) (a kernel must give a "
            "symmetric positive semi-definite Gram matrix; nothing was changed)")
