"""Reliability where the learner layer's pieces meet (issue 35, items 1, 4,
10 and 12): learn_one after an interrupted batch, reads while another
thread fits (never torn, never refused, never making the writer fail), and
no reference cycles.

Oracles: a learner fed the same rows sequentially in one call
(``assert_same_state``, bit for bit), orthonormality of the components,
weak references with the cyclic collector off.
"""

import copy
import gc
import pickle
import threading
import time
import weakref

import numpy as np
import pytest
from learner_cases import (
    COPIERS,
    LEARNERS,
    assert_copy_of_rows_done,
    assert_same_state,
    fit_while_reading,
    make_data,
)

import onlinepca_fast as opf
from onlinepca_fast import _guard, _kernels
from onlinepca_fast import _validation
from onlinepca_fast.learners import _base


# --- item 1: learn_one after an interrupted batch -----------------------------------

def _interrupted(learner, X, at_poll):
    _kernels._interrupt_at_poll(at_poll)
    try:
        learner.partial_fit(X)
    except KeyboardInterrupt:
        pass
    finally:
        _kernels._interrupt_at_poll(0)
    return learner


@pytest.mark.parametrize("make, n, at_poll", [
    (lambda: opf.OnlinePCA(10, random_state=0), 40, 15),
    (lambda: opf.OnlinePCA(10, random_state=0), 40, 40),
    (lambda: opf.OnlinePCA(4, eta=2.0, random_state=3), 44, 30),
    (lambda: opf.CenteredOnlinePCA(5, eta=1.0, random_state=1), 44, 25),
])
def test_learn_one_after_an_interrupted_batch_continues_the_same_learner(make, n, at_poll):
    """The issue's reproducer and variants: state="auto" changes the
    representation inside the batch that Ctrl-C stops; learn_one then must
    run on the learner's current state (on main it ran on the abandoned one:
    eigenvalues off by 0.043)."""
    X = np.random.default_rng(0).normal(size=(200, n))
    a = make().partial_fit(X[:6])
    a.learn_one(X[6])  # learn_one's short path exists before the interrupted batch
    _interrupted(a, X[7:100], at_poll)
    t = a.n_trials_
    assert 7 < t < 100
    for i in range(t, t + 3):
        a.learn_one(X[i])
    ref = make().fit(X[:t + 3])
    assert_same_state(a, ref)


def test_river_learn_many_then_learn_one_after_an_interrupt():
    pytest.importorskip("river")
    pd = pytest.importorskip("pandas")
    from onlinepca_fast import river as opf_river
    X = np.random.default_rng(1).normal(size=(120, 40))
    keys = [f"f{i}" for i in range(40)]
    wrapper = opf_river.OnlinePCA(10, random_state=0)
    wrapper.learn_one(dict(zip(keys, X[0])))
    wrapper.learn_one(dict(zip(keys, X[1])))
    _kernels._interrupt_at_poll(20)
    try:
        wrapper.learn_many(pd.DataFrame(X[2:90], columns=keys))
    except KeyboardInterrupt:
        pass
    finally:
        _kernels._interrupt_at_poll(0)
    t = wrapper.learner.n_trials_
    for i in range(t, t + 3):
        wrapper.learn_one(dict(zip(keys, X[i])))
    ref = opf.OnlinePCA(10, random_state=0, record_losses=False).fit(X[:t + 3])
    assert_same_state(wrapper.learner, ref)


# --- item 4: a read during another thread's batch is never torn ----------------------

def test_a_read_in_flight_holds_the_next_batch_back(monkeypatch):
    """Deterministic: a reader is inside components_ when another thread
    starts a batch; the batch's first chunk waits for the read, so the read
    sees one state from start to end (on main the busy check happened once,
    before the read, and the batch ran under it)."""
    X = make_data("vector", 3000, 2, n=30)
    learner = opf.OnlinePCA(3, eta=2.0, random_state=0).partial_fit(X[:50])
    before = learner.components_.copy()
    inside, release = threading.Event(), threading.Event()
    real = type(learner._state).kept_basis
    halves = []

    def slow_kept_basis(state, k):
        first = real(state, k).copy()
        if threading.current_thread() is threading.main_thread():
            inside.set()
            release.wait(10)
        second = real(state, k).copy()
        halves.append((first, second))
        return second

    monkeypatch.setattr(type(learner._state), "kept_basis", slow_kept_basis)
    writer = threading.Thread(target=learner.partial_fit, args=(X[50:],))
    starter = threading.Thread(target=lambda: (inside.wait(10), writer.start(),
                                               time.sleep(0.3), release.set()))
    starter.start()
    C = learner.components_
    starter.join()
    writer.join(30)
    assert not writer.is_alive() and learner.n_trials_ == len(X)
    first, second = halves[0]
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(C, before)


def test_reads_during_a_fit_are_consistent_and_never_refused():
    """One thread fits 30 batches; another reads attributes, copies and
    pickles as fast as it can: nothing is refused, every components_ is
    orthonormal, and every copy is the learner of the rows done so far (bit
    for bit the learner fed those rows in one call) -- also mid-batch."""
    n, size, batches = 30, 400, 30
    X = make_data("vector", size * batches, 3, n=n)
    make = lambda: opf.OnlinePCA(3, eta=2.0, random_state=0)  # noqa: E731
    learner = make().partial_fit(X[:1])
    copies, worst = [], [0.0]

    def read(i):
        C = learner.components_
        worst[0] = max(worst[0], np.abs(C @ C.T - np.eye(3)).max())
        if i % 7 == 0 and len(copies) < 40:
            copies.append(COPIERS[(i // 7) % 3](learner))

    batches_of_X = (X[1 + b * size:1 + (b + 1) * size] if b < batches - 1 else X[1 + b * size:]
                    for b in range(batches))
    assert fit_while_reading(learner, batches_of_X, read) == []
    assert learner.n_trials_ == len(X)
    assert worst[0] <= 1e-10
    assert copies
    for dup in copies[::4]:
        assert_copy_of_rows_done(dup, make, X)


# --- item 12: a reader does not make the writer fail ---------------------------------

def test_checkpointing_from_another_thread_never_fails_the_writer():
    """The checkpoint pattern: a thread pickles the learner every few ms
    while the main thread calls partial_fit; partial_fit never raises (on
    main: "in use by another thread"), every checkpoint is a consistent
    learner."""
    X = make_data("vector", 6000, 5, n=20)
    learner = opf.OnlinePCA(2, eta=1.0, random_state=1)
    stop = threading.Event()
    saved = []

    def checkpoint():
        while not stop.is_set():
            saved.append(pickle.dumps(learner))
            time.sleep(0.001)

    thread = threading.Thread(target=checkpoint)
    thread.start()
    try:
        for i in range(0, len(X), 50):
            learner.partial_fit(X[i:i + 50])
    finally:
        stop.set()
        thread.join()
    assert learner.n_trials_ == len(X)
    fitted = [pickle.loads(s) for s in saved]
    fitted = [f for f in fitted if "n_features_in_" in f.__dict__]
    assert fitted
    for f in fitted[::max(1, len(fitted) // 8)]:
        assert_same_state(f, opf.OnlinePCA(2, eta=1.0, random_state=1).fit(X[:f.n_trials_]))


def test_two_writers_stay_refused():
    learner = opf.OnlinePCA(2, eta=1.0, random_state=1).partial_fit(make_data("vector", 5, 0))
    guard = _guard.guard_of(learner)
    entered, release = threading.Event(), threading.Event()

    def writer():
        level = guard.enter_write(learner, "partial_fit")
        entered.set()
        release.wait(10)
        guard.exit_write(level)

    thread = threading.Thread(target=writer)
    thread.start()
    entered.wait(10)
    before = pickle.dumps(learner)  # a read: admitted while the other thread writes
    try:
        with pytest.raises(RuntimeError, match="being changed by another thread"):
            learner.partial_fit(make_data("vector", 5, 1))
        with pytest.raises(RuntimeError, match="being changed by another thread"):
            learner.set_params(eta=2.0)
    finally:
        release.set()
        thread.join()
    assert pickle.dumps(learner) == before


# --- item 10: no reference cycles -------------------------------------------------------

@pytest.mark.parametrize("entry", LEARNERS, ids=[e[0] for e in LEARNERS])
def test_a_fitted_learner_is_freed_without_the_cyclic_collector(entry):
    """learner -> learn_one's short path -> learner was a cycle: six dropped
    dense learners at n = 2500 kept 300 MB until gc.collect()."""
    _, make, kind = entry
    X = make_data(kind, 30, 4)
    gc.collect()
    gc.disable()
    try:
        learner = make().partial_fit(X[:20])
        for x in X[20:25]:
            learner.learn_one(x)
        learner.transform(X[:3]) if hasattr(learner, "transform") else None
        copy.deepcopy(learner)
        ref = weakref.ref(learner)
        state = weakref.ref(learner.__dict__.get("_state") or learner)
        del learner
        assert ref() is None and state() is None
    finally:
        gc.enable()


def test_a_rejected_batch_frees_its_private_copy(monkeypatch):
    """A batch rejected for a bad hyper-parameter: its private copy is freed
    when the exception is (on main a traceback cycle kept it: five 80 MB
    batches, +381 MB until gc.collect())."""
    copies = []
    real = _validation.private_copy

    def tracked(arr, owned=False):
        out = real(arr, owned)
        copies.append(weakref.ref(out[0]))
        return out

    monkeypatch.setattr(_base, "private_copy", tracked)
    X = make_data("vector", 200, 6, n=12)
    learner = opf.OnlinePCA(2, random_state=0).partial_fit(X[:10])
    gc.collect()
    gc.disable()
    try:
        for bad in ({"eta": -1.0}, {"alpha": 2.0}, {"n_components": 50}, {"eta": "fast"}):
            learner.set_params(**bad)
            try:
                learner.partial_fit(X)
            except (TypeError, ValueError):
                pass
            learner.set_params(eta="auto", alpha=0.0, n_components=2)
        assert copies and all(ref() is None for ref in copies)
    finally:
        gc.enable()
