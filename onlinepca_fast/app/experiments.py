"""The papers' experiments as plain functions, and a small benchmark.

Every experiment builds its stream, runs its learners once per seed of
their internal randomisation (the data stay fixed, as in WK Fig. 4), and
returns a plain ``dict``:

``"experiment"``, ``"title"``, ``"reference"``, ``"params"``
    What was run, with every parameter (JSON-ready).
``"quantity"``
    What the curves measure: ``"cumulative loss"`` or a regret.
``"n_trials"``, ``"boundaries"``, ``"segment_labels"``
    Trial count, the 0-based first trial of each segment after the first,
    and a label per segment (subspace index, digit class).
``"curves"``
    ``key -> dict(label, kind, expected, expected_std, realized_mean,
    realized_std, style)``: per-trial curves of shape ``(T,)``.  For a
    learner (``kind="learner"``) ``expected`` is the curve of its expected
    losses averaged over the seeds and ``realized_*`` the mean and standard
    deviation over the seeds of the curve of its realized losses (the error
    bars of WK Fig. 4).  A comparator (``kind="comparator"``, e.g. the best
    fixed subspace in hindsight) has ``expected`` only.
``"totals"``
    ``key -> dict(expected_mean, expected_std, realized_mean, realized_std)``:
    the last value of each curve (``None`` where not applicable).
``"losses"``
    ``key -> dict(expected, realized)``: the raw per-trial losses of every
    learner, arrays of shape ``(n_seeds, T)``.
``"notes"``, ``"summary"``
    Lines for the printed table, and the numbers behind them.

A learner's expected loss depends on the data only (its parameter ``W`` is
updated deterministically; the seed only picks the projection it is charged
for), so on a fixed stream its standard deviation over seeds is 0; the
realized loss is what varies.

:func:`format_table`, :func:`save_csv` and :func:`save_json` turn a result
into the command line's table and files; :mod:`onlinepca_fast.app.plotting`
draws it.

References
----------
WK: M. K. Warmuth and D. Kuzmin, "Randomized online PCA algorithms with
regret bounds that are logarithmic in the dimension", JMLR 9 (2008).
KW: D. Kuzmin and M. K. Warmuth, "Online kernel PCA with entropic matrix
updates", ICML 2007.
YL: J. Yuan and A. Lamperski, "Online adaptive principal component analysis
and its extensions", ICML 2019.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np

from .. import datasets, metrics
from .._docs import doc_filler
from .._guard import reporting
from .._typing import Result
from .._validation import ALPHA_VALUE, ETA, N_COMPONENTS, as_int, check_scalar
from ..learners import (
    CenteredOnlinePCA,
    FollowTheLeader,
    OnlineAdaptivePCA,
    OnlineKernelPCA,
    OnlinePCA,
)
from .results import environment, format_table, save_csv, save_json

__all__ = [
    "wk_fig4",
    "wk_fig6",
    "yl_fig1",
    "kw_cone",
    "digits",
    "EXPERIMENTS",
    "format_table",
    "save_csv",
    "save_json",
    "environment",
]


# the parameters and the result the experiments share, written once in their docstrings
_fill_doc = doc_filler({
    "n_and_k": """\
n_features : int, default=20
    Dimension ``n``.
n_components : int, default=2
    ``k``, also the rank of each segment's covariance.""",
    "shifts": """\
n_segments : int, default=3
    Number of segments, each with its own subspace.
eta : float, default=1.0
    Learning rate of the randomized learners.
alpha : float, default=1e-5
    Fixed-share rate of ``OnlineAdaptivePCA`` (YL Sec. 6.1).""",
    "runs": """\
seeds : int or sequence of int, default=10
    The learners' seeds (an int ``S`` means ``0..S-1``).
data_seed : int, default=0
    Seed of the stream, fixed across the learners' seeds.
progress : callable or None, default=None
    Called as ``progress(trials_done, trials_total)`` while the learners
    run (after each compiled chunk of trials, about every 20 ms), the
    trials of every learner and seed counted.""",
    "cumulative_result": """\
Returns
-------
result : dict
    See the module docstring; the quantity is the cumulative loss.""",
})


# --- validation ---------------------------------------------------------------

def _seeds(seeds: Any) -> list[int]:
    """A count of seeds (range(seeds)) or a non-empty sequence of seeds."""
    if isinstance(seeds, numbers.Integral) and not isinstance(seeds, (bool, np.bool_)):
        return list(range(as_int(seeds, "seeds", 1, 10**6)))
    try:
        out = [as_int(s, "seeds", 0, 2**63 - 1) for s in seeds]
    except TypeError:
        raise TypeError(f"seeds must be a positive int (a count) or a sequence of "
                        f"non-negative ints, got {seeds!r}") from None
    if not out:
        raise ValueError("seeds must not be empty")
    return out


def _alpha(value):
    return check_scalar(value, "alpha", ALPHA_VALUE)


def _rate(value):
    """A learner's eta: "auto" or a number."""
    return ETA.check(value, "eta")


def _fmt(eta):
    return eta if isinstance(eta, str) else f"{eta:g}"


def _data_seed(value):
    return as_int(value, "data_seed", 0, 2**63 - 1)


def _sizes(n_features, n_components):
    n = as_int(n_features, "n_features", 2, 10**5)
    k = check_scalar(n_components, "n_components", N_COMPONENTS, {"n": n})
    return n, k


# --- the common machinery -----------------------------------------------------

# WK Fig. 4's styles: Alg. 5 blue solid, Alg. 6 black dash-dot, batch PCA red
# dashed, FL green dotted.
_STYLES = {
    "online_pca": dict(color="tab:blue", linestyle="-"),
    "uncentered_alg6": dict(color="black", linestyle="-."),
    "adaptive_pca": dict(color="tab:purple", linestyle="-"),
    "ftl": dict(color="tab:green", linestyle=":"),
    "best_fixed": dict(color="tab:red", linestyle="--"),
    "best_partition": dict(color="tab:orange", linestyle="--"),
    "share_uniform": dict(color="tab:cyan", linestyle="-"),
    "share_past": dict(color="tab:purple", linestyle="-"),
    "kernel_pca": dict(color="tab:blue", linestyle="-"),
    "offline_kernel_pca": dict(color="tab:red", linestyle="--"),
}


def _static_vs_adaptive(k, eta, alpha):
    """The learners of YL Sec. 6: OnlinePCA, OnlineAdaptivePCA and FTL."""
    return [
        ("online_pca", "OnlinePCA (WK Alg. 5)",
         lambda seed: OnlinePCA(k, eta=eta, random_state=seed)),
        ("adaptive_pca", f"OnlineAdaptivePCA (YL Alg. 4, alpha={alpha:g})",
         lambda seed: OnlineAdaptivePCA(k, eta=eta, alpha=alpha, random_state=seed)),
        ("ftl", "Follow the Leader", lambda seed: FollowTheLeader(k)),
    ]


def _run_learners(name, X, learners, seeds, progress):
    """Fit every learner on X once per seed; per-trial losses of shape (S, T).

    ``learners`` is a list of ``(key, label, make)`` where ``make(seed)``
    returns a fresh learner; a learner without internal randomisation
    (``random_state`` is None, e.g. Follow the Leader) runs once and its
    losses are repeated.  ``progress(trials_done, trials_total)`` (if not
    None) is called as the compiled loops finish chunks of trials (about
    every 20 ms), counting the trials of every learner and seed.
    """
    S, T = len(seeds), X.shape[0]
    losses = {key: {"expected": np.empty((S, T)), "realized": np.empty((S, T))}
              for key, _, _ in learners}
    runs = sum(S if _randomized(make(seeds[0])) else 1 for _, _, make in learners)
    done = [0]

    def advance(trials):
        done[0] += trials
        progress(done[0], runs * T)

    with reporting(advance if progress is not None else None):
        for i, seed in enumerate(seeds):
            for key, _, make in learners:
                learner = make(seed)
                if i > 0 and not _randomized(learner):
                    for which in ("expected", "realized"):
                        losses[key][which][i] = losses[key][which][0]
                    continue
                learner.fit(X)
                losses[key]["expected"][i] = learner.expected_losses_
                losses[key]["realized"][i] = learner.realized_losses_
    return losses


def _learner_curves(name, X, learners, seeds, progress, offset=None):
    """The per-trial losses of :func:`_run_learners` and each learner's curves."""
    losses = _run_learners(name, X, learners, seeds, progress)
    curves = {key: _learner_curve(label, key, losses[key], offset) for key, label, _ in learners}
    return losses, curves


def _randomized(learner):
    return getattr(learner, "random_state", None) is not None


def _comparator_curve(X, k, boundaries=(), centered=False):
    """Per-trial cumulative loss of the best subspace per segment, in hindsight.

    With no boundaries this is the best fixed subspace (batch PCA); the curve
    is ``cumsum(0) - partition_regret(0, ...)``, so it is the comparator of
    :func:`onlinepca_fast.metrics.partition_regret` exactly.
    """
    return -metrics.partition_regret(np.zeros(X.shape[0]), X, k, list(boundaries),
                                     centered=centered, cumulative=True)


def _learner_curve(label, key, per_trial, offset=None):
    """Mean/std over seeds of the cumulative curves (minus ``offset``)."""
    curves = {}
    for which in ("expected", "realized"):
        c = np.cumsum(per_trial[which], axis=1)
        if offset is not None:
            c = c - offset
        curves[which] = c
    return dict(label=label, kind="learner",
                expected=curves["expected"].mean(axis=0),
                expected_std=curves["expected"].std(axis=0),
                realized_mean=curves["realized"].mean(axis=0),
                realized_std=curves["realized"].std(axis=0),
                style=_STYLES.get(key, {}))


def _comparator(label, key, curve):
    return dict(label=label, kind="comparator", expected=np.asarray(curve, dtype=float),
                expected_std=None, realized_mean=None, realized_std=None,
                style=_STYLES.get(key, {}))


def _best_fixed(X, k):
    return _comparator("best fixed subspace in hindsight", "best_fixed", _comparator_curve(X, k))


def _last(curve):
    return None if curve is None else float(curve[-1])


def _totals(curves):
    return {key: dict(expected_mean=_last(c["expected"]), expected_std=_last(c["expected_std"]),
                      realized_mean=_last(c["realized_mean"]),
                      realized_std=_last(c["realized_std"]))
            for key, c in curves.items()}


def _result(experiment, title, reference, params, seeds, T, boundaries, segment_labels,
            quantity, curves, losses, notes=(), summary=None):
    return dict(experiment=experiment, title=title, reference=reference, params=params,
                seeds=list(seeds), n_trials=int(T), boundaries=[int(b) for b in boundaries],
                segment_labels=[str(s) for s in segment_labels], quantity=quantity,
                curves=curves, totals=_totals(curves), losses=losses, notes=list(notes),
                summary=dict(summary or {}))


def _boundaries(lengths):
    return np.cumsum(lengths)[:-1].tolist()


def _shifting_args(n_features, n_components, segment_length, n_segments, eta, alpha, seeds,
                   data_seed):
    """The arguments of the experiments on WK Fig. 3's stream (wk_fig4, yl_fig1), checked."""
    n, k = _sizes(n_features, n_components)
    m = as_int(segment_length, "segment_length", 1, 10**7)
    s = as_int(n_segments, "n_segments", 1, 10**4)
    return n, k, m, s, _rate(eta), _alpha(alpha), _seeds(seeds), _data_seed(data_seed)


def _shifting_stream(n, k, m, s, data_seed):
    """WK Fig. 3's stream of s segments of m points, the segments' lengths and a
    label per segment."""
    lengths = [m] * s
    X, labels = datasets.shifting_subspaces(n, k, lengths, random_state=data_seed)
    return X, lengths, [f"subspace {labels[i]}" for i in np.cumsum([0] + lengths[:-1])]


# --- the experiments ------------------------------------------------------------

@_fill_doc
def wk_fig4(n_features: int = 20, n_components: int = 2, segment_length: int = 500,
            n_segments: int = 3, eta: float = 1.0, alpha: float = 1e-5,
            seeds: int | Sequence[int] = 10, data_seed: int = 0,
            progress: Callable[[int, int], object] | None = None) -> Result:
    """Online PCA on a stream that shifts between subspaces (WK Sec. 8, Fig. 4).

    The stream (:func:`onlinepca_fast.datasets.shifting_subspaces`, WK
    Fig. 3) has ``n_segments`` segments of ``segment_length`` points from
    zero-mean Gaussians with random rank-``n_components`` covariances in
    ``R^n``, norms capped at one.  On it run: uncentered online PCA (WK
    Algorithm 5), the uncentered version of WK Algorithm 6
    (``CenteredOnlinePCA(centered=False)``), online adaptive PCA (YL
    Algorithm 4, fixed share ``alpha``) and Follow the Leader (WK Sec. 7),
    compared with the best fixed subspace in hindsight (batch uncentered
    PCA).  WK Fig. 4 uses ``n = 20``, ``k = 2``, ``eta = 1`` and three
    segments of 500 (the defaults here) and averages 50 runs.

    ``OnlinePCA`` keeps the exact log-weights (see its Notes): after a long
    segment the weight of the new subspace is astronomically small, so it
    takes about as long to move as the previous segment lasted; the fixed
    share of ``OnlineAdaptivePCA`` bounds that time (YL Fig. 1 shows the
    same contrast).

    Parameters
    ----------
    %(n_and_k)s
    segment_length : int, default=500
        Points per segment (WK: 500).
    %(shifts)s
    %(runs)s

    %(cumulative_result)s

    References
    ----------
    WK Section 8, Figures 3 and 4; Algorithms 5 and 6; Theorem 6 (bound in
    ``result["summary"]``).  YL Algorithm 4.

    Examples
    --------
    >>> from onlinepca_fast.app.experiments import wk_fig4
    >>> r = wk_fig4(segment_length=100, seeds=2)
    >>> bool(r["totals"]["online_pca"]["expected_mean"]
    ...      < r["totals"]["best_fixed"]["expected_mean"])
    True
    """
    n, k, m, s, eta, alpha, seeds, data_seed = _shifting_args(
        n_features, n_components, segment_length, n_segments, eta, alpha, seeds, data_seed)
    X, lengths, segment_labels = _shifting_stream(n, k, m, s, data_seed)
    learners = [
        ("online_pca", "OnlinePCA (WK Alg. 5)",
         lambda seed: OnlinePCA(k, eta=eta, random_state=seed)),
        ("uncentered_alg6", "uncentered WK Alg. 6",
         lambda seed: CenteredOnlinePCA(k, eta=eta, centered=False, random_state=seed)),
        ("adaptive_pca", f"OnlineAdaptivePCA (YL Alg. 4, alpha={alpha:g})",
         lambda seed: OnlineAdaptivePCA(k, eta=eta, alpha=alpha, random_state=seed)),
        ("ftl", "Follow the Leader (WK Sec. 7)", lambda seed: FollowTheLeader(k)),
    ]
    losses, curves = _learner_curves("wk-fig4", X, learners, seeds, progress)
    curves["best_fixed"] = _best_fixed(X, k)
    best_loss = metrics.best_subspace_loss(X, k)
    bound = None if isinstance(eta, str) else metrics.regret_bound(best_loss, n, k, eta)
    notes = [] if bound is None else [
        f"WK Thm. 6 bound on the expected total loss of OnlinePCA and uncentered "
        f"Alg. 6 (eta={eta:g}): {bound:.2f}"]
    params = dict(n_features=n, n_components=k, segment_length=m, n_segments=s, eta=eta,
                  alpha=alpha, data_seed=data_seed, n_seeds=len(seeds))
    return _result("wk-fig4", f"WK Fig. 4: n={n}, k={k}, eta={_fmt(eta)}, {s} segments of {m}",
                   "WK Sec. 8, Fig. 4", params, seeds, X.shape[0], _boundaries(lengths),
                   segment_labels,
                   "cumulative loss", curves, losses, notes,
                   dict(best_fixed_loss=best_loss, wk_thm6_bound=bound))


@_fill_doc
def yl_fig1(n_features: int = 20, n_components: int = 2, segment_length: int = 200,
            n_segments: int = 3, eta: float = 1.0, alpha: float = 1e-5,
            seeds: int | Sequence[int] = 10, data_seed: int = 0,
            progress: Callable[[int, int], object] | None = None) -> Result:
    """Online adaptive PCA against online PCA on a shifting stream (YL Sec. 6.1, Fig. 1).

    Three segments of 200 points from random rank-2 Gaussians in ``R^20``
    (norms capped at one), ``k = 2``, ``eta = 1``, ``alpha = 1e-5``: online
    PCA (WK Algorithm 5, "static"), online adaptive PCA (YL Algorithm 4),
    Follow the Leader and the best fixed subspace in hindsight.

    Parameters
    ----------
    %(n_and_k)s
    segment_length : int, default=200
        Points per segment.
    %(shifts)s
    %(runs)s

    %(cumulative_result)s

    References
    ----------
    YL Section 6.1, Figure 1 (a) and (b); YL Algorithm 4; WK Algorithm 5.

    Examples
    --------
    >>> from onlinepca_fast.app.experiments import yl_fig1
    >>> r = yl_fig1(segment_length=50, seeds=1)
    >>> sorted(r["curves"])
    ['adaptive_pca', 'best_fixed', 'ftl', 'online_pca']
    """
    n, k, m, s, eta, alpha, seeds, data_seed = _shifting_args(
        n_features, n_components, segment_length, n_segments, eta, alpha, seeds, data_seed)
    X, lengths, segment_labels = _shifting_stream(n, k, m, s, data_seed)
    learners = _static_vs_adaptive(k, eta, alpha)
    losses, curves = _learner_curves("yl-fig1", X, learners, seeds, progress)
    curves["best_fixed"] = _best_fixed(X, k)
    params = dict(n_features=n, n_components=k, segment_length=m, n_segments=s, eta=eta,
                  alpha=alpha, data_seed=data_seed, n_seeds=len(seeds))
    return _result("yl-fig1", f"YL Fig. 1: n={n}, k={k}, eta={_fmt(eta)}, alpha={alpha:g}, "
                   f"{s} segments of {m}", "YL Sec. 6.1, Fig. 1", params, seeds, X.shape[0],
                   _boundaries(lengths),
                   segment_labels,
                   "cumulative loss", curves, losses, (),
                   dict(best_fixed_loss=metrics.best_subspace_loss(X, k)))


@_fill_doc
def wk_fig6(n_features: int = 20, n_components: int = 2, segment_length: int = 200,
            subspaces: Sequence[int] = (0, 1, 0, 2, 1, 2), eta: float = 1.0, alpha: float = 1e-3,
            seeds: int | Sequence[int] = 10, data_seed: int = 0,
            progress: Callable[[int, int], object] | None = None) -> Result:
    """Long-term memory: mixing in the past average (WK Sec. 8, eq. (20), Fig. 6).

    A stream whose segments revisit earlier subspaces (``subspaces``: the
    covariance index of each segment, e.g. ``(0, 1, 0, 2, 1, 2)``; WK Fig. 6
    uses six segments of 200 face images of different people).  The curves
    are the regret with respect to the indicated partition, i.e. against the
    best subspace of each segment in hindsight
    (:func:`onlinepca_fast.metrics.partition_regret` with
    ``cumulative=True``), for: OnlinePCA with mixing of the past average
    (``share="past"``, WK eq. (20), ``alpha = 0.001``, the learner of WK
    Fig. 6), with uniform mixing (``share="uniform"``, WK Sec. 8), and
    without mixing (WK Algorithm 5).  WK report that mixing the past lets the
    learner return quickly to a subspace it has seen before ("long-term
    memory").  In the capped parametrization the experts are the ``n - k``
    discarded directions; when ``k`` is small next to ``n`` most directions
    are discarded most of the time, the past average is then close to
    uniform, and the two mixing rules behave alike (with the defaults their
    regrets differ by about 10%).

    Parameters
    ----------
    %(n_and_k)s
    segment_length : int, default=200
        Points per segment.
    subspaces : sequence of int, default=(0, 1, 0, 2, 1, 2)
        The covariance used by each segment.
    eta : float, default=1.0
        Learning rate of the learners.
    alpha : float, default=1e-3
        Mixing rate of both mixing variants.
    %(runs)s

    Returns
    -------
    result : dict
        The quantity is the regret against the best partition; the summary
        has the losses of the best partition and the best fixed subspace.

    References
    ----------
    WK Section 8, eq. (20) and Figure 6; Herbster & Warmuth (1998) and
    Bousquet & Warmuth (2002) for mixing in the experts setting.

    Examples
    --------
    >>> from onlinepca_fast.app.experiments import wk_fig6
    >>> r = wk_fig6(segment_length=60, subspaces=(0, 1, 0), seeds=1)
    >>> r["boundaries"], r["segment_labels"]
    ([60, 120], ['subspace 0', 'subspace 1', 'subspace 0'])
    """
    n, k = _sizes(n_features, n_components)
    m = as_int(segment_length, "segment_length", 1, 10**7)
    subspaces = [as_int(s, "subspaces", 0, 10**4) for s in subspaces]
    if not subspaces:
        raise ValueError("subspaces must not be empty")
    eta, alpha, seeds = _rate(eta), _alpha(alpha), _seeds(seeds)
    data_seed = _data_seed(data_seed)
    lengths = [m] * len(subspaces)
    X, _ = datasets.shifting_subspaces(n, k, lengths, random_state=data_seed,
                                       subspaces=subspaces)
    boundaries = _boundaries(lengths)
    learners = [
        ("online_pca", "OnlinePCA, no mixing (WK Alg. 5)",
         lambda seed: OnlinePCA(k, eta=eta, random_state=seed)),
        ("share_uniform", f"OnlinePCA, uniform mixing (WK Sec. 8, alpha={alpha:g})",
         lambda seed: OnlinePCA(k, eta=eta, share="uniform", alpha=alpha, random_state=seed)),
        ("share_past", f"OnlinePCA, mixing the past (WK eq. 20, alpha={alpha:g})",
         lambda seed: OnlinePCA(k, eta=eta, share="past", alpha=alpha, random_state=seed)),
    ]
    partition = _comparator_curve(X, k, boundaries)
    losses, curves = _learner_curves("wk-fig6", X, learners, seeds, progress, offset=partition)
    partition_loss = float(partition[-1])
    best_loss = metrics.best_subspace_loss(X, k)
    notes = [f"loss of the best partition ({len(subspaces)} segments): {partition_loss:.2f}; "
             f"of the best fixed subspace: {best_loss:.2f}"]
    params = dict(n_features=n, n_components=k, segment_length=m, subspaces=subspaces,
                  eta=eta, alpha=alpha, data_seed=data_seed, n_seeds=len(seeds))
    return _result("wk-fig6", f"WK Fig. 6: n={n}, k={k}, eta={_fmt(eta)}, "
                   f"alpha={alpha:g}, segments {'-'.join(map(str, subspaces))} of {m}",
                   "WK Sec. 8, eq. (20), Fig. 6", params, seeds, X.shape[0], boundaries,
                   [f"subspace {s}" for s in subspaces], "regret w.r.t. the best partition",
                   curves, losses, notes,
                   dict(best_partition_loss=partition_loss, best_fixed_loss=best_loss))


@_fill_doc
def digits(n_components: int = 2, eta: float = 5.0, alpha: float = 1e-4,
           segment_length: int | None = None, seeds: int | Sequence[int] = 10, data_seed: int = 0,
           progress: Callable[[int, int], object] | None = None) -> Result:
    """Real data: handwritten digits streamed class by class (like WK Fig. 6 / YL Fig. 2).

    The 1797 8x8 images of ``sklearn.datasets.load_digits`` (bundled with
    scikit-learn, no download), 64 features, scaled by one common factor so
    that the largest norm is one, are presented class by class, 0 to 9, each
    class shuffled by ``data_seed``: a shifting stream with ten segments, the
    role the face images play in WK Fig. 6 and YL Fig. 2 (YL use ``k = 2``,
    ``eta = 5``, ``alpha = 1e-4`` there: the defaults here).  Learners: online
    PCA (WK Algorithm 5), online adaptive PCA (YL Algorithm 4) and Follow
    the Leader; comparators: the best fixed subspace in hindsight and the
    best subspace per class (the partition comparator of WK Fig. 6).

    Parameters
    ----------
    n_components : int, default=2
        ``1 <= k < 64``.
    eta : float, default=5.0
        Learning rate of the learners.
    alpha : float, default=1e-4
        Fixed-share rate of ``OnlineAdaptivePCA``.
    segment_length : int or None, default=None
        Use at most this many images per class (all by default).
    %(runs)s

    %(cumulative_result)s

    References
    ----------
    WK Figure 6 and YL Section 6.2, Figure 2 (face images); E. Alpaydin and
    C. Kaynak, optical recognition of handwritten digits (UCI), the data of
    ``load_digits``.
    """
    k = as_int(n_components, "n_components", 1, 63)
    eta, alpha, seeds = _rate(eta), _alpha(alpha), _seeds(seeds)
    m = None if segment_length is None else as_int(segment_length, "segment_length", 1, 10**7)
    data_seed = _data_seed(data_seed)
    X, labels = datasets.digits_stream(m, data_seed)
    classes, lengths = np.unique(labels, return_counts=True)
    lengths = lengths.tolist()
    boundaries = _boundaries(lengths)
    learners = _static_vs_adaptive(k, eta, alpha)
    losses, curves = _learner_curves("digits", X, learners, seeds, progress)
    curves["best_fixed"] = _best_fixed(X, k)
    curves["best_partition"] = _comparator("best subspace per class, in hindsight",
                                           "best_partition", _comparator_curve(X, k, boundaries))
    params = dict(n_features=X.shape[1], n_components=k, segment_length=m, eta=eta,
                  alpha=alpha, data_seed=data_seed, n_seeds=len(seeds),
                  class_sizes=lengths)
    return _result("digits", f"digits (sklearn load_digits) class by class: n=64, k={k}, "
                   f"eta={_fmt(eta)}, {X.shape[0]} images", "WK Fig. 6 / YL Fig. 2 (faces), "
                   "here handwritten digits", params, seeds, X.shape[0], boundaries,
                   [f"digit {c}" for c in classes], "cumulative loss", curves, losses, ())


@_fill_doc
def kw_cone(n_samples: int = 500, n_features: int = 20, n_components: int = 2,
            eta: float | Literal["auto", "adahedge"] = 1.0,
            noise: float = 0.05, seeds: int | Sequence[int] = 10, data_seed: int = 0,
            progress: Callable[[int, int], object] | None = None,
            embedding: Literal["padded", "full"] = "padded") -> Result:
    """Online kernel PCA on a noisy cone (KW Sec. 5, Figs. 2 and 3).

    Points near the cone ``x^2 + y^2 = z^2`` embedded in ``R^n``
    (:func:`onlinepca_fast.datasets.noisy_cone`; by default KW's 3-d cone
    padded with zeros, ``|z| <= 0.6``, whose feature-space norms are at
    most one as KW's bound assumes), compressed in the feature
    space of the degree-2 polynomial kernel ``(x . y)^2`` by online kernel
    PCA (KW Algorithm 6), against offline kernel PCA on the whole data set
    (KW Algorithm 2: the loss is the sum of all but the ``k`` largest
    eigenvalues of the kernel matrix).  The summary holds the average
    regret per trial (KW Fig. 3).

    Parameters
    ----------
    n_samples : int, default=500
        Number of points (KW: 500).
    n_features : int, default=20
        Dimension n (KW: 20).
    n_components : int, default=2
        Rank k of the projection in feature space.
    eta : float, "auto" or "adahedge", default=1.0
        KW Fig. 3 uses 1; the tuned rate of KW eq. (6) is 1.5 in Fig. 2;
        ``"auto"``: the AdaHedge rate under the master, ``"adahedge"``: the
        AdaHedge rate alone (docs/adaptive_rates.md).
    noise : float, default=0.05
        Standard deviation of the Gaussian noise.
    %(runs)s
    embedding : {"padded", "full"}, default="padded"
        The cone of :func:`onlinepca_fast.datasets.noisy_cone`: KW's
        (``"padded"``), or ``"full"``, the cone ``x_1^2 = x_2^2 + ... +
        x_n^2`` spanning ``R^n``, whose
        ``k(x, x)`` exceeds one near its rim (this experiment's cone in
        0.1.0).

    %(cumulative_result)s

    References
    ----------
    KW Section 5, Figures 1-3; KW Algorithm 6 (online) and Algorithm 2
    (offline kernel PCA).
    """
    m = as_int(n_samples, "n_samples", 2, 10**6)
    n = as_int(n_features, "n_features", 3, 10**5)
    k = as_int(n_components, "n_components", 1, m - 1)
    eta, seeds = _rate(eta), _seeds(seeds)
    data_seed = _data_seed(data_seed)
    X = datasets.noisy_cone(m, n, noise=noise, random_state=data_seed, embedding=embedding)
    learners = [("kernel_pca", "OnlineKernelPCA (KW Alg. 6, kernel (x.y)^2)",
                 lambda seed: OnlineKernelPCA(n_components=k, kernel="poly", degree=2, gamma=1.0,
                                              coef0=0.0, eta=eta, random_state=seed,
                                              budget=None))]
    losses, curves = _learner_curves("kw-cone", X, learners, seeds, progress)
    # offline kernel PCA (KW Alg. 2): project phi(x_t) on the top-k eigenvectors
    # u_j = Phi^T v_j / sqrt(l_j) of the feature-space scatter: the per-trial loss is
    # K_tt - sum_j (v_j . K_t)^2 / l_j.
    K = (X @ X.T) ** 2
    lam, V = np.linalg.eigh(K)
    lam, V = lam[::-1][:k], V[:, ::-1][:, :k]
    kept = np.sum((K @ V) ** 2 / np.where(lam > 0, lam, np.inf), axis=1)
    offline = np.cumsum(np.diag(K) - kept)
    curves["offline_kernel_pca"] = _comparator("offline kernel PCA (KW Alg. 2)",
                                               "offline_kernel_pca", offline)
    avg_regret = (curves["kernel_pca"]["expected"][-1] - offline[-1]) / m
    params = dict(n_samples=m, n_features=n, n_components=k, eta=eta, noise=noise,
                  embedding=embedding, kernel="poly", degree=2, gamma=1.0, coef0=0.0,
                  data_seed=data_seed, n_seeds=len(seeds))
    return _result("kw-cone", f"KW Fig. 2: noisy cone ({embedding}), n={n}, k={k}, "
                   f"eta={_fmt(eta)}, kernel (x.y)^2", "KW Sec. 5, Figs. 2-3", params, seeds, m,
                   [], ["cone"], "cumulative loss", curves, losses,
                   [f"average regret per trial (KW Fig. 3): {avg_regret:.4f}"],
                   dict(offline_loss=float(offline[-1]), average_regret=float(avg_regret)))


EXPERIMENTS: dict[str, Callable[..., dict[str, Any]]] = {
    "wk-fig4": wk_fig4,
    "wk-fig6": wk_fig6,
    "yl-fig1": yl_fig1,
    "kw-cone": kw_cone,
    "digits": digits,
}
"""The experiments by their command-line name."""
