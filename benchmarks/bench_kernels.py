"""asv benchmarks of the vector kernels against the NumPy reference.

``python benchmarks/ratios_kernels.py`` prints the ratios in one run.
"""

import numpy as np

from onlinepca_fast import kernels, reference
from onlinepca_fast.app.bench import log_weights


class Cap:
    params = ([10**3, 10**5, 10**6], [0.1])
    param_names = ["n", "d/n"]
    timeout = 300

    def setup(self, n, frac):
        self.mu = log_weights(n)
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


class Decompose:
    # O(n^2): kept to sizes that stay under a few seconds
    params = ([10**2, 10**3], [0.1, 0.5])
    param_names = ["n", "d/n"]
    timeout = 300

    def setup(self, n, frac):
        self.d = max(1, int(frac * n))
        self.w = kernels.cap(np.random.default_rng(1).exponential(size=n) ** 3, self.d)

    def time_decompose(self, n, frac):
        kernels.decompose(self.w, self.d)

    def time_decompose_reference(self, n, frac):
        reference.decompose(self.w, self.d)


class Sample:
    params = ([10**3, 10**5], ["decomposition", "systematic"])
    param_names = ["n", "method"]
    timeout = 300

    def setup(self, n, method):
        if method == "decomposition" and n > 10**4:
            raise NotImplementedError  # quadratic: skipped at this size
        self.d = max(1, n // 100)
        self.w = kernels.cap(np.random.default_rng(2).exponential(size=n) ** 3, self.d)
        self.rng = np.random.default_rng(3)

    def time_sample_corner(self, n, method):
        kernels.sample_corner(self.w, self.d, self.rng, method=method)

    def time_sample_corner_reference(self, n, method):
        reference.sample_corner(self.w, self.d, self.rng, method=method)

