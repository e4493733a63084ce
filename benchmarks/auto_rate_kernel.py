"""OnlineKernelPCA: eta="auto" against fixed learning rates (issue 24).

For each stream, kernel and r: the total expected loss of ``eta="auto"``,
of ``eta=1`` and of the best eta of a grid 0.01 .. 1e5 (x ~3.16 steps) in
hindsight, each divided by the loss of the best fixed rank-r feature-space
subspace in hindsight (``tr K`` minus the r largest eigenvalues of the
kernel matrix of the whole stream), and the time per trial of auto over
eta = 1.

Streams (no download):

- ``digits``: every sixth row of scikit-learn's ``load_digits`` sorted
  class by class (300 rows, n = 64; a shift every ~30 rows), rbf kernel
  with gamma = 1 (rows scaled so that max |x| = 1);
- ``cone``: KW's noisy cone (Sec. 5, 400 rows in R^20), kernel (x . y)^2;
- ``patches``: 400 10x10 grey patches of the two images of
  ``load_sample_images`` (200 of each, seeded), linear kernel, max |x| = 1.

Run: ``python benchmarks/auto_rate_kernel.py [--quick] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import onlinepca_fast as opf
from onlinepca_fast import reference
from onlinepca_fast.datasets import noisy_cone

try:  # the image patches of auto_rate.py, defined once
    from .auto_rate import patches as image_patches, scaled  # as benchmarks.auto_rate_kernel
except ImportError:
    from auto_rate import patches as image_patches, scaled  # run as a script

GRID = 10.0 ** np.arange(-2.0, 5.01, 0.5)


def digits():
    from sklearn.datasets import load_digits
    d = load_digits()
    X = d.data[np.argsort(d.target, kind="stable")][::6].astype(float)
    return X / np.linalg.norm(X, axis=1).max()


def patches(per_image=200, size=10, seed=0):
    """auto_rate.py's patches, 200 of each image, scaled to max |x| = 1."""
    return scaled(image_patches(per_image, size, seed))


STREAMS = {
    "digits": (digits, dict(kernel="rbf", gamma=1.0)),
    "cone": (lambda: noisy_cone(400, 20, random_state=0, embedding="padded"),
             dict(kernel="poly", degree=2, gamma=1.0, coef0=0.0)),
    "patches": (patches, dict(kernel="linear")),
}


def run(X, r, eta, params):
    t0 = time.thread_time()
    learner = opf.OnlineKernelPCA(r, eta=eta, random_state=0, **params).fit(X)
    return learner.expected_losses_.sum(), (time.thread_time() - t0) / X.shape[0], learner


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="r = 5 only")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = ap.parse_args(argv)
    rows = []
    print("| stream (n, T) | kernel | r | auto | eta=1 | best grid (eta) | auto/best | "
          "auto/eta=1 | time auto/eta=1 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (make, params) in STREAMS.items():
        X = make()
        K = reference.gram(X, X, **params)
        lam = np.linalg.eigvalsh((K + K.T) / 2)
        for r in ((5,) if args.quick else (2, 5, 10)):
            best = np.trace(K) - np.clip(lam[-r:], 0, None).sum()
            auto, t_auto, learner = run(X, r, "auto", params)
            one, t_one, _ = run(X, r, 1.0, params)
            grid = [run(X, r, eta, params)[0] for eta in GRID]
            i = int(np.argmin(grid))
            row = dict(stream=name, n=X.shape[1], T=X.shape[0], kernel=params["kernel"], r=r,
                       auto=auto / best, eta1=one / best, grid=grid[i] / best,
                       grid_eta=float(GRID[i]), final_eta=learner.eta_,
                       time_ratio=t_auto / t_one)
            rows.append(row)
            print(f"| {name} ({row['n']}, {row['T']}) | {row['kernel']} | {r} | "
                  f"{row['auto']:.3f} | {row['eta1']:.3f} | {row['grid']:.3f} "
                  f"({row['grid_eta']:.3g}) | {row['auto'] / row['grid']:.3f} | "
                  f"{row['auto'] / row['eta1']:.3f} | {row['time_ratio']:.2f} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
