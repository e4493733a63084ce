"""Tests of the NumPy reference learners (``onlinepca_fast.reference``) on
their own: hand-computed trials, the worked example of WK Sec. 4.1, the
losses as those of the density and the drawn corner, and the relations
between the algorithms (YL's fixed share, WK Alg. 5 vs the uncentered
Alg. 6, follow the leader).
"""

import math

import numpy as np
import pytest
from learner_cases import pca_stream, wk_sec8_stream
from numpy.testing import assert_allclose

from onlinepca_fast import reference as ref


def test_reference_hedge_hand_computed():
    # WK Alg. 1, three experts, eta = 1
    L = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.0], [0.5, 0.5, 0.5]])
    h = ref.Hedge(eta=1.0, random_state=0).fit(L)
    w1 = np.exp(-L[0]) / np.exp(-L[0]).sum()
    w2 = w1 * np.exp(-L[1]) / (w1 * np.exp(-L[1])).sum()
    assert_allclose(h.expected_losses_, [0.5, w1 @ L[1], 0.5], rtol=1e-14, atol=0)
    assert_allclose(h.density_, w2 * np.exp(-L[2]) / (w2 * np.exp(-L[2])).sum(), rtol=1e-14, atol=0)
    assert_allclose(h.expected_losses_[1], 1 / (math.exp(-1) + 1 + math.exp(-0.5)),
                    rtol=1e-14, atol=0)
    for corner, loss, realized in zip(h.corners_, L, h.realized_losses_):
        assert corner.shape == (1,)
        assert_allclose(realized, loss[corner[0]], rtol=0, atol=0)


def test_reference_capped_hedge_hand_computed():
    # WK Alg. 3, n = 3, k = 1 (d = 2, cap 1/2): after (1, 0, 0.5) the weights
    # (e^-1, 1, e^-0.5)/Z put 0.5065 > 1/2 on expert 2, which is capped; the
    # other two share the remaining 1/2 in proportion e^-1 : e^-0.5
    L = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, 0.0]])
    h = ref.CappedHedge(1, eta=1.0, random_state=0).fit(L)
    rest = np.array([math.exp(-1), math.exp(-0.5)])
    w1 = np.array([rest[0], 1.0, rest[1]]) / rest.sum() / 2
    w1[1] = 0.5
    assert_allclose(h.expected_losses_, [2 * 0.5, 2 * w1 @ L[1]], rtol=1e-14, atol=0)
    assert_allclose(h.expected_losses_[1], 1.0, rtol=1e-14, atol=0)
    assert all(c.shape == (2,) for c in h.corners_)


def test_reference_capped_hedge_wk_section_4_1_example():
    # WK Sec. 4.1: n = 3, k = 1, update factors proportional to 1, 2, 4 give
    # (1/7, 2/7, 4/7), capped at 1/2 to (1/6, 1/3, 1/2)
    h = ref.CappedHedge(1, eta=2 * math.log(2), random_state=0).fit([[1.0, 0.5, 0.0]])
    assert_allclose(h.density_, [1 / 6, 1 / 3, 1 / 2], rtol=1e-14, atol=0)


def test_reference_losses_are_those_of_the_density_and_the_corner():
    X = pca_stream(60, 8, seed=1)
    for learner in (ref.OnlinePCA(3, random_state=1),
                    ref.OnlinePCA(3, share="past", alpha=0.1, random_state=1),
                    ref.CenteredOnlinePCA(3, random_state=1, center_lr_inv=2.0)):
        expected, realized = [], []
        for x in X:
            if learner.__dict__.get("n_trials_"):
                W, Q, m = learner.density_, learner.eigenvectors_, learner.mean_
            else:  # CenteredOnlinePCA without mean_init: m^0 is the first row
                centered = isinstance(learner, ref.CenteredOnlinePCA)
                W, Q, m = np.eye(8) / 8, np.eye(8), (x if centered else np.zeros(8))
            learner.learn_one(x)
            y = x - m
            expected.append(5 * y @ W @ y)  # (n-k) tr(W y y^T)
            R = Q[:, learner.corners_[-1]]
            realized.append(np.sum((R.T @ y) ** 2))  # ||y - P y||^2, P = I - R R^T
        assert_allclose(learner.expected_losses_, expected, rtol=1e-10, atol=1e-14)
        assert_allclose(learner.realized_losses_, realized, rtol=1e-10, atol=1e-14)
        # W stays in the capped set B_{n-k}
        ev = np.linalg.eigvalsh(learner.density_)
        assert_allclose(ev.sum(), 1.0, rtol=1e-12, atol=0)
        assert ev.min() >= -1e-15 and ev.max() <= (1 + 1e-12) / 5


def test_reference_online_pca_differs_from_uncentered_alg6():
    # WK Sec. 6.2: Alg. 5 and the uncentered version of Alg. 6 coincide while
    # no cap is active (all constraints are equalities) and differ once
    # capping acts.  Rank-2 data with k = 2 never makes the cap bind ...
    X = wk_sec8_stream(10, [150], seed=2)
    a = ref.OnlinePCA(2, random_state=0).fit(X).expected_losses_
    b = ref.CenteredOnlinePCA(2, centered=False, random_state=0).fit(X).expected_losses_
    assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    # ... three different rank-2 segments do
    X = wk_sec8_stream(10, [150, 150, 150], seed=2)
    a = ref.OnlinePCA(2, random_state=0).fit(X).expected_losses_
    b = ref.CenteredOnlinePCA(2, centered=False, random_state=0).fit(X).expected_losses_
    assert_allclose(a[:150], b[:150], rtol=1e-9, atol=1e-12)
    assert np.max(np.abs(a - b)) > 0.1
    assert abs(a.sum() - b.sum()) > 0.1 * a.sum()


@pytest.mark.parametrize("centered", [False, True])
def test_reference_follow_the_leader_recovers_the_subspace(centered):
    rng = np.random.default_rng(3)
    n, k, T = 12, 3, 400
    B = np.linalg.qr(rng.standard_normal((n, k)))[0]
    offset = 2.0 * rng.standard_normal(n) if centered else 0.0
    X = rng.standard_normal((T, k)) * [3.0, 2.0, 1.5] @ B.T + offset
    X += 0.05 * rng.standard_normal((T, n))
    ftl = ref.FollowTheLeader(k, centered=centered).fit(X)
    Y = X - X.mean(axis=0) if centered else X
    top = np.linalg.eigh(Y.T @ Y)[1][:, n - k:]
    V = ftl.components_
    assert V.shape == (k, n)
    assert_allclose(V @ V.T, np.eye(k), rtol=0, atol=1e-12)
    assert_allclose(V.T @ V, top @ top.T, rtol=0, atol=1e-10)  # the batch PCA subspace
    assert_allclose(V.T @ V, B @ B.T, rtol=0, atol=0.05)  # close to the true one
    assert_allclose(ftl.mean_, X.mean(axis=0) if centered else np.zeros(n), rtol=1e-12, atol=1e-12)
    assert_allclose(ftl.expected_losses_, ftl.realized_losses_, rtol=0, atol=0)
    # once the subspace is known, it compresses the noise only
    assert ftl.expected_losses_[100:].mean() < 0.05


def test_reference_adaptive_pca_is_online_pca_with_fixed_share():
    X = pca_stream(200, 10, seed=4)
    a = ref.OnlineAdaptivePCA(2, alpha=1e-3, random_state=5).fit(X)
    b = ref.OnlinePCA(2, share="fixed", alpha=1e-3, random_state=5).fit(X)
    assert_allclose(a.expected_losses_, b.expected_losses_, rtol=0, atol=0)
    assert_allclose(a.realized_losses_, b.realized_losses_, rtol=0, atol=0)


def test_reference_variance_minimizer_vector_and_matrix_inputs_agree():
    X = pca_stream(200, 8, seed=6)
    for kw in ({}, {"share": "fixed", "alpha": 1e-2}):
        a = ref.VarianceMinimizer(random_state=0, **kw).fit(X)
        b = ref.VarianceMinimizer(random_state=0, **kw).fit(X[:, :, None] * X[:, None, :])
        assert_allclose(a.expected_losses_, b.expected_losses_, rtol=1e-10, atol=1e-14)
    c = ref.SimplexVarianceMinimizer(alpha=0.01).fit(X)
    d = ref.SimplexVarianceMinimizer(alpha=0.01).fit(X[:, :, None] * X[:, None, :])
    assert_allclose(c.expected_losses_, d.expected_losses_, rtol=1e-12, atol=1e-15)


def test_reference_one_uniform_per_trial():
    X = pca_stream(30, 6, seed=7)
    rng = np.random.default_rng(8)
    learner = ref.OnlinePCA(2, random_state=rng).fit(X)
    expected_state = np.random.default_rng(8)
    expected_state.random(30)
    assert rng.bit_generator.state == expected_state.bit_generator.state
    assert learner.n_trials_ == 30 and len(learner.corners_) == 30
