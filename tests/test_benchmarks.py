"""The benchmarks under benchmarks/ (issues 12, 26): every script answers
--help, the rank-one ratios script runs on small sizes, and every asv
benchmark runs once at its smallest parameters, as ``asv run`` would call it
(setup, the benchmark, teardown), so that the suite cannot rot.  Speed
itself is never asserted here."""

import importlib
import itertools
import json
import math
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
SCRIPTS = sorted(p for p in BENCH.glob("*.py")
                 if "__main__" in p.read_text(encoding="utf-8"))
MODULES = sorted(p.stem for p in BENCH.glob("bench_*.py"))
PREFIXES = ("time_", "track_", "peakmem_", "mem_")


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_every_script_answers_help(path):
    proc = subprocess.run([sys.executable, str(path), "--help"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage:")


def test_rank_one_ratios_run_on_small_sizes():
    proc = subprocess.run([sys.executable, str(BENCH / "ratios_rank_one.py"), "--cpu",
                           "--rounds", "1", "20", "50"], capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()
            if line.split()[:1] in (["20"], ["50"])]
    assert len(rows) == 6  # dense, structured, cluster80 at each n


def test_learners_ratios_run_their_short_sections():
    proc = subprocess.run([sys.executable, str(BENCH / "ratios_learners.py"), "--quick",
                           "--rows", "50", "--repeats", "1", "learn-one", "digits"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines.count("== learn-one") == 1 and lines.count("== digits") == 1
    assert "== states" not in lines
    rows = [line.split() for line in lines if line.split()[:1] == ["OnlineAdaptivePCA"]]
    assert len(rows) == 2  # one in each section
    bad = subprocess.run([sys.executable, str(BENCH / "ratios_learners.py"), "bogus"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert bad.returncode == 2 and "unknown section 'bogus'" in bad.stderr


def _import(stem):
    """A benchmark module as asv imports it: benchmarks.<stem>, the checkout's
    root on the path (the modules import benchmarks/workloads.py relatively)
    only while importing, and last: first, or left there, it would put the
    source tree's onlinepca_fast/ (no compiled module) before the installed
    package, for this process and every process started later (Dask's
    workers)."""
    import onlinepca_fast  # noqa: F401  (the installed package, before ROOT is seen)
    sys.path.append(str(ROOT))
    try:
        return importlib.import_module(f"benchmarks.{stem}")
    finally:
        sys.path.remove(str(ROOT))


@pytest.mark.parametrize("stem", sorted(p.stem for p in BENCH.glob("*.py")))
def test_every_module_imports_as_asv_discovers_it(stem):
    """asv imports every module under benchmarks/, the scripts too."""
    _import(stem)


def _grid(params):
    if not params:
        return [()]
    if not isinstance(params, tuple) and not all(isinstance(p, list) for p in params):
        params = (params,)  # one parameter
    return list(itertools.product(*params))


def _benchmarks():
    out = []
    for stem in MODULES:
        module = _import(stem)
        for cls_name, cls in sorted(vars(module).items()):
            if not isinstance(cls, type) or cls.__module__ != module.__name__:
                continue
            for name in sorted(vars(cls)):
                if name.startswith(PREFIXES):
                    out.append((stem, cls_name, name))
    return out


BENCHMARKS = _benchmarks()


def test_the_suite_covers_the_issue_26_figures():
    names = {f"{c}.{m}" for _, c, m in BENCHMARKS}
    for expected in ("LearnerTrial.track_ratio_to_incremental_pca",
                     "StructuredProduct.track_ratio_to_dgemm",
                     "ClusteredLarge.peakmem_online_pca_clustered_n100000",
                     "DigitsRegret.track_loss_over_best_subspace",
                     "LearnOneOverhead.track_ratio_to_batch_row"):
        assert expected in names
    config = json.loads((ROOT / "asv.conf.json").read_text(encoding="utf-8"))
    assert config["benchmark_dir"] == "benchmarks"


@pytest.mark.parametrize("stem,cls_name,method", BENCHMARKS,
                         ids=[f"{s}.{c}.{m}" for s, c, m in BENCHMARKS])
def test_every_asv_benchmark_runs_at_its_smallest_parameters(stem, cls_name, method):
    """The first parameter combination that the benchmark does not skip
    (asv skips a combination whose setup raises NotImplementedError)."""
    cls = getattr(_import(stem), cls_name)
    for combo in _grid(getattr(cls, "params", [])):
        bench = cls()
        try:
            if hasattr(bench, "setup"):
                bench.setup(*combo)
        except NotImplementedError:
            continue
        try:
            value = getattr(bench, method)(*combo)
        finally:
            if hasattr(bench, "teardown"):
                bench.teardown(*combo)
        if method.startswith("track_"):
            assert isinstance(value, (int, float)) and math.isfinite(value), value
        return
    pytest.fail(f"{cls_name}.{method}: every parameter combination is skipped")
