"""asv benchmarks of OnlineKernelPCA against the NumPy reference.

``python benchmarks/ratios_kernel_pca.py`` prints the ratios in one run.
"""

import numpy as np

import onlinepca_fast as opf
from onlinepca_fast import reference
from onlinepca_fast.datasets import noisy_cone

KERNELS = {
    "poly2": dict(kernel="poly", degree=2, gamma=1.0, coef0=0.0),  # KW Sec. 5, rank <= 210
    "rbf": dict(kernel="rbf"),                                       # numerically full rank
}


def _stream(T):
    return noisy_cone(T, 20, noise=0.05, random_state=0, embedding="padded")


class KernelPCATrial:
    """Per-trial time with t past instances (10 trials after a fit on t).

    KW's kernel only: reaching t = 2000 with the (full-rank) rbf kernel
    takes minutes of setup; ratios_kernel_pca.py times both kernels.
    """

    params = ([1000, 2000], ["poly2"])
    param_names = ["t", "kernel"]
    timeout = 600
    number = 1
    repeat = 3

    def setup(self, t, kernel):
        self.X = _stream(t + 200)
        self.learner = opf.OnlineKernelPCA(5, random_state=0, **KERNELS[kernel])
        self.learner.fit(self.X[:t])
        self.learner._ensure_capacity(t + 200)  # no regrowth inside the timing
        self.learner.partial_fit(self.X[t:t + 1])  # builds the engine
        self.next = t + 1

    def time_partial_fit_10(self, t, kernel):
        self.learner.partial_fit(self.X[self.next:self.next + 10])
        self.next += 10

    def track_secular_order(self, t, kernel):
        """Mean order of the secular equations: the non-deflated size + 1."""
        stats = self.learner._engine.stats
        return stats["secular_sum"] / stats["n_updates"]


class KernelPCATrialReference:
    """One reference trial (eigh of the t x t kernel matrix) with t past instances."""

    params = ([1000, 2000], list(KERNELS))
    param_names = ["t", "kernel"]
    timeout = 600
    number = 1
    repeat = 3

    def setup(self, t, kernel):
        X = _stream(t + 1)
        self.x = X[t]
        self.learner = reference.OnlineKernelPCA(5, random_state=0, **KERNELS[kernel])
        self.learner.fit(X[:1])
        self.learner._past = X[:t].copy()  # the state after t trials, without running them

    def time_learn_one(self, t, kernel):
        self.learner.learn_one(self.x)
        self.learner._past = self.learner._past[:-1]


class KernelPCAAccuracy:
    """Agreement of the maintained eigensystem with eigh after a long run."""

    params = list(KERNELS)
    param_names = ["kernel"]
    timeout = 600

    def setup(self, kernel):
        self.X = _stream(1500)
        self.learner = opf.OnlineKernelPCA(5, random_state=0, **KERNELS[kernel]).fit(self.X)

    def track_eigenvalue_error_after_1500_trials(self, kernel):
        lam = self.learner.eigenvalues_
        K = self.learner._gram(self.X, self.X, self.learner._config(20))
        return float(np.abs(lam - np.linalg.eigvalsh(K)).max() / np.abs(lam).max())

    def track_orthogonality_after_1500_trials(self, kernel):
        U = self.learner.eigenvectors_
        return float(np.abs(U.T @ U - np.eye(U.shape[0])).max())
