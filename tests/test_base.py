"""Tests of ``learners/_base.py``, the glue every learner shares with the
compiled engine (SPEC section 4):

- ``learn_one``'s one-pass input check (``_kernels.value_range``);
- a failure inside the compiled loop keeps exactly the rows before it;
- learners pickle and deep-copy mid-stream and continue bit for bit;
- extreme steps keep the expert and variance learners finite and capped;
- independent learners in threads give the sequential results;
- memory does not grow with the number of trials beyond the loss records.
"""

import copy
import gc
import math
import pickle
import sys
import tracemalloc
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from learner_cases import (
    BASIS_CLASSES,
    LEARNERS,
    N,
    assert_in_capped_set,
    assert_same_state,
    extreme_stream,
    make_data,
)
from numpy.testing import assert_allclose, assert_array_equal

import onlinepca_fast as opf
from onlinepca_fast import _kernels
from onlinepca_fast.learners import MAX_STEP


def test_value_range_is_min_and_max_with_nan_propagating():
    """The one-pass input check (src/learner.c opf_range) against numpy's
    min and max: any length (vector bodies and remainders), NaN anywhere,
    infinities, signed zeros."""
    from onlinepca_fast import _kernels
    rng = np.random.default_rng(8)
    for n in [1, 2, 3, 5, 8, 17, 1000, 4099]:
        x = rng.standard_normal((n,)) * 10.0 ** rng.integers(-300, 300)
        assert _kernels.value_range(x) == (x.min(), x.max())
        assert _kernels.value_range(x.reshape(1, -1)) == (x.min(), x.max())
        for pos in {0, n // 2, n - 1}:
            y = x.copy()
            y[pos] = np.nan
            lo, hi = _kernels.value_range(y)
            assert math.isnan(lo) and math.isnan(hi)
            y[pos] = np.inf
            assert _kernels.value_range(y)[1] == np.inf
            y[pos] = -np.inf
            assert _kernels.value_range(y)[0] == -np.inf
    assert _kernels.value_range(np.array([-0.0, 0.0])) == (0.0, 0.0)
    with pytest.raises(ValueError, match="empty"):
        _kernels.value_range(np.empty(0))


def test_kernel_failure_on_the_first_trial_changes_nothing():
    """A non-finite eigensystem (here planted) makes the rank-one update fail:
    RuntimeError, and the failing trial changed nothing."""
    learner = opf.OnlinePCA(2, random_state=0).partial_fit(make_data("vector", 10, 0))
    learner._state.q[0, 0] = np.nan  # what a kernel returning NaN would leave
    before = pickle.dumps(learner)
    with pytest.raises(RuntimeError, match=r"trial 0 of the batch failed .*evecs must be finite"):
        learner.partial_fit(make_data("vector", 5, 1))
    assert pickle.dumps(learner) == before


class _FailingEngine:
    """Wraps the engine: runs the first `ok` trials, then reports a failure."""

    def __init__(self, engine, ok):
        self.engine, self.ok = engine, ok

    def run(self, X, u, el, rl):
        ok = min(self.ok, X.shape[0])
        done, status = self.engine.run(X[:ok], u[:ok], el[:ok], rl[:ok]) if ok else (0, 0)
        self.ok -= done
        if done == X.shape[0]:
            return done, status
        raise _kernels.status_error(-99, "test", trials_done=done)


@pytest.mark.parametrize("entry", [e for e in LEARNERS if e[0] in
                                   ("OnlinePCA", "CappedHedge-past", "FollowTheLeader")],
                         ids=lambda e: e[0])
def test_kernel_failure_mid_batch_keeps_exactly_the_rows_before(entry):
    _, make, kind = entry
    X = make_data(kind, 30, 4)
    failing = make().partial_fit(X[:5])
    plan = failing._plan(X[5:], False, 1.0, "X", False)
    state, config, engine = failing._engine
    assert config == plan.config
    failing._engine = (state, config, _FailingEngine(engine, 12))
    with pytest.raises(RuntimeError, match="trial 12 of the batch failed .* 12 rows") as info:
        failing.partial_fit(X[5:])
    # the protocol between the compiled loop and the batch runner is a type
    # (trials_done counts within the failing chunk)
    cause = info.value.__cause__
    assert isinstance(cause, _kernels.TrialError) and 0 <= cause.trials_done <= 12
    failing._engine = None
    reference = make().partial_fit(X[:5]).partial_fit(X[5:17])
    assert_same_state(failing, reference)
    assert_same_state(failing.partial_fit(X[17:]), reference.partial_fit(X[17:]))


@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_resume_mid_stream_is_bit_for_bit(learner_case, how):
    _, make, kind = learner_case
    X = make_data(kind, 90, 21)
    make_small = (lambda: make().set_params(reorthogonalize_every=7)) \
        if isinstance(make(), BASIS_CLASSES) else make  # cross re-orthogonalisations
    uninterrupted = make_small().partial_fit(X[:33])
    if how == "pickle":
        resumed = pickle.loads(pickle.dumps(uninterrupted))
    else:
        resumed = copy.deepcopy(uninterrupted)
    assert_same_state(resumed, uninterrupted)
    for part in (X[33:34], X[34:80]):
        uninterrupted.partial_fit(part)
        resumed.partial_fit(part)
        # (not pickle bytes: pickle's memo differs for unpickled dtype objects)
        assert_same_state(resumed, uninterrupted)
    resumed.learn_one(X[80])
    uninterrupted.learn_one(X[80])
    # the same as one batch from the start
    one_batch = make_small().partial_fit(X[:81])
    if learner_case[0] == "OnlineKernelPCA":
        # the Gram block of a batch against the past is one GEMM, whose
        # summation order depends on the batch's shape: equal to rounding
        assert_allclose(resumed.expected_losses_, one_batch.expected_losses_,
                        rtol=1e-12, atol=1e-15)
        lam = one_batch.eigenvalues_  # to rounding relative to the largest
        assert_allclose(resumed.eigenvalues_, lam, rtol=0, atol=1e-12 * np.abs(lam).max())
        return
    assert_same_state(resumed, one_batch)
    # the generator was saved too: the next draws agree
    if hasattr(resumed, "sample_projection"):
        assert_array_equal(resumed.sample_projection(), uninterrupted.sample_projection())


def test_unfitted_learner_pickles():
    learner = pickle.loads(pickle.dumps(opf.OnlinePCA(3, eta=0.5, random_state=1)))
    assert learner.get_params() == opf.OnlinePCA(3, eta=0.5, random_state=1).get_params()
    X = make_data("vector", 20, 0)
    assert_same_state(learner.partial_fit(X),
                       opf.OnlinePCA(3, eta=0.5, random_state=1).partial_fit(X))


def test_resume_with_a_shared_generator():
    """A Generator passed as random_state travels inside the pickle."""
    rng = np.random.default_rng(5)
    X = make_data("vector", 40, 1)
    a = opf.OnlinePCA(2, random_state=rng).partial_fit(X[:20])
    b = pickle.loads(pickle.dumps(a))
    assert_array_equal(a.partial_fit(X[20:]).expected_losses_,
                       b.partial_fit(X[20:]).expected_losses_)


def test_pickle_from_another_version_warns():
    learner = opf.OnlinePCA(2, random_state=0).partial_fit(make_data("vector", 10, 0))
    state = learner.__getstate__()
    assert state["_onlinepca_fast_version"] == opf.__version__
    assert "_engine" not in state  # raw pointers are rebuilt, never pickled
    for saved in ("0.0.1", None):
        tampered = dict(state)
        if saved is None:
            del tampered["_onlinepca_fast_version"]  # a pickle from before versioning
        else:
            tampered["_onlinepca_fast_version"] = saved
        clone = opf.OnlinePCA.__new__(opf.OnlinePCA)
        with pytest.warns(UserWarning, match=f"saved by onlinepca_fast {saved}, this is "):
            clone.__setstate__(tampered)
        assert "_onlinepca_fast_version" not in clone.__dict__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pickle.loads(pickle.dumps(learner))  # same version: silent


@pytest.mark.parametrize("eta", [1e-12, 1.0, 1e6, MAX_STEP / 2])
@pytest.mark.parametrize("make", [
    lambda eta: opf.Hedge(eta=eta, random_state=0),
    lambda eta: opf.CappedHedge(2, eta=eta, random_state=0),
    lambda eta: opf.CappedHedge(2, eta=eta, share="past", alpha=1e-3, random_state=0),
    lambda eta: opf.CappedHedge(2, eta=eta, share="fixed", alpha=1e-9, random_state=0),
    lambda eta: opf.SimplexVarianceMinimizer(eta=eta, alpha=1e-9),
    lambda eta: opf.VarianceMinimizer(eta=eta, random_state=0),
], ids=["Hedge", "CappedHedge", "CappedHedge-past", "CappedHedge-fixed",
        "SimplexVarianceMinimizer", "VarianceMinimizer"])
def test_extreme_eta_keeps_the_other_learners_finite_and_capped(make, eta):
    rng = np.random.default_rng(0)
    learner = make(eta)
    if isinstance(learner, (opf.Hedge, opf.CappedHedge)):
        L = (rng.random((600, N)) < 0.5).astype(float)  # 0/1 losses
        L[:300, :3] = 1.0  # three experts lose everything, then come back
        L[300:, :3] = 0.0
        X = L
    else:
        X = np.zeros((600, N))
        X[:300, 0] = 1.0
        X[300:] = extreme_stream("random", 300, 1.0, 0)
    for part in np.array_split(X, 3):
        learner.partial_fit(part)
        assert np.isfinite(learner._state.lam).all()
        assert np.isfinite(learner.expected_losses_).all()
        assert_in_capped_set(learner)


def _thread_job(args):
    make, X, splits = args
    learner = make()
    for part in np.split(X, splits):
        learner.partial_fit(part)
    return learner


def test_independent_learners_in_threads_match_sequential_runs():
    n = 30
    rng = np.random.default_rng(0)
    jobs = []
    for i in range(6):
        X = rng.standard_normal((400, n)) * np.linspace(1, 0.1, n)
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
        make = [lambda i=i: opf.OnlinePCA(3, random_state=i, reorthogonalize_every=50),
                lambda i=i: opf.CenteredOnlinePCA(3, random_state=i),
                lambda i=i: opf.CappedHedge(3, share="past", alpha=0.01, random_state=i),
                lambda: opf.FollowTheLeader(3)][i % 4]
        data = np.abs(X) if i % 4 == 2 else X
        jobs.append((make, data, sorted(rng.choice(np.arange(1, 400), 5, replace=False))))
    sequential = [_thread_job(job) for job in jobs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        threaded = list(pool.map(_thread_job, jobs))
    for a, b in zip(sequential, threaded):
        assert_same_state(a, b)


def _rss_bytes():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096
    except OSError:
        return None


@pytest.mark.slow
@pytest.mark.parametrize("record", [False, True])
def test_memory_does_not_grow_with_the_number_of_trials(record):
    """10^5 trials in batches of 1000 (n = 20): traced memory grows by the
    loss records only (16 bytes a trial, in a buffer that doubles), and not
    at all without them.  Measured: ~0 bytes (record=False), 2.1 MB for the
    10^5 recorded pairs (record=True); RSS within ~1 MB."""
    n, T, batch = 20, 100_000, 1000
    X = make_data("vector", batch, 0, n=n)
    learner = opf.OnlinePCA(3, random_state=0, record_losses=record,
                            reorthogonalize_every=10_000)
    learner.partial_fit(X)  # engine and workspace exist from here on
    gc.collect()
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        rss0 = _rss_bytes()
        for _ in range(T // batch):
            learner.partial_fit(X)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - base
        rss1 = _rss_bytes()
    finally:
        tracemalloc.stop()
    losses = 16 * (T + batch)  # two float64 per trial
    if record:
        assert learner.expected_losses_.shape == (T + batch,)
        assert grown <= 2 * losses + 64 * 1024
    else:
        assert learner.expected_losses_.shape == (0,)
        assert learner._records.buf.size == 0  # nothing kept per trial
        assert grown <= 64 * 1024
    if rss0 is not None and sys.platform.startswith("linux"):
        assert rss1 - rss0 <= 2 * losses * record + 8 * 2**20
    assert learner.n_trials_ == T + batch


def test_status_error_types():
    """A trial loop's failure is a TrialError (TrialLinAlgError for a
    numerical one), still a ValueError (LinAlgError); other statuses keep
    the plain types."""
    from numpy.linalg import LinAlgError

    err = _kernels.status_error(_kernels.STATUS_EFAILED, "t", trials_done=3)
    assert isinstance(err, _kernels.TrialLinAlgError) and isinstance(err, LinAlgError)
    assert err.trials_done == 3 and err.status == _kernels.STATUS_EFAILED
    err = _kernels.status_error(-99, "t", trials_done=0)
    assert type(err) is _kernels.TrialError and isinstance(err, ValueError)
    assert type(_kernels.status_error(-99, "t")) is ValueError
    assert type(_kernels.status_error(_kernels.STATUS_EFAILED, "t")) is LinAlgError
