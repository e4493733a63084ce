"""
Handwritten digits, class by class
==================================

A real-data stream in the spirit of WK Fig. 6 / YL Fig. 2 (faces): the 8x8
digit images bundled with scikit-learn, streamed one class after the
other, so the best subspace changes at every class boundary.  The
adaptive learner follows the changes; the comparator is the best subspace
per class.  At most 40 images per class here.
"""

import matplotlib.pyplot as plt

from onlinepca_fast.app import experiments, plotting

result = experiments.digits(segment_length=40, seeds=2)
print(experiments.format_table(result))
fig, ax = plt.subplots(figsize=(7.5, 4.8), layout="constrained")
plotting.plot_result(result, ax=ax)
