"""OnlineKernelPCA with eta="auto" (the AdaHedge rate in feature space,
docs/adaptive_rates.md "OnlineKernelPCA"): the NumPy oracle (eigh of the
kernel matrix every trial), the feature-space learner of KW update (2) at
the same rates, scale invariance, the stated regret bound, batch split /
learn_one / pickling, and that a numeric eta is untouched.

Tolerances: RTOL_ORACLE = 1e-9 (observed ~1e-13: the bordered updates and
eigh agree to a few eps |K| per trial); RTOL_SCALE = 1e-12 (the same
computation on kernel values scaled by c, rounded differently).
"""

import numpy as np
import pytest

import onlinepca_fast as opf
from onlinepca_fast import _kernels, reference
from onlinepca_fast.datasets import noisy_cone
from onlinepca_fast.reference import cap_log
from onlinepca_fast.reference._auto_rate import two_point_gap

from learner_cases import assert_split_learn_one_pickle_match

RTOL_ORACLE = 1e-9
RTOL_SCALE = 1e-12

KW_KERNEL = dict(kernel="poly", degree=2, gamma=1.0, coef0=0.0)  # (x . y)^2


# One BLAS thread around every test (conftest.py's one_blas_thread).
pytestmark = pytest.mark.usefixtures("one_blas_thread")


def _stream(T=120, n=6, seed=0, shift=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, n)) * np.linspace(0.2, 1.0, n)
    if shift:  # the dominant subspace changes every 30 trials
        for s in range(0, T, 30):
            X[s:s + 30] = X[s:s + 30] @ np.linalg.qr(rng.normal(size=(n, n)))[0]
    return X / np.linalg.norm(X, axis=1).max()


def _adversarial(T=120, n=6):
    """Basis vectors in turn, norms 1, 1/2, 1/3: no direction stays good."""
    X = np.zeros((T, n))
    for t in range(T):
        X[t, t % n] = 1.0 / (1 + (t // n) % 3)
    return X


def _rbf(A, B, gamma=0.5):
    sq = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2 * A @ B.T
    return np.exp(-gamma * np.maximum(sq, 0.0))


def test_default_is_auto():
    assert opf.OnlineKernelPCA(2).eta == "auto"
    assert reference.OnlineKernelPCA(2).eta == "auto"


# -- the NumPy oracle ----------------------------------------------------------------
@pytest.mark.parametrize("params", [
    dict(kernel="rbf", gamma=0.5),
    dict(kernel="rbf", gamma=2.0, sampler="systematic"),
    KW_KERNEL,
    dict(kernel="linear"),
    dict(kernel=_rbf),
], ids=["rbf", "rbf-systematic", "poly2", "linear", "callable"])
@pytest.mark.parametrize("shift", [False, True])
def test_oracle(params, shift):
    X = _stream(shift=shift)
    fast = opf.OnlineKernelPCA(3, random_state=4, **params).fit(X)
    ref = reference.OnlineKernelPCA(3, eta="auto", random_state=4, **params).fit(X)
    np.testing.assert_allclose(fast.expected_losses_, ref.expected_losses_,
                               rtol=RTOL_ORACLE, atol=1e-12)
    np.testing.assert_allclose(fast.realized_losses_, ref.realized_losses_,
                               rtol=RTOL_ORACLE, atol=1e-12)
    np.testing.assert_allclose(fast.mixability_gap_, ref.mixability_gap_, rtol=RTOL_ORACLE)
    np.testing.assert_allclose(fast.eta_, ref.eta_, rtol=RTOL_ORACLE)
    assert np.isfinite(fast.eta_) and fast.mixability_gap_ > 0


def _tied_stream(kind):
    """Rows whose kernel matrix has exactly tied eigenvalues at the r-th
    largest: random one-hot rows (linear kernel, r = 1: the axes visited
    equally often tie) and one-hot rows in turn (rbf, r = 3)."""
    if kind == "one-hot":
        X = np.zeros((60, 5))
        X[np.arange(60), np.random.default_rng(0).integers(0, 5, 60)] = 1.0
        return X, dict(kernel="linear"), 1
    return np.eye(6)[np.arange(109) % 6], dict(kernel="rbf", gamma=0.5), 3


@pytest.mark.parametrize("kind", ["one-hot", "cyclic"])
@pytest.mark.parametrize("budget", [None, 20])
def test_leader_shares_a_tie_at_the_rth_eigenvalue(kind, budget):
    """Follow the Leader took the r leading eigenvectors as rounding ordered
    them when the r-th largest eigenvalue of K ties: the bordered updates
    and eigh ordered them differently, and so did X and c X (up to 0.75
    and 0.9 k(x, x) of a loss).  The tie group now shares what it
    completes of r, exact and past the budget: the expected losses match
    the oracle and scale (X and 0.7 X, the kernel times 0.49); the realized
    ones (a Haar draw in the group's span, whatever basis rounding chose
    there) average to the expected ones over seeds."""
    X, params, r = _tied_stream(kind)
    kw = dict(budget=budget, **params)
    fast = opf.OnlineKernelPCA(r, random_state=3, **kw).fit(X)
    ref = reference.OnlineKernelPCA(r, eta="auto", random_state=3, **kw).fit(X)
    np.testing.assert_allclose(fast.expected_losses_, ref.expected_losses_, rtol=0,
                               atol=1e-12)
    c = 0.49
    if params["kernel"] == "linear":
        other = opf.OnlineKernelPCA(r, random_state=3, **kw).fit(0.7 * X)
    else:
        other = opf.OnlineKernelPCA(r, random_state=3, budget=budget,
                                    kernel=lambda A, B: c * _rbf(A, B)).fit(X)
    np.testing.assert_allclose(other.expected_losses_ / c, fast.expected_losses_, rtol=0,
                               atol=1e-12)
    runs = [opf.OnlineKernelPCA(r, random_state=s, **kw).fit(X) for s in range(300)]
    totals = np.array([run.realized_losses_.sum() for run in runs])
    assert abs(totals.mean() - fast.expected_losses_.sum()) <= 5 * totals.std(ddof=1) / np.sqrt(300)


def test_linear_kernel_is_update_2_at_the_same_rates():
    """Feature-space oracle, independent of the kernel matrix: with the
    linear kernel the learner is KW update (2) in R^N, W = cap_{N-r}(exp(-eta_t
    C^t)/Z), with the rate eta_t it reports, wherever the cap binds on the
    null space (S^t = tr(I - exp(-eta_t C^t)) >= r, KW footnote 2; see
    OnlineKernelPCA's Notes)."""
    N, r, T = 6, 2, 150
    X = np.random.default_rng(3).standard_normal((T, N))
    kpca = opf.OnlineKernelPCA(r, kernel="linear", random_state=0)
    checked = 0
    C = np.zeros((N, N))
    for t, x in enumerate(X):
        eta = kpca.eta_ if t else np.inf
        b = kpca.limit_weight_ if t else 0.5  # the master's weight of Follow the Leader
        kpca.learn_one(x)
        lam, Q = np.linalg.eigh(C)
        lam = np.clip(lam, 0.0, None)
        if t > r + 1 and np.sum(-np.expm1(-eta * lam)) >= r:
            w = np.exp(cap_log(-eta * lam, N - r))
            h = (N - r) * (w * (Q.T @ x) ** 2).sum()
            leader = x @ x - ((Q[:, -r:].T @ x) ** 2).sum()  # the r leading directions
            np.testing.assert_allclose(kpca.expected_losses_[t], (1 - b) * h + b * leader,
                                       rtol=RTOL_ORACLE)
            checked += 1
        C += np.outer(x, x)
    assert checked >= T - 10


def test_gap_is_the_unbounded_dimension_limit():
    """opf_kpca_gap is the d -> infinity limit of the two-point gap, and at
    least the two-point gap in every dimension d (compared where the
    reference's logarithms do not cancel, x = eta s >= 1e-2); for small x
    it matches the series h (x/2 - x^2/6 + ...) without cancellation."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        s = 10.0 ** rng.uniform(-3, 3)
        h, x = s * rng.uniform(0, 1), 10.0 ** rng.uniform(-2, 3)
        gap = _kernels.kpca_gap(h, s, x / s)
        np.testing.assert_allclose(gap, h * (1 + np.expm1(-x) / x), rtol=1e-12)
        for d in (1, 10, 1e4):
            assert two_point_gap(h, s, d, x / s) <= gap * (1 + 1e-12)
        np.testing.assert_allclose(two_point_gap(h, s, 1e8, x / s), gap, rtol=1e-6)
    for x in (1e-12, 1e-6, 1e-3):
        np.testing.assert_allclose(_kernels.kpca_gap(0.5, 2.0, x / 2.0),
                                   0.5 * (x / 2 - x ** 2 / 6 + x ** 3 / 24 - x ** 4 / 120),
                                   rtol=1e-12)
    assert _kernels.kpca_gap(0.3, 1.0, np.inf) == 0.3
    assert _kernels.kpca_gap(0.0, 1.0, 2.0) == 0.0


# -- scale invariance ------------------------------------------------------------------
@pytest.mark.parametrize("how", ["callable", "linear"])
def test_scale_invariance(how):
    """k -> c k: the same weights and expected-loss ratios (to 1e-12), losses
    times c, eta_ over c, mixability_gap_ times c."""
    X = _stream(T=100, shift=True)
    runs = []
    for c in (1e-3, 1.0, 1e3):
        if how == "callable":
            learner = opf.OnlineKernelPCA(3, kernel=lambda A, B, c=c: c * _rbf(A, B),
                                          random_state=0).fit(X)
        else:
            learner = opf.OnlineKernelPCA(3, kernel="linear", random_state=0).fit(
                np.sqrt(c) * X)
        runs.append((c, learner))
    base = runs[1][1]
    for c, learner in runs:
        np.testing.assert_allclose(learner.expected_losses_ / c, base.expected_losses_,
                                   rtol=RTOL_SCALE, atol=0)
        np.testing.assert_allclose(learner.realized_losses_ / c, base.realized_losses_,
                                   rtol=RTOL_SCALE, atol=1e-15)
        np.testing.assert_allclose(learner.weights_, base.weights_, rtol=RTOL_SCALE, atol=0)
        np.testing.assert_allclose(learner.eta_ * c, base.eta_, rtol=RTOL_SCALE)
        np.testing.assert_allclose(learner.mixability_gap_ / c, base.mixability_gap_,
                                   rtol=RTOL_SCALE)


# -- the regret bound -----------------------------------------------------------------
def _best_loss(K, r):
    """Loss of the best rank-r feature-space subspace in hindsight (KW Alg. 2
    on all instances): tr K minus its r largest eigenvalues."""
    lam = np.linalg.eigvalsh(K)
    return np.trace(K) - np.clip(lam[-r:], 0.0, None).sum()


STREAMS = {"adversarial": _adversarial, "shifting": lambda: _stream(shift=True),
           "stationary": _stream}


@pytest.mark.parametrize("stream", sorted(STREAMS))
@pytest.mark.parametrize("params", [dict(kernel="linear"), KW_KERNEL,
                                    dict(kernel="rbf", gamma=0.5)],
                         ids=["linear", "poly2", "rbf"])
@pytest.mark.parametrize("r", [1, 3])
def test_regret_bound(stream, params, r):
    """R_T <= 2 Delta_T + 2 Delta^M, Delta_T <= sqrt(r sum_t h_t s_t) + (r + 2)
    max_t s_t with h the rate learner's losses, and Delta^M <= sqrt(log 2
    sum_t s_t^2 / 4) + (2/3 log 2 + 1) max_t s_t, at every checked prefix
    (docs/adaptive_rates.md, s_t = k(x_t, x_t))."""
    X = STREAMS[stream]()
    K = reference.gram(X, X, **params)
    s = np.diag(K)
    learner, done = opf.OnlineKernelPCA(r, random_state=0, **params), 0
    ref = reference.OnlineKernelPCA(r, eta="auto", random_state=0, **params).fit(X)
    for T in (5, 20, 50, X.shape[0]):
        learner.partial_fit(X[done:T])
        done = T
        regret = learner.expected_losses_.sum() - _best_loss(K[:T, :T], r)
        DM = learner.master_gap_
        assert regret <= 2 * (learner.mixability_gap_ + DM) * (1 + 1e-12)
        # the rate learner's own expected losses, from the NumPy oracle
        h = np.array(ref.rate_learner_losses_)[:T]
        bound = np.sqrt(r * np.sum(h * s[:T])) + (r + 2) * s[:T].max()
        assert learner.mixability_gap_ <= bound * (1 + 1e-12)
        sq = s[:T]
        assert DM <= (np.sqrt(np.log(2) * np.sum(sq ** 2) / 4)
                      + (2 / 3 * np.log(2) + 1) * sq.max()) * (1 + 1e-12)
        np.testing.assert_allclose(learner.eta_, r / learner.mixability_gap_, rtol=1e-15)


def test_regret_bound_kw_cone():
    X = noisy_cone(300, 20, noise=0.05, random_state=0, embedding="padded")
    learner = opf.OnlineKernelPCA(2, random_state=0, **KW_KERNEL).fit(X)
    regret = learner.expected_losses_.sum() - _best_loss((X @ X.T) ** 2, 2)
    assert 0 < regret <= 2 * (learner.mixability_gap_ + learner.master_gap_)


# -- state --------------------------------------------------------------------------------
def test_batch_split_learn_one_pickle():
    make = lambda: opf.OnlineKernelPCA(3, kernel="rbf", gamma=0.5, random_state=1)  # noqa: E731
    assert_split_learn_one_pickle_match(make, _stream(shift=True), pickle_after=60)


def test_first_trials_and_extreme_scales():
    """Zero rows: no gap, eta_ inf; the first nonzero row's whole loss is the
    gap of a deterministic trial; norms spanning 1e-70 .. 1e50 keep the
    state finite (the step is limited to 2**1000 / max|lambda|; kernel
    values k(x, x) below 2**-480 are refused, tests/test_scale_edges.py)."""
    kpca = opf.OnlineKernelPCA(2, kernel="linear", random_state=0).fit(np.zeros((4, 3)))
    assert kpca.eta_ == np.inf and kpca.mixability_gap_ == 0.0
    x = np.array([[1e-70, 0.0, 0.0]])
    kpca.partial_fit(x)
    np.testing.assert_allclose(kpca.mixability_gap_, 1e-140, rtol=1e-15)
    kpca.partial_fit(np.array([[0.0, 1e50, 0.0], [0.0, 0.0, 1e50], [1e50, 1e50, 0.0]]))
    assert np.isfinite(kpca.eta_) and np.all(np.isfinite(kpca.expected_losses_))
    assert np.all(np.isfinite(kpca.weights_))
    ref = reference.OnlineKernelPCA(2, kernel="linear", random_state=0).fit(
        np.vstack([np.zeros((4, 3)), x, [[0.0, 1e50, 0.0], [0.0, 0.0, 1e50],
                                         [1e50, 1e50, 0.0]]]))
    np.testing.assert_allclose(kpca.expected_losses_, ref.expected_losses_, rtol=1e-9)


def test_numeric_eta_unchanged():
    X = _stream()
    fast = opf.OnlineKernelPCA(3, eta=2.0, random_state=0, **KW_KERNEL).fit(X)
    ref = reference.OnlineKernelPCA(3, eta=2.0, random_state=0, **KW_KERNEL).fit(X)
    np.testing.assert_allclose(fast.expected_losses_, ref.expected_losses_, rtol=1e-9)
    assert fast.eta_ == 2.0 and fast.mixability_gap_ == 0.0


@pytest.mark.parametrize("bad,exc", [("Auto", TypeError), ("", TypeError),
                                     (0.0, ValueError), (-1.0, ValueError)])
def test_bad_eta(bad, exc):
    with pytest.raises(exc, match="eta must"):
        opf.OnlineKernelPCA(2, eta=bad).fit(_stream(T=5))
