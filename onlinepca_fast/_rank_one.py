"""Symmetric rank-one eigen-update: validated public entry points.

Re-exported by :mod:`onlinepca_fast.kernels`.  The work is done by
``src/rank_one_update.c`` through :class:`RankOneUpdater` in the binding
module, and by ``src/bordered_update.c`` (one arrowhead eigenproblem) for
:func:`bordered_update`; this module only checks and converts the arguments.
"""

import numpy as np

from . import _kernels
from ._kernels import RankOneUpdater

__all__ = ["rank_one_update", "bordered_update", "RankOneUpdater", "DEFLATION_FACTOR"]

#: Deflation tolerance factor of :func:`rank_one_update`: components of
#: ``z = evecs.T @ x`` with ``|rho| |x| |z_j| <= tol`` are dropped and
#: eigenvalue pairs whose merging discards an entry ``<= tol`` are merged,
#: ``tol = DEFLATION_FACTOR * eps * max(max|evals|, |rho| |x|^2)``.
#: LAPACK's dlaed2/dlaed8 factor.
DEFLATION_FACTOR = _kernels.R1_DEFLATION_FACTOR

_FORCE_FLAGS = {
    None: 0,
    "bisection": _kernels.R1_FORCE_BISECTION,
    "eig": _kernels.R1_FORCE_EIG,
}
# bordered_update also accepts the dlaed4 stand-in that fails on some roots
_BU_FORCE_FLAGS = dict(_FORCE_FLAGS, bad_dlaed4=_kernels.R1_TEST_BAD_DLAED4)


def _real_array(a, name, shape=None):
    """`a` as a finite real array (of the given shape), or raise."""
    try:
        arr = np.asarray(a)
    except ValueError as exc:  # ragged nested sequences
        raise ValueError(f"{name} must be a rectangular numeric array: "
                         f"{exc}") from None
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real numeric array, got dtype "
                        f"{arr.dtype}")
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (it contains NaN or inf)")
    return arr


def _own_or_copy(arr, overwrite):
    """`arr` itself when it may be overwritten in place, else a copy."""
    if (overwrite and isinstance(arr, np.ndarray) and arr.dtype == np.float64
            and arr.flags.c_contiguous and arr.flags.writeable):
        return arr
    return np.array(arr, dtype=np.float64, order="C", copy=True)


def rank_one_update(evals, evecs, rho, x, *, overwrite=False, _force=None,
                    _return_info=False):
    """Eigensystem of ``evecs @ diag(evals) @ evecs.T + rho * outer(x, x)``.

    Gu & Eisenstat's algorithm as LAPACK's divide and conquer uses it:
    ``z = evecs.T @ x``; deflation of negligible components of ``z`` and
    of equal or nearly equal eigenvalues (a Householder reflector per run
    of exactly equal eigenvalues, Givens rotations for close pairs, as in
    LAPACK dlaed2/dlaed8); the ``m`` remaining roots of the secular
    equation ``1 + rho * sum(z_j**2 / (evals_j - lam)) = 0`` by LAPACK
    dlaed4; ``z`` recomputed by the Loewner formula so that the new
    eigenvectors are orthogonal to working precision (dlaed3); one matrix
    product of the non-deflated columns of ``evecs`` with the ``m x m``
    secular eigenvectors.  ``rho < 0`` is handled by negating the
    eigenvalues, solving, and reversing.

    Parameters
    ----------
    evals : array_like of shape (n,)
        Eigenvalues in ascending order, finite.
    evecs : array_like of shape (n, n)
        Orthonormal eigenvectors in the *columns* (``evecs[:, j]`` belongs
        to ``evals[j]``).  Orthonormality is assumed, not checked.
    rho : float
        Weight of the update, any sign; ``0`` is an exact no-op.
    x : array_like of shape (n,)
        Update vector; ``x = 0`` is an exact no-op.
    overwrite : bool, default=False
        Allow the result to be written into `evals` and `evecs` (when they
        are C-contiguous writable float64 arrays; otherwise copies are
        made anyway).  With ``False`` the inputs are never modified.

    Returns
    -------
    new_evals : ndarray of shape (n,)
        Updated eigenvalues, ascending.
    new_evecs : ndarray of shape (n, n)
        Matching orthonormal eigenvectors in the columns, C-contiguous.

    Raises
    ------
    TypeError
        Non-numeric input.
    ValueError
        Wrong shapes, NaN or inf, `evals` not ascending, or
        ``rho * |x|**2`` overflowing.
    numpy.linalg.LinAlgError
        If dlaed4, the bisection fallback and ``dsyevr`` all fail on the
        secular equation (not observed in practice).

    Notes
    -----
    Cost ``O(n^2) + O(n m^2)`` where ``m <= n`` is the number of
    non-deflated eigenvalues; an exact cluster of ``c`` eigenvalues costs
    ``O(n c)``.  Deflation tolerance:
    ``DEFLATION_FACTOR * eps * max(max|evals|, |rho| |x|^2)``.  For a
    sequence of updates use :class:`RankOneUpdater`, which allocates its
    workspace once and updates in place.

    References
    ----------
    .. [GE] M. Gu and S. C. Eisenstat, "A stable and efficient algorithm
       for the rank-one modification of the symmetric eigenproblem", SIAM
       J. Matrix Anal. Appl. 15(4), 1994.
    .. [BNS] J. R. Bunch, C. P. Nielsen and D. C. Sorensen, "Rank-one
       modification of the symmetric eigenproblem", Numer. Math. 31, 1978.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast.kernels import rank_one_update
    >>> w, V = rank_one_update(np.zeros(2), np.eye(2), 2.0, [1.0, 0.0])
    >>> w
    array([0., 2.])
    >>> np.abs(V)
    array([[0., 1.],
           [1., 0.]])
    """
    if _force not in _FORCE_FLAGS:
        raise ValueError(f"_force must be one of {sorted(map(str, _FORCE_FLAGS))}"
                         f", got {_force!r}")
    evals_arr = _real_array(evals, "evals")
    if evals_arr.ndim != 1 or evals_arr.shape[0] == 0:
        raise ValueError(f"evals must be a non-empty 1-D array, got shape "
                         f"{evals_arr.shape}")
    n = evals_arr.shape[0]
    descending = evals_arr[1:] < evals_arr[:-1]
    if descending.any():
        j = int(np.argmax(descending))
        raise ValueError(f"evals must be in ascending order, got "
                         f"evals[{j}] = {float(evals_arr[j])!r} > "
                         f"evals[{j + 1}] = {float(evals_arr[j + 1])!r}")
    evecs_arr = _real_array(evecs, "evecs", (n, n))
    rho_arr = np.asarray(rho)
    if rho_arr.ndim != 0 or rho_arr.dtype.kind not in "iuf":
        raise TypeError(f"rho must be a real number, got "
                        f"{type(rho).__name__} {rho!r}")
    rho = float(rho_arr)
    if not np.isfinite(rho):
        raise ValueError(f"rho must be finite, got {rho!r}")
    x_arr = np.ascontiguousarray(_real_array(x, "x", (n,)), dtype=np.float64)

    new_evals = _own_or_copy(evals_arr, overwrite)
    new_evecs = _own_or_copy(evecs_arr, overwrite)
    updater = RankOneUpdater(n)
    updater.update(new_evals, new_evecs, rho, x_arr,
                   _flags=_FORCE_FLAGS[_force])
    if _return_info:
        return new_evals, new_evecs, updater.last_info
    return new_evals, new_evecs


def bordered_update(evals, evecs, y, kappa, *, _force=None, _return_info=False):
    """Eigensystem of the bordered matrix ``[[A, y], [y^T, kappa]]``.

    ``A = evecs @ diag(evals) @ evecs.T`` of order m grows by one row and
    column without re-diagonalising.  In the basis ``blockdiag(evecs, 1)``
    the bordered matrix is the arrowhead ``[[diag(evals), z], [z^T,
    kappa]]`` with ``z = evecs.T @ y``; its eigenvalues are the roots of
    ``lam - kappa + sum(z_i**2 / (evals_i - lam)) = 0``.  After deflation
    (as in :func:`rank_one_update`: negligible ``z_i``, equal and nearly
    equal eigenvalues -- for a matrix of rank rho only about rho + 1
    eigenpairs remain), the non-deflated block is solved by one secular
    equation (LAPACK dlaed4 after an exact change of variable, Loewner
    eigenvectors) and the new eigenvectors are formed by one matrix product
    of the non-deflated columns of `evecs`.  This is how
    :class:`onlinepca_fast.OnlineKernelPCA` grows the eigensystem of its
    kernel matrix.

    Parameters
    ----------
    evals : array_like of shape (m,)
        Ascending eigenvalues of A (m may be 0).
    evecs : array_like of shape (m, m)
        Orthonormal eigenvectors of A in the columns.
    y : array_like of shape (m,)
        The new off-diagonal column.
    kappa : float
        The new diagonal entry.

    Returns
    -------
    new_evals : ndarray of shape (m + 1,)
        Ascending.
    new_evecs : ndarray of shape (m + 1, m + 1)
        Orthonormal eigenvectors in the columns, C-contiguous.

    Raises
    ------
    TypeError, ValueError
        Non-numeric input, wrong shapes, NaN or inf, `evals` not ascending.
    numpy.linalg.LinAlgError
        If dlaed4, the bisection fallback and ``dsyevr`` all fail on the
        secular equation (not observed in practice).

    Notes
    -----
    Cost ``O(m^2) + O(m k^2)`` where ``k <= m`` is the number of
    non-deflated eigenvalues (one GEMM); the computed eigensystem is exact
    for a matrix within ``O(eps)`` of the bordered one in norm.  Deflation
    tolerance ``DEFLATION_FACTOR * eps * max(max|evals|, |kappa|, |y|)``.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast.kernels import bordered_update
    >>> w, V = bordered_update([1.0], [[1.0]], [2.0], 1.0)   # [[1, 2], [2, 1]]
    >>> w
    array([-1.,  3.])
    """
    if _force not in _BU_FORCE_FLAGS:
        raise ValueError(f"_force must be one of {sorted(map(str, _BU_FORCE_FLAGS))}"
                         f", got {_force!r}")
    evals_arr = _real_array(evals, "evals")
    if evals_arr.ndim != 1:
        raise ValueError(f"evals must be 1-D, got shape {evals_arr.shape}")
    m = evals_arr.shape[0]
    descending = evals_arr[1:] < evals_arr[:-1]
    if descending.any():
        j = int(np.argmax(descending))
        raise ValueError(f"evals must be in ascending order, got "
                         f"evals[{j}] = {float(evals_arr[j])!r} > "
                         f"evals[{j + 1}] = {float(evals_arr[j + 1])!r}")
    evecs_arr = _real_array(evecs, "evecs", (m, m))
    y_arr = np.ascontiguousarray(_real_array(y, "y", (m,)), dtype=np.float64)
    kappa_arr = np.asarray(kappa)
    if kappa_arr.ndim != 0 or kappa_arr.dtype.kind not in "iuf":
        raise TypeError(f"kappa must be a real number, got {type(kappa).__name__} {kappa!r}")
    kappa = float(kappa_arr)
    if not np.isfinite(kappa):
        raise ValueError(f"kappa must be finite, got {kappa!r}")
    new_evals = np.empty(m + 1)
    new_evals[:m] = evals_arr
    new_evecs = np.empty((m + 1, m + 1))
    new_evecs[:m, :m] = evecs_arr
    info = _kernels.bordered_update(new_evals, new_evecs, m, y_arr, kappa,
                                    _flags=_BU_FORCE_FLAGS[_force])
    if _return_info:
        return new_evals, new_evecs, info
    return new_evals, new_evecs
