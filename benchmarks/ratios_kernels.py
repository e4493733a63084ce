"""Speed ratios of the vector kernels and of OnlineKernelPCA against the NumPy reference.

Usage: ``python benchmarks/ratios_kernels.py [--quick] [--threads N] [section ...]``,
sections ``vector kernel-pca`` (default: both).  One run, one machine, so the
ratios are comparable even when the absolute times are noisy; BLAS runs on
``--threads`` threads (default 1, the fairest comparison on a shared machine).

- ``vector``, targets (issue "Foundation"): cap_log at n = 10^6 at least 4x
  faster than the sort-based reference; cap_log time linear in n (10x n
  costs at most 12x time); the systematic sampler at n = 10^5, d = 10^3 at
  least 50x faster than decomposition-then-draw.
- ``kernel-pca``, target (issue "online kernel PCA"): per-trial time at
  t = 1,000 and 2,000 past points against the reference (eigh of the kernel
  matrix every trial), at least 5x faster at t = 2,000.  The data is KW
  Sec. 5's noisy cone in R^20.  For the degree-2 kernel (KW's) the kernel
  matrix has rank <= 210 and the bordered update deflates all but ~211
  eigenpairs (the "secular order", non-deflated eigenpairs + 1, is ~212);
  for "rbf" it is numerically full rank, little deflates and the update's
  one GEMM is O(t^3).
"""

import argparse

import numpy as np

import onlinepca_fast as opf
from onlinepca_fast import kernels, reference
from onlinepca_fast.bench import best_time, blas_limit, cone_stream

SECTIONS = ("vector", "kernel-pca")
KERNELS = {
    "poly2 (KW)": dict(kernel="poly", degree=2, gamma=1.0, coef0=0.0),
    "rbf": dict(kernel="rbf", gamma="auto"),
}


def section_vector(quick):
    rng = np.random.default_rng(0)

    sizes = [10**3, 10**4, 10**5, 10**6] + ([] if quick else [10**7])
    print("cap_log, d = n/10, log-weights ~ N(0, 20^2)")
    print(f"{'n':>10} {'fast ms':>10} {'reference ms':>13} {'ratio':>7} {'growth':>7}")
    prev = None
    for n in sizes:
        mu = rng.normal(scale=20.0, size=n)
        d = n // 10
        t_fast = best_time(lambda: kernels.cap_log(mu, d))
        t_ref = best_time(lambda: reference.cap_log(mu, d), repeat=3)
        growth = f"{t_fast / prev:7.1f}" if prev else " " * 7
        print(f"{n:>10} {t_fast * 1e3:>10.3f} {t_ref * 1e3:>13.3f} {t_ref / t_fast:>6.1f}x {growth}")
        prev = t_fast

    print("\ncap (linear domain), d = n/10")
    print(f"{'n':>10} {'fast ms':>10} {'reference ms':>13} {'ratio':>7}")
    for n in sizes[:-1]:
        w = rng.exponential(size=n) ** 3
        d = n // 10
        t_fast = best_time(lambda: kernels.cap(w, d))
        t_ref = best_time(lambda: reference.cap(w, d), repeat=3)
        print(f"{n:>10} {t_fast * 1e3:>10.3f} {t_ref * 1e3:>13.3f} {t_ref / t_fast:>6.1f}x")

    print("\ndecompose (WK Alg. 2, all corners), d = n/10")
    print(f"{'n':>10} {'fast ms':>10} {'reference ms':>13} {'ratio':>7}")
    for n in [10**2, 10**3, 3 * 10**3]:
        d = n // 10
        w = kernels.cap(rng.exponential(size=n) ** 3, d)
        t_fast = best_time(lambda: kernels.decompose(w, d))
        t_ref = best_time(lambda: reference.decompose(w, d), repeat=2)
        print(f"{n:>10} {t_fast * 1e3:>10.3f} {t_ref * 1e3:>13.3f} {t_ref / t_fast:>6.1f}x")

    n, d = (10**4, 10**2) if quick else (10**5, 10**3)
    w = kernels.cap(rng.exponential(size=n) ** 3, d)
    g = np.random.default_rng(1)
    t_sys = best_time(lambda: kernels.sample_corner(w, d, g, method="systematic"), repeat=20)
    t_dec = best_time(lambda: kernels.sample_corner(w, d, g, method="decomposition"), repeat=3,
                      budget=10)
    t_full = best_time(lambda: kernels.decompose(w, d), repeat=1)
    print(f"\nsample_corner at n = {n}, d = {d}")
    print(f"  systematic                        {t_sys * 1e3:10.3f} ms")
    print(f"  decomposition, stop at the draw   {t_dec * 1e3:10.3f} ms   "
          f"({t_dec / t_sys:.0f}x the systematic time)")
    print(f"  decompose then draw               {t_full * 1e3:10.3f} ms   "
          f"({t_full / t_sys:.0f}x the systematic time)")


def fast_per_trial(X, t, params, trials):
    """Seconds per trial of partial_fit with t past instances (best of 3)."""
    learner = opf.OnlineKernelPCA(5, eta=1.0, random_state=0, budget=None, **params).fit(X[:t])
    learner.partial_fit(X[t:t + 1])  # grows the buffers by half: none inside the timing
    best, lo = np.inf, t + 1
    for _ in range(3):
        t0 = time.perf_counter()
        learner.partial_fit(X[lo:lo + trials])
        best = min(best, (time.perf_counter() - t0) / trials)
        lo += trials
    stats = learner.update_stats_
    return best, stats["secular_sum"] / stats["n_updates"]


def reference_per_trial(X, t, params, repeat):
    """Seconds of the work of one reference trial with t past instances:
    reference.OnlineKernelPCA forms the t x t kernel matrix and calls eigh
    (best of repeat)."""
    past = X[:t]
    return best_time(lambda: np.linalg.eigh(reference.gram(past, past, **params)),
                     repeat=repeat, budget=float("inf"))

def section_kernel_pca(quick):
    X = cone_stream(2100)
    print("OnlineKernelPCA, n_components = 5, eta = 1, KW noisy cone in R^20")
    print(f"{'kernel':<11} {'t':>5} {'fast ms/trial':>14} {'reference ms':>13} "
          f"{'ratio':>7} {'secular order':>14}")
    for name, params in KERNELS.items():
        for t in (1000, 2000):
            fast, order = fast_per_trial(X, t, params, 5 if quick else 20)
            ref = reference_per_trial(X, t, params, 1 if quick else 3)
            print(f"{name:<11} {t:>5} {fast * 1e3:>14.2f} {ref * 1e3:>13.1f} "
                  f"{ref / fast:>6.1f}x {order:>14.0f}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", metavar="section",
                        help=f"any of {', '.join(SECTIONS)} (default: both)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    args = parser.parse_args(argv)
    unknown = [s for s in args.sections if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown section {unknown[0]!r}: choose from {', '.join(SECTIONS)}")
    sections = args.sections or SECTIONS
    with blas_limit(args.threads):
        if "vector" in sections:
            print("== vector", flush=True)
            section_vector(args.quick)
        if "kernel-pca" in sections:
            print("\n== kernel-pca", flush=True)
            section_kernel_pca(args.quick)


if __name__ == "__main__":
    main()
