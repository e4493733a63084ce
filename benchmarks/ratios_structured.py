"""The structured eigenvector product against the dense GEMM, in one run.

Usage: ``python benchmarks/ratios_structured.py [--quick] [--crossover]
[--profile] [--threads K] [--no-learners] [n ...]``.

Issue "structured eigenvector products" (and its follow-up "the dense regime
on a fast BLAS"): from ``STRUCTURED_PRODUCT_MIN`` non-deflated eigenvalues on,
the eigenvector matrix of a rank-one (or bordered) update is applied as a
hierarchical product (``src/hodlr.c``) instead of one GEMM.

Benchmark against the BLAS's best kernel: a machine that sets
``OPENBLAS_CORETYPE`` (or ``OPENBLAS_L2_SIZE``) runs a slower dgemm, which
flatters every ratio against it.  Unset both in the command alone::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/ratios_structured.py

The first lines printed are the BLAS libraries and the architecture
threadpoolctl reports, and the load average (also at the end).  Then, K BLAS threads (default 1; thread CPU time for
one thread, wall time for more -- thread CPU time would miss the other
threads), min and median of several runs; the structured update, the
dense one and the dgemm are timed in interleaved rounds, so that a slow
spell of the machine hits numerator and denominator alike:

- ``rank_one_update`` with a dense z (nothing deflates) at each n (default
  1000 2000 4000): the update with the structured product, with the dense
  product (``product="dense"``), one n x n x n dgemm, the
  ratio of the minima to the dgemm's (targets <= 0.6 / 0.3 / 0.15 at
  1000 / 2000 / 4000), and the residual ``|A Q - Q L| / |A|`` and
  orthogonality ``|Q^T Q - I|`` of the structured result (<= 1e-12);
- the growth exponent of the update time from the smallest to the largest
  n, structured and dense (a GEMM is 3);
- unless ``--no-learners``: CenteredOnlinePCA in its dense steady state
  (every direction reached) at n = 2000, per trial, structured against forced
  dense (target >= 3x); OnlineKernelPCA (rbf) after t = 2000 rows, per trial
  (a bordered update of order ~t each), structured against forced dense
  (target >= 2x);
- ``--profile``: where the structured update's time goes at each n: the
  hierarchy (levels, blocks, ranks), the flops of its dense leaves and
  low-rank blocks and their sum against one dgemm's, the times of the
  compression, of the application (and its GFlop/s against the dgemm's),
  and of the rest of the update (secular solve, Loewner weights, deflation,
  gathering), and the ratio to one dgemm the update would have if the
  product ran at the dgemm's rate;
- ``--crossover``: the update's time with either product at orders around
  the crossover (how ``STRUCTURED_PRODUCT_MIN`` was chosen).
"""

import os
import sys


def _threads(argv):
    """K of ``--threads K`` (read before NumPy loads OpenBLAS)."""
    for i, a in enumerate(argv):
        if a == "--threads" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return "1"


os.environ["OPENBLAS_NUM_THREADS"] = _threads(sys.argv[1:])

import argparse  # noqa: E402
import copy  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.linalg  # noqa: E402,F401  (loads SciPy's BLAS, the one the kernels call)

import onlinepca_fast as opf  # noqa: E402
from onlinepca_fast import _kernels  # noqa: E402
from onlinepca_fast.bench import rank_one_problem  # noqa: E402
from onlinepca_fast.kernels import (  # noqa: E402
    STRUCTURED_PRODUCT_MIN,
    RankOneUpdater,
    rank_one_update,
)

CLOCK = time.thread_time


def blas_lines():
    """One line per BLAS library loaded: name, version, architecture, threads."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return ["threadpoolctl not installed: architecture unknown"]
    lines = []
    for info in threadpool_info():
        if info.get("user_api") != "blas":
            continue
        lines.append(f"{info.get('internal_api')} {info.get('version')} "
                     f"architecture {info.get('architecture')} "
                     f"threads {info.get('num_threads')} ({info.get('prefix')})")
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if var in os.environ:
            lines.append(f"warning: {var}={os.environ[var]} is set: the dgemm may not run "
                         "the best kernel (env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE ...)")
    return lines


def load_average():
    """The 1, 5 and 15 minute load averages, or "unknown"."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return "unknown"


def interleaved(jobs, repeat):
    """(min, median) seconds of each (fn, prepare) of `jobs`, timed in
    `repeat` rounds after a warm-up, one run of each job per round, so that
    a slow spell of a shared machine hits all of them alike (timed one job
    after the other, a ratio of minima moved by 10-20% between runs)."""
    for fn, prepare in jobs:
        prepare()
        fn()
    times = [[] for _ in jobs]
    for _ in range(repeat):
        for (fn, prepare), t in zip(jobs, times):
            prepare()
            t0 = CLOCK()
            fn()
            t.append(CLOCK() - t0)
    return [(min(t), float(np.median(t))) for t in times]


def gemm_job(n):
    """One n x n x n dgemm through SciPy's BLAS (the kernels'), as a job."""
    from scipy.linalg.blas import dgemm
    rng = np.random.default_rng(0)
    a = np.asfortranarray(rng.standard_normal((n, n)))
    b = np.asfortranarray(rng.standard_normal((n, n)))
    c = np.zeros((n, n), order="F")
    return (lambda: dgemm(1.0, a, b, c=c, overwrite_c=1)), (lambda: None)


def update_times(n, rho=-0.7, repeat=5, gemm=False):
    """((min, med) structured, (min, med) dense, (min, med) of one dgemm or
    None, residual, orthogonality, m), the updates (and the dgemm)
    interleaved."""
    evals, evecs, x = rank_one_problem(n, "dense", seed=n)
    upd = RankOneUpdater(n)
    dense_upd = RankOneUpdater(n, product="dense")
    d, q = evals.copy(), evecs.copy()

    def restore():
        d[:] = evals
        q[:] = evecs

    def dense():
        dense_upd.update(d, q, rho, x)
        assert dense_upd.last_info["n_structured"] == 0

    restore()
    upd.update(d, q, rho, x)
    m = upd.last_info["m"]
    crossover = _kernels.current_context().min_order  # (tuned by --crossover)
    assert upd.last_info["n_structured"] == (m >= crossover)
    a_q = evecs @ ((evecs.T @ q) * evals[:, None]) + rho * np.outer(x, x @ q)
    norm = max(abs(d[0]), abs(d[-1]))
    resid = np.linalg.norm(a_q - q * d) / norm
    orth = np.abs(q.T @ q - np.eye(n)).max()
    jobs = [(lambda: upd.update(d, q, rho, x), restore), (dense, restore)]
    if gemm:
        jobs.append(gemm_job(n))
    t = interleaved(jobs, repeat)
    return t[0], t[1], t[2] if gemm else None, resid, orth, m


def profile(n, t_gemm, rho=-0.7, repeat=5):
    """Where the structured update's time goes at order n (dense z).

    S (the secular eigenvector matrix) is the update of the identity; G
    the problem's eigenvectors.  The update, the compression alone and the
    whole hierarchical product (compression + application) are timed in
    turn, `repeat` rounds after a warm-up, so that a slow spell of a shared
    machine hits all three; each is the minimum over the rounds.  The rest
    of the update is the update minus the product (deflation, the secular
    solve, the Loewner weights, gathering G, reversing S when rho < 0).
    The flops are the product's own count from its blocks and ranks."""
    evals, evecs, x = rank_one_problem(n, "dense", seed=n)
    _, S = rank_one_update(evals, np.eye(n), rho, evecs.T @ x)
    S = np.asfortranarray(S)  # the layout the product reads (no copy in the timing)
    G = np.ascontiguousarray(evecs)
    out = np.empty((n, n))
    upd = RankOneUpdater(n)
    d, q = evals.copy(), evecs.copy()

    def update():
        d[:] = evals
        q[:] = evecs
        t0 = CLOCK()
        upd.update(d, q, rho, x)
        return CLOCK() - t0

    def product(apply):
        t0 = CLOCK()
        _kernels._hierarchical_product(S, G, apply=apply, out=out)
        return CLOCK() - t0

    update(), product(False), product(True)  # warm-up
    rounds = [(update(), product(False), product(True)) for _ in range(repeat)]
    t_update, t_comp, t_prod = (min(r[i] for r in rounds) for i in range(3))
    out, st = _kernels._hierarchical_product(S, G, out=out)
    err = np.abs(out - G @ S).max()
    gemm_rate = 2.0 * n ** 3 / t_gemm
    t_apply = t_prod - t_comp
    flops = st["leaf_flops"] + st["lowrank_flops"]
    rest = t_update - t_prod
    print(f"{n:5d} {st['levels']:3d} {st['n_blocks']:4d} {st['mean_rank']:5.1f} "
          f"{st['max_rank']:4d} {st['leaf_flops'] / 1e9:6.2f} {st['lowrank_flops'] / 1e9:7.2f} "
          f"{flops / (2.0 * n ** 3):6.3f} {t_comp * 1e3:7.1f} {t_apply * 1e3:7.1f} "
          f"{flops / t_apply / 1e9:6.1f} {gemm_rate / 1e9:6.1f} {rest * 1e3:7.1f} "
          f"{(flops / gemm_rate + t_comp + rest) / t_gemm:9.3f} {err:8.1e}", flush=True)


def per_trial(learner, X):
    t0 = CLOCK()
    learner.partial_fit(X)
    return (CLOCK() - t0) / X.shape[0]


def learner_ratio(make, X_warm, X_timed, repeat=3):
    """Per-trial seconds (structured, dense), each the minimum over `repeat`
    copies of the warmed-up learner on the same rows from the same state.

    A copy builds its engine on its first row: the workspace is allocated
    and first touched (CenteredOnlinePCA at n = 2000: ~435 ms for that row
    against ~130 for the next ones, page faults mostly).  That is not the
    steady state, so each copy takes X_timed's first row untimed."""
    warm = make().fit(X_warm)
    fast, slow = [], []
    for _ in range(repeat):
        a, b = copy.deepcopy(warm), copy.deepcopy(warm)
        a.partial_fit(X_timed[:1])
        fast.append(per_trial(a, X_timed[1:]))
        with _kernels.tuning(product="dense"):  # b's engine is built here
            b.partial_fit(X_timed[:1])
            slow.append(per_trial(b, X_timed[1:]))
        np.testing.assert_allclose(a.expected_losses_, b.expected_losses_, rtol=0, atol=1e-9)
    return min(fast), min(slow)


def crossover():
    print(f"crossover (STRUCTURED_PRODUCT_MIN = {STRUCTURED_PRODUCT_MIN}); "
          "the crossover lowered to 100 for this table; min (median) ms")
    with _kernels.tuning(min_order=100):
        print(f"{'n':>5} {'dense ms':>15} {'structured ms':>15} {'ratio':>6}")
        for n in (200, 256, 320, 384, 448, 512, 640):
            t_s, t_d, *_ = update_times(n, repeat=9)
            print(f"{n:5d} {t_d[0] * 1e3:7.2f} ({t_d[1] * 1e3:5.2f}) "
                  f"{t_s[0] * 1e3:7.2f} ({t_s[1] * 1e3:5.2f}) {t_s[0] / t_d[0]:6.2f}", flush=True)


def main(argv=None):
    global CLOCK
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", type=int, metavar="n",
                    help="orders of the update (default 1000 2000 4000)")
    ap.add_argument("--quick", action="store_true",
                    help="orders 600 and 1000, the learners at n = 700 / t = 500")
    ap.add_argument("--crossover", action="store_true", help="also the crossover table")
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS threads (default 1; more: wall time)")
    ap.add_argument("--profile", action="store_true",
                    help="also where the structured update's time goes (compression, "
                         "application at its flop count, the rest), one BLAS thread")
    ap.add_argument("--no-learners", action="store_true",
                    help="only the update table (and --crossover)")
    args = ap.parse_args(argv)
    if args.threads > 1:
        CLOCK = time.perf_counter
    sizes = args.sizes or ([600, 1000] if args.quick else [1000, 2000, 4000])
    targets = {1000: 0.6, 2000: 0.3, 4000: 0.15}
    for line in blas_lines():
        print(line)
    print(f"load average {load_average()} ({os.cpu_count()} CPUs; a shared machine "
          "inflates wall time with more than one thread)")
    clock = "thread CPU time" if args.threads == 1 else "wall time (a shared machine inflates it)"
    print(f"{args.threads} BLAS thread(s), {clock}, min (median) of several runs")
    print(f"{'n':>5} {'m':>5} {'structured ms':>16} {'dense ms':>16} {'dgemm ms':>16} "
          f"{'struct/gemm':>11} {'dense/gemm':>10} {'residual':>9} {'orthogonality':>13}")
    times, gemm_times = {}, {}
    for n in sizes:
        t_s, t_d, t_g, resid, orth, m = update_times(n, repeat=5, gemm=True)
        times[n] = (t_s[0], t_d[0])
        gemm_times[n] = t_g[0]
        target = targets.get(n)
        ratio = t_s[0] / t_g[0]
        mark = "" if target is None else ("  ok" if ratio <= target else f"  MISSES <= {target}")
        print(f"{n:5d} {m:5d} {t_s[0] * 1e3:7.1f} ({t_s[1] * 1e3:6.1f}) "
              f"{t_d[0] * 1e3:7.1f} ({t_d[1] * 1e3:6.1f}) {t_g[0] * 1e3:7.1f} ({t_g[1] * 1e3:6.1f}) "
              f"{ratio:11.3f} {t_d[0] / t_g[0]:10.2f} {resid:9.1e} {orth:13.1e}{mark}",
              flush=True)
    if len(sizes) > 1:
        lo, hi = min(sizes), max(sizes)
        span = math.log(hi / lo)
        print(f"growth exponent n = {lo} -> {hi}: structured "
              f"{math.log(times[hi][0] / times[lo][0]) / span:.2f}, dense "
              f"{math.log(times[hi][1] / times[lo][1]) / span:.2f}")

    if args.profile:
        print("profile of the structured update (one BLAS thread; levels, blocks, mean and "
              "max rank; GFlop of the leaves and of the low-rank blocks; their sum / one "
              "dgemm's; ms of compression and of application; GFlop/s of the application "
              "and of the dgemm; ms of the rest of the update (secular solve, Loewner, "
              "deflation, gathering); the ratio to one dgemm if the product ran at the "
              "dgemm's rate; |GS - G@S|)")
        print(f"{'n':>5} {'lv':>3} {'blk':>4} {'r':>5} {'rmax':>4} {'leafGF':>6} {'lowGF':>7} "
              f"{'flop/g':>6} {'comp':>7} {'apply':>7} {'GF/s':>6} {'gemmGF':>6} {'rest':>7} "
              f"{'at gemm':>9} {'error':>8}")
        for n in sizes:
            profile(n, gemm_times[n])
    if not args.no_learners:
        n = 700 if args.quick else 2000
        rng = np.random.default_rng(1)
        X = rng.standard_normal((n + 30, n)) * np.arange(1, n + 1) ** -0.5
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        t_fast, t_slow = learner_ratio(
            lambda: opf.CenteredOnlinePCA(10, random_state=0, state="dense"),
            X[:n + 20], X[n + 20:])
        print(f"CenteredOnlinePCA dense steady state, n = {n}: {t_fast * 1e3:.1f} ms per trial, "
              f"dense product {t_slow * 1e3:.1f} ms: {t_slow / t_fast:.2f}x"
              + ("" if args.quick else ("  ok" if t_slow / t_fast >= 3 else "  MISSES >= 3x")),
              flush=True)

        t = 500 if args.quick else 2000
        Xk = np.random.default_rng(2).standard_normal((t + 10, 10))
        t_fast, t_slow = learner_ratio(
            lambda: opf.OnlineKernelPCA(5, kernel="rbf", gamma=0.1, random_state=0),
            Xk[:t], Xk[t:])
        print(f"OnlineKernelPCA rbf after t = {t} rows: {t_fast * 1e3:.1f} ms per trial, "
              f"dense product {t_slow * 1e3:.1f} ms: {t_slow / t_fast:.2f}x"
              + ("" if args.quick else ("  ok" if t_slow / t_fast >= 2 else "  MISSES >= 2x")),
              flush=True)
    if args.crossover:
        crossover()
    print(f"load average at the end {load_average()}")


if __name__ == "__main__":
    main()
