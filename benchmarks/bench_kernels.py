"""The vector kernels (capping, decomposition, sampling) against the NumPy
reference: times (``time_``) and speed-ups measured in one run (``track_``).
"""

import numpy as np

from onlinepca_fast import kernels, reference

from . import workloads as W
from .workloads import repeat, rounds, timer, warmup_time  # noqa: F401  (asv's settings)


def _capped(n, d, seed):
    return kernels.cap(np.random.default_rng(seed).exponential(size=n) ** 3, d)


class Cap:
    params = ([10**3, 10**5, 10**6], [0.1])
    param_names = ["n", "d/n"]
    timeout = 300

    def setup(self, n, frac):
        self.mu = W.log_weights(n)
        self.w = np.exp(self.mu / 20.0)
        self.d = max(1, int(frac * n))

    def time_cap_log(self, n, frac):
        kernels.cap_log(self.mu, self.d)

    def time_cap(self, n, frac):
        kernels.cap(self.w, self.d)

    def peakmem_cap_log(self, n, frac):
        kernels.cap_log(self.mu, self.d)


class CapReference:
    params = ([10**3, 10**5], [0.1])
    param_names = ["n", "d/n"]
    timeout = 300

    setup = Cap.setup

    def time_cap_log(self, n, frac):
        reference.cap_log(self.mu, self.d)

    def time_cap(self, n, frac):
        reference.cap(self.w, self.d)


class CapSpeedup:
    """The sort-based reference's time over the compiled kernel's, d = n/10,
    log-weights ~ N(0, 20^2) (``cap`` on their exponentials cubed);
    target at n = 10^6: >= 4."""

    params = ([10**3, 10**4, 10**5, 10**6], ["cap_log", "cap"])
    param_names = ["n", "kernel"]
    timeout = 300

    def setup(self, n, kernel):
        W.one_blas_thread()
        self.d = n // 10
        rng = np.random.default_rng(0)
        self.v = rng.normal(scale=20.0, size=n) if kernel == "cap_log" \
            else rng.exponential(size=n) ** 3

    def track_reference_over_compiled(self, n, kernel):
        ours, theirs = getattr(kernels, kernel), getattr(reference, kernel)
        return W.ratio(W.Job(lambda: theirs(self.v, self.d)),
                       W.Job(lambda: ours(self.v, self.d)), repeat=5)

    track_reference_over_compiled.unit = "ratio"


class CapGrowth:
    """cap_log's time at 10 n over its time at n (linear: 10; target <= 12)."""

    params = [10**3, 10**4, 10**5]
    param_names = ["n"]
    timeout = 300

    def setup(self, n):
        W.one_blas_thread()
        self.small, self.large = W.log_weights(n), W.log_weights(10 * n)

    def track_time_at_10n_over_n(self, n):
        return W.ratio(W.Job(lambda: kernels.cap_log(self.large, n)),
                       W.Job(lambda: kernels.cap_log(self.small, n // 10)), repeat=7)

    track_time_at_10n_over_n.unit = "ratio"


class Decompose:
    # O(n^2): kept to sizes that stay under a few seconds
    params = ([10**2, 10**3], [0.1, 0.5])
    param_names = ["n", "d/n"]
    timeout = 300

    def setup(self, n, frac):
        self.d = max(1, int(frac * n))
        self.w = _capped(n, self.d, 1)

    def time_decompose(self, n, frac):
        kernels.decompose(self.w, self.d)

    def time_decompose_reference(self, n, frac):
        reference.decompose(self.w, self.d)


class DecomposeSpeedup:
    """The reference decomposition's time (WK Alg. 2, all corners) over the
    compiled one's, d = n/10."""

    params = [10**2, 10**3, 3 * 10**3]
    param_names = ["n"]
    timeout = 300

    def setup(self, n):
        W.one_blas_thread()
        self.d = n // 10
        self.w = _capped(n, self.d, 0)

    def track_reference_over_compiled(self, n):
        return W.ratio(W.Job(lambda: reference.decompose(self.w, self.d)),
                       W.Job(lambda: kernels.decompose(self.w, self.d)), repeat=3)

    track_reference_over_compiled.unit = "ratio"


class Sample:
    params = ([10**3, 10**5], ["decomposition", "systematic"])
    param_names = ["n", "method"]
    timeout = 300

    def setup(self, n, method):
        if method == "decomposition" and n > 10**4:
            raise NotImplementedError  # quadratic: skipped at this size
        self.d = max(1, n // 100)
        self.w = _capped(n, self.d, 2)
        self.rng = np.random.default_rng(3)

    def time_sample_corner(self, n, method):
        kernels.sample_corner(self.w, self.d, self.rng, method=method)

    def time_sample_corner_reference(self, n, method):
        reference.sample_corner(self.w, self.d, self.rng, method=method)


class SampleSpeedup:
    """Drawing a corner with d = n/100: the decomposition sampler (which
    stops at the corner drawn) and the full decomposition (then a draw)
    over the systematic sampler; target at n = 10^5: >= 50."""

    params = ([10**4, 10**5], ["decomposition", "decompose then draw"])
    param_names = ["n", "baseline"]
    timeout = 300

    def setup(self, n, baseline):
        W.one_blas_thread()
        self.d = n // 100
        self.w = _capped(n, self.d, 0)
        self.rng = np.random.default_rng(1)

    def track_baseline_over_systematic(self, n, baseline):
        if baseline == "decomposition":
            def slow():
                kernels.sample_corner(self.w, self.d, self.rng, method="decomposition")
        else:
            def slow():
                kernels.decompose(self.w, self.d)
        fast = W.Job(lambda: kernels.sample_corner(self.w, self.d, self.rng, method="systematic"))
        return W.ratio(W.Job(slow), fast, repeat=3)

    track_baseline_over_systematic.unit = "ratio"
