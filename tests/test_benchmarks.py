"""The asv suite under benchmarks/ (issues 12, 26, 38, 40).

Every timing under benchmarks/ is an asv benchmark: no file there is a
script; every module imports as asv discovers it; every benchmark runs
once on a tiny size (``workloads.TINY``), as ``asv run`` calls it
(``setup_cache``, ``setup``, the benchmark, ``teardown``), so that the
suite cannot rot; the time_ benchmarks read the thread's CPU time; ratios
say so in their unit; and the README's asv recipe installs what it runs.
Speed itself is never asserted here.
"""

import ast
import importlib
import inspect
import itertools
import json
import math
import pathlib
import re
import shlex
import sys
import time

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10: tomli, a dependency of the package there
    import tomli as tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
STEMS = sorted(p.stem for p in BENCH.glob("*.py") if p.stem != "__init__")
#: asv's benchmark kinds, by the prefix of a method's name (asv_runner.benchmarks)
PREFIXES = ("time_", "timeraw_", "track_", "peakmem_", "mem_")


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


def _imports(path):
    """The top-level names of the modules a file imports."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_no_script_under_benchmarks():
    """Issue 40: the ratio scripts became asv benchmarks; no file under
    benchmarks/ parses a command line or runs as a script."""
    for path in sorted(BENCH.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "argparse" not in _imports(path), path.name
        assert "__main__" not in text and "sys.argv" not in text, path.name


@pytest.mark.parametrize("stem", STEMS)
def test_every_module_imports_as_asv_discovers_it(stem):
    _import(stem)


def _benchmarks():
    """(stem, class name, method) of every benchmark, by asv's rules: the
    public classes of every module under benchmarks/ and their methods
    named with a benchmark prefix, and module-level functions so named."""
    out = []
    for stem in STEMS:
        module = _import(stem)
        for name, obj in sorted(vars(module).items()):
            if name.startswith("_"):
                continue
            if inspect.isclass(obj):
                for method in sorted(n for n, _ in inspect.getmembers(obj)
                                     if n.startswith(PREFIXES)):
                    out.append((stem, name, method))
            elif inspect.isfunction(obj) and name.startswith(PREFIXES):
                out.append((stem, None, name))
    return out


BENCHMARKS = _benchmarks()
IDS = [f"{s}.{c}.{m}" for s, c, m in BENCHMARKS]


def test_benchmarks_live_in_the_bench_modules():
    """asv lists a benchmark of a class wherever the class is visible: a
    benchmark class imported into another module would run twice, one in
    workloads.py would run under a second name."""
    for stem, cls_name, method in BENCHMARKS:
        assert stem.startswith("bench_") and cls_name is not None, (stem, cls_name, method)
        assert getattr(_import(stem), cls_name).__module__ == f"benchmarks.{stem}"


def test_the_suite_covers_the_issue_figures():
    """A benchmark for each figure of the former ratio scripts and of
    issues 26, 37 and 38."""
    names = {f"{c}.{m}" for _, c, m in BENCHMARKS}
    for expected in (
            "LearnerTrial.track_ratio_to_incremental_pca",       # ratios_learners states
            "StateSpeedup.track_dense_over_clustered",
            "ReferenceSpeedup.track_reference_over_compiled",    # ratios_learners reference
            "CappedHedgeSpeed.track_trial_over_exp",
            "LearnOneOverhead.track_ratio_to_batch_row",         # ratios_learners learn-one
            "DigitsRegret.track_loss_over_best_subspace",        # ratios_learners digits
            "ClusteredLarge.peakmem_online_pca_clustered_n100000",
            "DefaultsPerRow.track_over_incremental_pca",         # state_targets
            "DefaultsPerRow.track_over_two_passes",
            "StateCrossover.track_clustered_over_dense",         # crossover_state
            "CapSpeedup.track_reference_over_compiled",          # ratios_kernels vector
            "CapGrowth.track_time_at_10n_over_n",
            "DecomposeSpeedup.track_reference_over_compiled",
            "SampleSpeedup.track_baseline_over_systematic",
            "KernelPCASpeedup.track_reference_over_compiled",    # ratios_kernels kernel-pca
            "RankOneSpeedup.track_eigh_over_update",             # ratios_rank_one
            "RankOneSpeedup.track_update_over_dgemm",
            "StructuredProduct.track_structured_over_dgemm",     # ratios_structured
            "StructuredProduct.track_residual",
            "StructuredCrossover.track_structured_over_dense",   # --crossover
            "StructuredProfile.track_flops_over_dgemm",          # --profile
            "StructuredThreads.track_one_thread_over_two",       # --threads 2
            "StructuredLearners.track_dense_over_structured",
            "ThreadSpeedup.track_sequential_over_threaded",      # bench_reliability
            "Drift.track_orthogonality_alg6",
            "MemoryGrowth.track_bytes_gained_1e5_trials",
            "CtrlCLatency.track_latency_max",                    # interrupt_latency
            "AutoRate.track_auto_over_best_eta",                 # auto_rate
            "AutoRate.track_time_auto_over_eta1",
            "AutoCost.track_auto_over_same_rate",                # issue 36 item 4
            "AutoCost.track_auto_over_ipca",
            "AutoCost.track_adahedge_over_eta1",
            "AutoCost.track_adahedge_over_ipca",
            "AutoRateKernel.track_auto_over_best_eta",           # auto_rate_kernel
            "AutoRateCandidates.track_loss_over_best_subspace",  # auto_rate_candidates
            "Defaults.track_auto_over_best_grid",                # issue 36 figures
            "DefaultsVector.track_auto_over_best_grid",
    ):
        assert expected in names, expected
    config = json.loads((ROOT / "asv.conf.json").read_text(encoding="utf-8"))
    assert config["benchmark_dir"] == "benchmarks"


def _attr(stem, cls_name, method, name, default=None):
    """An asv setting as asv reads it: the method, the class, the module."""
    module = _import(stem)
    for source in (getattr(getattr(module, cls_name), method), getattr(module, cls_name),
                   module):
        if hasattr(source, name):
            return getattr(source, name)
    return default


@pytest.mark.parametrize("stem,cls_name,method", BENCHMARKS, ids=IDS)
def test_settings(stem, cls_name, method):
    """Issue 38: a time_ benchmark reads the thread's CPU time (another
    process's load is not counted) in several rounds, so that `asv compare`
    of two full runs has statistics; a track_ benchmark names its unit, and
    a ratio measured in one run says "ratio"."""
    if method.startswith("time_"):
        assert _attr(stem, cls_name, method, "timer") is time.thread_time
        assert _attr(stem, cls_name, method, "rounds", 2) >= 2
    if method.startswith("track_"):
        unit = _attr(stem, cls_name, method, "unit")
        assert unit is not None and unit != "unit", "give the track_ benchmark a unit"
        if re.search(r"_over_|ratio|speedup", method):
            assert unit == "ratio"


def _grid(params):
    if not params:
        return [()]
    if not isinstance(params, tuple) and not all(isinstance(p, list) for p in params):
        params = (params,)  # one parameter
    return list(itertools.product(*params))


@pytest.fixture
def tiny():
    """Every workload at its tiny size (benchmarks/workloads.py)."""
    workloads = _import("workloads")
    workloads.TINY = True
    try:
        yield
    finally:
        workloads.TINY = False
        workloads.one_blas_thread()


_CACHES = {}


def _setup_cache(stem, cls):
    """setup_cache's value, computed once per class (asv: once per run)."""
    if not hasattr(cls, "setup_cache"):
        return ()
    key = stem, cls.__name__
    if key not in _CACHES:
        _CACHES[key] = cls().setup_cache()
    return (_CACHES[key],)


@pytest.mark.parametrize("stem,cls_name,method", BENCHMARKS, ids=IDS)
def test_every_benchmark_runs_on_a_tiny_size(tiny, stem, cls_name, method):
    """The first parameter combination that the benchmark does not skip
    (asv skips a combination whose setup raises NotImplementedError), at
    the workloads' tiny size."""
    cls = getattr(_import(stem), cls_name)
    cache = _setup_cache(stem, cls)
    for combo in _grid(getattr(cls, "params", [])):
        bench = cls()
        args = cache + tuple(combo)
        try:
            if hasattr(bench, "setup"):
                bench.setup(*args)
        except NotImplementedError:
            continue
        try:
            value = getattr(bench, method)(*args)
        finally:
            if hasattr(bench, "teardown"):
                bench.teardown(*args)
        if method.startswith("track_"):
            assert isinstance(value, (int, float)) and math.isfinite(value), value
            if _attr(stem, cls_name, method, "unit") == "ratio":
                assert value > 0
        return
    pytest.fail(f"{cls_name}.{method}: every parameter combination is skipped")


# --- the README's asv recipe (issue 38) -----------------------------------------------

def _section(text, start, end):
    return text[text.index(start):text.index(end, text.index(start))]


def _asv_recipe():
    """The commands of the README's asv recipe: the first bash block after
    "**The asv suite**", one command per line, comments dropped."""
    section = _section((ROOT / "README.md").read_text(encoding="utf-8"),
                       "**The asv suite**", "## Development")
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block, "the README's asv section has no bash block"
    commands = []
    for line in block.group(1).splitlines():
        line = line.split(" #", 1)[0].strip()
        if line:
            commands += [c.strip() for c in line.split("&&")]
    return section, commands


def _requirement_name(spec):
    return re.split(r"[<>=!~; \[]", spec, maxsplit=1)[0].lower().replace("_", "-")


def _pip_installs(command):
    """The requirement names a ``pip install`` command names (None if it is not one)."""
    words = shlex.split(command)
    if "pip" not in words or "install" not in words:
        return None
    args = words[words.index("install") + 1:]
    return {_requirement_name(a) for a in args if not a.startswith("-")}


def test_readme_asv_recipe_installs_the_build_requirements():
    """Issue 38: the recipe's ``pip install --no-build-isolation`` failed in
    the README's venv (``No module named 'mesonpy'``): the recipe installs
    every build requirement of pyproject.toml before it, and asv; it runs
    asv through tools/bench.sh, which saves the results of an existing
    environment, and compares saved results; every benchmark it names
    exists.  `asv continuous` builds in fresh environments from
    asv.conf.json's matrix: it lists the build requirements too."""
    _, commands = _asv_recipe()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    build = {_requirement_name(r) for r in pyproject["build-system"]["requires"]}
    installed = set()
    for command in commands:
        names = _pip_installs(command)
        if names is None:
            continue
        if "--no-build-isolation" in command:
            missing = build - installed
            assert not missing, f"{command!r} runs before {sorted(missing)} are installed"
        installed |= names
    assert any("--no-build-isolation" in c for c in commands)
    assert "asv" in installed
    assert any(c.startswith("bash tools/bench.sh") for c in commands)
    assert any(re.search(r"asv compare \S+ \S+", c) for c in commands)
    bench_sh = (ROOT / "tools" / "bench.sh").read_text(encoding="utf-8")
    assert "--python=same" in bench_sh and "--set-commit-hash" in bench_sh
    names = [".".join(x for x in b if x) for b in BENCHMARKS]
    for command in commands:
        words = shlex.split(command)
        for flag, pattern in zip(words, words[1:]):
            if flag in ("-b", "--bench"):
                assert any(re.search(pattern, n) for n in names), pattern
    config = json.loads((ROOT / "asv.conf.json").read_text(encoding="utf-8"))
    assert build <= {_requirement_name(r) for r in config["matrix"]["req"]}


def test_the_docs_example_of_a_track_ratio_runs(tiny):
    """docs/performance/benchmarks.md's example of a new track_ ratio
    benchmark runs as a module of benchmarks/, at the tiny size."""
    import types

    page = (ROOT / "docs" / "performance" / "benchmarks.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", page, re.S).group(1)
    _import("workloads")
    module = types.ModuleType("benchmarks._docs_example")
    module.__package__ = "benchmarks"
    exec(compile(code, "benchmarks.md", "exec"), module.__dict__)
    bench = module.MySpeedup()
    bench.setup(module.MySpeedup.params[0])
    value = bench.track_over_baseline(module.MySpeedup.params[0])
    assert math.isfinite(value) and value > 0
    assert bench.track_over_baseline.unit == "ratio"
