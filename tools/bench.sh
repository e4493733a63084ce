#!/usr/bin/env bash
# Run the asv suite (benchmarks/) on the installed package and save the
# results under .asv/results/ for the checked-out commit.
#
#   bash tools/bench.sh [--quick] [--commit REV] [asv run options, e.g. -b PATTERN]
#
# Default: asv's own repeats (the time_ benchmarks in rounds, by thread CPU
# time), results that `asv compare` can judge.  --quick: each benchmark is
# called once, a smoke run: its time_ figures are single samples that asv
# compare cannot tell from noise (the track_ ratios are measured inside the
# call either way).  Without -b, the core benchmarks (CORE below: the
# kernels' and the rank-one update's times, the structured product and the
# learners against their baselines: ~170 benchmark runs, each a process;
# 85 took 45 minutes at a load average of 15 on 2 cores); -b . runs all
# (hours: the auto-rate tables, 10^6-trial drift, kernel PCA at t = 2500).
#
# With an existing environment (--python=same) asv saves results only when
# told the commit: --set-commit-hash=$(git rev-parse REV), REV the
# checked-out commit (HEAD) unless --commit names the commit whose package
# is installed (this checkout's benchmarks timing another commit's build).  BLAS runs on
# one thread (benchmarks/workloads.py) and with its own best kernel:
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are unset for the run (they would
# slow the dgemm every ratio is measured against); the architecture
# threadpoolctl reports is printed first.  Compare two commits benchmarked
# so, offline: python -m asv compare A B.
set -euo pipefail
cd "$(dirname "$0")/.."
CORE='bench_kernels\.(Cap|Decompose|Sample)\.|bench_rank_one\.(RankOneUpdate|RankOneChain)\.|bench_rank_one\.StructuredProduct\.track_structured_over_dgemm|bench_learners\.(LearnerTrial\.track_ratio_to_incremental_pca|ReferenceSpeedup|LearnOneOverhead|DigitsRegret|PCATrialReference|ExpertsTrial|Accuracy)|bench_kernel_pca\.KernelPCATrial\.'
quick=()
commit=HEAD
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=(--quick); shift ;;
        --commit) commit=$2; shift 2 ;;
        *) break ;;
    esac
done
select=(-b "$CORE")
for arg in "$@"; do
    case "$arg" in -b|--bench|-b*|--bench=*) select=() ;; esac
done
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
python - <<'EOF'
import numpy, scipy.linalg  # noqa: F401  (both OpenBLAS builds loaded)
from threadpoolctl import threadpool_info

for i in threadpool_info():
    if i.get("user_api") == "blas":
        print(f"BLAS: {i.get('internal_api')} {i.get('version')} architecture "
              f"{i.get('architecture')} ({i.get('prefix')})")
EOF
python -m asv machine --yes >/dev/null
python -m asv run --python=same --set-commit-hash="$(git rev-parse "$commit")" --show-stderr \
    "${quick[@]}" "${select[@]}" "$@"
