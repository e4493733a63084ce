"""Print speed ratios of the vector kernels against the NumPy reference.

One run, one machine, so the ratios are comparable even when the absolute
times are noisy.  Usage: ``python benchmarks/ratios_kernels.py [--quick]``.

Targets (issue "Foundation"): cap_log at n = 10^6 at least 4x faster than
the sort-based reference; cap_log time linear in n (10x n costs at most 12x
time); the systematic sampler at n = 10^5, d = 10^3 at least 50x faster
than decomposition-then-draw.
"""

import argparse

import numpy as np

from onlinepca_fast import kernels, reference
from onlinepca_fast.bench import best_time


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)

    sizes = [10**3, 10**4, 10**5, 10**6] + ([] if args.quick else [10**7])
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

    n, d = (10**4, 10**2) if args.quick else (10**5, 10**3)
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


if __name__ == "__main__":
    main()
