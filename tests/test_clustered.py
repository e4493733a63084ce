"""OnlinePCA on the capped structure (``state="clustered"``, issue 14): the
same algorithm as the dense state and the NumPy reference, with m explicit
eigenpairs plus one cluster.

Tolerances: expected losses agree to 1e-9 (measured ~1e-14..1e-12); the
density matrices to CAPPED_ATOL; orthogonality within ORTH_ATOL.
"""

import math
import pickle

import numpy as np
import pytest
from learner_cases import CAPPED_ATOL, assert_same_state, unit_ball
from learner_cases import assert_clustered_matches, clustered_dense_reference

import onlinepca_fast as opf
from onlinepca_fast import _kernels, reference
from onlinepca_fast.learners._state import AUTO_DENSE_BELOW

N, K = 8, 3


def crossing_stream(seed=0, n=N):
    """Isotropic rows (every direction explicit: no cluster), then a rank-2
    segment (the rest capped: a cluster again), then isotropic again."""
    rng = np.random.default_rng(seed)
    iso = unit_ball(rng.standard_normal((60, n)) * 2)
    B = np.linalg.qr(rng.standard_normal((n, 2)))[0]
    low = unit_ball(rng.standard_normal((300, 2)) @ B.T)
    return np.vstack([iso, low, iso])


def trajectory(learner, X):
    """Fit row by row, recording (multiplicity, cluster at the cap) before each trial."""
    before = []
    for x in X:
        if learner.__dict__.get("n_features_in_") is None:
            before.append((X.shape[1], False))
        else:
            before.append((learner.cluster_multiplicity_,
                           learner.cluster_value_ == -math.log(X.shape[1] - learner.n_components)))
        learner.partial_fit(x[np.newaxis])
    return before


CONFIGS = [
    dict(eta=0.3),
    dict(eta=0.3, share="fixed", alpha=1e-3),
    dict(eta=0.3, share="uniform", alpha=0.02, sampler="systematic"),
    dict(eta=1.0, sampler="systematic"),
    dict(eta=0.05),
]


@pytest.mark.parametrize("params", CONFIGS, ids=lambda p: "-".join(map(str, p.values())))
def test_expected_losses_match_the_reference_and_the_dense_state(params):
    clustered, before, dense, ref = clustered_dense_reference(
        "OnlinePCA", K, crossing_stream(), trajectory, **params)
    # the same losses, the same parameter
    values, vectors = assert_clustered_matches(clustered, dense, ref, values_rtol=0)
    if params["eta"] == 0.3 and params.get("share") != "uniform":
        # the stream crosses: no cluster (all explicit), capped cluster, and back
        mult = np.array([b[0] for b in before])
        assert (mult == 0).any() and (mult > 0).any()
        assert np.count_nonzero(np.diff((mult == 0).astype(int)) != 0) >= 2
        assert any(b[1] for b in before)
    np.testing.assert_allclose((vectors * np.exp(values)) @ vectors.T, dense.density_,
                               rtol=0, atol=CAPPED_ATOL)


@pytest.mark.parametrize("sampler", ["decomposition", "systematic"])
def test_draws_match_the_dense_state_when_the_cluster_is_capped(sampler):
    """A capped cluster lies in every corner: the corner is the same set of
    eigen-directions as the dense state's (same uniform), so the realized
    losses agree."""
    X = crossing_stream(1)
    clustered = opf.OnlinePCA(K, eta=1.0, state="clustered", sampler=sampler, random_state=3)
    before = trajectory(clustered, X)
    dense = opf.OnlinePCA(K, eta=1.0, state="dense", sampler=sampler, random_state=3).fit(X)
    capped = np.array([b[1] for b in before])
    assert capped.sum() > 300
    np.testing.assert_allclose(clustered.realized_losses_[capped],
                               dense.realized_losses_[capped], rtol=0, atol=1e-9)


@pytest.mark.parametrize("sampler", ["decomposition", "systematic"])
@pytest.mark.parametrize("share", [None, "uniform"])
def test_split_cluster_draws_are_unbiased(sampler, share):
    """Before the cluster reaches the cap (never, with uniform mixing) the
    corner leaves out some of its slots: more than k of them (the first
    trials, drawn from m + k entries) or at most k (mixing, m > n - k); the
    directions drawn for them must keep E[realized] = expected."""
    n, k, seeds = 12, 5, 1500
    T = 4 if share is None else 9
    X = unit_ball(np.random.default_rng(5).standard_normal((T, n)) * 0.8)
    realized = np.empty((seeds, T))
    for s in range(seeds):
        learner = opf.OnlinePCA(k, eta=0.5, state="clustered", sampler=sampler, share=share,
                                alpha=0.05 if share else 0.0, random_state=s).fit(X)
        realized[s] = learner.realized_losses_
    assert learner.cluster_value_ < -math.log(n - k)  # never capped: always split
    if share:
        assert 0 < learner.cluster_multiplicity_ <= k
    expected = learner.expected_losses_
    spread = realized.std(axis=0) / math.sqrt(seeds)
    assert np.all(np.abs(realized.mean(axis=0) - expected) <= 5 * spread + 1e-12)


def test_sampled_projections_are_unbiased():
    """E[P] = I - (n-k) W, also with a split cluster (sample_components)."""
    n, k = 10, 4
    X = unit_ball(np.random.default_rng(2).standard_normal((3, n)))
    learner = opf.OnlinePCA(k, eta=0.7, state="clustered", random_state=0).fit(X)
    assert learner.cluster_value_ < -math.log(n - k)
    rng = np.random.default_rng(9)
    draws = 6000
    mean = np.zeros((n, n))
    for _ in range(draws):
        V = learner.sample_components(rng)
        np.testing.assert_allclose(V @ V.T, np.eye(k), rtol=0, atol=1e-12)
        mean += V.T @ V
    mean /= draws
    target = np.eye(n) - (n - k) * learner.density_
    assert np.abs(mean - target).max() < 0.05


def test_components_and_transforms():
    X = crossing_stream(2)
    clustered = opf.OnlinePCA(K, eta=1.0, state="clustered", random_state=0).fit(X)
    dense = opf.OnlinePCA(K, eta=1.0, state="dense", random_state=0).fit(X)
    C, D = clustered.components_, dense.components_
    np.testing.assert_allclose(C @ C.T, np.eye(K), rtol=0, atol=1e-12)
    np.testing.assert_allclose(C.T @ C, D.T @ D, rtol=0, atol=1e-8)
    np.testing.assert_allclose(clustered.transform(X), X @ C.T, rtol=0, atol=1e-12)
    Z = clustered.transform(X[:5])
    np.testing.assert_allclose(clustered.inverse_transform(Z), Z @ C, rtol=0, atol=1e-12)
    assert clustered.sample_projection(0).shape == (N, N)


def test_components_reach_into_the_cluster_when_fewer_are_explicit():
    """With m < k explicit eigenpairs the top-k of E[P] include cluster
    directions: orthonormal, orthogonal to the explicit ones."""
    n, k = 30, 6
    x = unit_ball(np.random.default_rng(0).standard_normal((2, n)))
    learner = opf.OnlinePCA(k, state="clustered", random_state=0).fit(x)
    m = learner.eigenvalues_.size
    assert m < k
    C = learner.components_
    np.testing.assert_allclose(C @ C.T, np.eye(k), rtol=0, atol=1e-12)
    np.testing.assert_allclose(C[:m], learner.eigenvectors_.T, rtol=0, atol=1e-15)
    np.testing.assert_allclose(C[m:] @ learner.eigenvectors_, 0, atol=1e-12)


def test_capacity_grows_and_long_runs_stay_accurate():
    """m beyond the first capacity (32), B compressed and regrown, 10^4
    trials with the re-orthogonalisation schedule: the same parameter as the
    dense state, eigenvectors orthonormal."""
    n, k, T = 60, 4, 10_000
    rng = np.random.default_rng(4)
    X = unit_ball(rng.standard_normal((T, n)) * np.linspace(1.5, 0.05, n))
    clustered = opf.OnlinePCA(k, eta=0.05, state="clustered", random_state=0,
                              reorthogonalize_every=2000)
    clustered.partial_fit(X[:200])
    assert clustered._state.b.shape[0] > 32  # grown
    clustered.partial_fit(X[200:])
    dense = opf.OnlinePCA(k, eta=0.05, state="dense", random_state=0,
                          reorthogonalize_every=2000).fit(X)
    np.testing.assert_allclose(clustered.expected_losses_, dense.expected_losses_,
                               rtol=0, atol=1e-9)
    Q = clustered.eigenvectors_
    assert np.linalg.norm(Q.T @ Q - np.eye(Q.shape[1]), 2) <= 1e-12
    np.testing.assert_allclose(clustered.density_, dense.density_, rtol=0, atol=1e-12)


def test_one_engine_serves_the_batches_until_the_arrays_grow():
    """The clustered engine is bound to the learner's state object: later
    batches reuse it; a growth makes a new state object (the old one valid
    until it is replaced), and a new engine bound to it."""
    X = crossing_stream(3)
    learner = opf.OnlinePCA(K, eta=0.3, state="clustered", random_state=1)
    learner.partial_fit(X[:5])
    state, _, engine = learner._engine
    assert engine.state == _kernels.STATE_CLUSTERED and state is learner._state
    learner.partial_fit(X[5:10])
    assert learner._engine[2] is engine and learner._state is state
    cap = learner._state.b.shape[0]
    learner.partial_fit(X[10:])
    if learner._state.b.shape[0] > cap:  # grown inside the batch: rebound
        assert learner._engine[0] is learner._state and learner._engine[2] is not engine
    wide = opf.OnlinePCA(K, eta=0.3, state="clustered", random_state=1)
    wide.partial_fit(np.random.default_rng(0).standard_normal((5, 200)) / 20)
    first = wide._state
    wide.partial_fit(np.random.default_rng(1).standard_normal((60, 200)) / 20)
    assert wide._state.b.shape[0] > first.b.shape[0] and wide._engine[0] is wide._state


def test_pickle_and_copies_continue_identically():
    X = crossing_stream(3)
    a = opf.OnlinePCA(K, eta=0.3, state="clustered", random_state=1).fit(X[:100])
    b = pickle.loads(pickle.dumps(a))
    a.partial_fit(X[100:])
    b.partial_fit(X[100:])
    np.testing.assert_array_equal(a.realized_losses_, b.realized_losses_)
    np.testing.assert_array_equal(a.eigenvectors_, b.eigenvectors_)


def test_auto_starts_clustered_wherever_it_is_faster_at_small_m():
    """state="auto" chooses by m (tests/test_auto_state.py); at m = 0 that
    is clustered from AUTO_DENSE_BELOW features on, dense below."""
    rng = np.random.default_rng(0)
    for n, clustered in [(AUTO_DENSE_BELOW - 1, False), (AUTO_DENSE_BELOW, True)]:
        learner = opf.OnlinePCA(2, random_state=0).fit(unit_ball(rng.standard_normal((2, n))))
        assert (learner.eigenvalues_.size < n) == clustered
        assert (learner.cluster_multiplicity_ > 0) == clustered
    past = opf.OnlinePCA(2, share="past", alpha=0.1).fit(
        unit_ball(rng.standard_normal((1, AUTO_DENSE_BELOW))))
    assert past.cluster_multiplicity_ == 0  # share="past" keeps the dense state


def test_bad_state_arguments_change_nothing():
    X = crossing_stream()
    with pytest.raises(ValueError, match="state='clustered' cannot mix in the past"):
        opf.OnlinePCA(K, share="past", alpha=0.1, state="clustered").fit(X)
    with pytest.raises(ValueError, match="state must be"):
        opf.OnlinePCA(K, state="sparse").fit(X)
    learner = opf.OnlinePCA(K, state="clustered", random_state=0).fit(X[:20])
    saved = pickle.dumps(learner)
    learner.set_params(state="dense")
    with pytest.raises(ValueError, match="set state before fit"):
        learner.partial_fit(X[20:])
    learner.set_params(state="clustered")
    assert pickle.dumps(learner) == saved
    learner.set_params(state="dense").fit(X)  # a reset may change it
    assert learner.cluster_multiplicity_ == 0
    assert_same_state(learner, opf.OnlinePCA(K, state="dense", random_state=0).fit(X))


def test_large_n_never_forms_n_by_n_silently():
    n, k = 10_001, 2
    X = unit_ball(np.random.default_rng(0).standard_normal((3, n)))
    learner = opf.OnlinePCA(k, sampler="systematic", random_state=0).fit(X)
    assert learner.eigenvectors_.shape == (n, learner.eigenvalues_.size)
    for get in (lambda: learner.density_, lambda: learner.sample_projection(0),
                lambda: learner.full_eigensystem()):
        with pytest.raises(ValueError, match="max_features = 10000"):
            get()
    V = learner.sample_components(0)
    assert V.shape == (k, n)
    np.testing.assert_allclose(V @ V.T, np.eye(k), rtol=0, atol=1e-12)
    assert learner.components_.shape == (k, n)


def test_cap_groups_matches_cap_log_on_the_expanded_vector():
    rng = np.random.default_rng(0)
    for _ in range(200):
        g = int(rng.integers(1, 8))
        mult = rng.integers(1, 6, size=g).astype(float)
        v = np.sort(rng.normal(scale=rng.choice([0.1, 2.0, 50.0]), size=g))[::-1].copy()
        n = int(mult.sum())
        if n < 2:
            continue
        d = int(rng.integers(1, n))
        out = np.empty(g)
        _kernels.cap_groups(v, mult, d, out)
        expanded = reference.cap_log(np.repeat(v, mult.astype(int)), d)
        np.testing.assert_allclose(np.repeat(out, mult.astype(int)), expanded,
                                   rtol=0, atol=1e-12)


@pytest.mark.parametrize("level", [0.0, -1e3, 1e10, -1e16, 1e17, -2.0 ** 60])
def test_cap_groups_normalises_far_from_zero(level):
    """Log-weights around 1e16 (a numeric eta on rows of norm 1e8): capping
    formed the new values as v + shift with |v| ~ 1e16, an error of ulp(v)
    (2 at 1e16) in each log-weight, so W's trace was not 1 (a fuzzed stream
    found it).  Oracle: the weights sum to one and stay at most 1/d (1e-12),
    and the groups far below the d-th largest keep their differences."""
    rng = np.random.default_rng(1)
    for _ in range(200):
        g = int(rng.integers(2, 7))
        mult = rng.integers(1, 4, size=g).astype(float)
        v = level + np.sort(rng.choice([0.0, -3.0, -1e15, -7e16], size=g)
                            + rng.normal(size=g))[::-1]
        d = int(rng.integers(1, int(mult.sum())))
        out = np.empty(g)
        _kernels.cap_groups(v, mult, d, out)
        assert math.fsum(mult * np.exp(out)) == pytest.approx(1.0, rel=0, abs=1e-12)
        assert out.max() <= -math.log(d)
        expanded = reference.cap_log(np.repeat(v, mult.astype(int)), d)
        np.testing.assert_allclose(np.exp(np.repeat(out, mult.astype(int))),
                                   np.exp(expanded), rtol=0, atol=1e-12)


@pytest.mark.parametrize("state", ["dense", "clustered"])
def test_a_numeric_eta_on_large_rows_keeps_w_exact(state):
    """eta = 1 on rows of norm 1e8: log-weights 1e16 apart.  By hand
    (WK Alg. 5 and the uncentered Alg. 6, exact arithmetic): OnlinePCA, n = 3,
    k = 1 (cap 1/2), after 1e8 e1 and 1e8 e2 has W = diag(1/4, 1/4, 1/2),
    loss 2 on (1, 1, 1) (the clustered state gave 2.27); Alg. 6 on 1e8 e1,
    e2, e3 of R^5 (d = 4) has W = diag(1/6, 1/6, 1/6, 1/4, 1/4), loss
    4 (14/6 + 41/4) on (1, ..., 5), and for n = 300 (state "auto": the
    clustered state) W = 2/897 on e1..e3 and 1/299 elsewhere, loss 299 on
    the ones (both refused by the clustered sampler: "not in the capped
    simplex").  The reference had the same rounding; 1e-12 relative."""
    X = np.array([[1e8, 0, 0], [0, 1e8, 0], [1.0, 1, 1]])
    expected = [2e16 / 3, 1e16, 2.0]
    for learner in (opf.OnlinePCA(1, eta=1.0, state=state, random_state=0),
                    reference.OnlinePCA(1, eta=1.0, random_state=0)):
        np.testing.assert_allclose(learner.fit(X).expected_losses_, expected,
                                   rtol=1e-12, atol=0)
    X = np.vstack([1e8 * np.eye(5)[:3], np.arange(1.0, 6.0)])
    expected = [4e16 / 5, 1e16, 1e16, 4 * (14 / 6 + 41 / 4)]
    for learner in (opf.CenteredOnlinePCA(1, eta=1.0, centered=False, state=state,
                                          random_state=0),
                    reference.CenteredOnlinePCA(1, eta=1.0, centered=False, random_state=0)):
        np.testing.assert_allclose(learner.fit(X).expected_losses_, expected,
                                   rtol=1e-12, atol=0)
    if state == "dense":
        return
    X = np.vstack([1e8 * np.eye(300)[:3], np.ones(300)])  # state "auto" starts clustered
    learner = opf.CenteredOnlinePCA(1, eta=1.0, centered=False, random_state=0).fit(X)
    np.testing.assert_allclose(learner.expected_losses_, [299e16 / 300, 1e16, 1e16, 299.0],
                               rtol=1e-12, atol=0)


@pytest.mark.parametrize("make", [
    lambda state: opf.OnlineAdaptivePCA(1, eta=1.0, state=state, random_state=0),
    lambda state: opf.OnlinePCA(1, eta=1.0, share="fixed", alpha=1e-3, state=state,
                                random_state=0)], ids=["adaptive", "fixed-share"])
def test_fixed_share_without_a_cluster_keeps_the_state_finite(make):
    """Full-rank rows make every direction explicit (no cluster); the fixed
    share's normalisation still shifted the unused cluster value each trial,
    which drifted to exp(mu_c) = inf within 3000 trials at n = 2: density_
    was NaN (a fuzzed stream found it).  Oracle: the dense state's W
    (CAPPED_ATOL) and losses (1e-9)."""
    X = np.random.default_rng(0).standard_normal((3000, 2))
    clustered = make("clustered").fit(X)
    dense = make("dense").fit(X)
    assert clustered.cluster_multiplicity_ == 0
    assert np.isfinite(clustered.cluster_value_)
    np.testing.assert_allclose(clustered.density_, dense.density_, rtol=0, atol=CAPPED_ATOL)
    np.testing.assert_allclose(clustered.expected_losses_, dense.expected_losses_,
                               rtol=0, atol=1e-9)
    state = pickle.loads(pickle.dumps(clustered)).__getstate__()["_state"]
    assert all(np.isfinite(v).all() for v in vars(state).values() if isinstance(v, np.ndarray))


@pytest.mark.parametrize("n, k", [(40, 8), (200, 3)])
def test_realized_loss_in_haar_directions_has_their_distribution(n, k):
    """The trial draws the energy of x in e Haar directions of the cluster as
    beta2 * Beta(e/2, (c-e)/2), with no vectors.  On the first trial (no
    explicit direction, W = I/n below the cap) the corner holds n - k
    cluster slots and leaves k out: the realized loss is |x|^2 minus the
    energy of x in k uniformly drawn orthonormal directions.  Oracle: those
    directions drawn explicitly in NumPy (QR of Gaussian n x k matrices);
    two-sample Kolmogorov-Smirnov over 2000 draws each."""
    from scipy.stats import ks_2samp

    draws = 2000
    rng = np.random.default_rng(11)
    x = unit_ball(rng.standard_normal((1, n)))
    ours = np.array([opf.OnlinePCA(k, eta=1.0, state="clustered", random_state=s)
                     .partial_fit(x).realized_losses_[0] for s in range(draws)])
    oracle = np.empty(draws)
    for s in range(draws):
        V = np.linalg.qr(rng.standard_normal((n, k)))[0]
        oracle[s] = float(x[0] @ x[0] - np.sum((V.T @ x[0]) ** 2))
    assert np.ptp(ours) > 1e-3
    assert ks_2samp(ours, oracle).pvalue > 1e-3
