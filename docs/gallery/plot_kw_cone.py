"""
KW Figs. 2-3: online kernel PCA on a noisy cone
===============================================

Kuzmin & Warmuth (Sec. 5) sample a 3-d cone :math:`x^2 + y^2 = z^2`
padded with zeros to :math:`\\mathbb{R}^{20}`, with Gaussian noise.  Plain
PCA cannot see a quadric; the degree-2 kernel :math:`(x \\cdot y)^2` turns
it into a linear constraint.  Online kernel PCA (KW Alg. 6) against
offline kernel PCA on the whole data (KW Alg. 2); 300 points here (the
paper: 500).
"""

import matplotlib.pyplot as plt

from onlinepca_fast.app import experiments, plotting

result = experiments.kw_cone(n_samples=300, seeds=2)
print(experiments.format_table(result))
fig, ax = plt.subplots(figsize=(7.5, 4.8), layout="constrained")
plotting.plot_result(result, ax=ax)
