"""eta="auto" of OnlinePCA / OnlineAdaptivePCA: the master over the rate
learner and its eta -> infinity limit (src/limit.c, docs/adaptive_rates.md).

The oracle comparisons of the expected losses, the gaps and the master's
weight are in tests/test_auto_rate.py (``reference._auto_rate.auto_pca``);
here: the limit learner's state against the eigh-every-trial limit, the
law of the draws, the components, and the state left by bad input.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import onlinepca_fast as opf
from onlinepca_fast.reference import _auto_rate as ref


def _stream(T=200, n=8, seed=0, shift=True):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, n)) * np.linspace(0.2, 1.0, n)
    if shift:
        for s in range(0, T, 50):
            X[s:s + 50] = X[s:s + 50] @ np.linalg.qr(rng.normal(size=(n, n)))[0]
    return X / np.linalg.norm(X, axis=1).max()


@pytest.mark.parametrize("state", ["dense", "clustered"])
def test_limit_directions_are_the_limit_of_the_reference(state):
    """The limit learner's k directions span the k lowest eigenvectors of
    the reference's M (formed, eigh every trial), and its values below the
    level are M's (relative to the level)."""
    X = _stream()
    k = 3
    learner = opf.OnlinePCA(k, state=state, random_state=0).fit(X)
    _, U = learner._limit_parts()
    _, M = ref.limit_meg(X, k, state=True)
    v, Q = np.linalg.eigh(M)
    assert U.shape == (8, k)
    np.testing.assert_allclose(U @ U.T, Q[:, :k] @ Q[:, :k].T, atol=1e-10)
    lim = learner._limit
    np.testing.assert_allclose(lim[6:6 + k], v[:k] - v[k], rtol=1e-10,  # level: d-th largest
                               atol=1e-12 * abs(v).max())
    np.testing.assert_allclose(U.T @ U, np.eye(k), atol=1e-14)


def test_realized_losses_are_draws_of_the_mixture():
    """Over many seeds the realized loss of each trial averages to its
    expected loss (the master draws A or B with its weight, then the drawn
    learner its corner): checked on the sum over trials, within 5 standard
    errors."""
    X = _stream(T=40, n=6, seed=3)
    runs = [opf.OnlinePCA(2, random_state=s).fit(X) for s in range(600)]
    expected = runs[0].expected_losses_
    for r in runs[1:]:  # the expected losses do not depend on the draws
        np.testing.assert_array_equal(r.expected_losses_, expected)
    totals = np.array([r.realized_losses_.sum() for r in runs])
    se = totals.std(ddof=1) / np.sqrt(totals.size)
    assert abs(totals.mean() - expected.sum()) <= 5 * se
    assert all(0.0 <= r.limit_weight_ <= 1.0 for r in runs)


def test_sample_projection_has_the_mixture_mean():
    """E[P] of sample_projection = (1 - p) (I - d W_A) + p U U^T with p the
    limit's weight (the limit keeps its k directions once it has them)."""
    X = _stream(T=40, n=6, seed=10)  # a stream where both have weight
    learner = opf.OnlinePCA(2, state="dense", random_state=0).fit(X)
    p, U = learner._limit_parts()
    assert U.shape[1] == 2 and 0.2 < p < 0.8, p
    d = 6 - 2
    mean = (1 - p) * (np.eye(6) - d * learner.density_) + p * U @ U.T
    rng = np.random.default_rng(5)
    draws = np.mean([learner.sample_projection(rng) for _ in range(4000)], axis=0)
    np.testing.assert_allclose(draws, mean, atol=0.05)


def test_components_follow_the_master():
    """components_ are the limit's directions while the master weighs it
    more, else the rate learner's (the k eigenvectors of W with the
    smallest eigenvalues)."""
    for seed in range(6):
        X = _stream(T=120, n=7, seed=seed)
        learner = opf.OnlinePCA(2, state="dense", random_state=0).fit(X)
        p, U = learner._limit_parts()
        V = learner.components_.T
        lam, Q = np.linalg.eigh(learner.density_)
        want = U if p > 0.5 else Q[:, :2]
        np.testing.assert_allclose(V @ V.T, want @ want.T, atol=1e-10)


def test_numeric_eta_has_no_master():
    X = _stream(T=30)
    learner = opf.OnlinePCA(2, eta=1.0, random_state=0).fit(X)
    assert learner.limit_weight_ == 0.0 and learner.master_gap_ == 0.0
    assert learner.__dict__.get("_limit") is None


def test_pickle_and_split_mid_stream():
    """The master's state is the learner's: a pickled learner resumed, and a
    stream split anywhere, give the same numbers bit for bit."""
    X = _stream(T=90)
    whole = opf.OnlineAdaptivePCA(3, random_state=1).fit(X)
    part = opf.OnlineAdaptivePCA(3, random_state=1).fit(X[:37])
    part = pickle.loads(pickle.dumps(part))
    part.partial_fit(X[37:50])
    for x in X[50:]:
        part.learn_one(x)
    np.testing.assert_array_equal(part.expected_losses_, whole.expected_losses_)
    np.testing.assert_array_equal(part.realized_losses_, whole.realized_losses_)
    np.testing.assert_array_equal(part._limit, whole._limit)


def test_bad_row_leaves_the_master_unchanged():
    X = _stream(T=30)
    learner = opf.OnlinePCA(2, random_state=0).fit(X)
    before = learner._limit.copy()
    bad = X[:3].copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="X"):
        learner.partial_fit(bad)
    np.testing.assert_array_equal(learner._limit, before)


def test_huge_and_tiny_rows_stay_finite():
    """Rows spanning 1e-140 .. 1e140 in norm (eta="auto" refuses rows
    outside 2**-480 .. 2**480, tests/test_scale_edges.py): the master's and
    the limit's state stay finite (values kept relative to the level,
    differences of losses accumulated as such)."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(60, 5)) * 10.0 ** rng.uniform(-140, 140, size=(60, 1))
    learner = opf.OnlinePCA(2, random_state=0).fit(X)
    assert np.isfinite(learner._limit).all()
    assert np.isfinite(learner.expected_losses_).all()
    assert 0.0 <= learner.limit_weight_ <= 1.0


def _adversarial_losses(cycles=20, big=1000.0):
    """A takes the lead one unit at a time until the master's weight of A
    rounds to 1, then loses `big` in one trial: the trial a rounded weight
    would skip (the master's weights are kept as logits)."""
    ha, hb = [], []
    for _ in range(cycles):
        ha += [0.0] * 60
        hb += [1.0] * 60
        ha.append(big)
        hb.append(0.0)
    return np.array(ha), np.array(hb)


@pytest.mark.parametrize("case", ["adversarial", "random", "scales"])
def test_master_bound_on_given_losses(case):
    """L <= min(L_A, L_B) + 2 Delta^M at every trial, and Delta^M within
    AdaHedge's worst-case bound (ranges max(h_a, h_b)), for the compiled
    master and the oracle alike, and the two agree."""
    rng = np.random.default_rng(7)
    if case == "adversarial":
        ha, hb = _adversarial_losses()
    elif case == "random":
        ha, hb = rng.random(500), rng.random(500) * 1.2
    else:  # losses spanning 1e-300 .. 1e300 (gaps subnormal, rates overflowing)
        s = 10.0 ** rng.uniform(-300, 300, 300)
        ha, hb = s * rng.random(300), s * rng.random(300)
    out, state = opf._kernels._master_run(ha, hb)
    ref_master = ref.Master()
    ref_out = [ref_master.step(a, b) for a, b in zip(ha, hb)]
    np.testing.assert_allclose(out, ref_out, rtol=1e-9, atol=0)
    assert np.isfinite(out).all() and np.isfinite(state).all()
    L, LA, LB = np.cumsum(out), np.cumsum(ha), np.cumsum(hb)
    gap = state[2]
    assert (L[-1] - min(LA[-1], LB[-1])) <= 2 * gap * (1 + 1e-12) + 1e-300
    ranges = np.maximum(ha, hb)
    top = ranges.max()  # (scaled: the squares of the "scales" case overflow)
    bound = top * (np.sqrt(np.log(2) * np.sum((ranges / top) ** 2) / 4)
                   + 2 / 3 * np.log(2) + 1)
    assert gap <= bound * (1 + 1e-12)
    # every prefix
    for T in range(1, len(ha), 37):
        o, st = opf._kernels._master_run(ha[:T], hb[:T])
        assert o.sum() - min(ha[:T].sum(), hb[:T].sum()) <= 2 * st[2] * (1 + 1e-12) + 1e-300


def test_a_large_row_does_not_freeze_the_limit():
    """One row 1e7 times the others: the limit learner still keeps k
    directions afterwards (the tolerance of joining the level follows each
    update's scale, not the deepest value), as the eigh oracle does."""
    rng = np.random.default_rng(3)
    n, k = 6, 2
    X = rng.normal(size=(300, n)) * np.array([0, 3, 1, .3, .3, .3])
    X[0] = 1e7 * np.eye(n)[0]
    learner = opf.OnlinePCA(k, state="dense", random_state=0).fit(X)
    _, U = learner._limit_parts()
    assert U.shape[1] == k
    _, M = ref.limit_meg(X, k, state=True)
    v, Q = np.linalg.eigh(M)
    np.testing.assert_allclose(U @ U.T, Q[:, :k] @ Q[:, :k].T, atol=1e-8)


def test_mid_stream_changes_restart_the_master():
    """set_params mid-stream: a numeric eta drops the master; "auto" again,
    or a new n_components, starts a fresh one (the learner's own state
    continues); components_ and transform follow the new k."""
    X = _stream(T=100, n=6, seed=2)
    learner = opf.OnlinePCA(2, random_state=0).fit(X[:40])
    learner.set_params(n_components=3)
    learner.partial_fit(X[40:60])
    assert learner.components_.shape == (3, 6) and learner.transform(X[:2]).shape == (2, 3)
    V = learner.components_
    np.testing.assert_allclose(V @ V.T, np.eye(3), atol=1e-12)
    assert learner._limit.size == 6 + 3 + 3 * 6
    learner.set_params(eta=1.0)
    learner.partial_fit(X[60:70])
    assert learner.__dict__.get("_limit") is None and learner.limit_weight_ == 0.0
    learner.set_params(eta="auto")
    learner.partial_fit(X[70:71])
    fresh = opf.OnlinePCA(3, random_state=0).fit(X[70:71])
    np.testing.assert_array_equal(learner._limit[4:], fresh._limit[4:])  # the limit restarted
    for x in X[71:]:
        learner.learn_one(x)
    assert learner.n_trials_ == 100 and 0.0 <= learner.limit_weight_ <= 1.0
