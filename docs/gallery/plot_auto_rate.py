"""
The default rate against every fixed rate
=========================================

The bundled digits (scikit-learn, n = 64), streamed class by class and
scaled so that the largest row has norm 1, rank k = 5.  Each curve is the total expected
loss of a learner at a fixed eta, over a grid from 0.01 to 1e5, divided by
the loss of the best fixed rank-5 subspace in hindsight; the dashed line
is the same learner with its default ``eta="auto"`` (no tuning), the big
square its loss at eta = 1.  The best fixed eta of OnlinePCA is at the top of the grid
(every eta >= 100 gives the same loss, that of the learner's eta -> inf
limit): ``eta="auto"`` reaches it through its master over the AdaHedge
learner and that limit (docs: Parameter-free rates).  The full table, on
a second stream and for k = 2, 5, 10, is the asv benchmark ``AutoRate``
(``benchmarks/bench_auto_rate.py``).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits

import onlinepca_fast as opf
from onlinepca_fast import metrics

d = load_digits()
X = d.data[np.argsort(d.target, kind="stable")].astype(float)
X /= np.linalg.norm(X, axis=1).max()
k = 5
best = metrics.best_subspace_loss(X, k)
grid = 10.0 ** np.arange(-2.0, 5.01, 0.5)

fig, ax = plt.subplots(figsize=(7.5, 4.8), layout="constrained")
for cls, color in ((opf.OnlinePCA, "C0"), (opf.OnlineAdaptivePCA, "C1")):
    fixed = [cls(k, eta=float(e), random_state=0).fit(X).expected_losses_.sum() / best
             for e in grid]
    auto = cls(k, random_state=0).fit(X).expected_losses_.sum() / best
    ax.plot(grid, fixed, "o-", color=color, ms=3, label=f"{cls.__name__}, fixed eta")
    ax.axhline(auto, color=color, ls="--", label=f'{cls.__name__}, eta="auto"')
    ax.plot([1.0], [fixed[int(np.argmin(np.abs(grid - 1.0)))]], "s", color=color, ms=8,
            label=f"{cls.__name__}, eta = 1")
    print(f"{cls.__name__}: auto {auto:.3f}, best fixed {min(fixed):.3f} "
          f"(eta {grid[int(np.argmin(fixed))]:.3g}), eta=1 "
          f"{fixed[int(np.argmin(np.abs(grid - 1.0)))]:.3f}")
ax.set_xscale("log")
ax.set_xlabel("fixed learning rate eta")
ax.set_ylabel("loss / loss of the best fixed subspace")
ax.set_title("digits class by class, k = 5")
ax.legend()
