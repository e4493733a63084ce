"""The documentation as a reader meets it (issue 38, item 6).

``tools/check_docs.py`` runs on every built site (``tools/build_docs.sh``,
CI): here it is run on small pages showing each problem it must catch, and
the pieces of the site that cause them are checked at their source: the
summary lines of every object of the API page (as ``docs/conf.py`` makes
them), and the legend of the auto-rate figure."""

import importlib
import importlib.util
import inspect
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_docs = _load(ROOT / "tools" / "check_docs.py", "check_docs")

_TABLE = """<table class="autosummary longtable table autosummary"><tbody>
<tr class="row-odd"><td><p><a href="x"><code><span class="pre">{name}</span></code></a></p></td>
<td><p>{summary}</p></td></tr></tbody></table>"""


def _site(tmp_path, pages):
    for name, text in pages.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"<html><body>{text}</body></html>", encoding="utf-8")
    return tmp_path


def test_the_checker_finds_each_problem(tmp_path):
    site = _site(tmp_path, {
        "api.html": _TABLE.format(name="CappedHedge", summary="Capped Hedge (WK Alg.")
        + _TABLE.format(name="regret_bound", summary="WK Thm.")
        + _TABLE.format(name="OnlinePCA", summary="Uncentered online PCA (WK Alg. 5)."),
        "auto_gallery/plot_x.html": "<pre>&lt;matplotlib.legend.Legend object at 0x7f00ab&gt;</pre>",
        "auto_performance/plot_y.html": "<p>fine</p>",
        "install.html": "<p><strong>Documentation.</strong> This README and the pages</p>",
    })
    found = check_docs.problems(site)
    assert len(found) == 4
    assert any("'Capped Hedge (WK Alg.'" in line for line in found)
    assert any("'WK Thm.'" in line for line in found)
    assert any(line.startswith("auto_gallery/plot_x.html: the repr") for line in found)
    assert any(line.startswith("install.html: speaks of 'this README'") for line in found)
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "check_docs.py"), str(site)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1 and proc.stdout.count("\n") == 4


def test_the_checker_passes_a_clean_site(tmp_path):
    site = _site(tmp_path, {
        "api.html": _TABLE.format(name="OnlinePCA", summary="Uncentered online PCA (WK Alg. 5)."),
        "auto_gallery/plot_x.html": "<pre>OnlinePCA: auto 1.05</pre>",
    })
    assert check_docs.problems(site) == []
    assert check_docs.main([str(site)]) == 0


def _api_objects():
    """Every object the API page lists, with its name."""
    module = None
    for line in (ROOT / "docs" / "api.rst").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\.\. currentmodule:: (\S+)", line)
        if m:
            module = m.group(1)
            continue
        m = re.match(r"   ([A-Za-z_][\w.]*)$", line)
        if m and module:
            parts = m.group(1).split(".")
            obj = importlib.import_module(module)
            for i, part in enumerate(parts):
                if not hasattr(obj, part):  # a submodule (parallel.run_many)
                    importlib.import_module(f"{obj.__name__}.{part}")
                obj = getattr(obj, part)
            yield f"{module}.{m.group(1)}", obj


def test_every_api_summary_line_is_a_whole_sentence():
    """Issue 38, item 6: 25 of the API page's summary lines were cut mid-
    citation ("... (WK Alg.").  docs/conf.py extends such a cut to the
    sentence's end; each summary it makes passes the site's check."""
    pytest.importorskip("sphinx")  # the docs extra; CI's site build checks the pages too
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from sphinx.ext import autosummary

    conf = _load(ROOT / "docs" / "conf.py", "docs_conf")
    summary = conf._balanced_summary(autosummary.extract_summary)
    settings = get_default_settings(Parser)
    checked, was_cut = 0, 0
    for name, obj in _api_objects():
        doc = (inspect.getdoc(obj) or "").splitlines()
        line = summary(doc, settings)
        assert line and not check_docs.cut_summary(line), (name, line)
        was_cut += check_docs.cut_summary(autosummary.extract_summary(doc, settings))
        checked += 1
    assert checked > 80 and was_cut >= 25


def test_the_auto_rate_figure_names_every_mark_in_its_legend(monkeypatch):
    """Issue 38, item 6: the big squares (eta = 1) were not in the legend."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import onlinepca_fast as opf

    class Quick:  # the script's fits on the first 300 rows only (the labels are the point)
        def __init__(self, cls):
            self.cls, self.__name__ = cls, cls.__name__

        def __call__(self, *args, **kwargs):
            learner = self.cls(*args, **kwargs)
            fit = learner.fit
            learner.__dict__["fit"] = lambda X: fit(X[:300])
            return learner

    for name in ("OnlinePCA", "OnlineAdaptivePCA"):
        monkeypatch.setattr(opf, name, Quick(getattr(opf, name)))
    namespace = {}
    exec(compile((ROOT / "docs" / "gallery" / "plot_auto_rate.py").read_text(encoding="utf-8"),
                 "plot_auto_rate.py", "exec"), namespace)
    ax = namespace["ax"]
    labelled = {line.get_label() for line in ax.get_lines()
                if not line.get_label().startswith("_")}
    shown = {text.get_text() for text in ax.get_legend().get_texts()}
    assert {"OnlinePCA, eta = 1", "OnlineAdaptivePCA, eta = 1"} <= shown
    squares = [line for line in ax.get_lines() if line.get_marker() == "s"]
    assert len(squares) == 2 and all(line.get_label() in shown for line in squares)
    assert labelled == shown
    plt.close("all")
