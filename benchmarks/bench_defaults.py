"""Defaults that never lose (issue 36): eta="auto" on real streams, against
fixed rates and simple baselines, as a user would run them.

For every stream, learner (OnlinePCA, OnlineAdaptivePCA: uncentered;
CenteredOnlinePCA: centered) and k = 2, 5, 10 (k < n - 1), rows scaled by one
factor so that the largest row norm is 1, the learner's default total
expected loss divided by

- ``best``: the loss of the best fixed rank-k subspace in hindsight (the
  centered comparator for the centered learner);
- ``grid``: the best of 15 fixed etas 0.01 .. 1e5 (x ~3.16) in hindsight;
- ``eta1``: eta = 1;
- ``base``: the best of the baselines of ``benchmarks.baselines`` (Follow the
  Leader, CCIPCA, Oja 1/t, Frequent Directions, IncrementalPCA batch 100)
  with the same centering;

and ``scale``: the largest relative difference of the losses of ``c X``
(over ``c^2``) from those of ``X``, c = 1e-6 and 1e6.

Streams (data shipped inside installed packages; nothing is downloaded):
``digits`` (64 features, 1797 rows sorted by class: shifting), ``patches``
(10x10 patches, 1000 of each of scikit-learn's two sample images: two
stationary halves), ``segment`` (river's ImageSegments, 18 features, 2310
rows), ``yeast`` (river, 103 features, 2417 rows: biology, stationary),
``sp500`` (river's SP500Stocks, 10 daily returns, 1257 rows: strongly
low-rank, stationary), ``shuttle`` (river, 9 features, 49,097 rows), and
three short ones (T < 1000: no baseline figure): ``wine``, ``cancer``,
``diabetes`` (scikit-learn).  ``UNSEEN_STREAMS``: nineteen more, held out
(scikit-image's images as tiles, statsmodels and river data sets).

asv: ``Defaults.track_*`` report the ratios (one stream/learner/k per
parameter).  The whole table: ``python tools/defaults_table.py [STREAM ...]``
(``--json FILE`` also writes its rows as JSON).
"""

from __future__ import annotations

import time

import numpy as np

import onlinepca_fast as opf
from onlinepca_fast import metrics

try:
    from . import baselines
    from .workloads import digits_rows as digits, image_patches as patches
    from .workloads import statsmodels_rows, tiled_patches
except ImportError:  # run as a file: benchmarks/ is on the path
    import baselines
    from workloads import digits_rows as digits, image_patches as patches
    from workloads import statsmodels_rows, tiled_patches

GRID = 10.0 ** np.arange(-2.0, 5.01, 0.5)
KS = (2, 5, 10)
LEARNERS = {
    "OnlinePCA": (opf.OnlinePCA, False),
    "OnlineAdaptivePCA": (opf.OnlineAdaptivePCA, False),
    "CenteredOnlinePCA": (opf.CenteredOnlinePCA, True),
}
SCALES = (1e-6, 1e6)


# -- streams ---------------------------------------------------------------------------
def _river(name, numeric_only=False):
    from river import datasets
    rows = [x for x, _ in getattr(datasets, name)()]
    keys = [key for key, v in rows[0].items()
            if not numeric_only or (isinstance(v, (int, float)) and not isinstance(v, bool))]
    return np.array([[float(x[key]) for key in keys] for x in rows])


def _sklearn(loader):
    def load():
        from sklearn import datasets
        d = getattr(datasets, loader)()
        return d.data[np.argsort(d.target, kind="stable")].astype(float)
    return load


STREAMS = {
    "digits": ("shifting", digits),
    "patches": ("stationary halves", patches),
    "segment": ("real, in river's order", lambda: _river("ImageSegments")),
    "yeast": ("stationary", lambda: _river("Yeast")),
    "sp500": ("stationary, low-rank", lambda: _river("SP500Stocks")),
    "shuttle": ("long", lambda: _river("Shuttle")),
    "wine": ("short, by class", _sklearn("load_wine")),
    "cancer": ("short, by class", _sklearn("load_breast_cancer")),
    "diabetes": ("short, by target", _sklearn("load_diabetes")),
}

#: Held out: streams measured once, after the defaults were chosen, and not
#: used to choose or tune them (``tools/defaults_table.py --unseen``; needs
#: scikit-image and statsmodels besides river).  Tiles are 8x8, raster order.
UNSEEN_STREAMS = {
    "camera": ("image tiles", lambda: tiled_patches("camera")),
    "astronaut": ("image tiles", lambda: tiled_patches("astronaut")),
    "chelsea": ("image tiles", lambda: tiled_patches("chelsea")),
    "page": ("image tiles, scanned text", lambda: tiled_patches("page")),
    "hubble": ("image tiles, long", lambda: tiled_patches("hubble_deep_field")),
    "coins+text": ("two images: a shift", lambda: tiled_patches("coins", "text")),
    "brick+moon": ("two images: a shift", lambda: tiled_patches("brick", "moon")),
    "gravel+grass+brick": ("three textures: two shifts, long",
                           lambda: tiled_patches("gravel", "grass", "brick")),
    "fair": ("survey, file order", lambda: statsmodels_rows("fair")),
    "randhie": ("insurance, file order, long", lambda: statsmodels_rows("randhie")),
    "phishing": ("river, ternary features", lambda: _river("Phishing")),
    "trump": ("river TrumpApproval, a date column", lambda: _river("TrumpApproval")),
    "solarflare": ("river, numeric columns", lambda: _river("SolarFlare", numeric_only=True)),
    "anes96": ("short survey", lambda: statsmodels_rows("anes96")),
    "modechoice": ("short", lambda: statsmodels_rows("modechoice")),
    "star98": ("short", lambda: statsmodels_rows("star98")),
    "grunfeld": ("short panel", lambda: statsmodels_rows("grunfeld")),
    "elnino": ("short", lambda: statsmodels_rows("elnino")),
    "iris": ("short, by class", _sklearn("load_iris")),
}


def stream(name):
    """The stream's rows, scaled so that the largest row norm is 1."""
    X = {**STREAMS, **UNSEEN_STREAMS}[name][1]()
    return X / np.linalg.norm(X, axis=1).max()


# -- measurements ----------------------------------------------------------------------
def total(cls, k, eta, X):
    return float(cls(k, eta=eta, random_state=0).fit(X).expected_losses_.sum())


def scale_error(cls, k, X, eta="auto"):
    """max over c of max_t |loss_t(c X) / c^2 - loss_t(X)| / max_t loss_t(X)."""
    ref = cls(k, eta=eta, random_state=0).fit(X).expected_losses_
    err = 0.0
    for c in SCALES:
        got = cls(k, eta=eta, random_state=0).fit(c * X).expected_losses_ / c ** 2
        err = max(err, float(np.abs(got - ref).max() / ref.max()))
    return err


def measure(name, ks=KS, learners=None, log=None, eta="auto"):
    """The rows of the table for one stream (`eta`: the default, "auto", or
    "adahedge", the rate learner alone, in its columns "auto")."""
    X = stream(name)
    T, n = X.shape
    rows, base_cache = [], {}
    for lname in learners or LEARNERS:
        cls, centered = LEARNERS[lname]
        for k in ks:
            if k >= n - 1:
                continue
            t0 = time.perf_counter()
            best = metrics.best_subspace_loss(X, k, centered=centered)
            auto = total(cls, k, eta, X)
            grid = [total(cls, k, float(e), X) for e in GRID]
            one = total(cls, k, 1.0, X)
            if (centered, k) not in base_cache:
                base_cache[centered, k] = {b: float(v.sum()) for b, v in
                                           baselines.online_losses(X, k, centered).items()}
            base = base_cache[centered, k]
            bname = min(base, key=base.get)
            ib = int(np.argmin(grid))
            row = dict(stream=name, n=n, T=T, learner=lname, k=k, best=auto / best,
                       grid=auto / grid[ib], grid_eta=float(GRID[ib]), eta1=auto / one,
                       base=auto / base[bname], base_name=bname,
                       baselines={b: v / best for b, v in base.items()},
                       auto_loss=auto, best_loss=best, scale=scale_error(cls, k, X, eta),
                       seconds=time.perf_counter() - t0)
            rows.append(row)
            if log:
                log(row)
    return rows



# -- the other learners with a rate ---------------------------------------------------
#: Hedge and CappedHedge learn from the rows' energies, ``x_i^2`` over the
#: stream's largest (expert i's loss is the energy feature i carries, so
#: CappedHedge is OnlinePCA restricted to the coordinate axes); the variance
#: minimisers from the rows.  At most ``VECTOR_T`` rows.
VECTOR_T = 6000


def vector_cases(X, ks=KS):
    """(learner, k, make(eta), data) for the learners with a rate besides the
    three above."""
    E = X ** 2 / (X ** 2).max()
    yield "Hedge", None, lambda eta: opf.Hedge(eta=eta, random_state=0), E
    yield ("VarianceMinimizer", None,
           lambda eta: opf.VarianceMinimizer(eta=eta, random_state=0), X)
    yield "SimplexVarianceMinimizer", None, lambda eta: opf.SimplexVarianceMinimizer(eta=eta), X
    for k in ks:
        if k < X.shape[1] - 1:
            yield ("CappedHedge", k,
                   (lambda k: lambda eta: opf.CappedHedge(k, eta=eta, random_state=0))(k), E)


def measure_vector(name, log=None):
    """Rows of the table of the other learners with a rate: the default's
    total expected loss over the best grid eta's and over eta = 1's (their
    inputs are bounded: losses in [0, 1], rows of norm at most 1, so no
    scale column)."""
    X = stream(name)[:VECTOR_T]
    rows = []
    for lname, k, make, data in vector_cases(X):
        t0 = time.perf_counter()
        def total(eta):
            return float(make(eta).fit(data).expected_losses_.sum())
        auto = total("auto")
        grid = [total(float(e)) for e in GRID]
        one = total(1.0)
        ib = int(np.argmin(grid))
        row = dict(stream=name, n=X.shape[1], T=X.shape[0], learner=lname, k=k,
                   grid=auto / grid[ib], grid_eta=float(GRID[ib]), eta1=auto / one,
                   auto_loss=auto, grid_loss=grid[ib], eta1_loss=one,
                   seconds=time.perf_counter() - t0)
        rows.append(row)
        if log:
            log(row)
    return rows


VECTOR_HEADER = ("| stream (n, T) | learner | k | auto/best grid (eta) | auto/eta=1 | "
                 "auto loss | best grid loss |\n|---|---|---|---|---|---|---|")


def format_vector_row(r):
    return (f"| {r['stream']} ({r['n']}, {r['T']}) | {r['learner']} | {r['k'] or ''} | "
            f"{r['grid']:.3f} ({r['grid_eta']:.3g}) | {r['eta1']:.3f} | "
            f"{r['auto_loss']:.4g} | {r['grid_loss']:.4g} |")

def format_row(r):
    return (f"| {r['stream']} ({r['n']}, {r['T']}) | {r['learner']} | {r['k']} | "
            f"{r['best']:.3f} | {r['grid']:.3f} ({r['grid_eta']:.3g}) | {r['eta1']:.3f} | "
            f"{r['base']:.3f} ({r['base_name']}) | {r['scale']:.1e} |")


HEADER = ("| stream (n, T) | learner | k | auto/best subspace | auto/best grid (eta) | "
          "auto/eta=1 | auto/best baseline | scale |\n|---|---|---|---|---|---|---|---|")


# -- asv --------------------------------------------------------------------------------
_ASV_STREAMS = ("wine", "digits", "patches", "segment", "yeast", "sp500")
_MEMO = {}


def _memo(key, compute):
    if key not in _MEMO:
        _MEMO[key] = compute()
    return _MEMO[key]


class Defaults:
    """The ratios of the table (``track_``): the default's loss over the best
    fixed subspace, the best grid eta, eta = 1 and the best baseline (the
    first parameters are the short wine stream)."""

    params = (list(_ASV_STREAMS), list(LEARNERS), list(KS))
    param_names = ("stream", "learner", "k")
    unit = "ratio"
    timeout = 1800
    number = 1
    repeat = 1

    def setup(self, stream_name, learner, k):
        X = _memo(stream_name, lambda: stream(stream_name))
        if k >= X.shape[1] - 1:
            raise NotImplementedError  # asv skips it
        self.X, self.cls, self.centered = X, *LEARNERS[learner]
        self.key = (stream_name, learner, k)
        self.auto = _memo(self.key + ("auto",), lambda: total(self.cls, k, "auto", X))

    def track_auto_over_best_subspace(self, stream_name, learner, k):
        return self.auto / metrics.best_subspace_loss(self.X, k, centered=self.centered)

    def track_auto_over_best_grid(self, stream_name, learner, k):
        grid = _memo(self.key + ("grid",),
                     lambda: min(total(self.cls, k, float(e), self.X) for e in GRID))
        return self.auto / grid

    def track_auto_over_eta1(self, stream_name, learner, k):
        return self.auto / total(self.cls, k, 1.0, self.X)

    def track_auto_over_best_baseline(self, stream_name, learner, k):
        base = _memo((stream_name, self.centered, k, "base"), lambda: min(
            v.sum() for v in baselines.online_losses(self.X, k, self.centered).values()))
        return self.auto / base


class DefaultsVector:
    """The ratios of ``tools/defaults_table.py --vector`` (``track_``): the
    default's loss over the best grid eta's and over eta = 1's, for Hedge,
    CappedHedge (k = 2, 5, 10), VarianceMinimizer and
    SimplexVarianceMinimizer (the first parameters are the short wine
    stream)."""

    params = (list(_ASV_STREAMS), ["Hedge", "CappedHedge-2", "CappedHedge-5", "CappedHedge-10",
                                   "VarianceMinimizer", "SimplexVarianceMinimizer"])
    param_names = ("stream", "learner")
    unit = "ratio"
    timeout = 1800
    number = 1
    repeat = 1

    def setup(self, stream_name, learner):
        X = _memo(stream_name, lambda: stream(stream_name))[:VECTOR_T]
        cases = {(f"{name}-{k}" if k else name): (make, data)
                 for name, k, make, data in vector_cases(X)}
        if learner not in cases:
            raise NotImplementedError  # k >= n - 1: asv skips it
        self.make, self.data = cases[learner]
        self.key = (stream_name, learner, "vector")
        self.auto = _memo(self.key + ("auto",), lambda: self._total("auto"))

    def _total(self, eta):
        return float(self.make(eta).fit(self.data).expected_losses_.sum())

    def track_auto_over_best_grid(self, stream_name, learner):
        grid = _memo(self.key + ("grid",), lambda: min(self._total(float(e)) for e in GRID))
        return self.auto / grid

    def track_auto_over_eta1(self, stream_name, learner):
        return self.auto / self._total(1.0)
