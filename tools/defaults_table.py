"""The table of issue 36: every learner's default on every stream of
``benchmarks/bench_defaults.py`` against the best subspace, the best fixed
eta of a grid, eta = 1 and the best baseline of the same centering.

Run: ``python tools/defaults_table.py [--json FILE] [STREAM ...]`` from the
checkout (the asv benchmarks ``Defaults.track_*`` report the same ratios).
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
    p.add_argument("--json", help="also write the rows as JSON to this file")
    args = p.parse_args(argv)
    unknown = sorted(set(args.streams) - set(bd.STREAMS))
    if unknown:
        p.error(f"unknown stream(s) {', '.join(unknown)}; choose from {', '.join(bd.STREAMS)}")
    rows = []
    print(bd.HEADER, flush=True)
    for name in args.streams or list(bd.STREAMS):
        rows += bd.measure(name, log=lambda r: print(bd.format_row(r), flush=True))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
