"""The table of issue 36: every learner's default on every stream of
``benchmarks/bench_defaults.py`` against the best subspace, the best fixed
eta of a grid, eta = 1 and the best baseline of the same centering.

Run: ``python tools/defaults_table.py [--json FILE] [--unseen] [--vector]
[--eta adahedge] [STREAM ...]`` from the checkout (``--unseen``: the
held-out streams; ``--vector``: Hedge, CappedHedge and the variance
minimisers instead; ``--eta adahedge``: the PCA learners' rate learner
alone, in the columns of auto).  The
asv benchmarks ``Defaults.track_*`` and ``DefaultsVector.track_*`` report
the same ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from benchmarks import bench_defaults as bd  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("streams", nargs="*", metavar="STREAM",
                   help="streams to measure (default: all): " + ", ".join(bd.STREAMS))
    p.add_argument("--unseen", action="store_true",
                   help="the held-out streams (needs scikit-image and statsmodels): "
                   + ", ".join(bd.UNSEEN_STREAMS))
    p.add_argument("--vector", action="store_true",
                   help="the other learners with a rate (Hedge, CappedHedge, "
                   "VarianceMinimizer, SimplexVarianceMinimizer) instead")
    p.add_argument("--eta", choices=("auto", "adahedge"), default="auto",
                   help='the PCA learners\' rate: "auto" (the default, with the master) or '
                   '"adahedge" (the rate learner alone), in the columns of auto')
    p.add_argument("--json", help="also write the rows as JSON to this file")
    args = p.parse_args(argv)
    known = {**bd.STREAMS, **bd.UNSEEN_STREAMS}
    unknown = sorted(set(args.streams) - set(known))
    if unknown:
        p.error(f"unknown stream(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    names = args.streams or list(bd.UNSEEN_STREAMS if args.unseen else bd.STREAMS)
    for package in ("skimage", "statsmodels"):
        try:
            __import__(package)
        except ImportError:
            if any(name in bd.UNSEEN_STREAMS for name in names):
                p.error(f"the held-out streams need {package}: pip install "
                        + {"skimage": "scikit-image"}.get(package, package))
    if args.vector and args.eta != "auto":
        p.error("--eta applies to the PCA learners' table, not --vector")
    rows = []
    header, measure, fmt = ((bd.VECTOR_HEADER, bd.measure_vector, bd.format_vector_row)
                            if args.vector else (bd.HEADER, bd.measure, bd.format_row))
    options = {} if args.vector else {"eta": args.eta}
    print(header, flush=True)
    for name in names:
        rows += measure(name, log=lambda r: print(fmt(r), flush=True), **options)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
