#!/usr/bin/env bash
# Run the asv suite (benchmarks/) on the installed package and save the
# results under .asv/results/ for the checked-out commit.
#
#   bash tools/bench.sh [--full] [asv run options...]
#
# Default: `--quick` (each benchmark once; the track_ figures repeat inside
# the call; <= 10 minutes on 2 cores).  --full: asv's own repeats (<= 45
# minutes).  With an existing environment (--python=same) asv saves results
# only when told the commit: --set-commit-hash=$(git rev-parse HEAD).  BLAS
# runs on one thread (benchmarks/workloads.py).  Compare two commits benchmarked
# so, offline: asv compare A B (or asv continuous A B, which builds both).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=(--quick)
if [ "${1:-}" = "--full" ]; then
    quick=()
    shift
fi
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
python -m asv machine --yes >/dev/null
python -m asv run --python=same --set-commit-hash="$(git rev-parse HEAD)" --show-stderr \
    "${quick[@]}" "$@"
