"""Compiled kernels of the online PCA family, with validated inputs.

The routines here are the vector and matrix building blocks every learner
calls once per trial.  They validate their arguments (raising
``ValueError``/``TypeError`` naming the argument) and then run C code with
the GIL released.

- :func:`cap`, :func:`cap_log` -- relative-entropy projection onto the
  capped simplex (WK Alg. 4), linear expected time.
- :func:`decompose` -- the mixture decomposition of WK Alg. 2.
- :func:`sample_corner` -- draw a d-subset whose inclusion probabilities
  are ``d * w_i``.
- :func:`rank_one_update` -- eigensystem of ``Q diag(d) Q^T + rho x x^T``
  (Gu & Eisenstat, with deflation); :class:`RankOneUpdater` is its
  allocation-free in-place form.
- :func:`bordered_update` -- eigensystem of ``[[A, y], [y^T, kappa]]`` from
  that of ``A``, as one arrowhead eigenproblem (online kernel PCA).
  Their ``product`` parameter chooses how they form the new eigenvectors
  (:func:`dense_eigenvector_product` is deprecated).

References
----------
.. [WK] M. K. Warmuth and D. Kuzmin, "Randomized online PCA algorithms with
   regret bounds that are logarithmic in the dimension", JMLR 9, 2008.
.. [HW] M. Herbster and M. K. Warmuth, "Tracking the best linear
   predictor", JMLR 1, 2001.
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np

from . import _kernels
from ._docs import fill_doc
from ._kernels import RankOneUpdater
from ._typing import ArrayLike, FloatArray, IndexArray, SeedLike
from ._validation import (
    SAMPLER,
    Interval,
    as_finite_array,
    as_float_vector,
    as_generator,
    as_int,
    check_scalar,
)

__all__ = ["cap", "cap_log", "decompose", "sample_corner", "rank_one_update",
           "bordered_update", "RankOneUpdater", "null_space_tol", "CAP_RTOL",
           "DEFLATION_FACTOR", "dense_eigenvector_product", "STRUCTURED_PRODUCT_MIN"]

#: From this many non-deflated eigenvalues on, the eigenvector product of
#: :func:`rank_one_update` and :func:`bordered_update` (and of every learner
#: update) is hierarchical: O(n m r log m) with r ~ 25, instead of one
#: O(n m^2) GEMM (``src/hodlr.c``).
STRUCTURED_PRODUCT_MIN: int = _kernels.STRUCTURED_PRODUCT_MIN

_PRODUCTS = ("auto", "dense", "structured")  # the eigen-updates' ``product``


def _check_product(product: str) -> None:
    if not isinstance(product, str) or product not in _PRODUCTS:
        raise ValueError(f"product must be one of {list(_PRODUCTS)}, got {product!r}")


@contextlib.contextmanager
def dense_eigenvector_product() -> Iterator[None]:
    """Use one GEMM for the eigenvector products of the updates made in the block.

    .. deprecated:: 0.2.0
        Pass ``product="dense"`` to :func:`rank_one_update`,
        :func:`bordered_update` or :class:`RankOneUpdater` instead; this
        function will be removed in 0.3.0.

    In the calling thread, inside the block, calls of
    :func:`rank_one_update` and :func:`bordered_update`, the updaters
    created there and the learners' compiled engines built there (on a
    learner's first rows in the block) take ``product="dense"`` where they
    would take the default ``"auto"``, and objects keep it after the block.
    It no longer switches other threads, nor objects made before the block.
    """
    warnings.warn("dense_eigenvector_product() is deprecated since 0.2.0 and will be "
                  "removed in 0.3.0: pass product='dense' to rank_one_update, "
                  "bordered_update or RankOneUpdater", DeprecationWarning, stacklevel=3)
    with _kernels.tuning(product="dense"):
        yield


#: Relative tolerance with which :func:`decompose` and :func:`sample_corner`
#: accept a vector as capped: ``max(w) <= (1 + CAP_RTOL) * sum(w) / d``.
#: Entries within this tolerance of the cap are treated as at the cap.
CAP_RTOL = 1e-9


def _cap(x: FloatArray, d: int, log_domain: bool, name: str) -> FloatArray:
    n = x.shape[0]
    d = as_int(d, "d", 1, n)
    out = np.empty(n)
    _kernels.cap(x, d, log_domain, out, np.empty(3 * n))
    return out


def cap(w: ArrayLike, d: int) -> FloatArray:
    """Relative-entropy projection onto the capped probability simplex.

    Returns the minimiser of ``sum_i q_i log(q_i / w_i)`` over
    ``{q : sum(q) = 1, 0 <= q_i <= 1/d}`` (WK Alg. 4): the largest entries
    are set to exactly ``1/d`` and the rest are ``w_i`` times one constant.
    The capped set is found by a median-style search (Herbster & Warmuth
    2001, Fig. 3, adapted to upper caps), in O(n) expected time with no
    sort.

    Parameters
    ----------
    w : array_like of shape (n,)
        Non-negative finite weights; they need not be normalised.
    d : int
        The cap is ``1/d``; ``1 <= d <= n``.

    Returns
    -------
    q : ndarray of shape (n,)
        The projection; capped entries are exactly ``1/d`` and no entry
        exceeds ``1/d``.

    Notes
    -----
    If fewer than ``d`` entries are positive the projection does not exist
    (the mass cannot be spread).  Then every positive entry is set to
    ``1/d`` and the zero entries with the smallest indices are raised to
    ``1/d`` until the result sums to one.  This happens when weights
    underflow, e.g. ``exp(l - max(l))``; the learners avoid it by working
    with :func:`cap_log`.

    Examples
    --------
    >>> from onlinepca_fast.kernels import cap
    >>> cap([1.0, 2.0, 4.0], 2)
    array([0.16666667, 0.33333333, 0.5       ])
    """
    return _cap(as_float_vector(w, "w", nonnegative=True), d, False, "w")


def cap_log(mu: ArrayLike, d: int) -> FloatArray:
    """:func:`cap` on log-weights, returning normalised capped log-weights.

    Equivalent to ``log(cap(exp(mu), d))`` without ever forming
    ``exp(mu)``: the feasibility test is evaluated relative to the largest
    uncapped log-weight, so log-weights spanning thousands of natural-log
    units are handled exactly and nothing underflows to zero weight.  The
    level of mu does not matter either: mu is first shifted so that its
    d-th largest entry is 0 when that is beyond +-512 (see ``_level``).

    Parameters
    ----------
    mu : array_like of shape (n,)
        Log-weights, unnormalised; ``-inf`` (zero weight) is allowed, NaN
        and ``+inf`` are not.
    d : int
        The cap is ``1/d``; ``1 <= d <= n``.

    Returns
    -------
    nu : ndarray of shape (n,)
        Capped entries are exactly ``-log(d)``; the others are ``mu_i + c``
        for one constant ``c`` (clamped to at most ``-log(d)``), so that
        ``exp(nu)`` sums to one.

    Notes
    -----
    If fewer than ``d`` entries are finite, every finite entry is set to
    ``-log(d)`` and the ``-inf`` entries with the smallest indices are
    raised to ``-log(d)`` until the weights sum to one (see :func:`cap`).

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast.kernels import cap_log
    >>> np.exp(cap_log([0.0, -1000.0, -1000.0], 2))
    array([0.5 , 0.25, 0.25])
    """
    mu = as_float_vector(mu, "mu", allow_neg_inf=True)
    return _cap(_level(mu, as_int(d, "d", 1, mu.shape[0])), d, True, "mu")


#: :func:`cap_log` shifts mu by its d-th largest entry when that is larger
#: than this in magnitude (see :func:`_level`).
_CAP_SHIFT_AT = 512.0


def _level(mu: FloatArray, d: int) -> FloatArray:
    """mu shifted so that its d-th largest entry is 0, if that is far from 0.

    The compiled kernel returns an uncapped entry as ``mu_i + c`` with ``c``
    about minus the largest uncapped entry; when that is large the sum
    cancels and the weights share a relative error of ``ulp(|c|)`` (1e-13
    at 512, 4e-11 at 1e6; at 1e300 every uncapped weight rounds up to the
    cap and the weights sum to more than one).  The largest uncapped entry lies within
    ``log(n)`` above the d-th largest (fewer than d entries are capped), so
    after this shift -- which does not change the projection -- ``c`` is of
    the order of ``log(n)``.  The learners' trial loop does the same
    (``src/state_dense.c``, ``src/state_clustered.c``).
    """
    if -_CAP_SHIFT_AT <= mu.min() and mu.max() <= _CAP_SHIFT_AT:
        return mu  # so is v_d (cheaper than finding it)
    vd = np.partition(mu, mu.shape[0] - d)[mu.shape[0] - d]
    if not (np.isfinite(vd) and abs(vd) > _CAP_SHIFT_AT):
        return mu
    with np.errstate(over="ignore"):
        shifted = mu - vd
    # Entries far above v_d are capped: an overflow to +inf may become any
    # large value.  Below, -inf is a zero weight, as it would be anyway.
    return np.minimum(shifted, np.finfo(np.float64).max)


def _capped_vector(w: ArrayLike, d: int) -> tuple[FloatArray, int]:
    """Validate a vector of the capped simplex (up to scale) and d."""
    w = as_float_vector(w, "w", nonnegative=True)
    n = w.shape[0]
    d = as_int(d, "d", 1, n)
    with np.errstate(over="ignore"):
        total = w.sum()
    if not total > 0:
        raise ValueError("w must have a positive sum")
    if not np.isfinite(total):  # the coefficients sum to sum(w): keep it finite
        raise ValueError("w must have a finite sum (it overflows float64); rescale w")
    if w.max() > (1.0 + CAP_RTOL) * total / d:
        raise ValueError(
            f"w is not in the capped simplex: max(w) = {w.max()!r} exceeds "
            f"sum(w)/d = {total / d!r}; project it with cap(w, d) first")
    if np.count_nonzero(w) < d:
        raise ValueError(f"w must have at least d = {d} positive entries")
    return w, d


@fill_doc
def decompose(w: ArrayLike, d: int) -> tuple[FloatArray, IndexArray]:
    """Mixture decomposition of a capped vector into d-corners (WK Alg. 2).

    A d-corner is the uniform distribution ``r`` on a d-subset (entries
    ``1/d`` on the subset, 0 elsewhere).  Every ``w`` with
    ``0 <= w_i <= sum(w)/d`` is a non-negative combination of at most ``n``
    corners, ``w = sum_j p_j r_j`` with ``sum(p) = sum(w)`` (Theorem 2).

    Each step takes the corner of all entries at the cap plus the largest
    remaining ones, so the corners are those of WK Alg. 2 with this choice.
    The entries reaching the cap are tracked exactly (not recomputed), which
    keeps the invariant ``max(w) <= sum(w)/d`` from drifting in floating
    point; mass that rounding leaves on fewer than ``d`` entries at the end
    (of the order of the unit roundoff) is added to the last coefficient.

    Parameters
    ----------
    w : array_like of shape (n,)
        Non-negative with ``max(w) <= (1 + CAP_RTOL) * sum(w) / d``.
    %(decomposition)s

    Notes
    -----
    O(n log n) for a sort, then O(n) per corner: O(n^2) in the worst case.

    Examples
    --------
    The worked example of WK eq. (6):

    >>> from onlinepca_fast.kernels import decompose
    >>> p, corners = decompose([1/6, 1/3, 1/2], 2)
    >>> p
    array([0.66666667, 0.33333333])
    >>> corners
    array([[1, 2],
           [0, 2]])
    """
    w, d = _capped_vector(w, d)
    n = w.shape[0]
    work, iwork = np.empty(n), np.empty(3 * n, dtype=np.intp)
    # m <= n corners of d indices each, but usually m << n: start small and
    # redo with room for all n only if needed, so that memory is O(m d).
    capacity = min(n, 64)
    while True:
        coef = np.empty(capacity)
        corners = np.empty((capacity, d), dtype=np.intp)
        m = _kernels.decompose(w, d, coef, corners, work, iwork)
        if m >= 0:
            break
        capacity = min(n, 8 * capacity)
    return coef[:m].copy(), np.sort(corners[:m], axis=1)


@fill_doc
def sample_corner(w: ArrayLike, d: int, rng: SeedLike = None,
                  method: Literal["decomposition", "systematic"] = "decomposition") -> IndexArray:
    """Draw a d-subset with inclusion probabilities ``d * w_i / sum(w)``.

    This is the random step of the capped learners (WK Alg. 3, 5 and 6):
    the drawn subset's expected indicator is ``d * w``, so for the linear
    losses of these algorithms the expected loss of the draw equals the
    loss of the parameter ``w``, and the regret bounds (WK Thm. 3 and
    Thm. 6) hold for either method.

    Parameters
    ----------
    %(subset_draw)s
    rng : None, int or numpy.random.Generator, default=None
        Source of the one uniform number used per draw.
    method : {"decomposition", "systematic"}, default="decomposition"
        ``"decomposition"`` runs WK Alg. 2 and picks corner ``j`` with
        probability ``p_j / sum(w)`` (the papers' method, O(n^2) worst case
        but it stops at the drawn corner).  ``"systematic"`` is Madow's
        systematic sampling, O(n): the points ``u, u+1, ..., u+d-1`` are
        laid over consecutive intervals of lengths ``d w_i / sum(w)``.  Both
        have inclusion probabilities exactly ``d w_i / sum(w)``; their joint
        distributions over subsets differ, which the linear losses of the
        learners do not see.

    Returns
    -------
    subset : ndarray of shape (d,), dtype intp
        Sorted distinct indices.

    Examples
    --------
    >>> from onlinepca_fast.kernels import sample_corner
    >>> sample_corner([1/6, 1/3, 1/2], 2, rng=0, method="systematic").tolist()
    [1, 2]
    """
    method = check_scalar(method, "method", SAMPLER)
    w, d = _capped_vector(w, d)
    rng = as_generator(rng, "rng")
    n = w.shape[0]
    chosen = np.empty(d, dtype=np.intp)
    u = rng.random()
    if method == "systematic":
        _kernels.sample_systematic(w, d, u, chosen, np.empty(n))
    else:
        _kernels.select_corner(w, d, u, chosen, np.empty(n),
                               np.empty(3 * n, dtype=np.intp))
    chosen.sort()
    return chosen


# --- eigen-updates -----------------------------------------------------------------

#: Deflation tolerance factor of :func:`rank_one_update`: components of
#: ``z = evecs.T @ x`` with ``|rho| |x| |z_j| <= tol`` are dropped and
#: eigenvalue pairs whose merging discards an entry ``<= tol`` are merged,
#: ``tol = DEFLATION_FACTOR * eps * max(max|evals|, |rho| |x|^2)``.
#: LAPACK's dlaed2/dlaed8 factor.
DEFLATION_FACTOR = _kernels.R1_DEFLATION_FACTOR

_FORCE_FLAGS: dict[str | None, int] = {
    None: 0,
    "bisection": _kernels.R1_FORCE_BISECTION,
    "eig": _kernels.R1_FORCE_EIG,
}
# bordered_update also accepts the dlaed4 stand-in that fails on some roots
_BU_FORCE_FLAGS = {**_FORCE_FLAGS, "bad_dlaed4": _kernels.R1_TEST_BAD_DLAED4}


def _own_or_copy(arr: FloatArray, overwrite: bool) -> FloatArray:
    """`arr` itself when it may be overwritten in place, else a C-ordered copy."""
    if (overwrite and isinstance(arr, np.ndarray) and arr.dtype == np.float64
            and arr.flags.c_contiguous and arr.flags.writeable):
        return arr
    if _fortran_matrix(arr):
        out = np.empty(arr.shape)
        _kernels.transpose_into(arr.T, out)
        return out
    return np.array(arr, dtype=np.float64, order="C", copy=True)


def _fortran_matrix(arr: Any) -> bool:
    """Whether `arr` is a Fortran- and not C-ordered float64 matrix (as
    scipy.linalg.eigh returns): copied to C order by a cache-blocked
    transpose (``_kernels.transpose_into``), several times NumPy's speed."""
    return (isinstance(arr, np.ndarray) and arr.ndim == 2 and arr.dtype == np.float64
            and arr.flags.f_contiguous and not arr.flags.c_contiguous)


def rank_one_update(
        evals: ArrayLike, evecs: ArrayLike, rho: float, x: ArrayLike, *, overwrite: bool = False,
        product: str = "auto", _force: str | None = None, _return_info: bool = False,
) -> Any:
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
    secular eigenvectors (hierarchical from :data:`STRUCTURED_PRODUCT_MIN`
    on, see `product`).  ``rho < 0`` is handled by negating the
    eigenvalues, solving, and reversing.

    Parameters
    ----------
    evals : array_like of shape (n,)
        Eigenvalues in ascending order, finite.
    evecs : array_like of shape (n, n)
        Orthonormal eigenvectors in the *columns* (``evecs[:, j]`` belongs
        to ``evals[j]``).  Orthonormality is assumed, not checked.  C or
        Fortran order (as :func:`scipy.linalg.eigh` returns it) at the same
        speed.
    rho : float
        Weight of the update, any sign; ``0`` is an exact no-op.
    x : array_like of shape (n,)
        Update vector; ``x = 0`` is an exact no-op.
    overwrite : bool, default=False
        Allow the result to be written into `evals` and `evecs` (when they
        are C-contiguous writable float64 arrays; otherwise copies are
        made anyway).  With ``False`` the inputs are never modified.
    product : {"auto", "dense", "structured"}, default="auto"
        How the new eigenvectors are formed: "auto" by the hierarchical
        product from :data:`STRUCTURED_PRODUCT_MIN` non-deflated
        eigenvalues on and one GEMM below; "dense" always one GEMM;
        "structured" hierarchical wherever it applies (from twice its leaf
        size on).  The eigenvectors agree to a few ulps either way.

    Returns
    -------
    new_evals : ndarray of shape (n,)
        Updated eigenvalues, ascending.
    new_evecs : ndarray of shape (n, n)
        Matching orthonormal eigenvectors in the columns, C-contiguous.

    Other Parameters
    ----------------
    _force : {None, "bisection", "eig"}, default=None
        Testing only: force the bisection or ``dsyevr`` fallback.
    _return_info : bool, default=False
        Testing only: also return the counters of the update (a dict).

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
    Cost ``O(n^2) + O(m^2)`` (the roots) plus the eigenvector product,
    ``O(n m^2)`` below :data:`STRUCTURED_PRODUCT_MIN` and ``O(n m r log m)``
    (r ~ 25) from it on, where ``m <= n`` is the number of non-deflated
    eigenvalues; an exact cluster of ``c`` eigenvalues costs ``O(n c)``.  Deflation tolerance:
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
    _check_product(product)
    evals_arr = as_finite_array(evals, "evals")
    if evals_arr.ndim != 1 or evals_arr.shape[0] == 0:
        raise ValueError(f"evals must be a non-empty 1-D array, got shape "
                         f"{evals_arr.shape}")
    n = evals_arr.shape[0]
    _check_ascending(evals_arr)
    evecs_arr = as_finite_array(evecs, "evecs", (n, n))
    rho = check_scalar(rho, "rho", Interval("real"))
    x_arr = np.ascontiguousarray(as_finite_array(x, "x", (n,)), dtype=np.float64)

    new_evals = _own_or_copy(evals_arr, overwrite)
    new_evecs = _own_or_copy(evecs_arr, overwrite)
    # Near the float64 maximum the differences and squares of the secular
    # equation overflow: solve the problem scaled by powers of two (exact
    # but for entries below 2**-74 of the largest), scale back.  Inputs
    # within range take the unscaled path bit for bit.
    x_exp = _exponent(np.abs(x_arr).max())
    d_exp = _exponent(np.abs(new_evals).max())
    # rho |x|^2 < 2**rx_exp (|x|^2 <= n max|x_i|^2)
    rx_exp = _exponent(rho) + 2 * x_exp + n.bit_length() if rho else -1075
    updater = RankOneUpdater(n, product=product)
    if max(d_exp, rx_exp) > _BIG_EXP or x_exp > _BIG_EXP // 2:
        x_shift = max(x_exp - _BIG_EXP // 2, 0)
        shift = max(d_exp - _BIG_EXP, rx_exp - _BIG_EXP, 0)
        work_evals = np.ldexp(new_evals, -shift)
        work_evecs = new_evecs.copy()  # the inputs stay as they are on error
        with np.errstate(over="ignore"):
            rho_scaled = float(np.ldexp(rho, 2 * x_shift - shift))
        if not math.isfinite(rho_scaled):
            _check_finite_result(np.array([rho_scaled]), "evals, rho and x")
        updater.update(work_evals, work_evecs, rho_scaled, np.ldexp(x_arr, -x_shift),
                       _flags=_FORCE_FLAGS[_force])
        with np.errstate(over="ignore"):
            work_evals = np.ldexp(work_evals, shift)
        _check_finite_result(work_evals, "evals, rho and x")
        new_evals[:] = work_evals
        new_evecs[:] = work_evecs
    else:
        updater.update(new_evals, new_evecs, rho, x_arr,
                       _flags=_FORCE_FLAGS[_force])
    if _return_info:
        return new_evals, new_evecs, updater.last_info
    return new_evals, new_evecs


def bordered_update(evals: ArrayLike, evecs: ArrayLike, y: ArrayLike, kappa: float, *,
                    product: str = "auto", _force: str | None = None,
                    _return_info: bool = False) -> Any:
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
        Orthonormal eigenvectors of A in the columns; C or Fortran order at
        the same speed.
    y : array_like of shape (m,)
        The new off-diagonal column.
    kappa : float
        The new diagonal entry.
    product : {"auto", "dense", "structured"}, default="auto"
        How the new eigenvectors are formed, as in :func:`rank_one_update`.

    Returns
    -------
    new_evals : ndarray of shape (m + 1,)
        Ascending.
    new_evecs : ndarray of shape (m + 1, m + 1)
        Orthonormal eigenvectors in the columns, C-contiguous.

    Other Parameters
    ----------------
    _force : {None, "bisection", "eig", "bad_dlaed4"}, default=None
        Testing only: force a fallback, or use a dlaed4 stand-in that
        fails on some roots.
    _return_info : bool, default=False
        Testing only: also return the counters of the update (a dict).

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
    _check_product(product)
    evals_arr = as_finite_array(evals, "evals")
    if evals_arr.ndim != 1:
        raise ValueError(f"evals must be 1-D, got shape {evals_arr.shape}")
    m = evals_arr.shape[0]
    _check_ascending(evals_arr)
    evecs_arr = as_finite_array(evecs, "evecs", (m, m))
    y_arr = np.ascontiguousarray(as_finite_array(y, "y", (m,)), dtype=np.float64)
    kappa = check_scalar(kappa, "kappa", Interval("real"))
    new_evals = np.empty(m + 1)
    new_evals[:m] = evals_arr
    new_evecs = np.empty((m + 1, m + 1))
    if _fortran_matrix(evecs_arr):
        _kernels.transpose_into(evecs_arr.T, new_evecs[:m, :m])
    else:
        new_evecs[:m, :m] = evecs_arr
    # as in rank_one_update: near the float64 maximum, scale by a power of two
    big = max(_exponent(np.abs(evals_arr).max()) if m else -1075, _exponent(abs(kappa)))
    shift = max(big - _BIG_EXP, (_exponent(np.abs(y_arr).max()) if m else -1075)
                - _BIG_EXP // 2, 0)
    if shift:
        new_evals[:m] = np.ldexp(evals_arr, -shift)
        info = _kernels.bordered_update(new_evals, new_evecs, m, np.ldexp(y_arr, -shift),
                                        math.ldexp(kappa, -shift), product=product,
                                        _flags=_BU_FORCE_FLAGS[_force])
        with np.errstate(over="ignore"):
            new_evals[:] = np.ldexp(new_evals, shift)
        _check_finite_result(new_evals, "evals, y and kappa")
    else:
        info = _kernels.bordered_update(new_evals, new_evecs, m, y_arr, kappa,
                                        product=product, _flags=_BU_FORCE_FLAGS[_force])
    if _return_info:
        return new_evals, new_evecs, info
    return new_evals, new_evecs


#: Binary exponent of the eigenvalues (and of rho |x|^2) beyond which the
#: eigen-updates are solved scaled; instances are scaled beyond half of it
#: (their squares enter the secular equation).
_BIG_EXP = 1000


def _check_ascending(evals):
    descending = evals[1:] < evals[:-1]
    if descending.any():
        j = int(np.argmax(descending))
        raise ValueError(f"evals must be in ascending order, got "
                         f"evals[{j}] = {float(evals[j])!r} > "
                         f"evals[{j + 1}] = {float(evals[j + 1])!r}")


def _exponent(value):
    """e with 2**(e-1) <= |value| < 2**e (frexp's), -1075 for zero."""
    return math.frexp(float(value))[1] if value else -1075


def _check_finite_result(evals, args):
    if not np.isfinite(evals).all():
        raise ValueError(f"{args} give updated eigenvalues beyond the float64 range "
                         "(about 1.8e308); scale them down")


def null_space_tol(evals: ArrayLike) -> float:
    """Threshold below which an eigenvalue of a kernel matrix counts as zero.

    ``m * eps * max|evals|`` for ``m`` eigenvalues, the default of
    ``numpy.linalg.matrix_rank``; see :class:`OnlineKernelPCA`, Notes.

    Parameters
    ----------
    evals : array_like of shape (m,)
        Eigenvalues of a kernel matrix.

    Returns
    -------
    tol : float
        The threshold.
    """
    evals = np.ascontiguousarray(evals, dtype=np.float64)
    if evals.ndim != 1:
        raise ValueError(f"evals must be 1-D, got shape {evals.shape}")
    if evals.size == 0:
        return 0.0
    return float(evals.size * np.finfo(np.float64).eps * np.abs(evals).max())
