"""Tests of kernels.cap and kernels.cap_log, the relative-entropy projection
onto the capped simplex (Warmuth & Kuzmin 2008, Algorithm 4).

The compiled kernels (median search, no sort) are compared with the
sort-based oracle in onlinepca_fast.reference, with the defining properties
of the projection (KKT conditions), and for tiny n with a direct numerical
minimisation of the relative entropy.

Tolerances
----------
RTOL = 1e-14 (linear domain): both versions compute ``q_i = w_i * c`` with
c from a sum over the uncapped weights; the oracle sums exactly
(math.fsum), so what remains is a few roundings in c plus the summation
error of the compiled code -- about 45 ulps of room (measured: below
1e-15 for every case here, n up to 1e5).
SUM_ATOL = 1e-12: the outputs sum to one up to n roundings of numbers
<= 1/d, i.e. ~n eps / d; math.fsum does the checking sum exactly.

LOG_ATOL = 1e-14, scaled by ``max(1, max_j |mu_j|)`` over the finite mu
(log domain): the output is ``mu_i + c``, and c is assembled from
log-weights as large as the largest one (the compiled kernel works
relative to ``max(mu)``, the oracle relative to the largest uncapped one),
so each version is accurate to a few ulps of ``max |mu|`` -- not of
``|mu_i|``: with mu = (599, 0, 0) the outputs near -1.4 carry errors of
~1 ulp(599) = 1.1e-13.  The same ~45 ulps of room as in the linear domain;
measured differences are below 1e-15 on this scale.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.optimize import minimize

from onlinepca_fast import kernels, reference

RTOL = 1e-14
LOG_ATOL = 1e-14
SUM_ATOL = 1e-12

SIZES = [1, 2, 3, 10, 100, 1000, 10**4, 10**5]


def _sizes_d(n):
    """The subset sizes tried for each n: extremes and a typical one."""
    return sorted({d for d in (1, 2, max(1, n // 10), n - 1, n) if 1 <= d <= n})


def _weights(kind, n, rng):
    if kind == "exponential":  # heavy tail: the largest entries get capped
        return rng.standard_exponential(n) ** 3
    if kind == "ties":  # three distinct values: big blocks of exact ties
        return rng.integers(1, 4, n).astype(np.float64) ** 2
    if kind == "zeros":  # about half the weights exactly zero
        w = rng.standard_exponential(n) ** 2
        w[rng.random(n) < 0.5] = 0.0
        return w
    if kind == "wide":  # 260 orders of magnitude
        return np.exp(rng.uniform(-300.0, 300.0, n))
    raise AssertionError(kind)


def _log_weights(kind, n, rng):
    if kind == "wide":  # 600 orders of magnitude: exp(mu) underflows
        return rng.uniform(-1400.0, 0.0, n)
    if kind == "normal":  # a learner's log-eigenvalues after a while
        return rng.normal(scale=20.0, size=n)
    if kind == "ties":  # 0, -500, -1000, -1500: exact ties far apart
        return rng.integers(-3, 1, n) * 500.0
    if kind == "neginf":  # zero weights mixed with a wide spread
        mu = rng.uniform(-1400.0, 0.0, n)
        mu[rng.random(n) < 0.5] = -np.inf
        return mu
    if kind == "shifted":  # large positive log-weights: c is about -2400
        return rng.uniform(1000.0, 2400.0, n)
    raise AssertionError(kind)


def _raised(positive, d, cap_value, zero_value):
    """The documented output when fewer than d entries have positive weight."""
    out = np.where(positive, cap_value, zero_value)
    out[np.flatnonzero(~positive)[:d - np.count_nonzero(positive)]] = cap_value
    return out


def check_cap(w, d, q):
    """Output invariants of cap and the KKT conditions of the projection."""
    w = np.asarray(w, dtype=np.float64)
    cap_value = 1.0 / d
    assert q.shape == w.shape and q.dtype == np.float64
    assert np.all(q >= 0.0)
    assert np.all(q <= cap_value), "an entry was rounded above the cap"
    assert math.fsum(q) == pytest.approx(1.0, rel=0, abs=SUM_ATOL)
    positive = w > 0
    if np.count_nonzero(positive) < d:
        np.testing.assert_array_equal(q, _raised(positive, d, cap_value, 0.0))
        return
    assert np.all(q[~positive] == 0.0)
    # Capped entries are bitwise 1/d; every other positive entry must then
    # be w_i * c for one c -- so a capped entry a few ulps off fails here.
    # (An uncapped entry may also round to exactly 1/d: a tie at the cap
    # boundary, or w_i * c = 1 - 1e-36 for d = 1; no check below assumes
    # that entries equal to 1/d are exactly the capped ones.)
    capped = q == cap_value
    free = positive & ~capped
    if free.any():
        ratio = q[free] / w[free]
        c = np.median(ratio)
        np.testing.assert_allclose(ratio, c, rtol=RTOL, atol=0)
        # KKT: a capped entry would reach or exceed the cap if rescaled
        assert np.all(w[capped] * c >= cap_value * (1 - RTOL))
    else:
        assert np.count_nonzero(capped) == d
    # order preserved, and equal weights get equal (bitwise) outputs
    order = np.argsort(w, kind="stable")
    assert np.all(np.diff(q[order]) >= 0.0)
    tied = np.diff(w[order]) == 0
    assert np.all(np.diff(q[order])[tied] == 0.0)


def check_cap_log(mu, d, nu):
    """Output invariants of cap_log and its KKT conditions."""
    mu = np.asarray(mu, dtype=np.float64)
    cap_value = -math.log(d)
    assert nu.shape == mu.shape and nu.dtype == np.float64
    assert not np.isnan(nu).any()
    assert np.all(nu <= cap_value), "an entry was rounded above the cap"
    assert math.fsum(np.exp(nu)) == pytest.approx(1.0, rel=0, abs=SUM_ATOL)
    finite = np.isfinite(mu)
    if np.count_nonzero(finite) < d:
        np.testing.assert_array_equal(nu, _raised(finite, d, cap_value, -np.inf))
        return
    assert np.all(np.isneginf(nu[~finite]))
    assert np.all(np.isfinite(nu[finite]))
    tol = LOG_ATOL * max(1.0, np.abs(mu[finite]).max(), np.abs(nu[finite]).max())
    capped = nu == cap_value
    free = finite & ~capped
    if free.any():
        shift = nu[free] - mu[free]
        c = np.median(shift)
        assert np.ptp(shift) <= tol, "uncapped entries are not mu_i + one constant"
        assert np.all(mu[capped] + c >= cap_value - tol)  # KKT
    else:
        assert np.count_nonzero(capped) == d
    order = np.argsort(mu[finite], kind="stable")
    mu_sorted, nu_sorted = mu[finite][order], nu[finite][order]
    assert np.all(np.diff(nu_sorted) >= 0.0)
    assert np.all(np.diff(nu_sorted)[np.diff(mu_sorted) == 0] == 0.0)


def assert_log_close(actual, desired, mu):
    """|actual - desired| <= LOG_ATOL * max(1, max |finite mu|); -inf alike."""
    np.testing.assert_array_equal(np.isneginf(actual), np.isneginf(desired))
    fin = np.isfinite(desired)
    scale = max(1.0, np.abs(mu[np.isfinite(mu)]).max(initial=0.0))
    err = np.abs(actual[fin] - desired[fin]) / scale
    assert err.max(initial=0.0) <= LOG_ATOL, (
        f"max scaled error {err.max():.3g} at index {np.flatnonzero(fin)[err.argmax()]}")


# ---------------------------------------------------------------------------
# Agreement with the sort-based oracle


@pytest.mark.parametrize("kind", ["exponential", "ties", "zeros", "wide"])
@pytest.mark.parametrize("n", SIZES)
def test_cap_matches_reference(n, kind):
    rng = np.random.default_rng([n, len(kind)])
    w = _weights(kind, n, rng)
    for d in _sizes_d(n):
        q = kernels.cap(w, d)
        np.testing.assert_allclose(q, reference.cap(w, d), rtol=RTOL, atol=0,
                                   err_msg=f"d={d}")
        check_cap(w, d, q)


@pytest.mark.parametrize("kind", ["wide", "normal", "ties", "neginf", "shifted"])
@pytest.mark.parametrize("n", SIZES)
def test_cap_log_matches_reference(n, kind):
    rng = np.random.default_rng([n, len(kind), 1])
    mu = _log_weights(kind, n, rng)
    for d in _sizes_d(n):
        nu = kernels.cap_log(mu, d)
        assert_log_close(nu, reference.cap_log(mu, d), mu)
        check_cap_log(mu, d, nu)


def test_reference_cap_log_is_log_of_cap():
    # the two oracles agree where exp(mu) neither underflows nor overflows
    rng = np.random.default_rng(7)
    mu = rng.uniform(-30.0, 0.0, 500)
    for d in (1, 7, 50, 499):
        np.testing.assert_allclose(np.exp(reference.cap_log(mu, d)),
                                   reference.cap(np.exp(mu), d), rtol=1e-13, atol=0)


# ---------------------------------------------------------------------------
# Worked examples and special cases


def test_cap_worked_example_wk_eq6():
    # WK Sec. 4.1: (1/7, 2/7, 4/7) capped at 1/2 is (1/6, 1/3, 1/2)
    expected = np.array([1 / 6, 1 / 3, 1 / 2])
    for w in ([1.0, 2.0, 4.0], [1 / 7, 2 / 7, 4 / 7], [1, 2, 4]):
        q = kernels.cap(w, 2)
        np.testing.assert_allclose(q, expected, rtol=RTOL, atol=0)
        assert q[2] == 0.5
        np.testing.assert_allclose(kernels.cap_log(np.log(w), 2), np.log(expected),
                                   rtol=0, atol=LOG_ATOL)


@pytest.mark.parametrize("seed", range(3))
def test_cap_ties_at_the_cap_boundary(seed):
    # Capping the two 100s leaves the block of 1s exactly at the cap 1/10:
    # (10 - 2) * 1 == 3 * 1 + 10 * 0.5.  Capped or "uncapped at the cap",
    # the block must come out at 1/10 and the tail at 1/20.
    w = np.array([100.0, 100.0, 1.0, 1.0, 1.0] + [0.5] * 10)
    expected = np.array([0.1] * 5 + [0.05] * 10)
    perm = np.random.default_rng(seed).permutation(w.size)
    q = kernels.cap(w[perm], 10)
    np.testing.assert_allclose(q, expected[perm], rtol=RTOL, atol=0)
    check_cap(w[perm], 10, q)
    nu = kernels.cap_log(np.log(w[perm]), 10)
    np.testing.assert_allclose(nu, np.log(expected[perm]), rtol=0,
                               atol=LOG_ATOL * math.log(100))
    check_cap_log(np.log(w[perm]), 10, nu)
    # the smallest such case: (3 - 1) * 2 == 2 + 1 + 1
    np.testing.assert_allclose(kernels.cap([5.0, 2.0, 1.0, 1.0], 3),
                               [1 / 3, 1 / 3, 1 / 6, 1 / 6], rtol=RTOL, atol=0)


def test_cap_many_equal_values():
    # a block of ties that is capped as a whole, and one that is not
    w = np.array([9.0] * 30 + [1.0] * 970)
    for d in (10, 100, 200, 1000):
        q = kernels.cap(w, d)
        np.testing.assert_allclose(q, reference.cap(w, d), rtol=RTOL, atol=0)
        check_cap(w, d, q)
    q = kernels.cap(w, 200)  # 200 * 9 > 1240: the 9s are capped (170 * 1 <= 970)
    assert np.all(q[:30] == 1 / 200)
    np.testing.assert_allclose(q[30:], 170 / 200 / 970, rtol=RTOL, atol=0)
    q = kernels.cap(w, 100)  # 100 * 9 < 1240: nothing is capped
    np.testing.assert_allclose(q, w / 1240, rtol=RTOL, atol=0)


def test_cap_of_a_capped_vector_is_its_normalisation():
    # WK Alg. 4, first branch: nothing above the cap, only rescaling
    w = np.array([3.0, 1.0, 2.0, 2.0, 0.0, 1.5])
    for d in (1, 2, 3):
        np.testing.assert_allclose(kernels.cap(w, d), w / w.sum(), rtol=RTOL, atol=0)
    np.testing.assert_allclose(kernels.cap(w, 4), reference.cap(w, 4), rtol=RTOL, atol=0)


def test_cap_d_equals_1_and_n():
    rng = np.random.default_rng(3)
    w = rng.standard_exponential(50)
    np.testing.assert_allclose(kernels.cap(w, 1), w / w.sum(), rtol=RTOL, atol=0)
    np.testing.assert_allclose(kernels.cap(w, 50), np.full(50, 1 / 50), rtol=RTOL, atol=0)
    np.testing.assert_allclose(kernels.cap([7.0], 1), [1.0], rtol=RTOL, atol=0)
    assert kernels.cap_log([-1000.0], 1)[0] == 0.0
    mu = np.log(w)
    np.testing.assert_allclose(kernels.cap_log(mu, 50), np.full(50, -math.log(50)),
                               rtol=0, atol=LOG_ATOL * math.log(50))


def test_cap_fewer_than_d_positive():
    # the projection does not exist: positives to 1/d, then the zero
    # entries with the smallest indices are raised to 1/d
    np.testing.assert_array_equal(kernels.cap([1.0, 0, 0, 0], 2), [0.5, 0.5, 0, 0])
    np.testing.assert_array_equal(kernels.cap([0, 0, 3.0, 0, 0], 3),
                                  [1 / 3, 1 / 3, 1 / 3, 0, 0])
    np.testing.assert_array_equal(kernels.cap([0, 2.0, 0, 5.0], 3), [1 / 3, 1 / 3, 0, 1 / 3])
    np.testing.assert_array_equal(kernels.cap([0.0, 0.0, 0.0], 2), [0.5, 0.5, 0])
    h = math.log(2)
    np.testing.assert_array_equal(kernels.cap_log([0.0, -np.inf, -np.inf], 2),
                                  [-h, -h, -np.inf])
    np.testing.assert_array_equal(kernels.cap_log([-np.inf, 5.0, -np.inf, -np.inf], 3),
                                  [-math.log(3)] * 3 + [-np.inf])
    np.testing.assert_array_equal(kernels.cap_log([-np.inf, -np.inf], 1), [0.0, -np.inf])


def test_cap_underflow_linear_versus_log():
    mu = np.array([0.0, -800.0, -800.0, -800.0])
    # exp underflows: [1, 0, 0, 0] has fewer than d = 2 positive entries
    w = np.exp(mu)
    np.testing.assert_array_equal(w, [1.0, 0, 0, 0])
    np.testing.assert_array_equal(kernels.cap(w, 2), [0.5, 0.5, 0, 0])
    # the log domain is not fooled: the remaining mass 1/2 is spread equally
    nu = kernels.cap_log(mu, 2)
    assert nu[0] == -math.log(2)
    # nu = -800 + c: rounding at the magnitude 800, ulp(800) = 1.1e-13
    np.testing.assert_allclose(nu[1:], math.log(1 / 6), rtol=0, atol=1e-12)
    check_cap_log(mu, 2, nu)
    # and the linear domain handles subnormal weights that did not underflow
    np.testing.assert_allclose(kernels.cap([1.0, 1e-320, 1e-320, 1e-320], 2),
                               [0.5, 1 / 6, 1 / 6, 1 / 6], rtol=RTOL, atol=0)
    for scale in (-1070, 1020):  # exactly representable tiny / huge weights
        w = np.ldexp([1.0, 2.0, 4.0], scale)
        np.testing.assert_allclose(kernels.cap(w, 2), [1 / 6, 1 / 3, 1 / 2], rtol=RTOL, atol=0)


def test_cap_log_spans_600_orders_of_magnitude():
    rng = np.random.default_rng(11)
    mu = rng.uniform(-1400.0, 0.0, 2000)
    mu[:5] = 0.0  # a capped block of ties
    for d in (1, 6, 200, 1999):
        nu = kernels.cap_log(mu, d)
        check_cap_log(mu, d, nu)
        assert_log_close(nu, reference.cap_log(mu, d), mu)
        # weights below exp(-745) are zero as floats, never as log-weights
        assert np.all(np.isfinite(nu))


def test_cap_inputs_are_not_modified_and_layouts_agree():
    rng = np.random.default_rng(5)
    w = rng.standard_exponential(41) ** 3
    w_copy = w.copy()
    q = kernels.cap(w, 5)
    np.testing.assert_array_equal(w, w_copy)
    mu = np.log(w)
    kernels.cap_log(mu, 5)
    np.testing.assert_array_equal(mu, np.log(w_copy))
    # non-contiguous, float32, list and integer input
    np.testing.assert_allclose(kernels.cap(w[::2], 3), kernels.cap(w[::2].copy(), 3),
                               rtol=RTOL, atol=0)
    w32 = w.astype(np.float32)
    np.testing.assert_allclose(kernels.cap(w32, 5), kernels.cap(w32.astype(np.float64), 5),
                               rtol=RTOL, atol=0)
    np.testing.assert_allclose(kernels.cap(list(w), 5), q, rtol=RTOL, atol=0)
    np.testing.assert_allclose(kernels.cap(np.array([1, 2, 4]), np.int64(2)),
                               [1 / 6, 1 / 3, 1 / 2], rtol=RTOL, atol=0)


# ---------------------------------------------------------------------------
# cap is the relative-entropy projection: a direct numerical minimisation


def _kl(q, w):
    q = np.asarray(q, dtype=np.float64)
    pos = q > 0
    return float(np.sum(q[pos] * np.log(q[pos] / w[pos])))


def _project_numerically(w, d):
    """argmin sum q log(q/w) over the capped simplex by SLSQP (approximate)."""
    n = w.size

    def fun(q):
        q = np.maximum(q, 1e-300)
        return float(np.sum(q * np.log(q / w)))

    def jac(q):
        return np.log(np.maximum(q, 1e-300) / w) + 1.0

    with warnings.catch_warnings():
        # SLSQP may step a hair outside the bounds and clip back: harmless
        warnings.filterwarnings("ignore", message=".*outside bounds.*")
        res = minimize(fun, np.full(n, 1.0 / n), jac=jac, method="SLSQP",
                       bounds=[(0.0, 1.0 / d)] * n,
                       constraints=[{"type": "eq", "fun": lambda q: q.sum() - 1.0,
                                     "jac": lambda q: np.ones(n)}],
                       options={"ftol": 1e-13, "maxiter": 1000})
    assert res.success, res.message
    return res.x


@pytest.mark.parametrize("n,d", [(n, d) for n in range(2, 7) for d in range(1, n)])
def test_cap_is_the_kl_projection(n, d):
    # The SLSQP oracle is approximate (ftol = 1e-13 in the objective; it
    # lands within ~1e-7 of the projection on these inputs): compare q to
    # 1e-6, and check that the exact projection is never worse in KL.
    rng = np.random.default_rng([n, d])
    for _ in range(3):
        w = rng.standard_exponential(n) ** 4 + 1e-3
        w /= w.sum()
        q = kernels.cap(w, d)
        q_num = _project_numerically(w, d)
        np.testing.assert_allclose(q, q_num, rtol=0, atol=1e-6)
        np.testing.assert_allclose(reference.cap(w, d), q_num, rtol=0, atol=1e-6)
        # q_num, clipped into the box, misses sum = 1 by some delta; to first
        # order that lowers its KL by up to |delta| max|log(q/w) + 1|, so the
        # exact projection may be above it by that much and no more
        q_box = np.clip(q_num, 1e-300, 1 / d)
        slack = abs(q_box.sum() - 1.0) * np.max(np.abs(np.log(q_box / w) + 1.0))
        assert _kl(q, w) <= _kl(q_box, w) + slack + 1e-12
        nu = kernels.cap_log(np.log(w), d)
        np.testing.assert_allclose(np.exp(nu), q_num, rtol=0, atol=1e-6)


# ---------------------------------------------------------------------------
# Property tests (hypothesis profile from conftest.py: derandomized)

_LIN_ELEMENT = st.one_of(
    st.sampled_from([0.0, 0.25, 1.0, 1.0, 4.0, 1e3]),  # ties and zeros
    st.floats(1e-50, 1e50, allow_subnormal=False),
)
_LOG_ELEMENT = st.one_of(
    st.sampled_from([-np.inf, 0.0, -1.0, -700.0, 5.0]),
    st.floats(-1500.0, 1500.0),
)


@st.composite
def _vector_and_d(draw, element):
    n = draw(st.integers(1, 40))
    x = draw(hnp.arrays(np.float64, n, elements=element))
    return x, draw(st.integers(1, n))


@given(_vector_and_d(_LIN_ELEMENT))
def test_cap_properties(wd):
    w, d = wd
    q = kernels.cap(w, d)
    check_cap(w, d, q)
    np.testing.assert_allclose(q, reference.cap(w, d), rtol=RTOL, atol=0)
    # scale invariance (exact powers of two) and idempotence
    np.testing.assert_allclose(kernels.cap(np.ldexp(w, 37), d), q, rtol=RTOL, atol=0)
    if np.count_nonzero(w) >= d:
        np.testing.assert_allclose(kernels.cap(q, d), q, rtol=RTOL, atol=0)


@given(_vector_and_d(_LOG_ELEMENT))
def test_cap_log_properties(mud):
    mu, d = mud
    nu = kernels.cap_log(mu, d)
    check_cap_log(mu, d, nu)
    assert_log_close(nu, reference.cap_log(mu, d), mu)
    # shift invariance: cap_log(mu + t) == cap_log(mu); mu + t rounds at the
    # magnitude |mu| + 100, so allow that much
    shifted = kernels.cap_log(mu + 100.0, d)
    assert_log_close(shifted, nu, np.abs(mu) + 100.0)


@given(_vector_and_d(st.one_of(st.just(-np.inf), st.floats(-30.0, 0.0))))
def test_cap_log_agrees_with_cap(mud):
    # exp(mu) >= exp(-30) neither underflows nor loses precision, so the
    # two domains must agree; log values <= 30 carry errors ~ 30 eps
    mu, d = mud
    np.testing.assert_allclose(np.exp(kernels.cap_log(mu, d)), kernels.cap(np.exp(mu), d),
                               rtol=1e-13, atol=0)


@given(_vector_and_d(_LIN_ELEMENT), st.randoms(use_true_random=False))
def test_cap_is_permutation_equivariant(wd, random):
    w, d = wd
    if np.count_nonzero(w) < d:
        return  # the fallback raises zero entries by index, by design
    perm = np.array(random.sample(range(w.size), w.size))
    np.testing.assert_allclose(kernels.cap(w[perm], d), kernels.cap(w, d)[perm],
                               rtol=RTOL, atol=0)


# ---------------------------------------------------------------------------
# Bad input: clear errors naming the argument

W = r"\bw\b"
MU = r"\bmu\b"
D = r"\bd\b"


@pytest.mark.parametrize("w,exc", [
    ([1.0, np.nan, 2.0], ValueError),
    ([1.0, np.inf, 2.0], ValueError),
    ([1.0, -np.inf, 2.0], ValueError),
    ([1.0, -0.5, 2.0], ValueError),
    (np.ones((2, 3)), ValueError),
    (np.ones(()), ValueError),
    (np.array([], dtype=float), ValueError),
    (np.array([1 + 1j, 2.0]), ValueError),  # complex: ValueError, as in scikit-learn
    (np.array([1.0, "2"], dtype=object), TypeError),
    (["a", "b"], TypeError),
])
def test_cap_rejects_bad_w(w, exc):
    with pytest.raises(exc, match=W):
        kernels.cap(w, 1)


@pytest.mark.parametrize("mu,exc", [
    ([0.0, np.nan, -2.0], ValueError),
    ([0.0, np.inf, -2.0], ValueError),
    (np.zeros((2, 3)), ValueError),
    (np.array([], dtype=float), ValueError),
    (np.array([1j, 0.0]), ValueError),
    (np.array([0.0, "1"], dtype=object), TypeError),
    (["a", "b"], TypeError),
])
def test_cap_log_rejects_bad_mu(mu, exc):
    with pytest.raises(exc, match=MU):
        kernels.cap_log(mu, 1)


@pytest.mark.parametrize("func", [kernels.cap, kernels.cap_log])
@pytest.mark.parametrize("d,exc", [
    (0, ValueError), (-1, ValueError), (4, ValueError), (np.int64(4), ValueError),
    (2.5, TypeError), (2.0, TypeError), (True, TypeError), (np.bool_(True), TypeError),
    ("2", TypeError), (None, TypeError),
])
def test_cap_rejects_bad_d(func, d, exc):
    with pytest.raises(exc, match=D):
        func([1.0, 2.0, 3.0], d)


@pytest.mark.parametrize("d", [np.int8(2), np.int32(2), np.int64(2), np.uint16(2)])
def test_cap_accepts_numpy_integer_d(d):
    np.testing.assert_allclose(kernels.cap([1.0, 2.0, 4.0], d), [1 / 6, 1 / 3, 1 / 2],
                               rtol=RTOL, atol=0)
    np.testing.assert_allclose(kernels.cap_log(np.log([1.0, 2.0, 4.0]), d),
                               np.log([1 / 6, 1 / 3, 1 / 2]), rtol=0, atol=LOG_ATOL)


def test_cap_log_allows_negative_and_minus_inf():
    nu = kernels.cap_log([-3.0, -np.inf, -1.0, -2.0], 2)
    check_cap_log(np.array([-3.0, -np.inf, -1.0, -2.0]), 2, nu)


# --- the vectorised exp and the hinted search (src/vexp.c, opf_cap_ex) ---

def _cpu_levels():
    """The instruction-set versions of the exp kernels this machine runs
    (0 baseline, 1 AVX2 + FMA, 2 AVX-512 + FMA), each asked for in turn
    through the calls' context (a setting of this thread's calls only)."""
    from onlinepca_fast import _kernels
    top = _kernels.cpu_level()
    assert top in (0, 1, 2) and top == _kernels.detected_cpu_level()
    for level in range(top + 1):
        with _kernels.tuning(cpu_level=level):
            assert _kernels.cpu_level() == level
            yield level
    assert _kernels.cpu_level() == top


def test_exp_shifted_within_one_ulp_of_numpy():
    """exp(x - shift) for x <= shift: within 2 eps (relative) of numpy.exp
    (itself within an ulp of exact) wherever the result is >= 2^-1022;
    0 below -1022.5 ln 2; exact at 0 and -inf; in every version the CPU
    runs."""
    for _ in _cpu_levels():
        _check_exp_shifted()


def _check_exp_shifted():
    from onlinepca_fast import _kernels
    rng = np.random.default_rng(5)
    t = np.concatenate([-rng.random(200_000) * 745, -rng.random(50_000) * 2,
                        [0.0, -0.0, -np.inf, -1e-300, -708.3, -708.8, -745.2]])
    for shift in [0.0, 3.5, -1e3]:
        out = np.empty_like(t)
        _kernels.exp_shifted(t + shift, shift, out)
        exact = np.exp((t + shift) - shift)
        normal = exact >= 2.0 ** -1022
        assert np.all(np.abs(out[normal] - exact[normal]) <= 2 * np.finfo(float).eps * exact[normal])
        assert np.all(out[(t + shift) - shift < -1022.5 * math.log(2)] == 0.0)
        assert np.all(out >= 0)
    out = np.empty(3)
    _kernels.exp_shifted(np.array([0.0, -np.inf, 1.0]), 1.0, out)
    assert out[0] == math.exp(-1.0) or abs(out[0] - math.exp(-1.0)) <= 2e-16
    assert out[1] == 0.0 and out[2] == 1.0


def _hinted(mu, d, lo, hi, xmax=np.nan, step=None, eta=0.0, ymin=None):
    from onlinepca_fast import _kernels
    n = mu.size
    out, lin, work = np.empty(n), np.empty(n), np.empty(3 * n)
    ncap, shift, bracketed, got_ymin = _kernels.cap_hinted(mu, d, lo, hi, xmax, out, lin,
                                                           work, step, eta)
    if ymin is not None:
        assert got_ymin == ymin
    return out, lin, ncap, shift, bracketed


@pytest.mark.parametrize("step", [False, True], ids=["x", "x-eta*g"])
@pytest.mark.parametrize("n, d", [(10, 3), (1000, 500), (20_000, 700), (20_000, 19_999),
                                  (1001, 333)])
def test_hint_never_changes_the_answer(n, d, step):
    """opf_cap_ex with a bracket for the threshold -- right, too low, too
    high, empty, degenerate, or with lo underflowing -- returns the capped
    set of the plain search and outputs equal to the oracle's; also when it
    caps x - eta g computed in its first pass (the experts' loss update,
    with an upper bound of it as xmax), in every version the CPU runs."""
    rng = np.random.default_rng(n + d)
    mu = np.log(rng.random(n)) * 3
    mu[rng.integers(0, n, n // 10)] = mu.max()  # ties at the top
    x = np.log(rng.random(n)) * 2
    g = rng.random(n)
    top = rng.integers(0, n, n // 10)
    x[top], g[top] = x.max(), 0.0  # ties at the top of x - eta g
    eta = 0.7
    for _ in _cpu_levels():
        if step:
            _check_hints(x - eta * g, d, x=x, g=g, eta=eta)  # elementwise, as in C
        else:
            _check_hints(mu, d)


def _check_hints(mu, d, x=None, g=None, eta=0.0):
    """The checks of test_hint_never_changes_the_answer on mu, or on
    mu = x - eta g passed as (x, g, eta)."""
    ref = reference.cap_log(mu, d)
    base, _, ncap0, shift0, _ = _hinted(mu, d, 1.0, 0.0)  # no hint
    capped = ref == -math.log(d)
    theta = -math.log(d) - shift0  # the threshold in mu's coordinates
    scale = max(1.0, np.abs(mu).max())
    brackets = [(theta - 0.01, theta + 0.01), (theta - 1e-9, theta + 1e-9),
                (theta + 0.5, theta + 1.0), (theta - 1.0, theta - 0.5),
                (theta, theta), (mu.min() - 1, mu.max() + 1), (-1e6, theta + 0.1),
                (mu.max() + 1, mu.max() + 2), (-np.inf, 0.0)]
    held = 0
    for lo, hi in brackets:
        for xmax in ([np.nan, mu.max()] if x is None else [mu.max(), mu.max() + 3.0]):
            if x is None:
                out, lin, ncap, shift, bracketed = _hinted(mu, d, lo, hi, xmax)
            else:
                out, lin, ncap, shift, bracketed = _hinted(x, d, lo, hi, xmax, g, eta,
                                                           ymin=mu.min())
            held += bracketed
            assert ncap == ncap0
            np.testing.assert_array_equal(out == -math.log(d), capped)
            np.testing.assert_allclose(out, ref, rtol=0, atol=1e-14 * scale)
            np.testing.assert_allclose(lin, np.exp(ref), rtol=1e-13, atol=1e-300)
            assert abs(shift - shift0) <= 1e-14 * scale
    assert held >= 2  # the brackets around theta were used


def test_systematic_sum_equals_sum_over_the_sample():
    """The list-free systematic draw sums v over exactly the indices that
    the listed draw returns, at every size (quarters of any length,
    rounding fallbacks) and for u at the ends of [0, 1)."""
    from onlinepca_fast import _kernels
    rng = np.random.default_rng(11)
    for n in [1, 2, 3, 4, 5, 7, 8, 9, 100, 1001, 20_000]:
        for d in sorted({1, max(1, n // 3), n}):
            w = reference.cap(rng.random(n) ** 3, d)
            v = rng.random(n)
            for u in [0.0, 0.5, 1 - 2 ** -53, *rng.random(5)]:
                chosen = np.empty(d, dtype=np.intp)
                _kernels.sample_systematic(w, d, u, chosen, np.empty(n))
                assert np.all(np.diff(chosen) > 0) and chosen.size == d
                got, wv = _kernels.sample_systematic_sum(w, d, u, v, np.empty(d, dtype=np.intp))
                assert math.isclose(wv, math.fsum(w * v), rel_tol=1e-13, abs_tol=1e-300)
                assert math.isclose(got, math.fsum(v[chosen]), rel_tol=1e-12, abs_tol=1e-12)


def test_systematic_sweeps_agree_on_exact_boundaries_and_zero_weights():
    """The vector sweep (sum only) and the list sweep compute the running
    sum blockwise in the same order, so they draw the same sample even when
    the boundaries C_i are integers (uniform weights with d/n = 1/2, points
    exactly on them for u = 0) and around zero weights at every position
    of a block of four; a zero weight is never drawn, and every draw is a
    d-subset."""
    from onlinepca_fast import _kernels
    rng = np.random.default_rng(3)
    cases = []
    for n in [2, 4, 8, 9, 64, 1000]:  # C_i = (i + 1) / 2: every other one an integer
        cases.append((np.full(n, 1.0 / n), n // 2))
    for n in [5, 12, 13, 50, 4001]:
        w = rng.random(n)
        w[rng.random(n) < 0.4] = 0.0
        w[: n % 4] = 0.0  # a zero block start, and zeros at the end
        w[-3:] = 0.0
        if w.sum() == 0:
            w[n // 2] = 1.0
        npos = np.count_nonzero(w)
        for d in sorted({1, max(1, npos // 2), npos}):
            cases.append((reference.cap(w, d), d))
    for w, d in cases:
        v = rng.random(w.size)
        for u in [0.0, 0.25, 0.5, 1 - 2 ** -53, *rng.random(4)]:
            chosen = np.empty(d, dtype=np.intp)
            _kernels.sample_systematic(w, d, u, chosen, np.empty(w.size))
            assert chosen.size == d and np.all(np.diff(chosen) > 0)
            assert np.all(w[chosen] > 0)
            vsum, wv = _kernels.sample_systematic_sum(w, d, u, v, np.empty(d, dtype=np.intp))
            assert math.isclose(vsum, math.fsum(v[chosen]), rel_tol=1e-12, abs_tol=1e-12)
            assert math.isclose(wv, math.fsum(w * v), rel_tol=1e-13, abs_tol=1e-300)
            # inclusion probabilities d w_i: the draw is one of the
            # ceil/floor roundings of the running sum at u
            C = np.cumsum(d * w / w.sum())
            Cprev = np.concatenate([[0.0], C[:-1]])
            hits = np.floor(C - u + 1) - np.floor(Cprev - u + 1)
            # an end of the interval on a point: left to the rounding, skip
            near = ((np.abs(C - u - np.round(C - u)) < 1e-9)
                    | (np.abs(Cprev - u - np.round(Cprev - u)) < 1e-9))
            np.testing.assert_array_equal(np.isin(np.arange(w.size), chosen)[~near],
                                          (hits > 0)[~near])


def test_systematic_never_draws_a_zero_weight_after_the_last_positive_one():
    """With u tiny (u - 1 rounds), the sum after the last positive weight may
    lie above the d forced there; the sweep stops at that weight, so the
    zero weights after it in the same block of four are never drawn (found
    by review: this u drew index 5 of weight 0)."""
    from onlinepca_fast import _kernels
    w = np.array([1, 1 / 3, 2 / 3, 0.3, 0.7, 0, 0, 0])
    v = np.arange(8.0)
    rng = np.random.default_rng(4)
    for u in [float.fromhex("0x1.839ef67add2c6p-52"), 2.0 ** -60, 1e-300, 5e-324,
              *(rng.random(200) * 2.0 ** -50)]:
        chosen = np.empty(3, dtype=np.intp)
        _kernels.sample_systematic(w, 3, u, chosen, np.empty(8))
        assert np.all(w[chosen] > 0) and np.all(np.diff(chosen) > 0), (u, chosen)
        vsum, _ = _kernels.sample_systematic_sum(w, 3, u, v, np.empty(3, dtype=np.intp))
        assert vsum == v[chosen].sum()


def test_cap_hinted_step_needs_a_finite_bound():
    from onlinepca_fast import _kernels
    x = np.log(np.array([0.1, 0.2, 0.3, 0.4]))
    out, lin, work = np.empty(4), np.empty(4), np.empty(12)
    for xmax in [np.nan, np.inf]:
        with pytest.raises(ValueError, match="xmax"):
            _kernels.cap_hinted(x, 2, 1.0, 0.0, xmax, out, lin, work, np.ones(4), 0.5)
    with pytest.raises(ValueError, match="length"):
        _kernels.cap_hinted(x, 2, 1.0, 0.0, 0.0, out, lin, work, np.ones(3), 0.5)
