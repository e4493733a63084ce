"""The cumulative learners on the capped structure against their dense state.

Usage: ``python benchmarks/ratios_cumulative.py [--quick] [--large] [--trials T]``.

Issue "state that follows the capped structure": the cumulative learners
(CenteredOnlinePCA, its uncentered version, FollowTheLeader) keep
``A = log W^0 - eta C^t``, whose unreached directions form one cluster
until t >= n, so that a short stream in a huge dimension costs O(n t) per
trial, not O(n^2) (and O(n^3) for the dense eigenvector update).  For each
n: T power-law rows (spectrum i^-1 in a random basis, unit ball), the mean
per-trial time of the clustered state and of the dense state on the same
rows, measured in the same run, and their ratio; the first and the last
T/4 trials separately for the clustered state (its cost grows with m = t).
``--large`` adds n = 100,000 (clustered only: the dense state needs 75 GiB)
with its peak RSS.  One BLAS thread throughout.
"""

import argparse
import resource
import time

import numpy as np

import onlinepca_fast as opf
from onlinepca_fast.bench import ChunkedStream as Stream
from onlinepca_fast.bench import blas_limit

K = 10
LEARNERS = {
    "CenteredOnlinePCA": lambda state: opf.CenteredOnlinePCA(K, random_state=0, state=state),
    "Uncentered6": lambda state: opf.CenteredOnlinePCA(K, centered=False, random_state=0,
                                                       state=state),
    "FollowTheLeader": lambda state: opf.FollowTheLeader(K, state=state),
}


def per_trial(learner, X, parts=4):
    """Seconds per trial over each of `parts` consecutive slices of X."""
    out = []
    for P in np.array_split(X, parts):
        t0 = time.perf_counter()
        learner.partial_fit(P)
        out.append((time.perf_counter() - t0) / P.shape[0])
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 1000 only")
    ap.add_argument("--large", action="store_true", help="also n = 100,000 (clustered only)")
    ap.add_argument("--trials", type=int, default=200, help="rows per stream (default 200)")
    args = ap.parse_args(argv)
    sizes = [1000] if args.quick else [1000, 2000, 4000]
    T = args.trials
    print(f"{'learner':<18} {'n':>7} {'T':>5} {'clustered':>12} {'dense':>12} {'ratio':>7}  "
          f"{'first T/4':>11} {'last T/4':>11}  m")
    with blas_limit(1):
        runs = [(n, True) for n in sizes]
        if args.large:
            runs.insert(0, (100_000, False))  # first: its peak RSS is its own
        for n, with_dense in runs:
            X = Stream("power", n).rows(T)
            for name, make in LEARNERS.items():
                learner = make("clustered")
                parts = per_trial(learner, X)
                ours = float(np.mean(parts))
                dense = float(np.mean(per_trial(make("dense"), X))) if with_dense else float("nan")
                print(f"{name:<18} {n:>7} {T:>5} {ours * 1e3:9.2f} ms {dense * 1e3:9.2f} ms "
                      f"{dense / ours:6.1f}x  {parts[0] * 1e3:8.2f} ms {parts[-1] * 1e3:8.2f} ms  "
                      f"{learner.eigenvalues_.size}", flush=True)
            if not with_dense:
                rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                print(f"    n = {n}: peak RSS {rss:.0f} MB", flush=True)


if __name__ == "__main__":
    main()
