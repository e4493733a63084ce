"""benchmarks/auto_rate_candidates.py (issue 24): the NumPy prototypes of
the candidate rates are faithful -- their ``"auto"`` policy reproduces the
package's ``eta="auto"`` (an independent implementation: loss units and eigh
every trial against the compiled rank-one updates), the ``"inf"`` policy is
the limit of a large rate, and the master's loss is within its AdaHedge
bound of its best sub-learner."""

import importlib
import pathlib
import sys

import numpy as np
import pytest

import onlinepca_fast as opf
from onlinepca_fast import metrics

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _cand():
    sys.path.append(str(ROOT / "benchmarks"))
    try:
        return importlib.import_module("auto_rate_candidates")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def _stream(T=120, n=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, n)) * np.linspace(0.2, 1.0, n)
    for s in range(0, T, 40):  # a new dominant subspace every 40 trials
        X[s:s + 40] = X[s:s + 40] @ np.linalg.qr(rng.normal(size=(n, n)))[0]
    return X / np.linalg.norm(X, axis=1).max()


@pytest.mark.parametrize("alpha", [0.0, 1e-5])
def test_master_parts_are_the_reference(alpha):
    """The package's eta="auto" of OnlinePCA / OnlineAdaptivePCA is a master
    over two learners (tests/test_auto_rate.py checks it against
    ``reference._auto_rate.auto_pca``); the prototype's two policies are
    those learners: AdaHedge with the restart constant when mixing, and the
    limit (``Tracker``, O(n k) state, against the eigh-every-trial limit)."""
    from onlinepca_fast.reference import _auto_rate as ref
    X = _stream()
    c = _cand()
    share = "fixed" if alpha else None
    a = c.MEG(8, 3, "auto", alpha, restart=bool(alpha))
    np.testing.assert_allclose([a.trial(x) for x in X],
                               ref.auto_meg(X, 3, share, alpha, adaptive=True)[0],
                               rtol=1e-8, atol=1e-12)
    b = c.Tracker(8, 3)
    np.testing.assert_allclose([b.trial(x) for x in X], ref.limit_meg(X, 3),
                               rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("make, proto", [
    (lambda: opf.CenteredOnlinePCA(3, mean_init=np.zeros(8), random_state=0),  # m^0 = 0
     lambda c: c.Cumulative(8, 3, "auto")),
    (lambda: opf.CenteredOnlinePCA(3, centered=False, random_state=0),
     lambda c: c.Cumulative(8, 3, "auto", centered=False)),
])
def test_auto_policy_is_the_package_auto(make, proto):
    """The prototype's AdaHedge policy is CenteredOnlinePCA's rate learner
    (the package's default is the master over it, its limit and Follow the
    Leader on a sketch: tests/test_auto_rate.py)."""
    from onlinepca_fast.reference import _auto_rate as ref
    X = _stream()
    p = make().get_params()
    ours = ref.auto_cumulative(X, 3, p["centered"], 0.0, p["mean_init"])[0]
    sub = proto(_cand())
    theirs = np.array([sub.trial(x) for x in X])
    np.testing.assert_allclose(theirs, ours, rtol=1e-8, atol=1e-12)


def test_inf_policy_is_the_limit_of_large_rates():
    c = _cand()
    X = _stream(seed=1)
    lim = c.total_loss(X, lambda: c.MEG(8, 3, "inf"))
    big = [c.total_loss(X, lambda e=e: c.MEG(8, 3, e)) for e in (1e2, 1e3, 1e4)]
    err = [abs(b - lim) / lim for b in big]
    assert err[2] < 1e-3 and err[2] < err[0]


def test_master_within_its_bound():
    c = _cand()
    X = _stream(seed=2)
    subs = [c.MEG(8, 3, "auto"), c.MEG(8, 3, "inf")]
    solo = [c.total_loss(X, lambda: c.MEG(8, 3, "auto")),
            c.total_loss(X, lambda: c.MEG(8, 3, "inf"))]
    total = c.master(subs, X)
    # AdaHedge: R <= 2 Delta <= 2 (sqrt(ln 2 sum_t s_t^2 / 4) + (2/3 ln 2 + 1) max s_t),
    # s_t = d |x_t|^2 the range of the sub-learners' losses
    s = 5 * np.einsum("ij,ij->i", X, X)
    bound = 2 * (np.sqrt(np.log(2) * np.sum(s ** 2) / 4) + (2 / 3 * np.log(2) + 1) * s.max())
    assert total <= min(solo) + bound


def test_tracker_is_the_inf_policy():
    """The O(n k) state (k explicit directions and a flat level) gives the
    losses of the eigh-based eta = inf limit, including instances that
    keep to a subspace (ties at the flat level)."""
    c = _cand()
    X = _stream(seed=3)
    X[:50, 5:] = 0.0  # the first 50 rows in a 5-dim subspace
    a, b = c.MEG(8, 3, "inf"), c.Tracker(8, 3)
    np.testing.assert_allclose([b.trial(x) for x in X], [a.trial(x) for x in X],
                               rtol=1e-9, atol=1e-12)


def _adversarial(T=120, n=8):
    X = np.zeros((T, n))
    for t in range(T):
        X[t, t % n] = 1.0 / (1 + (t // n) % 3)
    return X


def _stationary(T=120, n=8, seed=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, n)) * np.linspace(0.2, 1.0, n)
    return X / np.linalg.norm(X, axis=1).max()


@pytest.mark.parametrize("kind", ["stationary", "shifting", "adversarial"])
@pytest.mark.parametrize("c", [1e-3, 1.0, 1e3])
def test_master_regret_bound(kind, c):
    """R_T <= min(2 Delta^A_T, L^inf_T - L*_T) + 2 Delta^M_T (docs/adaptive_rates.md),
    at any scale of the data."""
    cand = _cand()
    X = c * {"stationary": _stationary, "shifting": _stream,
             "adversarial": _adversarial}[kind]()
    a = cand.MEG(8, 3, "auto")
    total, gap, cum = cand.master([a, cand.Tracker(8, 3)], X, full=True)
    best = metrics.best_subspace_loss(X, 3)
    bound = min(2 * a.reg.dah, cum[1] - best) + 2 * gap
    assert total - best <= bound + 1e-9 * np.sum(X * X)
    assert gap > 0 and a.reg.dah > 0


@pytest.mark.parametrize("kind", ["stationary", "shifting", "adversarial"])
def test_restart_rate_adaptive_bound(kind):
    """D = d log(n/(d alpha)): on every interval [r, s],
    R_[r,s] <= Delta_[r,s] + Delta_s (1 + (s-r+1) log(1/(1-alpha)) / log(n/(d alpha)))
    against the best fixed subspace of the interval (docs/adaptive_rates.md)."""
    cand = _cand()
    X = {"stationary": _stationary, "shifting": _stream, "adversarial": _adversarial}[kind]()
    n, k, a = 8, 3, 1e-3
    d = n - k
    m = cand.MEG(n, k, "auto", a, restart=True)
    h, gaps = [], []
    for x in X:
        before = m.reg.dah
        h.append(m.trial(x))
        gaps.append(m.reg.dah - before)
    h, cum = np.array(h), np.cumsum(gaps)
    for r, s in [(0, 39), (40, 79), (80, 119), (30, 100), (0, 119)]:
        seg = X[r:s + 1]
        regret = h[r:s + 1].sum() - metrics.best_subspace_loss(seg, k)
        inner = cum[s] - (cum[r - 1] if r else 0.0)
        bound = inner + cum[s] * (1 + (s - r + 1) * np.log(1 / (1 - a))
                                  / np.log(n / (d * a)))
        assert regret <= bound + 1e-12
