"""Cumulative loss and regret curves (WK Figs. 4 and 6, YL Fig. 1, KW Fig. 2).

matplotlib is optional: it is imported inside the functions, and a missing
matplotlib raises ``ImportError`` saying how to install it
(``pip install "onlinepca_fast[plot]"``).  Figures are drawn on the Agg
canvas (no display needed) without touching pyplot's global state, so
these functions work the same in scripts, on servers and in notebooks; pass
``ax`` to draw into an existing figure instead.

References
----------
WK: Warmuth & Kuzmin, JMLR 9 (2008); YL: Yuan & Lamperski, ICML 2019 (the
full titles are in the README's references).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._docs import doc_filler
from .._typing import ArrayLike, Result
from ._output import replacing

__all__ = ["matplotlib_available", "plot_cumulative_loss", "plot_regret", "plot_result"]

# what the plotting functions' docstrings share, written once
_fill_doc = doc_filler({
    "segments_ax_title": """\
boundaries : sequence of int, default=()
    0-based first trial of each segment after the first, marked by
    dotted vertical lines.
segment_labels : sequence of str, optional
    One label per segment, written above the plot.
ax : matplotlib Axes, optional
    Draw here instead of in a new figure.
title : str, optional
    Title of the axes.""",
    "path": """\
path : str or path-like, optional
    Save the figure there (the format follows the extension, e.g. PNG;
    through a temporary file beside it, renamed when complete: if
    saving fails, an earlier file stays whole).""",
    "styles": """\
styles : dict of str to dict, optional
    Keyword arguments of ``Axes.plot`` per label (``color``,
    ``linestyle``, ...).""",
    "figure": """\
Returns
-------
figure : matplotlib.figure.Figure

Raises
------
ImportError
    If matplotlib is not installed.""",
})

_MISSING = ('plotting needs matplotlib, which is not installed: '
            'pip install "onlinepca_fast[plot]" (or pip install matplotlib)')


def matplotlib_available() -> bool:
    """Whether matplotlib can be imported (the plotting functions need it).

    Returns
    -------
    available : bool
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _axes(ax):
    """A new figure on the Agg canvas with one axes, or ``ax`` and its figure."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(_MISSING) from exc
    if ax is not None:
        return ax.figure, ax
    fig = Figure(figsize=(7.5, 4.8), layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def _as_curve(values, cumulative):
    """(mean, std or None) of 1-D or (runs, T) values, cumulated if asked."""
    a = np.asarray(values, dtype=np.float64)
    if a.ndim not in (1, 2) or a.shape[-1] == 0:
        raise ValueError(f"curves must be 1-D (T,) or 2-D (runs, T) non-empty arrays, "
                         f"got shape {a.shape}")
    if cumulative:
        a = np.cumsum(a, axis=-1)
    if a.ndim == 1:
        return a, None
    return a.mean(axis=0), (a.std(axis=0) if a.shape[0] > 1 else None)


def _draw(ax, series, boundaries, segment_labels, ylabel, title):
    """series: list of (label, mean, std or None, style dict)."""
    T = max(len(mean) for _, mean, _, _ in series)
    for label, mean, std, style in series:
        t = np.arange(1, len(mean) + 1)
        line, = ax.plot(t, mean, label=label, linewidth=1.6, **style)
        if std is not None and np.any(std > 0):
            ax.fill_between(t, mean - std, mean + std, color=line.get_color(), alpha=0.2,
                            linewidth=0)
    edges = [0] + [int(b) for b in boundaries] + [T]
    for b in edges[1:-1]:
        ax.axvline(b + 0.5, color="0.5", linestyle=":", linewidth=1)
    if segment_labels is not None and len(segment_labels) == len(edges) - 1 \
            and len(segment_labels) > 1:
        for (lo, hi), text in zip(zip(edges[:-1], edges[1:]), segment_labels):
            ax.annotate(str(text), xy=((lo + hi) / 2, 1.0), xycoords=("data", "axes fraction"),
                        xytext=(0, 2), textcoords="offset points", ha="center",
                        va="bottom", fontsize=8, color="0.3")
    ax.set_xlim(0, T)
    ax.set_xlabel("trial")
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, pad=14 if segment_labels else 6, fontsize="medium")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=8, framealpha=0.9)


def _finish(fig, path):
    if path is not None:
        _save(fig, path, dpi=120)
    return fig


def _save(fig: Any, path: Any, dpi: float) -> None:
    """``fig.savefig(path)`` through a temporary file renamed onto `path`: an
    earlier file of that name stays whole if saving fails.  The format
    follows `path`'s extension (not the temporary file's); a file object is
    written directly."""
    if not isinstance(path, (str, os.PathLike)):
        fig.savefig(path, dpi=dpi)
        return
    import matplotlib

    fmt = os.path.splitext(os.fspath(path))[1][1:] or matplotlib.rcParams["savefig.format"]
    with replacing(path) as tmp:
        fig.savefig(tmp, dpi=dpi, format=fmt)


def _series(curves, cumulative, styles):
    series = []
    for label, values in curves.items():
        mean, std = _as_curve(values, cumulative)
        series.append((str(label), mean, std, dict((styles or {}).get(label, {}))))
    if not series:
        raise ValueError("curves must not be empty")
    return series


@_fill_doc
def plot_cumulative_loss(losses: Mapping[str, ArrayLike], boundaries: Sequence[int] = (),
                         segment_labels: Sequence[str] | None = None, ax: Any = None,
                         title: str | None = None, path: str | os.PathLike[str] | None = None,
                         styles: Mapping[str, Mapping[str, Any]] | None = None) -> Any:
    """Cumulative loss against the trial number, as in WK Fig. 4 and YL Fig. 1.

    Parameters
    ----------
    losses : dict of str to array_like
        Per-trial losses by label: shape ``(T,)``, or ``(runs, T)`` to plot
        the mean over the runs with a band of one standard deviation (the
        error bars of WK Fig. 4), e.g. the ``expected_losses_`` or
        ``realized_losses_`` of learners fitted with different seeds.
    %(segments_ax_title)s
    %(path)s
    %(styles)s

    %(figure)s

    References
    ----------
    WK Section 8, Figure 4; YL Section 6, Figures 1 and 2.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import OnlinePCA
    >>> from onlinepca_fast.app import plotting
    >>> from onlinepca_fast.datasets import shifting_subspaces
    >>> X, _ = shifting_subspaces(10, 2, (100, 100), random_state=0)
    >>> runs = [OnlinePCA(2, random_state=s).fit(X).realized_losses_ for s in range(3)]
    >>> fig = plotting.plot_cumulative_loss({"OnlinePCA": runs},
    ...                                     boundaries=[100])  # doctest: +SKIP
    """
    fig, ax = _axes(ax)
    _draw(ax, _series(losses, True, styles), boundaries, segment_labels, "cumulative loss",
          title)
    return _finish(fig, path)


@_fill_doc
def plot_regret(
        regrets: Mapping[str, ArrayLike], boundaries: Sequence[int] = (),
        segment_labels: Sequence[str] | None = None, ax: Any = None, title: str | None = None,
        path: str | os.PathLike[str] | None = None,
        styles: Mapping[str, Mapping[str, Any]] | None = None, ylabel: str = "regret",
) -> Any:
    """Regret curves against the trial number, as in WK Fig. 6.

    Parameters
    ----------
    regrets : dict of str to array_like
        Cumulative regret curves by label, shape ``(T,)`` or ``(runs, T)``
        (mean and a one-standard-deviation band), e.g. from
        :func:`onlinepca_fast.metrics.partition_regret` with
        ``cumulative=True``.
    %(segments_ax_title)s
    %(path)s
    %(styles)s
    ylabel : str, default="regret"
        Label of the y axis.

    %(figure)s

    References
    ----------
    WK Section 8, eq. (20) and Figure 6.
    """
    fig, ax = _axes(ax)
    _draw(ax, _series(regrets, False, styles), boundaries, segment_labels, ylabel, title)
    return _finish(fig, path)


@_fill_doc
def plot_result(result: Result, ax: Any = None, path: str | os.PathLike[str] | None = None,
                title: str | None = None) -> Any:
    """Plot the result of an experiment of :mod:`onlinepca_fast.app.experiments`.

    Each learner's curve is its expected cumulative loss (or regret)
    averaged over the seeds, with a band of one standard deviation of the
    realized curve over the seeds (WK Fig. 4's error bars); comparators
    (best fixed subspace, best partition) are dashed; segment boundaries
    are dotted and labelled.

    Parameters
    ----------
    result : dict
        As returned by e.g. :func:`onlinepca_fast.app.experiments.wk_fig4`.
    ax : matplotlib Axes, optional
        Draw into these axes (default: a new figure).
    %(path)s
    title : str, optional
        Defaults to the result's title.

    %(figure)s

    References
    ----------
    WK Figures 4 and 6, YL Figure 1, KW Figure 2.
    """
    fig, ax = _axes(ax)
    series = [(c["label"], np.asarray(c["expected"]),
               None if c.get("realized_std") is None else np.asarray(c["realized_std"]),
               dict(c.get("style") or {}))
              for c in result["curves"].values()]
    ylabel = result["quantity"]
    _draw(ax, series, result.get("boundaries", ()), result.get("segment_labels"), ylabel,
          result["title"] if title is None else title)
    return _finish(fig, path)
