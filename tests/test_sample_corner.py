"""Tests of kernels.sample_corner: a random d-subset whose inclusion
probabilities are ``pi_i = d * w_i / sum(w)``, drawn through the mixture of
Warmuth & Kuzmin (2008) Algorithm 2 ("decomposition", as in WK Alg. 3) or
by Madow's systematic sampling ("systematic").

Statistical tests use fixed seeds, so they are deterministic and cannot
flake; each is a family of binomial z-tests with a Bonferroni threshold
for a stated overall false-alarm rate (the probability that a correct
sampler fails the test with a random seed).
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.stats import norm

from onlinepca_fast import kernels, reference

METHODS = ["decomposition", "systematic"]
N_DRAWS = 20000
FALSE_ALARM = 1e-6  # overall false-alarm rate of each frequency test


def check_subset(subset, w, d):
    """A valid draw: d sorted distinct in-range indices of positive weight."""
    assert isinstance(subset, np.ndarray)
    assert subset.shape == (d,)
    assert np.issubdtype(subset.dtype, np.integer)
    assert np.all(np.diff(subset) > 0)
    assert subset[0] >= 0 and subset[-1] < len(w)
    assert np.all(np.asarray(w)[subset] > 0)


def assert_frequencies(counts, probs, n_draws, false_alarm=FALSE_ALARM):
    """Binomial z-tests of counts_i ~ Bin(n_draws, probs_i), Bonferroni.

    Components with probability 0 or 1 must be never / always drawn.  The
    others pass if every |f_i - p_i| / sqrt(p_i (1 - p_i) / N) is below the
    two-sided normal quantile for false_alarm / k (k tests); at N = 20000
    and p_i >= 0.05 the normal approximation of the binomial tail is good.
    """
    counts = np.asarray(counts)
    probs = np.asarray(probs, dtype=np.float64)
    freq = counts / n_draws
    sure = np.isclose(probs, 1.0, rtol=0, atol=1e-12)
    never = probs == 0.0
    np.testing.assert_array_equal(counts[sure], n_draws)
    np.testing.assert_array_equal(counts[never], 0)
    test = ~(sure | never)
    p = probs[test]
    z = np.abs(freq[test] - p) / np.sqrt(p * (1 - p) / n_draws)
    threshold = norm.isf(false_alarm / (2 * max(1, p.size)))
    assert np.all(z <= threshold), (
        f"z = {z.max():.2f} > {threshold:.2f} for p = {p[z.argmax()]:.4f}, "
        f"f = {freq[test][z.argmax()]:.4f}")


def _eq6():
    return np.array([1 / 6, 1 / 3, 1 / 2]), 2


def _mixed():
    # n = 12, d = 4: two components at the cap (pi = 1), one zero (pi = 0),
    # the others in between with pi >= 0.1
    raw = np.array([50.0, 40.0, 3.0, 2.5, 2.0, 1.8, 1.5, 1.2, 1.0, 0.0, 0.9, 0.8])
    w = kernels.cap(raw, 4)
    assert np.count_nonzero(w == 0.25) == 2
    return w, 4


def _generic(n, d, seed):
    return kernels.cap(np.random.default_rng(seed).standard_exponential(n) ** 3, d), d


# ---------------------------------------------------------------------------
# Inclusion probabilities


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("make", [_eq6, _mixed])
def test_inclusion_frequencies(make, method):
    w, d = make()
    n = w.size
    rng = np.random.default_rng(20080101)
    counts = np.zeros(n, dtype=np.int64)
    for _ in range(N_DRAWS):
        subset = kernels.sample_corner(w, d, rng=rng, method=method)
        counts[subset] += 1
    check_subset(subset, w, d)
    assert counts.sum() == d * N_DRAWS
    assert_frequencies(counts, d * w / math.fsum(w), N_DRAWS)


def test_decomposition_draws_corners_with_probability_p():
    # the joint law of the "decomposition" method: corner j with p_j
    w, d = _mixed()
    p, corners = kernels.decompose(w, d)
    index = {tuple(c): j for j, c in enumerate(corners.tolist())}
    rng = np.random.default_rng(7)
    counts = np.zeros(p.size, dtype=np.int64)
    for _ in range(N_DRAWS):
        counts[index[tuple(kernels.sample_corner(w, d, rng=rng).tolist())]] += 1
    assert_frequencies(counts, p / p.sum(), N_DRAWS)


def test_draws_are_valid_subsets():
    rng = np.random.default_rng(3)
    cases = [_eq6(), _mixed(), _generic(40, 1, 0), _generic(40, 39, 1), _generic(40, 40, 2),
             (np.full(9, 1 / 9), 3), ([1.0], 1)]
    for w, d in cases:
        for method in METHODS:
            for _ in range(50):
                check_subset(kernels.sample_corner(w, d, rng=rng, method=method), w, d)
    # d = n: the only subset
    for method in METHODS:
        np.testing.assert_array_equal(kernels.sample_corner(np.full(5, 0.2), 5, rng=0,
                                                            method=method), np.arange(5))


# ---------------------------------------------------------------------------
# One uniform per draw: same seed, same draw as the oracle


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("make", [_eq6, _mixed, lambda: _generic(50, 7, 5),
                                  lambda: _generic(200, 20, 6)])
def test_same_draw_as_reference(make, method):
    w, d = make()
    for seed in range(20):
        np.testing.assert_array_equal(
            kernels.sample_corner(w, d, rng=seed, method=method),
            reference.sample_corner(w, d, rng=seed, method=method), err_msg=f"seed {seed}")
    # and along one generator, draw after draw
    rng, rng_ref = np.random.default_rng(99), np.random.default_rng(99)
    for _ in range(100):
        np.testing.assert_array_equal(kernels.sample_corner(w, d, rng=rng, method=method),
                                      reference.sample_corner(w, d, rng=rng_ref, method=method))


def test_same_draw_as_reference_systematic_with_ties():
    # systematic sampling does not depend on how ties are ordered
    w = np.full(30, 1 / 30)
    for seed in range(20):
        np.testing.assert_array_equal(
            kernels.sample_corner(w, 7, rng=seed, method="systematic"),
            reference.sample_corner(w, 7, rng=seed, method="systematic"))


@pytest.mark.parametrize("method", METHODS)
def test_exactly_one_uniform_per_draw(method):
    w, d = _generic(30, 4, 8)
    rng, twin = np.random.default_rng(12), np.random.default_rng(12)
    for _ in range(5):
        kernels.sample_corner(w, d, rng=rng, method=method)
        twin.random()
    assert rng.random() == twin.random()


def test_draw_from_the_uniform_by_hand():
    # WK eq. (6): w = (1/6, 1/3, 1/2) = 2/3 * {1,2} + 1/3 * {0,2}, corners in
    # the order of Alg. 2 (the first corner takes the two largest).
    # Systematic: pi = (1/3, 2/3, 1), intervals [0,1/3), [1/3,1), [1,2).
    w, d = _eq6()
    seen = set()
    for seed in range(40):
        u = np.random.default_rng(seed).random()
        expected_dec = [1, 2] if u < 2 / 3 else [0, 2]
        expected_sys = [0, 2] if u < 1 / 3 else [1, 2]
        np.testing.assert_array_equal(kernels.sample_corner(w, d, rng=seed), expected_dec)
        np.testing.assert_array_equal(
            kernels.sample_corner(w, d, rng=seed, method="systematic"), expected_sys)
        seen.add((tuple(expected_dec), tuple(expected_sys)))
    assert len(seen) == 3  # all three ranges of u were hit


@st.composite
def _capped_vector_and_seed(draw):
    n = draw(st.integers(1, 25))
    raw = draw(hnp.arrays(np.float64, n, elements=st.floats(1e-3, 1e3), unique=True))
    d = draw(st.integers(1, n))
    return kernels.cap(raw, d), d, draw(st.integers(0, 2**32 - 1))


@given(_capped_vector_and_seed())
def test_same_draw_as_reference_property(wds):
    w, d, seed = wds
    for method in METHODS:
        subset = kernels.sample_corner(w, d, rng=seed, method=method)
        check_subset(subset, w, d)
        np.testing.assert_array_equal(subset, reference.sample_corner(w, d, rng=seed,
                                                                      method=method))


# ---------------------------------------------------------------------------
# Arguments


def test_rng_forms():
    w, d = _mixed()
    for method in METHODS:
        check_subset(kernels.sample_corner(w, d, method=method), w, d)  # rng=None
        a = kernels.sample_corner(w, d, rng=np.int64(3), method=method)
        np.testing.assert_array_equal(
            a, kernels.sample_corner(w, d, rng=np.random.default_rng(3), method=method))


def test_input_is_not_modified():
    w, d = _mixed()
    w_copy = w.copy()
    for method in METHODS:
        kernels.sample_corner(w, d, rng=0, method=method)
    np.testing.assert_array_equal(w, w_copy)


@pytest.mark.parametrize("method", ["Decomposition", "bogus", "", None, 1])
def test_rejects_unknown_method(method):
    with pytest.raises((ValueError, TypeError), match=r"\bmethod\b"):
        kernels.sample_corner([0.5, 0.5], 1, rng=0, method=method)


def test_rejects_bad_rng():
    with pytest.raises(TypeError, match=r"\brng\b"):
        kernels.sample_corner([0.5, 0.5], 1, rng="seed")


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("w,d,exc,match", [
    ([0.6, 0.4], 2, ValueError, r"\bw\b"),  # not capped
    ([1.0, 0.0, 0.0], 2, ValueError, r"\bw\b"),  # fewer than d positive
    ([0.5, np.nan, 0.5], 1, ValueError, r"\bw\b"),
    ([0.5, np.inf, 0.5], 1, ValueError, r"\bw\b"),
    ([0.5, -0.5, 1.0], 1, ValueError, r"\bw\b"),
    (np.full((2, 2), 0.25), 1, ValueError, r"\bw\b"),
    (np.array([], dtype=float), 1, ValueError, r"\bw\b"),
    (np.array([0.5j, 0.5]), 1, ValueError, r"\bw\b"),
    (np.array([0.5, "0.5"], dtype=object), 1, TypeError, r"\bw\b"),
    ([0.5, 0.5], 0, ValueError, r"\bd\b"),
    ([0.5, 0.5], 3, ValueError, r"\bd\b"),
    ([0.5, 0.5], 1.5, TypeError, r"\bd\b"),
    ([0.5, 0.5], True, TypeError, r"\bd\b"),
])
def test_rejects_bad_input(w, d, exc, match, method):
    with pytest.raises(exc, match=match):
        kernels.sample_corner(w, d, rng=0, method=method)


@pytest.mark.parametrize("method", METHODS)
def test_bad_input_draws_nothing(method):
    # validation comes before the draw: a rejected call leaves rng untouched
    rng, twin = np.random.default_rng(1), np.random.default_rng(1)
    with pytest.raises(ValueError):
        kernels.sample_corner([0.9, 0.1], 2, rng=rng, method=method)
    assert rng.random() == twin.random()
