"""
WK Fig. 6: long-term memory by mixing the past
==============================================

The stream returns to subspaces it has seen before.  Mixing in the average
of the past parameters (``share="past"``, WK eq. 20) lets the learner
recover a known subspace faster than uniform mixing (``share="uniform"``,
WK Sec. 8); the regret is against the best partition of the stream into
its segments.  n = 10 and segments of 60 points here.
"""

import matplotlib.pyplot as plt

from onlinepca_fast.app import experiments, plotting

result = experiments.wk_fig6(n_features=10, segment_length=60, seeds=2)
print(experiments.format_table(result))
fig, ax = plt.subplots(figsize=(7.5, 4.8), layout="constrained")
plotting.plot_result(result, ax=ax)
