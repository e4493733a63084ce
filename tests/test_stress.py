"""Stress tests of what a real program does to a learner (issue 13): two
threads on one learner, Ctrl-C at random moments of a long ``partial_fit``,
copies, a caller writing into its batch while it runs, and the compiled
bindings called with wrong sizes and dtypes.  Under none of them may the
process crash or the state be corrupted.

Oracles: a learner driven sequentially on the rows that were processed
(``assert_same_state``: bit for bit), ``pickle.dumps`` for "nothing
changed".
"""

import _thread
import copy
import pickle
import threading
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from learner_cases import assert_same_state, fitted, make_data
from learner_cases import wait_for_writer as _wait_for_writer

from onlinepca_fast import _kernels
from onlinepca_fast.kernels import RankOneUpdater


def _long_batch(learner_case):
    """A batch that keeps the compiled loop busy for a good fraction of a
    second (kernel PCA: O(m^2)..O(m^3) per trial, so fewer rows)."""
    name, _, kind = learner_case
    T = 300 if name == "OnlineKernelPCA" else (30_000 if kind == "matrix" else 150_000)
    return make_data(kind, T, 99)


# --- two threads on one learner -------------------------------------------------

@pytest.mark.slow
def test_a_second_thread_gets_a_runtime_error_and_nothing_is_corrupted(learner_case):
    X = _long_batch(learner_case)
    for _attempt in range(3):
        learner = fitted(learner_case)
        expected = pickle.loads(pickle.dumps(learner)).partial_fit(X)
        errors = []
        worker = threading.Thread(target=lambda: errors.append(
            _call_or_error(learner.partial_fit, X)))
        worker.start()
        if not _wait_for_writer(learner, worker):
            worker.join()
            continue  # the batch ended before we looked: try again
        second = _call_or_error(learner.partial_fit, X[:5])
        reader = _call_or_error(lambda: learner.n_trials_)
        still_running = worker.is_alive()
        worker.join()
        if not still_running and second is None:
            continue  # the first call ended just before the second: try again
        assert isinstance(second, RuntimeError) and "another thread" in str(second)
        assert reader is None  # a read waits for the chunk in flight, never refused
        assert errors == [None]  # the first call finished normally
        assert_same_state(learner, expected)  # exactly the first batch, uncorrupted
        return
    pytest.fail("could not overlap two calls in 3 attempts")


def _call_or_error(fn, *args):
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001 - the test inspects it
        return exc
    return None


def test_threads_hammering_one_learner_never_corrupt_it():
    """Four threads call learn_one/partial_fit/transform on one OnlinePCA as
    fast as they can; every write either completes or raises RuntimeError
    at once (another thread writes), every read completes, and the final state is that of the completed calls, in the order
    the guard admitted them (replayed sequentially)."""
    from learner_cases import LEARNERS
    make = dict((e[0], e[1]) for e in LEARNERS)["OnlinePCA"]
    learner = make().partial_fit(make_data("vector", 10, 0))
    start = pickle.loads(pickle.dumps(learner))
    log, lock = [], threading.Lock()

    def job(seed):
        rng = np.random.default_rng(seed)
        for _ in range(200):
            rows = make_data("vector", int(rng.integers(1, 40)), int(rng.integers(1 << 30)))
            try:
                learner.partial_fit(rows)
            except RuntimeError:
                continue
            with lock:  # completed calls are serialized by the guard; record order
                log.append(rows)
            learner.transform(rows)  # a read: never refused

    threads = [threading.Thread(target=job, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert learner.n_trials_ == start.n_trials_ + sum(len(r) for r in log)
    Q = learner.eigenvectors_
    assert np.abs(Q.T @ Q - np.eye(Q.shape[0])).max() < 1e-12
    assert np.isfinite(learner.expected_losses_).all()


def test_rank_one_updater_second_thread_gets_a_runtime_error():
    n = 1200
    rng = np.random.default_rng(0)
    upd = RankOneUpdater(n)
    for _attempt in range(5):
        evals = np.sort(rng.standard_normal(n))
        d0 = evals.copy()
        evecs = np.eye(n)
        x = rng.standard_normal(n)
        errors = []
        worker = threading.Thread(target=lambda: errors.append(
            _call_or_error(upd.update, evals, evecs, 1.0, x)))
        worker.start()
        time.sleep(0.002)
        other = np.eye(n)
        other_evals = np.sort(rng.standard_normal(n))
        before = other.copy(), other_evals.copy()
        second = _call_or_error(upd.update, other_evals, other, 1.0, x)
        running = worker.is_alive()
        worker.join()
        assert errors == [None]
        if second is None and not running:
            continue
        assert isinstance(second, RuntimeError) and "another thread" in str(second)
        np.testing.assert_array_equal(other, before[0])
        np.testing.assert_array_equal(other_evals, before[1])
        # and the first update is right
        exact = np.linalg.eigvalsh(np.diag(d0) + np.outer(x, x))
        np.testing.assert_allclose(evals, exact, rtol=0, atol=1e-12 * np.abs(exact).max())
        return
    pytest.fail("could not overlap two updates in 5 attempts")


# --- Ctrl-C ---------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.0, 0.01, 0.05])
def test_ctrl_c_leaves_the_learner_as_after_the_rows_it_processed(learner_case, delay):
    X = _long_batch(learner_case)
    learner = fitted(learner_case)
    before = pickle.loads(pickle.dumps(learner))
    t0 = learner.n_trials_
    timer = threading.Timer(delay, _thread.interrupt_main)
    interrupted = False
    try:
        timer.start()  # (with delay 0 the interrupt may land in here)
        learner.partial_fit(X)
        while True:  # the batch ended first: the interrupt lands here
            time.sleep(0.01)
    except KeyboardInterrupt:
        interrupted = True
    timer.join()
    assert interrupted
    done = learner.n_trials_ - t0
    assert 0 <= done <= len(X)
    assert len(learner.expected_losses_) == learner.n_trials_
    prefix = before.partial_fit(X[:done]) if done else before
    assert_same_state(learner, prefix)
    # and it goes on as if the batch had been those rows
    extra = make_data(learner_case[2], 7, 123)
    learner.partial_fit(extra)
    prefix.partial_fit(extra)
    assert_same_state(learner, prefix)


# --- copies ---------------------------------------------------------------------

@pytest.mark.parametrize("how", ["copy", "deepcopy", "pickle"])
def test_copies_are_independent(learner_case, how):
    learner = fitted(learner_case)
    snapshot = pickle.dumps(learner)
    dup = {"copy": copy.copy, "deepcopy": copy.deepcopy,
           "pickle": lambda x: pickle.loads(pickle.dumps(x))}[how](learner)
    more = make_data(learner_case[2], 25, 5)
    dup.partial_fit(more)
    assert pickle.dumps(learner) == snapshot  # the original did not move
    learner.partial_fit(more)  # and both continue alike
    assert_same_state(dup, learner)


# --- the caller's array changing while the batch runs ---------------------------

@pytest.mark.slow
def test_writes_into_the_batch_while_it_runs_change_nothing(learner_case):
    """Another thread writes NaN into the second half of the batch while
    partial_fit runs: either the batch is rejected whole (the NaN reached
    the private copy before it was checked) or exactly the rows as they
    were when copied are processed -- never a NaN state."""
    X = _long_batch(learner_case)
    learner = fitted(learner_case)
    before = pickle.dumps(learner)
    expected = pickle.loads(before).partial_fit(X.copy())
    stop = threading.Event()
    outcome = []

    def vandal():
        while not stop.is_set():
            X[len(X) // 2:] = np.nan

    worker = threading.Thread(target=lambda: outcome.append(
        _call_or_error(learner.partial_fit, X)))
    worker.start()
    _wait_for_writer(learner, worker)
    spoiler = threading.Thread(target=vandal)
    spoiler.start()
    worker.join()
    stop.set()
    spoiler.join()
    if outcome[0] is None:
        assert_same_state(learner, expected)
    else:
        assert isinstance(outcome[0], ValueError) and "NaN" in str(outcome[0])
        assert pickle.dumps(learner) == before


# --- the compiled bindings with wrong sizes ---------------------------------------

def _short(n):
    return np.zeros(max(n - 1, 0))


BINDING_CALLS = [
    ("cap out", lambda: _kernels.cap(np.ones(5), 2, False, _short(5), np.zeros(15))),
    ("cap work", lambda: _kernels.cap(np.ones(5), 2, False, np.zeros(5), _short(15))),
    ("cap empty", lambda: _kernels.cap(np.ones(0), 1, False, np.zeros(0), np.zeros(0))),
    ("exp out", lambda: _kernels.exp_shifted(np.ones(5), 1.0, _short(5))),
    ("decompose coef", lambda: _kernels.decompose(
        np.full(4, 0.25), 2, np.zeros(0), np.zeros((3, 2), np.intp), np.zeros(4),
        np.zeros(12, np.intp))),
    ("decompose iwork", lambda: _kernels.decompose(
        np.full(4, 0.25), 2, np.zeros(3), np.zeros((3, 2), np.intp), np.zeros(4),
        np.zeros(11, np.intp))),
    ("select chosen", lambda: _kernels.select_corner(
        np.full(4, 0.25), 2, 0.5, np.zeros(1, np.intp), np.zeros(4), np.zeros(12, np.intp))),
    ("systematic work", lambda: _kernels.sample_systematic(
        np.full(4, 0.25), 2, 0.5, np.zeros(2, np.intp), _short(4))),
    ("updater x", lambda: RankOneUpdater(4).update(
        np.zeros(4), np.eye(4), 1.0, np.zeros(3))),
    ("updater evecs", lambda: RankOneUpdater(4).update(
        np.zeros(4), np.eye(3), 1.0, np.zeros(4))),
    ("updater dtype", lambda: RankOneUpdater(4).update(
        np.zeros(4, np.float32), np.eye(4), 1.0, np.zeros(4))),
    ("bordered y", lambda: _kernels.bordered_update(
        np.zeros(4), np.zeros((4, 4)), 3, np.zeros(2), 1.0)),
    ("bordered capacity", lambda: _kernels.bordered_update(
        np.zeros(3), np.zeros((3, 3)), 3, np.zeros(3), 1.0)),
    ("value_range empty", lambda: _kernels.value_range(np.zeros(0))),
]


@pytest.mark.parametrize("call", [c[1] for c in BINDING_CALLS], ids=[c[0] for c in BINDING_CALLS])
def test_bindings_reject_wrong_sizes(call):
    with pytest.raises((ValueError, TypeError)):
        call()


@pytest.mark.parametrize("short", ["u", "exp", "real", "X-width"])
def test_engine_run_rejects_short_buffers(short):
    learner = fitted(("OnlinePCA", lambda: __import__("onlinepca_fast").OnlinePCA(
        2, random_state=0), "vector"))
    engine = learner._engine[2]
    X = make_data("vector", 10, 1)
    args = {"u": np.zeros(10), "exp": np.zeros(10), "real": np.zeros(10)}
    if short == "X-width":
        X = np.ascontiguousarray(X[:, :-1])
    else:
        args[short] = np.zeros(9)
    before = pickle.dumps(learner)
    with pytest.raises(ValueError):
        engine.run(X, args["u"], args["exp"], args["real"])
    assert pickle.dumps(learner) == before


@given(n=st.integers(0, 40), d=st.integers(-2, 42), out=st.integers(0, 45),
       work=st.integers(0, 130), log_domain=st.booleans())
def test_cap_binding_never_writes_outside_its_buffers(n, d, out, work, log_domain):
    """Any sizes: the binding either runs (buffers large enough, d valid) or
    raises ValueError; the guard bytes around the buffers are never touched."""
    x = np.random.default_rng(n).random(n)
    out_buf = np.full(out + 2, 7.0)
    work_buf = np.full(work + 2, 7.0)
    ok = 1 <= d <= n and out >= n and work >= 3 * n
    try:
        _kernels.cap(x, d, log_domain, out_buf[1:out + 1], work_buf[1:work + 1])
    except ValueError:
        assert not ok
    else:
        assert ok
    assert out_buf[0] == out_buf[-1] == work_buf[0] == work_buf[-1] == 7.0


@given(n=st.integers(1, 30), T=st.integers(1, 12), short=st.sampled_from(["u", "exp", "real"]),
       by=st.integers(1, 12))
def test_engine_run_never_writes_outside_its_buffers(n, T, short, by):
    learner = __import__("onlinepca_fast").OnlinePCA(1, random_state=0)
    X = make_data("vector", T, n, n=n + 1)
    learner.partial_fit(X[:1])
    engine = learner._engine[2]
    sizes = {"u": T, "exp": T, "real": T}
    sizes[short] = max(T - by, 0)
    bufs = {k: np.full(v + 2, 7.0) for k, v in sizes.items()}
    with pytest.raises(ValueError):
        engine.run(X, bufs["u"][1:-1], bufs["exp"][1:-1], bufs["real"][1:-1])
    assert all(b[0] == b[-1] == 7.0 for b in bufs.values())
