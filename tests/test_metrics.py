"""Tests of onlinepca_fast.metrics against brute force and hand-computed values."""

import doctest
import itertools
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from onlinepca_fast import metrics
from onlinepca_fast import reference as ref


def _data(T, n, seed, scale=1.0, offset=0.0):
    rng = np.random.default_rng(seed)
    return scale * rng.standard_normal((T, n)) @ rng.standard_normal((n, n)) + offset


def _naive_best(X, k, centered=False):
    """Sum of the n - k smallest eigenvalues of the explicitly formed scatter matrix."""
    Y = X - X.mean(axis=0) if centered else X
    return np.sum(np.linalg.eigh(Y.T @ Y)[0][: X.shape[1] - k])


def _projection_loss(Y, V):
    """sum_t ||y_t - P y_t||^2 for P = V^T V, V with orthonormal rows."""
    return np.sum(Y**2) - np.sum((Y @ V.T) ** 2)


def test_doctests():
    result = doctest.testmod(metrics, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10
    assert result.failed == 0


# --- best_subspace_loss -----------------------------------------------------

@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("T, n, k", [(50, 5, 2), (7, 10, 3), (200, 20, 1), (30, 4, 3)])
def test_best_subspace_loss_matches_eigh(T, n, k, centered):
    X = _data(T, n, seed=T + n + k, offset=3.0)
    got = metrics.best_subspace_loss(X, k, centered=centered)
    assert_allclose(got, _naive_best(X, k, centered), rtol=1e-10, atol=1e-10)
    # the identity "loss = total energy - top-k eigenvalues"
    Y = X - X.mean(axis=0) if centered else X
    top = np.linalg.eigvalsh(Y.T @ Y)[n - k:]
    assert_allclose(got, np.sum(Y**2) - np.sum(top), rtol=1e-9, atol=1e-9)


def test_best_subspace_loss_brute_force_2d_grid():
    X = _data(40, 2, seed=1)
    angles = np.linspace(0.0, np.pi, 200_001)
    V = np.stack([np.cos(angles), np.sin(angles)], axis=1)  # each row: a line
    losses = np.sum(X**2) - np.sum((X @ V.T) ** 2, axis=0)
    # grid step pi/2e5: the minimum over the grid is within O(step^2) of the optimum
    assert_allclose(metrics.best_subspace_loss(X, 1), losses.min(), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_best_subspace_loss_brute_force_random_bases(k, centered):
    # n = 4: no random rank-k projection beats the optimum, and the best of
    # many random ones comes close to it
    rng = np.random.default_rng(k)
    X = _data(25, 4, seed=10 + k, offset=2.0)
    Y = X - X.mean(axis=0) if centered else X
    best = metrics.best_subspace_loss(X, k, centered=centered)
    V = np.linalg.qr(rng.standard_normal((20_000, 4, 4)))[0][:, :, :k]  # orthonormal columns
    losses = np.sum(Y**2) - np.sum((Y @ V) ** 2, axis=(1, 2))
    assert losses.min() >= best * (1 - 1e-12) - 1e-12
    assert_allclose(losses.min(), best, rtol=0.1, atol=1e-9)
    # and the top-k eigenvectors attain it
    V = np.linalg.eigh(Y.T @ Y)[1][:, 4 - k:].T
    assert_allclose(_projection_loss(Y, V), best, rtol=1e-10, atol=1e-10)


def test_best_center_is_the_mean():
    rng = np.random.default_rng(3)
    X = _data(30, 4, seed=3, offset=5.0)
    best = metrics.best_subspace_loss(X, 2, centered=True)
    for m in X.mean(axis=0) + rng.standard_normal((200, 4)):
        assert metrics.best_subspace_loss(X - m, 2) >= best - 1e-9
    # centering can only help; with a large offset it helps a lot
    assert metrics.best_subspace_loss(X, 2) > 2 * best


def test_best_subspace_loss_rank_deficient_is_zero():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((50, 2)) @ rng.standard_normal((2, 6))
    assert_allclose(metrics.best_subspace_loss(X, 2), 0.0, rtol=0,
                    atol=1e-20 * np.sum(X**2) + 1e-24)
    assert_allclose(metrics.best_subspace_loss(X, 1), _naive_best(X, 1), rtol=1e-9, atol=1e-9)


# --- regret, partition regret, adaptive regret -------------------------------

def test_regret_is_total_minus_best():
    X = _data(40, 5, seed=5)
    losses = np.random.default_rng(5).random(40)
    for centered in (False, True):
        assert_allclose(metrics.regret(losses, X, 2, centered=centered),
                        losses.sum() - _naive_best(X, 2, centered), rtol=1e-10, atol=1e-10)


def _naive_partition_curve(losses, X, k, boundaries, centered):
    starts = [0, *boundaries]
    stops = [*boundaries, len(X)]
    comparator = np.empty(len(X))
    for a, b in zip(starts, stops):
        Y = X[a:b] - X[a:b].mean(axis=0) if centered else X[a:b]
        V = np.linalg.eigh(Y.T @ Y)[1][:, X.shape[1] - k:].T
        for t in range(a, b):
            y = Y[t - a]
            comparator[t] = y @ y - np.sum((V @ y) ** 2)
    return np.array([np.sum(losses[: t + 1]) - np.sum(comparator[: t + 1]) for t in range(len(X))])


@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("boundaries", [[], [10], [3, 17, 18, 30]])
def test_partition_regret_matches_naive(boundaries, centered):
    X = _data(40, 5, seed=6, offset=1.0)
    losses = np.random.default_rng(6).random(40) * 3
    total = metrics.partition_regret(losses, X, 2, boundaries, centered=centered)
    starts, stops = [0, *boundaries], [*boundaries, 40]
    naive = losses.sum() - sum(_naive_best(X[a:b], 2, centered) for a, b in zip(starts, stops))
    assert_allclose(total, naive, rtol=1e-10, atol=1e-10)
    curve = metrics.partition_regret(losses, X, 2, boundaries, centered=centered, cumulative=True)
    assert curve.shape == (40,)
    assert_allclose(curve, _naive_partition_curve(losses, X, 2, boundaries, centered),
                    rtol=1e-9, atol=1e-9)
    assert_allclose(curve[-1], total, rtol=1e-9, atol=1e-9)
    if not boundaries:
        assert_allclose(total, metrics.regret(losses, X, 2, centered), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("centered", [False, True])
def test_adaptive_regret_matches_brute_force(centered):
    T, n, k = 14, 4, 1
    X = _data(T, n, seed=7, offset=0.5)
    losses = np.random.default_rng(7).random(T) * 2
    best, where = -np.inf, None
    for r in range(T):
        for s in range(r, T):
            value = losses[r:s + 1].sum() - _naive_best(X[r:s + 1], k, centered)
            if value > best:
                best, where = value, (r, s)
    got, interval = metrics.adaptive_regret(losses, X, k, centered=centered, return_interval=True)
    assert_allclose(got, best, rtol=1e-9, atol=1e-9)
    assert interval == where
    assert_allclose(metrics.adaptive_regret(losses, X, k, centered=centered), best,
                    rtol=1e-9, atol=1e-9)
    # the whole interval is one of them
    assert got >= metrics.regret(losses, X, k, centered) - 1e-9


def test_adaptive_regret_of_a_learner_is_at_least_its_regret():
    X = _data(60, 5, seed=8)
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    learner = ref.OnlinePCA(2, random_state=0).fit(X)
    losses = learner.expected_losses_
    value = metrics.adaptive_regret(losses, X, 2)
    assert value >= metrics.regret(losses, X, 2) - 1e-12
    # expected losses are those of a capped density matrix: no interval has negative regret
    assert value >= -1e-12


# --- experts -------------------------------------------------------------------

@pytest.mark.parametrize("k", [1, 2, 4])
def test_expert_best_subset_loss_brute_force(k):
    L = np.random.default_rng(k).random((30, 5))
    brute = min(L[:, list(c)].sum() for c in itertools.combinations(range(5), 5 - k))
    assert_allclose(metrics.expert_best_subset_loss(L, k), brute, rtol=1e-12, atol=1e-12)
    losses = np.random.default_rng(0).random(30)
    assert_allclose(metrics.expert_regret(losses, L, k), losses.sum() - brute,
                    rtol=1e-12, atol=1e-12)


def test_expert_loss_equals_diagonal_pca_loss():
    # WK Sec. 7: loss vectors l_t are the instance matrices diag(l_t); with
    # x_t = sqrt(l_i) e_i the best subspace is spanned by coordinate axes
    rng = np.random.default_rng(9)
    T, n, k = 50, 6, 2
    idx, l = rng.integers(n, size=T), rng.random(T)
    L = np.zeros((T, n))
    L[np.arange(T), idx] = l
    X = np.sqrt(L)
    assert_allclose(metrics.best_subspace_loss(X, k), metrics.expert_best_subset_loss(L, k),
                    rtol=1e-10, atol=1e-12)


# --- bounds and parameters ------------------------------------------------------

def test_regret_bound_hand_computed():
    # n = 4, k = 2: D = 2 log 2
    D = 2 * math.log(2)
    assert_allclose(metrics.regret_bound(10.0, 4, 2, 1.0), (10 + D) / (1 - math.exp(-1)),
                    rtol=1e-14, atol=0)
    # n = 10, k = 1: D = 9 log(10/9)
    assert_allclose(metrics.regret_bound(3.0, 10, 1, 0.5),
                    (1.5 + 9 * math.log(10 / 9)) / (1 - math.exp(-0.5)), rtol=1e-14, atol=0)
    assert_allclose(metrics.regret_bound(0.0, 3, 2, 2.0), math.log(3) / (1 - math.exp(-2)),
                    rtol=1e-14, atol=0)


def test_tuned_regret_bound_hand_computed_and_eq7():
    D = 2 * math.log(2)
    assert_allclose(metrics.tuned_regret_bound(8.0, 4, 2), math.sqrt(16 * D) + D,
                    rtol=1e-14, atol=0)
    assert_allclose(metrics.tuned_regret_bound(0.0, 4, 2), D, rtol=1e-14, atol=0)
    # for k <= n/2 the exact D is at most k log(n/k): the bound is at most eq. (7)
    for n, k, L in [(4, 2, 8.0), (20, 2, 100.0), (100, 10, 3.0), (7, 3, 1.0)]:
        eq7 = math.sqrt(2 * L * k * math.log(n / k)) + k * math.log(n / k)
        assert metrics.tuned_regret_bound(L, n, k) <= eq7 * (1 + 1e-14)


@pytest.mark.parametrize("n, k", [(4, 2), (20, 2), (100, 10), (5, 4)])
@pytest.mark.parametrize("L", [0.5, 10.0, 1000.0])
def test_tuned_eta_makes_thm6_at_most_eq3(n, k, L):
    # WK eq. (3): with eta = log(1 + sqrt(2D/L)), (eta L + D)/(1 - e^-eta) <= L + sqrt(2LD) + D
    D = (n - k) * math.log(n / (n - k))
    eta = metrics.tuned_learning_rate(L, D)
    assert metrics.regret_bound(L, n, k, eta) <= L + metrics.tuned_regret_bound(L, n, k) + 1e-10
    # and it is close to the best eta (a grid over eta does not do much better)
    grid = min(metrics.regret_bound(L, n, k, e) for e in np.geomspace(1e-3, 20, 2000))
    assert metrics.regret_bound(L, n, k, eta) <= grid + metrics.tuned_regret_bound(L, n, k)


def test_tuned_learning_rate_hand_computed():
    assert_allclose(metrics.tuned_learning_rate(2.0, 4.0), math.log(3.0), rtol=1e-15, atol=0)
    assert_allclose(metrics.tuned_learning_rate(50.0, 1.0), math.log(1.2), rtol=1e-15, atol=0)


def test_adaptive_parameters_hand_computed():
    # YL Thm. 3 with T = 600, n = 20, k = 2 (the YL Sec. 6.1 toy example) and L = 100
    p = metrics.adaptive_parameters(600, 20, 2, 100.0)
    assert isinstance(p, metrics.AdaptiveParameters)
    assert_allclose(p.alpha, 1 / (600 * 18 + 1), rtol=1e-15, atol=0)
    D = 18 * math.log(20 * (1 + 18 * 600)) + 1
    assert_allclose(p.D, D, rtol=1e-15, atol=0)
    assert_allclose(p.eta, math.log(1 + math.sqrt(2 * D / 100.0)), rtol=1e-15, atol=0)
    alpha, eta, D2 = metrics.adaptive_parameters(1, 2, 1, 1.0)  # unpacks as a tuple
    assert_allclose([alpha, D2], [0.5, math.log(4) + 1], rtol=1e-15, atol=0)


# --- online-to-batch ----------------------------------------------------------

def test_average_density_is_the_mean_of_the_prediction_densities():
    X = _data(40, 6, seed=11)
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    W = metrics.average_density(ref.OnlinePCA(2, random_state=0), X)
    learner = ref.OnlinePCA(2, random_state=0)
    densities = [np.eye(6) / 6]
    for x in X[:-1]:
        learner.learn_one(x)
        densities.append(learner.density_)
    assert_allclose(W, np.mean(densities, axis=0), rtol=1e-13, atol=1e-15)
    # in the capped set B_{n-k}: trace one, eigenvalues in [0, 1/(n-k)]
    ev = np.linalg.eigvalsh(W)
    assert_allclose(np.trace(W), 1.0, rtol=1e-12, atol=0)
    assert ev.min() >= -1e-14 and ev.max() <= 1 / 4 + 1e-12
    # by linearity, its batch loss is the mean of the batch losses of the W^{t-1}
    assert_allclose(metrics.batch_loss(W, X, 2),
                    np.mean([metrics.batch_loss(D, X, 2) for D in densities]), rtol=1e-12, atol=0)
    # expected losses of the learner are the per-trial batch losses of W^{t-1}
    online = [metrics.batch_loss(D, x[None], 2) for D, x in zip(densities, X)]
    assert_allclose(learner.learn_one(X[-1]).expected_losses_, online, rtol=1e-10, atol=1e-14)


def test_batch_loss_of_a_corner_is_the_projection_loss():
    X = _data(20, 5, seed=12)
    V = np.linalg.qr(np.random.default_rng(12).standard_normal((5, 5)))[0]
    P = V[:, :2] @ V[:, :2].T
    W = (np.eye(5) - P) / 3
    assert_allclose(metrics.batch_loss(W, X, 2), np.sum((X - X @ P) ** 2), rtol=1e-12, atol=0)
    m = np.arange(5.0)
    assert_allclose(metrics.batch_loss(W, X, 2, mean=m), np.sum(((X - m) - (X - m) @ P) ** 2),
                    rtol=1e-12, atol=0)


# --- input validation -----------------------------------------------------------

def test_validation_errors():
    X = np.ones((5, 3))
    losses = np.ones(5)
    with pytest.raises(ValueError, match="X must be a non-empty 2-D array"):
        metrics.best_subspace_loss(np.ones(3), 1)
    with pytest.raises(ValueError, match="X contains NaN"):
        metrics.best_subspace_loss([[np.nan, 1.0]], 1)
    with pytest.raises(TypeError, match="X must be a real numeric array"):
        metrics.best_subspace_loss([["a", "b"]], 1)
    for k in (0, 3, -1):
        with pytest.raises(ValueError, match="n_components must satisfy"):
            metrics.best_subspace_loss(X, k)
    with pytest.raises(TypeError, match="n_components must be an integer"):
        metrics.best_subspace_loss(X, 1.0)
    with pytest.raises(ValueError, match="n_components needs n >= 2"):
        metrics.best_subspace_loss(np.ones((4, 1)), 1)
    with pytest.raises(ValueError, match=r"losses must have shape \(5,\)"):
        metrics.regret(np.ones(4), X, 1)
    with pytest.raises(ValueError, match="boundaries must be strictly increasing"):
        metrics.partition_regret(losses, X, 1, [3, 2])
    with pytest.raises(ValueError, match="boundaries must be strictly increasing"):
        metrics.partition_regret(losses, X, 1, [0])
    with pytest.raises(ValueError, match="boundaries must be strictly increasing"):
        metrics.partition_regret(losses, X, 1, [5])
    with pytest.raises(ValueError, match="boundaries must be a 1-D sequence of integers"):
        metrics.partition_regret(losses, X, 1, [1.5])
    with pytest.raises(ValueError, match=r"losses must have shape \(6,\)"):
        metrics.adaptive_regret(losses, np.ones((6, 3)), 1)
    with pytest.raises(ValueError, match="L must be a non-empty 2-D array"):
        metrics.expert_best_subset_loss(np.ones(3), 1)
    with pytest.raises(ValueError, match="eta must be a finite number > 0"):
        metrics.regret_bound(1.0, 4, 2, 0.0)
    with pytest.raises(ValueError, match="comparator_loss must be a finite number >= 0"):
        metrics.regret_bound(-1.0, 4, 2, 1.0)
    with pytest.raises(ValueError, match="comparator_loss must be a finite number"):
        metrics.tuned_regret_bound(np.inf, 4, 2)
    with pytest.raises(ValueError, match="n_components must satisfy"):
        metrics.tuned_regret_bound(1.0, 4, 4)
    with pytest.raises(ValueError, match="comparator_loss_bound must be a finite number > 0"):
        metrics.tuned_learning_rate(0.0, 1.0)
    with pytest.raises(ValueError, match="D must be a finite number > 0"):
        metrics.tuned_learning_rate(1.0, -1.0)
    with pytest.raises(ValueError, match="T must satisfy"):
        metrics.adaptive_parameters(0, 4, 2, 1.0)
    with pytest.raises(ValueError, match="n must satisfy"):
        metrics.adaptive_parameters(10, 1, 1, 1.0)
    with pytest.raises(ValueError, match=r"W must have shape \(3, 3\)"):
        metrics.batch_loss(np.eye(2), X, 1)
    with pytest.raises(ValueError, match=r"mean must have shape \(3,\)"):
        metrics.batch_loss(np.eye(3) / 3, X, 1, mean=np.zeros(2))
