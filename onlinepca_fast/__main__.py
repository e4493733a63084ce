"""Command line entry point: ``python -m onlinepca_fast`` / ``onlinepca-fast``.

For now it prints the version and runs a self-check of the compiled
kernels against the NumPy reference on random data.
"""

import argparse
import sys

import numpy as np


def selfcheck(n=1000, d=100, seed=0, out=sys.stdout):
    """Compare the compiled kernels with the reference; return True if all agree."""
    from . import kernels, reference

    rng = np.random.default_rng(seed)
    mu = rng.normal(scale=50.0, size=n)
    checks = []

    fast = kernels.cap_log(mu, d)
    ref = reference.cap_log(mu, d)
    checks.append(("cap_log vs sort-based reference", np.max(np.abs(fast - ref)), 1e-12))

    x = rng.exponential(size=n) ** 4
    w = kernels.cap(x, d)
    checks.append(("cap vs sort-based reference",
                   np.max(np.abs(w - reference.cap(x, d)) / w), 1e-14))

    p, corners = kernels.decompose(w, d)
    recon = np.zeros(n)
    for pj, cj in zip(p, corners):
        recon[cj] += pj / d
    checks.append(("decompose reconstructs w", np.max(np.abs(recon - w)), 1e-12))

    draws = np.zeros(n)
    for _ in range(200):
        draws[kernels.sample_corner(w, d, rng, method="systematic")] += 1
    checks.append(("systematic draws are d-subsets", abs(draws.sum() - 200 * d), 0.5))

    ok = True
    for name, err, tol in checks:
        good = bool(err <= tol)
        ok &= good
        print(f"  {'ok  ' if good else 'FAIL'} {name}: error {err:.2e} (tolerance {tol:.0e})", file=out)
    return ok


def main(argv=None):
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="onlinepca-fast",
        description="Randomized online PCA learners (Warmuth & Kuzmin) with a compiled core.")
    parser.add_argument("--version", action="version", version=f"onlinepca_fast {__version__}")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("selfcheck", help="check the compiled kernels against the NumPy reference")
    args = parser.parse_args(argv)

    print(f"onlinepca_fast {__version__}")
    if args.command in (None, "selfcheck"):
        print("self-check of the compiled kernels against onlinepca_fast.reference (n=1000, d=100):")
        return 0 if selfcheck() else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
