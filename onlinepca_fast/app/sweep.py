"""Parameter sweeps: learners x parameters x seeds x datasets, one tidy table.

A sweep is described by a small TOML or JSON file (chosen by its
extension)::

    seeds = 3                       # the learners' seeds: a count (0, 1, 2) or a list

    [datasets.wk]                   # a data set named "wk" (the table's dataset column)
    kind = "shifting_subspaces"     # shifting_subspaces, noisy_cone or digits
    n_features = 20
    segment_lengths = [500, 500, 500]
    random_state = 0                # the data's own seed

    [[learners]]
    class = "OnlinePCA"
    n_components = 2
    eta = [0.5, 1.0, 2.0]           # a list: one run per value (a grid axis)

    [[learners]]
    class = "FollowTheLeader"
    n_components = 2

Every learner entry runs on every data set, for every combination of its
list-valued parameters (scikit-learn's
:class:`~sklearn.model_selection.ParameterGrid`, in its order, as
``GridSearchCV``'s: the parameter names sorted, the last one varying
fastest) and, if it is randomised (has ``random_state``), for every seed; a
parameter whose value is itself a list (``mean_init``) is written as a list
of one list.  Data set parameters are passed as they are
to :func:`onlinepca_fast.datasets.shifting_subspaces`,
:func:`~onlinepca_fast.datasets.noisy_cone` or
:func:`~onlinepca_fast.datasets.digits_stream` (``random_state`` defaults
to 0 so that the data are the same in every run).

The fits run through :mod:`onlinepca_fast.parallel` -- in order, on threads
or on a Dask cluster, with the same results -- and give one row each:

``learner``, one column per parameter named in the file, ``seed``,
``dataset``, ``n_features``, ``n_trials``, ``total_expected_loss``,
``total_realized_loss``, ``comparator`` and ``comparator_loss`` (the
best fixed rank-k subspace in hindsight,
:func:`onlinepca_fast.metrics.best_subspace_loss`; the best affine
subspace for a learner that learns a center), ``regret`` and ``realized_regret`` (the totals minus it, as
:func:`onlinepca_fast.metrics.regret`), ``us_per_trial`` (the fit's wall
time per trial, where it ran: the one column that differs between runs).

Run it with ``onlinepca-fast sweep CONFIG [--jobs N | --scheduler ADDRESS]
[--output DIR]`` or :func:`run_sweep`; ``examples/sweep.toml`` is an
example.

Examples
--------
>>> from onlinepca_fast.app.sweep import run_sweep
>>> config = {"seeds": 2,
...           "datasets": {"wk": {"kind": "shifting_subspaces", "n_features": 6,
...                               "segment_lengths": [60, 60]}},
...           "learners": [{"class": "OnlinePCA", "n_components": 2, "eta": [0.5, 2.0]},
...                        {"class": "FollowTheLeader", "n_components": 2}]}
>>> columns, rows = run_sweep(config)
>>> [(r["learner"], r["eta"], r["seed"]) for r in rows]
[('OnlinePCA', 0.5, 0), ('OnlinePCA', 0.5, 1), ('OnlinePCA', 2.0, 0), ('OnlinePCA', 2.0, 1), ('FollowTheLeader', None, None)]
>>> bool(rows[0]["regret"] == rows[0]["total_expected_loss"] - rows[0]["comparator_loss"])
True
"""

from __future__ import annotations

import copy
import csv
import inspect
import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sklearn.model_selection import ParameterGrid

from .. import datasets, learners, metrics
from .._docs import doc_filler
from ._output import replacing
from .plotting import _MISSING, _save
from .results import environment

__all__ = ["load_config", "expand", "run_sweep", "write_table", "plot_sweep",
           "format_summary", "ConfigError", "LEARNERS", "DATASETS"]

# the parameters of the functions that take a sweep's table
_fill_doc = doc_filler({"table": """\
columns : list of str
    The table's columns, as returned by :func:`run_sweep`.
rows : list of dict
    The table's rows, as returned by :func:`run_sweep`."""})

#: The learners a sweep can run: the linear PCA learners, whose losses are
#: compared with the best fixed subspace.
LEARNERS = {name: getattr(learners, name) for name in
            ("OnlinePCA", "OnlineAdaptivePCA", "CenteredOnlinePCA", "FollowTheLeader")}

#: The data sets: kind -> function returning the rows (the first element
#: when it returns a tuple).
DATASETS = {
    "shifting_subspaces": datasets.shifting_subspaces,
    "noisy_cone": datasets.noisy_cone,
    "digits": datasets.digits_stream,
}

_RESULT_COLUMNS = ["seed", "dataset", "n_features", "n_trials", "total_expected_loss",
                   "total_realized_loss", "comparator", "comparator_loss", "regret",
                   "realized_regret", "us_per_trial"]
_TOP_LEVEL = ("seeds", "datasets", "learners")


class ConfigError(ValueError):
    """A sweep configuration that cannot be run (the message names the entry)."""


# --- the configuration -------------------------------------------------------------

def load_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a sweep configuration from a ``.toml`` or ``.json`` file.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.toml`` or ``.json`` file.

    Returns
    -------
    config : dict
        As read; :func:`expand` checks it.
    """
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext == ".toml":
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10
            import tomli as tomllib
        try:
            with open(path, "rb") as f:
                return tomllib.load(f)
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path} is not valid TOML (UTF-8 text): {exc}") from None
        except RecursionError:  # the parser recurses per level of nesting
            raise ConfigError(_too_deep(path)) from None
    if ext == ".json":
        try:
            with open(path, encoding="utf-8") as f:
                return json.load(f)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path} is not valid JSON (UTF-8 text): {exc}") from None
        except RecursionError:
            raise ConfigError(_too_deep(path)) from None
    raise ConfigError(f"the configuration must be a .toml or .json file, got {path!r}")


#: At most this many fits in one sweep (checked before anything is made).
MAX_FITS = 10**6

#: At most this many levels of nesting in a configuration (a valid one has
#: about five: the file, learners, an entry, a grid axis, a list value).
MAX_DEPTH = 32


def _too_deep(where):
    return f"{where} is nested too deeply (at most {MAX_DEPTH} levels of tables and lists)"


def _depth(value):
    """The nesting depth of tables and lists in `value`, counted without
    recursion, up to MAX_DEPTH + 1."""
    deepest, stack = 0, [(value, 1)]
    while stack and deepest <= MAX_DEPTH:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _seeds(value):
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1 or value > MAX_FITS:
            raise ConfigError(f"seeds must be a count >= 1 (at most {MAX_FITS}) or a list "
                              f"of seeds, got {value}")
        return range(value)
    if isinstance(value, list) and value and len(value) <= MAX_FITS and all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value):
        return list(value)
    raise ConfigError(f"seeds must be a count >= 1 or a non-empty list of non-negative "
                      f"ints, got {value!r}")


def _load_dataset(name, spec):
    """The rows of data set `name` (a float64 array), or ConfigError naming it."""
    where = f"datasets.{name}"
    if not isinstance(spec, dict) or "kind" not in spec:
        raise ConfigError(f"{where} must be a table with a 'kind' "
                          f"({', '.join(DATASETS)})")
    kind = spec["kind"]
    if kind not in DATASETS:
        raise ConfigError(f"{where}.kind must be one of {list(DATASETS)}, got {kind!r}")
    function = DATASETS[kind]
    params = {k: v for k, v in spec.items() if k != "kind"}
    accepted = inspect.signature(function).parameters
    for key in params:
        if key not in accepted:
            raise ConfigError(f"{where}: {kind} has no parameter {key!r} (it takes "
                              f"{', '.join(accepted)})")
    params.setdefault("random_state", 0)
    try:
        out = function(**params)
    except ImportError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None
    X = out[0] if isinstance(out, tuple) else out
    return np.ascontiguousarray(X, dtype=np.float64)


def _grid(entry, i):
    """(class name, parameter names in order of appearance, ParameterGrid) of
    learner entry i."""
    where = f"learners[{i}]"
    if not isinstance(entry, dict) or "class" not in entry:
        raise ConfigError(f"{where} must be a table with a 'class' ({', '.join(LEARNERS)})")
    name = entry["class"]
    if name not in LEARNERS:
        raise ConfigError(f"{where}.class must be one of {list(LEARNERS)}, got {name!r}")
    accepted = inspect.signature(LEARNERS[name]).parameters
    params = {k: v for k, v in entry.items() if k != "class"}
    for key in params:
        if key == "random_state":
            raise ConfigError(f"{where}: give the learners' seeds with the top-level "
                              "'seeds', not random_state")
        if key not in accepted:
            raise ConfigError(f"{where}: {name} has no parameter {key!r} (it takes "
                              f"{', '.join(p for p in accepted if p != 'random_state')})")
    if "n_components" not in params:
        raise ConfigError(f"{where}: {name} needs n_components")
    axes = {k: (v if isinstance(v, list) else [v]) for k, v in params.items()}
    for key, values in axes.items():
        if not values:
            raise ConfigError(f"{where}.{key} is an empty list: nothing to run")
    # scikit-learn's grid, GridSearchCV's order; counted (len) without being made
    return name, list(axes), ParameterGrid(axes)


def expand(config: Mapping[str, Any]) -> tuple[list[str], dict[str, Any], list[dict[str, Any]]]:
    """The runs of a sweep configuration, checked.

    Every learner's hyper-parameters are checked on every data set (one
    trial on a copy) before anything runs, so a bad value is reported at
    once with the entry that holds it.

    Parameters
    ----------
    config : dict
        As read by :func:`load_config`.

    Returns
    -------
    param_names : list of str
        The parameters named in the configuration, in order of appearance.
    data : dict
        Data set name -> rows.
    runs : list of dict
        ``learner``, ``params``, ``seed`` (None for deterministic learners),
        ``dataset``, in table order.

    Raises
    ------
    ConfigError
        A ``ValueError`` naming the entry at fault.
    """
    if not isinstance(config, dict):
        raise ConfigError(f"the configuration must be a table, got {type(config).__name__}")
    if _depth(config) > MAX_DEPTH:  # (copies and checks of the values recurse)
        raise ConfigError(_too_deep("the configuration"))
    for key in config:
        if key not in _TOP_LEVEL:
            raise ConfigError(f"unknown top-level key {key!r} (expected {', '.join(_TOP_LEVEL)})")
    seeds = _seeds(config.get("seeds", 1))
    specs = config.get("datasets")
    if not isinstance(specs, dict) or not specs:
        raise ConfigError("datasets must be a non-empty table of named data sets, e.g. "
                          "[datasets.wk] kind = \"shifting_subspaces\"")
    entries = config.get("learners")
    if not isinstance(entries, list) or not entries:
        raise ConfigError("learners must be a non-empty list of tables ([[learners]])")
    grids = [_grid(entry, i) for i, entry in enumerate(entries)]
    fits = sum(len(grid) * (len(seeds) if "random_state" in
                            inspect.signature(LEARNERS[name]).parameters else 1)
               for name, _, grid in grids) * len(specs)
    if fits > MAX_FITS:
        raise ConfigError(f"the sweep has {fits} fits (learner entries x their grids x "
                          f"seeds x data sets), more than {MAX_FITS}")
    data = {name: _load_dataset(name, spec) for name, spec in specs.items()}

    param_names = []
    for _, keys, _ in grids:
        param_names += [key for key in keys if key not in param_names]
    runs = []
    for i, (name, _, grid) in enumerate(grids):
        cls = LEARNERS[name]
        randomised = "random_state" in inspect.signature(cls).parameters
        for params in grid:
            for dataset, X in data.items():
                _check_learner(cls, params, X, f"learners[{i}] ({name}, {params}) on "
                                               f"datasets.{dataset}")
                for seed in (seeds if randomised else [None]):
                    runs.append(dict(learner=name, params=params, seed=seed, dataset=dataset))
    return param_names, data, runs


def _check_learner(cls, params, X, where):
    try:
        cls(**copy.deepcopy(params)).fit(X[:1])
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _make(run):
    cls = LEARNERS[run["learner"]]
    kwargs = copy.deepcopy(run["params"])
    if run["seed"] is not None:
        kwargs["random_state"] = run["seed"]
    return cls(**kwargs)


# --- running ---------------------------------------------------------------------------

def _centered(learner):
    """Whether the learner learns a center: its comparator is then the best affine subspace."""
    return isinstance(learner, (learners.CenteredOnlinePCA, learners.FollowTheLeader)) \
        and bool(learner.centered)


def run_sweep(
        config: Mapping[str, Any], *, n_jobs: int | None = None, client: Any = None,
) -> tuple[list[str], list[dict[str, Any]]]:
    """Run a sweep; return its table.

    Parameters
    ----------
    config : dict
        A configuration (see the module docstring; :func:`load_config` reads
        one from a file).
    n_jobs : int or None, default=None
        Threads, as for :func:`onlinepca_fast.parallel.run_many`.
    client : dask.distributed.Client or None, default=None
        A Dask client, as for :func:`onlinepca_fast.parallel.run_many`.

    Returns
    -------
    columns : list of str
    rows : list of dict
        One per run, in the order of the configuration: learner entries,
        their grid (in :class:`~sklearn.model_selection.ParameterGrid`'s
        order), data sets, seeds.  Every column but ``us_per_trial`` is the
        same for every backend, bit for bit.
    """
    return _run(expand(config), n_jobs=n_jobs, client=client)


def _run(expanded, n_jobs, client, progress=None):
    """The table of the expanded runs.  Each fit's row is made as soon as it
    finishes and the fitted learner dropped: memory holds the rows and the
    running fits' learners, not every fitted learner (issue 22, item 10)."""
    from ..parallel import _execute

    param_names, data, runs = expanded
    comparators = {}

    def row_of(i, est, seconds):
        run = runs[i]
        X = data[run["dataset"]]
        k, centered = est.n_components, _centered(est)
        key = (run["dataset"], k, centered)
        if key not in comparators:
            comparators[key] = metrics.best_subspace_loss(X, k, centered=centered)
        best = comparators[key]
        expected = float(np.sum(est.expected_losses_))
        realized = float(np.sum(est.realized_losses_))
        actual = est.get_params()
        row = {"learner": run["learner"]}
        row.update({p: (actual[p] if p in actual else None) for p in param_names})
        row.update(seed=run["seed"], dataset=run["dataset"], n_features=X.shape[1],
                   n_trials=est.n_trials_, total_expected_loss=expected,
                   total_realized_loss=realized,
                   comparator="best affine subspace" if centered else "best subspace",
                   comparator_loss=best,
                   regret=expected - best, realized_regret=realized - best,
                   us_per_trial=1e6 * seconds / max(est.n_trials_, 1))
        return row

    rows = _execute(_Lazy(runs, _make), [data[run["dataset"]] for run in runs],
                    n_jobs=n_jobs, client=client, progress=progress, consume=row_of)
    return ["learner"] + param_names + _RESULT_COLUMNS, rows


class _Lazy(Sequence):
    """``[make(run) for run in runs]`` made item by item when read, so that the
    sweep never holds all its learners at once."""

    def __init__(self, runs, make):
        self._runs, self._make = runs, make

    def __len__(self):
        return len(self._runs)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._make(run) for run in self._runs[i]]
        return self._make(self._runs[i])


# --- output ----------------------------------------------------------------------------

def _cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)  # shortest round-trip form: the CSV holds the exact doubles
    if isinstance(value, (list, tuple, np.ndarray)):
        return json.dumps(np.asarray(value).tolist())
    return str(value)


@_fill_doc
def write_table(
        columns: Sequence[str], rows: Sequence[Mapping[str, Any]], path_base: str,
) -> list[str]:
    """Write ``path_base.csv`` (always) and ``path_base.parquet`` (if pyarrow is installed).

    The Parquet file's schema metadata ``onlinepca_fast.environment`` holds
    the package, NumPy, SciPy and Python versions and the BLAS in use, as JSON
    (:func:`onlinepca_fast.app.experiments.environment`).  Each file is
    written to a temporary file beside it and renamed onto its name when
    complete: if writing fails, an earlier file stays whole.

    Parameters
    ----------
    %(table)s
    path_base : str
        The files' path without the extension.

    Returns
    -------
    paths : list of str
        The files written.
    """
    paths = []
    for ext, write in _table_writers(columns, rows):
        with replacing(path_base + ext) as tmp:
            write(tmp)
        paths.append(path_base + ext)
    return paths


def _table_writers(columns, rows):
    """[(extension, write(path))] of the table's files: CSV, and Parquet if
    pyarrow is installed."""

    def write_csv(path):
        # the standard library's writer, not pandas, which is no dependency of
        # the sweep; _cell gives the shortest round-trip form of each double
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(columns)
            for row in rows:
                writer.writerow([_cell(row[c]) for c in columns])

    writers = [(".csv", write_csv)]
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return writers

    def write_parquet(path):
        arrays = {}
        for c in columns:
            values = [row[c] for row in rows]
            try:
                arrays[c] = pa.array(values)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
                # mixed types in one parameter column (e.g. share = None / "fixed"
                # is fine, but 1 / "auto" is not): written as text
                arrays[c] = pa.array([None if v is None else _cell(v) for v in values])
        meta = {"onlinepca_fast.environment": json.dumps(environment())}
        pq.write_table(pa.table(arrays).replace_schema_metadata(meta), path)

    return writers + [(".parquet", write_parquet)]


def _label(row, param_names, varying):
    parts = [f"{p}={row[p]:g}" if isinstance(row[p], float) else f"{p}={row[p]}"
             for p in param_names if p in varying and row[p] is not None]
    affine = " vs affine" if row["comparator"] == "best affine subspace" else ""
    return row["learner"] + (f" ({', '.join(parts)})" if parts else "") + affine


@_fill_doc
def plot_sweep(columns: Sequence[str], rows: Sequence[Mapping[str, Any]], path: str) -> str:
    """Draw the regret of every configuration, one panel per data set.

    The regret of the expected loss and that of the realized loss (mean and
    range over the seeds), written to `path` (PNG).  Needs matplotlib.

    Parameters
    ----------
    %(table)s
    path : str
        The PNG file to write.

    Returns
    -------
    path : str
        The file written.

    Raises
    ------
    ImportError
        If matplotlib is not installed (the message says how to install it).
    """
    try:  # the Agg canvas, no pyplot state (as onlinepca_fast.app.plotting)
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(_MISSING) from exc

    param_names = columns[1:columns.index("seed")]
    varying = {p for p in param_names if len({_cell(r[p]) for r in rows}) > 1}
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    labels = list(dict.fromkeys(_label(r, param_names, varying) for r in rows))
    fig = Figure(figsize=(4.0 + 3.5 * len(names), 1.5 + 0.35 * len(labels)),
                 layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(names), sharey=True, squeeze=False)[0]
    for ax, name in zip(axes, names):
        for j, label in enumerate(labels):
            group = [row for row in rows
                     if row["dataset"] == name and _label(row, param_names, varying) == label]
            if not group:
                continue
            expected = float(np.mean([row["regret"] for row in group]))
            realized = [row["realized_regret"] for row in group]
            mean = float(np.mean(realized))
            spread = [[max(mean - min(realized), 0.0)], [max(max(realized) - mean, 0.0)]]
            ax.errorbar([mean], [j], xerr=spread, fmt="o", mfc="none", color="tab:orange",
                        capsize=3, label="realized: mean and range over seeds"
                        if j == 0 else None)
            ax.plot([expected], [j], "o", color="tab:blue",
                    label="expected" if j == 0 else None)
        ax.axvline(0.0, color="grey", linewidth=0.8)
        ax.set_title(name)
        ax.set_xlabel("regret (total loss - comparator's)")
        ax.set_yticks(range(len(labels)), labels)
    axes[0].legend(loc="best", fontsize="small")
    axes[0].invert_yaxis()
    _save(fig, path, dpi=110)
    return path


@_fill_doc
def format_summary(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> str:
    """Mean regret over seeds per configuration and data set, as a text table.

    Parameters
    ----------
    %(table)s

    Returns
    -------
    table : str
        One line per configuration and data set.
    """
    param_names = columns[1:columns.index("seed")]
    varying = {p for p in param_names if len({_cell(r[p]) for r in rows}) > 1}
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in rows:
        groups.setdefault((_label(r, param_names, varying), r["dataset"]), []).append(r)
    width = max(len(label) for label, _ in groups)
    # (formatted here: pandas, whose groupby and to_string could do it, is no
    # dependency of the sweep)
    lines = [f"{'configuration':<{width}}  {'dataset':<12} {'seeds':>5} {'mean regret':>12} "
             f"{'us/trial':>9}"]
    for (label, dataset), rs in groups.items():
        regret = float(np.mean([r["regret"] for r in rs]))
        us = float(np.mean([r["us_per_trial"] for r in rs]))
        lines.append(f"{label:<{width}}  {dataset:<12} {len(rs):>5} {regret:>12.4f} "
                     f"{us:>9.1f}")
    return "\n".join(lines)
