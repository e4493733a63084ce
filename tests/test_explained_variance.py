"""explained_variance_ / explained_variance_ratio_ of the cumulative learners.

Oracle: NumPy on the rows seen -- ``np.var`` of the data along the learner's
own ``components_`` and ``eigh`` of the covariance (IncrementalPCA's
definitions: ddof=1 about the running mean; about the fixed center when
uncentered, over t).  Tolerance: the covariance is read off the eigenvalues of
``A = -log(n) I - eta C`` (absolute error ~ eps (log n + eta max C) / eta per
eigenvalue), so ``rtol = 1e-9`` of the largest plus that.
"""

import math
import pickle
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

import onlinepca_fast as opf
from onlinepca_fast.learners._cumulative import EIGEN_SPAN


def _stream(T, n, seed, offset=2.0):
    rng = np.random.default_rng(seed)
    scales = np.linspace(2.0, 0.1, n)
    B = np.linalg.qr(rng.standard_normal((n, n)))[0]
    return offset + (rng.standard_normal((T, n)) * scales) @ B.T


def _check(learner, rows, d, eta):
    """Against eigh of rows^T rows / d (rows: centered as the learner's
    statistic is) and np.var-like sums along the learner's components."""
    k = learner.n_components
    n = rows.shape[1]
    S = rows.T @ rows / d
    w = np.linalg.eigvalsh(S)[::-1]
    ev, ratio = learner.explained_variance_, learner.explained_variance_ratio_
    atol = 1e-9 * w[0] + 4 * np.finfo(float).eps * (math.log(n) / eta + w[0] * d) / d
    assert ev.shape == ratio.shape == (k,)
    assert_allclose(ev, w[:k], rtol=1e-9, atol=atol)
    # along the learner's own components (its eigenvectors of C)
    along = np.sum((rows @ learner.components_.T) ** 2, axis=0) / d
    assert_allclose(ev, along, rtol=1e-9, atol=atol)
    assert_allclose(ratio, w[:k] / np.trace(S), rtol=1e-9, atol=atol / np.trace(S))
    return w


@pytest.mark.parametrize("state", ["dense", "clustered"])
@pytest.mark.parametrize("eta", [0.5, 3.0])
def test_centered_is_the_sample_covariance_as_incremental_pca(state, eta):
    from sklearn.decomposition import IncrementalPCA

    X = _stream(300, 8, 0)
    pca = opf.CenteredOnlinePCA(3, eta=eta, state=state, random_state=0).fit(X)
    _check(pca, X - X.mean(axis=0), len(X) - 1, eta)
    # np.var (ddof=1) of the data along each component
    assert_allclose(pca.explained_variance_,
                    np.var(X @ pca.components_.T, axis=0, ddof=1), rtol=1e-9)
    # (all 8 components: IncrementalPCA truncated to 3 drops the rest of each
    # batch's spectrum, and is then only an approximation)
    ipca = IncrementalPCA(8).fit(X)
    assert_allclose(pca.explained_variance_, ipca.explained_variance_[:3], rtol=1e-9)
    assert_allclose(pca.explained_variance_ratio_, ipca.explained_variance_ratio_[:3],
                    rtol=1e-9)


@pytest.mark.parametrize("state", ["dense", "clustered"])
def test_uncentered_is_the_second_moment_about_the_fixed_center(state):
    X = _stream(200, 7, 1)
    m0 = np.linspace(-1.0, 1.0, 7)
    pca = opf.CenteredOnlinePCA(2, eta=1.5, centered=False, mean_init=m0, state=state,
                                random_state=0).fit(X)
    _check(pca, X - m0, len(X), 1.5)
    ftl = opf.FollowTheLeader(2, state=state).fit(X)
    _check(ftl, X, len(X), 1.0)
    assert_allclose(ftl.explained_variance_, np.mean((X @ ftl.components_.T) ** 2, axis=0),
                    rtol=1e-9)


@pytest.mark.parametrize("state", ["dense", "clustered"])
def test_follow_the_leader_centered_is_the_sample_covariance(state):
    X = _stream(250, 6, 2)
    ftl = opf.FollowTheLeader(2, centered=True, state=state).fit(X[:100])
    ftl.partial_fit(X[100:])
    _check(ftl, X - X.mean(axis=0), len(X) - 1, 1.0)


def test_a_learned_center_counts_its_phantom_rows():
    """center_lr_inv = c (an integer here): eq. (15)-(16) are the running mean
    and scatter of c rows at mean_init followed by the data."""
    X = _stream(120, 5, 3)
    m0 = np.full(5, 0.5)
    pca = opf.CenteredOnlinePCA(2, eta=1.0, center_lr_inv=3.0, mean_init=m0,
                                random_state=0).fit(X)
    aug = np.vstack([np.tile(m0, (3, 1)), X])
    _check(pca, aug - aug.mean(axis=0), len(aug) - 1, 1.0)


def test_the_clustered_state_at_512_features_and_more():
    """n = 600 (state="auto" keeps the capped structure): m = 40 explicit
    directions, the rest the cluster (variance 0)."""
    X = _stream(40, 600, 4)
    pca = opf.CenteredOnlinePCA(5, eta=0.2, random_state=0).fit(X)
    assert pca.cluster_multiplicity_ > 0
    _check(pca, X - X.mean(axis=0), len(X) - 1, 0.2)
    ftl = opf.FollowTheLeader(4).fit(X)
    assert ftl.cluster_multiplicity_ > 0
    _check(ftl, X, len(X), 1.0)
    # fewer rows than components: the components beyond them have variance 0
    few = opf.FollowTheLeader(4, state="clustered").fit(X[:2])
    ev = few.explained_variance_
    assert ev[2] == ev[3] == 0.0
    _check(few, X[:2], 2, 1.0)


def test_one_row_has_no_spread_and_unfitted_raises():
    pca = opf.CenteredOnlinePCA(2, random_state=0)
    with pytest.raises(opf.learners.NotFittedError):
        pca.explained_variance_
    pca.learn_one(np.array([1.0, 2.0, 3.0]))
    assert pca.explained_variance_.tolist() == [0.0, 0.0]
    assert pca.explained_variance_ratio_.tolist() == [0.0, 0.0]


def test_a_rate_changed_mid_stream_is_refused():
    X = _stream(50, 4, 5)
    pca = opf.CenteredOnlinePCA(1, eta=1.0, random_state=0).fit(X[:20])
    pca.explained_variance_
    pca.set_params(eta=2.0).partial_fit(X[20:])
    with pytest.raises(ValueError, match="changed mid-stream; refit"):
        pca.explained_variance_
    pca.fit(X)  # a reset starts a new statistic
    _check(pca, X - X.mean(axis=0), len(X) - 1, 2.0)
    resumed = pickle.loads(pickle.dumps(pca))
    assert_allclose(resumed.explained_variance_, pca.explained_variance_, rtol=0)


def test_exact_beyond_the_old_floor_and_the_remaining_floor_is_reported():
    """Issue 22 item 1: eta times the covariance's spread far above 2**20
    (the floor main kept) is exact now; only a spread beyond EIGEN_SPAN
    (2**60) floors the smallest variances, and a RuntimeWarning says so."""
    rng = np.random.default_rng(6)
    X = rng.standard_normal((2000, 4)) * [300.0, 200.0, 100.0, 1.0]
    ftl = opf.FollowTheLeader(1).fit(X)
    assert np.linalg.eigvalsh(X.T @ X)[-1] > 100 * 2.0 ** 20
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = ftl.explained_variance_
    assert_allclose(ev, np.linalg.eigvalsh(X.T @ X / len(X))[-1:], rtol=1e-9)
    # WK Alg. 6 floors A 2**60 below its largest entry (weights exp(-2**60)
    # are 0 either way) and says so; Follow the Leader has no exponential
    # weights and keeps C exact (issue 35 item 2)
    Y = rng.standard_normal((50, 3)) * [1e10, 1.0, 1.0]
    huge = opf.CenteredOnlinePCA(1, eta=1.0, centered=False, random_state=0).fit(Y)
    assert 1e20 > EIGEN_SPAN
    with pytest.warns(RuntimeWarning, match="reached 2\\*\\*60"):
        huge.explained_variance_
    leader = opf.FollowTheLeader(1).fit(Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = leader.explained_variance_
    assert_allclose(ev, np.linalg.eigvalsh(Y.T @ Y / len(Y))[-1:], rtol=1e-9)


@pytest.mark.parametrize("state", ["dense", "clustered"])
@pytest.mark.parametrize("centered", [True, False])
def test_auto_rate_reads_the_covariance_at_any_rate(state, centered):
    """eta="auto": the state is A = eta_t (K - C^t) with a level K that the
    rates decided; the trace kept by the compiled loop fixes it."""
    X = _stream(300, 8, 3)
    pca = opf.CenteredOnlinePCA(3, centered=centered, state=state,
                                random_state=0).fit(X)
    assert pca.eta == "auto" and 0 < pca.eta_ < np.inf
    rows = X - X.mean(axis=0) if centered else X
    _check(pca, rows, len(X) - 1 if centered else len(X), pca.eta_)
    # scale-free: c X has c**2 the variances
    big = opf.CenteredOnlinePCA(3, centered=centered, state=state,
                                random_state=0).fit(1e3 * X)
    assert_allclose(big.explained_variance_, 1e6 * pca.explained_variance_, rtol=1e-9)


@pytest.mark.parametrize("learner", [opf.OnlinePCA(1), opf.OnlineAdaptivePCA(1)])
def test_absent_where_the_learner_keeps_no_statistics(learner):
    learner.fit(_stream(20, 4, 7) / 10)
    for name in ("explained_variance_", "explained_variance_ratio_"):
        assert not hasattr(learner, name)
        with pytest.raises(AttributeError, match="keeps log W"):
            getattr(learner, name)
    for other in (opf.OnlineKernelPCA(1), opf.VarianceMinimizer()):
        assert not hasattr(other, "explained_variance_")
