"""The learners' speed ratios and regret, printed in one run.

Usage: ``python benchmarks/ratios_learners.py [--quick] [--large] [section ...]``,
sections ``reference states learn-one digits`` (default: all).  The
workloads are those of the asv suite (``benchmarks/workloads.py``); one
BLAS thread throughout.

- ``reference``: per-trial time against the NumPy reference (eigh every
  trial) on the WK Sec. 8 stream at n = 20 (k = 2) and 500 (k = 10), and
  against a logm/expm/svd trial (the public research code's method);
  ``CappedHedge`` at n = 10^5 experts against one ``numpy.exp`` over the
  weights.  Targets (issue "learner family"): >= 20x, >= 100x, <= 10x.
- ``states``: per-trial time of each learner (k = 10, eta = 1) in its
  dense and its clustered state against n, on power-law rows (spectrum
  i^-1 in a random basis), after a warm-up, the median over chunks; the
  ratio to scikit-learn's ``IncrementalPCA(10).partial_fit`` per sample on
  the same chunks (target for OnlinePCA / OnlineAdaptivePCA clustered:
  <= 2x at n = 1000, 2000), the dense state over the clustered one, m (the
  explicit eigenpairs) and the growth exponent from n = 1000 to 2000.
  ``--large``: also n = 100,000, clustered, with the peak RSS (target
  <= 3x IncrementalPCA, < 1.5 GB).
- ``learn-one``: seconds per ``learn_one(row)`` and per river
  ``learn_one(dict)`` against a row inside ``partial_fit`` (n = 20, k = 2;
  target: both <= 2x).
- ``digits``: the total loss on scikit-learn's bundled digits streamed
  class by class against the best fixed 2-dim subspace in hindsight (YL's
  k = 2, eta = 5, alpha = 1e-4), and the regret.
"""

import argparse
import math
import resource

# benchmarks/workloads.py first: it limits BLAS to one thread before numpy loads
try:
    from . import workloads as W  # imported as benchmarks.ratios_learners (asv's discovery)
except ImportError:
    import workloads as W  # run as a script: benchmarks/ is on the path

import numpy as np  # noqa: E402
import scipy.linalg  # noqa: E402

import onlinepca_fast as opf  # noqa: E402
from onlinepca_fast import reference  # noqa: E402
from onlinepca_fast.app.bench import best_time, per_trial  # noqa: E402
from onlinepca_fast.datasets import shifting_subspaces  # noqa: E402

SECTIONS = ("reference", "states", "learn-one", "digits")


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


def section_reference(quick):
    budget = 1.0 if quick else 5.0
    print(f"{'learner':<22} {'n':>4} {'k':>3} {'fast us/trial':>14} "
          f"{'reference':>12} {'ratio':>7}")
    for n, k in [(20, 2), (500, 10)]:
        X, _ = shifting_subspaces(n, 2, (500, 500, 500), random_state=0)
        for name in ["OnlinePCA", "CenteredOnlinePCA", "OnlineAdaptivePCA"]:
            fast = per_trial(lambda: getattr(opf, name)(n_components=k, eta=W.ETA,
                                                        random_state=0), X, budget, 50)
            ref = per_trial(lambda: getattr(reference, name)(n_components=k, eta=W.ETA,
                                                             random_state=0),
                            X[:300 if n <= 100 else 22], budget, 50)
            print(f"{name:<22} {n:>4} {k:>3} {fast * 1e6:>14.1f} {ref * 1e6:>12.1f} "
                  f"{ref / fast:>6.0f}x", flush=True)
        if n == 20:
            mf = per_trial(lambda: MatrixFunctionPCA(k), X[:200], budget, 50)
            fast = per_trial(lambda: opf.OnlinePCA(n_components=k, eta=W.ETA, random_state=0),
                             X, budget, 50)
            print(f"{'logm/expm/svd per trial':<22} {n:>4} {k:>3} {fast * 1e6:>14.1f} "
                  f"{mf * 1e6:>12.1f} {mf / fast:>6.0f}x", flush=True)
    n = 10**5
    L = np.random.default_rng(0).random((52, n))
    w = np.random.default_rng(1).random(n)
    t_exp = best_time(lambda: np.exp(w), repeat=20)
    for sampler in ["systematic", "decomposition"]:
        t = per_trial(lambda: opf.CappedHedge(n_components=n // 2, eta=W.ETA, sampler=sampler,
                                              random_state=0), L, budget, 50)
        print(f"CappedHedge n = 10^5, k = n/2, {sampler:<13}: {t * 1e6:9.1f} us/trial = "
              f"{t / t_exp:5.1f}x one numpy.exp over the weights ({t_exp * 1e6:.1f} us)",
              flush=True)


def section_states(quick, large):
    warm, chunk, chunks = (100, 50, 3) if quick else (200, 50, 4)
    sizes = [1000] if quick else [1000, 2000]
    print(f"{'learner':<18} {'state':<9} {'n':>7} {'m':>5} {'ms/trial':>9} "
          f"{'IPCA ms/sample':>15} {'ratio':>7} {'dense/clustered':>16}")
    if large:  # first, so that the peak RSS is its own
        work = W.LearnerTrials("OnlinePCA", 100_000, "clustered", 100, 100, 2)
        ours, theirs, ratio = work.ratio_to_incremental_pca()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{'OnlinePCA':<18} {'clustered':<9} {100_000:>7} "
              f"{work.learner.eigenvalues_.size:>5} {ours * 1e3:>9.2f} {theirs * 1e3:>15.2f} "
              f"{ratio:>6.2f}x {'':>16}  peak RSS {rss:.0f} MB (target < 1500 MB)",
              flush=True)
    times = {}
    for n in sizes:
        for name in W.LEARNERS:
            for state in W.STATES:
                work = W.LearnerTrials(name, n, state, warm, chunk, chunks)
                ours, theirs, ratio = work.ratio_to_incremental_pca()
                times[name, state, n] = (ours, work.learner.eigenvalues_.size)
                vs = ""
                if state == "clustered":
                    vs = f"{times[name, 'dense', n][0] / ours:>15.1f}x"
                print(f"{name:<18} {state:<9} {n:>7} {times[name, state, n][1]:>5} "
                      f"{ours * 1e3:>9.3f} {theirs * 1e3:>15.3f} {ratio:>6.2f}x {vs}",
                      flush=True)
    if len(sizes) > 1:
        lo, hi = sizes[0], sizes[-1]
        for (name, state, n), (t, m) in times.items():
            if n == hi:
                t1, m1 = times[name, state, lo]
                print(f"growth {name:<18} {state:<9} n {lo} -> {hi}: exponent "
                      f"{math.log(t / t1) / math.log(hi / lo):.2f} (m {m1} -> {m})")


def section_learn_one(quick, rows, repeats):
    if quick:
        rows, repeats = min(rows, 1000), min(repeats, 3)
    print(f"n = 20, k = 2, {rows} rows, best of {repeats}")
    print(f"{'learner':<20} {'batch us/row':>13} {'learn_one us':>13} {'river us':>10} "
          f"{'learn_one/batch':>16} {'river/batch':>12}")
    for name in W.ROW_LEARNERS:
        t_batch, t_one, t_dict = W.learn_one_overhead(name, rows=rows, repeats=repeats)
        river = (f"{t_dict * 1e6:>10.2f}", f"{t_dict / t_batch:>11.1f}x") \
            if t_dict is not None else (f"{'-':>10}", f"{'(no river)':>12}")
        print(f"{name:<20} {t_batch * 1e6:>13.2f} {t_one * 1e6:>13.2f} {river[0]} "
              f"{t_one / t_batch:>15.1f}x {river[1]}", flush=True)
    print("target: learn_one/batch and river/batch at most 2x")


def section_digits():
    print("digits (1797 images, 64 features, class by class), k = 2, eta = 5, alpha = 1e-4")
    print(f"{'learner':<20} {'total loss':>11} {'best subspace':>14} {'regret':>9} {'ratio':>7}")
    for name in ("OnlinePCA", "OnlineAdaptivePCA", "FollowTheLeader"):
        total, best, regret = W.digits_regret(name)
        print(f"{name:<20} {total:>11.2f} {best:>14.2f} {regret:>9.2f} {total / best:>6.2f}x",
              flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sections", nargs="*", metavar="section",
                    help=f"any of {', '.join(SECTIONS)} (default: all)")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    ap.add_argument("--large", action="store_true", help="states: also n = 100,000")
    ap.add_argument("--rows", type=int, default=2000, help="learn-one: rows (default 2000)")
    ap.add_argument("--repeats", type=int, default=7,
                    help="learn-one: measurements, the best kept (default 7)")
    args = ap.parse_args(argv)
    unknown = [s for s in args.sections if s not in SECTIONS]
    if unknown:
        ap.error(f"unknown section {unknown[0]!r}: choose from {', '.join(SECTIONS)}")
    if args.rows < 1 or args.repeats < 1:
        ap.error("need --rows >= 1, --repeats >= 1")
    W.one_blas_thread()
    sections = args.sections or SECTIONS
    for section in SECTIONS:
        if section not in sections:
            continue
        print(f"\n== {section}", flush=True)
        if section == "reference":
            section_reference(args.quick)
        elif section == "states":
            section_states(args.quick, args.large)
        elif section == "learn-one":
            section_learn_one(args.quick, args.rows, args.repeats)
        else:
            section_digits()


if __name__ == "__main__":
    main()
