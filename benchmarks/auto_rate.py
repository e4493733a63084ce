"""eta="auto" against fixed learning rates on real streams (issue 24).

For each stream, learner and k: the total expected loss of ``eta="auto"``,
of ``eta=1`` and of the best eta of a grid 0.01 .. 1e5 (x ~3.16 steps) in
hindsight, each divided by the loss of the best fixed rank-k subspace in
hindsight (uncentered for OnlinePCA / OnlineAdaptivePCA, centered for
CenteredOnlinePCA), and the time per trial of auto over eta = 1 (thread
CPU time, best of three fits; run with one BLAS thread).

Streams (shipped inside scikit-learn, no download):

- ``digits``: the 1797 8x8 digits of ``load_digits`` (n = 64), sorted
  class by class (a shift every ~180 rows);
- ``patches``: 10x10 grey patches (n = 100) of the two images of
  ``load_sample_images``, 1000 random patches of one image, then 1000 of
  the other (seeded).

Rows are scaled by one common factor so that max |x| = 1.

``--extra`` adds three streams the rates were not designed on (OnlinePCA
and OnlineAdaptivePCA only): scikit-learn's ``breast_cancer`` (n = 30, raw
features, sorted by class) and ``diabetes`` (n = 10, sorted by target), and
statsmodels' quarterly ``macrodata`` (n = 10 log-differences, in time
order; skipped if statsmodels is not installed).

Run: ``python benchmarks/auto_rate.py [--quick] [--extra] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import onlinepca_fast as opf
from onlinepca_fast import metrics

GRID = 10.0 ** np.arange(-2.0, 5.01, 0.5)
LEARNERS = {
    "OnlinePCA": (lambda k, eta: opf.OnlinePCA(k, eta=eta, random_state=0), False),
    "OnlineAdaptivePCA": (lambda k, eta: opf.OnlineAdaptivePCA(k, eta=eta, random_state=0),
                          False),
    "CenteredOnlinePCA": (lambda k, eta: opf.CenteredOnlinePCA(k, eta=eta, random_state=0),
                          True),
}


def digits():
    from sklearn.datasets import load_digits
    d = load_digits()
    order = np.argsort(d.target, kind="stable")
    return d.data[order].astype(float)


def patches(per_image=1000, size=10, seed=0):
    from sklearn.datasets import load_sample_images
    rng = np.random.default_rng(seed)
    rows = []
    for img in load_sample_images().images:
        g = img.astype(float).mean(axis=2)
        i = rng.integers(0, g.shape[0] - size, per_image)
        j = rng.integers(0, g.shape[1] - size, per_image)
        rows.append(np.stack([g[a:a + size, b:b + size].ravel() for a, b in zip(i, j)]))
    return np.concatenate(rows)


def cancer():
    from sklearn.datasets import load_breast_cancer
    d = load_breast_cancer()
    return d.data[np.argsort(d.target, kind="stable")].astype(float)


def diabetes():
    from sklearn.datasets import load_diabetes
    d = load_diabetes()
    return d.data[np.argsort(d.target, kind="stable")].astype(float)


def macro():
    import statsmodels.api as sm
    d = sm.datasets.macrodata.load_pandas().data
    cols = ["realgdp", "realcons", "realinv", "realgovt", "realdpi", "cpi", "m1",
            "tbilrate", "unemp", "pop"]
    return np.diff(np.log(np.abs(d[cols].to_numpy(float)) + 1.0), axis=0)


def scaled(X):
    return X / np.linalg.norm(X, axis=1).max()


def run(make, k, eta, X, repeat=1):
    """Total expected loss, and thread CPU time per trial (best of `repeat`
    fits: the losses are the same every time)."""
    best = np.inf
    for _ in range(repeat):
        learner = make(k, eta)
        t0 = time.thread_time()
        learner.fit(X)
        best = min(best, time.thread_time() - t0)
    return learner.expected_losses_.sum(), best / X.shape[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="k = 5 only")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    ap.add_argument("--extra", action="store_true",
                    help="also breast_cancer, diabetes and macrodata (see above)")
    args = ap.parse_args(argv)
    streams = {"digits": scaled(digits()), "patches": scaled(patches())}
    if args.extra:
        streams.update(cancer=scaled(cancer()), diabetes=scaled(diabetes()))
        try:
            streams["macro"] = scaled(macro())
        except ImportError:
            print("(statsmodels is not installed: no macrodata stream)")
    ks = (5,) if args.quick else (2, 5, 10)
    rows = []
    print("| stream (n, T) | learner | k | auto | eta=1 | best grid (eta) | auto/best | "
          "auto/eta=1 | time auto/eta=1 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for sname, X in streams.items():
        for lname, (make, centered) in LEARNERS.items():
            if sname not in ("digits", "patches") and centered:
                continue  # --extra: the master's learners
            for k in ks:
                if k >= X.shape[1] - 1:
                    continue
                best = metrics.best_subspace_loss(X, k, centered=centered)
                auto, t_auto = run(make, k, "auto", X, repeat=3)
                one, t_one = run(make, k, 1.0, X, repeat=3)
                grid = [run(make, k, float(e), X)[0] for e in GRID]
                ib = int(np.argmin(grid))
                row = dict(stream=sname, n=X.shape[1], T=X.shape[0], learner=lname, k=k,
                           auto=auto / best, eta1=one / best, best=grid[ib] / best,
                           best_eta=float(GRID[ib]), time_ratio=t_auto / t_one)
                rows.append(row)
                print(f"| {sname} ({X.shape[1]}, {X.shape[0]}) | {lname} | {k} | "
                      f"{row['auto']:.3f} | {row['eta1']:.3f} | {row['best']:.3f} "
                      f"({row['best_eta']:.3g}) | {row['auto'] / row['best']:.3f} | "
                      f"{row['auto'] / row['eta1']:.3f} | {row['time_ratio']:.2f} |",
                      flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
