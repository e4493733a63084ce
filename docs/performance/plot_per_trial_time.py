"""
Per-trial time against the dimension
====================================

Seconds per trial of :class:`onlinepca_fast.OnlinePCA` (k = 5) against the
dimension n, log-log, on the machine that built this page (one BLAS
thread), with two baselines:

* the NumPy reference :class:`onlinepca_fast.reference.OnlinePCA`, which
  forms W and calls ``numpy.linalg.eigh`` every trial (O(n^3));
* scikit-learn's :class:`~sklearn.decomposition.IncrementalPCA`, a
  different (non-randomized, no regret guarantee) online PCA, fed
  mini-batches of 10 rows (it needs at least k rows per call), its time
  divided per row.

Our trial is one rank-one eigen-update (O(n^2) plus one matrix product of
the non-deflated block); on a low-rank stream most eigenvalues sit in one
capped cluster and deflate.  Each point is the median over chunks of about
half a second (:func:`onlinepca_fast.app.bench.per_trial`).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.decomposition import IncrementalPCA

import onlinepca_fast as opf
from onlinepca_fast import reference
from onlinepca_fast.app.bench import blas_limit, low_rank_stream, per_trial

k, budget = 5, 0.5
sizes = [10, 20, 50, 100, 200, 400]
rows = {"onlinepca_fast.OnlinePCA": [], "reference.OnlinePCA (eigh)": [],
        "IncrementalPCA (per row)": []}
with blas_limit(1):
    for n in sizes:
        X = low_rank_stream(4000, n, seed=n)
        rows["onlinepca_fast.OnlinePCA"].append(
            per_trial(lambda: opf.OnlinePCA(k, random_state=0), X, budget, 200))
        rows["reference.OnlinePCA (eigh)"].append(
            per_trial(lambda: reference.OnlinePCA(k, random_state=0), X, budget,
                      max(2, 4000 // n ** 2)))
        batch = 10

        class _PerRow:  # IncrementalPCA on mini-batches, timed per row
            def __init__(self):
                self.ipca = IncrementalPCA(n_components=k)

            def partial_fit(self, Y):
                for i in range(0, len(Y) - batch + 1, batch):
                    self.ipca.partial_fit(Y[i:i + batch])
                return self

        rows["IncrementalPCA (per row)"].append(per_trial(_PerRow, X, budget, 200))

print(f"{'n':>5} " + " ".join(f"{name:>28}" for name in rows))
for i, n in enumerate(sizes):
    print(f"{n:>5} " + " ".join(f"{rows[name][i] * 1e6:>25.1f} us" for name in rows))

fig, ax = plt.subplots(figsize=(6.4, 4.2))
for (name, times), marker in zip(rows.items(), "osd"):
    ax.loglog(sizes, times, marker=marker, label=name)
ax.set_xlabel("dimension n")
ax.set_ylabel("seconds per trial")
ax.set_title(f"per-trial time, k = {k}, one BLAS thread")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
