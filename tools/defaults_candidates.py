"""The defaults' candidates of issue 36, prototyped on the NumPy oracles.

For each stream of ``benchmarks.bench_defaults`` and k: the per-trial
expected losses of the components (the rate learner A,
``reference._auto_rate.auto_meg``; its eta -> infinity limit B,
``limit_meg``; exact Follow the Leader F, the package's FollowTheLeader) and
of masters over them (``reference._auto_rate.master_losses``: AdaHedge, D =
log K), each divided by the loss of the best fixed rank-k subspace in
hindsight.  ``master(A, B)`` is the current default of OnlinePCA and
OnlineAdaptivePCA (checked against the package to 1e-9); CenteredOnlinePCA:
A is the package's default (the FTRL learner at its AdaHedge rate), F is
centered Follow the Leader.

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
    if learner == "CenteredOnlinePCA":
        A = opf.CenteredOnlinePCA(k, random_state=0).fit(X).expected_losses_
        return dict(A=A, F=ftl(X, k, centered=True))
    share, alpha = (None, 0.0) if learner == "OnlinePCA" else ("fixed", 1e-5)
    A = ref.auto_meg(X, k, share, alpha, adaptive=True)[0]
    B = ref.limit_meg(X, k)
    F = ftl(X, k, centered=False)
    sketches = {f"F{m}k": ref.sketch_leader(X, k, m * k) for m in (2, 4) if m * k < X.shape[1]}
    pkg = bd.LEARNERS[learner][0](k, random_state=0).fit(X).expected_losses_
    cur = ref.master_losses(A, B)[0]
    assert np.allclose(pkg, cur, rtol=1e-8, atol=1e-12 * np.abs(pkg).max()), learner
    return dict(A=A, B=B, F=F, **sketches)


def candidates(c):
    out = {k: v.sum() for k, v in c.items()}
    if "B" in c:
        out["M(A,B)"] = ref.master_losses(c["A"], c["B"])[0].sum()
        out["M(A,B,F)"] = ref.master_losses(c["A"], c["B"], c["F"])[0].sum()
        for key in c:
            if key.startswith("F") and key != "F":
                out[f"M(A,B,{key})"] = ref.master_losses(c["A"], c["B"], c[key])[0].sum()
    else:
        out["M(A,F)"] = ref.master_losses(c["A"], c["F"])[0].sum()
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
