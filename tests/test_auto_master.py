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


def _limit_parts(learner):
    """(weight of the limit learner B, its directions, its tie group or None)."""
    master = learner._master_view()
    return (master.limit_weight, *master.limit_parts())


def _leader_parts(learner):
    """(weight of Follow the Leader on the sketch F, its directions)."""
    master = learner._master_view()
    return master.leader_weight, master.leader_directions()


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
    _, U, _ = _limit_parts(learner)
    _, M = ref.limit_meg(X, k, state=True)
    v, Q = np.linalg.eigh(M)
    assert U.shape == (8, k)
    np.testing.assert_allclose(U @ U.T, Q[:, :k] @ Q[:, :k].T, atol=1e-10)
    sketch = learner._master_view().b_sketch  # B's: [c, r, nb, values, ...] (src/limit.h)
    np.testing.assert_allclose(sketch[3:3 + k], v[:k] - v[k], rtol=1e-10,  # level: d-th largest
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
    """E[P] of sample_projection = w_A (I - d W_A) + w_B U U^T + w_F V V^T
    with w the master's weights, U the limit's k directions and V the k
    leading directions of the sketch."""
    X = _stream(T=80, n=6, seed=10)  # a stream where the three learners share the weight
    learner = opf.OnlinePCA(2, state="dense", random_state=0).fit(X)
    wb, U, _ = _limit_parts(learner)
    wf, V = _leader_parts(learner)
    wa = 1 - wb - wf
    assert U.shape[1] == 2 and V.shape[1] >= 2 and max(wa, wb, wf) < 0.8, (wa, wb, wf)
    d = 6 - 2
    V = V[:, :2]
    mean = wa * (np.eye(6) - d * learner.density_) + wb * U @ U.T + wf * V @ V.T
    rng = np.random.default_rng(5)
    draws = np.mean([learner.sample_projection(rng) for _ in range(4000)], axis=0)
    np.testing.assert_allclose(draws, mean, atol=0.05)


def test_components_follow_the_master():
    """components_ are those of the learner the master weighs most: the
    limit's directions, the sketch's k leading ones, or the rate learner's
    (the k eigenvectors of W with the smallest eigenvalues)."""
    for seed in range(6):
        X = _stream(T=120, n=7, seed=seed)
        learner = opf.OnlinePCA(2, state="dense", random_state=0).fit(X)
        wb, U, _ = _limit_parts(learner)
        wf, F = _leader_parts(learner)
        V = learner.components_.T
        lam, Q = np.linalg.eigh(learner.density_)
        want = Q[:, :2]
        if wb > max(1 - wb - wf, wf):
            want = U
        elif wf > max(1 - wb - wf, wb):
            want = F[:, :2]
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
    _, U, _ = _limit_parts(learner)
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
    assert learner._limit.size == learner._limit_len(learner.get_params(), 6)
    learner.set_params(eta=1.0)
    learner.partial_fit(X[60:70])
    assert learner.__dict__.get("_limit") is None and learner.limit_weight_ == 0.0
    learner.set_params(eta="auto")
    learner.partial_fit(X[70:71])
    fresh = opf.OnlinePCA(3, random_state=0).fit(X[70:71])
    np.testing.assert_array_equal(learner._limit[8:], fresh._limit[8:])  # the sketches restarted
    for x in X[71:]:
        learner.learn_one(x)
    assert learner.n_trials_ == 100 and 0.0 <= learner.limit_weight_ <= 1.0


def _axis_rows(T=60):
    """Axis-aligned rows of n = 4 (e0, 2 e1, 3 e0, e1, ...): the limit's
    eigenvalues tie at the boundary again and again."""
    coef = [1.0, 2.0, 3.0, 1.0, 2.0, 1.0, 3.0]
    return np.array([coef[t % 7] * np.eye(4)[(t % 2) if t % 5 else 2 + t % 3 // 2]
                     for t in range(T)])


@pytest.mark.parametrize("case", ["axis", "one-hot", "one-hot-scaled"])
def test_limit_tie_rule_is_the_oracles(case):
    """A tie at the d-th eigenvalue of the limit's M shares the remaining
    mass (1/d on the directions strictly above it), as the eigh oracle
    ``limit_meg``: the losses and the master's weight match on streams
    whose eigenvalues tie exactly (axis-aligned rows, one-hot rows).  The
    compiled limit used to flatten M right after each update, giving the
    tie group 1/(n - r) each (one-hot: total 228.6 against 227.2)."""
    rng = np.random.default_rng(0)
    if case == "axis":
        X, k = _axis_rows(), 1
    else:
        X, k = np.eye(20)[rng.integers(0, 20, 300)], 5
        if case == "one-hot-scaled":
            X = X * rng.choice([1.0, 2.0, 3.0], size=(300, 1))
    for state in ("dense", "clustered"):
        learner = opf.OnlinePCA(k, state=state, random_state=0).fit(X)
        losses, _, _, weight = ref.auto_pca(X, k)
        scale = (X * X).sum(axis=1)
        np.testing.assert_allclose(learner.expected_losses_ / scale, losses / scale,
                                   rtol=0, atol=1e-9)
        np.testing.assert_allclose(learner.limit_weight_, weight, rtol=1e-9, atol=1e-12)


def test_limit_tie_group_draws():
    """Right after a tie forms, the limit's corner keeps its r directions
    below the level and k - r drawn uniformly in the tie group: the mean of
    the limit learner's sampled projections is P_below + (k - r)/c P_tie."""
    rng = np.random.default_rng(0)
    X = np.eye(20)[rng.integers(0, 20, 300)]
    k = 5
    for T in range(20, 300):
        learner = opf.OnlinePCA(k, state="dense", random_state=0).fit(X[:T])
        p, U, tie = _limit_parts(learner)
        if tie is not None:
            break
    assert tie is not None
    r, c = U.shape[1], tie.shape[1]
    assert r + c == k + 1 and c >= 2
    learner._limit[5:8] = [0.0, 1.0, 0.0]  # the master's weights: the limit learner only
    draws = np.mean([learner.sample_projection(s) for s in range(3000)], axis=0)
    want = U @ U.T + (k - r) / c * tie @ tie.T
    np.testing.assert_allclose(draws, want, atol=0.05)


def _steep_stream(T, n, decay, seed):
    """Rows in a random basis with standard deviations 10^(-decay i): the
    Gram matrix of F's refresh squares that spread."""
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.normal(size=(n, n)))[0]
    X = (rng.normal(size=(T, n)) * 10.0 ** (-decay * np.arange(n))) @ Q.T
    return X / np.linalg.norm(X, axis=1).max()


@pytest.mark.parametrize("learner", ["OnlinePCA", "CenteredOnlinePCA"])
@pytest.mark.parametrize("n,k,decay", [(20, 2, None), (9, 3, None), (60, 2, 0.0),
                                       (60, 2, 0.25), (60, 5, 0.4)])
def test_leader_sketch_is_frequent_directions(learner, n, k, decay):
    """F, Follow the Leader on a lagged sketch of ell = leader_ell(n, k) =
    min(n, max(4k, 24)) directions: its sketch S at its last refresh and its
    buffer P are the oracle's (eigh every refresh; at n = 60 > 2 ell the
    refresh is the Gram matrix's, whose squared spread the steep streams
    test), the directions its prediction reads orthonormal, and FD's guarantee 0 <= C - (S + P)
    <= ||C - C_k||_F^2 / (ell - k) holds against the learner's scatter C =
    sum f_t y_t y_t^T (numpy.linalg.eigh), as does 0 <= (C - P) - S for the
    rows S absorbed; ell = n: S + P = C, exact Follow the Leader."""
    X = (_stream(T=300, n=n, seed=4) if decay is None else _steep_stream(300, n, decay, 4))
    X = X + (0.2 if learner == "CenteredOnlinePCA" else 0.0)
    est = getattr(opf, learner)(k, state="dense", random_state=0).fit(X)
    if learner == "CenteredOnlinePCA":
        Y, f = ref.centered_instances(X)
    else:
        Y, f = X, np.ones(X.shape[0])
    ell = ref.leader_ell(n, k)
    assert opf._kernels.leader_ell(n, k) == ell
    master = est._master_view()
    sigma, rows = master.leader_values()
    V = _leader_parts(est)[1]
    # the rows a prediction reads (down to the k+1-th: no ties here) to
    # rounding; the others as the Gram matrix leaves them, to ~eps
    # sigma_1 / sqrt(sigma_i sigma_j)
    top = min(k + 1, V.shape[1])
    np.testing.assert_allclose(V[:, :top].T @ V[:, :top], np.eye(top), rtol=0, atol=1e-13)
    loose = 1e-13 + 1e-14 * sigma[0] / np.sqrt(np.outer(sigma, sigma))
    assert (np.abs(V.T @ V - np.eye(V.shape[1])) <= loose).all()
    S, P = (V * sigma) @ V.T, rows.T @ rows
    _, S_ref, P_ref = ref.sketch_leader(Y, k, ell, weights=f, state=True)
    scale = np.abs(S_ref + P_ref).max()
    np.testing.assert_allclose(P, P_ref, rtol=0, atol=1e-15 * scale)
    np.testing.assert_allclose(S, S_ref, rtol=0, atol=1e-10 * scale)
    C = (Y * f[:, None]).T @ Y
    tail = np.sort(np.linalg.eigvalsh(C))[::-1][k:]
    for gap in (np.linalg.eigvalsh(C - S - P), np.linalg.eigvalsh(C - P - S)):
        assert gap.min() >= -1e-10 * scale
        if ell < n:
            assert gap.max() <= np.sum(tail) / (ell - k) * (1 + 1e-9)  # the tail's sum
        else:
            assert gap.max() <= 1e-10 * scale


@pytest.mark.parametrize("case", ["adversarial", "random", "scales", "underflow"])
def test_master3_against_the_oracle_and_its_bound(case):
    """The master over three learners (``opf_master3_commit``) against the
    oracle ``reference._auto_rate.MasterK`` (log-weights: a weight that
    underflows still counts in the mix loss of a trial where its learner is
    far ahead -- the trial-9 case of river's ImageSegments, centered, k =
    10), and L <= min_i L_i + 2 Delta^M with Delta^M within AdaHedge's
    worst-case bound (D = log 3), at every prefix."""
    rng = np.random.default_rng(11)
    if case == "adversarial":
        ha, hb = _adversarial_losses()
        H = np.column_stack([ha, hb, 0.5 * (ha + hb)])
    elif case == "random":
        H = rng.random((500, 3)) * [1.0, 1.1, 0.95]
    elif case == "scales":
        H = 10.0 ** rng.uniform(-300, 300, (300, 1)) * rng.random((300, 3))
    else:  # A's weight underflows (a lead 1e6 times the gap), then A is far ahead
        H = np.array([[1e-6, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 1.0], [0.0, 1.0, 1.0],
                      [0.5, 0.2, 0.3]])
    H = np.ascontiguousarray(H)
    out, state = opf._kernels._master3_run(H)
    oracle = ref.MasterK(3)
    np.testing.assert_allclose(out, [oracle.step(h) for h in H], rtol=1e-9, atol=0)
    np.testing.assert_allclose(state[1], oracle.gap, rtol=1e-9)
    assert np.isfinite(out).all() and np.isfinite(state).all()
    for T in range(1, H.shape[0] + 1, max(1, H.shape[0] // 13)):
        o, st = opf._kernels._master3_run(np.ascontiguousarray(H[:T]))
        assert o.sum() - H[:T].sum(axis=0).min() <= 2 * st[1] * (1 + 1e-12) + 1e-300
        ranges = H[:T].max(axis=1)
        top = ranges.max()
        if top > 0:
            bound = top * (np.sqrt(np.log(3) * np.sum((ranges / top) ** 2) / 4)
                           + 2 / 3 * np.log(3) + 1)
            assert st[1] <= bound * (1 + 1e-12)


def test_a_large_row_does_not_freeze_the_leader():
    """One row 1e7 times the others: F's refresh still keeps the directions
    the later rows build (its tolerance is 1e-12 of the energy it absorbs
    plus 64 eps of its largest value; 1e-12 of the largest dropped every
    direction below 100 here, leaving F one), and they are the oracle's."""
    rng = np.random.default_rng(3)
    n, k = 30, 2
    X = rng.normal(size=(300, n)) * np.linspace(0.3, 0.03, n)
    X[:, 0] = 0.0  # the later rows orthogonal to the large one: a gap of 1
    X[0] = 1e7 * np.eye(n)[0]  # in 1e14 is then not lost to rounding
    learner = opf.OnlinePCA(k, state="dense", random_state=0).fit(X)
    sigma, _ = learner._master_view().leader_values()
    V = _leader_parts(learner)[1]
    ell = ref.leader_ell(n, k)
    assert len(sigma) > k + 1 and sigma[1] < 100.0
    _, S, _ = ref.sketch_leader(X, k, ell, state=True)
    v, Q = np.linalg.eigh(S)
    top = Q[:, ::-1][:, :k + 1]  # the largest first
    # to the rounding of values beside 1e14 (eps 1e14 ~ 2e-2 on gaps of ~1)
    np.testing.assert_allclose(V[:, :k + 1] @ V[:, :k + 1].T, top @ top.T, atol=1e-3)
    np.testing.assert_allclose(sigma[1:k + 1], v[::-1][1:k + 1], rtol=1e-3)


def _limit_basis(learner):
    """B's basis rows in use, Bb[:nb] (nb x n; src/limit.h)."""
    sk, n, k = learner._master_view().b_sketch, learner.n_features_in_, learner.n_components
    cap = 2 * (k + 1)
    start = 4 + k + (k + 1) * cap
    return sk[start:start + cap * n].reshape(cap, n)[:int(sk[2])]


def _in_span_stream(case):
    """Rows that lie, after a few, in the span of those before: their part
    outside B's basis is the rounding of the projections that find it."""
    rng = np.random.default_rng(7)
    if case == "rank 3":
        X = rng.normal(size=(400, 3)) @ rng.normal(size=(3, 40))
    elif case == "repeated":  # five rows repeated, shuffled
        X = np.repeat(rng.normal(size=(5, 30)), 80, axis=0)
        rng.shuffle(X)
    else:  # 8x8 tiles of a texture, then of an image upscaled 2x (16-dim span)
        from test_clustered_accuracy import texture_then_upscaled

        X = texture_then_upscaled()
    return X / np.linalg.norm(X, axis=1).max()


@pytest.mark.parametrize("cls", [opf.OnlinePCA, opf.OnlineAdaptivePCA, opf.CenteredOnlinePCA])
@pytest.mark.parametrize("case,k", [("rank 3", 5), ("repeated", 4), ("upscaled", 20)])
def test_limit_basis_stays_orthonormal_on_rows_in_its_span(cls, case, k):
    """B drops a row's part outside its basis that is the rounding of the
    projections or the basis's own non-orthogonality (src/limit.c,
    sketch_prepare): appended, it is orthogonal to the basis only to
    about that error times |x| / |r|, and each row in the span multiplies
    it again.  Without the thresholds B's basis and directions were 1.0 off
    orthonormal within a few hundred rows of the first two streams; on the
    upscaled tiles at k = 20 (B keeps more directions than the image
    spans) the released thresholds let it go from 1e-14 to 0.98 in 30 rows
    and B's expected loss reach 1.9 |x|^2.  Checked after every chunk of 25
    rows: B's basis and its r directions orthonormal, F's leading
    directions too; the losses at most |x|^2, as the oracle's."""
    X = _in_span_stream(case)
    learner = cls(k, random_state=0)
    for s in range(0, len(X), 25):
        learner.partial_fit(X[s:s + 25])
        Bb = _limit_basis(learner)
        np.testing.assert_allclose(Bb @ Bb.T, np.eye(len(Bb)), rtol=0, atol=1e-12)
        _, U, tie = _limit_parts(learner)
        if tie is not None:
            U = np.hstack([U, tie])
        np.testing.assert_allclose(U.T @ U, np.eye(U.shape[1]), rtol=0, atol=1e-12)
        _, V = _leader_parts(learner)
        V = V[:, :k + 1]
        np.testing.assert_allclose(V.T @ V, np.eye(V.shape[1]), rtol=0, atol=1e-12)
    Y = ref.centered_instances(X)[0] if cls is opf.CenteredOnlinePCA else X
    energy = (Y * Y).sum(axis=1)
    assert np.all(learner.expected_losses_ <= energy * (1 + 1e-12) + 1e-300)
    if case != "upscaled":  # its 1,400 rows at k = 20: the oracle is in the slow tier
        _check_auto_oracle(learner, cls, X, k, energy)


def _check_auto_oracle(learner, cls, X, k, energy):
    if cls is opf.CenteredOnlinePCA:
        losses = ref.auto_centered(X, k)[0]
    elif cls is opf.OnlineAdaptivePCA:  # fixed share at its alpha
        losses = ref.auto_pca(X, k, "fixed", learner.alpha)[0]
    else:
        losses = ref.auto_pca(X, k)[0]
    np.testing.assert_allclose(learner.expected_losses_, losses, rtol=0,
                               atol=1e-9 * energy.max())


@pytest.mark.slow
@pytest.mark.parametrize("cls", [opf.OnlinePCA, opf.OnlineAdaptivePCA, opf.CenteredOnlinePCA])
@pytest.mark.parametrize("k", [5, 20])
def test_upscaled_tiles_against_the_oracle(cls, k):
    """The upscaled tiles (rows in a 16-dimensional span after a texture of
    few patterns) against the three-learner oracle: B's values there sit
    near its level, where the oracle's tie tolerance of 1e-9 max|M| made it
    differ by 2.3e-6-4.5e-5 of the largest |x|^2 (docs, *Ties*); at 1e-12
    max|M| they agree to ~1e-10."""
    X = _in_span_stream("upscaled")
    learner = cls(k, random_state=0).fit(X)
    Y = ref.centered_instances(X)[0] if cls is opf.CenteredOnlinePCA else X
    _check_auto_oracle(learner, cls, X, k, (Y * Y).sum(axis=1))


def _degenerate_stream(kind, rng):
    """Random streams whose rows keep falling in the span of earlier ones."""
    n = int(rng.integers(6, 48))
    T = int(rng.integers(200, 700))
    if kind == "low rank":
        r = int(rng.integers(1, min(n, 12)))
        X = rng.normal(size=(T, r)) @ rng.normal(size=(r, n))
    elif kind == "multiples":  # each row a multiple of an earlier one, now and then a new one
        X = rng.normal(size=(T, n))
        for t in range(1, T):
            if rng.random() < 0.9:
                X[t] = rng.choice([-2.0, -1.0, 0.5, 1.0, 3.0]) * X[rng.integers(0, t)]
    else:  # integer tiles of a few patterns, then of an upscaled smooth image
        side = int(rng.choice([2, 3, 4]))
        n = (2 * side) ** 2
        base = rng.integers(0, 255, size=(int(rng.integers(2, 6)), n))
        A = base[rng.integers(0, len(base), T // 2)] + rng.integers(-1, 2, size=(T // 2, n))
        Z = np.cumsum(rng.integers(-3, 4, size=(T - T // 2, side * side)), axis=0) % 60
        up = np.kron(Z.reshape(-1, side, side), np.ones((2, 2))).reshape(-1, n)
        X = np.vstack([A, up]).astype(float)
    return X / np.linalg.norm(X, axis=1).max(), n


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["low rank", "multiples", "tiles"])
def test_defaults_keep_their_bound_on_degenerate_streams(kind):
    """Forty random streams of each kind, a random k, the three PCA
    learners at their defaults: every expected loss at most the instance's
    energy (d tr(W x x^T) <= |x|^2 for any capped W), B's basis orthonormal
    at the end, and the losses of 2^-20 X those of X times 2^-40 to 1e-9 of
    the largest (a broken basis made them differ by the largest loss)."""
    rng = np.random.default_rng(["low rank", "multiples", "tiles"].index(kind))
    for _ in range(40):
        X, n = _degenerate_stream(kind, rng)
        k = int(rng.integers(1, n - 1))
        for cls in (opf.OnlinePCA, opf.OnlineAdaptivePCA, opf.CenteredOnlinePCA):
            learner = cls(k, random_state=0).fit(X)
            Y = ref.centered_instances(X)[0] if cls is opf.CenteredOnlinePCA else X
            energy = (Y * Y).sum(axis=1)
            h = learner.expected_losses_
            assert np.all(h <= energy * (1 + 1e-12) + 1e-300), (cls.__name__, n, k)
            Bb = _limit_basis(learner)
            np.testing.assert_allclose(Bb @ Bb.T, np.eye(len(Bb)), rtol=0, atol=1e-12)
            scaled = cls(k, random_state=0).fit(X * 2.0 ** -20).expected_losses_
            np.testing.assert_allclose(scaled * 2.0 ** 40, h, rtol=0, atol=1e-9 * h.max())
