"""onlinepca_fast.parallel.run_many: the same fitted learners in order, on threads, on Dask.

The oracle is a plain loop: a deep copy of each estimator, ``partial_fit``
on each chunk of its stream in this thread.  Every backend must give
exactly its pickle (state and generator, byte for byte).  The Dask backend
runs on a LocalCluster of two worker processes on the loopback, started
once for the module.
"""

import copy
import functools
import os
import pickle
import sys
import threading
import time

import numpy as np
import pytest
from dask_cluster import local_client
from learner_cases import LEARNERS, assert_same_state, make_data
from numpy.testing import assert_array_equal

import onlinepca_fast as opf
from onlinepca_fast import _kernels
from onlinepca_fast.datasets import noisy_cone, shifting_subspaces
from onlinepca_fast.parallel import run_many


@pytest.fixture(scope="module")
def client():
    # the workers cannot import this test module: ship its functions by value
    with local_client(by_value=__name__) as dask_client:
        yield dask_client


def _chunks(seed, n=6, size=70, T=300):
    """A stream made where it runs: chunks of a shifting-subspace stream."""
    X, _ = shifting_subspaces(n, 2, (T // 2, T - T // 2), random_state=seed)
    return (X[i:i + size] for i in range(0, T, size))


def _losses(seed, n=5, T=200):
    return np.random.default_rng(seed).uniform(size=(T, n))


def _workload():
    """(estimators, streams): every learner family, every kind of stream."""
    X6, _ = shifting_subspaces(6, 2, (150, 150), random_state=1)
    estimators = [
        opf.OnlinePCA(2, eta=1.5, share="fixed", alpha=1e-3, random_state=0),
        opf.OnlineAdaptivePCA(2, random_state=np.random.default_rng(5)),
        opf.CenteredOnlinePCA(2, center_lr_inv=1.0, random_state=2),
        opf.FollowTheLeader(2, centered=True),
        opf.CappedHedge(2, sampler="systematic", random_state=3),
        opf.OnlineKernelPCA(3, kernel="poly", degree=2, gamma=1.0, coef0=0.0, random_state=4),
        opf.OnlinePCA(1, random_state=6),
        opf.FollowTheLeader(1),
    ]
    streams = [
        X6,                                                        # an array
        functools.partial(_chunks, 7),                             # a callable
        [X6[:100] + 1, X6[100:] + 1],                              # a list of chunks
        functools.partial(_chunks, 8, n=4),
        _losses(9),
        noisy_cone(120, 5, embedding="padded", random_state=10),
        functools.partial(_chunks, 11, n=3, size=1),               # one row per chunk
        X6,                                                        # the same array again
    ]
    return estimators, streams


def _oracle(estimators, streams):
    out = []
    for est, stream in zip(estimators, streams):
        est = copy.deepcopy(est)
        chunks = [stream] if isinstance(stream, np.ndarray) else \
            (stream() if callable(stream) else stream)
        for chunk in chunks:
            est.partial_fit(chunk)
        out.append(est)
    return out


def _assert_identical(fitted, oracle, same_chunks=True):
    assert len(fitted) == len(oracle)
    for i, (a, b) in enumerate(zip(fitted, oracle)):
        assert type(a) is type(b)
        assert_array_equal(a.expected_losses_, b.expected_losses_, err_msg=f"estimator {i}")
        assert_array_equal(a.realized_losses_, b.realized_losses_, err_msg=f"estimator {i}")
        if hasattr(b, "eigenvectors_"):
            assert_array_equal(a.eigenvalues_, b.eigenvalues_)
            assert_array_equal(a.eigenvectors_, b.eigenvectors_)
        if same_chunks:
            # everything else, the generator included (not pickle bytes: the
            # memo differs for objects that crossed a process boundary)
            assert_same_state(a, b)
        else:  # (the loss buffers grow differently) the generators are in the same state
            assert_array_equal(copy.deepcopy(a).sample_projection(),
                               copy.deepcopy(b).sample_projection())


@pytest.fixture(scope="module")
def workload():
    estimators, streams = _workload()
    return estimators, streams, _oracle(estimators, streams)


@pytest.mark.parametrize("n_jobs", [None, 1, 2, 3, 16])
def test_in_order_and_on_threads_equal_the_plain_loop(workload, n_jobs):
    estimators, streams, oracle = workload
    before = [pickle.dumps(e) for e in estimators]
    fitted = run_many(estimators, streams, n_jobs=n_jobs)
    _assert_identical(fitted, oracle)
    # the inputs are left as they were, and are not what is returned
    assert [pickle.dumps(e) for e in estimators] == before
    assert all(f is not e for f, e in zip(fitted, estimators))
    assert all(not hasattr(e, "n_features_in_") for e in estimators)


def test_on_dask_equals_the_plain_loop(workload, client):
    estimators, streams, oracle = workload
    generator_state = estimators[1].random_state.bit_generator.state
    fitted = run_many(estimators, streams, client=client)
    _assert_identical(fitted, oracle)
    assert estimators[1].random_state.bit_generator.state == generator_state
    # the same again (nothing cached, nothing advanced)
    _assert_identical(run_many(estimators, streams, client=client), oracle)


def test_on_dask_without_any_array_stream(client):
    """Issue 38, item 1: with callable and list-of-chunks streams only (the
    pattern the docstring recommends for Dask), nothing is scattered;
    ``Client.scatter([])`` failed inside distributed."""
    X, _ = shifting_subspaces(5, 1, (120,), random_state=4)
    estimators = [opf.OnlinePCA(1, random_state=0), opf.CenteredOnlinePCA(2, random_state=1),
                  opf.FollowTheLeader(1)]
    streams = [functools.partial(_chunks, 3, n=5), [X[:50], X[50:]],
               functools.partial(_chunks, 4, n=4, size=1)]
    _assert_identical(run_many(estimators, streams, client=client),
                      _oracle(estimators, streams))
    (only,) = run_many(estimators[1:2], streams[1:2], client=client)
    _assert_identical([only], _oracle(estimators[1:2], streams[1:2]))


def test_a_long_stream_in_many_chunks_equals_one_batch():
    X, _ = shifting_subspaces(8, 2, (400, 400), random_state=0)
    est = opf.OnlineAdaptivePCA(2, random_state=1)
    (fitted,) = run_many([est], [lambda: (X[i:i + 37] for i in range(0, len(X), 37))])
    batch = copy.deepcopy(est).partial_fit(X)
    _assert_identical([fitted], [batch], same_chunks=False)


def test_a_generator_shared_by_two_estimators_is_copied_with_each():
    rng = np.random.default_rng(3)
    X, _ = shifting_subspaces(5, 1, (100,), random_state=0)
    a, b = opf.OnlinePCA(1, random_state=rng), opf.OnlinePCA(1, random_state=rng)
    fa, fb = run_many([a, b], [X, X], n_jobs=2)
    assert_array_equal(fa.realized_losses_, fb.realized_losses_)
    assert rng.bit_generator.state == np.random.default_rng(3).bit_generator.state


class _Where:
    """An estimator recording where each chunk was fitted (process, thread)."""

    def __init__(self):
        self.seen = []

    def partial_fit(self, X):
        self.seen.append((os.getpid(), threading.current_thread().name, float(np.sum(X))))
        return self


def test_the_backends_run_where_they_say(client):
    X = np.ones((3, 2))
    here = os.getpid()
    (seq,) = run_many([_Where()], [X])
    assert seq.seen == [(here, threading.current_thread().name, 6.0)]
    on_threads = run_many([_Where(), _Where()], [X, X], n_jobs=2)
    assert all(w.seen[0][0] == here and w.seen[0][1].startswith("run_many")
               for w in on_threads)
    on_dask = run_many([_Where(), _Where()], [X, functools.partial(_chunks, 0, n=2)],
                       client=client)
    assert all(w.seen[0][0] != here for w in on_dask)
    assert [len(w.seen) for w in on_dask] == [1, 5]


# --- errors -------------------------------------------------------------------

def test_bad_arguments():
    X = np.ones((4, 3))
    est = opf.OnlinePCA(1)
    with pytest.raises(ValueError, match="same length, got 2 estimators and 1 streams"):
        run_many([est, est], [X])
    with pytest.raises(TypeError, match="estimators must be a sequence"):
        run_many(iter([est]), [X])
    with pytest.raises(TypeError, match="streams must be a sequence"):
        run_many([est], X.tolist()[0][0])
    with pytest.raises(TypeError, match=r"estimators\[1\] has no partial_fit method: str"):
        run_many([est, "pca"], [X, X])
    with pytest.raises(TypeError, match=r"streams\[0\] must be an array, a callable"):
        run_many([est], [42])
    with pytest.raises(TypeError, match=r"streams\[0\] must be an array, a callable.*got str"):
        run_many([est], ["data.csv"])
    for bad, error in [(0, ValueError), (-2, ValueError), (True, TypeError),
                       (1.5, TypeError), ("2", TypeError)]:
        with pytest.raises(error, match="n_jobs must be a positive int or None"):
            run_many([est], [X], n_jobs=bad)
    with pytest.raises(ValueError, match="give n_jobs .* or client .*, not both"):
        run_many([est], [X], n_jobs=2, client=object())
    with pytest.raises(TypeError, match="client must be a dask.distributed.Client, got object"):
        run_many([est], [X], client=object())
    assert run_many([], []) == []


def test_what_cannot_go_to_dask_is_refused_before_anything_runs(client):
    est = opf.OnlinePCA(1)
    X = np.ones((4, 3))
    with pytest.raises(TypeError, match=r"streams\[1\] is an iterator \(generator\).*callable"):
        run_many([est, est], [X, (c for c in [X])], client=client)
    lock = threading.Lock()
    with pytest.raises(TypeError, match=r"streams\[0\] cannot be pickled for the Dask workers"):
        run_many([est], [functools.partial(lambda lk: [X], lock)], client=client)


@pytest.mark.parametrize("backend", ["sequential", "threads", "dask"])
def test_a_failing_stream_raises_its_error(backend, request):
    X, _ = shifting_subspaces(4, 1, (50,), random_state=0)
    bad = X.copy()
    bad[30, 2] = np.nan
    kwargs = {"sequential": {}, "threads": {"n_jobs": 2},
              "dask": {"client": request.getfixturevalue("client")
                       if backend == "dask" else None}}[backend]
    estimators = [opf.OnlinePCA(1, random_state=0), opf.OnlinePCA(1, random_state=0)]
    with pytest.raises(ValueError, match="X contains NaN or infinity") as info:
        run_many(estimators, [X, [X[:20], bad]], **kwargs)
    if sys.version_info >= (3, 11):
        assert "run_many: estimators[1] on streams[1], chunk 1" in "".join(
            getattr(info.value, "__notes__", []))
    assert not hasattr(estimators[1], "n_features_in_")


def test_docstring_examples():
    import doctest

    from onlinepca_fast import parallel

    result = doctest.testmod(parallel, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 5 and result.failed == 0


# --- Ctrl-C (issue 22, item 6) -------------------------------------------------------

class _Looping(opf.OnlinePCA):
    """An OnlinePCA whose one partial_fit runs `repeats` batches (a long stream
    in little memory); each copy being fitted records itself."""

    copies: list = []
    repeats = 400

    def partial_fit(self, X, y=None):
        _Looping.copies.append(self)
        self.batches_done = 0
        for _ in range(self.repeats):
            super().partial_fit(X)
            self.batches_done += 1
        return self


def _ctrl_c_while_two_fit(cls, estimators, streams, delay, ready=lambda copy: True):
    """run_many(n_jobs=2), SIGINT `delay` seconds after two copies of `cls`
    started fitting (they record themselves in ``cls.copies``) and are
    `ready` (waited for: on a loaded machine a fixed delay may end before a
    fit has done anything): it raises KeyboardInterrupt once its pool has
    stopped.  Returns those copies."""
    import signal

    def interrupt():
        deadline = time.monotonic() + 120  # (the test's assertions then say why)
        while ((len(cls.copies) < 2 or not all(ready(c) for c in cls.copies[:2]))
               and time.monotonic() < deadline):
            threading.Event().wait(0.005)
        threading.Event().wait(delay)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    killer = threading.Thread(target=interrupt)
    killer.start()
    with pytest.raises(KeyboardInterrupt):
        run_many(estimators, streams, n_jobs=2)
    killer.join()
    assert not [t for t in threading.enumerate() if t.name.startswith("run_many")]
    fits, cls.copies = cls.copies, []
    return fits


def test_ctrl_c_stops_the_running_fits_on_threads():
    """Issue 22, item 6: run_many(n_jobs=2) raised KeyboardInterrupt only once
    the running fits had finished their streams (40 s).  Now they stop at
    their next compiled chunk: the interrupt arrives while both are in their
    first batches, and neither has run more than a few more of its 400."""
    X, _ = shifting_subspaces(20, 2, (1000, 1000), random_state=0)
    _Looping.copies = []
    estimators = [_Looping(2, eta=1.0, random_state=s) for s in range(3)]
    # the pool has stopped (run_many waited for its threads) ...
    fits = _ctrl_c_while_two_fit(_Looping, estimators, [X, X, X], 0.1,
                                 ready=lambda fit: getattr(fit, "batches_done", 0) >= 1)
    # ... the third fit never started, the two running ones stopped early ...
    assert len(fits) == 2
    for fit in fits:
        assert fit.batches_done < _Looping.repeats // 2
        # ... and consistently: as after exactly the rows processed
        t = fit.n_trials_
        assert 0 < t < _Looping.repeats * len(X)
        assert len(fit.expected_losses_) == len(fit.realized_losses_) == t
        oracle = opf.OnlinePCA(2, eta=1.0, random_state=fit.random_state)
        for _ in range(t // len(X)):
            oracle.partial_fit(X)
        oracle.partial_fit(X[:t % len(X)]) if t % len(X) else None
        assert_array_equal(oracle.expected_losses_, fit.expected_losses_)
        assert_array_equal(oracle.realized_losses_, fit.realized_losses_)
    assert all(not hasattr(e, "n_trials_") for e in estimators)


class _OneChunk(opf.OnlinePCA):
    """An OnlinePCA whose batches run as one compiled chunk each (as a chunk
    paced for 20 ms may last seconds on a loaded machine); each copy being
    fitted records itself."""

    copies: list = []

    def partial_fit(self, X, y=None):
        _OneChunk.copies.append(self)
        self._pace = 10**9  # (transient: not copied with the learner)
        return super().partial_fit(X)


def test_ctrl_c_stops_the_running_fits_on_threads_inside_a_chunk():
    """Issue 35, item 11: SIGINT reaches the compiled loops of the main thread
    only, so a fit on a pool thread ran its current chunk to its end (one
    lasted 1.56 s under load).  Now run_many sets the pool's stop flag, which
    the loops poll between trials: both running fits stop inside their one
    chunk, each left exactly as after the rows it processed."""
    # (a fit of these 300,000 rows lasts about a second, far past the 0.2 s
    # wait: 30,000 rows could end before it and let the third fit start)
    X, _ = shifting_subspaces(30, 2, (150000, 150000), random_state=0)
    estimators = [_OneChunk(2, eta=1.0, reorthogonalize_every=None,  # one chunk
                            random_state=s).partial_fit(X[:5]) for s in range(3)]
    _OneChunk.copies = []
    # (0.2 s: the batch validated, its chunk running)
    fits = _ctrl_c_while_two_fit(_OneChunk, estimators, [X, X, X], 0.2)
    assert sorted(fit.random_state for fit in fits) == [0, 1]
    for fit in fits:
        done = fit.n_trials_ - 5
        assert 0 <= done < len(X)  # (main: the whole chunk, len(X))
        prefix = copy.deepcopy(estimators[fit.random_state])
        if done:
            opf.OnlinePCA.partial_fit(prefix, X[:done])
        assert_same_state(fit, prefix)


@pytest.mark.parametrize("case", LEARNERS, ids=[c[0] for c in LEARNERS])
def test_a_stop_flag_stops_every_learner_between_two_trials(case):
    """The stop flag a pool thread watches (``_kernels.watching``): set before
    a batch, the batch is refused and nothing changes; set between two
    chunks (here by the progress callback), the next chunk stops before its
    first trial, the learner is that of the rows done, and going on with
    the rest gives the uninterrupted fit."""
    from onlinepca_fast._guard import reporting

    _, make, kind = case
    before = make().partial_fit(make_data(kind, 5, 0))
    X = make_data(kind, 40, 1)
    full = copy.deepcopy(before).partial_fit(X)
    flag = _kernels.StopFlag()
    flag.set()
    learner = copy.deepcopy(before)
    with _kernels.watching(flag), pytest.raises(_kernels.Stopped):
        learner.partial_fit(X)
    assert pickle.dumps(learner) == pickle.dumps(before)

    flag, reported = _kernels.StopFlag(), []

    def after_chunk(trials):
        reported.append(trials)
        if len(reported) == 2:
            flag.set()

    learner = copy.deepcopy(before)
    learner._pace = 1
    with reporting(after_chunk), _kernels.watching(flag), pytest.raises(_kernels.Stopped):
        learner.partial_fit(X)
    done = learner.n_trials_ - before.n_trials_
    assert done == sum(reported) and 0 < done < len(X)
    assert_same_state(learner, copy.deepcopy(before).partial_fit(X[:done]))
    assert_same_state(learner.partial_fit(X[done:]), full)


# --- a Dask worker lost (issue 22, item 8) ---------------------------------------------

class _Slow(opf.OnlinePCA):
    """An OnlinePCA that waits a little before each batch (so that a worker can
    be killed while the fits run)."""

    def partial_fit(self, X, y=None):
        threading.Event().wait(0.4)
        return super().partial_fit(X)


def test_a_dask_worker_killed_with_the_scattered_streams_loses_nothing():
    """Issue 22, item 8: the array streams are scattered to one worker; killing
    it lost every result (FutureCancelledError).  Now the lost stream is sent
    again and the fits rerun: the results equal the plain loop's."""
    import signal

    with local_client(by_value=__name__) as dask_client:
        X, _ = shifting_subspaces(6, 2, (100, 100), random_state=3)
        Y = X[::-1].copy()
        estimators = [_Slow(2, eta=1.0, random_state=s) for s in range(6)]
        streams = [X, Y, X, Y, X, Y]
        out = {}

        def run():
            try:
                out["fitted"] = run_many(estimators, streams, client=dask_client)
            except BaseException as exc:  # reported below
                out["error"] = exc

        runner = threading.Thread(target=run)
        runner.start()
        holders = set()
        while not holders and runner.is_alive():  # wait for the scattered arrays
            holders = {w for key, ws in dask_client.who_has().items()
                       if key.startswith("ndarray") for w in ws}
            threading.Event().wait(0.01)
        assert holders
        victim = sorted(holders)[0]
        pid = dask_client.run(os.getpid, workers=[victim])[victim]
        os.kill(pid, signal.SIGKILL)
        runner.join(300)
        assert not runner.is_alive()
        assert "error" not in out, repr(out.get("error"))
        fitted = out["fitted"]
    for est, X_i, f in zip(estimators, streams, fitted):
        oracle = opf.OnlinePCA(2, eta=1.0, random_state=est.random_state).partial_fit(X_i)
        assert f.n_trials_ == len(X_i)
        assert_array_equal(f.expected_losses_, oracle.expected_losses_)
        assert_array_equal(f.realized_losses_, oracle.realized_losses_)
        assert_array_equal(f.eigenvectors_, oracle.eigenvectors_)
