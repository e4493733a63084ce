"""eta="adahedge": the AdaHedge rate learner alone, without the master that
eta="auto" runs over it (src/limit.h).  Against the NumPy oracle of the rate
learner (reference._auto_rate, eigh every trial; reference.OnlineKernelPCA),
bit for bit equal to eta="auto" where a learner has no master, scale-free,
the same numbers whatever the batch split, and switchable mid-stream."""

import numpy as np
import pytest

import onlinepca_fast as opf
from onlinepca_fast import reference
from onlinepca_fast.reference import _auto_rate as ref

from learner_cases import assert_split_learn_one_pickle_match
from test_auto_rate import _stream  # the same streams as eta="auto"'s tests

RTOL_ORACLE = 1e-9


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=RTOL_ORACLE,
                               atol=RTOL_ORACLE * np.abs(want).max())


def _no_master(learner):
    assert learner.master_gap_ == 0.0 and learner.limit_weight_ == 0.0
    if hasattr(type(learner), "leader_weight_"):
        assert learner.leader_weight_ == 0.0


# -- the rate learner alone, against its oracle -------------------------------------

@pytest.mark.parametrize("state", ["dense", "clustered"])
@pytest.mark.parametrize("shift", [False, True])
def test_online_pca_is_the_rate_learner(state, shift):
    X = _stream(shift=shift)
    pca = opf.OnlinePCA(3, eta="adahedge", state=state, random_state=0).fit(X)
    h, Delta, eta = ref.auto_meg(X, 3)
    _close(pca.expected_losses_, h)
    np.testing.assert_allclose(pca.mixability_gap_, Delta, rtol=RTOL_ORACLE)
    np.testing.assert_allclose(pca.eta_, eta, rtol=RTOL_ORACLE)
    _no_master(pca)
    # and eta="auto" is the master over it: a different learner on this stream
    auto = opf.OnlinePCA(3, state=state, random_state=0).fit(X)
    assert auto.master_gap_ > 0.0
    assert not np.array_equal(auto.expected_losses_, pca.expected_losses_)


@pytest.mark.parametrize("share, alpha", [("fixed", 1e-2), ("uniform", 1e-2), ("fixed", "auto")])
def test_mixing_keeps_the_adaptive_constant(share, alpha):
    """With mixing at a constant alpha the rate learner alone is auto's: D =
    d log(n/(d alpha)), the constant of the adaptive-regret bound (alpha =
    "auto": d log(n/d))."""
    X = _stream(shift=True)
    pca = opf.OnlinePCA(3, eta="adahedge", share=share, alpha=alpha, random_state=0).fit(X)
    h, Delta, eta = ref.auto_meg(X, 3, share=share, alpha=alpha, adaptive=True)
    _close(pca.expected_losses_, h)
    np.testing.assert_allclose(pca.mixability_gap_, Delta, rtol=RTOL_ORACLE)
    n, d = 8, 5
    D = d * np.log(n / d if alpha == "auto" else n / (d * alpha))
    np.testing.assert_allclose(pca.eta_ * pca.mixability_gap_, D, rtol=1e-12)
    auto = opf.OnlinePCA(3, share=share, alpha=alpha, random_state=0).fit(X)
    assert auto.eta_ == pca.eta_ and auto.mixability_gap_ == pca.mixability_gap_
    adaptive = opf.OnlineAdaptivePCA(3, eta="adahedge", alpha=alpha, random_state=0).fit(X)
    if share == "fixed":
        np.testing.assert_array_equal(adaptive.expected_losses_, pca.expected_losses_)


@pytest.mark.parametrize("centered", [True, False])
def test_centered_is_the_rate_learner(centered):
    X = _stream(shift=True) + 0.3
    pca = opf.CenteredOnlinePCA(3, eta="adahedge", centered=centered, random_state=0).fit(X)
    h, Delta, eta = ref.auto_cumulative(X, 3, centered=centered)
    _close(pca.expected_losses_, h)
    np.testing.assert_allclose(pca.mixability_gap_, Delta, rtol=RTOL_ORACLE)
    np.testing.assert_allclose(pca.eta_, eta, rtol=RTOL_ORACLE)
    _no_master(pca)


@pytest.mark.parametrize("matrix", [False, True])
def test_variance_minimizer_is_the_rate_learner(matrix):
    X = _stream(T=120, n=6)
    if matrix:
        X = 0.5 * (np.einsum("ti,tj->tij", X, X) + np.einsum("ti,tj->tij", X[::-1], X[::-1]))
    vm = opf.VarianceMinimizer(eta="adahedge", random_state=0).fit(X)
    h, Delta, eta = ref.auto_meg(X, 5)
    _close(vm.expected_losses_, h)
    np.testing.assert_allclose(vm.mixability_gap_, Delta, rtol=RTOL_ORACLE)
    np.testing.assert_allclose(vm.eta_, eta, rtol=RTOL_ORACLE)
    _no_master(vm)
    auto = opf.VarianceMinimizer(random_state=0).fit(X)
    assert auto.master_gap_ > 0.0


@pytest.mark.parametrize("budget", [None, 60])
def test_kernel_pca_is_the_rate_learner(budget):
    X = np.random.default_rng(1).standard_normal((160, 5))
    kw = dict(eta="adahedge", budget=budget, map_size=16, random_state=0)
    fast = opf.OnlineKernelPCA(3, **kw).fit(X)
    oracle = reference.OnlineKernelPCA(3, **kw).fit(X)
    for got, want in ((fast.expected_losses_, oracle.expected_losses_),
                      (fast.realized_losses_, oracle.realized_losses_)):
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(fast.eta_, oracle.eta_, rtol=1e-9)
    assert fast.master_gap_ == 0.0 and fast.limit_weight_ == 0.0
    if budget is None:  # the rate learner's losses that "auto"'s master weighs
        master = reference.OnlineKernelPCA(3, **dict(kw, eta="auto")).fit(X)
        np.testing.assert_allclose(oracle.expected_losses_, master.rate_learner_losses_,
                                   rtol=1e-12, atol=1e-14)


# -- the learners without a master: "adahedge" is "auto", bit for bit ----------------

NO_MASTER = {
    "Hedge": (lambda eta: opf.Hedge(eta=eta, random_state=0), "energies"),
    "Hedge-fixed": (lambda eta: opf.Hedge(eta=eta, share="fixed", alpha=1e-2,
                                          random_state=0), "energies"),
    "CappedHedge": (lambda eta: opf.CappedHedge(3, eta=eta, random_state=0), "energies"),
    "SimplexVarianceMinimizer": (lambda eta: opf.SimplexVarianceMinimizer(eta=eta), "rows"),
    "VarianceMinimizer-fixed": (lambda eta: opf.VarianceMinimizer(
        eta=eta, share="fixed", alpha=1e-2, random_state=0), "rows"),
}


@pytest.mark.parametrize("name", NO_MASTER)
def test_same_as_auto_without_a_master(name):
    make, data = NO_MASTER[name]
    X = _stream(shift=True)
    X = X ** 2 if data == "energies" else X
    a, b = make("adahedge").fit(X), make("auto").fit(X)
    np.testing.assert_array_equal(a.expected_losses_, b.expected_losses_)
    assert a.eta_ == b.eta_ and a.mixability_gap_ == b.mixability_gap_


# -- the properties every learner keeps ----------------------------------------------

SPLIT_CASES = {
    "OnlinePCA": lambda: opf.OnlinePCA(3, eta="adahedge", random_state=0),
    "OnlineAdaptivePCA-clustered": lambda: opf.OnlineAdaptivePCA(
        3, eta="adahedge", state="clustered", random_state=0),
    "CenteredOnlinePCA": lambda: opf.CenteredOnlinePCA(3, eta="adahedge", random_state=0),
}
SCALE_CASES = dict(SPLIT_CASES)
SPLIT_CASES["VarianceMinimizer"] = lambda: opf.VarianceMinimizer(eta="adahedge",
                                                                 random_state=0)


@pytest.mark.parametrize("make", SPLIT_CASES.values(), ids=list(SPLIT_CASES))
def test_batch_split_learn_one_pickle(make):
    assert_split_learn_one_pickle_match(make, _stream(shift=True), pickle_after=80)


@pytest.mark.parametrize("make", SCALE_CASES.values(), ids=list(SCALE_CASES))
def test_scale_free(make):
    """c X: the same rates and the losses times c**2; a power of two scales
    every operation exactly."""
    X = _stream(shift=True)
    base = make().fit(X)
    exact = make().fit(2.0 ** -20 * X)
    np.testing.assert_array_equal(exact.expected_losses_, 2.0 ** -40 * base.expected_losses_)
    for c in (1e-6, 1e6):
        scaled = make().fit(c * X)
        np.testing.assert_allclose(scaled.expected_losses_ / c ** 2, base.expected_losses_,
                                   rtol=1e-12, atol=1e-12 * base.expected_losses_.max())


def test_kernel_pca_scale_free():
    """A kernel c k (here: the linear kernel on sqrt(c) X) gives the losses
    times c and the rate over c (the same step eta_t k)."""
    X = np.random.default_rng(2).standard_normal((120, 6))
    base = opf.OnlineKernelPCA(2, kernel="linear", eta="adahedge", random_state=0).fit(X)
    exact = opf.OnlineKernelPCA(2, kernel="linear", eta="adahedge",
                                random_state=0).fit(2.0 ** -10 * X)
    np.testing.assert_allclose(exact.expected_losses_, 2.0 ** -20 * base.expected_losses_,
                               rtol=1e-12, atol=1e-12 * 2.0 ** -20 * base.expected_losses_.max())
    np.testing.assert_allclose(exact.eta_, 2.0 ** 20 * base.eta_, rtol=1e-12)


def test_switch_mid_stream():
    """eta set mid-stream applies at the next batch: "auto" -> "adahedge"
    drops the master, and the rate learner continues exactly (its
    trajectory does not depend on the master without mixing); back to
    "auto" starts a fresh master."""
    X = _stream(T=200, shift=True)
    pca = opf.OnlinePCA(3, random_state=0).fit(X[:100])
    assert pca.master_gap_ > 0.0
    pca.set_params(eta="adahedge").partial_fit(X[100:150])
    h, Delta, _ = ref.auto_meg(X[:150], 3)
    _close(pca.expected_losses_[100:], h[100:])
    np.testing.assert_allclose(pca.mixability_gap_, Delta, rtol=RTOL_ORACLE)
    _no_master(pca)
    pca.set_params(eta="auto").partial_fit(X[150:])
    assert pca.master_gap_ > 0.0  # a master again (0 without one)
    assert np.all(np.isfinite(pca.expected_losses_))
    # fresh: over the rows since the switch, it weighs the rate learner's
    # losses (those of the oracle, continuing) against its limit's and its
    # leader's, both started at the switch
    h = ref.auto_meg(X, 3, adaptive=True)[0][150:]
    hb, hf = ref.limit_meg(X[150:], 3), ref.sketch_leader(X[150:], 3, ref.leader_ell(8, 3))
    _close(pca.expected_losses_[150:], ref.master_losses(h, hb, hf)[0])


def test_adaptive_switch_keeps_the_rate():
    """OnlineAdaptivePCA: "auto" -> "adahedge" keeps its rate learner (the
    same constant D = d log(n/(d alpha)): the rate goes on, no jump)."""
    X = _stream(T=200, shift=True)
    a = opf.OnlineAdaptivePCA(3, alpha=1e-2, random_state=0).fit(X[:100])
    a.set_params(eta="adahedge").partial_fit(X[100:])
    b = opf.OnlineAdaptivePCA(3, eta="adahedge", alpha=1e-2, random_state=0).fit(X)
    np.testing.assert_array_equal(a.expected_losses_[100:], b.expected_losses_[100:])
    assert a.eta_ == b.eta_ and a.mixability_gap_ == b.mixability_gap_


@pytest.mark.parametrize("bad", ["AdaHedge", "adahedge ", "ada"])
def test_bad_string_changes_nothing(bad):
    X = _stream()
    pca = opf.OnlinePCA(3, eta="adahedge", random_state=0).fit(X[:80])
    before = pca.expected_losses_.copy(), pca.mixability_gap_, pca.eta_
    pca.set_params(eta=bad)
    with pytest.raises(TypeError, match=r'eta must be a real number, "auto" or "adahedge"'):
        pca.partial_fit(X[80:])
    pca.set_params(eta="adahedge")
    np.testing.assert_array_equal(pca.expected_losses_, before[0])
    assert (pca.mixability_gap_, pca.eta_) == before[1:]
    pca.partial_fit(X[80:])
    _close(pca.expected_losses_, ref.auto_meg(X, 3)[0])
