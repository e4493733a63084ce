"""The defaults' candidates of issue 36, prototyped on the NumPy oracles.

For each stream of ``benchmarks.bench_defaults`` and k: the per-trial
expected losses of the components (the rate learner A,
``reference._auto_rate.auto_meg`` / ``auto_cumulative``; its eta ->
infinity limit B, ``limit_meg``; Follow the Leader on Frequent Directions
sketches of 2k and 4k directions, ``sketch_leader``; exact Follow the Leader
FTL, the package's FollowTheLeader) and of masters over them
(``reference._auto_rate.master_losses``: AdaHedge, D = log K), each divided
by the loss of the best fixed rank-k subspace in hindsight (centered for
CenteredOnlinePCA, whose components see its instances y = x - m^{t-1}).
The package's default is ``M(A,B,F)`` with F of ``leader_ell(n, k)`` directions
(checked to 1e-8).

Run: ``python tools/defaults_candidates.py [--json FILE] [STREAM ...]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import onlinepca_fast as opf  # noqa: E402
from benchmarks import bench_defaults as bd  # noqa: E402
from benchmarks.baselines import ftl  # noqa: E402
from onlinepca_fast import metrics  # noqa: E402
from onlinepca_fast.reference import _auto_rate as ref  # noqa: E402


def components(X, k, learner):
    """The per-trial expected losses of A, B, F (and exact Follow the Leader
    FTL, sketches of 2k and 4k directions); the package's default is checked
    against the oracle's master over A, B, F to 1e-8."""
    n = X.shape[1]
    ell = ref.leader_ell(n, k)
    pkg = bd.LEARNERS[learner][0](k, random_state=0).fit(X).expected_losses_
    if learner == "CenteredOnlinePCA":
        A = ref.auto_cumulative(X, k)[0]
        Y, f = ref.centered_instances(X)
        sk = {f"F{m}k": ref.sketch_leader(Y, k, m * k, weights=f)
              for m in (2, 4) if m * k < n}
        B, F = ref.limit_meg(Y, k, weights=f), ref.sketch_leader(Y, k, ell, weights=f)
        exact = ftl(X, k, centered=True)
    else:
        share, alpha = (None, 0.0) if learner == "OnlinePCA" else ("fixed", 1e-5)
        A = ref.auto_meg(X, k, share, alpha, adaptive=True)[0]
        B, F = ref.limit_meg(X, k), ref.sketch_leader(X, k, ell)
        sk = {f"F{m}k": ref.sketch_leader(X, k, m * k) for m in (2, 4) if m * k < n}
        exact = ftl(X, k, centered=False)
    cur = ref.master_losses(A, B, F)[0]
    assert np.allclose(pkg, cur, rtol=1e-8, atol=1e-12 * np.abs(pkg).max()), learner
    return dict(A=A, B=B, FTL=exact, **sk)


def candidates(c):
    out = {key: v.sum() for key, v in c.items()}
    out["M(A,B)"] = ref.master_losses(c["A"], c["B"])[0].sum()
    out["M(A,B,FTL)"] = ref.master_losses(c["A"], c["B"], c["FTL"])[0].sum()
    for key in c:
        if key.startswith("F") and key != "FTL":
            out[f"M(A,B,{key})"] = ref.master_losses(c["A"], c["B"], c[key])[0].sum()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("streams", nargs="*")
    args = ap.parse_args(argv)
    rows = []
    for name in args.streams or list(bd.STREAMS):
        X = bd.stream(name)
        for learner, (_, centered) in bd.LEARNERS.items():
            for k in bd.KS:
                if k >= X.shape[1] - 1:
                    continue
                best = metrics.best_subspace_loss(X, k, centered=centered)
                totals = candidates(components(X, k, learner))
                row = dict(stream=name, learner=learner, k=k, T=X.shape[0], n=X.shape[1],
                           best=best, **{key: float(v) for key, v in totals.items()})
                rows.append(row)
                print(name, learner, k, " ".join(f"{key}={v / best:.4f}"
                                                 for key, v in totals.items()), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
