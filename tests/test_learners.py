"""Tests of the learners package as a whole: every compiled learner against
its NumPy reference (same seed, same data => same trajectories: expected
losses, drawn subsets wherever no cluster of equal levels is split,
realized losses, the final parameter), and the protocol every learner
keeps (``partial_fit`` equals ``learn_one`` bit for bit, ``fit`` is a reset
plus ``partial_fit``).
"""

import numpy as np
import pytest
from learner_cases import (
    DETERMINISTIC,
    EXPERTS,
    PCA_LEARNERS,
    SAMPLERS,
    build,
    cov_stream,
    loss_stream,
    parameter_of,
    pca_stream,
    unsplit_trials,
)
from numpy.testing import assert_allclose

import onlinepca_fast as opf
from onlinepca_fast import reference as ref

SIZES = [(20, 2, 2000), (100, 10, 2000)]


def _cases():
    cases = []
    for n, k, T in SIZES:
        for sampler in SAMPLERS:
            for share in (None, "fixed", "uniform", "past"):
                alpha = 0.0 if share is None else 1e-3
                T_share = T if share != "past" else (600 if n <= 20 else 300)  # O(n^3) per trial
                for name in ("OnlinePCA", "CappedHedge"):
                    kw = dict(share=share, alpha=alpha, sampler=sampler)
                    cases.append((name, n, k, T_share, kw))
            for share in (None, "fixed"):
                kw = dict(share=share, alpha=1e-3, sampler=sampler)
                cases.append(("Hedge", n, k, T // 2, kw))
            cases.append(("OnlineAdaptivePCA", n, k, T, dict(alpha=1e-4, sampler=sampler)))
            cases.append(("CenteredOnlinePCA", n, k, T, dict(sampler=sampler)))
            cases.append(("CenteredOnlinePCA", n, k, T,
                          dict(sampler=sampler, centered=False, mean_init=np.full(n, 0.01))))
        cases.append(("CenteredOnlinePCA", n, k, T // 2, dict(eta=0.3, center_lr_inv=10.0,
                                                              mean_init=np.full(n, -0.05))))
        for centered in (False, True):
            cases.append(("FollowTheLeader", n, k, T, dict(centered=centered)))
        for share in (None, "fixed"):
            for matrices in (False, True):
                T_vm = T // 4 if matrices else T // 2
                cases.append(("VarianceMinimizer", n, None, T_vm,
                              dict(share=share, alpha=1e-3, eta=2.0, matrices=matrices)))
        for alpha in (0.0, 1e-3):
            for matrices in (False, True):
                cases.append(("SimplexVarianceMinimizer", n, None, T // 4,
                              dict(alpha=alpha, eta=2.0, matrices=matrices)))
    for name, _, _, _, kw in cases:  # the reference runs the fixed-rate algorithm
        if name != "FollowTheLeader":
            kw.setdefault("eta", 1.0)
    return cases


def _case_id(case):
    name, n, k, T, kw = case
    parts = [name, f"n{n}", f"T{T}"]
    for key, value in kw.items():
        if key == "mean_init":
            value = "m0"
        parts.append(f"{key}={value}")
    return "-".join(parts)


def _case_data(name, n, T, kw, seed):
    if name in EXPERTS:
        return loss_stream(T, n, seed)
    if kw.pop("matrices", False):
        return cov_stream(T, n, seed)
    return pca_stream(T, n, seed)


class _PresetUniform(np.random.Generator):
    """A Generator whose ``random()`` returns a given u (the draw of one trial)."""

    def __init__(self, u):
        super().__init__(np.random.PCG64(0))
        self._u = u

    def random(self, *args, **kwargs):
        return self._u


def _run_compiled(learner, name, X, u, d):
    """Run a compiled randomised learner row by row (== partial_fit, tested
    below) and, before each trial, redraw its corner from its public state
    with the trial's u, exactly as the trial does (conventions file): the
    weights omega (ascending order of the maintained matrix; expert order)
    through ``kernels.sample_corner``.  Returns the corners, the realized
    losses those corners give with the learner's own eigenvectors, and the
    scale of each trial's loss (the loss of all directions: ||x - m||^2,
    tr(C), or the sum of the expert losses)."""
    n = X.shape[-1]
    corners, realized, scale = [], [], []
    for t, x in enumerate(X):
        if t == 0:  # not initialised before the first row: W^0 = I/n, Q = I, m^0
            omega, Q, m = np.full(n, 1 / n), np.eye(n), np.zeros(n)
            if getattr(learner, "mean_init", None) is not None:
                m = np.asarray(learner.mean_init, dtype=np.float64)
            elif name == "CenteredOnlinePCA" and learner.centered:
                m = x  # m^0: the first row (y_1 = 0)
        elif name in EXPERTS:
            omega = learner.weights_
        else:
            Q = learner.eigenvectors_
            m = learner.mean_ if name == "CenteredOnlinePCA" else np.zeros(n)
            lam = learner.eigenvalues_
            if name == "CenteredOnlinePCA":  # A = log W0 - eta C is stored uncapped
                lam = opf.kernels.cap_log(lam, d)
            omega = np.exp(lam)
        method = getattr(learner, "sampler", "decomposition")  # VarianceMinimizer: WK Alg. 2
        corner = opf.kernels.sample_corner(omega, d, _PresetUniform(u[t]), method=method)
        if name in EXPERTS:
            v = x
        elif x.ndim == 1:
            v = (Q.T @ (x - m)) ** 2
        else:
            v = np.sum(Q * (x @ Q), axis=0)
        corners.append(corner)
        realized.append(v[corner].sum())
        scale.append(v.sum())
        learner.learn_one(x)
    return corners, np.array(realized), np.array(scale)


@pytest.mark.parametrize("case", [  # n = 100: seconds each
    pytest.param(c, marks=[pytest.mark.slow] if c[1] >= 100 else []) for c in _cases()],
    ids=_case_id)
def test_compiled_matches_reference(case):
    name, n, k, T, kw = case
    kw = dict(kw)
    seed = 1000 + n + T
    X = _case_data(name, n, T, kw, seed)
    if name not in DETERMINISTIC:
        kw["random_state"] = seed
    slow = build(ref, name, k, **kw).fit(X)
    fast = build(opf, name, k, **kw)

    if name == "SimplexVarianceMinimizer":
        fast.fit(X)
        assert_allclose(fast.expected_losses_, slow.expected_losses_, rtol=1e-9, atol=1e-12)
        assert_allclose(fast.realized_losses_, fast.expected_losses_, rtol=0, atol=0)
        assert_allclose(parameter_of(fast), parameter_of(slow), rtol=1e-9, atol=1e-15)
        return

    if name == "FollowTheLeader":
        # deterministic: the corner is positions k..n-1 of the eigenvalues of
        # -C (linear levels: "numerically equal" is relative to their scale),
        # expected = realized, well defined only where that cluster is whole
        fast.fit(X)
        unsplit = unsplit_trials(slow, rtol=1e-9, atol=0.0)
        assert unsplit[k + 1:].mean() > 0.99
        assert_allclose(fast.expected_losses_[unsplit], slow.expected_losses_[unsplit],
                        rtol=1e-9, atol=1e-12)
        assert_allclose(fast.realized_losses_, fast.expected_losses_, rtol=0, atol=0)
    else:
        u = np.random.default_rng(seed).random(T)  # one uniform per trial
        d = 1 if name in ("Hedge", "VarianceMinimizer") else n - k
        if "state" in fast.get_params():
            # the corners are redrawn from all n weights and an n x n basis
            # (the dense state); the clustered and auto states are compared
            # with the reference in test_clustered*.py and test_auto_state.py
            fast.set_params(state="dense")
        corners, realized, scale = _run_compiled(fast, name, X, u, d)
        # the expected loss does not depend on the basis inside a cluster
        assert_allclose(fast.expected_losses_, slow.expected_losses_, rtol=1e-9, atol=1e-12)
        # the realized loss is that of the corner drawn with the trial's u
        assert_allclose(fast.realized_losses_, realized, rtol=1e-12, atol=1e-15)
        # same subsets wherever no cluster of equal levels (1e-9 in the log) is split
        unsplit = unsplit_trials(slow, rtol=0.0, atol=1e-9)
        assert unsplit.mean() > 0.5, f"only {unsplit.sum()} of {T} trials comparable"
        differ = [t for t in np.flatnonzero(unsplit)
                  if not np.array_equal(corners[t], slow.corners_[t])]
        assert differ == [], f"different subsets drawn at trials {differ[:10]}"
        # and the same realized losses, to 1e-9 of the trial's loss scale: the
        # realized loss is a sum over single eigenvectors, which any backward
        # stable method determines only to O(eps max|lam| sqrt(t) / gap) when
        # two eigenvalues (not numerically equal) are a small gap apart (seen:
        # 3e-8 relative at gap 1e-4, max|lam| = 80, t = 300), while the
        # expected loss, a smooth function of W, agrees to 1e-9 relative
        assert_allclose(fast.realized_losses_[unsplit] / scale[unsplit],
                        slow.realized_losses_[unsplit] / scale[unsplit], rtol=0, atol=1e-9)
        assert_allclose(parameter_of(fast), parameter_of(slow), rtol=0, atol=1e-9 / n)
    if name in PCA_LEARNERS or name == "FollowTheLeader":
        assert_allclose(fast.eigenvalues_, slow.eigenvalues_, rtol=1e-9,
                        atol=1e-9 * max(1.0, np.abs(slow.eigenvalues_).max()))
        Q = fast.eigenvectors_
        assert_allclose(Q.T @ Q, np.eye(n), rtol=0, atol=1e-12)
    if name in ("CenteredOnlinePCA", "FollowTheLeader"):
        assert_allclose(fast.mean_, slow.mean_, rtol=1e-12, atol=1e-15)


def test_expected_losses_do_not_depend_on_the_draws():
    # the parameter W^t is deterministic given the data; only the corners are random
    X = pca_stream(500, 20, seed=9)
    runs = [opf.OnlinePCA(2, sampler=s, random_state=r).fit(X).expected_losses_
            for s in SAMPLERS for r in (0, 1)]
    for other in runs[1:]:
        assert_allclose(other, runs[0], rtol=0, atol=0)


PROTOCOL = [
    ("OnlinePCA", dict(share="past", alpha=1e-2)),
    ("OnlinePCA", dict(share="fixed", alpha=1e-2, sampler="systematic")),
    ("OnlineAdaptivePCA", {}),
    ("CenteredOnlinePCA", dict(center_lr_inv=3.0)),
    ("FollowTheLeader", dict(centered=True)),
    ("CappedHedge", dict(share="uniform", alpha=1e-2)),
    ("Hedge", {}),
    ("VarianceMinimizer", dict(share="fixed", alpha=1e-2)),
    ("SimplexVarianceMinimizer", dict(alpha=1e-2)),
]


def _protocol_data(name, T, seed):
    return loss_stream(T, 12, seed) if name in EXPERTS else pca_stream(T, 12, seed)


def _state(learner):
    return (learner.expected_losses_, learner.realized_losses_)


@pytest.mark.parametrize("name, kw", PROTOCOL, ids=[p[0] + str(i) for i, p in enumerate(PROTOCOL)])
def test_partial_fit_equals_learn_one_bit_for_bit(name, kw):
    X = _protocol_data(name, 120, seed=10)
    if name not in DETERMINISTIC:
        kw = dict(kw, random_state=11)
    batch = build(opf, name, 3, **kw).partial_fit(X)
    single = build(opf, name, 3, **kw)
    for x in X:
        single.learn_one(x)
    mixed = build(opf, name, 3, **kw).partial_fit(X[:40])
    for x in X[40:45]:
        mixed.learn_one(x)
    mixed.partial_fit(X[45:])
    for other in (single, mixed):
        for a, b in zip(_state(batch), _state(other)):
            assert_allclose(a, b, rtol=0, atol=0)
        assert_allclose(parameter_of(batch), parameter_of(other), rtol=0, atol=0)


@pytest.mark.parametrize("name, kw", PROTOCOL, ids=[p[0] + str(i) for i, p in enumerate(PROTOCOL)])
def test_fit_is_reset_plus_partial_fit(name, kw):
    X1, X2 = _protocol_data(name, 50, seed=12), _protocol_data(name, 80, seed=13)
    if name not in DETERMINISTIC:
        kw = dict(kw, random_state=14)
    used = build(opf, name, 3, **kw).partial_fit(X1)
    used.fit(X2)
    fresh = build(opf, name, 3, **kw).partial_fit(X2)
    assert used.expected_losses_.shape == (80,)
    for a, b in zip(_state(used), _state(fresh)):
        assert_allclose(a, b, rtol=0, atol=0)
    used.fit(X2)
    for a, b in zip(_state(used), _state(fresh)):
        assert_allclose(a, b, rtol=0, atol=0)
