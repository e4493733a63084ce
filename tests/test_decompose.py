"""Tests of kernels.decompose, the mixture decomposition of a capped vector
into d-corners (Warmuth & Kuzmin 2008, Algorithm 2 and Theorem 2).

A d-corner is the uniform distribution on a d-subset; the decomposition
``w = sum_j p_j * indicator(corner_j) / d`` must reconstruct w.

Tolerances
----------
RECON_ATOL = 1e-12 (times sum(w)): each component is reduced by up to n
subtractions of p_j/d, each rounding at the size of the component, so the
reconstruction error is bounded by about n * eps * max(w) -- 2000 * 2.2e-16
* (1/d) <= 4.4e-13 for the largest case here.
P_ATOL = 1e-14: coefficients compared with the oracle's, where both follow
the same corners (generic input); they differ by roundings of sums of
at most n terms of size <= 1.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from onlinepca_fast import kernels, reference

RECON_ATOL = 1e-12
P_ATOL = 1e-14


def reconstruct(p, corners, n, d):
    out = np.zeros(n)
    for pj, cj in zip(p, corners):
        out[cj] += pj / d
    return out


def check_decomposition(w, d, p, corners):
    """Structure of the output and reconstruction of w (WK Theorem 2)."""
    w = np.asarray(w, dtype=np.float64)
    n = w.size
    total = math.fsum(w)
    m = p.shape[0]
    assert p.ndim == 1 and p.dtype == np.float64
    assert corners.shape == (m, d)
    assert np.issubdtype(corners.dtype, np.integer)
    assert 1 <= m <= n, f"{m} corners for n = {n}"
    assert np.all(p >= 0.0)
    assert math.fsum(p) == pytest.approx(total, rel=0, abs=RECON_ATOL * total)
    # every corner: d distinct sorted indices of positive weight
    assert np.all(np.diff(corners, axis=1) > 0)
    assert corners.min() >= 0 and corners.max() < n
    assert np.all(w[corners] > 0)
    np.testing.assert_allclose(reconstruct(p, corners, n, d), w,
                               rtol=0, atol=RECON_ATOL * total)


def as_dict(p, corners):
    return {tuple(int(i) for i in c): float(pj) for pj, c in zip(p, corners)}


# ---------------------------------------------------------------------------
# Worked example and small exact cases


def test_worked_example_wk_eq6():
    # (1/6, 1/3, 1/2) = 1/3 (1/2, 0, 1/2) + 2/3 (0, 1/2, 1/2), 0-based
    w = np.array([1 / 6, 1 / 3, 1 / 2])
    p, corners = kernels.decompose(w, 2)
    check_decomposition(w, 2, p, corners)
    got = as_dict(p, corners)
    assert set(got) == {(0, 2), (1, 2)}
    np.testing.assert_allclose([got[(0, 2)], got[(1, 2)]], [1 / 3, 2 / 3], rtol=0, atol=1e-15)
    # the same from the capped weights of the example, (1/7, 2/7, 4/7)
    p2, corners2 = kernels.decompose(kernels.cap([1 / 7, 2 / 7, 4 / 7], 2), 2)
    got2 = as_dict(p2, corners2)
    assert set(got2) == set(got)
    np.testing.assert_allclose([got2[(0, 2)], got2[(1, 2)]], [1 / 3, 2 / 3], rtol=0,
                               atol=1e-15)


def test_a_corner_is_its_own_decomposition():
    w = np.zeros(7)
    w[[1, 4, 5]] = 1 / 3
    p, corners = kernels.decompose(w, 3)
    np.testing.assert_allclose(p, [1.0], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(corners, [[1, 4, 5]])


def test_d_equals_n_and_n_equals_1():
    for n in (1, 2, 17):
        p, corners = kernels.decompose(np.full(n, 1 / n), n)
        np.testing.assert_allclose(p, [1.0], rtol=0, atol=1e-15)
        np.testing.assert_array_equal(corners, [np.arange(n)])


def test_d_equals_1_gives_the_weights():
    # d = 1: the corners are single indices, p = min(s, |w| - l) = s, so the
    # coefficients are the positive weights, largest first
    rng = np.random.default_rng(0)
    w = rng.standard_exponential(30)
    w[[3, 8]] = 0.0
    w /= w.sum()
    p, corners = kernels.decompose(w, 1)
    check_decomposition(w, 1, p, corners)
    assert p.size == 28
    np.testing.assert_allclose(np.sort(p), np.sort(w[w > 0]), rtol=0, atol=RECON_ATOL)
    np.testing.assert_allclose(w[corners[:, 0]], p, rtol=0, atol=RECON_ATOL)


@pytest.mark.parametrize("n,d", [(5, 2), (6, 3), (10, 9), (100, 30), (1000, 999)])
def test_uniform_weights(n, d):
    # all components tied: the corners must still reconstruct w
    w = np.full(n, 1 / n)
    p, corners = kernels.decompose(w, d)
    check_decomposition(w, d, p, corners)


def test_unnormalised_input():
    # decompose does not need sum(w) = 1: then sum(p) = sum(w)
    w = np.array([1.0, 2.0, 3.0, 2.0, 2.0])  # max 3 <= 10 / 3
    p, corners = kernels.decompose(w, 3)
    check_decomposition(w, 3, p, corners)
    np.testing.assert_allclose(math.fsum(p), 10.0, rtol=1e-14, atol=0)
    p_int, corners_int = kernels.decompose([1, 2, 3, 2, 2], 3)
    np.testing.assert_allclose(p_int, p, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(corners_int, corners)


def test_input_is_not_modified():
    w = kernels.cap(np.random.default_rng(1).standard_exponential(20) ** 3, 4)
    w_copy = w.copy()
    kernels.decompose(w, 4)
    np.testing.assert_array_equal(w, w_copy)


# ---------------------------------------------------------------------------
# Agreement with the oracle and stress cases


def _capped(kind, n, d, rng):
    if kind == "exponential":  # several components at the cap
        raw = rng.standard_exponential(n) ** 3
    elif kind == "uniform":
        raw = rng.random(n)
    elif kind == "ties":  # blocks of exactly equal components
        raw = rng.integers(1, 4, n).astype(np.float64)
    elif kind == "zeros":
        raw = rng.standard_exponential(n)
        raw[rng.random(n) < 0.3] = 0.0
        raw[:d] += 1.0  # keep at least d positive
    else:
        raise AssertionError(kind)
    return kernels.cap(raw, d)


@pytest.mark.parametrize("kind", ["exponential", "uniform", "ties", "zeros"])
@pytest.mark.parametrize("n,d", [(2, 1), (3, 2), (10, 3), (100, 10), (300, 299),
                                 (1000, 100), (2000, 1), (2000, 2), (2000, 1999),
                                 (2000, 2000)])
def test_matches_reference_reconstruction(n, d, kind):
    rng = np.random.default_rng([n, d, len(kind)])
    w = _capped(kind, n, d, rng)
    p, corners = kernels.decompose(w, d)
    check_decomposition(w, d, p, corners)
    p_ref, corners_ref = reference.decompose(w, d)
    check_decomposition(w, d, p_ref, corners_ref)
    np.testing.assert_allclose(reconstruct(p, corners, n, d),
                               reconstruct(p_ref, corners_ref, n, d), rtol=0,
                               atol=2 * RECON_ATOL)


def test_stress_n1000_d100():
    rng = np.random.default_rng(2008)
    w = kernels.cap(rng.standard_exponential(1000) ** 4, 100)
    assert np.count_nonzero(w == 0.01) >= 5  # the cap is active
    p, corners = kernels.decompose(w, 100)
    check_decomposition(w, 100, p, corners)
    np.testing.assert_allclose(math.fsum(p), 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("n,d", [(3, 2), (10, 3), (50, 7), (200, 20), (1000, 990)])
def test_same_corners_as_reference_for_generic_input(n, d):
    # Without ties among the uncapped components, Alg. 2 with "the d largest
    # components" is deterministic: same corners in the same order, which
    # is what makes the samplers agree draw for draw (test_sample_corner).
    # Only while the remaining mass is well above rounding: the last
    # corners carry p ~ 1e-15 computed from components that are themselves
    # rounding residues, and their order is noise.  Compare every corner
    # drawn before the cumulative coefficient reaches 1 - 1e-9.
    # (1000, 990): near-uniform weights (CappedHedge at a small rate), few
    # at the cap: every step merges a run of ~10 into one of ~900.
    rng = np.random.default_rng([n, d, 6])
    raw = 1 + 0.1 * rng.random(n) if n == 1000 else rng.standard_exponential(n) ** 3
    w = kernels.cap(raw, d)
    p, corners = kernels.decompose(w, d)
    p_ref, corners_ref = reference.decompose(w, d)
    k = int(np.searchsorted(np.cumsum(p_ref), 1 - 1e-9)) + 1
    assert min(p.size, p_ref.size) >= k
    np.testing.assert_array_equal(corners[:k], corners_ref[:k])
    np.testing.assert_allclose(p[:k], p_ref[:k], rtol=0, atol=P_ATOL)


def test_slightly_above_the_cap_is_accepted():
    # max(w) may exceed sum(w)/d by 1e-9 relative (rounding in the caller);
    # the excess cannot be represented by corners, so the reconstruction is
    # only good to about that excess
    w = kernels.cap(np.random.default_rng(4).standard_exponential(40) ** 3, 5)
    top = np.argmax(w)
    w[top] *= 1 + 1e-10
    p, corners = kernels.decompose(w, 5)
    np.testing.assert_allclose(math.fsum(p), math.fsum(w), rtol=0, atol=1e-12)
    np.testing.assert_allclose(reconstruct(p, corners, 40, 5), w, rtol=0, atol=1e-10)


# ---------------------------------------------------------------------------
# Property tests


@st.composite
def _capped_vector(draw):
    n = draw(st.integers(1, 30))
    raw = draw(hnp.arrays(np.float64, n, elements=st.one_of(
        st.sampled_from([0.0, 1.0, 1.0, 2.0]),
        st.floats(1e-6, 1e6, allow_subnormal=False))))
    d = draw(st.integers(1, n))
    if np.count_nonzero(raw) < d:
        raw[:d] += 1.0
    return kernels.cap(raw, d), d


@given(_capped_vector())
def test_decomposition_properties(wd):
    w, d = wd
    p, corners = kernels.decompose(w, d)
    check_decomposition(w, d, p, corners)
    np.testing.assert_allclose(math.fsum(p), 1.0, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------
# Bad input

W = r"\bw\b"
D = r"\bd\b"


@pytest.mark.parametrize("w,d", [
    ([0.6, 0.4], 2),  # max 0.6 > sum / d = 0.5
    ([0.5, 0.3, 0.2], 3),
    ([1.0, 2.0, 4.0], 2),  # not capped: cap it first
])
def test_rejects_vector_outside_the_capped_simplex(w, d):
    with pytest.raises(ValueError, match=W):
        kernels.decompose(w, d)


def test_rejects_too_few_positive_and_zero_vector():
    with pytest.raises(ValueError, match=W):
        kernels.decompose([0.5, 0.5, 0.0, 0.0], 3)
    with pytest.raises(ValueError, match=W):
        kernels.decompose([0.0, 0.0, 0.0], 1)


@pytest.mark.parametrize("w,exc", [
    ([0.5, np.nan, 0.5], ValueError),
    ([0.5, np.inf, 0.5], ValueError),
    ([0.5, -0.1, 0.6], ValueError),
    (np.full((2, 2), 0.25), ValueError),
    (np.array([], dtype=float), ValueError),
    (np.array([0.5j, 0.5]), ValueError),
    (np.array([0.5, "0.5"], dtype=object), TypeError),
    (["a", "b"], TypeError),
])
def test_rejects_bad_w(w, exc):
    with pytest.raises(exc, match=W):
        kernels.decompose(w, 1)


@pytest.mark.parametrize("d,exc", [
    (0, ValueError), (4, ValueError), (2.5, TypeError), (2.0, TypeError),
    (True, TypeError), (None, TypeError),
])
def test_rejects_bad_d(d, exc):
    with pytest.raises(exc, match=D):
        kernels.decompose([1 / 3, 1 / 3, 1 / 3], d)


def test_accepts_numpy_integer_d():
    p, corners = kernels.decompose([1 / 6, 1 / 3, 1 / 2], np.int32(2))
    assert set(as_dict(p, corners)) == {(0, 2), (1, 2)}
