"""Many independent learners on many streams: in order, on threads, or on Dask.

Users run one learner per sensor, user or asset, or sweep ``eta``,
``alpha`` and seeds over streams.  The learners are independent and their
trial loops release the GIL, so a thread pool scales on one machine;
past one machine, a ``dask.distributed`` cluster runs them.
:func:`run_many` does all three with the same results, bit for bit.

Examples
--------
>>> import numpy as np
>>> from onlinepca_fast import OnlinePCA
>>> from onlinepca_fast.parallel import run_many
>>> rng = np.random.default_rng(0)
>>> streams = [rng.normal(size=(200, 6)) / 3 for _ in range(4)]
>>> learners = [OnlinePCA(n_components=2, eta=eta, random_state=0) for eta in (0.5, 1, 2, 4)]
>>> fitted = run_many(learners, streams, n_jobs=2)
>>> [f.n_trials_ for f in fitted]
[200, 200, 200, 200]
>>> hasattr(learners[0], "n_trials_")     # the inputs are left as they were
False
>>> again = run_many(learners, streams)  # in order, in this thread
>>> all(np.array_equal(a.realized_losses_, b.realized_losses_) for a, b in zip(fitted, again))
True
"""

from __future__ import annotations

import contextlib
import copy
import numbers
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Any

import numpy as np

from . import _kernels

__all__ = ["run_many"]

_ARRAY, _CALLABLE, _ITERABLE = "array", "callable", "iterable"


def run_many(estimators: Sequence[Any], streams: Sequence[Any], *, n_jobs: int | None = None,
             client: Any = None) -> list[Any]:
    """Fit estimator i on stream i, for every i; return the fitted estimators.

    Each stream is processed in order, one ``partial_fit`` per chunk of rows,
    starting from the estimator's current state (pass unfitted estimators
    for fresh runs).  The streams run one after the other in this thread by
    default, on a pool of ``n_jobs`` threads, or on the workers of a Dask
    cluster; the results are the same in all three cases, bit for bit
    (losses, eigensystems, generator states).

    Parameters
    ----------
    estimators : sequence of estimators
        Anything with ``partial_fit(X)``: the learners of
        :mod:`onlinepca_fast` (and scikit-learn's incremental estimators).
    streams : sequence, one per estimator
        Each one of:

        - an array (``numpy.ndarray``, or anything with ``__array__`` such as a
          pandas DataFrame) of shape ``(n_rows, n_features)``: one chunk;
        - a callable taking no argument and returning an iterable of chunks
          (arrays of rows): called where the estimator runs, so that a
          stream need not fit in memory nor travel to a Dask worker (read a
          file chunk by chunk, generate data ...); for Dask it must pickle
          with cloudpickle (a function of an importable module or of the
          script run, a lambda, a ``functools.partial`` ...);
        - an iterable of chunks (a list of arrays, a generator): iterated
          here or on a thread; not with Dask if it is an iterator (it cannot
          be shipped; pass a callable returning it).

        A list counts as an iterable of chunks, not as an array.
    n_jobs : int or None, default=None
        Run the streams on a pool of this many threads (``1``: in this
        thread, as for None).  The learners' loops release the GIL, so up to
        one thread per core gains.
    client : dask.distributed.Client or None, default=None
        Run each stream as one task on the client's cluster (the estimators
        and the array streams are sent to the workers, the fitted
        estimators gathered back).  The workers need ``onlinepca_fast``
        installed.  Not together with ``n_jobs``.

    Returns
    -------
    fitted : list
        The fitted estimators, in the order of ``estimators``.

    Notes
    -----
    **The estimators passed in are never modified**: each stream runs on a
    deep copy of its estimator (on Dask, on the copy the worker unpickles),
    and the copies are returned.  So the contract is the same for every
    backend, and running it twice gives the same result twice.  A
    ``numpy.random.Generator`` given as ``random_state`` is copied with its
    estimator: the caller's generator is not advanced, and two estimators
    given the same generator draw the same numbers (independently of the
    order in which they run).

    Errors: the first failing stream's exception is raised (with a note on
    Python >= 3.11 saying which estimator and chunk); the other streams are
    cancelled where possible.  Ctrl-C (``KeyboardInterrupt``) propagates
    on threads as promptly as in order: the running fits stop before their
    next trial (the learners of this package; another library's estimator
    between two chunks of its stream), each left as after the rows it
    processed, rather than finishing their streams.  On Dask,
    a stream scattered to a worker that dies is sent again and its fits
    rerun (a lost task of a callable stream is rerun by the scheduler);
    tasks already running on the workers when Ctrl-C cancels them may run
    to their end there.

    Memory: only the running fits' learners are alive, besides the fitted
    ones returned (copies are made as the fits start).

    Examples
    --------
    Chunks from a callable, so that the data are made (or read) where the
    learner runs:

    >>> import functools
    >>> from onlinepca_fast import CenteredOnlinePCA
    >>> from onlinepca_fast.datasets import shifting_subspaces
    >>> def chunks(seed, size=100):
    ...     X, _ = shifting_subspaces(8, 2, (300,), random_state=seed)
    ...     return (X[i:i + size] for i in range(0, len(X), size))
    >>> learners = [CenteredOnlinePCA(n_components=2, random_state=s) for s in range(3)]
    >>> fitted = run_many(learners, [functools.partial(chunks, s) for s in range(3)])
    >>> [f.n_trials_ for f in fitted]
    [300, 300, 300]
    """
    return [est for est, _ in _execute(estimators, streams, n_jobs=n_jobs, client=client)]


# --- validation ---------------------------------------------------------------

def _stream_kind(stream, i):
    if isinstance(stream, np.ndarray) or hasattr(stream, "__array__"):
        return _ARRAY
    if callable(stream):
        return _CALLABLE
    if isinstance(stream, (str, bytes)) or not hasattr(stream, "__iter__"):
        raise TypeError(f"streams[{i}] must be an array, a callable returning an iterable "
                        f"of chunks, or an iterable of chunks; got {type(stream).__name__}")
    return _ITERABLE


def _check(estimators, streams, n_jobs, client):
    """(estimators, streams, kinds) as lists, or TypeError/ValueError naming the argument."""
    for name, value in (("estimators", estimators), ("streams", streams)):
        if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__") \
                or not hasattr(value, "__getitem__"):
            raise TypeError(f"{name} must be a sequence (list or tuple), got "
                            f"{type(value).__name__}")
    # a Sequence is kept as it is (a sweep passes one that makes its learners
    # when read); anything else with len and [] becomes a list
    estimators = estimators if isinstance(estimators, Sequence) else list(estimators)
    streams = streams if isinstance(streams, Sequence) else list(streams)
    if len(estimators) != len(streams):
        raise ValueError(f"estimators and streams must have the same length, got "
                         f"{len(estimators)} estimators and {len(streams)} streams")
    for i, est in enumerate(estimators):
        if not callable(getattr(est, "partial_fit", None)):
            raise TypeError(f"estimators[{i}] has no partial_fit method: "
                            f"{type(est).__name__}")
    kinds = [_stream_kind(s, i) for i, s in enumerate(streams)]
    if n_jobs is not None:
        if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Integral):
            raise TypeError(f"n_jobs must be a positive int or None, got "
                            f"{type(n_jobs).__name__} {n_jobs!r}")
        if n_jobs < 1:
            raise ValueError(f"n_jobs must be a positive int or None, got {n_jobs}")
        if client is not None:
            raise ValueError("give n_jobs (threads) or client (Dask), not both")
    if client is not None:
        if not all(callable(getattr(client, m, None)) for m in ("submit", "gather", "scatter")):
            raise TypeError(f"client must be a dask.distributed.Client, got "
                            f"{type(client).__name__}")
        for i, (stream, kind) in enumerate(zip(streams, kinds)):
            if kind == _ITERABLE and hasattr(stream, "__next__"):
                raise TypeError(f"streams[{i}] is an iterator ({type(stream).__name__}), which "
                                "cannot be sent to Dask workers; pass a callable returning it")
    return estimators, streams, kinds


def _pickled(obj, name):
    """`obj` pickled by cloudpickle for a Dask worker, or TypeError naming it.

    Dask pickles a task's arguments with the standard pickle when it can,
    which refers to functions and classes by module name; cloudpickle also
    honours ``cloudpickle.register_pickle_by_value`` (code the workers
    cannot import) inside partials and containers.
    """
    import cloudpickle  # a dependency of dask.distributed

    try:
        return cloudpickle.dumps(obj)
    except Exception as exc:
        raise TypeError(f"{name} cannot be pickled for the Dask workers "
                        f"({type(exc).__name__}: {exc}); use a module-level function or a "
                        "functools.partial of one") from exc


def _fit_pickled(estimator, stream, kind, index):
    """:func:`_fit_stream` on a Dask worker: the estimator and a non-array stream
    arrive pickled by :func:`_pickled`."""
    import pickle

    estimator = pickle.loads(estimator)
    if kind != _ARRAY:
        stream = pickle.loads(stream)
    return _fit_stream(estimator, stream, kind, index)


# --- execution ------------------------------------------------------------------
#
# Why our own thread pool and Dask loop, not joblib's threading and Dask
# backends (issue 38, item 7; joblib 1.6.0, distributed 2026.8, measured with
# the fits and streams of tests/test_parallel.py and benchmarks/bench_parallel.py):
#
# - same numbers: joblib keeps them (each fit runs on its own copy either way);
# - Ctrl-C on threads: ``Parallel(backend="threading")`` returns ~8 ms after the
#   signal but does not stop nor wait for the running fits: they went on for
#   1.2-1.7 s, to the end of their 20000-row streams (minutes on real ones),
#   and each interrupted call left its pool's threads behind (2 -> 14 threads
#   after 6 calls).  With our stop flag passed in, the fits stopped, but still
#   0-28 ms *after* the call had returned: the caller cannot rely on the pool
#   having stopped.  Here the call returns once the running fits have stopped
#   (~1 ms, bench_parallel.py);
# - a Dask worker lost: with the stream scattered to one worker (joblib
#   scatters large arguments once, without a recipe, as we do), killing that
#   worker failed the whole run with ``FutureCancelledError`` in 2 of 2
#   tries; here the stream is scattered again and its fits resubmitted
#   (test_a_dask_worker_killed_with_the_scattered_streams_loses_nothing);
# (Consuming each fitted learner as it finishes, as a sweep does, joblib could
# do: ``return_as="generator_unordered"``.)  What joblib would give us is
# small (a pool, ``as_completed``), so the two loops below stay.

#: Raised inside a fit running on a pool thread once :func:`run_many` stops
#: (Ctrl-C or another stream's error in the calling thread).
_Stopped = _kernels.Stopped


def _fit_stream(estimator, stream, kind, index, stop=None):
    """Fit `estimator` in place on `stream`; (estimator, seconds).  Runs on the
    thread or Dask worker that owns the estimator.

    With `stop` (a :class:`~onlinepca_fast._kernels.StopFlag`, on the pool
    threads) the fit gives up with :data:`_Stopped` once it is set: the
    learners' compiled loops poll it between two trials (SIGINT reaches
    only the main thread's), and it is checked between the stream's chunks
    (for estimators of other libraries, between their ``partial_fit``
    calls).  The learner is left consistent, as after an interrupt."""
    start = time.perf_counter()
    chunk_index = 0
    watch = contextlib.nullcontext() if stop is None else _kernels.watching(stop)
    try:
        with watch:
            if kind == _ARRAY:
                estimator.partial_fit(stream)
            else:
                for chunk_index, chunk in enumerate(stream() if kind == _CALLABLE else stream):
                    if stop is not None and stop.is_set():
                        raise _Stopped("run_many stopped")
                    estimator.partial_fit(chunk)
    except _Stopped:
        raise
    except Exception as exc:
        if hasattr(exc, "add_note"):  # Python >= 3.11
            where = "" if kind == _ARRAY else f", chunk {chunk_index}"
            exc.add_note(f"(run_many: estimators[{index}] on streams[{index}]{where})")
        raise
    return estimator, time.perf_counter() - start


def _execute(estimators, streams, *, n_jobs=None, client=None, progress=None, consume=None):
    """:func:`run_many` returning ``consume(i, fitted estimator, seconds)`` for
    every i (default: the pair), the seconds measured around the fit where it
    ran (for the sweep's time per trial).

    ``consume`` and ``progress()`` (if given) are called in this thread as each
    fit finishes, and nothing here keeps a fitted estimator after its
    ``consume`` returned: a sweep keeps its table rows only, not thousands of
    learners.  Each estimator is copied only when its fit starts, so at most
    one learner per thread or Dask task is alive at a time.
    """
    estimators, streams, kinds = _check(estimators, streams, n_jobs, client)
    report = progress if progress is not None else (lambda: None)
    if consume is None:
        def consume(i, estimator, seconds):
            return estimator, seconds
    if client is not None:
        return _on_dask(client, estimators, streams, kinds, report, consume)
    count = len(estimators)
    if n_jobs is None or n_jobs == 1 or count <= 1:
        results = []
        for i in range(count):
            fitted = _fit_stream(copy.deepcopy(estimators[i]), streams[i], kinds[i], i)
            results.append(consume(i, *fitted))
            del fitted
            report()
        return results
    return _on_threads(min(n_jobs, count), estimators, streams, kinds, report, consume)


def _on_threads(workers, estimators, streams, kinds, report, consume):
    """The fits on a pool of `workers` threads, at most `workers` at a time.

    On any exception here -- Ctrl-C (``KeyboardInterrupt`` is delivered to
    this thread, waiting below) or a stream's error -- the running fits are
    told to stop and give up before their next trial, so the exception
    propagates at once rather than after their streams.
    """
    count = len(estimators)
    results = [None] * count
    stop = _kernels.StopFlag()
    running = {}
    started = 0
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="run_many")
    try:
        while running or started < count:
            while started < count and len(running) < workers:
                job = (copy.deepcopy(estimators[started]), streams[started], kinds[started],
                       started, stop)
                running[pool.submit(_fit_stream, *job)] = started
                del job
                started += 1
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=running.__getitem__):
                i = running.pop(future)
                results[i] = consume(i, *future.result())  # raises the stream's error
                del future
                report()
            del done
        return results
    except BaseException:
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _on_dask(client, estimators, streams, kinds, report, consume):
    """The fits as Dask tasks, gathered one by one as they finish.

    Array streams are scattered once per distinct object (a data set shared
    by many estimators, as in a sweep, travels once).  Scattered data have no
    recipe: if the worker holding them dies, the scheduler forgets them and
    cancels the tasks that need them.  They are then scattered again from
    here and those tasks resubmitted (at most :data:`_MAX_RESCATTERS` times
    per stream), else a ``RuntimeError`` names the lost stream.
    """
    from distributed import as_completed as completed

    # everything is pickled (and so checked) before anything is sent
    payload = [_pickled(est, f"estimators[{i}]") for i, est in enumerate(estimators)]
    shipped = [None if kind == _ARRAY else _pickled(s, f"streams[{i}]")
               for i, (s, kind) in enumerate(zip(streams, kinds))]
    unique = {}
    for stream, kind in zip(streams, kinds):
        if kind == _ARRAY:
            unique.setdefault(id(stream), stream)
    scattered = {}

    def scatter(keys):
        if not keys:  # (Client.scatter([]) fails inside distributed)
            return
        for key, future in zip(keys, client.scatter([unique[k] for k in keys], hash=False)):
            scattered[key] = future

    def submit(i):
        arg = scattered[id(streams[i])] if kinds[i] == _ARRAY else shipped[i]
        return client.submit(_fit_pickled, payload[i], arg, kinds[i], i, pure=False)

    scatter(list(unique))
    results = [None] * len(estimators)
    retries = [0] * len(estimators)
    tasks = {}
    try:
        for i in range(len(estimators)):
            tasks[submit(i)] = i
        queue = completed(list(tasks))
        for future in queue:
            i = tasks.pop(future)
            if future.status == "finished":
                results[i] = consume(i, *future.result())
                future.release()
                report()
                continue
            if future.status == "error" or kinds[i] != _ARRAY:
                future.result()  # raises the task's error
            # cancelled by the scheduler: its scattered stream was lost with a worker
            key = id(streams[i])
            retries[i] += 1
            if retries[i] > _MAX_RESCATTERS:
                raise RuntimeError(
                    f"run_many: the Dask workers lost streams[{i}] (an array scattered to "
                    f"them) {retries[i]} times with the workers holding it; "
                    f"estimators[{i}] was not fitted")
            if scattered[key].status != "finished":
                scatter([key])
            new = submit(i)
            tasks[new] = i
            queue.add(new)
        return results
    except BaseException:
        client.cancel(list(tasks))
        raise


#: How many times a stream scattered to the Dask workers is sent again after
#: the worker holding it died.
_MAX_RESCATTERS = 3
