"""Follow the Leader is exact at every scale (issue 35, item 2).

FollowTheLeader projects trial t onto the top-k eigenvectors V of the
covariance so far, C^{t-1} = sum y y^T (centered: the scatter about the
running mean), and loses |y|^2 - |V^T y|^2.  It is scale-free: c X gives
c^2 the losses.  On main its state (A = -C) was floored 2**60 below its
largest entry, the finiteness floor of the exponential-weights learners: a
floor that ties the *largest* variances of C, i.e. Follow the Leader's
leading directions, once C spreads past ~1e18 -- rows of norm ~1e9 over a
few hundred trials.  ``components_`` were then 0.5-0.8 away from the top-k
subspace and the losses were no longer Follow the Leader's.  The clustered
state also merged every direction into its cluster (value 0) once C's
entries fell below 4 ulps of 1, i.e. for rows of norm below ~1e-8.

Oracle: ``numpy.linalg.eigh`` of the running sum, computed from the rows
(independently of the learner's recursions), every trial.  Trials are
compared where the top-k subspace of C^{t-1} is well defined (its gap to
the (k+1)-th eigenvalue at least 1e-6 of the largest), so that the
oracle's own rounding (eps ||C|| / gap) cannot decide the comparison.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import onlinepca_fast as opf


def low_rank_rows(T, n, rank, seed, scale, noise=1e-3):
    """The issue's stream: rows of a random rank-`rank` subspace with
    distinct variances, plus small noise of distinct variances, times scale."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(rank, n)) * np.geomspace(3.0, 1.0, rank)[:, None]
    X = rng.normal(size=(T, rank)) @ A + noise * rng.normal(size=(T, n)) * np.geomspace(
        1.0, 0.3, n)
    return X * scale


def ftl_oracle(X, k, centered):
    """Follow the Leader from scratch: (losses, leading-subspace gaps per
    trial, top-k projector of the final C)."""
    T, n = X.shape
    losses, gaps = np.empty(T), np.zeros(T)
    for t in range(T):
        past = X[:t]
        mean = past.mean(axis=0) if centered and t else np.zeros(n)
        Y = past - mean
        s = np.abs(Y).max() if t else 0.0
        if s > 0:
            w, V = np.linalg.eigh((Y / s).T @ (Y / s))  # scaled: no overflow at any scale
            w = w[::-1]
            gaps[t] = (w[k - 1] - w[k]) / w[0]
            top = V[:, ::-1][:, :k]
        else:
            top = np.zeros((n, k))
        y = X[t] - mean
        m = np.abs(y).max()
        if m > 0:
            yy = y / m
            losses[t] = (yy @ yy - np.sum((top.T @ yy) ** 2)) * m * m
        else:
            losses[t] = 0.0
    Y = X - (X.mean(axis=0) if centered else 0.0)
    s = np.abs(Y).max()
    _, V = np.linalg.eigh((Y / s).T @ (Y / s))
    top = V[:, -k:]
    return losses, gaps, top @ top.T


def check_against_oracle(ftl, X, k, centered):
    losses, gaps, P = ftl_oracle(X, k, centered)
    defined = gaps > 1e-6
    assert defined.sum() > X.shape[0] // 2
    row2 = np.max(X ** 2, axis=1) * X.shape[1]  # >= |y|^2 up to the center's move
    err = np.abs(ftl.expected_losses_ - losses)[defined]
    assert np.all(err <= 1e-9 * np.maximum(row2[defined], np.max(row2))), err.max()
    assert np.array_equal(ftl.expected_losses_, ftl.realized_losses_)
    C = ftl.components_
    assert np.linalg.norm(C.T @ C - P, 2) <= 1e-8


@pytest.mark.parametrize("state", ["dense", "clustered"])
@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_issue_stream_rows_of_magnitude_1e9(k, centered, state):
    """The issue's stream: rows ~1e9 over 300 trials, C spreading to ~1e21
    (main: components_ 0.5-0.8 away, losses off by 0.4 |x|^2)."""
    X = low_rank_rows(300, 12, 3, seed=k, scale=5e8)
    ftl = opf.FollowTheLeader(k, centered=centered, state=state).fit(X)
    assert np.linalg.eigvalsh(X.T @ X)[-1] > 2.0 ** 60
    check_against_oracle(ftl, X, k, centered)


@pytest.mark.parametrize("state", ["dense", "clustered"])
@pytest.mark.parametrize("scale", [2.0 ** -450, 1e-120, 2.0 ** -40, 1e-9, 1.0, 3e4, 1e12,
                                   2.0 ** 100, 1e80, 2.0 ** 450])
def test_exact_at_every_scale(scale, state):
    """From tiny to huge rows (the accepted range is 2**-480 <= |x| <=
    2**480): the same Follow the Leader, and c X (c a power of two) the
    same numbers times c^2, bit for bit."""
    n, k = 40, 4
    X = low_rank_rows(120, n, 6, seed=7, scale=1.0)
    X /= np.max(np.linalg.norm(X, axis=1))
    ftl = opf.FollowTheLeader(k, state=state).fit(scale * X)
    check_against_oracle(ftl, scale * X, k, False)
    exponent = int(np.round(np.log2(scale)))
    c = 2.0 ** exponent
    base = opf.FollowTheLeader(k, state=state).fit(X)
    scaled = opf.FollowTheLeader(k, state=state).fit(c * X)
    assert_allclose(scaled.expected_losses_, c * c * base.expected_losses_, rtol=1e-13,
                    atol=1e-13 * c * c * base.expected_losses_.max())
    assert_allclose(scaled.components_ @ scaled.components_.T, np.eye(k), atol=1e-12)
    P0, P1 = base.components_.T @ base.components_, scaled.components_.T @ scaled.components_
    assert np.linalg.norm(P0 - P1, 2) <= 1e-10


@pytest.mark.parametrize("state", ["dense", "clustered"])
def test_axis_rows_spread_over_560_decades(state):
    """Rows along the axes with magnitudes 1e-140 .. 1e140 (variances 1e-280
    .. 1e280): C is diagonal, so the exact Follow the Leader is known
    without eigh -- the k largest sums of squares -- and each trial's loss
    is y_j^2 unless its axis j is among them.  Main floored every variance
    more than 2**60 below the largest: k = 3 tied the three top axes."""
    rng = np.random.default_rng(3)
    n, k, T = 8, 3, 300
    exponents = np.array([140, 100, 60, 20, -20, -60, -100, -140])
    axes = rng.integers(0, n, T)
    X = np.zeros((T, n))
    X[np.arange(T), axes] = 10.0 ** exponents[axes] * rng.uniform(0.5, 2.0, T)
    ftl = opf.FollowTheLeader(k, state=state).fit(X)
    sums = np.zeros(n)
    for t in range(T):
        j = axes[t]
        if np.count_nonzero(sums) >= k:
            top = np.argsort(sums)[::-1][:k]
            expected = 0.0 if j in top else X[t, j] ** 2
            assert ftl.expected_losses_[t] == pytest.approx(expected, rel=1e-12, abs=0.0), t
        sums[j] += X[t, j] ** 2
    top = np.argsort(sums)[::-1][:k]
    assert_allclose(np.abs(ftl.components_), np.eye(n)[top], atol=1e-12)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no floor reached: no warning
        assert_allclose(ftl.explained_variance_, sums[top] / T, rtol=1e-12)


@pytest.mark.parametrize("state", ["dense", "clustered"])
@pytest.mark.parametrize("c", [1e80, 1e120, 2.0 ** 440])
def test_two_rows_spread_past_2_to_500(c, state):
    """A row of norm c then one of norm 1, n = 2 (a fuzzed stream CI found):
    the second update's secular block has rho w^2 ~ 1/c^2 of its gap, where
    LAPACK's order-2 solver (dlaed5) normalises its eigenvector by a sqrt of
    squares that overflow (components ~c^2): the eigenvectors came back 0.
    Now such a root is bisected and its vector formed by the Loewner
    formula.  Oracle: eigh of C = X^T X, whose eigenvalues are 1 apart
    from c^2 (well separated)."""
    X = np.array([[0.689413798, -0.724367735], [0.986849108, 0.161644169]])
    X[0] *= c
    ftl = opf.FollowTheLeader(1, state=state).fit(X)
    Q = ftl.eigenvectors_
    assert_allclose(Q.T @ Q, np.eye(2), atol=1e-14)
    _, V = np.linalg.eigh(X.T @ X)
    assert abs(abs(ftl.components_[0] @ V[:, 1]) - 1.0) <= 1e-14
    # the second loss: |x_2|^2 - (u^T x_2)^2 with u = x_1 / |x_1|
    u = X[0] / np.linalg.norm(X[0])
    assert ftl.expected_losses_[1] == pytest.approx(X[1] @ X[1] - (u @ X[1]) ** 2,
                                                    rel=1e-13)
    # the smaller eigenvalue of C (from the rows, not from eigh's rounding of c^2)
    small = (X[1] @ X[1]) - (u @ X[1]) ** 2
    assert -ftl.eigenvalues_[1] == pytest.approx(small, rel=1e-12)


MIXED = [("FollowTheLeader", lambda k, st: opf.FollowTheLeader(k, state=st)),
         ("uncentered Alg. 6", lambda k, st: opf.CenteredOnlinePCA(
             k, eta=1.0, centered=False, state=st))]


@pytest.mark.parametrize("state", ["dense", "clustered"])
@pytest.mark.parametrize("name, make", MIXED, ids=[m[0] for m in MIXED])
def test_rows_of_mixed_scale_keep_the_eigenvectors_orthonormal(name, make, state):
    """A row of norm ~4e8 then rows of norm ~4 and one of ~300 (found by
    fuzzing): the fourth update keeps poles 0, 4.9 and 19 beside one of
    1.3e17 (the learners' deflation tolerance keeps components that
    LAPACK's would drop).  dlaed4 took the root 6.8e4 from the far pole of
    its interval, where the differences of the small poles are lost: it
    came back 7e-6 off and the eigenvectors 2.6e-7 from orthonormal.  Now
    such a root is bisected.  Oracles: Q^T Q = I, and C Q = Q diag(c) with
    C = X^T X formed from the rows (a residual within the rounding of C)."""
    X = np.array([[0, -2e8, 0, -3e8], [-3, 0, 0, 2], [-3, 1, 1, -2], [0, 200, -200, 0]],
                 dtype=float)
    learner = make(2, state).fit(X)
    Q, lam = learner.eigenvectors_, learner.eigenvalues_[:learner.eigenvectors_.shape[1]]
    assert_allclose(Q.T @ Q, np.eye(Q.shape[1]), rtol=0, atol=1e-13)
    C = X.T @ X
    c = -lam if name == "FollowTheLeader" else -(lam - lam.max())  # A = -C (+ const)
    residual = np.abs(C @ Q - Q * c).max()
    assert residual <= 1e-13 * np.abs(C).max()


def mixed_scale_rows(seed):
    rng = np.random.default_rng(10_000 + seed)
    n, T = int(rng.integers(2, 12)), int(rng.integers(2, 20))
    mask = rng.random((T, n)) < 0.6
    return rng.normal(size=(T, n)) * mask * 10.0 ** rng.uniform(-12, 12, size=(T, 1))


@pytest.mark.parametrize("state", ["dense", "clustered"])
@pytest.mark.parametrize("name, make", MIXED, ids=[m[0] for m in MIXED])
def test_fuzzed_streams_of_mixed_scale_stay_orthonormal(name, make, state):
    """700 random streams, row norms spread over 24 decades, sparse rows
    (ties): the eigenvectors orthonormal to 1e-12 (on ab40bad some of these
    streams gave 3e-11 to 5e-9: the kept-pole roots above)."""
    worst = 0.0
    for seed in range(700):
        X = mixed_scale_rows(seed)
        Q = make(max(1, X.shape[1] // 2), state).fit(X).eigenvectors_
        if Q.shape[1]:
            worst = max(worst, np.abs(Q.T @ Q - np.eye(Q.shape[1])).max())
    assert worst <= 1e-12


@pytest.mark.parametrize("state", ["dense", "clustered"])
def test_alg6_keeps_its_documented_floor(state):
    """WK Alg. 6 keeps A = -log(n) I - eta C^t exactly while its spread
    stays below 2**60 (weights exp(-2**60) are 0 in float64 either way),
    and beyond that raises entries to 2**60 below the largest, as its
    docstring says; W = cap(exp(A)) is exact either way.  Axis rows: C^t
    is diagonal (uncentered), the exact A known without eigh."""
    rng = np.random.default_rng(5)
    n, k, T, eta = 6, 2, 120, 1.0
    for exponents in ([7, 5, 3, 1, 0, -1], [12, 6, 3, 1, 0, -1]):  # spread ~2**50, ~2**86
        axes = rng.integers(0, n, T)
        X = np.zeros((T, n))
        X[np.arange(T), axes] = 10.0 ** np.array(exponents)[axes] * rng.uniform(0.5, 2.0, T)
        pca = opf.CenteredOnlinePCA(k, eta=eta, centered=False, state=state,
                                    random_state=0).fit(X)
        exact = -np.log(n) - eta * np.sort(np.sum(X ** 2, axis=0))[::-1]  # ascending
        top = exact[-1]
        floored = np.maximum(exact, top - 2.0 ** 60)
        lam = np.sort(pca.full_eigensystem()[0])
        assert_allclose(lam, floored, rtol=1e-13)
        if exact[0] >= top - 2.0 ** 60:
            assert_allclose(lam, exact, rtol=1e-13)
        W = np.exp(reference_cap_log(exact, n - k))
        order = np.argsort(np.sum(X ** 2, axis=0))[::-1]
        D = np.zeros((n, n))
        D[order, order] = W
        assert_allclose(pca.density_, D, atol=1e-14)


def reference_cap_log(lam, d):
    from onlinepca_fast.reference import cap_log
    return cap_log(lam, d)
