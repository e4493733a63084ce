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

References
----------
.. [WK] M. K. Warmuth and D. Kuzmin, "Randomized online PCA algorithms with
   regret bounds that are logarithmic in the dimension", JMLR 9, 2008.
.. [HW] M. Herbster and M. K. Warmuth, "Tracking the best linear
   predictor", JMLR 1, 2001.
"""

import numpy as np

from . import _kernels
from ._rank_one import DEFLATION_FACTOR, RankOneUpdater, bordered_update, rank_one_update
from ._validation import as_float_vector, as_generator, as_int

__all__ = ["cap", "cap_log", "decompose", "sample_corner", "rank_one_update",
           "bordered_update", "RankOneUpdater", "CAP_RTOL", "DEFLATION_FACTOR"]

#: Relative tolerance with which :func:`decompose` and :func:`sample_corner`
#: accept a vector as capped: ``max(w) <= (1 + CAP_RTOL) * sum(w) / d``.
#: Entries within this tolerance of the cap are treated as at the cap.
CAP_RTOL = 1e-9


def _cap(x, d, log_domain, name):
    n = x.shape[0]
    d = as_int(d, "d", 1, n)
    out = np.empty(n)
    _kernels.cap(x, d, log_domain, out, np.empty(3 * n))
    return out


def cap(w, d):
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


def cap_log(mu, d):
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


def _level(mu, d):
    """mu shifted so that its d-th largest entry is 0, if that is far from 0.

    The compiled kernel returns an uncapped entry as ``mu_i + c`` with ``c``
    about minus the largest uncapped entry; when that is large the sum
    cancels and the weights share a relative error of ``ulp(|c|)`` (1e-13
    at 512, 4e-11 at 1e6; at 1e300 every uncapped weight rounds up to the
    cap and the weights sum to more than one).  The largest uncapped entry lies within
    ``log(n)`` above the d-th largest (fewer than d entries are capped), so
    after this shift -- which does not change the projection -- ``c`` is of
    the order of ``log(n)``.  The learners' trial loop does the same
    (``src/learner.c``).
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


def _capped_vector(w, d):
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


def decompose(w, d):
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
    d : int
        Corner size, ``1 <= d <= n``.

    Returns
    -------
    p : ndarray of shape (m,)
        Non-negative coefficients, ``m <= n``, summing to ``sum(w)``.
    corners : ndarray of shape (m, d), dtype intp
        Row ``j`` holds the sorted indices of corner ``j``.

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


_METHODS = ("decomposition", "systematic")


def sample_corner(w, d, rng=None, method="decomposition"):
    """Draw a d-subset with inclusion probabilities ``d * w_i / sum(w)``.

    This is the random step of the capped learners (WK Alg. 3, 5 and 6):
    the drawn subset's expected indicator is ``d * w``, so for the linear
    losses of these algorithms the expected loss of the draw equals the
    loss of the parameter ``w``, and the regret bounds (WK Thm. 3 and
    Thm. 6) hold for either method.

    Parameters
    ----------
    w : array_like of shape (n,)
        A capped vector, as for :func:`decompose`.
    d : int
        Subset size, ``1 <= d <= n``.
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
    if not isinstance(method, str) or method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
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
