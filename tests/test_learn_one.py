"""learn_one's short compiled path (``_kernels.RowPath``): it runs exactly the
trial of partial_fit, takes only rows that every check of the learner would
pass, and leaves everything else -- and the errors -- to the validating
path, with the learner's state unchanged.
"""

import pickle
import threading
import time

import numpy as np
import pytest
from learner_cases import LEARNERS, assert_same_state, make_data

import onlinepca_fast as opf

# (the clustered state's short path: test_clustered_state_takes_the_short_path...)
TRIAL_LOOP = [e for e in LEARNERS if e[0] != "OnlineKernelPCA" and "clustered" not in e[0]]
VECTOR_CASES = [e for e in TRIAL_LOOP if e[2] != "matrix"]


def _ids(entries):
    return [e[0] for e in entries]


def _taken(learner, x):
    """Whether the short path runs the trial on x (it is then done)."""
    path = learner.__dict__.get("_row_path")
    return path is not None and path.learn(x)


@pytest.mark.parametrize("entry", VECTOR_CASES, ids=_ids(VECTOR_CASES))
def test_short_path_takes_ordinary_rows_and_equals_partial_fit(entry):
    """Every row of an ordinary stream goes through the short path (so the
    bit-for-bit equality below is the short path's), crossing loss-buffer
    growth (16, 32, 64) and re-orthogonalisations every 7 trials."""
    _, make, kind = entry
    X = make_data(kind, 70, 3)
    def small():
        learner = make()
        if "reorthogonalize_every" in learner.get_params():
            learner.set_params(reorthogonalize_every=7)
        return learner
    batch = small().partial_fit(X)
    single = small().partial_fit(X[:1])
    assert single.__dict__.get("_row_path") is None  # built by learn_one, when used
    single.learn_one(X[1])  # validated: builds the short path
    assert all(_taken(single, x) for x in X[2:])
    assert_same_state(single, batch)


@pytest.mark.parametrize("make", [
    lambda: opf.OnlinePCA(2, eta=1e-3, state="clustered", random_state=0),
    lambda: opf.OnlinePCA(2, eta=1e-3, share="fixed", alpha=1e-3, state="clustered",
                          random_state=0),
    lambda: opf.CenteredOnlinePCA(3, eta=0.5, state="clustered", random_state=0),
    lambda: opf.FollowTheLeader(3, state="clustered"),
], ids=["OnlinePCA", "fixed-share", "CenteredOnlinePCA", "FollowTheLeader"])
def test_clustered_state_takes_the_short_path_until_it_needs_room(make):
    """The clustered state's learn_one runs its compiled trial in one call
    (issue 23); a trial that needs larger arrays (m passes the capacity,
    first 32) hands the row to the validating path, which grows them.
    Either way the numbers are partial_fit's, bit for bit."""
    rng = np.random.default_rng(2)
    X = rng.standard_normal((70, 48)) / 10.0  # every row adds a direction
    batch = make().partial_fit(X)
    single = make().partial_fit(X[:1])
    taken = [_taken(single, x) or single.learn_one(x) is None for x in X[1:]]
    assert sum(taken) >= 60 and not all(taken)  # the growth went the long way
    assert_same_state(single, batch)


@pytest.mark.parametrize("layout", ["strided", "readonly", "big-endian"])
def test_short_path_reads_any_float64_layout(layout):
    X = make_data("vector", 30, 4)
    batch = opf.OnlinePCA(2, random_state=0).partial_fit(X)
    single = opf.OnlinePCA(2, random_state=0).partial_fit(X[:1])
    wide = np.repeat(X, 2, axis=1)  # X[i] = wide[i, ::2]
    for i in range(1, 30):
        if layout == "strided":
            x = wide[i, ::2]
        elif layout == "readonly":
            x = X[i].copy()
            x.flags.writeable = False
        else:
            x = X[i].astype(">f8")
        single.learn_one(x)
    assert_same_state(single, batch)


def test_rows_the_short_path_declines_take_the_validating_path():
    """Other dtypes, shapes, subclasses and values are declined (False,
    nothing changed); learn_one then validates them as partial_fit does."""
    learner = opf.CappedHedge(2, random_state=0).partial_fit(make_data("loss", 5, 0))
    learner.learn_one(make_data("loss", 1, 9)[0])
    assert learner.__dict__.get("_row_path") is not None
    before = pickle.dumps(learner)
    row = make_data("loss", 1, 1)[0]
    for x in [row.astype(np.float32), row[:-1], row.reshape(1, -1), row.tolist(),
              np.ma.masked_array(row), np.where(np.arange(row.size) == 2, 1.5, row),
              np.where(np.arange(row.size) == 2, -0.1, row),
              np.where(np.arange(row.size) == 2, np.nan, row)]:
        assert not _taken(learner, x)
        assert pickle.dumps(learner) == before
    with pytest.raises(ValueError, match=r"loss vectors in \[0, 1\]"):
        learner.learn_one(np.where(np.arange(row.size) == 2, 1.5, row))
    with pytest.raises(ValueError, match="NaN or infinity"):
        learner.learn_one(np.where(np.arange(row.size) == 2, np.nan, row))
    assert pickle.dumps(learner) == before
    # float32 is taken by the validating path, with the numbers of float64
    a = pickle.loads(before)
    a.learn_one(row.astype(np.float32))
    b = pickle.loads(before).partial_fit(row.astype(np.float32)[np.newaxis])
    assert_same_state(a, b)


def test_variance_minimizer_short_path_stops_at_the_unit_ball():
    learner = opf.VarianceMinimizer(random_state=0).partial_fit(make_data("unit", 5, 0))
    learner.learn_one(make_data("unit", 1, 9)[0])
    x = np.zeros(6)
    x[0] = 1.0
    assert _taken(learner, x)
    x[0] = 1.0 + 1e-9  # |x|^2 > 1 + 1e-10: rejected
    assert not _taken(learner, x)
    with pytest.raises(ValueError, match="norm at most 1"):
        learner.learn_one(x)


def test_centered_learner_beyond_the_box_is_validated_and_kept():
    """Rows near the step limit are not the short path's (its box on max
    |x_i| is a quarter-ish of the limit); the validating path accepts them
    with the same numbers."""
    X = make_data("vector", 20, 5) * 2.0 ** 400
    a = opf.CenteredOnlinePCA(2, random_state=1).partial_fit(X[:1])
    b = opf.CenteredOnlinePCA(2, random_state=1).partial_fit(X)
    for x in X[1:]:
        a.learn_one(x)
    assert_same_state(a, b)
    huge = np.full(6, 2.0 ** 509)  # its step would overflow: rejected in full
    assert not _taken(a, huge)
    before = pickle.dumps(a)
    with pytest.raises(ValueError, match="too large for eta"):
        a.learn_one(huge)
    assert pickle.dumps(a) == before


def test_other_bit_generators_take_the_validating_path():
    """The short path rewinds a failed trial's uniform with PCG64's
    advance(-1); learners on other bit generators have none, with equal
    numbers."""
    X = make_data("vector", 25, 6)
    make = lambda: opf.OnlinePCA(2, random_state=np.random.Generator(np.random.MT19937(3)))  # noqa: E731
    single = make().partial_fit(X[:1])
    assert single.__dict__.get("_row_path") is None
    for x in X[1:]:
        single.learn_one(x)
    batch = make().partial_fit(X)
    np.testing.assert_equal(single._rng.bit_generator.state, batch._rng.bit_generator.state)
    for attr in ("expected_losses_", "realized_losses_", "eigenvalues_", "eigenvectors_"):
        np.testing.assert_array_equal(getattr(single, attr), getattr(batch, attr))


def test_failed_trial_on_the_short_path_changes_nothing():
    """A trial failing in the compiled kernel (a planted NaN eigenvector):
    RuntimeError naming the status, the uniform given back, nothing changed."""
    learner = opf.OnlinePCA(2, random_state=0).partial_fit(make_data("vector", 10, 0))
    learner.learn_one(make_data("vector", 1, 9)[0])
    assert learner.__dict__.get("_row_path") is not None
    learner._state.q[0, 0] = np.nan
    before = pickle.dumps(learner)
    x = make_data("vector", 1, 1)[0]
    with pytest.raises(RuntimeError, match=r"the trial failed .*evecs must be finite.*nothing"):
        learner.learn_one(x)
    assert pickle.dumps(learner) == before


def test_set_params_and_fit_rebuild_the_short_path():
    X = make_data("vector", 30, 7)
    learner = opf.OnlinePCA(2, eta=1.0, random_state=0).partial_fit(X[:10])
    learner.set_params(eta=4.0)
    assert learner.__dict__.get("_row_path") is None
    for x in X[10:]:
        learner.learn_one(x)
    ref = opf.OnlinePCA(2, eta=1.0, random_state=0).partial_fit(X[:10])
    ref.set_params(eta=4.0)
    ref.partial_fit(X[10:])
    assert_same_state(learner, ref)
    learner.fit(X[:3])
    assert_same_state(learner, opf.OnlinePCA(2, eta=4.0, random_state=0).partial_fit(X[:3]))


def test_short_path_waits_for_a_read_in_flight():
    """A reader registered on the guard (as transform is while it runs)
    makes learn_one wait for it (the short path declines, the validating
    path waits), then run: a write waits for the reads in flight."""
    learner = opf.OnlinePCA(2, random_state=0).partial_fit(make_data("vector", 10, 0))
    x = make_data("vector", 1, 1)[0]
    learner.learn_one(x)  # the short path exists
    expected = pickle.loads(pickle.dumps(learner)).partial_fit(x[np.newaxis])
    guard = learner._guard
    entered, release = threading.Event(), threading.Event()

    def reader():
        with guard.reading():
            entered.set()
            release.wait(10)

    thread = threading.Thread(target=reader)
    thread.start()
    entered.wait(10)
    timer = threading.Timer(0.2, release.set)
    timer.start()
    t0 = time.monotonic()
    learner.learn_one(x)
    waited = time.monotonic() - t0
    thread.join()
    timer.join()
    assert waited >= 0.15
    assert_same_state(learner, expected)

