"""
YL Fig. 1: adaptive regret of the fixed share
=============================================

Yuan & Lamperski's fixed share (``OnlineAdaptivePCA``, YL Alg. 4, applied
before capping) against plain OnlinePCA and Follow the Leader on a stream
whose subspace changes: the fixed share keeps the regret low on every
interval.  Segments of 100 points here (the paper: 200).
"""

import matplotlib.pyplot as plt

from onlinepca_fast.app import experiments, plotting

result = experiments.yl_fig1(segment_length=100, seeds=4)
print(experiments.format_table(result))
fig, ax = plt.subplots(figsize=(7.5, 4.8), layout="constrained")
plotting.plot_result(result, ax=ax)
