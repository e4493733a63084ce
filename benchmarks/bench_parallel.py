"""run_many: how soon Ctrl-C stops the fits, in order and on threads (issue 35, item 11).

A helper thread sends SIGINT to the main thread at a random moment while
:func:`onlinepca_fast.parallel.run_many` fits four learners on long streams,
and the time from the signal to the ``KeyboardInterrupt`` caught around the
call is measured: the median over the shots, in milliseconds.  In order the
compiled loop of the main thread polls the SIGINT flag; on threads the pool's
stop flag, set by the main thread on ``KeyboardInterrupt``, stops the running
fits between two trials, and the call returns once they have.

Measured on the shared 2-core machine (load average 13-15 from other
jobs; OnlinePCA n = 100, k = 5, eta = 1.0, one trial ~0.15 ms; 9 shots;
:func:`ctrl_c_latencies` run against main's package and this one's, back to
back, twice), median (max) before the stop flag -> with it:

- in order, chunks paced for 20 ms: 0.3-0.4 ms (4-13) -> 0.4 ms (8-14);
- 2 threads, chunks paced for 20 ms: 14-20 ms (28-131) -> 0.7-1.2 ms (24-32);
- in order, chunks of up to 0.5 s: 0.4 ms (1-4) -> 0.4-0.6 ms (1-12);
- 2 threads, chunks of up to 0.5 s: 69-130 ms (224-236) -> 0.6-0.8 ms (9-17)

(medians; the maxima are mostly the time the scheduler kept a thread off
the cores).  The ``track_`` figures are medians over shots, so one stall
does not decide them.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import signal  # noqa: E402
import statistics  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import onlinepca_fast as opf  # noqa: E402
from onlinepca_fast.parallel import run_many  # noqa: E402


def ctrl_c_latencies(n_jobs, chunk_seconds=None, shots=9, n=100, T=20_000, seed=1):
    """Seconds from SIGINT to the KeyboardInterrupt out of ``run_many``, one
    per shot (shots where the call ended first are not counted).
    `chunk_seconds`: the compiled chunks' target duration instead of
    :data:`onlinepca_fast._guard.CHUNK_SECONDS` (long chunks: as on a loaded
    machine, where a chunk paced for 20 ms may last a second)."""
    from onlinepca_fast import _guard

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T, n)) / np.sqrt(n)
    learners = [opf.OnlinePCA(5, eta=1.0, random_state=s) for s in range(4)]
    previous = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    paced = _guard.CHUNK_SECONDS
    _guard.CHUNK_SECONDS = chunk_seconds or paced
    out = []
    try:
        for _ in range(shots):
            delay = rng.uniform(0.1, 0.6)
            sent = []

            def sender():
                time.sleep(delay)
                sent.append(time.perf_counter())
                signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

            thread = threading.Thread(target=sender)
            thread.start()
            try:
                run_many(learners, [X] * len(learners), n_jobs=n_jobs)
                thread.join()
                time.sleep(0.2)  # (the signal arrives after the call: absorbed here)
            except KeyboardInterrupt:
                out.append(time.perf_counter() - sent[0])
                thread.join()
    finally:
        _guard.CHUNK_SECONDS = paced
        signal.signal(signal.SIGINT, previous)
    return out


class RunManyCtrlC:
    timeout = 300
    params = [[None, 2], [None, 0.5]]
    param_names = ["n_jobs", "chunk_seconds"]

    def track_ctrl_c_latency(self, n_jobs, chunk_seconds):
        return 1e3 * statistics.median(ctrl_c_latencies(n_jobs, chunk_seconds))

    track_ctrl_c_latency.unit = "ms"
