"""The benchmarks under benchmarks/ (issue 12): every script answers
--help, every asv module imports, and the rank-one ratios script runs on
small sizes.  Speed itself is never asserted here."""

import importlib.util
import pathlib
import subprocess
import sys

import pytest

BENCH = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if p.name != "__init__.py")


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_every_script_answers_help(path):
    proc = subprocess.run([sys.executable, str(path), "--help"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage:")


@pytest.mark.parametrize("path", [p for p in SCRIPTS if p.name.startswith("bench_")],
                         ids=lambda p: p.name)
def test_asv_modules_import_and_declare_benchmarks(path):
    spec = importlib.util.spec_from_file_location(f"_asv_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    methods = [name for obj in vars(module).values() if isinstance(obj, type)
               for name in vars(obj) if name.startswith(("time_", "track_", "peakmem_"))]
    assert methods


def test_rank_one_ratios_run_on_small_sizes():
    proc = subprocess.run([sys.executable, str(BENCH / "ratios_rank_one.py"), "--cpu",
                           "--rounds", "1", "20", "50"], capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()
            if line.split()[:1] in (["20"], ["50"])]
    assert len(rows) == 6  # dense, structured, cluster80 at each n
