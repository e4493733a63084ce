"""The command line (``python -m onlinepca_fast``) end to end, and the experiments.

Every command runs in a subprocess whose working directory is a temporary
directory, so the installed package is imported, not the source tree.  Sizes
are small (segments of 40-60 points, two or three seeds).  The digits
experiment runs with the network disabled: sockets refuse to connect and the
proxies point nowhere (the images ship with scikit-learn).

WK: Warmuth & Kuzmin, JMLR 2008.  YL: Yuan & Lamperski, ICML 2019.
KW: Kuzmin & Warmuth, ICML 2007.
"""

import csv
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from failing_writes import disk_full, failing_open, snapshot
from numpy.testing import assert_allclose

import onlinepca_fast as opf
from onlinepca_fast import metrics
from onlinepca_fast.app import experiments, plotting

HAS_MPL = importlib.util.find_spec("matplotlib") is not None
HAS_SKLEARN = importlib.util.find_spec("sklearn") is not None
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# Run main() after disabling the network, or hiding a module, in the child.
_PRELUDE = """
import socket, sys

def _refuse(*args, **kwargs):
    raise OSError("network access is disabled in this test")

if {no_network}:
    socket.socket.connect = _refuse
    socket.socket.connect_ex = _refuse
    socket.create_connection = _refuse
    socket.getaddrinfo = _refuse
for name in {hide}:
    sys.modules[name] = None  # makes "import name" raise ImportError

from onlinepca_fast.app.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run_cli(args, cwd, no_network=False, hide=()):
    """Run the CLI in a fresh interpreter in ``cwd``; return the CompletedProcess."""
    env = dict(os.environ)
    if no_network or hide:
        cmd = [sys.executable, "-c",
               _PRELUDE.format(no_network=bool(no_network), hide=list(hide)), *args]
    else:
        cmd = [sys.executable, "-m", "onlinepca_fast", *args]
    if no_network:
        for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                    "all_proxy"):
            env[var] = "http://127.0.0.1:9"  # the discard port: nothing listens
        env.pop("NO_PROXY", None)
        env.pop("no_proxy", None)
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], np.array(rows[1:], dtype=float)


# --- the command line -----------------------------------------------------------

def test_demo_is_the_default_and_prints_the_table(tmp_path):
    proc = run_cli([], tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "WK Fig. 4: n=20, k=2, eta=1, 3 segments of 500" in out
    for label in ["OnlinePCA (WK Alg. 5)", "uncentered WK Alg. 6", "OnlineAdaptivePCA",
                  "Follow the Leader", "best fixed subspace in hindsight"]:
        assert label in out
    assert "10 seeds" in out
    assert "WK Thm. 6 bound" in out
    png = tmp_path / "demo" / "demo.png"  # a folder named after the command
    if HAS_MPL:
        assert png.read_bytes().startswith(PNG_MAGIC)
        assert out.count("wrote ") == 1 and str(png) in out
        assert sorted(p.name for p in (tmp_path / "demo").iterdir()) == ["demo.png"]
    else:
        assert not png.exists()
        assert 'pip install "onlinepca_fast[plot]"' in out
    assert sorted(p.name for p in tmp_path.iterdir()) == (["demo"] if HAS_MPL else [])


@pytest.mark.parametrize("name, args, n_trials, keys", [
    ("wk-fig4", ["--segment-length", "50", "--seeds", "3"], 150,
     ["online_pca", "uncentered_alg6", "adaptive_pca", "ftl", "best_fixed"]),
    ("yl-fig1", ["--segment-length", "40", "--seeds", "2", "--alpha", "1e-4"], 120,
     ["online_pca", "adaptive_pca", "ftl", "best_fixed"]),
    ("wk-fig6", ["--segment-length", "40", "--seeds", "2", "--n-features", "8"], 240,
     ["online_pca", "share_uniform", "share_past"]),
])
def test_experiment_writes_csv_json_and_png(tmp_path, name, args, n_trials, keys):
    proc = run_cli(["experiment", name, *args, "--output", "results"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "learner" in proc.stdout and "mean" in proc.stdout and "std" in proc.stdout
    out = tmp_path / "results"

    header, data = read_csv(out / f"{name}.csv")
    assert header[0] == "trial"
    assert [h for h in header[1:] if not h.endswith(("_realized_mean", "_realized_std"))] == keys
    assert data.shape == (n_trials, len(header))
    assert_allclose(data[:, 0], np.arange(1, n_trials + 1), rtol=0, atol=0)
    assert np.isfinite(data).all()

    doc = json.loads((out / f"{name}.json").read_text())
    assert doc["experiment"] == name
    assert doc["n_trials"] == n_trials
    assert sorted(doc["totals"]) == sorted(keys)
    assert doc["params"]["segment_length"] == int(args[1])
    assert doc["params"]["n_seeds"] == len(doc["seeds"]) == int(args[3])
    for key in keys:  # the JSON totals are the last row of the CSV
        assert_allclose(doc["totals"][key]["expected_mean"], data[-1, header.index(key)],
                        rtol=1e-9, atol=1e-9)
    png = out / f"{name}.png"
    assert png.exists() == HAS_MPL
    if HAS_MPL:
        assert png.read_bytes().startswith(PNG_MAGIC)
    assert (name + ".png" in doc["files"]) == HAS_MPL


def test_no_plot_and_data_seed(tmp_path):
    args = ["experiment", "yl-fig1", "--segment-length", "30", "--seeds", "1", "--no-plot"]
    first = run_cli([*args, "--output", "a", "--data-seed", "1"], tmp_path)
    again = run_cli([*args, "--output", "b", "--data-seed", "1"], tmp_path)
    other = run_cli([*args, "--output", "c", "--data-seed", "2"], tmp_path)
    assert first.returncode == again.returncode == other.returncode == 0
    assert not (tmp_path / "a" / "yl-fig1.png").exists()
    csv_a, csv_b, csv_c = [(tmp_path / d / "yl-fig1.csv").read_text() for d in "abc"]
    assert csv_a == csv_b  # reproducible
    assert csv_a != csv_c  # the stream follows --data-seed


@pytest.mark.skipif(not HAS_SKLEARN,
                    reason="the digits images ship with scikit-learn, which is not installed")
def test_digits_runs_without_network(tmp_path):
    proc = run_cli(["experiment", "digits", "--segment-length", "20", "--seeds", "2",
                    "--output", "out"], tmp_path, no_network=True)
    assert proc.returncode == 0, proc.stderr
    assert "best subspace per class" in proc.stdout
    header, data = read_csv(tmp_path / "out" / "digits.csv")
    assert data.shape[0] == 10 * 20  # ten classes of at most 20 images
    doc = json.loads((tmp_path / "out" / "digits.json").read_text())
    assert doc["params"]["n_features"] == 64
    assert doc["boundaries"] == list(range(20, 200, 20))
    assert doc["segment_labels"] == [f"digit {c}" for c in range(10)]


def test_demo_without_matplotlib_still_succeeds(tmp_path):
    proc = run_cli(["demo", "--seeds", "1", "--segment-length", "30"], tmp_path,
                   hide=["matplotlib"])
    assert proc.returncode == 0, proc.stderr
    assert 'matplotlib is not installed, so no plot was written (pip install ' \
           '"onlinepca_fast[plot]")' in proc.stdout
    assert not list(tmp_path.iterdir())


def test_kw_cone_defaults_to_kws_padded_cone_in_a_folder_of_its_name(tmp_path):
    """No --output: the files go to ./kw-cone/; the data are KW's 3-d cone
    padded with zeros (Sec. 5), whose feature norms k(x, x) = |x|^4 stay
    below one as KW's bound assumes; --embedding full is the other cone."""
    proc = run_cli(["experiment", "kw-cone", "--n-samples", "60", "--seeds", "1",
                    "--no-plot"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "kw-cone").iterdir()) == \
        ["kw-cone.csv", "kw-cone.json"]
    doc = json.loads((tmp_path / "kw-cone" / "kw-cone.json").read_text())
    assert doc["params"]["embedding"] == "padded"
    X = opf.datasets.noisy_cone(60, 20, noise=0.05, random_state=0, embedding="padded")
    assert np.max(np.sum(X ** 2, axis=1) ** 2) < 1.0
    for eta in (1.0, "auto", "adahedge"):  # KW's eta = 1 by default
        result = experiments.kw_cone(n_samples=60, seeds=1, **({} if eta == 1.0 else
                                                               dict(eta=eta)))
        ours = opf.OnlineKernelPCA(2, kernel="poly", degree=2, gamma=1.0, coef0=0.0,
                                   eta=eta, random_state=0).fit(X)
        assert_allclose(result["losses"]["kernel_pca"]["expected"][0], ours.expected_losses_,
                        rtol=0, atol=0)
    proc = run_cli(["experiment", "kw-cone", "--n-samples", "60", "--seeds", "1",
                    "--eta", "auto", "--output", "auto", "--no-plot"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "eta=auto" in proc.stdout
    full = run_cli(["experiment", "kw-cone", "--n-samples", "60", "--seeds", "1",
                    "--embedding", "full", "--output", "full", "--no-plot"], tmp_path)
    assert full.returncode == 0, full.stderr
    assert "noisy cone (full)" in full.stdout


@pytest.mark.parametrize("args, message", [
    (["experiment"], "required: NAME"),
    (["experiment", "wk-fig5"], "invalid choice: 'wk-fig5'"),
    (["experiment", "wk-fig4", "--seeds", "0"], "argument --seeds"),
    (["experiment", "wk-fig4", "--eta", "-1"], "argument --eta"),
    (["experiment", "wk-fig4", "--eta", "nan"], "argument --eta"),
    (["experiment", "wk-fig4", "--eta", "AdaHedge"], "argument --eta"),
    (["experiment", "wk-fig4", "--alpha", "1"], "argument --alpha"),
    (["experiment", "wk-fig4", "--segment-length", "ten"], "argument --segment-length"),
    (["experiment", "wk-fig4", "--n-components", "20"], "n_components must satisfy"),
    (["experiment", "digits", "--n-features", "10"], "--n-features does not apply"),
    (["experiment", "wk-fig4", "--n-samples", "10"], "--n-samples does not apply"),
    (["demo", "--frobnicate"], "unrecognized arguments: --frobnicate"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["bench", "--budget", "0"], "argument --budget"),
    # issue 35, item 13: accepted, and ran for ever
    (["bench", "--budget", "1e300"],
     "argument --budget: invalid number of seconds in (0, 600] value: '1e300'"),
    (["bench", "--budget", "inf"], "argument --budget"),
])
def test_bad_arguments_give_usage_and_nonzero_exit(tmp_path, args, message):
    proc = run_cli(args, tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("usage: onlinepca-fast")
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not list(tmp_path.iterdir())


def test_bench_selfcheck_version(tmp_path):
    proc = run_cli(["bench", "--budget", "0.02"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.endswith("x")]
    assert len(lines) == 4
    assert {ln.split()[0] for ln in lines} == {"OnlinePCA", "CenteredOnlinePCA"}
    assert all(float(ln.split()[-1][:-1]) > 0 for ln in lines)
    proc = run_cli(["selfcheck"], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "FAIL" not in proc.stdout
    proc = run_cli(["--version"], tmp_path)
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"onlinepca_fast {opf.__version__}"


def test_bench_budget_has_an_upper_bound():
    """Issue 35, item 13: a budget of 1e300 seconds was accepted."""
    from onlinepca_fast.app import bench

    for budget in (1e300, 600.5, float("inf"), 0.0):
        with pytest.raises(ValueError, match="budget must satisfy 0 < budget <= 600"):
            bench.benchmark(budget=budget)


# --- the experiment functions ------------------------------------------------------

@pytest.fixture(scope="module")
def fig4():
    return experiments.wk_fig4(segment_length=100, seeds=4, data_seed=3)


def test_wk_fig4_online_learners_beat_the_best_fixed_subspace(fig4):
    # WK Sec. 8: on a shifting stream the online algorithms have negative regret
    # against the best fixed subspace; the fixed share of YL recovers faster still.
    totals = {key: t["expected_mean"] for key, t in fig4["totals"].items()}
    assert totals["online_pca"] < totals["best_fixed"]
    assert totals["adaptive_pca"] < totals["online_pca"]
    assert fig4["n_trials"] == 300 and fig4["boundaries"] == [100, 200]


def test_wk_fig4_curves_are_the_learners_losses(fig4):
    X, _ = opf.datasets.shifting_subspaces(20, 2, (100, 100, 100), random_state=3)
    best = fig4["curves"]["best_fixed"]["expected"]
    assert_allclose(best[-1], metrics.best_subspace_loss(X, 2), rtol=1e-10, atol=1e-10)
    assert np.all(np.diff(best) >= -1e-12)
    for seed in fig4["seeds"]:
        pca = opf.OnlinePCA(2, eta=1.0, random_state=seed).fit(X)
        i = fig4["seeds"].index(seed)
        assert_allclose(fig4["losses"]["online_pca"]["expected"][i], pca.expected_losses_,
                        rtol=0, atol=0)
        assert_allclose(fig4["losses"]["online_pca"]["realized"][i], pca.realized_losses_,
                        rtol=0, atol=0)
    for key in ["online_pca", "uncentered_alg6", "adaptive_pca", "ftl"]:
        curve, losses = fig4["curves"][key], fig4["losses"][key]
        assert_allclose(curve["expected"], np.cumsum(losses["expected"], axis=1).mean(axis=0),
                        rtol=1e-12, atol=1e-12)
        # W moves deterministically: the expected loss does not depend on the seed
        assert_allclose(fig4["totals"][key]["expected_std"], 0.0, rtol=0, atol=1e-9)
        # the realized total loss is an unbiased estimate of the expected one
        t = fig4["totals"][key]
        assert abs(t["realized_mean"] - t["expected_mean"]) <= 6 * t["realized_std"] + 1e-9
    # Follow the Leader is deterministic: realized == expected
    assert_allclose(fig4["losses"]["ftl"]["realized"], fig4["losses"]["ftl"]["expected"],
                    rtol=0, atol=0)


def test_wk_fig4_within_the_bound_of_wk_thm6(fig4):
    bound = fig4["summary"]["wk_thm6_bound"]
    assert fig4["totals"]["online_pca"]["expected_mean"] <= bound
    assert fig4["totals"]["uncentered_alg6"]["expected_mean"] <= bound


def test_wk_fig6_regret_against_the_partition():
    r = experiments.wk_fig6(n_features=10, segment_length=50, subspaces=(0, 1, 0), seeds=2)
    X, _ = opf.datasets.shifting_subspaces(10, 2, (50, 50, 50), random_state=0,
                                           subspaces=(0, 1, 0))
    for key in ["online_pca", "share_uniform", "share_past"]:
        for i in range(2):
            curve = metrics.partition_regret(r["losses"][key]["expected"][i], X, 2, [50, 100],
                                             cumulative=True)
            assert_allclose(r["curves"][key]["expected"], curve, rtol=1e-9, atol=1e-9)
    # mixing (WK Sec. 8) recovers after the shifts, plain Alg. 5 barely does
    totals = {key: t["expected_mean"] for key, t in r["totals"].items()}
    assert totals["share_past"] < totals["online_pca"]
    assert totals["share_uniform"] < totals["online_pca"]
    assert r["quantity"] == "regret w.r.t. the best partition"


def test_yl_fig1_adaptive_beats_static():
    r = experiments.yl_fig1(segment_length=60, seeds=2)
    totals = {key: t["expected_mean"] for key, t in r["totals"].items()}
    assert totals["adaptive_pca"] < totals["online_pca"] < totals["best_fixed"]


def test_experiment_parameters_are_validated():
    with pytest.raises(ValueError, match="n_components"):
        experiments.wk_fig4(n_features=5, n_components=5)
    with pytest.raises(ValueError, match="eta"):
        experiments.yl_fig1(eta=0.0)
    with pytest.raises(ValueError, match="alpha"):
        experiments.wk_fig6(alpha=1.0)
    with pytest.raises(ValueError, match="seeds"):
        experiments.wk_fig4(seeds=0)
    with pytest.raises(TypeError, match="segment_length"):
        experiments.wk_fig4(segment_length=10.5)


def test_csv_matches_the_result(tmp_path):
    r = experiments.yl_fig1(segment_length=20, seeds=2)
    experiments.save_csv(r, tmp_path / "r.csv")
    experiments.save_json(r, tmp_path / "r.json")
    header, data = read_csv(tmp_path / "r.csv")
    for key, curve in r["curves"].items():
        assert_allclose(data[:, header.index(key)], curve["expected"], rtol=1e-9, atol=1e-12)
        if curve["kind"] == "learner":
            assert_allclose(data[:, header.index(key + "_realized_std")],
                            curve["realized_std"], rtol=1e-9, atol=1e-12)
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["labels"]["adaptive_pca"].startswith("OnlineAdaptivePCA")
    assert "best fixed subspace in hindsight" in experiments.format_table(r)


def test_the_writers_keep_an_earlier_file_whole(tmp_path, monkeypatch):
    """save_csv and save_json write beside the file and rename: a failure
    part way leaves the earlier file as it was, and no temporary file."""
    from onlinepca_fast.app import results

    r = experiments.yl_fig1(segment_length=20, seeds=1)
    monkeypatch.setattr(results, "open", failing_open(100, disk_full()), raising=False)
    for name, save in (("r.csv", experiments.save_csv), ("r.json", experiments.save_json)):
        (tmp_path / name).write_text("earlier")
        with pytest.raises(OSError, match="No space left on device"):
            save(r, tmp_path / name)
        assert (tmp_path / name).read_text() == "earlier"
    assert sorted(os.listdir(tmp_path)) == ["r.csv", "r.json"]


# --- plotting ---------------------------------------------------------------------

def test_plotting_without_matplotlib_says_how_to_install(monkeypatch, fig4):
    # hide matplotlib and any of its modules another test imported already
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert not plotting.matplotlib_available()
    with pytest.raises(ImportError, match=r'pip install "onlinepca_fast\[plot\]"'):
        plotting.plot_result(fig4)
    with pytest.raises(ImportError, match="matplotlib"):
        plotting.plot_cumulative_loss({"a": [1.0, 2.0]})


@pytest.mark.skipif(not HAS_MPL, reason="matplotlib is not installed")
def test_plots_are_written(tmp_path, fig4):
    fig = plotting.plot_result(fig4, path=tmp_path / "fig4.png")
    assert (tmp_path / "fig4.png").read_bytes().startswith(PNG_MAGIC)
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.get_lines()
            if not line.get_label().startswith("_")] == \
        [c["label"] for c in fig4["curves"].values()]
    plotting.plot_cumulative_loss({"OnlinePCA": fig4["losses"]["online_pca"]["realized"]},
                                  boundaries=[100, 200], path=tmp_path / "loss.png")
    plotting.plot_regret({"r": np.linspace(0.0, 1.0, 30)}, path=tmp_path / "regret.png")
    assert (tmp_path / "loss.png").exists() and (tmp_path / "regret.png").exists()


@pytest.mark.parametrize("args, message", [
    (["experiment", "wk-fig6", "--n-features", "100000"], "--n-features 100000 needs about"),
    (["demo", "--output", "a-file"], "--output 'a-file' is not a writable directory"),
    (["experiment", "wk-fig4", "--output", "a-file/sub"], "is not a writable directory"),
    # issue 22, item 11: the pre-check looked at --n-features only (numpy's
    # MemoryError for kw-cone's 100,000 x 100,000 kernel matrix, 74.5 GiB)
    (["experiment", "kw-cone", "--n-samples", "100000"], "--n-samples 100000 needs about"),
])
def test_impossible_outputs_and_sizes_are_one_line_errors_before_computing(
        tmp_path, args, message):
    """Issue 13, item 11: checked before the experiment runs (no table is
    printed), one line on stderr, exit status 2, nothing written."""
    (tmp_path / "a-file").write_text("")
    proc = run_cli(args, tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and message in proc.stderr
    assert proc.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


@pytest.mark.parametrize("command, taken", [
    (["experiment", "yl-fig1"], "yl-fig1.csv"),
    (["experiment", "yl-fig1"], "yl-fig1.json"),
    (["experiment", "yl-fig1"], "yl-fig1.png"),
    (["demo"], "demo.png"),
])
def test_an_output_name_taken_by_a_directory_is_refused_before_computing(
        tmp_path, command, taken):
    """Issue 22, item 11: a directory named like an output file gave
    IsADirectoryError after the whole computation."""
    (tmp_path / "out" / taken).mkdir(parents=True)
    proc = run_cli(command + ["--segment-length", "20", "--seeds", "1", "--output", "out"],
                   tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert f"--output 'out' holds '{taken}', which is not a file" in proc.stderr
    assert proc.stdout == ""
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [taken]


def test_json_records_the_environment(tmp_path):
    """Issue 26, item 4: the results record the package, NumPy and SciPy
    versions and the BLAS in use."""
    import scipy

    proc = run_cli(["experiment", "yl-fig1", "--segment-length", "20", "--seeds", "1",
                    "--no-plot", "--output", "out"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    env = json.loads((tmp_path / "out" / "yl-fig1.json").read_text())["environment"]
    assert env["onlinepca_fast"] == opf.__version__
    assert env["numpy"] == np.__version__ and env["scipy"] == scipy.__version__
    assert env["python"] == "{}.{}.{}".format(*sys.version_info[:3])
    assert env["blas"] and all(b["internal_api"] for b in env["blas"])


def test_ctrl_c_is_one_line_exit_130_and_writes_nothing(tmp_path, monkeypatch, capsys):
    from onlinepca_fast.app import cli

    def interrupted(**kwargs):
        raise KeyboardInterrupt

    monkeypatch.setitem(experiments.EXPERIMENTS, "wk-fig4", interrupted)
    status = cli.main(["experiment", "wk-fig4", "--output", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 130
    assert err.count("\n") == 1 and "interrupted" in err
    assert not list(tmp_path.iterdir())  # not even the folder


# --- issue 35, items 8 and 9: a rerun never destroys the earlier files -------------------

_SMALL = ["experiment", "yl-fig1", "--segment-length", "20", "--seeds", "1"]
_FILES = ["yl-fig1.csv", "yl-fig1.json", "yl-fig1.png"] if HAS_MPL else \
    ["yl-fig1.csv", "yl-fig1.json"]


def _earlier_run(tmp_path, capsys):
    """The files of a first run in tmp_path/out, and their bytes."""
    from onlinepca_fast.app import cli

    out = tmp_path / "out"
    assert cli.main([*_SMALL, "--output", str(out)]) == 0
    capsys.readouterr()
    before = snapshot(out)
    assert sorted(before) == sorted(_FILES)
    return out, before


def _interrupt_png(result, path=None, **kwargs):
    with open(path, "wb") as f:
        f.write(PNG_MAGIC)
    raise KeyboardInterrupt


@pytest.mark.parametrize("where", ["csv", "png", "json", "between renames"])
def test_ctrl_c_while_writing_keeps_the_earlier_files(tmp_path, monkeypatch, capsys, where):
    """Item 8: a rerun into the same folder, Ctrl-C during the write: the
    earlier CSV was left truncated while the message said no files were
    written.  Now each file goes to a temporary file, renamed into place
    with the others at the end: the folder is as it was (no partial or
    temporary file), and the message says what happened."""
    from onlinepca_fast.app import _output, cli, results

    out, before = _earlier_run(tmp_path, capsys)
    if where == "csv":
        monkeypatch.setattr(results, "open", failing_open(500, KeyboardInterrupt()),
                            raising=False)
    elif where == "json":
        monkeypatch.setattr(results, "open", failing_open(
            500, KeyboardInterrupt(), lambda path: str(path).endswith(".json")),
            raising=False)
    elif where == "png":
        if not HAS_MPL:
            pytest.skip("matplotlib is not installed")
        monkeypatch.setattr(plotting, "plot_result", _interrupt_png)
    else:
        renames = []

        def replace(src, dst):  # the second rename onto a final name is interrupted
            if not os.path.basename(dst).startswith("."):
                if renames:
                    raise KeyboardInterrupt
                renames.append(dst)
            os.rename(src, dst)

        monkeypatch.setattr(_output.os, "replace", replace)
    status = cli.main([*_SMALL, "--data-seed", "1", "--output", str(out)])
    err = capsys.readouterr().err
    assert status == 130 and err.count("\n") == 1
    after = snapshot(out)
    assert sorted(after) == sorted(_FILES)  # no temporary file left
    if where == "between renames":  # the one file renamed is the new run's
        assert err == f"onlinepca-fast: interrupted; only {out / 'yl-fig1.csv'} was replaced\n"
        assert after.pop("yl-fig1.csv") != before.pop("yl-fig1.csv")
    else:
        assert err == ("onlinepca-fast: interrupted; no files were written for the "
                       "interrupted run\n")
    assert after == before


def test_ctrl_c_while_writing_into_a_new_folder_leaves_nothing(tmp_path, monkeypatch, capsys):
    from onlinepca_fast.app import cli, results

    monkeypatch.setattr(results, "open", failing_open(500, KeyboardInterrupt()), raising=False)
    status = cli.main([*_SMALL, "--output", str(tmp_path / "a" / "b")])
    assert status == 130 and "no files were written" in capsys.readouterr().err
    assert os.listdir(tmp_path) == []  # neither a/ nor a/b/


@pytest.mark.parametrize("new_folder", [False, True])
def test_a_full_disk_is_one_line_and_keeps_the_earlier_files(
        tmp_path, monkeypatch, capsys, new_folder):
    """Item 9: a full disk while writing gave a chained traceback of three
    OSErrors and a truncated CSV.  Now: one line naming the file and the
    cause, exit status 1, nothing partial, the earlier files whole."""
    from onlinepca_fast.app import cli, results

    if new_folder:
        out, before = tmp_path / "new", None
    else:
        out, before = _earlier_run(tmp_path, capsys)
    monkeypatch.setattr(results, "open", failing_open(2000, disk_full()), raising=False)
    status = cli.main([*_SMALL, "--data-seed", "1", "--output", str(out)])
    captured = capsys.readouterr()
    assert status == 1
    assert captured.err == (f"onlinepca-fast experiment: error: cannot write "
                            f"{out / 'yl-fig1.csv'}: No space left on device [Errno 28]; "
                            "no files were written (any earlier ones are as they were)\n")
    assert "wrote" not in captured.out
    if new_folder:
        assert os.listdir(tmp_path) == []
    else:
        assert snapshot(out) == before


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_FSIZE semantics")
def test_a_write_the_system_refuses_keeps_the_earlier_files(tmp_path):
    """Item 9 with a real refusal from the system: a limit on the size of
    the files the process writes (RLIMIT_FSIZE, SIGXFSZ ignored: write()
    fails with EFBIG), reached by the new CSV; whatever file it hits
    (CSV, PNG, JSON), the earlier ones stay whole."""
    import resource
    import signal

    args = ["experiment", "yl-fig1", "--segment-length", "200", "--seeds", "1", "--output",
            "out"]
    assert run_cli(args, tmp_path).returncode == 0
    before = snapshot(tmp_path / "out")
    assert len(before["yl-fig1.csv"]) > 20_000

    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (10_000, 10_000))

    proc = subprocess.run([sys.executable, "-m", "onlinepca_fast", *args, "--data-seed", "1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          preexec_fn=limited)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "cannot write out/yl-fig1.csv: File too large [Errno 27]" in proc.stderr
    assert snapshot(tmp_path / "out") == before


_INTERRUPTED_IMPORT = """
import sys
from importlib.metadata import entry_points


class Interrupt:  # Ctrl-C while the package loads its learners (and scikit-learn)
    def find_spec(self, name, path=None, target=None):
        if name == "onlinepca_fast.learners":
            raise KeyboardInterrupt
        return None


sys.meta_path.insert(0, Interrupt())
(script,) = entry_points(group="console_scripts", name="onlinepca-fast")
sys.exit(script.load()())
"""


def test_ctrl_c_while_the_console_script_loads_is_one_line(tmp_path):
    """Issue 35, item 13: Ctrl-C during the imports of ``onlinepca-fast``
    (NumPy, SciPy, scikit-learn, the compiled core: a second or two) printed
    a traceback, because a console script imports its module, and with it
    the package, before any of its code runs.  The entry point is now a
    module beside the package that imports it inside a try.  Run as the
    console script runs it: its entry point loaded, then called."""
    proc = subprocess.run([sys.executable, "-c", _INTERRUPTED_IMPORT],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 130
    assert proc.stderr == ("onlinepca-fast: interrupted while starting; nothing was run or "
                           "written\n")
    assert not list(tmp_path.iterdir())


def test_demo_help_lists_only_the_demos_options(tmp_path):
    proc = run_cli(["demo", "--help"], tmp_path)
    assert proc.returncode == 0
    for option in ["--n-features", "--eta", "--alpha", "--segment-length", "--seeds",
                   "--data-seed", "--output", "--no-plot", "--quiet"]:
        assert option in proc.stdout
    for option in ["--n-samples", "--embedding"]:  # other experiments' options
        assert option not in proc.stdout
    assert "demo/demo.png" in proc.stdout


def test_table_has_one_expected_column_and_says_why(tmp_path):
    """The expected loss is the same for every seed (W moves
    deterministically), so the table shows its total once, not a std of 0."""
    proc = run_cli(["experiment", "wk-fig4", "--segment-length", "30", "--seeds", "2",
                    "--no-plot", "--output", "o"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    header = next(ln for ln in proc.stdout.splitlines() if ln.startswith("learner"))
    assert header.split() == ["learner", "total", "loss", "mean", "std"]
    assert "the same for every seed" in proc.stdout


def test_selfcheck_covers_the_updates_and_every_learner(tmp_path):
    proc = run_cli(["selfcheck"], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("  ok")]
    for what in ["rank_one_update", "bordered_update", *opf.__all__]:
        if what[0].isupper() and what not in ("NotFittedError",):
            assert any(f" {what}:" in ln for ln in lines), what
    assert any("rank_one_update" in ln for ln in lines)
    assert any("bordered_update" in ln for ln in lines)


def _run_on_a_terminal(args, cwd):
    """Run the CLI with stderr on a pseudo-terminal of 100 columns; (status,
    stdout, what the terminal received)."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "onlinepca_fast", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    received = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        received += chunk
    with proc.stdout:
        out = proc.stdout.read()
    status = proc.wait(timeout=300)
    os.close(master)
    return status, out, received.decode("utf-8", "replace")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pseudo-terminal test")
def test_progress_bar_counts_trials_on_a_terminal_and_quiet_silences_it(tmp_path):
    """On a terminal, a run longer than half a second draws a tqdm bar of
    the trials of every learner and seed (kw-cone: one learner, 700
    trials); --quiet draws nothing; a pipe (every other test) gets none."""
    args = ["experiment", "kw-cone", "--n-samples", "700", "--seeds", "1", "--no-plot"]
    status, out, tty = _run_on_a_terminal([*args, "--output", "a"], tmp_path)
    assert status == 0, tty
    assert "kw-cone:" in tty and "/700" in tty and "trials/s" in tty
    assert "ran in" in out
    status, out, tty = _run_on_a_terminal([*args, "--output", "b", "--quiet"], tmp_path)
    assert status == 0, tty
    assert "kw-cone:" not in tty and "trials" not in tty
    assert (tmp_path / "a" / "kw-cone.csv").read_text() == \
        (tmp_path / "b" / "kw-cone.csv").read_text()
