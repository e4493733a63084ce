"""
Online kernel PCA on a long stream: the bounded mode
====================================================

Kuzmin & Warmuth's online kernel PCA (KW Alg. 6) keeps the eigensystem of
the kernel matrix of every past instance, so a trial at t costs O(t^2) to
O(t^3).  :class:`~onlinepca_fast.OnlineKernelPCA` runs it exactly for its
first ``budget`` trials (default 1000); then the instances stored become
landmarks and the learner goes on with the same update in the span of the
``map_size`` (default 64) leading feature-space directions of their kernel
matrix (a Nystrom map), at a cost per trial that no longer grows.

The stream: 8x8 grey patches of scikit-learn's two sample images, 6000
of the first then 6000 of the second (64 features), with the default rbf
kernel (``gamma="scale"``) and ``k = 5``.  Left: the cumulative expected
loss, with the part the approximation adds (the residuals ``k(x, x) -
|phi(x)|^2``, ``approximation_error_``).  Right: the CPU time of each 1000
trials, flat after the switch.  Below: on the first 600 patches, a budget
of 150 against the exact learner.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_sample_images

from onlinepca_fast import OnlineKernelPCA

rng = np.random.default_rng(0)
rows = []
for img in load_sample_images().images:
    grey = img.astype(float).mean(axis=2)
    a = rng.integers(0, grey.shape[0] - 8, 6000)
    b = rng.integers(0, grey.shape[1] - 8, 6000)
    rows.append(np.stack([grey[p:p + 8, q:q + 8].ravel() for p, q in zip(a, b)]))
X = np.concatenate(rows)

kpca = OnlineKernelPCA(5, random_state=0)
seconds = []
for lo in range(0, X.shape[0], 1000):
    t0 = time.process_time()
    kpca.partial_fit(X[lo:lo + 1000])
    seconds.append(time.process_time() - t0)
print(f"gamma_ = {kpca.gamma_:.3g}, {X.shape[0]} trials in {sum(seconds):.1f} s of CPU; "
      f"landmarks {kpca.X_fit_.shape[0]}, feature space {kpca.eigenvalues_.shape[0]}")
print(f"loss {kpca.expected_losses_.sum():.1f}, of which approximation "
      f"{kpca.approximation_error_:.1f}; truncation at the switch {kpca.truncation_error_:.3g}")

# %%
# The loss per trial is the approximation error in the kernel's feature
# space; the residuals are the part of each instance outside the 64
# directions kept, which no hypothesis in that space can capture.

fig, (ax, bx) = plt.subplots(1, 2, figsize=(9, 3.6), layout="constrained")
t = np.arange(1, X.shape[0] + 1)
ax.plot(t, np.cumsum(kpca.expected_losses_), label="expected loss")
ax.axvline(kpca.budget, color="grey", ls=":", label="switch (budget)")
ax.axvline(6000, color="k", ls="--", lw=0.8, label="second image")
ax.set_xlabel("trial")
ax.set_ylabel("cumulative loss")
ax.legend(fontsize=8)
bx.bar(np.arange(len(seconds)) * 1000 + 500, seconds, width=900)
bx.set_xlabel("trial")
bx.set_ylabel("CPU seconds per 1000 trials")
bx.set_yscale("log")

# %%
# A smaller budget against the exact learner, on the first 600 patches
# (the exact learner's trials cost more and more; the bounded mode's do not).

Y = X[:600]
exact = OnlineKernelPCA(5, budget=None, random_state=0).fit(Y)
small = OnlineKernelPCA(5, budget=150, random_state=0).fit(Y)
ratio = small.expected_losses_.sum() / exact.expected_losses_.sum()
print(f"600 patches: budget 150 / exact learner: total loss ratio {ratio:.4f}")
fig, ax = plt.subplots(figsize=(6, 3.4), layout="constrained")
ax.plot(np.cumsum(exact.expected_losses_), label="exact (KW Alg. 6)")
ax.plot(np.cumsum(small.expected_losses_), ls="--", label="budget 150, map_size 64")
ax.axvline(150, color="grey", ls=":")
ax.set_xlabel("trial")
ax.set_ylabel("cumulative loss")
ax.legend()
plt.show()
