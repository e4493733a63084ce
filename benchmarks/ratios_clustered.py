"""OnlinePCA on the capped structure against scikit-learn's IncrementalPCA.

Usage: ``python benchmarks/ratios_clustered.py [--quick] [--large]``.

Targets (issue "state that follows the capped structure"): OnlinePCA and
OnlineAdaptivePCA, k = 10, eta = 1, per trial after warm-up, at most 2x
``IncrementalPCA(n_components=10).partial_fit`` per sample (batches of 100
of the same rows) at n = 1000 and 2000; at n = 100,000 (``--large``, rows
generated in chunks) at most 3x, with a peak RSS under 1.5 GB.  Two
streams: a power law (spectrum i^-1 in a random basis) and a rank-20
signal plus isotropic noise, rows in the unit ball.  Also printed: m (the
explicit eigenpairs), the early phase (the first 100 trials, before the
cluster reaches the cap), the dense state at n = 1000 for comparison, and
the growth exponent of the per-trial time from n = 1000 to 2000.  One BLAS
thread throughout.
"""

import argparse
import math
import resource
import time

import numpy as np
from sklearn.decomposition import IncrementalPCA

import onlinepca_fast as opf
from onlinepca_fast.bench import ChunkedStream as Stream
from onlinepca_fast.bench import blas_limit

K, ETA, CHUNK = 10, 1.0, 100


def per_sample(fit, chunks):
    """Seconds per row of fit(chunk), the median over the chunks."""
    times = []
    for X in chunks:
        t0 = time.perf_counter()
        fit(X)
        times.append((time.perf_counter() - t0) / X.shape[0])
    return float(np.median(times))


def measure(name, kind, n, warm, timed, dense=False):
    stream = Stream(kind, n)
    learner = getattr(opf, name)(K, eta=ETA, random_state=0,
                                 state="dense" if dense else "clustered")
    first = stream.rows(CHUNK)
    t0 = time.perf_counter()
    learner.partial_fit(first)
    early = (time.perf_counter() - t0) / CHUNK
    for _ in range(max(0, warm // CHUNK - 1)):
        learner.partial_fit(stream.rows(CHUNK))
    chunks = [stream.rows(CHUNK) for _ in range(timed // CHUNK)]
    ours = per_sample(learner.partial_fit, chunks)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ipca = IncrementalPCA(n_components=K)
    ipca.partial_fit(stream.rows(CHUNK))  # its first batch initialises
    theirs = per_sample(ipca.partial_fit, chunks)
    return dict(name=name + (" (dense)" if dense else ""), kind=kind, n=n, ours=ours,
                ipca=theirs, m=learner.eigenvalues_.size if not dense else n,
                early=early, rss=rss)


def show(r, target):
    ratio = r["ours"] / r["ipca"]
    mark = "" if target is None else ("  ok" if ratio <= target else f"  MISSES <= {target}x")
    print(f"{r['name']:<24} {r['kind']:<6} n={r['n']:<7} m={r['m']:<5} "
          f"{r['ours'] * 1e6:9.1f} us/trial  IncrementalPCA {r['ipca'] * 1e6:9.1f} us/sample  "
          f"ratio {ratio:6.2f}x{mark}   first 100 trials {r['early'] * 1e6:9.1f} us/trial",
          flush=True)
    return ratio


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 1000 only, fewer trials")
    ap.add_argument("--large", action="store_true", help="also n = 100,000")
    args = ap.parse_args(argv)
    warm, timed = (300, 300) if args.quick else (1000, 1000)
    sizes = [1000] if args.quick else [1000, 2000]
    with blas_limit(1):
        if args.large:  # first, so that the peak RSS is its own
            for name in ("OnlinePCA",):
                r = measure(name, "power", 100_000, 300, 300)
                show(r, 3.0)
                print(f"    peak RSS {r['rss']:.0f} MB (target < 1500 MB)")
        times = {}
        for kind in ("power", "signal"):
            for name in ("OnlinePCA", "OnlineAdaptivePCA"):
                for n in sizes:
                    r = measure(name, kind, n, warm, timed)
                    show(r, 2.0)
                    times[kind, name, n] = (r["ours"], r["m"])
        if not args.quick:
            for (kind, name, n), (t, m) in times.items():
                if n == 2000:
                    t1, m1 = times[kind, name, 1000]
                    print(f"growth {name:<18} {kind:<6} n 1000 -> 2000: exponent "
                          f"{math.log(t / t1) / math.log(2):.2f} (m {m1} -> {m})")
        show(measure("OnlinePCA", "power", 1000, 100, 100, dense=True), None)


if __name__ == "__main__":
    main()
