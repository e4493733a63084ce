"""Per-trial time of the learners against the reference, in one run.

Usage: ``python benchmarks/ratios_learners.py [--quick]``.

Targets (issue "learner family"): OnlinePCA at n = 20, k = 2 at least 20x
faster than the reference and at least 100x faster than a logm/expm/svd
per trial implementation (the method of the public research code);
OnlinePCA and CenteredOnlinePCA at n = 500, k = 10 on the WK Sec. 8 stream
at least 20x faster than the reference; CappedHedge at n = 10^5 experts
with the systematic sampler under 10x the time of one numpy.exp over the
weights.
"""

import argparse
import time

import numpy as np
import scipy.linalg

import onlinepca_fast as opf
from onlinepca_fast import kernels, reference
from onlinepca_fast.datasets import shifting_subspaces


def per_trial(learner, X, budget=5.0):
    """Seconds per trial of learner.partial_fit over rows of X (within budget)."""
    learner.partial_fit(X[:2])
    done, start = 0, time.perf_counter()
    for lo in range(2, X.shape[0], 50):
        learner.partial_fit(X[lo:lo + 50])
        done += X[lo:lo + 50].shape[0]
        if time.perf_counter() - start > budget:
            break
    return (time.perf_counter() - start) / done


class MatrixFunctionPCA:
    """WK Alg. 5 the way the public research code does it: every trial
    takes logm, expm and an SVD of the full matrix, and caps by sorting."""

    def __init__(self, n_components, eta=1.0, seed=0):
        self.k, self.eta, self.rng = n_components, eta, np.random.default_rng(seed)

    def partial_fit(self, X):
        n = X.shape[1]
        if not hasattr(self, "W"):
            self.W = np.eye(n) / n
        d = n - self.k
        for x in X:
            U, w, _ = np.linalg.svd(self.W)
            corner = reference.sample_corner(w, d, self.rng)
            z = U.T @ x
            self.loss = np.sum(z[corner] ** 2)
            M = scipy.linalg.expm(scipy.linalg.logm(self.W).real - self.eta * np.outer(x, x))
            U, w, _ = np.linalg.svd(M)
            self.W = (U * reference.cap(w, d)) @ U.T
        return self


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs")
    args = parser.parse_args(argv)
    budget = 1.0 if args.quick else 5.0

    print(f"{'learner':<22} {'n':>4} {'k':>3} {'fast us/trial':>14} "
          f"{'reference':>12} {'ratio':>7}")
    for n, k in [(20, 2), (500, 10)]:
        X, _ = shifting_subspaces(n, 2, (500, 500, 500), random_state=0)
        for name in ["OnlinePCA", "CenteredOnlinePCA", "OnlineAdaptivePCA"]:
            fast = per_trial(getattr(opf, name)(n_components=k, random_state=0), X, budget)
            ref = per_trial(getattr(reference, name)(n_components=k, random_state=0),
                            X[:min(X.shape[0], 300 if n <= 100 else 22)], budget)
            print(f"{name:<22} {n:>4} {k:>3} {fast * 1e6:>14.1f} {ref * 1e6:>12.1f} "
                  f"{ref / fast:>6.0f}x")
        if n == 20:
            mf = per_trial(MatrixFunctionPCA(k), X[:200], budget)
            fast = per_trial(opf.OnlinePCA(n_components=k, random_state=0), X, budget)
            print(f"{'logm/expm/svd per trial':<22} {n:>4} {k:>3} {fast * 1e6:>14.1f} "
                  f"{mf * 1e6:>12.1f} {mf / fast:>6.0f}x")

    n = 10**5
    L = np.random.default_rng(0).random((52, n))
    w = np.random.default_rng(1).random(n)
    t_exp = min(_timeit(lambda: np.exp(w)) for _ in range(20))
    for sampler in ["systematic", "decomposition"]:
        t = per_trial(opf.CappedHedge(n_components=n // 2, sampler=sampler, random_state=0),
                      L, budget)
        print(f"CappedHedge n = 10^5, k = n/2, {sampler:<13}: {t * 1e6:9.1f} us/trial = "
              f"{t / t_exp:5.1f}x one numpy.exp over the weights ({t_exp * 1e6:.1f} us)")


def _timeit(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
