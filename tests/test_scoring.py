"""The PCA learners' score(X) and metrics.compression_scorer (issue 38, item 4).

``score(X)`` is minus the mean compression loss of X under the learner's
current projection; the oracles compute that loss in NumPy from an
eigensystem found independently: ``numpy.linalg.eigh`` of the data's
(centered) scatter for Follow the Leader and for kernel PCA with a linear
kernel (the feature space is the input space), of the kernel matrix for an
rbf kernel, and the NumPy reference learners (``eigh`` every trial) for the
randomized ones.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import onlinepca_fast as opf
from onlinepca_fast import reference
from onlinepca_fast.metrics import compression_scorer


def _data(T=240, n=7, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T, n)) * np.linspace(3.0, 0.2, n) + 0.5
    return X / np.sqrt(n)


def _minus_mean_loss(X, components, mean):
    """The oracle: -mean ||x - m - P (x - m)||^2 with P from orthonormal rows."""
    Y = X - mean
    P = components.T @ components
    return -np.mean(np.sum((Y - Y @ P) ** 2, axis=1))


def _top(S, k):
    """The k leading eigenvectors of the symmetric S, as rows."""
    _, V = np.linalg.eigh(S)
    return V[:, ::-1][:, :k].T


@pytest.mark.parametrize("centered", [False, True])
def test_follow_the_leader_scores_the_top_subspace_of_the_data(centered):
    X, held = _data(), _data(seed=1)
    learner = opf.FollowTheLeader(2, centered=centered).fit(X)
    mean = X.mean(axis=0) if centered else np.zeros(X.shape[1])
    components = _top((X - mean).T @ (X - mean), 2)
    assert_allclose(learner.score(held), _minus_mean_loss(held, components, mean),
                    rtol=1e-10)


@pytest.mark.parametrize("fast, ref", [
    (lambda: opf.OnlinePCA(2, eta=1.0, random_state=3),
     lambda: reference.OnlinePCA(2, eta=1.0, random_state=3)),
    (lambda: opf.OnlinePCA(2, eta=1.0, state="clustered", random_state=3),
     lambda: reference.OnlinePCA(2, eta=1.0, random_state=3)),
    (lambda: opf.OnlineAdaptivePCA(2, eta=2.0, alpha=0.01, random_state=4),
     lambda: reference.OnlineAdaptivePCA(2, eta=2.0, alpha=0.01, random_state=4)),
    (lambda: opf.CenteredOnlinePCA(2, eta=1.0, center_lr_inv=2.0, random_state=5),
     lambda: reference.CenteredOnlinePCA(2, eta=1.0, center_lr_inv=2.0, random_state=5)),
])
def test_the_randomized_learners_score_their_components(fast, ref):
    X, held = _data(T=120), _data(seed=2)
    learner, oracle = fast().fit(X), ref().fit(X)
    expected = _minus_mean_loss(held, oracle.components_, oracle.mean_)
    assert_allclose(learner.score(held), expected, rtol=1e-8)
    assert learner.score(held) <= 0.0


def test_kernel_pca_linear_scores_the_top_subspace_of_the_instances():
    X, held = _data(T=60), _data(seed=3)
    learner = opf.OnlineKernelPCA(3, kernel="linear", random_state=0).fit(X)
    components = _top(X.T @ X, 3)  # the feature space is the input space
    assert_allclose(learner.score(held), _minus_mean_loss(held, components, 0.0),
                    rtol=1e-9)


def test_kernel_pca_rbf_scores_the_feature_space_loss():
    X, held = _data(T=50), _data(T=30, seed=4)
    learner = opf.OnlineKernelPCA(2, kernel="rbf", gamma=0.7, random_state=0).fit(X)
    K = reference.gram(X, X, "rbf", 3, 0.7, 1.0)
    lam, U = np.linalg.eigh(K)
    lam, U = lam[::-1][:2], U[:, ::-1][:, :2]
    Y = reference.gram(held, X, "rbf", 3, 0.7, 1.0)
    # ||phi(x)||^2 = k(x, x) = 1; its projection on the directions X^T u_i / sqrt(lam_i)
    losses = 1.0 - np.sum((Y @ U) ** 2 / lam, axis=1)
    assert_allclose(learner.score(held), -np.mean(losses), rtol=1e-9)
    callable_kernel = opf.OnlineKernelPCA(
        2, kernel=lambda A, B: reference.gram(A, B, "rbf", 3, 0.7, 1.0),
        random_state=0).fit(X)
    assert_allclose(callable_kernel.score(held), -np.mean(losses), rtol=1e-9)


@pytest.mark.parametrize("make", [
    lambda: opf.OnlinePCA(2, random_state=0), lambda: opf.CenteredOnlinePCA(2, random_state=0),
    lambda: opf.FollowTheLeader(2, centered=True),
    lambda: opf.OnlineKernelPCA(2, kernel="poly", degree=2, random_state=0),
])
def test_sparse_scores_as_dense_and_nothing_changes(make):
    X = _data(T=80)
    X[np.abs(X) < 0.3] = 0.0
    learner = make().fit(X)
    before = pickle.dumps(learner)
    dense = learner.score(X)
    assert learner.score(sp.csr_matrix(X)) == dense
    assert compression_scorer(learner, X) == dense
    assert pickle.dumps(learner) == before


def test_grid_search_needs_no_scorer():
    """The issue's case: GridSearchCV over a learner raised TypeError (no
    score method).  Its best score is the mean over the folds of the
    held-out scores, computed here by hand."""
    X = _data(T=300, seed=5)
    grid = {"eta": [0.05, 1.0, "auto"]}
    search = GridSearchCV(opf.OnlinePCA(2, random_state=0), grid, cv=3).fit(X)
    by_hand = []
    for eta in grid["eta"]:
        folds = [opf.OnlinePCA(2, eta=eta, random_state=0).fit(X[train]).score(X[test])
                 for train, test in KFold(3).split(X)]
        by_hand.append(np.mean(folds))
    assert_allclose(search.cv_results_["mean_test_score"], by_hand, rtol=1e-12)
    assert search.best_params_ == {"eta": grid["eta"][int(np.argmax(by_hand))]}
    named = GridSearchCV(opf.OnlinePCA(2, random_state=0), grid, cv=3,
                         scoring=compression_scorer).fit(X)
    assert_allclose(named.cv_results_["mean_test_score"], by_hand, rtol=1e-12)


def test_a_pipeline_scores_its_last_step_on_the_transformed_rows():
    X, held = _data(T=200, seed=6), _data(T=50, seed=7)
    pipe = make_pipeline(StandardScaler(), opf.CenteredOnlinePCA(2, random_state=0)).fit(X)
    scaled = pipe[0].transform(held)
    assert compression_scorer(pipe, held) == pipe[-1].score(scaled)
    scores = cross_val_score(make_pipeline(StandardScaler(), opf.FollowTheLeader(2)), X,
                             cv=2, scoring=compression_scorer)
    assert scores.shape == (2,) and np.all(scores <= 0)


def test_bad_input():
    X = _data(T=30)
    with pytest.raises(NotFittedError):
        opf.OnlinePCA(2).score(X)
    with pytest.raises(NotFittedError):
        opf.OnlineKernelPCA(2).score(X)
    learner = opf.OnlinePCA(2, random_state=0).fit(X)
    with pytest.raises(ValueError, match="X has 3 features, but OnlinePCA is expecting 7"):
        learner.score(X[:, :3])
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        learner.score(np.full((2, 7), np.nan))
    with pytest.raises(ValueError, match="X has no rows"):
        learner.score(X[:0])
    with pytest.raises(ValueError, match="X has no rows"):
        opf.OnlineKernelPCA(2, random_state=0).fit(X).score(X[:0])
