"""An experiment's result as the command line's table, CSV and JSON files
(re-exported by :mod:`onlinepca_fast.app.experiments`, where the result dict is
described)."""

from __future__ import annotations

import csv
import json
import os
from typing import Any

import numpy as np

from .._docs import doc_filler
from .._typing import Result
from ._output import replacing

__all__ = ["format_table", "save_csv", "save_json", "environment"]

# the parameters the writers share
_fill_doc = doc_filler({"result_path": """\
result : dict
    As returned by the experiment functions.
path : str or path-like
    File to write (through a temporary file beside it, renamed onto
    `path` when complete: if writing fails, an earlier file stays whole)."""})


def environment() -> dict[str, Any]:
    """The software that computed a result: versions and the BLAS in use.

    Returns
    -------
    env : dict
        ``onlinepca_fast``, ``numpy``, ``scipy`` and ``python`` versions, and
        ``blas``: the BLAS libraries loaded in this process as threadpoolctl
        reports them (``internal_api``, ``version``, ``num_threads``,
        ``threading_layer``) if threadpoolctl is installed, else the BLAS
        NumPy was built with (its ``show_config``), else None.
    """
    import platform

    import scipy

    from .._version import __version__

    return {"onlinepca_fast": __version__, "numpy": np.__version__, "scipy": scipy.__version__,
            "python": platform.python_version(), "blas": _blas()}


def _blas():
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        pass
    else:
        keep = ("internal_api", "version", "num_threads", "threading_layer", "prefix")
        found = [{k: info.get(k) for k in keep} for info in threadpool_info()
                 if info.get("user_api") == "blas"]
        if found:
            return found
    try:  # NumPy >= 1.26: the build's configuration as a dict
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return [{"internal_api": blas.get("name"), "version": blas.get("version"),
                 "source": "numpy build configuration"}]
    except Exception:  # older NumPy, or another layout: unknown
        return None


def format_table(result: Result) -> str:
    """The totals of an experiment result as a text table.

    Parameters
    ----------
    result : dict
        As returned by the experiment functions.

    Returns
    -------
    table : str
    """
    S = len(result["seeds"])
    rows = [(c["label"], result["totals"][key]) for key, c in result["curves"].items()]
    width = max(len("learner"), *(len(label) for label, _ in rows))
    fmt = (lambda v: f"{v:>10.2f}" if v is not None else f"{'-':>10}")
    what = "total loss" if result["quantity"] == "cumulative loss" else "regret"
    # (formatted here: pandas, whose to_string could lay it out, is no
    # dependency of the command line)
    lines = [result["title"],
             f"{S} seed{'s' if S != 1 else ''} of the learners' randomisation, "
             f"{result['n_trials']} trials ({result['reference']})",
             "",
             f"{'':<{width}}  {'expected':>10}  {'realized ' + what:^21}",
             f"{'learner':<{width}}  {what:>10}  {'mean':>10} {'std':>10}"]
    lines += [f"{label:<{width}}  {fmt(t['expected_mean'])}  "
              f"{fmt(t['realized_mean'])} {fmt(t['realized_std'])}" for label, t in rows]
    lines.append("")
    lines.append("expected = the loss of the learner's parameter W: it depends on the data "
                 "only, the same for every seed;")
    lines.append("realized = the loss of the projection drawn at random (std over seeds as "
                 "in WK Fig. 4).")
    lines += result["notes"]
    return "\n".join(lines)


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


@_fill_doc
def save_json(result: Result, path: str | os.PathLike[str], **extra: Any) -> None:
    """Write an experiment's parameters, totals and notes (no curves) as JSON.

    Parameters
    ----------
    %(result_path)s
    **extra
        More top-level entries (e.g. the names of the other files written).

    Notes
    -----
    The file also records the ``environment`` (:func:`environment`): package,
    NumPy, SciPy and Python versions and the BLAS in use.
    """
    doc = {key: result[key] for key in ("experiment", "title", "reference", "params", "seeds",
                                        "n_trials", "boundaries", "segment_labels",
                                        "quantity", "totals", "notes", "summary")}
    doc["labels"] = {key: c["label"] for key, c in result["curves"].items()}
    doc["environment"] = environment()
    doc.update(extra)
    with replacing(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        json.dump(_jsonable(doc), f, indent=2)
        f.write("\n")


@_fill_doc
def save_csv(result: Result, path: str | os.PathLike[str]) -> None:
    """Write the curves, one row per trial, as CSV.

    Columns: ``trial`` (1-based), then for each curve ``KEY`` (the expected
    curve averaged over the seeds: cumulative expected loss, or regret) and,
    for learners, ``KEY_realized_mean`` and ``KEY_realized_std``.

    Parameters
    ----------
    %(result_path)s
    """
    # The standard library's csv writer, not pandas: pandas is no dependency of
    # the command line (nor of the experiments), and a frame would only relay
    # these columns with the same %.10g format.
    columns, names = [np.arange(1, result["n_trials"] + 1)], ["trial"]
    for key, c in result["curves"].items():
        columns.append(c["expected"])
        names.append(key)
        if c["kind"] == "learner":
            columns += [c["realized_mean"], c["realized_std"]]
            names += [f"{key}_realized_mean", f"{key}_realized_std"]
    with replacing(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(names)
        for row in zip(*columns):
            writer.writerow([int(row[0])] + [f"{v:.10g}" for v in row[1:]])
