"""Time ratios of the rank-one eigen-update, printed in one run.

    python benchmarks/ratios_rank_one.py [--cpu] [--rounds R] [n ...]

For each n (default 20 100 300 1000 2000):

- dense: random spectrum and x (nothing deflates, m = n);
  eigh/update (target at n = 1000: >= 3) and update/GEMM, one n x n x n
  ``a @ b`` (target at n = 1000: <= 1.5);
- structured: x on 5 eigen-directions and 80% of the eigenvalues in one
  exact cluster; eigh/update (target at n = 1000: >= 30);
- cluster80: the same cluster with a dense x (m ~ 0.2 n), for reference.

"update" is RankOneUpdater.update in place (what a learner pays per trial);
"public" is rank_one_update with its validation and copies.  Each figure is
the best over R rounds (default 3) of several runs, so that a moment of
load from other processes does not decide it; the load average is printed.
NumPy and SciPy bundle separate OpenBLAS builds whose idle workers spin for
a while after each call and slow the other library down; the script waits
between phases so each is timed alone.

--cpu: every BLAS single-threaded and timed by the CPU time of the calling
thread, so the ratios do not depend on other load on the machine (wall
time does).  Both sides of every ratio then run on one core.
"""

import argparse
import os
import sys

if "--cpu" in sys.argv:  # must precede the first import of numpy / scipy
    os.environ["OPENBLAS_NUM_THREADS"] = "1"

import time  # noqa: E402

import numpy as np  # noqa: E402

from onlinepca_fast.app.bench import best_time, rank_one_problem  # noqa: E402
from onlinepca_fast.kernels import RankOneUpdater, rank_one_update  # noqa: E402

CPU = "--cpu" in sys.argv
SETTLE = 0.0 if CPU else 0.5  # s for the other OpenBLAS pool to go idle
clock = time.thread_time if CPU else time.perf_counter


def best(fn, repeat, prepare=None):
    time.sleep(SETTLE)
    return best_time(fn, repeat=repeat, budget=float("inf"), prepare=prepare, clock=clock)


def measure(n, kind, rho=0.7):
    evals, evecs, x = rank_one_problem(n, kind, seed=n)
    a = (evecs * evals) @ evecs.T + rho * np.outer(x, x)
    repeat = 3 if n >= 1000 else 7 if n >= 300 else 30
    t_eigh = best(lambda: np.linalg.eigh(a), repeat)

    upd = RankOneUpdater(n)
    work_evals, work_evecs = evals.copy(), evecs.copy()

    def restore():
        work_evals[:] = evals
        work_evecs[:] = evecs

    t_update = best(lambda: upd.update(work_evals, work_evecs, rho, x),
                    repeat + 2, restore)
    m = upd.last_info["m"]
    t_public = best(lambda: rank_one_update(evals, evecs, rho, x), repeat)
    return t_eigh, t_update, t_public, m


def measure_gemm(n):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    out = np.empty((n, n))
    return best(lambda: np.matmul(a, b, out=out),
                3 if n >= 1000 else 10)


def main(sizes, rounds):
    print("single-threaded BLAS, thread CPU time" if CPU
          else "default BLAS threads, wall time")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    results = {}
    for _ in range(rounds):
        for n in sizes:
            row = results.setdefault(n, {})
            row["gemm"] = min(row.get("gemm", np.inf), measure_gemm(n))
            for kind in ("dense", "structured", "cluster80"):
                t = measure(n, kind)
                old = row.get(kind, (np.inf,) * 3 + (t[3],))
                row[kind] = tuple(min(a, b) for a, b in zip(old[:3], t[:3])) \
                    + (t[3],)
    print(f"load average after: {os.getloadavg()[0]:.2f} ({rounds} rounds)")
    print(f"{'n':>5} {'case':>10} {'m':>5} {'update ms':>10} {'public ms':>10}"
          f" {'eigh ms':>9} {'gemm ms':>8} {'eigh/upd':>9} {'upd/gemm':>9}")
    for n in sizes:
        t_gemm = results[n]["gemm"]
        for kind in ("dense", "structured", "cluster80"):
            t_eigh, t_upd, t_pub, m = results[n][kind]
            ratio_gemm = f"{t_upd / t_gemm:9.2f}" if kind == "dense" else ""
            print(f"{n:5d} {kind:>10} {m:5d} {1e3 * t_upd:10.3f} "
                  f"{1e3 * t_pub:10.3f} {1e3 * t_eigh:9.2f} "
                  f"{1e3 * t_gemm:8.2f} {t_eigh / t_upd:9.1f} {ratio_gemm:>9}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[20, 100, 300, 1000, 2000],
                        metavar="n", help="orders of the update (default 20 100 300 1000 2000)")
    parser.add_argument("--cpu", action="store_true",
                        help="one BLAS thread, timed by the thread's CPU time")
    parser.add_argument("--rounds", type=int, default=3, metavar="R",
                        help="best over R rounds (default 3)")
    args = parser.parse_args()
    main(args.sizes, args.rounds)
