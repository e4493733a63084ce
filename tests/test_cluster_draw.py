"""The clustered state's weights and corner, as the compiled trial computes
them (``src/state_clustered_draw.c``) and the Python state reports them
(``_kernels.cluster_capped_weights``, ``_kernels.cluster_corner``): checked
against the same quantities of the full n-vector (the cluster's value
repeated n - m times), capped and sampled by the public kernels."""

import numpy as np
import pytest

from onlinepca_fast import _kernels
from onlinepca_fast.kernels import cap_log

SAMPLERS = [_kernels.SAMPLER_DECOMPOSITION, _kernels.SAMPLER_SYSTEMATIC]


def _full(mu, mu_c, n):
    return np.concatenate([mu, np.full(n - mu.shape[0], mu_c)])


@pytest.mark.parametrize("n, d, m", [(12, 3, 4), (12, 9, 4), (12, 3, 12), (30, 20, 0),
                                     (30, 10, 25)])
@pytest.mark.parametrize("level", [0.0, 1e4])
def test_capped_weights_are_those_of_the_full_vector(n, d, m, level):
    rng = np.random.default_rng(n + d + m)
    mu = np.sort(rng.normal(0.0, 3.0, m)) - 6.0 + level
    mu_c = level - 1.0
    w, wc, lc = _kernels.cluster_capped_weights(n, d, mu, mu_c)
    oracle = cap_log(_full(mu, mu_c, n), d)
    np.testing.assert_allclose(w, np.exp(oracle[:m]), rtol=1e-12, atol=1e-300)
    if m < n:
        np.testing.assert_allclose([wc, lc], [np.exp(oracle[m]), oracle[m]],
                                   rtol=1e-12, atol=1e-14)
    else:
        assert (wc, lc) == (0.0, 0.0)
    assert np.isclose(w.sum() + (n - m) * wc, 1.0, rtol=0, atol=1e-12)


def _corner_case(n, d, m, cluster_capped, seed):
    """Explicit weights and the cluster's, capped, in one of the draw's
    regimes: the cluster at the cap, or not."""
    rng = np.random.default_rng(seed)
    mu = np.sort(rng.normal(0.0, 1.0, m)) - (0.0 if cluster_capped else 3.0)
    mu_c = 5.0 if cluster_capped else -1.0
    return _kernels.cluster_capped_weights(n, d, mu, mu_c)


@pytest.mark.parametrize("sampler", SAMPLERS)
@pytest.mark.parametrize("n, d, m, capped", [(12, 8, 5, True), (12, 3, 4, False),
                                             (40, 10, 6, False), (12, 4, 12, False),
                                             (40, 30, 0, False)])
def test_corner_has_d_directions_and_inclusion_d_w(n, d, m, capped, sampler):
    w, wc, lc = _corner_case(n, d, m, capped, seed=n * d + m)
    c, draws = n - m, 4000
    rng = np.random.default_rng(1)
    hits = np.zeros(m)
    cluster_in = 0.0
    for _ in range(draws):
        explicit, left_out = _kernels.cluster_corner(n, d, w, lc, wc, sampler, rng)
        assert len(set(explicit.tolist())) == explicit.shape[0]
        assert np.all((explicit >= 0) & (explicit < m))
        assert 0 <= left_out <= c
        # the explicit directions drawn and the cluster's kept make a d-corner
        assert explicit.shape[0] + (c - left_out) == d
        hits[explicit] += 1
        cluster_in += c - left_out
    # WK Alg. 2: direction i is in the corner with probability d w_i
    p = d * w
    sd = np.sqrt(p * (1 - p) / draws) + 1e-12
    assert np.all(np.abs(hits / draws - p) <= 5 * sd + 1e-12)
    if c:
        assert cluster_in / draws == pytest.approx(d * c * wc, abs=5 * np.sqrt(c * d / draws))
