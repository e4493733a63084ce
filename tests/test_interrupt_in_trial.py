"""Ctrl-C inside a compiled trial (issue 22, item 6).

A trial of share="past" at n = 700 or of kernel PCA at t = 2500 costs most
of a second, so the trial loops poll a SIGINT flag (``src/interrupt.h``)
between trials and between the phases of such a trial, and undo the
interrupted trial.  Each test interrupts at every poll point in turn -- the
testing countdown raises a real SIGINT there, which goes through the
chained handler to Python's -- and checks that

- ``KeyboardInterrupt`` surfaces from the batch;
- the learner equals (every state array bit for bit, the generator, the
  loss records) a learner fed only the trials that completed;
- going on with the rest of the batch gives exactly the uninterrupted fit.

A helper thread sending SIGINT with ``signal.pthread_kill`` lands wherever
the fit happens to be: the same oracle holds.  No wall time is asserted.
"""

import pickle
import signal
import sys
import threading

import numpy as np
import pytest
from learner_cases import LEARNERS, assert_same_state, make_data

import onlinepca_fast as opf
from onlinepca_fast import _kernels

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or signal.getsignal(signal.SIGINT) is not signal.default_int_handler,
    reason="the trial loops poll SIGINT through sigaction (POSIX), chained to "
           "Python's default handler")

CASES = {name: (make, kind) for name, make, kind in LEARNERS}
# poll sites (src/state_dense.c, src/interrupt.h) inside the expensive trials
BETWEEN = {1, 11, 21}
EIG_PHASES = {31, 32}          # dsyevr's phases: tridiagonal, its eigensystem
PAST_PHASES = {2, 3, 4} | EIG_PHASES  # W^{t-1} formed, mixture formed, its eigensystem
MATRIX_PHASES = {5, 6} | EIG_PHASES   # log W - eta C formed, its eigensystem
KERNEL_PHASES = {12}           # the bordered update's block solved


@pytest.fixture(autouse=True)
def _countdown_off():
    _kernels._interrupt_at_poll(0)
    yield
    _kernels._interrupt_at_poll(0)


def _copy(learner):
    return pickle.loads(pickle.dumps(learner))


def _interrupt_everywhere(before, X, max_polls=200):
    """Interrupt a copy of `before` fitting X at poll k = 1, 2, ... until a
    fit runs through; check each against the prefix oracle and resuming.
    Returns the poll sites that fired."""
    t0 = before.n_trials_
    full = _copy(before).partial_fit(X)
    sites = set()
    for k in range(1, max_polls):
        learner = _copy(before)
        _kernels._interrupt_at_poll(k)
        try:
            learner.partial_fit(X)
        except KeyboardInterrupt:
            pass
        else:
            _kernels._interrupt_at_poll(0)
            assert_same_state(learner, full)
            assert k > 1
            return sites
        sites.add(_kernels._interrupt_site())
        done = learner.n_trials_ - t0
        assert 0 <= done < len(X)
        assert len(learner.expected_losses_) == learner.n_trials_
        prefix = _copy(before).partial_fit(X[:done]) if done else _copy(before)
        assert_same_state(learner, prefix)
        assert_same_state(learner.partial_fit(X[done:]), full)
    raise AssertionError(f"still interrupted after {max_polls} polls")


@pytest.mark.parametrize("name, phases", [
    ("OnlinePCA-past", PAST_PHASES),
    ("VarianceMinimizer-matrix", MATRIX_PHASES),
    ("OnlineKernelPCA", KERNEL_PHASES),
])
def test_ctrl_c_inside_an_expensive_trial_undoes_it(name, phases):
    make, kind = CASES[name]
    before = make().partial_fit(make_data(kind, 6, 0))
    sites = _interrupt_everywhere(before, make_data(kind, 7, 1))
    assert phases <= sites  # every phase of the trial was interrupted
    assert sites - phases <= BETWEEN


@pytest.mark.parametrize("case", LEARNERS, ids=[c[0] for c in LEARNERS])
def test_ctrl_c_between_two_trials_of_one_chunk(case):
    """Every learner polls before each trial of a chunk (the clustered
    state included), so a Ctrl-C is not held back by a whole chunk."""
    _, make, kind = case
    before = make().partial_fit(make_data(kind, 5, 0))
    before._pace = 100  # one chunk for the whole batch
    sites = _interrupt_everywhere(before, make_data(kind, 6, 1))
    assert sites & BETWEEN


def test_a_handler_that_does_not_raise_changes_no_number():
    """A SIGINT handler of the application's that only records: the
    interrupted trial is undone and redone, the fit is that without it."""
    make, kind = CASES["OnlinePCA-past"]
    before = make().partial_fit(make_data(kind, 6, 0))
    X = make_data(kind, 7, 1)
    full = _copy(before).partial_fit(X)
    seen = []
    old = signal.signal(signal.SIGINT, lambda sig, frame: seen.append(sig))
    try:
        for k in (3, 4, 6):  # inside the first and second trial
            learner = _copy(before)
            _kernels._interrupt_at_poll(k)
            learner.partial_fit(X)
            assert_same_state(learner, full)
    finally:
        signal.signal(signal.SIGINT, old)
    assert seen == [signal.SIGINT] * 3


@pytest.mark.parametrize("n", [1, 2, 3, 5, 17, 64, 130])
@pytest.mark.parametrize("spectrum", ["random", "clustered", "tiny", "zero"])
def test_phased_dsyevr_is_dsyevr_bit_for_bit(n, spectrum):
    """The share="past" and matrix-instance eigensystem is dsyevr's in
    three polled phases (src/phased_eig.h): the same numbers as one dsyevr
    call, bit for bit, and an eigensystem of the matrix (eigh's values)."""
    rng = np.random.default_rng(n)
    A = rng.standard_normal((n, n))
    A = A + A.T
    if spectrum == "clustered":  # like a share="past" mixture: near-equal values
        A = np.eye(n) / n + 1e-9 * A
    elif spectrum == "tiny":  # dsyevr scales it: one dsyevr call
        A *= 1e-150
    elif spectrum == "zero":
        A *= 0.0
    w1, Z1 = _kernels._eig_phased(A.copy())
    w2, Z2 = _kernels._eig_phased(A.copy(), phased=False)
    np.testing.assert_array_equal(w1, w2, strict=True)
    np.testing.assert_array_equal(Z1, Z2, strict=True)
    scale = max(np.abs(A).max(), np.finfo(float).tiny)
    np.testing.assert_allclose(w1, np.linalg.eigvalsh(A), rtol=0, atol=1e-12 * scale * n)
    np.testing.assert_allclose(A @ Z1, Z1 * w1, rtol=0, atol=1e-12 * scale * n)
    np.testing.assert_allclose(Z1.T @ Z1, np.eye(n), rtol=0, atol=1e-12 * n)


def _fit_with_a_signal_from_a_thread(before, X, after_trials):
    """SIGINT sent by another thread once `after_trials` trials are done;
    the handler raises only while the fit runs (a late signal is recorded
    and the fit is tried again).  Returns the interrupted learner."""
    main = threading.main_thread().ident
    t0 = before.n_trials_
    for _ in range(5):
        learner = _copy(before)
        state = {"in_fit": False, "late": False}

        def handler(sig, frame):
            if state["in_fit"]:
                raise KeyboardInterrupt
            state["late"] = True

        # the engine's own counter (kernel PCA counts its instances)
        count = learner._m if isinstance(learner, opf.OnlineKernelPCA) else learner._t

        def sender():
            while int(count[0]) < t0 + after_trials and state["in_fit"]:
                threading.Event().wait(0.001)
            signal.pthread_kill(main, signal.SIGINT)

        old = signal.signal(signal.SIGINT, handler)
        try:
            thread = threading.Thread(target=sender)
            state["in_fit"] = True
            thread.start()
            try:
                learner.partial_fit(X)
            except KeyboardInterrupt:
                return learner
            finally:
                state["in_fit"] = False
                thread.join()
        finally:
            signal.signal(signal.SIGINT, old)
    raise AssertionError("the fit always ended before the signal")


@pytest.mark.parametrize("name, n, T", [("OnlinePCA-past", 60, 300),
                                        ("OnlineKernelPCA", 5, 500)])
def test_ctrl_c_from_another_thread_leaves_a_prefix(name, n, T):
    make, kind = CASES[name]
    before = make().partial_fit(make_data(kind, 5, 0, n=n))
    X = make_data(kind, T, 1, n=n)
    learner = _fit_with_a_signal_from_a_thread(before, X, 3)
    done = learner.n_trials_ - before.n_trials_
    assert 3 <= done < T
    assert_same_state(learner, _copy(before).partial_fit(X[:done]))
    assert_same_state(learner.partial_fit(X[done:]), _copy(before).partial_fit(X))


@pytest.mark.slow
@pytest.mark.parametrize("make, n", [
    (lambda: opf.OnlinePCA(5, eta=0.5, share="past", alpha=0.01, random_state=0), 400),
    (lambda: opf.OnlineKernelPCA(5, random_state=0), 10),
])
def test_ctrl_c_inside_a_large_trial(make, n):
    """Large enough that a trial costs tens of milliseconds (share="past" at
    n = 400: O(n^3) per trial; kernel PCA from t = 800 on): the signal,
    sent after the first trial of the batch, lands in some later trial."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((830, n)) / np.sqrt(n)
    T0 = 800 if n == 10 else 3
    before = make().partial_fit(X[:T0])
    rest = X[T0:T0 + 25]
    learner = _fit_with_a_signal_from_a_thread(before, rest, 1)
    done = learner.n_trials_ - T0
    assert 1 <= done < len(rest)
    assert_same_state(learner, _copy(before).partial_fit(rest[:done]))
    assert_same_state(learner.partial_fit(rest[done:]), _copy(before).partial_fit(rest))
