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

import numpy as np
import scipy.linalg

import onlinepca_fast as opf
from onlinepca_fast import reference
from onlinepca_fast.bench import best_time, per_trial
from onlinepca_fast.datasets import shifting_subspaces


def _per_trial(make, X, budget):
    """Seconds per trial of make().partial_fit in chunks of 50 rows (the
    median over chunks, onlinepca_fast.bench.per_trial)."""
    return per_trial(make, X, budget, chunk=50)


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
            fast = _per_trial(lambda: getattr(opf, name)(n_components=k, random_state=0), X,
                              budget)
            ref = _per_trial(lambda: getattr(reference, name)(n_components=k, random_state=0),
                            X[:min(X.shape[0], 300 if n <= 100 else 22)], budget)
            print(f"{name:<22} {n:>4} {k:>3} {fast * 1e6:>14.1f} {ref * 1e6:>12.1f} "
                  f"{ref / fast:>6.0f}x")
        if n == 20:
            mf = _per_trial(lambda: MatrixFunctionPCA(k), X[:200], budget)
            fast = _per_trial(lambda: opf.OnlinePCA(n_components=k, random_state=0), X, budget)
            print(f"{'logm/expm/svd per trial':<22} {n:>4} {k:>3} {fast * 1e6:>14.1f} "
                  f"{mf * 1e6:>12.1f} {mf / fast:>6.0f}x")

    n = 10**5
    L = np.random.default_rng(0).random((52, n))
    w = np.random.default_rng(1).random(n)
    t_exp = best_time(lambda: np.exp(w), repeat=20)
    for sampler in ["systematic", "decomposition"]:
        t = _per_trial(lambda: opf.CappedHedge(n_components=n // 2, sampler=sampler,
                                                random_state=0),
                      L, budget)
        print(f"CappedHedge n = 10^5, k = n/2, {sampler:<13}: {t * 1e6:9.1f} us/trial = "
              f"{t / t_exp:5.1f}x one numpy.exp over the weights ({t_exp * 1e6:.1f} us)")


if __name__ == "__main__":
    main()
