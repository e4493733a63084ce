"""onlinepca_fast.app.sweep and ``onlinepca-fast sweep``: one tidy table, the same on
every backend.

The oracle for each row is the learner fitted directly on the data set in
this thread, with :mod:`onlinepca_fast.metrics` for the comparator (itself
checked against ``numpy.linalg.eigvalsh``).  The table must be the same,
bit for bit except the timing column, in order, on threads, on a Dask
LocalCluster of two worker processes on the loopback (started once for the
module), and through the command line with ``--jobs`` and ``--scheduler``.
"""

import csv
import json
import os
import subprocess
import sys
import time

import numpy as np
import pyarrow.parquet as pq
import pytest
from dask_cluster import local_client
from failing_writes import disk_full, failing_open, snapshot
from numpy.testing import assert_allclose

import onlinepca_fast as opf
from onlinepca_fast import datasets, metrics
from onlinepca_fast.app import experiments, sweep

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

CONFIG = {
    "seeds": 2,
    "datasets": {
        "shift": {"kind": "shifting_subspaces", "n_features": 6, "rank": 2,
                  "segment_lengths": [60, 60], "random_state": 3},
        "cone": {"kind": "noisy_cone", "n_samples": 80, "n_features": 5,
                 "embedding": "padded"},
    },
    "learners": [
        {"class": "OnlinePCA", "n_components": 2, "eta": [0.5, 2.0], "share": "fixed",
         "alpha": 1e-3},
        {"class": "OnlineAdaptivePCA", "n_components": 1, "alpha": [1e-4]},
        {"class": "CenteredOnlinePCA", "n_components": 2, "center_lr_inv": 1.0},
        {"class": "FollowTheLeader", "n_components": 2, "centered": [False, True]},
    ],
}

TOML = """
seeds = 2

[datasets.shift]
kind = "shifting_subspaces"
n_features = 6
rank = 2
segment_lengths = [60, 60]
random_state = 3

[datasets.cone]
kind = "noisy_cone"
n_samples = 80
n_features = 5
embedding = "padded"

[[learners]]
class = "OnlinePCA"
n_components = 2
eta = [0.5, 2.0]
share = "fixed"
alpha = 1e-3

[[learners]]
class = "OnlineAdaptivePCA"
n_components = 1
alpha = [1e-4]

[[learners]]
class = "CenteredOnlinePCA"
n_components = 2
center_lr_inv = 1.0

[[learners]]
class = "FollowTheLeader"
n_components = 2
centered = [false, true]
"""

TIMING = "us_per_trial"


@pytest.fixture(scope="module")
def client():
    with local_client() as dask_client:
        yield dask_client


@pytest.fixture(scope="module")
def sequential():
    return sweep.run_sweep(CONFIG)


def _without_timing(rows):
    return [{k: v for k, v in r.items() if k != TIMING} for r in rows]


def _data(name):
    spec = dict(CONFIG["datasets"][name])
    kind = spec.pop("kind")
    spec.setdefault("random_state", 0)
    out = sweep.DATASETS[kind](**spec)
    return out[0] if isinstance(out, tuple) else out


def test_the_table_against_direct_fits(sequential):
    columns, rows = sequential
    assert columns == ["learner", "n_components", "eta", "share", "alpha", "center_lr_inv",
                       "centered", "seed", "dataset", "n_features", "n_trials",
                       "total_expected_loss", "total_realized_loss", "comparator",
                       "comparator_loss", "regret", "realized_regret", "us_per_trial"]
    # 2 etas x 2 data sets x 2 seeds, 1 x 2 x 2, 1 x 2 x 2, 2 centerings x 2 data sets
    assert len(rows) == 8 + 4 + 4 + 4
    assert [(r["learner"], r["eta"], r["dataset"], r["seed"]) for r in rows[:4]] == [
        ("OnlinePCA", 0.5, "shift", 0), ("OnlinePCA", 0.5, "shift", 1),
        ("OnlinePCA", 0.5, "cone", 0), ("OnlinePCA", 0.5, "cone", 1)]
    for r in rows:
        X = _data(r["dataset"])
        params = {k: r[k] for k in columns[1:7] if r[k] is not None}
        if r["seed"] is not None:
            params["random_state"] = r["seed"]
        direct = getattr(opf, r["learner"])(**params).fit(X)
        centered = bool(getattr(direct, "centered", False))
        assert r["n_trials"] == X.shape[0] and r["n_features"] == X.shape[1]
        assert r["total_expected_loss"] == np.sum(direct.expected_losses_)
        assert r["total_realized_loss"] == np.sum(direct.realized_losses_)
        assert r["comparator"] == ("best affine subspace" if centered else "best subspace")
        assert r["regret"] == metrics.regret(direct.expected_losses_, X,
                                             r["n_components"], centered=centered)
        assert r["realized_regret"] == metrics.regret(direct.realized_losses_, X,
                                                      r["n_components"], centered=centered)
        # the comparator from an eigendecomposition: the n - k smallest eigenvalues
        Y = X - X.mean(axis=0) if centered else X
        tail = np.linalg.eigvalsh(Y.T @ Y)[:X.shape[1] - r["n_components"]].sum()
        assert_allclose(r["comparator_loss"], tail, rtol=1e-9, atol=1e-12)
        assert r[TIMING] > 0
    # deterministic learners run once, whatever the seeds
    assert [r["seed"] for r in rows if r["learner"] == "FollowTheLeader"] == [None] * 4
    # parameters not set by an entry show the learner's own value (None if it has none)
    ada = next(r for r in rows if r["learner"] == "OnlineAdaptivePCA")
    assert ada["eta"] == "auto" and ada["share"] is None and ada["centered"] is None


@pytest.mark.parametrize("n_jobs", [2, 5])
def test_threads_give_the_same_table(sequential, n_jobs):
    columns, rows = sweep.run_sweep(CONFIG, n_jobs=n_jobs)
    assert columns == sequential[0]
    assert _without_timing(rows) == _without_timing(sequential[1])


def test_dask_gives_the_same_table(sequential, client):
    columns, rows = sweep.run_sweep(CONFIG, client=client)
    assert columns == sequential[0]
    assert _without_timing(rows) == _without_timing(sequential[1])


def test_digits_are_the_digits_experiments_stream():
    config = {"datasets": {"digits": {"kind": "digits", "segment_length": 12}},
              "learners": [{"class": "OnlinePCA", "n_components": 2, "eta": 5.0}]}
    _, (row,) = sweep.run_sweep(config)
    result = experiments.digits(n_components=2, eta=5.0, segment_length=12, seeds=[0])
    assert row["total_expected_loss"] == result["losses"]["online_pca"]["expected"][0].sum()
    assert row["n_trials"] == 120 and row["n_features"] == 64
    X, labels = datasets.digits_stream(segment_length=12)
    assert np.array_equal(np.bincount(labels), [12] * 10)


def test_files_csv_parquet_png(sequential, tmp_path):
    columns, rows = sequential
    paths = sweep.write_table(columns, rows, str(tmp_path / "t"))
    assert paths == [str(tmp_path / "t.csv"), str(tmp_path / "t.parquet")]
    assert _read_csv(paths[0]) == _as_text(columns, rows)
    table = pq.read_table(paths[1]).to_pylist()
    # eta mixes "auto" (the default) and numbers: that column is written as text
    assert table == [{k: sweep._cell(v) if k == "eta" and v is not None else v
                      for k, v in r.items()} for r in rows]
    png = sweep.plot_sweep(columns, rows, str(tmp_path / "t.png"))
    with open(png, "rb") as f:
        assert f.read(8) == PNG_MAGIC


def _read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def _as_text(columns, rows, timing=True):
    out = [list(columns)]
    for r in rows:
        out.append(["" if r[c] is None else repr(r[c]) if isinstance(r[c], float)
                    else str(r[c]) for c in columns])
    if not timing:
        i = columns.index(TIMING)
        out = [row[:i] + row[i + 1:] for row in out]
    return out


# --- configuration errors ------------------------------------------------------------

def _with(**changes):
    config = json.loads(json.dumps(CONFIG))
    for path, value in changes.items():
        target = config
        *head, last = path.split("__")
        for key in head:
            target = target[int(key)] if key.isdigit() else target[key]
        if value is KeyError:
            del target[last]
        else:
            target[int(last) if last.isdigit() else last] = value
    return config


@pytest.mark.parametrize("changes, match", [
    (dict(learners__0__class="PCA"), r"learners\[0\]\.class must be one of \['OnlinePCA'"),
    (dict(learners__1__etta=1.0), r"learners\[1\]: OnlineAdaptivePCA has no parameter 'etta'"),
    (dict(learners__0__random_state=1), r"learners\[0\]: give the learners' seeds with"),
    (dict(learners__2__n_components=KeyError), r"learners\[2\]: CenteredOnlinePCA needs "
                                                "n_components"),
    (dict(learners__0__eta=[]), r"learners\[0\]\.eta is an empty list"),
    (dict(learners__0__eta=[1.0, -1.0]),
     r"learners\[0\] \(OnlinePCA, .*'eta': -1.0.*\) on datasets\.shift: eta must be"),
    (dict(learners__3__n_components=5),
     r"learners\[3\] .* on datasets\.cone: n_components must satisfy 1 <= n_components <= 4"),
    (dict(datasets__cone__kind="cube"), r"datasets\.cone\.kind must be one of"),
    (dict(datasets__cone__kind=KeyError), r"datasets\.cone must be a table with a 'kind'"),
    (dict(datasets__shift__n_samples=10), r"datasets\.shift: shifting_subspaces has no "
                                          "parameter 'n_samples'"),
    (dict(datasets__cone__embedding="flat"), r"datasets\.cone: embedding must be"),
    (dict(seeds=0), "seeds must be a count >= 1"),
    (dict(seeds=[1, -1]), "seeds must be a count >= 1 or a non-empty list"),
    (dict(seeds="3"), "seeds must be"),
    (dict(learners=[]), "learners must be a non-empty list"),
    (dict(datasets={}), "datasets must be a non-empty table"),
    (dict(output="x"), "unknown top-level key 'output'"),
])
def test_bad_configurations_name_the_entry(changes, match):
    with pytest.raises(sweep.ConfigError, match=match):
        sweep.run_sweep(_with(**changes))


def test_config_files(tmp_path):
    (tmp_path / "a.toml").write_text(TOML)
    (tmp_path / "a.json").write_text(json.dumps(CONFIG))
    assert sweep.load_config(tmp_path / "a.toml") == CONFIG
    assert sweep.load_config(str(tmp_path / "a.json")) == CONFIG
    (tmp_path / "b.yaml").write_text("seeds: 1")
    with pytest.raises(sweep.ConfigError, match="must be a .toml or .json file"):
        sweep.load_config(tmp_path / "b.yaml")
    (tmp_path / "c.toml").write_text("seeds = [1,")
    with pytest.raises(sweep.ConfigError, match="c.toml is not valid TOML"):
        sweep.load_config(tmp_path / "c.toml")
    (tmp_path / "d.json").write_text("{seeds: 1}")
    with pytest.raises(sweep.ConfigError, match="d.json is not valid JSON"):
        sweep.load_config(tmp_path / "d.json")


def test_the_example_configuration_is_valid():
    path = os.path.join(os.path.dirname(__file__), os.pardir, "examples", "sweep.toml")
    param_names, data, runs = sweep.expand(sweep.load_config(path))
    assert set(data) == {"wk-fig4", "digits"}
    assert param_names == ["n_components", "eta", "alpha"]
    assert len(runs) == (4 * 3 + 4 * 3 + 3 + 1) * 2


# --- the command line ------------------------------------------------------------------

_PRELUDE = """
import sys
for name in {hide!r}:
    sys.modules[name] = None    # import name -> ImportError
from onlinepca_fast.app.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run_cli(args, cwd, hide=()):
    return subprocess.run([sys.executable, "-c", _PRELUDE.format(hide=list(hide))] + args,
                          cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory, sequential):
    """``sweep cfg.toml --jobs 2`` once, with its default output folder."""
    tmp = tmp_path_factory.mktemp("cli")
    (tmp / "cfg.toml").write_text(TOML)
    proc = run_cli(["sweep", "cfg.toml", "--jobs", "2"], tmp)
    return tmp, proc


def test_cli_writes_the_table_and_the_plot(cli_run, sequential):
    tmp, proc = cli_run
    assert proc.returncode == 0, proc.stderr
    assert "cfg.toml: 20 fits on 2 data set(s), on 2 threads" in proc.stdout
    out = tmp / "cfg"                     # default: a folder named after the file
    for ext in ("csv", "parquet", "png"):
        assert f"wrote {out / ('cfg.' + ext)}" in proc.stdout
    columns, rows = sequential
    assert _without_timing_text(_read_csv(out / "cfg.csv")) == _as_text(columns, rows,
                                                                         timing=False)
    with open(out / "cfg.png", "rb") as f:
        assert f.read(8) == PNG_MAGIC


def _without_timing_text(table):
    i = table[0].index(TIMING)
    return [row[:i] + row[i + 1:] for row in table]


def test_cli_on_a_dask_scheduler_json_config(client, cli_run, tmp_path):
    (tmp_path / "cfg.json").write_text(json.dumps(CONFIG))
    proc = run_cli(["sweep", "cfg.json", "--scheduler", client.scheduler_info()["address"],
                    "--output", "results", "--no-plot"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "on the Dask cluster at tcp://127.0.0.1:" in proc.stdout
    assert not (tmp_path / "results" / "cfg.png").exists()
    assert _without_timing_text(_read_csv(tmp_path / "results" / "cfg.csv")) == \
        _without_timing_text(_read_csv(cli_run[0] / "cfg" / "cfg.csv"))


def test_cli_without_matplotlib_and_pyarrow(tmp_path):
    (tmp_path / "cfg.json").write_text(json.dumps(_with(seeds=1, learners__0__eta=1.0)))
    proc = run_cli(["sweep", "cfg.json"], tmp_path, hide=["matplotlib", "pyarrow"])
    assert proc.returncode == 0, proc.stderr
    assert "matplotlib is not installed, so no plot was written" in proc.stdout
    assert sorted(os.listdir(tmp_path / "cfg")) == ["cfg.csv"]


def _main(args, capsys):
    """The command line in this process: (exit status, stdout, stderr)."""
    from onlinepca_fast.app.cli import main

    try:
        status = main(args)
    except SystemExit as exc:  # argparse errors and --help
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_errors(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfg.json").write_text(json.dumps(_with(learners__0__eta=[1.0, 0.0])))
    status, out, err = _main(["sweep", "cfg.json"], capsys)
    assert status == 2
    assert "learners[0] (OnlinePCA" in err and "eta must be" in err
    assert not (tmp_path / "cfg").exists()       # nothing written for a bad configuration
    status, out, err = _main(["sweep", "missing.toml"], capsys)
    assert status == 2 and "cannot read missing.toml" in err
    status, out, err = _main(["sweep", "cfg.json", "--jobs", "2", "--scheduler", "tcp://x:1"],
                             capsys)
    assert status == 2 and "not allowed with argument" in err
    status, out, err = _main(["sweep", "cfg.json", "--jobs", "0"], capsys)
    assert status == 2 and "--jobs" in err
    # the output directory is checked before anything runs
    (tmp_path / "taken").write_text("a file")
    (tmp_path / "good.json").write_text(json.dumps(CONFIG))
    status, out, err = _main(["sweep", "good.json", "--output", "taken"], capsys)
    assert status == 2  # issue 22, item 11: one-line errors with status 2, as experiments
    assert err.count("\n") == 1 and "--output 'taken' is not a writable directory" in err
    assert "fits" not in out
    # sweep --help lists the sweep's options
    status, out, err = _main(["sweep", "--help"], capsys)
    assert status == 0
    for option in ("--jobs", "--scheduler", "--output", "--no-plot", "CONFIG"):
        assert option in out


# --- issue 22, items 10 and 11: memory, bad input, leaving nothing behind ----------------

def _fitted_learners_alive():
    import gc

    gc.collect()  # (garbage in reference cycles is not held: issue 22, item 9)
    return sum(1 for o in gc.get_objects()
               if isinstance(o, opf.OnlinePCA) and "n_features_in_" in o.__dict__)


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_the_sweep_keeps_rows_not_fitted_learners(n_jobs):
    """Item 10: every fitted learner was kept until the table was built (memory
    grew with the number of fits).  Now each row is made as its fit finishes
    and the learner dropped: at most the running fits' learners are alive."""
    config = _with(seeds=4, learners=[CONFIG["learners"][0]])
    expanded = sweep.expand(config)
    alive = []
    before = _fitted_learners_alive()  # (other tests' learners)
    columns, rows = sweep._run(expanded, n_jobs=n_jobs, client=None,
                               progress=lambda: alive.append(_fitted_learners_alive()))
    assert len(rows) == len(alive) == 2 * 4 * 2
    assert max(alive) - before <= (n_jobs or 1)
    assert _without_timing(rows) == _without_timing(sweep.run_sweep(config)[1])


def test_the_grid_is_scikit_learns_parameter_grid():
    """Issue 38, item 7: an entry's grid is sklearn's ParameterGrid, its points
    in its order (the parameter names sorted, the last varying fastest, as
    GridSearchCV's); the table's columns keep the order of appearance."""
    from sklearn.model_selection import ParameterGrid

    entry = {"class": "OnlineAdaptivePCA", "n_components": 2, "eta": [1.0, 5.0],
             "alpha": [1e-5, 1e-3, 1e-2]}
    param_names, _, runs = sweep.expand(_with(seeds=1, learners=[entry],
                                              datasets={"cone": CONFIG["datasets"]["cone"]}))
    assert param_names == ["n_components", "eta", "alpha"]
    grid = ParameterGrid({"n_components": [2], "eta": [1.0, 5.0],
                          "alpha": [1e-5, 1e-3, 1e-2]})
    assert [run["params"] for run in runs] == list(grid)
    assert [(run["params"]["alpha"], run["params"]["eta"]) for run in runs] == [
        (1e-5, 1.0), (1e-5, 5.0), (1e-3, 1.0), (1e-3, 5.0), (1e-2, 1.0), (1e-2, 5.0)]


def test_a_huge_grid_is_refused_without_being_made():
    """The grid's size is counted, not its points made: 1,100 x 1,000 values
    (1.1e6 fits) are refused at once, in little memory (the grid was a list
    of 1.1e6 dicts, some 250 MB, before the count was checked)."""
    import tracemalloc

    entry = {"class": "OnlinePCA", "n_components": 2,
             "eta": [0.5 + i / 1e3 for i in range(1100)],
             "alpha": [i / 1e4 for i in range(1000)], "share": "fixed"}
    config = _with(seeds=1, learners=[entry], datasets={"cone": CONFIG["datasets"]["cone"]})
    tracemalloc.start()
    try:
        with pytest.raises(sweep.ConfigError, match="the sweep has 1100000 fits"):
            sweep.expand(config)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20


def test_huge_seed_counts_and_sweeps_are_refused_before_anything_is_made():
    """Item 11: seeds = 1000000000 was a MemoryError traceback."""
    with pytest.raises(sweep.ConfigError, match="seeds must be a count >= 1 \\(at most"):
        sweep.expand(_with(seeds=10**9))
    # (2 etas + 1 + 1 randomised grid points) x 2 data sets x 300,000 seeds + FTL's 2 x 2
    with pytest.raises(sweep.ConfigError, match="the sweep has 2400004 fits .* more than"):
        sweep.expand(_with(seeds=300_000))


@pytest.mark.parametrize("ext", ["toml", "json"])
def test_cli_config_that_is_not_utf8_is_a_one_line_error(tmp_path, monkeypatch, capsys, ext):
    """Item 11: a non-UTF-8 configuration was a UnicodeDecodeError traceback."""
    monkeypatch.chdir(tmp_path)
    text = TOML if ext == "toml" else json.dumps(CONFIG)
    (tmp_path / f"cfg.{ext}").write_bytes(text.replace("shift", "\xe9t\xe9").encode("latin-1"))
    status, out, err = _main(["sweep", f"cfg.{ext}"], capsys)
    assert status == 2
    assert err.count("\n") == 1 and f"cfg.{ext} is not valid {ext.upper()} (UTF-8" in err
    assert out == "" and sorted(os.listdir(tmp_path)) == [f"cfg.{ext}"]


def test_cli_huge_seed_count_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfg.toml").write_text(TOML.replace("seeds = 2", "seeds = 1000000000"))
    status, out, err = _main(["sweep", "cfg.toml"], capsys)
    assert status == 2 and err.count("\n") == 1 and "seeds must be a count >= 1" in err
    assert sorted(os.listdir(tmp_path)) == ["cfg.toml"]


def _nested(depth, leaf="1.0"):
    return "[" * depth + leaf + "]" * depth


@pytest.mark.parametrize("name, text", [
    ("cfg.json", _nested(100_000)),                  # the parser gives up
    ("cfg.toml", f"seeds = {_nested(100_000, '1')}\n"),
    # read, but a grid value 900 lists deep: the checks recursed
    ("cfg.json", json.dumps(CONFIG).replace('"eta": [0.5, 2.0]', f'"eta": {_nested(900)}')),
])
def test_cli_deeply_nested_config_is_a_one_line_error(tmp_path, monkeypatch, capsys, name,
                                                      text):
    """Issue 35, item 13: a deeply nested configuration was a RecursionError
    traceback (from the JSON or TOML parser, or from the checks of a value)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(text)
    status, out, err = _main(["sweep", name], capsys)
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "is nested too deeply (at most 32 levels of tables and lists)" in err
    assert out == "" and os.listdir(tmp_path) == [name]


def test_nesting_is_checked_before_anything_runs():
    deep = _with(learners__0__eta=json.loads(_nested(33)))
    with pytest.raises(sweep.ConfigError, match="the configuration is nested too deeply"):
        sweep.expand(deep)
    # 32 levels pass the depth check (and the learner refuses the value)
    with pytest.raises(sweep.ConfigError, match=r"learners\[0\] .* eta must be"):
        sweep.expand(_with(learners__0__eta=json.loads(_nested(28))))


def test_cli_output_file_name_taken_by_a_directory_is_refused_before_computing(
        tmp_path, monkeypatch, capsys):
    """Item 11: an output folder holding a directory named like an output file
    gave IsADirectoryError after the whole computation."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfg.toml").write_text(TOML)
    for name in ("cfg.csv", "cfg.parquet", "cfg.png"):
        (tmp_path / "out" / name).mkdir(parents=True)
        status, out, err = _main(["sweep", "cfg.toml", "--output", "out"], capsys)
        assert status == 2 and err.count("\n") == 1
        assert f"--output 'out' holds '{name}', which is not a file" in err
        assert "fits" not in out  # before anything ran
        assert sorted(os.listdir(tmp_path / "out")) == [name]
        (tmp_path / "out" / name).rmdir()


def test_cli_ctrl_c_leaves_nothing_behind(tmp_path, monkeypatch, capsys):
    """Item 11: Ctrl-C during a sweep left an empty output folder although the
    message said nothing was written."""
    from onlinepca_fast import parallel

    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfg.toml").write_text(TOML)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(parallel, "_execute", interrupted)
    status, out, err = _main(["sweep", "cfg.toml", "--jobs", "2", "--output", "a/b"], capsys)
    assert status == 130 and "interrupted; no files were written" in err
    assert sorted(os.listdir(tmp_path)) == ["cfg.toml"]   # neither a/ nor a/b/
    status, out, err = _main(["sweep", "cfg.toml"], capsys)
    assert status == 130 and sorted(os.listdir(tmp_path)) == ["cfg.toml"]


def test_cli_sweep_ctrl_c_on_threads_stops_the_fits(tmp_path, monkeypatch, capsys):
    """Item 6: ``sweep --jobs 2`` went on for the running fits' whole streams
    after Ctrl-C.  The fits now stop at their next chunk: the interrupt comes
    during the first two fits (of 400,000-row streams), and no fit finishes."""
    import signal
    import threading

    from onlinepca_fast import parallel

    monkeypatch.chdir(tmp_path)
    config = _with(seeds=4, learners=[{"class": "OnlinePCA", "n_components": 2}],
                   datasets={"long": {"kind": "shifting_subspaces", "n_features": 20,
                                      "segment_lengths": [200_000, 200_000]}})
    (tmp_path / "cfg.json").write_text(json.dumps(config))
    started, finished = [], []
    fit_stream = parallel._fit_stream

    def watched(estimator, *args, **kwargs):
        started.append(estimator)
        out = fit_stream(estimator, *args, **kwargs)
        finished.append(estimator)
        return out

    def interrupt():
        # once both fits have run a chunk (a read waits for the chunk in
        # flight; before the first one the learner is not fitted: 0): on a
        # loaded machine validating a 400,000-row stream outlasts any fixed wait
        deadline = time.monotonic() + 120  # (the assertions below then say why)
        while ((len(started) < 2 or min(getattr(e, "n_trials_", 0) for e in started[:2]) == 0)
               and time.monotonic() < deadline):
            threading.Event().wait(0.005)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    monkeypatch.setattr(parallel, "_fit_stream", watched)
    killer = threading.Thread(target=interrupt)
    killer.start()
    status, out, err = _main(["sweep", "cfg.json", "--jobs", "2", "-q"], capsys)
    killer.join()
    assert status == 130 and "interrupted" in err
    assert len(started) == 2 and finished == []
    assert not [t for t in threading.enumerate() if t.name.startswith("run_many")]
    for est in started:  # stopped consistently, early in the stream
        assert 0 < est.n_trials_ < 200_000
        assert len(est.realized_losses_) == est.n_trials_
    assert sorted(os.listdir(tmp_path)) == ["cfg.json"]


@pytest.mark.parametrize("where", ["csv", "parquet", "png"])
@pytest.mark.parametrize("error", ["ctrl-c", "disk full"])
def test_cli_rerun_that_fails_while_writing_keeps_the_earlier_files(
        tmp_path, monkeypatch, capsys, where, error):
    """Issue 35, items 8 and 9: a rerun into the same folder interrupted (or
    out of disk space) while writing left a truncated CSV (1.88 MB -> 13 KB;
    0 bytes on a full disk) and a traceback.  Now the earlier files stay
    whole, no partial or temporary file is left, and the message is one
    true line."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cfg.json").write_text(json.dumps(_with(seeds=1)))
    assert _main(["sweep", "cfg.json", "-q"], capsys)[0] == 0
    before = snapshot(tmp_path / "cfg")
    assert sorted(before) == ["cfg.csv", "cfg.parquet", "cfg.png"]
    exc = KeyboardInterrupt() if error == "ctrl-c" else disk_full()
    if where == "csv":
        monkeypatch.setattr(sweep, "open", failing_open(1000, exc), raising=False)
    else:
        module, name = (pq, "write_table") if where == "parquet" else (sweep, "_save")

        def half_written(what, path, *args, **kwargs):
            with open(path, "wb") as f:
                f.write(b"PAR1" if where == "parquet" else PNG_MAGIC)
            raise exc

        monkeypatch.setattr(module, name, half_written)
    (tmp_path / "cfg.json").write_text(json.dumps(_with(seeds=2)))  # another table
    status, out, err = _main(["sweep", "cfg.json", "-q"], capsys)
    assert err.count("\n") == 1 and "wrote" not in out
    if error == "ctrl-c":
        assert status == 130
        assert err == ("onlinepca-fast: interrupted; no files were written for the "
                       "interrupted run\n")
    else:
        assert status == 1
        path = os.path.join("cfg", "cfg." + where)
        assert err == (f"onlinepca-fast sweep: error: cannot write {path}: No space left on "
                       "device [Errno 28]; no files were written (any earlier ones are as "
                       "they were)\n")
    assert snapshot(tmp_path / "cfg") == before


def test_parquet_records_the_environment(sequential, tmp_path):
    """Issue 26, item 4: results record the versions and the BLAS in use."""
    import scipy

    columns, rows = sequential
    sweep.write_table(columns, rows, str(tmp_path / "t"))
    meta = pq.read_schema(tmp_path / "t.parquet").metadata
    env = json.loads(meta[b"onlinepca_fast.environment"])
    assert env["onlinepca_fast"] == opf.__version__
    assert env["numpy"] == np.__version__ and env["scipy"] == scipy.__version__
    assert env["blas"] and all("internal_api" in b for b in env["blas"])


def test_docstring_examples():
    import doctest

    result = doctest.testmod(sweep, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 3 and result.failed == 0
