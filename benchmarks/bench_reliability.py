"""Reliability: two learners in two threads, long-run drift, memory growth,
Ctrl-C latency inside expensive trials (issues 7, 22)."""

import numpy as np

from . import workloads as W
from .workloads import repeat, rounds, timer, warmup_time  # noqa: F401  (asv's settings)


class ThreadSpeedup:
    """Two independent learners (n = 200, k = 10, 300 trials each) run one
    after the other over their wall time in two threads (the trial loop
    releases the GIL: ~2 on two free cores, ~1 on a busy machine), the
    results the same either way."""

    params = ["OnlinePCA", "CenteredOnlinePCA"]
    param_names = ["learner"]
    timeout = 600

    def setup(self, name):
        W.one_blas_thread()

    def track_sequential_over_threaded(self, name):
        return W.two_threads_speedup(name, T=W.size(300, 30))

    track_sequential_over_threaded.unit = "ratio"


class Drift:
    """After T trials at n = 20 (eta = 0.5, k = 2), with and without the
    periodic re-orthogonalisation: ||Q^T Q - I||_2 of WK Alg. 6 (the
    cumulative learner, uncentered) and of OnlinePCA, and the distance of
    Alg. 6's eigenvalues from eigvalsh of the matrix formed from the data,
    over its norm.  Computed once for all parameters (``setup_cache``)."""

    params = ([10**5, 10**6], [10_000, None])
    param_names = ["trials", "reorthogonalize_every"]
    timeout = 1800

    def setup_cache(self):
        W.one_blas_thread()
        return {(trials, every): W.drift(W.size(trials, 200), every, chunk=W.size(50_000, 100))
                for trials in self.params[0] for every in self.params[1]}

    def track_orthogonality_alg6(self, figures, trials, every):
        return figures[trials, every][0]

    track_orthogonality_alg6.unit = "absolute"

    def track_eigenvalue_error_alg6(self, figures, trials, every):
        return figures[trials, every][1]

    track_eigenvalue_error_alg6.unit = "relative"

    def track_orthogonality_online_pca(self, figures, trials, every):
        return figures[trials, every][2]

    track_orthogonality_online_pca.unit = "absolute"


class MemoryGrowth:
    """Traced memory gained over 10^5 trials (n = 20) after a warm-up, with
    and without the loss records (without: 0 bytes expected)."""

    params = [False, True]
    param_names = ["record_losses"]
    timeout = 600

    def setup(self, record):
        W.one_blas_thread()

    def track_bytes_gained_1e5_trials(self, record):
        return W.memory_growth(T=W.size(10**5, 2000), record=record)

    track_bytes_gained_1e5_trials.unit = "bytes"


class CtrlCLatency:
    """Seconds from SIGINT to the KeyboardInterrupt caught around
    ``partial_fit`` (median and max over 5 shots; target <= 0.5 s), and one
    trial's seconds (the latency were a trial not interruptible):
    ``OnlinePCA(share="past")`` at n = 700 and OnlineKernelPCA (rbf) after
    t = 2,500 instances (its state takes minutes to build: once, in
    ``setup_cache``)."""

    params = ["share_past", "kernel_rbf"]
    param_names = ["case"]
    timeout = 3600

    def setup_cache(self):
        W.one_blas_thread()
        return {case: W.interrupt_case(case, n=W.size(700, 60), t=W.size(2500, 40))
                for case in self.params}

    def setup(self, states, case):
        W.one_blas_thread()
        self.before, self.X = states[case]
        self.per_trial = W.trial_seconds(self.before, self.X)

    def _latencies(self):
        return W.interrupt_latencies(self.before, self.X, W.size(5, 2), self.per_trial)

    def track_latency_median(self, states, case):
        return float(np.median(self._latencies()))

    track_latency_median.unit = "seconds"

    def track_latency_max(self, states, case):
        return float(np.max(self._latencies()))

    track_latency_max.unit = "seconds"

    def track_trial_seconds(self, states, case):
        return self.per_trial

    track_trial_seconds.unit = "seconds"
