"""Per-trial time of the dense and the clustered state against m / n, and the
crossover ``state="auto"`` uses (issue 23: auto chooses by m at every n).

Two regimes (``--regime``):

- ``steady`` (the default, what ``state="auto"`` is set from): rows in a
  random r-dimensional subspace (standard deviations i^-0.7, max |x| = 1),
  eta = 1e-3, so that after 3 r + 200 warm-up rows m = r explicit
  directions stay explicit; the next 100 rows are timed.  The row adds no
  direction: the steady state of a learner whose m capping (or the data's
  rank) holds still.
- ``growing``: as follows.

In the growing regime, for each n, OnlinePCA (k = 10, eta = 1e-3: capping does not bind) is fed
full-rank rows (spectrum i^-0.7 in a random basis, max |x| = 1, as issue
23), so that each row adds one explicit direction: after m warm-up rows
m directions are explicit, and the next T rows (m -> m + T, T <= m / 10)
are timed by thread CPU time, one BLAS thread, in each state.  The
crossover at n is the smallest m / n at which the dense trial is at most
the clustered one.  T = 40 trials per timing (m varies by +-20 around
its value: coarse at n = 50), best of 3.  Run::

    OPENBLAS_NUM_THREADS=1 python -m benchmarks.crossover_state [--quick]
"""

from __future__ import annotations

import argparse
import os
import pickle
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import onlinepca_fast as opf  # noqa: E402

try:  # the BLAS report of benchmarks/workloads.py
    from .workloads import one_blas_thread_report  # noqa: E402
except ImportError:  # run as a script: benchmarks/ is on the path
    from workloads import one_blas_thread_report  # noqa: E402

FRACTIONS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8)
SIZES = (20, 32, 50, 100, 200, 400, 1000, 2000)
#: clustered warm-up costs ~m^3 per trial: skip larger m
MAX_M = 400


def rows(n, T, seed):
    rng = np.random.default_rng(seed)
    B = np.linalg.qr(rng.standard_normal((n, n)))[0]
    X = (rng.standard_normal((T, n)) * np.arange(1, n + 1) ** -0.7) @ B.T
    return X / np.linalg.norm(X, axis=1).max()


def per_trial(state, n, m, T, repeats=3):
    """Best of `repeats` timings of T trials from m - T/2 explicit
    directions (on copies of one warmed-up learner)."""
    X = rows(n, m + T + 1, 0)
    learner = opf.OnlinePCA(10, eta=1e-3, state=state, random_state=0)
    start = max(1, m - T // 2)
    learner.partial_fit(X[:start])
    best = np.inf
    for _ in range(repeats):
        copy = pickle.loads(pickle.dumps(learner))
        t0 = time.thread_time()
        copy.partial_fit(X[start:start + T])
        best = min(best, (time.thread_time() - t0) / T)
    return best, copy


def subspace_rows(n, r, T, seed=0):
    rng = np.random.default_rng(seed)
    B = np.linalg.qr(rng.standard_normal((n, r)))[0]
    X = (rng.standard_normal((T, r)) * np.arange(1, r + 1) ** -0.7) @ B.T
    return X / np.linalg.norm(X, axis=1).max()


def steady_trial(state, n, m, T=100, repeats=3):
    """Best of `repeats` timings of T trials with m = r explicit directions
    held (rows in an r-dimensional subspace, warmed up on 3 r + 200 rows)."""
    warm = 3 * m + 200
    X = subspace_rows(n, m, warm + T)
    learner = opf.OnlinePCA(10, eta=1e-3, state=state, random_state=0)
    learner.partial_fit(X[:warm])
    best = np.inf
    for _ in range(repeats):
        copy = pickle.loads(pickle.dumps(learner))
        t0 = time.thread_time()
        copy.partial_fit(X[warm:])
        best = min(best, (time.thread_time() - t0) / T)
    return best, copy


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer sizes and trials")
    ap.add_argument("--regime", choices=("steady", "growing"), default="steady")
    args = ap.parse_args(argv)
    one_blas_thread_report()
    print(f"# regime: {args.regime}")
    sizes = (50, 200, 1000) if args.quick else SIZES
    print(f"{'n':>5} {'m/n':>5} {'m':>5} {'dense us':>10} {'clustered us':>13} {'ratio':>6}")
    crossover = {}
    for n in sizes:
        found = None
        for f in FRACTIONS:
            m = max(1, int(round(f * n)))
            if m > MAX_M:
                break
            if args.regime == "steady":
                dense, _ = steady_trial("dense", n, m)
                clus, _ = steady_trial("clustered", n, m)
            else:
                dense, _ = per_trial("dense", n, m, 40)
                clus, _ = per_trial("clustered", n, m, 40)
            print(f"{n:>5} {f:>5.2f} {m:>5} {dense * 1e6:>10.1f} {clus * 1e6:>13.1f} "
                  f"{clus / dense:>6.2f}", flush=True)
            if found is None and dense <= clus:
                found = f
        crossover[n] = found
    print("crossover m/n (dense at most clustered):",
          ", ".join(f"n={n}: {'> measured' if f is None else f}" for n, f in crossover.items()))


if __name__ == "__main__":
    main()
