"""Scale-freeness at the edges of the accepted range (issue 35, item 5).

``eta="auto"`` and Follow the Leader are scale-free: ``c X`` gives ``c**2``
times the losses of ``X``.  On main this held to 1e-13 for c in [1e-150,
1e146] on unit rows, but at c = 1e-155 (squares subnormal) OnlinePCA was off
by 2.6e-2 of the largest loss, CenteredOnlinePCA by 1.4, and at c = 1e150
(the limit learner's values clamped at 2**1000) by 0.62, silently.  Now the
accepted rows are 0 or ``2**-480 <= |x| <= 2**480`` (``learners._scale``):
inside, exact at both edges; outside, a ``ValueError`` naming X, the row and
the range, with the learner unchanged.  OnlineKernelPCA (eta="auto") takes
kernel values ``k(x, x)`` of 0 or at least ``2**-480``.

Oracle: the learner on the same mantissas in the ordinary range -- ``Y``
against ``Y 2**j`` for a power of two that brings it near 1, whose losses
are those of ``Y`` times ``4**j`` to rounding (powers of two scale every
float64 operation exactly away from underflow and overflow).
"""

import copy

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import onlinepca_fast as opf

LO, HI = -480, 480

SCALE_FREE = {
    "OnlinePCA": lambda st: opf.OnlinePCA(3, state=st, random_state=0),
    "OnlineAdaptivePCA": lambda st: opf.OnlineAdaptivePCA(3, state=st, random_state=1),
    "CenteredOnlinePCA": lambda st: opf.CenteredOnlinePCA(3, state=st, random_state=2),
    "Uncentered": lambda st: opf.CenteredOnlinePCA(3, centered=False, state=st,
                                                   random_state=3),
    "FollowTheLeader": lambda st: opf.FollowTheLeader(3, state=st),
    "FollowTheLeader-centered": lambda st: opf.FollowTheLeader(3, centered=True, state=st),
}
STATES = ["dense", "clustered"]


def rows(T=100, n=12, seed=0):
    """Rows of norms in [1/2, 1] (a shifting low-rank stream plus noise)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T, 4)) @ rng.normal(size=(4, n)) + 0.3 * rng.normal(size=(T, n))
    X[T // 2:, :3] *= 3.0
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X * rng.uniform(0.5, 1.0, (T, 1))


def assert_scaled_losses(big, base, j):
    """big's losses are base's times 4**j, to 1e-13 of the largest."""
    scale = 4.0 ** j
    for a, b in ((big.expected_losses_, base.expected_losses_),
                 (big.realized_losses_, base.realized_losses_)):
        assert_allclose(a / scale, b, rtol=0, atol=1e-13 * np.max(np.abs(b)))
    Pa = big.components_.T @ big.components_
    Pb = base.components_.T @ base.components_
    assert np.linalg.norm(Pa - Pb, 2) <= 1e-9


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("name", list(SCALE_FREE))
@pytest.mark.parametrize("j", [LO + 1, LO + 3, -200, 200, HI - 2, HI])
def test_exact_at_the_edges_of_the_range(name, state, j):
    """2**j X with every row inside the range (norms 2**(j-1) .. 2**j): the
    losses of X times 4**j (main: off by up to 1.4 near the bottom edge,
    0.65 near the top)."""
    X = rows()
    make = SCALE_FREE[name]
    base = make(state).fit(X)
    big = make(state).fit(2.0 ** j * X)
    assert_scaled_losses(big, base, j)


@pytest.mark.parametrize("name", list(SCALE_FREE))
@pytest.mark.parametrize("c", [3.3e-145, 1.7e-120, 1e-50, 7e33, 2.5e100, 3e144])
def test_any_factor_inside_the_range(name, c):
    """c X for any c (not a power of two): the same numbers as c X brought
    near 1 by a power of two, to rounding."""
    X = rows(seed=1)
    X = X / np.min(np.linalg.norm(X, axis=1)) if c < 1 else X
    Y = c * X
    assert np.all((np.linalg.norm(Y, axis=1) >= 2.0 ** LO)
                  & (np.linalg.norm(Y, axis=1) <= 2.0 ** HI))
    j = int(np.round(np.log2(c)))
    make = SCALE_FREE[name]
    assert_scaled_losses(make("auto").fit(Y), make("auto").fit(Y / 2.0 ** j), j)


def outside(kind, n=12, seed=2):
    """A unit-ish row just outside the range, below or above it."""
    x = rows(1, n, seed)[0]
    x /= np.linalg.norm(x)
    return x * (2.0 ** LO * (1 - 2.0 ** -20) if kind == "below" else 2.0 ** HI * (1 + 2.0 ** -20))


def snapshot(learner):
    return (learner.n_trials_, learner.expected_losses_.copy(),
            learner.realized_losses_.copy(), learner.components_.copy())


@pytest.mark.parametrize("kind", ["below", "above"])
@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("name", list(SCALE_FREE))
def test_a_row_outside_the_range_is_refused_and_nothing_changes(name, state, kind):
    X = rows(seed=3)
    make = SCALE_FREE[name]
    learner = make(state).fit(X[:40])
    twin = copy.deepcopy(learner)
    before = snapshot(learner)
    batch = X[40:60].copy()
    batch[7] = outside(kind)
    with pytest.raises(ValueError, match=r"X row 7 has norm .* 2\*\*-480 <= \|x\| <= 2\*\*480"):
        learner.partial_fit(batch)
    with pytest.raises(ValueError, match=r"x row 0 has norm .* 2\*\*-480"):
        learner.learn_one(outside(kind))  # learn_one's short path declines it
    with pytest.raises(ValueError, match=r"X row 0"):
        make(state).fit(outside(kind)[np.newaxis])
    after = snapshot(learner)
    assert after[0] == before[0]
    for a, b in zip(after[1:], before[1:]):
        assert_array_equal(a, b, strict=True)
    # and it continues as if the refused calls had not been made
    learner.partial_fit(X[60:])
    twin.partial_fit(X[60:])
    assert_array_equal(learner.expected_losses_, twin.expected_losses_, strict=True)
    assert_array_equal(learner.realized_losses_, twin.realized_losses_, strict=True)


@pytest.mark.parametrize("name", list(SCALE_FREE))
def test_the_issue_factors_are_refused_zero_rows_accepted(name):
    """c = 1e-155 and 1e150 on unit rows (main: wrong numbers); 0 rows and
    rows at the edges are accepted, also one at a time."""
    X = rows(seed=4)
    make = SCALE_FREE[name]
    for c in (1e-155, 1e150):
        with pytest.raises(ValueError, match="outside the range"):
            make("auto").fit(c * X)
    learner = make("auto").fit(np.vstack([X[:5], np.zeros((2, 12)), X[5:10]]))
    for x in (np.zeros(12), 2.0 ** LO * X[11] / np.linalg.norm(X[11]),
              2.0 ** HI * X[12] / np.linalg.norm(X[12])):
        learner.learn_one(x)
    assert learner.n_trials_ == 15


def test_a_numeric_eta_keeps_its_own_bound():
    """Not scale-free: rows beyond 2**480 within eta |x|^2 <= 2**1020, and
    tiny rows, are accepted as before."""
    X = rows(seed=5)
    for c in (2.0 ** -500, 2.0 ** 500):
        for learner in (opf.OnlinePCA(3, eta=1.0, random_state=0),
                        opf.CenteredOnlinePCA(3, eta=1.0, random_state=0)):
            learner.fit(c * X)
            assert np.isfinite(learner.expected_losses_).all()


def test_kernel_pca_linear_at_the_edges():
    """OnlineKernelPCA, linear kernel, eta="auto": kernel values k(x, x) of
    2**-480 .. 2**-478 give the losses of the unscaled rows times 2**-479
    (main: off by 2e-2 at kernel values ~1e-160); smaller ones are refused."""
    X = rows(60, 6, seed=6)
    X = X / np.max(np.linalg.norm(X, axis=1)) * np.sqrt(2.0)  # k(x, x) in (0.5, 2]
    X = X[np.linalg.norm(X, axis=1) >= 1.0]
    make = lambda: opf.OnlineKernelPCA(2, kernel="linear", random_state=0)
    base = make().fit(X)
    for j in (-240, 240):  # k(x, x) in [2**-480, 2**-478] and [2**480, 2**482]
        big = make().fit(2.0 ** j * X)
        assert_allclose(big.expected_losses_ / 4.0 ** j, base.expected_losses_, rtol=0,
                        atol=1e-13 * base.expected_losses_.max())
    learner = make().fit(X[:10])
    before = learner.expected_losses_.copy()
    bad = X[10:20].copy()
    bad[3] *= 2.0 ** -241
    with pytest.raises(ValueError, match=r"X row 3 has the kernel value .* 2\*\*-480"):
        learner.partial_fit(bad)
    assert_array_equal(learner.expected_losses_, before, strict=True)
    learner.partial_fit(np.zeros((1, 6)))  # k(x, x) = 0 is fine
    # a numeric eta is not scale-free: no lower bound
    opf.OnlineKernelPCA(2, kernel="linear", eta=1.0, random_state=0).fit(2.0 ** -300 * X)
