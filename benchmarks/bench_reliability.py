"""Reliability benchmarks: threads, long-run drift, memory (issue 7).

Usage: ``python benchmarks/bench_reliability.py [--quick]``.  Prints

- the speed-up of two independent learners in two threads over running
  them one after the other (the trial loop releases the GIL, so on two
  free cores the ratio approaches 2);
- the orthogonality ``||Q^T Q - I||_2`` of the maintained eigenvectors
  over 10^6 trials at n = 20, with and without the periodic
  re-orthogonalisation, and for the uncentered WK Alg. 6 the distance of
  the maintained eigenvalues from numpy's ``eigvalsh`` of
  ``-log(n) I - eta sum x x^T`` formed from the data;
- the growth of traced memory over 10^5 trials with and without the loss
  records.

BLAS runs single-threaded (``OPENBLAS_NUM_THREADS=1`` unless already set)
so that the threads measured are the learners' own.  The asv ``track_*``
methods report the same quantities on smaller runs.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402

import numpy as np  # noqa: E402

import onlinepca_fast as opf  # noqa: E402
from onlinepca_fast.app.bench import low_rank_stream  # noqa: E402


def _orthogonality(Q):
    return float(np.linalg.norm(Q.T @ Q - np.eye(Q.shape[0]), 2))


# --- threads -----------------------------------------------------------------

def thread_speedup(n=200, T=300, repeats=3, name="OnlinePCA"):
    """(sequential seconds, threaded seconds) for two learners, best of repeats."""
    data = [low_rank_stream(T, n, seed) for seed in (1, 2)]

    def job(i):
        learner = getattr(opf, name)(10, random_state=i)
        for part in np.array_split(data[i], 10):
            learner.partial_fit(part)
        return learner.expected_losses_[-1]

    job(0)  # warm up
    seq, thr = math.inf, math.inf
    with ThreadPoolExecutor(max_workers=2) as pool:
        for _ in range(repeats):
            start = time.perf_counter()
            expected = [job(0), job(1)]
            seq = min(seq, time.perf_counter() - start)
            start = time.perf_counter()
            got = list(pool.map(job, (0, 1)))
            thr = min(thr, time.perf_counter() - start)
            assert got == expected  # the same results either way
    return seq, thr


# --- long runs ------------------------------------------------------------------

def drift(T=10**6, n=20, chunk=50_000, every=10_000, eta=0.5, check_eigh=True):
    """Orthogonality (and agreement with eigh) of CenteredOnlinePCA
    (centered=False) and OnlinePCA over T trials; one row per chunk."""
    rows = []
    alg6 = opf.CenteredOnlinePCA(2, eta=eta, centered=False, random_state=0,
                                 record_losses=False, reorthogonalize_every=every)
    alg5 = opf.OnlinePCA(2, eta=eta, random_state=0, record_losses=False,
                         reorthogonalize_every=every)
    S = np.zeros((n, n))
    start = time.perf_counter()
    for t in range(chunk, T + 1, chunk):
        X = low_rank_stream(chunk, n, t)
        alg6.partial_fit(X)
        alg5.partial_fit(X)
        S += X.T @ X
        ev_err = math.nan
        if check_eigh:
            A = -math.log(n) * np.eye(n) - eta * S
            ev_err = float(np.abs(np.linalg.eigvalsh(A) - alg6.eigenvalues_).max()
                           / np.linalg.norm(A, 2))
        rows.append((t, _orthogonality(alg6.eigenvectors_), ev_err,
                     _orthogonality(alg5.eigenvectors_)))
    return rows, time.perf_counter() - start


# --- memory ------------------------------------------------------------------------

def memory_growth(T=10**5, n=20, batch=1000, record=False):
    """Bytes of traced memory gained over T trials (after a warm-up batch)."""
    X = low_rank_stream(batch, n, 0)
    learner = opf.OnlinePCA(3, random_state=0, record_losses=record).partial_fit(X)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(T // batch):
            learner.partial_fit(X)
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


# --- asv ------------------------------------------------------------------------------

class Reliability:
    timeout = 600

    def track_thread_speedup_2_learners_n200(self):
        seq, thr = thread_speedup(T=150, repeats=2)
        return seq / thr

    def track_orthogonality_after_1e5_trials_n20(self):
        rows, _ = drift(T=10**5, chunk=10**5, check_eigh=False)
        return rows[-1][1]

    def track_memory_growth_1e5_trials_no_records(self):
        return memory_growth(record=False)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="10^5 instead of 10^6 trials, fewer repeats")
    args = parser.parse_args(argv)
    print(f"onlinepca_fast {opf.__version__}, OPENBLAS_NUM_THREADS="
          f"{os.environ['OPENBLAS_NUM_THREADS']}, {os.cpu_count()} cpus")

    for name in ("OnlinePCA", "CenteredOnlinePCA"):
        seq, thr = thread_speedup(name=name, repeats=2 if args.quick else 5)
        print(f"threads: 2 x {name}(n=200, k=10, 300 trials): sequential "
              f"{seq:.3f} s, 2 threads {thr:.3f} s, speed-up {seq / thr:.2f}x")

    T = 10**5 if args.quick else 10**6
    for every in (10_000, None):
        rows, secs = drift(T=T, chunk=T // 10, every=every)
        print(f"drift over {T} trials at n = 20, reorthogonalize_every={every} "
              f"({secs:.1f} s for both learners):")
        print("    trials   ||Q'Q-I|| alg6   eig err/||A||   ||Q'Q-I|| alg5")
        for t, o6, ev, o5 in rows:
            print(f"  {t:8d}   {o6:12.2e}   {ev:13.2e}   {o5:14.2e}")

    for record in (False, True):
        grown = memory_growth(record=record)
        print(f"memory: 10^5 trials (n = 20) with record_losses={record}: traced "
              f"memory grew by {grown} bytes")


if __name__ == "__main__":
    main()
