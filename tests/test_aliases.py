"""IncrementalPCA's attribute names on the learners (issue 38, item 5).

The oracle is scikit-learn's exact ``PCA`` (a full SVD) and
``IncrementalPCA`` on the same rows, and ``numpy.linalg.eigh`` of the
uncentered scatter ``X^T X``.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.decomposition import PCA, IncrementalPCA

import onlinepca_fast as opf


def _data(T=300, n=6, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((T, n)) * np.linspace(3.0, 0.2, n) + 1.0


@pytest.mark.parametrize("make", [
    lambda: opf.FollowTheLeader(2, centered=True),
    lambda: opf.CenteredOnlinePCA(2, eta=0.01, random_state=0),
    lambda: opf.CenteredOnlinePCA(2, random_state=0),               # eta="auto"
    lambda: opf.CenteredOnlinePCA(2, eta=0.01, state="clustered", random_state=0),
])
def test_centered_learners_match_pca(make):
    X = _data()
    learner, pca = make().fit(X), PCA(2).fit(X)
    assert_allclose(learner.singular_values_, pca.singular_values_, rtol=1e-9)
    assert_allclose(learner.noise_variance_, pca.noise_variance_, rtol=1e-9)
    assert_allclose(learner.explained_variance_, pca.explained_variance_, rtol=1e-9)
    ipca = IncrementalPCA(2, batch_size=50).fit(X)
    assert learner.n_samples_seen_ == ipca.n_samples_seen_ == learner.n_trials_ == 300
    assert learner.n_components_ == ipca.n_components_ == 2


def test_uncentered_learners_use_the_scatter_about_zero():
    X = _data(T=40, n=5)
    values = np.linalg.eigvalsh(X.T @ X)[::-1]
    for learner in (opf.FollowTheLeader(2).fit(X),
                    opf.CenteredOnlinePCA(2, eta=0.01, centered=False, random_state=0).fit(X)):
        assert_allclose(learner.singular_values_, np.sqrt(values[:2]), rtol=1e-9)
        assert_allclose(learner.noise_variance_, values[2:].sum() / 40 / 3, rtol=1e-9)


def test_few_rows_and_a_single_row():
    X = _data(T=3, n=6)
    learner = opf.FollowTheLeader(2, centered=True).fit(X)
    pca = PCA(2).fit(X)
    assert_allclose(learner.singular_values_, pca.singular_values_, rtol=1e-9)
    # 3 rows span 2 centered directions: all 4 others have variance 0 (PCA
    # averages over min(T, n) - k = 1 direction instead)
    assert_allclose(learner.noise_variance_, 0.0, atol=1e-12)
    one = opf.FollowTheLeader(2, centered=True).fit(X[:1])
    assert one.noise_variance_ == 0.0 and np.all(one.singular_values_ == 0.0)


@pytest.mark.parametrize("cls", [opf.OnlinePCA, opf.OnlineAdaptivePCA])
def test_the_learners_of_log_w_have_no_second_moments(cls):
    learner = cls(2, random_state=0).fit(_data(T=20))
    for name in ("singular_values_", "noise_variance_", "explained_variance_"):
        assert not hasattr(learner, name)
        with pytest.raises(AttributeError, match=f"{cls.__name__} has no {name}: it keeps log W"):
            getattr(learner, name)
    assert learner.n_components_ == 2 and learner.n_samples_seen_ == 20


def test_every_learner_has_n_samples_seen():
    rng = np.random.default_rng(1)
    for learner, X in [(opf.Hedge(), rng.random((7, 4))), (opf.CappedHedge(2), rng.random((7, 4))),
                       (opf.OnlineKernelPCA(2, random_state=0), _data(T=7)),
                       (opf.VarianceMinimizer(), _data(T=7) / 20),
                       (opf.SimplexVarianceMinimizer(), _data(T=7) / 20)]:
        assert learner.fit(X).n_samples_seen_ == learner.n_trials_ == 7
    assert opf.OnlineKernelPCA(3).fit(_data(T=7)).n_components_ == 3
    with pytest.raises(AttributeError):
        opf.OnlinePCA(2).n_components_  # not fitted (NotFittedError)
