"""The structured eigenvector product against the dense GEMM, in one run.

Usage: ``python benchmarks/ratios_structured.py [--quick] [--crossover] [n ...]``.

Issue "structured eigenvector products": from ``STRUCTURED_PRODUCT_MIN``
non-deflated eigenvalues on, the eigenvector matrix of a rank-one (or
bordered) update is applied as a hierarchical product (``src/hodlr.c``)
instead of one GEMM.  Printed, one BLAS thread, thread CPU time, best of
several runs:

- ``rank_one_update`` with a dense z (nothing deflates) at each n (default
  1000 2000 4000): the update with the structured product, with the dense
  product forced (``dense_eigenvector_product``), one n x n x n dgemm, the
  ratios to the dgemm (targets <= 0.6 / 0.4 / 0.25 at 1000 / 2000 / 4000),
  and the residual ``|A Q - Q L| / |A|`` and orthogonality ``|Q^T Q - I|``
  of the structured result (target <= 1e-12);
- the growth exponent of the update time from the smallest to the largest
  n, structured and dense (a GEMM is 3);
- CenteredOnlinePCA in its dense steady state (every direction reached) at
  n = 2000: per trial, structured against forced dense (target >= 3x);
- OnlineKernelPCA (rbf) after 800 rows: per trial (a bordered update of
  order ~800 each), structured against forced dense;
- ``--crossover``: the update's time with either product at orders around
  the crossover (how ``STRUCTURED_PRODUCT_MIN`` was chosen).
"""

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy / scipy load OpenBLAS

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import onlinepca_fast as opf  # noqa: E402
from onlinepca_fast import _kernels  # noqa: E402
from onlinepca_fast.bench import best_time, rank_one_problem  # noqa: E402
from onlinepca_fast.kernels import (  # noqa: E402
    STRUCTURED_PRODUCT_MIN,
    RankOneUpdater,
    dense_eigenvector_product,
)


def best(fn, repeat, prepare=None):
    return best_time(fn, repeat=repeat, budget=float("inf"), prepare=prepare,
                     clock=time.thread_time)


def update_times(n, rho=-0.7, repeat=3):
    """(structured s, dense s, residual, orthogonality, m) of one update."""
    evals, evecs, x = rank_one_problem(n, "dense", seed=n)
    upd = RankOneUpdater(n)
    d, q = evals.copy(), evecs.copy()

    def restore():
        d[:] = evals
        q[:] = evecs

    t_struct = best(lambda: upd.update(d, q, rho, x), repeat, restore)
    m = upd.last_info["m"]
    crossover = _kernels._structured_product_tuning()[0]  # (tuned by --crossover)
    assert upd.last_info["n_structured"] == (m >= crossover)
    restore()
    upd.update(d, q, rho, x)
    a_q = evecs @ ((evecs.T @ q) * evals[:, None]) + rho * np.outer(x, x @ q)
    norm = max(abs(d[0]), abs(d[-1]))
    resid = np.linalg.norm(a_q - q * d) / norm
    orth = np.abs(q.T @ q - np.eye(n)).max()
    with dense_eigenvector_product():
        t_dense = best(lambda: upd.update(d, q, rho, x), repeat, restore)
    return t_struct, t_dense, resid, orth, m


def gemm_time(n):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    out = np.empty((n, n))
    return best(lambda: np.matmul(a, b, out=out), 3)


def per_trial(learner, X):
    t0 = time.thread_time()
    learner.partial_fit(X)
    return (time.thread_time() - t0) / X.shape[0]


def learner_ratio(make, X_warm, X_timed):
    """Per-trial seconds (structured, dense) on the same rows from the same
    state (two copies of the warmed-up learner)."""
    import copy
    warm = make().fit(X_warm)
    fast, slow = copy.deepcopy(warm), copy.deepcopy(warm)
    t_fast = per_trial(fast, X_timed)
    with dense_eigenvector_product():
        t_slow = per_trial(slow, X_timed)
    np.testing.assert_allclose(fast.expected_losses_, slow.expected_losses_, rtol=0, atol=1e-9)
    return t_fast, t_slow


def crossover():
    print(f"crossover (STRUCTURED_PRODUCT_MIN = {STRUCTURED_PRODUCT_MIN}); "
          "the crossover lowered to 100 for this table")
    previous = _kernels._structured_product_tuning(100, -1, 0)
    try:
        print(f"{'n':>5} {'dense ms':>9} {'structured ms':>14} {'ratio':>6}")
        for n in (200, 256, 320, 384, 448, 512, 640):
            t_s, t_d, *_ = update_times(n, repeat=7)
            print(f"{n:5d} {t_d * 1e3:9.2f} {t_s * 1e3:14.2f} {t_s / t_d:6.2f}", flush=True)
    finally:
        _kernels._structured_product_tuning(*previous)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", type=int, metavar="n",
                    help="orders of the update (default 1000 2000 4000)")
    ap.add_argument("--quick", action="store_true",
                    help="orders 600 and 1000, the learners at n = 700 / t = 500")
    ap.add_argument("--crossover", action="store_true", help="also the crossover table")
    args = ap.parse_args(argv)
    sizes = args.sizes or ([600, 1000] if args.quick else [1000, 2000, 4000])
    targets = {1000: 0.6, 2000: 0.4, 4000: 0.25}
    print("one BLAS thread, thread CPU time")
    print(f"{'n':>5} {'m':>5} {'structured ms':>14} {'dense ms':>9} {'dgemm ms':>9} "
          f"{'struct/gemm':>11} {'dense/gemm':>10} {'residual':>9} {'orthogonality':>13}")
    times = {}
    for n in sizes:
        t_s, t_d, resid, orth, m = update_times(n)
        t_g = gemm_time(n)
        times[n] = (t_s, t_d)
        target = targets.get(n)
        mark = "" if target is None else ("  ok" if t_s / t_g <= target
                                          else f"  MISSES <= {target}")
        print(f"{n:5d} {m:5d} {t_s * 1e3:14.2f} {t_d * 1e3:9.2f} {t_g * 1e3:9.2f} "
              f"{t_s / t_g:11.2f} {t_d / t_g:10.2f} {resid:9.1e} {orth:13.1e}{mark}",
              flush=True)
    if len(sizes) > 1:
        lo, hi = min(sizes), max(sizes)
        span = math.log(hi / lo)
        print(f"growth exponent n = {lo} -> {hi}: structured "
              f"{math.log(times[hi][0] / times[lo][0]) / span:.2f}, dense "
              f"{math.log(times[hi][1] / times[lo][1]) / span:.2f}")

    n = 700 if args.quick else 2000
    rng = np.random.default_rng(1)
    X = rng.standard_normal((n + 30, n)) * np.arange(1, n + 1) ** -0.5
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    t_fast, t_slow = learner_ratio(
        lambda: opf.CenteredOnlinePCA(10, random_state=0, state="dense"), X[:n + 20], X[n + 20:])
    print(f"CenteredOnlinePCA dense steady state, n = {n}: {t_fast * 1e3:.1f} ms per trial, "
          f"dense product {t_slow * 1e3:.1f} ms: {t_slow / t_fast:.2f}x"
          + ("" if args.quick else ("  ok" if t_slow / t_fast >= 3 else "  MISSES >= 3x")),
          flush=True)

    t = 500 if args.quick else 800
    Xk = np.random.default_rng(2).standard_normal((t + 10, 8))
    t_fast, t_slow = learner_ratio(
        lambda: opf.OnlineKernelPCA(5, kernel="rbf", gamma=0.1, random_state=0), Xk[:t], Xk[t:])
    print(f"OnlineKernelPCA rbf after t = {t} rows: {t_fast * 1e3:.1f} ms per trial, "
          f"dense product {t_slow * 1e3:.1f} ms: {t_slow / t_fast:.2f}x", flush=True)
    if args.crossover:
        crossover()


if __name__ == "__main__":
    main()
