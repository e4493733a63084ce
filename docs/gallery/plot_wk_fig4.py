"""
WK Fig. 4: online PCA on a shifting stream
==========================================

Warmuth & Kuzmin (Sec. 8) stream points from three rank-2 subspaces of
:math:`\\mathbb{R}^{20}` in turn.  OnlinePCA (WK Alg. 5), the uncentered
version of WK Alg. 6, OnlineAdaptivePCA (YL Alg. 4) and Follow the Leader
run over several seeds; the best fixed subspace in hindsight is the
comparator.  Segments of 150 points here (the paper: 500).
"""

import matplotlib.pyplot as plt

from onlinepca_fast.app import experiments, plotting

result = experiments.wk_fig4(segment_length=150, seeds=4)
print(experiments.format_table(result))
fig, ax = plt.subplots(figsize=(7.5, 4.8), layout="constrained")
plotting.plot_result(result, ax=ax)
