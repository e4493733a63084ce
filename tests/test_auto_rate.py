"""eta="auto" (AdaHedge rate, src/adaptive_rate.c): scale invariance, the
NumPy oracle, the stated regret bounds, batch split / pickling, and that a
numeric eta is untouched."""

import numpy as np
import pytest

import onlinepca_fast as opf
from onlinepca_fast import metrics
from onlinepca_fast.reference import _auto_rate as ref

from learner_cases import assert_split_learn_one_pickle_match

RTOL_ORACLE = 1e-9
RTOL_SCALE = 1e-12


def _stream(T=160, n=8, seed=0, shift=False):
    rng = np.random.default_rng(seed)
    scales = np.linspace(0.2, 1.0, n)
    X = rng.normal(size=(T, n)) * scales
    if shift:  # the dominant subspace changes every 40 trials
        for s in range(0, T, 40):
            Q = np.linalg.qr(rng.normal(size=(n, n)))[0]
            X[s:s + 40] = X[s:s + 40] @ Q
    return X / np.linalg.norm(X, axis=1).max()


def _adversarial(T=160, n=8):
    """Instances along the direction of W's largest eigenvalue would need W;
    this cycles the basis vectors with norms 1, 1/2, 1/3 (the loss of a
    fixed subspace is then nearly that of the learner's best guess)."""
    X = np.zeros((T, n))
    for t in range(T):
        X[t, t % n] = 1.0 / (1 + (t // n) % 3)
    return X


# (name, factory, base data, loss exponent in the scale c)
PCA_CASES = {
    "OnlinePCA-dense": lambda: opf.OnlinePCA(3, state="dense", random_state=0),
    "OnlinePCA-clustered": lambda: opf.OnlinePCA(3, state="clustered", random_state=0),
    "OnlinePCA-uniform": lambda: opf.OnlinePCA(3, share="uniform", alpha=1e-2,
                                               random_state=0),
    "OnlineAdaptivePCA": lambda: opf.OnlineAdaptivePCA(3, random_state=0),
    "OnlineAdaptivePCA-clustered": lambda: opf.OnlineAdaptivePCA(3, state="clustered",
                                                                 random_state=0),
    "CenteredOnlinePCA": lambda: opf.CenteredOnlinePCA(3, random_state=0),
    "CenteredOnlinePCA-clustered": lambda: opf.CenteredOnlinePCA(3, state="clustered",
                                                                 random_state=0),
    "CenteredOnlinePCA-uncentered": lambda: opf.CenteredOnlinePCA(3, centered=False,
                                                                  random_state=0),
}


def _scaled_runs(make, X, cs, power):
    out = []
    for c in cs:
        learner = make().fit(c * X)
        out.append((c, learner, learner.expected_losses_ / c ** power))
    return out


@pytest.mark.parametrize("name", sorted(PCA_CASES))
def test_scale_invariance_pca(name):
    X = _stream(shift=True) * 3.0
    runs = _scaled_runs(PCA_CASES[name], X, (1e-6, 1e-3, 1.0, 1e3, 1e6), 2)
    _, ref_learner, ref_losses = runs[2]
    P = ref_learner.components_.T @ ref_learner.components_
    for c, learner, losses in runs:
        np.testing.assert_allclose(losses, ref_losses, rtol=RTOL_SCALE, atol=0)
        np.testing.assert_allclose(learner.eta_ * c ** 2, ref_learner.eta_, rtol=RTOL_SCALE)
        np.testing.assert_allclose(learner.mixability_gap_ / c ** 2,
                                   ref_learner.mixability_gap_, rtol=RTOL_SCALE)
        Pc = learner.components_.T @ learner.components_
        np.testing.assert_allclose(Pc, P, rtol=0, atol=1e-10)
        if hasattr(learner, "leader_weight_"):  # the master's weights: scale-free
            np.testing.assert_allclose([learner.limit_weight_, learner.leader_weight_],
                                       [ref_learner.limit_weight_, ref_learner.leader_weight_],
                                       rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("name", ["Hedge", "CappedHedge", "VarianceMinimizer",
                                  "VarianceMinimizer-matrix", "SimplexVarianceMinimizer"])
def test_scale_invariance_others(name):
    """Learners whose inputs are bounded (losses in [0, 1], norms <= 1):
    base data of size 1e-3, scaled by 1e-3, 1 and 1e3; each loss to 1e-12
    of the largest (VarianceMinimizer's master plays Follow the Leader, whose
    losses reach 1e-7 of the largest, each within rounding of its own
    size)."""
    rng = np.random.default_rng(2)
    if name in ("Hedge", "CappedHedge"):
        make = {"Hedge": lambda: opf.Hedge(random_state=0),
                "CappedHedge": lambda: opf.CappedHedge(2, random_state=0)}[name]
        X, power = rng.random((150, 6)) * 1e-3, 1
    else:
        X = _stream(n=6, seed=3) * 1e-3
        if name == "VarianceMinimizer-matrix":
            X = np.einsum("ti,tj->tij", X, X)
        make = (opf.SimplexVarianceMinimizer if name == "SimplexVarianceMinimizer"
                else lambda: opf.VarianceMinimizer(random_state=0))
        power = 1 if name == "VarianceMinimizer-matrix" else 2  # C is linear in c
    runs = _scaled_runs(make, X, (1e-3, 1.0, 1e3), power)
    for c, learner, losses in runs:
        np.testing.assert_allclose(losses, runs[1][2], rtol=0,
                                   atol=RTOL_SCALE * runs[1][2].max())
        np.testing.assert_allclose(learner.eta_ * c ** power, runs[1][1].eta_,
                                   rtol=RTOL_SCALE)


def _check_oracle(learner, oracle):
    losses, Delta, eta = oracle
    np.testing.assert_allclose(learner.expected_losses_, losses, rtol=RTOL_ORACLE, atol=0)
    np.testing.assert_allclose(learner.mixability_gap_, Delta, rtol=RTOL_ORACLE)
    np.testing.assert_allclose(learner.eta_, eta, rtol=RTOL_ORACLE)


@pytest.mark.parametrize("state", ["dense", "clustered"])
@pytest.mark.parametrize("share,alpha", [(None, 0.0), ("fixed", 1e-3), ("uniform", 1e-2)])
@pytest.mark.parametrize("shift", [False, True])
def test_oracle_online_pca(state, share, alpha, shift):
    X = _stream(shift=shift)
    learner = opf.OnlinePCA(3, share=share, alpha=alpha, state=state, random_state=0).fit(X)
    losses, Delta, eta, weight = ref.auto_pca(X, 3, share, alpha)
    _check_oracle(learner, (losses, Delta, eta))
    np.testing.assert_allclose(learner.limit_weight_, weight, rtol=RTOL_ORACLE, atol=1e-12)


@pytest.mark.parametrize("state", ["dense", "clustered"])
@pytest.mark.parametrize("centered", [True, False])
def test_oracle_centered(state, centered):
    X = _stream(shift=True) + 0.3
    learner = opf.CenteredOnlinePCA(2, centered=centered, state=state, random_state=0).fit(X)
    losses, Delta, eta, weight = ref.auto_centered(X, 2, centered)
    _check_oracle(learner, (losses, Delta, eta))
    np.testing.assert_allclose(learner.limit_weight_, weight, rtol=RTOL_ORACLE, atol=1e-12)
    np.testing.assert_allclose(learner.leader_weight_, ref.auto_centered.master_weights[2],
                               rtol=RTOL_ORACLE, atol=1e-12)


def test_oracle_centered_lr_inv():
    X = _stream(seed=4) + 0.5
    m0 = np.full(8, 0.2)
    learner = opf.CenteredOnlinePCA(2, center_lr_inv=3.0, mean_init=m0, random_state=0).fit(X)
    _check_oracle(learner, ref.auto_centered(X, 2, True, 3.0, m0)[:3])


def _low_rank(T=200, n=7, r=3, seed=1):
    """Rows in an r-dimensional subspace: Follow the Leader's smallest
    eigenvalue is a tie group of n - r (the directions no row touches)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, r)) @ rng.normal(size=(r, n))
    return X / np.linalg.norm(X, axis=1).max()


@pytest.mark.parametrize("data", ["vectors", "matrices", "low rank"])
def test_oracle_variance_minimizer(data):
    """eta="auto" without mixing: the master over the AdaHedge learner and
    Follow the Leader of its state, against the oracle's eigh of C^{t-1}
    every trial (each loss to 1e-9 of the largest: Follow the Leader's
    smallest energies are far below it)."""
    X = _low_rank() if data == "low rank" else _stream(n=6, seed=5)
    if data == "matrices":
        X = 0.5 * np.einsum("ti,tj->tij", X, X)
    learner = opf.VarianceMinimizer(random_state=0).fit(X)
    losses, Delta, eta, master = ref.auto_variance(X)
    np.testing.assert_allclose(learner.expected_losses_, losses, rtol=0,
                               atol=RTOL_ORACLE * losses.max())
    np.testing.assert_allclose([learner.mixability_gap_, learner.eta_], [Delta, eta],
                               rtol=RTOL_ORACLE)
    np.testing.assert_allclose([learner.limit_weight_, learner.master_gap_],
                               [1.0 - master.weight, master.gap], rtol=RTOL_ORACLE,
                               atol=1e-12)


@pytest.mark.parametrize("block", [4, 300, 2000])
@pytest.mark.parametrize("c", [1.0, 1e-3, 0.7])
def test_variance_minimizer_leader_ties_a_multiple_of_the_identity(c, block):
    """One-hot rows in blocks, one axis after the other, make C^{t-1} =
    (block / 4) I before trial 3 block: Follow the Leader's group is then
    every direction (loss |x|^2 / 3).  The state's log-weights tie there
    only to their rounding, which grows with the rows (1 ulp after 12,
    2.5e-12 after 900, 6e-11 after 6000), and 1e-9 of that spread split
    them by it: the group was one or two directions and the learner's
    loss 5-21% of the largest off the oracle and between X and c X.  The
    group also takes what lies within 1e-12 eta_t tr C^{t-1} or 1e-12 of
    the largest |log-weight| (the oracle: within 1e-12 tr C)."""
    X = np.vstack([np.repeat(np.eye(3)[[i]], block, axis=0) for i in range(3)]
                  + [np.eye(3)[[0, 1, 2, 0, 1, 2]]]) * 0.5
    t = 3 * block
    assert np.array_equal(X[:t].T @ X[:t], block / 4 * np.eye(3))
    losses = ref.auto_variance(X)[0]
    assert ref.leader_variance(X)[t] == pytest.approx(0.25 / 3, rel=1e-12)
    learner = opf.VarianceMinimizer(random_state=0)
    if block == 4:
        for x in c * X:
            learner.learn_one(x)
    else:
        learner.fit(c * X)
    np.testing.assert_allclose(learner.expected_losses_ / c ** 2, losses, rtol=0,
                               atol=1e-12 * losses.max())


def test_variance_minimizer_master_bound_and_leader():
    """The master's guarantee, L <= min(L_A, L_F) + 2 Delta^M, with the two
    learners' losses from the oracle; the leader's draw is the smallest
    variance direction of the data once the master follows it; with mixing
    there is no master (the fixed-share learner is not the leader's FTRL)."""
    X = _stream(T=400, n=6, seed=7) * np.array([1.0, 0.8, 0.6, 0.4, 0.2, 0.01])
    learner = opf.VarianceMinimizer(random_state=0).fit(X)
    la = ref.auto_meg(X, 5)[0].sum()
    lf = ref.leader_variance(X).sum()
    total = learner.expected_losses_.sum()
    assert total <= min(la, lf) + 2 * learner.master_gap_ * (1 + 1e-12)
    assert lf < la  # the leader is the better learner here, and the master knows it
    assert learner.limit_weight_ > 0.99
    smallest = np.linalg.eigh(X.T @ X)[1][:, 0]
    hits = [abs(learner.sample_direction(seed) @ smallest) > 0.999 for seed in range(20)]
    assert sum(hits) >= 18
    mixed = opf.VarianceMinimizer(share="fixed", alpha=1e-3, random_state=0).fit(X)
    assert mixed.limit_weight_ == 0.0 and mixed.master_gap_ == 0.0
    _check_oracle(mixed, ref.auto_meg(X, 5, "fixed", 1e-3))


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("share,alpha", [(None, 0.0), ("fixed", 1e-2), ("uniform", 1e-2)])
def test_oracle_experts(k, share, alpha):
    L = np.random.default_rng(6).random((200, 6))
    learner = opf.CappedHedge(k, share=share, alpha=alpha, random_state=0).fit(L)
    _check_oracle(learner, ref.auto_experts(L, k, share, alpha))
    if k == 1 and share is None:
        _check_oracle(opf.Hedge(random_state=0).fit(L), ref.auto_experts(L, 5))


@pytest.mark.parametrize("alpha", [0.0, 1e-2])
def test_oracle_simplex(alpha):
    X = _stream(n=6, seed=7)
    learner = opf.SimplexVarianceMinimizer(alpha=alpha).fit(X)
    _check_oracle(learner, ref.auto_simplex(X, alpha))


@pytest.mark.parametrize("matrices", [False, True])
def test_simplex_rounding_is_no_gradient(matrices):
    """Rows orthogonal to the uniform portfolio (demeaned across the
    features): the uniform y has loss 0 on each, and g = C y is rounding.
    The first such residue was the first gap, eta = log n / delta ~ 1e17
    made it a full step, and the default lost 0.053 (0.056 for 0.7 X)
    where eta = 1 loses 1.6e-32.  An entry within n eps (|C| y)_i is now
    0: the default keeps y uniform, loses nothing, and agrees with the
    oracle and with c X."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 10))
    X -= X.mean(axis=1, keepdims=True)
    X /= np.linalg.norm(X, axis=1).max()
    if matrices:
        X = np.einsum("ti,tj->tij", X, X)
    fixed = opf.SimplexVarianceMinimizer(eta=1.0).fit(X).expected_losses_.sum()
    for c in (1.0, 0.7, 1e-3):
        learner = opf.SimplexVarianceMinimizer().fit(c * c * X if matrices else c * X)
        assert learner.expected_losses_.sum() <= abs(fixed) * c ** 2
        np.testing.assert_allclose(learner.weights_, np.full(10, 0.1), rtol=1e-12)
    _check_oracle(opf.SimplexVarianceMinimizer().fit(X), ref.auto_simplex(X))


def test_uncapped_hedge_is_adahedge():
    """Uncapped Hedge with eta="auto" is AdaHedge: w_t ~ exp(-eta_t L_{t-1})."""
    L = np.random.default_rng(8).random((100, 5))
    h = opf.Hedge(random_state=0)
    Delta, cum = 0.0, np.zeros(5)
    for t, loss in enumerate(L):
        eta = np.log(5) / Delta if Delta > 0 else np.inf
        if np.isfinite(eta):
            w = np.exp(-eta * (cum - cum.min()))
            w /= w.sum()
        else:
            w = np.full(5, 0.2)  # every loss so far equal: the leaders tie
        np.testing.assert_allclose(h.weights_ if t else w, w, rtol=1e-9)
        mix = (-np.log(w @ np.exp(-eta * loss)) / eta if np.isfinite(eta)
               else loss.min())
        Delta += w @ loss - mix
        cum += loss
        h.learn_one(loss)
    np.testing.assert_allclose(h.mixability_gap_, Delta, rtol=1e-9)


# -- the stated regret bounds -------------------------------------------------------
def _adahedge_bound(D, ranges):
    """2 Delta_T <= 2 sqrt(D sum s_t^2 / 4) + (4 D / 3 + 2) max s_t (docs)."""
    return 2 * np.sqrt(D * np.sum(ranges ** 2) / 4) + (4 * D / 3 + 2) * ranges.max()


STREAMS = {"adversarial": _adversarial, "shifting": lambda: _stream(shift=True),
           "stationary": _stream}


@pytest.mark.parametrize("stream", sorted(STREAMS))
@pytest.mark.parametrize("make,alpha", [
    (lambda: opf.OnlinePCA(3, random_state=0), 0.0),
    (lambda: opf.OnlinePCA(3, state="clustered", random_state=0), 0.0),
    (lambda: opf.OnlineAdaptivePCA(3, alpha=1e-3, random_state=0), 1e-3),
    (lambda: opf.CenteredOnlinePCA(3, centered=False, random_state=0), 0.0),
])
def test_regret_bound_pca(stream, make, alpha):
    """The bounds of docs/adaptive_rates.md, at every checked prefix.  The
    cumulative learner: R_T <= 2 Delta_T.  OnlinePCA / OnlineAdaptivePCA:
    the master's loss is at most that of its rate learner plus 2 Delta^M
    (AdaHedge over three learners, D = log 3),
    whose regret is at most Delta_T (1 + (log(n/d) + T log(1/(1-alpha))) /
    log(n/(d alpha))) with D = d log(n/(d alpha)) when mixing (else 2
    Delta_T); both gaps within AdaHedge's worst-case bound."""
    X = STREAMS[stream]()
    n, k = X.shape[1], 3
    D = np.log(n / (n - k))
    Da = np.log(n / ((n - k) * alpha)) if alpha else D  # the rate learner's constant
    learner, done = make(), 0
    master = hasattr(learner, "leader_weight_")  # all three: the master over A, B, F
    for T in (20, 60, 100, X.shape[0]):  # every prefix checked at these points
        learner.partial_fit(X[done:T])
        done = T
        regret = learner.expected_losses_.sum() - metrics.best_subspace_loss(X[:T], k)
        Delta = learner.mixability_gap_
        factor = 1 + (D + T * np.log1p(alpha / (1 - alpha))) / Da
        sq = np.einsum("ij,ij->i", X[:T], X[:T])
        if master:
            DM = learner.master_gap_
            assert regret <= (factor * Delta + 2 * DM) * (1 + 1e-12)
            assert 2 * DM <= _adahedge_bound(np.log(3), sq) * (1 + 1e-12)
        else:
            assert regret <= factor * Delta * (1 + 1e-12)
        assert 2 * Delta <= _adahedge_bound(Da, (n - k) * sq) * (1 + 1e-12)


@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("kind", ["random", "switching"])
def test_regret_bound_experts(k, kind):
    rng = np.random.default_rng(9)
    T, n = 300, 6
    if kind == "random":
        L = rng.random((T, n))
    else:  # the best experts change every 50 trials
        L = np.ones((T, n))
        for s in range(0, T, 50):
            L[s:s + 50, rng.choice(n, n - k, replace=False)] = 0.0
    learner = opf.CappedHedge(k, random_state=0).fit(L)
    d = n - k
    best = np.sort(L.sum(axis=0))[:d].sum()
    regret = learner.expected_losses_.sum() - best
    D = np.log(n / d)
    assert regret <= 2 * learner.mixability_gap_ * (1 + 1e-12)
    assert 2 * learner.mixability_gap_ <= _adahedge_bound(D, np.full(T, float(d)))


def test_regret_bound_variance_minimizer():
    X = _stream(n=6, seed=10, shift=True)
    learner = opf.VarianceMinimizer(random_state=0).fit(X)
    C = X.T @ X
    best = np.linalg.eigvalsh(C)[0]  # min over unit u of u^T C u
    assert learner.expected_losses_.sum() - best <= 2 * learner.mixability_gap_ * (1 + 1e-12)


def test_regret_bound_simplex():
    """Quadratic loss, linearised: R_T <= 4 Delta_T (docs)."""
    from scipy.optimize import minimize
    X = _stream(n=5, seed=11, shift=True)
    learner = opf.SimplexVarianceMinimizer().fit(X)
    C = X.T @ X
    res = minimize(lambda v: (np.exp(v) / np.exp(v).sum()) @ C @ (np.exp(v) / np.exp(v).sum()),
                   np.zeros(5), method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-14,
                                                               "maxiter": 20000})
    assert learner.expected_losses_.sum() - res.fun <= 4 * learner.mixability_gap_


# -- state: batch split, learn_one, pickle; numeric eta untouched ----------------------
@pytest.mark.parametrize("make", [
    lambda: opf.OnlinePCA(3, random_state=1),
    lambda: opf.OnlinePCA(3, state="clustered", random_state=1),
    lambda: opf.OnlineAdaptivePCA(3, random_state=1),
    lambda: opf.CenteredOnlinePCA(3, random_state=1),
    lambda: opf.CenteredOnlinePCA(3, state="clustered", random_state=1),
    lambda: opf.VarianceMinimizer(random_state=1),
])
def test_batch_split_learn_one_pickle(make):
    assert_split_learn_one_pickle_match(make, _stream(shift=True), pickle_after=80)


def test_first_trials_follow_the_leader():
    """While every gap is 0 (zero rows) the rate is infinite and W = I/n;
    the first nonzero row sets a finite rate and the state stays finite."""
    X = np.zeros((5, 6))
    pca = opf.OnlinePCA(2, random_state=0).fit(X)
    assert pca.eta_ == np.inf and pca.mixability_gap_ == 0.0
    np.testing.assert_allclose(pca.density_, np.eye(6) / 6, rtol=1e-12)
    pca.partial_fit(np.array([[1e-140, 0, 0, 0, 0, 0], [0, 1e140, 0, 0, 0, 0]]))
    assert np.isfinite(pca.eta_) and np.all(np.isfinite(pca.eigenvalues_))


def test_eta_reports_the_rate():
    X = _stream()
    assert opf.OnlinePCA(3, eta=0.5).fit(X).eta_ == 0.5
    assert opf.OnlinePCA(3, eta=0.5).fit(X).mixability_gap_ == 0.0
    pca = opf.OnlinePCA(3).fit(X)
    n, d = 8, 5
    assert pca.eta == "auto"
    np.testing.assert_allclose(pca.eta_, d * np.log(n / d) / pca.mixability_gap_, rtol=1e-15)


@pytest.mark.parametrize("bad", ["Auto", "", "fast", "1", "AdaHedge", "adahedge "])
def test_bad_eta_string(bad):
    with pytest.raises(TypeError, match="eta must be a real number, \"auto\" or \"adahedge\""):
        opf.OnlinePCA(2, eta=bad).fit(_stream())


def test_numeric_eta_unchanged():
    """eta=1.0 is the fixed-rate algorithm: the NumPy reference at eta 1."""
    from onlinepca_fast import reference
    X = _stream(T=60)
    fast = opf.OnlinePCA(3, eta=1.0, random_state=0).fit(X)
    slow = reference.OnlinePCA(3, eta=1.0, random_state=0).fit(X)
    np.testing.assert_allclose(fast.expected_losses_, slow.expected_losses_, rtol=1e-9)


# -- alpha="auto": alpha_t = 1/(t+1)**2 ------------------------------------------------
@pytest.mark.parametrize("state", ["dense", "clustered"])
@pytest.mark.parametrize("share", ["fixed", "uniform"])
def test_oracle_alpha_auto_pca(state, share):
    X = _stream(shift=True)
    learner = opf.OnlinePCA(3, share=share, alpha="auto", state=state, random_state=0).fit(X)
    _check_oracle(learner, ref.auto_pca(X, 3, share, "auto")[:3])
    assert learner.alpha_ == 1.0 / (X.shape[0] + 2) ** 2


def test_oracle_alpha_auto_others():
    L = np.random.default_rng(12).random((150, 6))
    _check_oracle(opf.CappedHedge(2, share="fixed", alpha="auto", random_state=0).fit(L),
                  ref.auto_experts(L, 2, "fixed", "auto"))
    X = _stream(n=6, seed=13)
    _check_oracle(opf.SimplexVarianceMinimizer(alpha="auto").fit(X), ref.auto_simplex(X, "auto"))
    # a numeric eta with alpha="auto" mixes as well
    a = opf.OnlineAdaptivePCA(3, eta=2.0, alpha="auto", random_state=0).fit(_stream())
    b = opf.OnlineAdaptivePCA(3, eta=2.0, alpha=1e-5, random_state=0).fit(_stream())
    assert not np.array_equal(a.expected_losses_, b.expected_losses_)


@pytest.mark.parametrize("stream", ["shifting", "adversarial"])
def test_adaptive_regret_bound_alpha_auto(stream):
    """On every interval [r, s]: R <= Delta_s (2 + log(2 n r^2 / d) / log(n / d))."""
    X = STREAMS[stream]()[:80]
    n, k = X.shape[1], 3
    d = n - k
    learner = opf.OnlineAdaptivePCA(k, alpha="auto", random_state=0)
    gaps = []
    for x in X:
        learner.learn_one(x)
        gaps.append(learner.mixability_gap_)
    losses = learner.expected_losses_
    for r in range(1, 81, 7):
        for s in range(r + 4, 81, 9):
            regret = losses[r - 1:s].sum() - metrics.best_subspace_loss(X[r - 1:s], k)
            bound = gaps[s - 1] * (2 + np.log(2 * n * r ** 2 / d) / np.log(n / d))
            assert regret <= bound * (1 + 1e-12)


@pytest.mark.parametrize("bad,exc", [(1.0, ValueError), (-0.1, ValueError),
                                     ("Auto", TypeError)])
def test_bad_alpha(bad, exc):
    with pytest.raises(exc, match="alpha must"):
        opf.OnlineAdaptivePCA(2, alpha=bad).fit(_stream())


@pytest.mark.parametrize("stream", sorted(STREAMS))
@pytest.mark.parametrize("center_lr_inv", [0.0, 2.0])
def test_master_bound_centered(stream, center_lr_inv):
    """CenteredOnlinePCA's default: its loss is at most that of each of its
    three learners (the FTRL learner at its AdaHedge rate, the limit and
    Follow the Leader on a sketch of its instances y = x - m^{t-1}, from
    the NumPy oracle) plus 2 Delta^M, at every checked prefix, and Delta^M
    is within AdaHedge's worst-case bound with ranges |y_t|^2."""
    X = STREAMS[stream]() + 0.3
    n, k = X.shape[1], 3
    learner, done = opf.CenteredOnlinePCA(k, center_lr_inv=center_lr_inv, random_state=0), 0
    ha = ref.auto_cumulative(X, k, True, center_lr_inv)[0]
    Y, f = ref.centered_instances(X, True, center_lr_inv)
    hb = ref.limit_meg(Y, k, weights=f)
    hf = ref.sketch_leader(Y, k, ref.leader_ell(n, k), weights=f)
    for T in (20, 60, 100, X.shape[0]):
        learner.partial_fit(X[done:T])
        done = T
        L = learner.expected_losses_.sum()
        DM = learner.master_gap_
        best = min(ha[:T].sum(), hb[:T].sum(), hf[:T].sum())
        assert L <= best + 2 * DM * (1 + 1e-12)
        sq = np.einsum("ij,ij->i", Y[:T], Y[:T])
        assert 2 * DM <= _adahedge_bound(np.log(3), sq) * (1 + 1e-12)
