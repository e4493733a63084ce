"""Per-trial time of the learners with their defaults against IncrementalPCA
per row and against the two-pass limit of the clustered state (issue 23's
evidence).

For each stream and n, a learner is warmed up on ``--warm`` rows (1,800 as
the issue; fewer at n >= 10,000) and then timed on ``--rows`` further rows,
in chunks of 50, by thread CPU time (median over the chunks of the time per
row).  One BLAS thread.  Streams (rows of norm at most one,
:class:`onlinepca_fast.app.bench.ChunkedStream`):

- ``decay``: full rank, standard deviations i^-0.7 in a random basis (a
  product of three Householder reflectors), as issue 23;
- ``signal``: a rank-20 signal plus isotropic noise.

Baselines measured in the same run on the same rows:

- IncrementalPCA(n_components=10), batches of 100 rows, seconds per row
  (its first batch, untimed, initialises it);
- the two-pass limit of the clustered state: one ``B @ x`` and one
  ``B.T @ y`` with the state's explicit basis B (nb x n, as the trial
  reads it), best of 50.  A clustered trial must read B at least once to
  take the row's coordinates and once to update the basis' loss.

Rows: OnlinePCA with its defaults (``eta="auto"``, ``state="auto"``) and
with eta = 1 and 100; CenteredOnlinePCA and FollowTheLeader with their
defaults (n <= 2,000).  Run::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m benchmarks.state_targets [--quick]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import onlinepca_fast as opf  # noqa: E402
from onlinepca_fast.app.bench import ChunkedStream  # noqa: E402

try:  # the BLAS report and the per-row timer of benchmarks/workloads.py
    from .workloads import median_per_row, one_blas_thread_report  # noqa: E402
except ImportError:  # run as a script: benchmarks/ is on the path
    from workloads import median_per_row, one_blas_thread_report  # noqa: E402

K = 10
CHUNK = 50
SMALL = (50, 100, 200, 400, 1000, 2000)
LARGE = (10_000, 100_000)


def learners(n):
    """(label, learner) pairs timed at dimension n."""
    out = [("OnlinePCA default", opf.OnlinePCA(K, random_state=0)),
           ("OnlinePCA eta=1", opf.OnlinePCA(K, eta=1.0, random_state=0))]
    if n <= 2000:
        out += [("OnlinePCA eta=100", opf.OnlinePCA(K, eta=100.0, random_state=0)),
                ("CenteredOnlinePCA default", opf.CenteredOnlinePCA(K, random_state=0)),
                ("FollowTheLeader", opf.FollowTheLeader(K))]
    return out


def per_row(fit, chunks):
    """Median over the chunks of the thread CPU seconds per row."""
    return median_per_row(fit, chunks, clock=time.thread_time)


def two_passes(learner, repeats=50):
    """Seconds of B @ x and B.T @ (B @ x) on the clustered state's basis
    (nan for the dense state)."""
    if not learner._is_clustered():
        return float("nan"), 0, learner.n_features_in_
    m, nb = int(learner._dims[0]), int(learner._dims[1])
    B = np.ascontiguousarray(learner._b[:nb])
    x = np.random.default_rng(0).standard_normal(B.shape[1])
    best = np.inf
    for _ in range(repeats):
        t0 = time.thread_time()
        y = B @ x
        B.T @ y
        best = min(best, time.thread_time() - t0)
    return best, m, nb


def run(kind, n, warm, rows, out):
    from sklearn.decomposition import IncrementalPCA

    stream = ChunkedStream(kind, n, seed=1, exponent=0.7)
    warm_rows = stream.rows(warm)
    chunks = [stream.rows(CHUNK) for _ in range(max(1, rows // CHUNK))]
    ipca = IncrementalPCA(n_components=K)
    ipca.partial_fit(warm_rows[-100:])
    big = np.vstack(chunks)
    ipca_row = per_row(ipca.partial_fit,
                       [big[i:i + 100] for i in range(0, big.shape[0] - 99, 100)])
    for label, learner in learners(n):
        for i in range(0, warm, 300):
            learner.partial_fit(warm_rows[i:i + 300])
        sec = per_row(learner.partial_fit, chunks)
        passes, m, nb = two_passes(learner)
        state = "clustered" if learner._is_clustered() else "dense"
        eta = getattr(learner, "eta_", float("nan"))
        line = (f"{kind:7s} {n:7d} {label:26s} {state:9s} m={m:<5d} nb={nb:<5d} "
                f"eta_={eta:9.3g} {sec * 1e6:10.1f} us  /IPCA {sec / ipca_row:6.2f}  "
                f"/2 passes {sec / passes if passes == passes else float('nan'):6.2f}")
        print(line, flush=True)
        out.append(line)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n <= 1000, fewer rows")
    ap.add_argument("--sizes", type=int, nargs="*", help="dimensions to run")
    ap.add_argument("--kinds", nargs="*", default=["decay", "signal"])
    args = ap.parse_args(argv)
    one_blas_thread_report(threads=True)
    sizes = args.sizes or (SMALL[:5] if args.quick else SMALL + LARGE)
    out = []
    print("# stream n learner state m nb eta_ per-trial /IncrementalPCA(batch 100) per row "
          "/two passes over B")
    for kind in args.kinds:
        for n in sizes:
            warm = 1800 if n <= 10_000 else 300
            rows = 100 if args.quick or n > 10_000 else 200
            run(kind, n, warm if not args.quick else 600, rows, out)


if __name__ == "__main__":
    main()
