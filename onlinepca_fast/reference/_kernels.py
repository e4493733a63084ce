"""Plain NumPy oracles of the compiled kernels: the floor of the reference
package (the reference learners are built on these, never the reverse).

Sort-based capping, the loop of Algorithm 2 of Warmuth & Kuzmin (2008),
``numpy.linalg.eigh`` for eigen-updates.  They favour obviousness over
speed.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from .._docs import fill_doc
from .._typing import ArrayLike, FloatArray, IndexArray, SeedLike

# Capping, decomposition and sampling: everything is sorted, summed exactly
# where the result depends on a sum (math.fsum), and kept close to the text
# of Warmuth & Kuzmin (2008), "WK" below.


def _ref_vector(x: Any, name: str, *, log_domain: bool = False) -> FloatArray:
    """Minimal validation: a 1-D, non-empty, real float64 copy of `x`."""
    arr = np.asarray(x)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
    arr = np.array(arr, dtype=np.float64)
    if np.isnan(arr).any() or np.isposinf(arr).any():
        raise ValueError(f"{name} contains NaN or +inf")
    if not log_domain and (np.isneginf(arr).any() or (arr < 0).any()):
        raise ValueError(f"{name} must be finite and non-negative")
    return arr


def _ref_d(d: Any, n: int) -> int:
    """Minimal validation of the subset size: an integer in [1, n]."""
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, numbers.Integral):
        raise TypeError(f"d must be an integer, got {type(d).__name__}")
    d = int(d)
    if not 1 <= d <= n:
        raise ValueError(f"d must satisfy 1 <= d <= {n}, got {d}")
    return d


def _raise_to_cap(positive, d, cap_value, zero_value):
    """Output when fewer than d entries have positive weight.

    The projection does not exist then; every positive entry is set to the
    cap and the zero-weight entries with the smallest indices are raised to
    the cap until d entries sit there (so the weights sum to one).
    """
    out = np.where(positive, cap_value, zero_value)
    missing = d - np.count_nonzero(positive)
    out[np.flatnonzero(~positive)[:missing]] = cap_value
    return out


def cap(w: ArrayLike, d: int) -> FloatArray:
    """Relative-entropy projection onto the capped simplex, by sorting.

    Returns ``argmin_q sum_i q_i log(q_i / w_i)`` over
    ``{q : sum(q) = 1, 0 <= q_i <= 1/d}``, computed as in WK Algorithm 4:
    with the weights sorted decreasingly, ``v_1 >= v_2 >= ...``, find the
    smallest ``i`` such that capping the ``i`` largest at ``1/d`` and
    rescaling the rest to total ``(d - i)/d`` leaves none above ``1/d``,
    i.e. such that ``(d - i) v_{i+1} <= sum_{j > i} v_j``.

    Parameters
    ----------
    w : array_like of shape (n,)
        Non-negative finite weights; they need not be normalised.
    d : int
        The cap is ``1/d``, ``1 <= d <= n``.

    Returns
    -------
    q : ndarray of shape (n,)
        The ``i`` largest entries are exactly ``1/d``; the others are
        ``w_j (d - i) / (d sum_{uncapped} w)``, clamped to at most ``1/d``.

    Notes
    -----
    If fewer than ``d`` entries are positive the projection does not exist:
    every positive entry is set to exactly ``1/d`` and then the zero
    entries with the smallest indices are raised to ``1/d`` until the
    result sums to one.

    The feasibility test is first evaluated on rounded suffix sums and then
    confirmed exactly (``math.fsum`` decides its sign), so the capped set
    is the exact one for the given floating-point input; the rescaling
    constant is computed from an exact sum of the ratios ``v_j / v_{i+1}``.

    References
    ----------
    WK: M. K. Warmuth and D. Kuzmin, JMLR 9 (2008), Algorithm 4.
    """
    w = _ref_vector(w, "w")
    n = w.shape[0]
    d = _ref_d(d, n)
    cap_value = 1.0 / d
    positive = w > 0
    if np.count_nonzero(positive) < d:
        return _raise_to_cap(positive, d, cap_value, 0.0)

    order = np.argsort(-w, kind="stable")
    v = w[order]
    # An exact power-of-two rescaling keeps (d - i) * v and the suffix sums
    # finite for weights near the overflow threshold; it changes nothing else.
    v = np.ldexp(v, -max(0, int(np.frexp(v[0])[1]) - 900))

    def feasible(i):
        # (d - i) v_{i+1} <= sum_{j > i} v_j, with the sign decided exactly
        terms = np.concatenate([v[i:], np.full(d - i, -v[i])])
        return math.fsum(terms.tolist()) >= 0.0

    suffix = np.cumsum(v[::-1])[::-1]  # suffix[i] ~ sum_{j >= i} v_j
    i = int(np.argmax(v[:d] * (d - np.arange(d)) <= suffix[:d]))
    while i > 0 and feasible(i - 1):
        i -= 1
    while not feasible(i):
        i += 1  # f(d - 1) always holds, so this stops below d

    ratios = v[i:] / v[i]
    scale = ((d - i) / d) / math.fsum(ratios.tolist())
    out = np.zeros(n)
    out[order[:i]] = cap_value
    out[order[i:]] = np.minimum(ratios * scale, cap_value)
    return out


def cap_log(mu: ArrayLike, d: int) -> FloatArray:
    """:func:`cap` on log-weights, returning normalised capped log-weights.

    The same projection as :func:`cap` (WK Algorithm 4) applied to
    ``exp(mu)``, without forming ``exp(mu)``: with the log-weights sorted
    decreasingly, ``v_1 >= v_2 >= ...``, capping the ``i`` largest is
    feasible iff ``sum_{j > i} exp(v_j - v_{i+1}) >= d - i``, a test taken
    relative to the largest uncapped weight, so log-weights spanning
    thousands of natural-log units neither overflow nor underflow.

    Parameters
    ----------
    mu : array_like of shape (n,)
        Unnormalised log-weights, finite or ``-inf`` (zero weight).
    d : int
        The cap is ``1/d``, ``1 <= d <= n``.

    Returns
    -------
    nu : ndarray of shape (n,)
        Capped entries are exactly ``-log(d)``; the others are
        ``mu_i + c`` with ``c = log((d - i)/d) - logsumexp(uncapped mu)``,
        clamped to at most ``-log(d)``; ``-inf`` stays ``-inf``.

    Notes
    -----
    If fewer than ``d`` entries are finite, every finite entry is set to
    ``-log(d)`` and the ``-inf`` entries with the smallest indices are
    raised to ``-log(d)`` until the weights sum to one (as in :func:`cap`).

    The first guess for ``i`` comes from suffix log-sums
    (``np.logaddexp.accumulate``), whose rounding grows with ``n`` and
    ``|mu|``; it is confirmed with exactly summed ``exp(v_j - v_{i+1})``.

    References
    ----------
    WK: M. K. Warmuth and D. Kuzmin, JMLR 9 (2008), Algorithm 4.
    """
    mu = _ref_vector(mu, "mu", log_domain=True)
    n = mu.shape[0]
    d = _ref_d(d, n)
    cap_value = -math.log(d)
    finite = np.isfinite(mu)
    if np.count_nonzero(finite) < d:
        return _raise_to_cap(finite, d, cap_value, -np.inf)

    idx = np.flatnonzero(finite)
    order = idx[np.argsort(-mu[idx], kind="stable")]
    v = mu[order]

    def feasible(i):
        return math.fsum(np.exp(v[i:] - v[i]).tolist()) >= d - i

    log_suffix = np.logaddexp.accumulate(v[::-1])[::-1]  # log sum_{j>=i} e^v_j
    i = int(np.argmax(log_suffix[:d] - v[:d] >= np.log(d - np.arange(d))))
    while i > 0 and feasible(i - 1):
        i -= 1
    while not feasible(i):
        i += 1

    log_sum = math.log(math.fsum(np.exp(v[i:] - v[i])))
    if abs(v[i]) > 512.0:
        # relative to v[i] (level = v[i] + c): v[i:] + c carries an error of
        # ulp(v[i]), a weight off by e^2 at |v[i]| = 2^54
        level = math.log((d - i) / d) - log_sum
        new = (v[i:] - v[i]) + level
    else:
        new = v[i:] + (math.log((d - i) / d) - (v[i] + log_sum))
    out = np.full(n, -np.inf)
    out[order[:i]] = cap_value
    out[order[i:]] = np.minimum(new, cap_value)
    return out


def _check_capped(w: Any, d: Any) -> tuple[FloatArray, int]:
    """Validate a vector of the capped simplex (up to scale) and d."""
    w = _ref_vector(w, "w")
    n = w.shape[0]
    d = _ref_d(d, n)
    total = math.fsum(w.tolist())
    if not total > 0 or w.max() > (1.0 + 1e-9) * total / d:
        raise ValueError("w must satisfy 0 < max(w) <= sum(w)/d")
    if np.count_nonzero(w) < d:
        raise ValueError(f"w must have at least d = {d} positive entries")
    return w, d


@fill_doc
def decompose(w: ArrayLike, d: int) -> tuple[FloatArray, IndexArray]:
    """Mixture decomposition of a capped vector into d-corners (WK Alg. 2).

    Repeat: take as corner the ``d`` largest components (ties broken by the
    smallest index; this includes every component equal to ``|w|/d``), let
    ``s`` be the smallest chosen and ``l`` the largest unchosen value
    (0 if ``d == n``), output ``p = min(d s, |w| - d l)`` with that corner
    and subtract ``p/d`` from the chosen components; until ``w = 0``.

    Parameters
    ----------
    w : array_like of shape (n,)
        Non-negative with ``max(w) <= sum(w)/d`` (up to 1e-9 relative) and
        at least ``d`` positive entries.
    %(decomposition)s

    Notes
    -----
    Floating-point stopping rule: at most ``n`` corners (WK Theorem 2), and
    stop once fewer than ``d`` components are positive or the remaining
    mass is at most ``eps * sum(w)`` (rounding crumbs; the last genuine
    coefficients can be far below ``n * eps * sum(w)``, so a larger
    threshold would cost reconstruction accuracy); the leftover mass is
    added to the last coefficient.  When ``p = d s`` exactly ``s`` is
    subtracted, so the components equal to ``s`` become exactly zero, and
    any component that a step leaves within a few ulps of zero (relative to
    its value before the step) is set to zero: such a component was meant
    to reach 0 (it sat at the cap ``|w|/d`` up to rounding), and without
    this its crumbs would be decomposed into hundreds of corners of
    coefficient ~1e-17.

    References
    ----------
    WK: M. K. Warmuth and D. Kuzmin, JMLR 9 (2008), Algorithm 2, Theorem 2.
    """
    rest, d = _check_capped(w, d)
    n = rest.shape[0]
    rest = rest.copy()
    eps = np.finfo(np.float64).eps
    stop_mass = eps * math.fsum(rest.tolist())
    index = np.arange(n)
    coef_list: list[float] = []
    corners: list[IndexArray] = []
    while len(coef_list) < n:
        total = math.fsum(rest.tolist())
        if total <= stop_mass or np.count_nonzero(rest) < d:
            break
        order = np.lexsort((index, -rest))  # decreasing value, then index
        chosen = order[:d]
        s = rest[chosen[-1]]
        l = rest[order[d]] if d < n else 0.0
        p = min(d * s, total - d * l)
        if not p > 0:
            break
        coef_list.append(p)
        corners.append(np.sort(chosen))
        # Subtract p/d (exactly s in the first case, so the components equal
        # to s become exactly 0); a result within a few ulps of zero is a
        # rounding leftover of a component meant to reach 0, not weight.
        old = rest[chosen]
        new = old - (s if d * s <= total - d * l else p / d)
        new[new <= 4 * eps * old] = 0.0
        rest[chosen] = new
    coefs = np.array(coef_list, dtype=np.float64)
    coefs[-1] += math.fsum(rest.tolist())
    return coefs, np.array(corners, dtype=np.intp).reshape(-1, d)


@fill_doc
def sample_corner(
        w: ArrayLike, d: int, rng: SeedLike = None, method: str = "decomposition",
) -> IndexArray:
    """Draw a d-subset with inclusion probabilities ``d * w_i / sum(w)``.

    Exactly one ``rng.random()`` is drawn per call, after validation, in
    both methods, so the compiled sampler and this one give the same
    subset for the same generator state.

    Parameters
    ----------
    %(subset_draw)s
    rng : None, int or numpy.random.Generator, default=None
        Passed to ``numpy.random.default_rng``.
    method : {"decomposition", "systematic"}, default="decomposition"
        ``"decomposition"``: ``p, corners = decompose(w, d)`` (WK Alg. 2)
        and the first corner ``j`` with ``cumsum(p)[j] > u * sum(p)`` is
        drawn (WK Alg. 3).  ``"systematic"``: Madow's systematic sampling;
        with ``pi = d * w / sum(w)`` and ``C = cumsum(pi)`` (``C = d`` from
        the last positive weight on), index ``i`` is drawn when one of the
        points ``u, u + 1, ..., u + d - 1`` lies in ``[C_{i-1}, C_i)``.

    Returns
    -------
    subset : ndarray of shape (d,), dtype intp
        Sorted distinct indices.

    References
    ----------
    WK: M. K. Warmuth and D. Kuzmin, JMLR 9 (2008), Algorithms 2 and 3.
    W. G. Madow, "On the theory of systematic sampling, II", Ann. Math.
    Statist. 20 (1949).
    """
    if not isinstance(method, str) or method not in ("decomposition", "systematic"):
        raise ValueError(f"method must be 'decomposition' or 'systematic', got {method!r}")
    w, d = _check_capped(w, d)
    rng = np.random.default_rng(rng)
    if method == "decomposition":
        p, corners = decompose(w, d)
        u = rng.random()
        above = np.flatnonzero(np.cumsum(p) > u * p.sum())
        j = above[0] if above.size else len(p) - 1  # u * sum(p) rounded up
        return corners[j].copy()

    u = rng.random()
    n = w.shape[0]
    C = np.cumsum(d * w / w.sum())
    C[np.flatnonzero(w > 0)[-1]:] = d
    C_prev = np.concatenate([[0.0], C[:-1]])
    # points u + m (m = 0, ..., d-1) in [C_prev, C): ceil(C - u) - ceil(C_prev - u)
    hits = np.ceil(C - u) - np.ceil(C_prev - u)
    chosen = np.flatnonzero(hits > 0)
    if chosen.size < d:
        # Only if rounding made some pi_i exceed 1 and two points fell in its
        # interval: complete with the largest weights not drawn yet.
        rest = np.setdiff1d(np.arange(n), chosen)
        rest = rest[np.lexsort((rest, -w[rest]))]
        chosen = np.sort(np.concatenate([chosen, rest[:d - chosen.size]]))
    return chosen.astype(np.intp)


# Eigen-updates: the matrix formed, then numpy.linalg.eigh.

def rank_one_update(
        evals: ArrayLike, evecs: ArrayLike, rho: float, x: ArrayLike,
) -> tuple[FloatArray, FloatArray]:
    """Eigensystem of ``evecs @ diag(evals) @ evecs.T + rho * outer(x, x)``.

    Forms the matrix and calls ``numpy.linalg.eigh``: O(n^3).

    Parameters
    ----------
    evals : array_like of shape (n,)
        Eigenvalues of the matrix updated.
    evecs : array_like of shape (n, n)
        Its eigenvectors, in the columns.
    rho : float
        Weight of the rank-one term.
    x : array_like of shape (n,)
        Vector of the rank-one term.

    Returns
    -------
    new_evals : ndarray of shape (n,)
        Ascending, as :func:`onlinepca_fast.kernels.rank_one_update` returns.
    new_evecs : ndarray of shape (n, n)
        Eigenvectors in the columns.
    """
    evals = np.asarray(evals, dtype=np.float64)
    evecs = np.asarray(evecs, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    a = (evecs * evals) @ evecs.T + rho * np.outer(x, x)
    return np.linalg.eigh(0.5 * (a + a.T))


def bordered_update(
        evals: ArrayLike, evecs: ArrayLike, y: ArrayLike, kappa: float,
) -> tuple[FloatArray, FloatArray]:
    """Eigensystem of ``[[A, y], [y^T, kappa]]``, ``A = evecs diag(evals) evecs^T``.

    Forms the bordered matrix and calls ``numpy.linalg.eigh``: O(m^3).

    Parameters
    ----------
    evals : array_like of shape (m,)
        Eigenvalues of A.
    evecs : array_like of shape (m, m)
        Eigenvectors of A, in the columns.
    y : array_like of shape (m,)
        The new off-diagonal column.
    kappa : float
        The new diagonal entry.

    Returns
    -------
    new_evals : ndarray of shape (m + 1,)
        Ascending.
    new_evecs : ndarray of shape (m + 1, m + 1)
        Eigenvectors in the columns.
    """
    evals = np.asarray(evals, dtype=np.float64)
    m = evals.shape[0]
    evecs = np.asarray(evecs, dtype=np.float64).reshape(m, m)
    a = np.empty((m + 1, m + 1))
    a[:m, :m] = (evecs * evals) @ evecs.T
    a[:m, m] = a[m, :m] = np.asarray(y, dtype=np.float64)
    a[m, m] = kappa
    return np.linalg.eigh(0.5 * (a + a.T))


class PresetUniform(np.random.Generator):
    """A Generator whose ``random()`` returns a given u.

    :func:`sample_corner` draws exactly one ``rng.random()``; handing it
    this object makes it use the u a reference learner drew at the start of
    its trial.
    """

    def __init__(self, u):
        super().__init__(np.random.PCG64(0))
        self._u = u

    def random(self, *args, **kwargs):
        return self._u
