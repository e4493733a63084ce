"""OnlineKernelPCA against the NumPy reference (eigh of the kernel matrix
every trial), on KW Sec. 5's noisy cone in R^20.

With KW's degree-2 kernel the kernel matrix has rank <= 210 and the
bordered update deflates all but ~211 eigenpairs (the secular order,
non-deflated eigenpairs + 1, is ~212); with ``rbf`` it is numerically full
rank, little deflates and the update is O(t^3) a trial.
"""

import numpy as np

import onlinepca_fast as opf
from onlinepca_fast import reference

from . import workloads as W
from .workloads import repeat, rounds, timer, warmup_time  # noqa: F401  (asv's settings)


def _gram(X, kernel):
    return reference.gram(X, X, **W.KERNELS[kernel])  # gamma: the learners' default


class _PerTrial:
    """What a trial costs with t past instances: a few slow calls a sample."""

    param_names = ["t", "kernel"]
    timeout = 300
    number = 1
    repeat = 3


class KernelPCATrial(_PerTrial):
    """Per-trial time with t past instances (10 trials after a fit on t)."""

    params = ([500, 1000], ["poly2"])

    def setup(self, t, kernel):
        W.one_blas_thread()
        self.learner, self.X = W.kernel_pca_after(t, kernel)
        # grows the buffers by half (no regrowth inside the timing), builds the engine
        self.learner.partial_fit(self.X[t:t + 1])
        self.next = t + 1

    def time_partial_fit_10(self, t, kernel):
        self.learner.partial_fit(self.X[self.next:self.next + 10])
        self.next += 10

    def track_secular_order(self, t, kernel):
        """Mean order of the secular equations: the non-deflated size + 1."""
        return W.secular_order(self.learner)

    track_secular_order.unit = "order"


class KernelPCASpeedup:
    """What a reference trial costs with t past instances (the t x t kernel
    matrix formed and its eigh) over a compiled trial, the learner going on
    learning (target at t = 2,000: >= 5x); and the secular order.  The rbf
    kernel's state at t = 2000 takes minutes to build."""

    params = ([1000, 2000], list(W.KERNELS))
    param_names = ["t", "kernel"]
    timeout = 1800

    def setup(self, t, kernel):
        W.one_blas_thread()
        self.learner, X = W.kernel_pca_after(W.size(t, 100), kernel, extra=100)
        t = W.size(t, 100)
        self.learner.partial_fit(X[t:t + 1])  # grows the buffers: none inside the timing
        self.rows = [X[i:i + 5] for i in range(t + 1, t + 96, 5)]
        past = X[:t]
        params = W.KERNELS[kernel]
        self.reference = W.Job(lambda: np.linalg.eigh(reference.gram(past, past, **params)))

    def track_reference_over_compiled(self, t, kernel):
        fast = W.chunks_job(self.learner.partial_fit, self.rows)
        return W.ratio(self.reference, fast, repeat=3)

    track_reference_over_compiled.unit = "ratio"

    def track_secular_order(self, t, kernel):
        return W.secular_order(self.learner)

    track_secular_order.unit = "order"


class KernelPCATrialReference(_PerTrial):
    """What a reference trial costs with t past instances: the eigh of the
    t x t kernel matrix (reference.OnlineKernelPCA recomputes it each trial)."""

    params = ([500, 1000], list(W.KERNELS))

    def setup(self, t, kernel):
        W.one_blas_thread()
        self.K = _gram(W.cone_stream(t), kernel)

    def time_learn_one(self, t, kernel):
        np.linalg.eigh(self.K)


class KernelPCAAccuracy:
    """Agreement of the maintained eigensystem with eigh after 600 trials (the
    rbf kernel's update is O(t^3) a trial: 1500 trials took minutes)."""

    params = list(W.KERNELS)
    param_names = ["kernel"]
    timeout = 300

    def setup(self, kernel):
        W.one_blas_thread()
        self.X = W.cone_stream(W.size(600, 60))
        self.learner = opf.OnlineKernelPCA(5, eta=W.ETA, random_state=0, budget=None,
                                           **W.KERNELS[kernel]).fit(self.X)

    def track_eigenvalue_error_after_600_trials(self, kernel):
        lam = self.learner.eigenvalues_
        K = _gram(self.X, kernel)
        return float(np.abs(lam - np.linalg.eigvalsh(K)).max() / np.abs(lam).max())

    track_eigenvalue_error_after_600_trials.unit = "relative"

    def track_orthogonality_after_600_trials(self, kernel):
        U = self.learner.eigenvectors_
        return float(np.abs(U.T @ U - np.eye(U.shape[0])).max())

    track_orthogonality_after_600_trials.unit = "absolute"
