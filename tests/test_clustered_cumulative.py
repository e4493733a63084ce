"""The cumulative learners (WK Algorithm 6 centered and uncentered, Follow the
Leader) on the capped structure (``state="clustered"``, issue 14): A = log W0
- eta C^t kept as m explicit eigenpairs plus the cluster of directions no
instance has reached.

Oracles: the NumPy reference (which keeps A as an n x n matrix and calls
eigh), the dense state, and in high dimension the t x t Gram matrix (the
nonzero spectrum of C^t = X^T X is that of X X^T).  Tolerances: expected
losses 1e-9 (measured ~1e-14..1e-12), eigenvalues 1e-9 relative, densities
CAPPED_ATOL.
"""

import math
import pickle

import numpy as np
import pytest
from learner_cases import assert_same_state, unit_ball
from learner_cases import assert_clustered_matches, clustered_dense_reference

import onlinepca_fast as opf
from onlinepca_fast import reference

N, K = 9, 3


def reaching_stream(seed=0, n=N):
    """A segment in a 2-dimensional subspace (m stays 2, or 3 with a fixed
    center outside it: a cluster of unreached directions, uncapped while it
    is larger than n - k), then full-rank rows (every direction reached: no
    cluster)."""
    rng = np.random.default_rng(seed)
    B = np.linalg.qr(rng.standard_normal((n, 2)))[0]
    low = unit_ball((rng.standard_normal((40, 2)) + 0.5) @ B.T)
    full = unit_ball(rng.standard_normal((50, n)) * np.linspace(1.5, 0.2, n) + 0.1)
    return np.vstack([low, full])


CONFIGS = [
    dict(eta=1.0),
    dict(eta=1.0, centered=False, mean_init=np.linspace(-0.1, 0.1, N)),
    dict(center_lr_inv=2.0, eta=0.5, sampler="systematic"),
    dict(eta=4.0),
]


def multiplicities(learner, X):
    out = []
    for x in X:
        learner.partial_fit(x[np.newaxis])
        out.append(learner.cluster_multiplicity_)
    return np.array(out)


@pytest.mark.parametrize("params", CONFIGS, ids=["centered", "uncentered", "lr-systematic",
                                                 "eta4"])
def test_centered_pca_matches_the_reference_and_the_dense_state(params):
    clustered, mult, dense, ref = clustered_dense_reference(
        "CenteredOnlinePCA", K, reaching_stream(), multiplicities, **params)
    # the stream goes from a large cluster to none
    assert mult[30] >= N - 3 and mult[-1] == 0
    assert_clustered_matches(clustered, dense, ref, values_rtol=1e-9)
    np.testing.assert_array_equal(clustered.mean_, dense.mean_)
    # the last trials draw from a capped (or no) cluster: the same corners
    np.testing.assert_allclose(clustered.realized_losses_[-20:], dense.realized_losses_[-20:],
                               rtol=0, atol=1e-9)


def test_centered_pca_keeps_the_cluster_while_rows_stay_in_a_subspace():
    X = reaching_stream()[:40]
    learner = opf.CenteredOnlinePCA(K, eta=1.0, state="clustered", random_state=0).fit(X)
    assert learner.cluster_value_ == -math.log(N)  # A is log W0 there, exactly
    assert learner.cluster_multiplicity_ == N - 2
    ref = reference.CenteredOnlinePCA(K, eta=1.0, random_state=0).fit(X)
    np.testing.assert_allclose(np.sort(learner.eigenvalues_), ref._lam[:2], rtol=1e-12)
    np.testing.assert_allclose(learner.expected_losses_, ref.expected_losses_, rtol=0, atol=1e-9)


@pytest.mark.parametrize("centered", [False, True])
def test_follow_the_leader_matches_the_reference_and_the_dense_state(centered):
    X = reaching_stream(1)
    clustered = opf.FollowTheLeader(K, centered=centered, state="clustered").fit(X)
    dense = opf.FollowTheLeader(K, centered=centered, state="dense").fit(X)
    ref = reference.FollowTheLeader(K, centered=centered).fit(X)
    np.testing.assert_array_equal(clustered.expected_losses_, clustered.realized_losses_)
    # while fewer than k directions are reached the k leading ones include
    # ties from the cluster, which each state completes its own way; the
    # rank-2 segment has 2 < k of them throughout, the full-rank rows not
    tail = slice(45, None)
    for other in (ref, dense):
        np.testing.assert_allclose(clustered.realized_losses_[tail], other.realized_losses_[tail],
                                   rtol=0, atol=1e-9)
    np.testing.assert_allclose(np.abs(clustered.components_ @ dense.components_.T),
                               np.eye(K), rtol=0, atol=1e-9)
    np.testing.assert_allclose(clustered.density_, dense.density_, rtol=0, atol=1e-9)


@pytest.mark.parametrize("centered", [False, True])
def test_follow_the_leader_loss_is_the_energy_outside_its_components(centered):
    """Brute force, trial by trial, including the first trials where the
    components are completed from the cluster: realized loss = |y - V V^T y|^2
    with V = components_ and y = x - mean_ before the trial."""
    n, k = 40, 4
    X = np.random.default_rng(3).standard_normal((12, n)) / math.sqrt(n)
    learner = opf.FollowTheLeader(k, centered=centered, state="clustered")
    learner.partial_fit(X[:1])
    for x in X[1:]:
        V, y = learner.components_.T, x - learner.mean_
        np.testing.assert_allclose(V.T @ V, np.eye(k), rtol=0, atol=1e-12)
        learner.partial_fit(x[np.newaxis])
        want = np.sum((y - V @ (V.T @ y)) ** 2)
        assert abs(learner.realized_losses_[-1] - want) <= 1e-12
        # sample_projection is the projection onto the components
        np.testing.assert_allclose(learner.sample_projection(), learner.components_.T
                                   @ learner.components_, rtol=0, atol=1e-14)


def _gram_oracle(X, centered):
    """The nonzero eigenvalues of C^t (descending) and its leading
    eigenvectors, from the t x t problem: C^t = Y^T Y with Y = X (uncentered)
    or X minus its mean (centered, eq. 16 with c = 0: the scatter)."""
    Y = X - X.mean(axis=0) if centered else X
    U, s, Vt = np.linalg.svd(Y, full_matrices=False)
    return s ** 2, Vt


@pytest.mark.parametrize("centered", [False, True])
def test_a_short_stream_in_high_dimension_costs_its_length_not_n_squared(centered):
    n, t, eta = 20_000, 25, 0.7
    rng = np.random.default_rng(4)
    X = rng.standard_normal((t, n)) * (1.0 + 3.0 * (np.arange(n) < 5)) / math.sqrt(n)
    learner = opf.CenteredOnlinePCA(K, eta=eta, centered=centered, random_state=0).fit(X)
    assert learner._state.clustered  # "auto": clustered while m is small
    # O(n t) memory: a few dozen rows of n, nothing n x n
    assert learner._state.b.shape[0] <= 64 and learner._state.r.size <= 64 * 64
    power, Vt = _gram_oracle(X, centered)
    power = power[power > 1e-12 * power[0]]
    m = power.size
    assert m == (t - 1 if centered else t)
    assert learner.cluster_multiplicity_ == n - m
    np.testing.assert_allclose(learner.eigenvalues_, -math.log(n) - eta * power,
                               rtol=1e-12, atol=0)
    overlap = np.linalg.svd(learner.components_ @ Vt[:K].T, compute_uv=False)
    np.testing.assert_allclose(overlap, 1.0, rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match="max_features"):
        learner.density_
    ftl = opf.FollowTheLeader(K, centered=centered).fit(X)
    np.testing.assert_allclose(ftl.eigenvalues_, -power, rtol=1e-12, atol=0)
    overlap = np.linalg.svd(ftl.components_ @ Vt[:K].T, compute_uv=False)
    np.testing.assert_allclose(overlap, 1.0, rtol=0, atol=1e-10)


@pytest.mark.parametrize("make", [
    lambda: opf.CenteredOnlinePCA(K, eta=2.0, center_lr_inv=1.0, state="clustered",
                                  random_state=5),
    lambda: opf.FollowTheLeader(K, centered=True, state="clustered"),
], ids=["centered", "ftl"])
def test_pickle_round_trip_continues_the_same_stream(make):
    X = reaching_stream(2)
    whole = make().fit(X)
    first = make().fit(X[:30])
    resumed = pickle.loads(pickle.dumps(first)).partial_fit(X[30:])
    assert_same_state(resumed, whole)
    np.testing.assert_array_equal(resumed.expected_losses_, whole.expected_losses_)
    np.testing.assert_array_equal(resumed.realized_losses_, whole.realized_losses_)


def test_the_state_cannot_change_mid_stream():
    X = reaching_stream()
    learner = opf.CenteredOnlinePCA(K, state="clustered", random_state=0).fit(X[:5])
    learner.set_params(state="dense")
    with pytest.raises(ValueError, match="mid-stream"):
        learner.partial_fit(X[5:])
    assert learner.n_trials_ == 5


@pytest.mark.parametrize("make", [
    lambda state: opf.CenteredOnlinePCA(K, eta=1.5, random_state=3, state=state),
    lambda state: opf.OnlinePCA(K, eta=0.005, random_state=3, state=state),
], ids=["centered", "onlinepca"])
def test_auto_turns_dense_once_enough_directions_are_explicit(make):
    """state="auto": clustered, then (at auto_bounds(n)[1] explicit
    directions) the dense state, with the trajectory of a learner dense from
    the start (expected losses to 1e-9)."""
    from onlinepca_fast.learners._state import auto_bounds
    n = 520
    rng = np.random.default_rng(6)
    X = unit_ball(rng.standard_normal((auto_bounds(n)[1] + 60, n)))
    auto = make("auto").fit(X[:20])
    assert auto._state.clustered
    auto.partial_fit(X[20:])
    assert not auto._state.clustered and auto.cluster_multiplicity_ == 0
    assert auto.eigenvalues_.shape == (n,)
    dense = make("dense").fit(X)
    np.testing.assert_allclose(auto.expected_losses_, dense.expected_losses_, rtol=0, atol=1e-9)
    # it stays dense: more rows, a pickle round trip, the same answers
    copy = pickle.loads(pickle.dumps(auto))
    for learner in (auto, copy, dense):
        learner.partial_fit(X[:10])
    np.testing.assert_array_equal(copy.expected_losses_, auto.expected_losses_)
    np.testing.assert_allclose(auto.expected_losses_, dense.expected_losses_, rtol=0, atol=1e-9)
    # a forced clustered state never turns dense
    forced = make("clustered").fit(X)
    assert forced._state.clustered
    # a refit starts clustered again
    assert auto.fit(X[:5])._state.clustered
