"""asv benchmarks of the symmetric rank-one eigen-update.

``time_update`` is what a learner pays per trial (RankOneUpdater, in place,
no allocation); ``time_rank_one_update`` adds the public function's
validation, copies and workspace allocation; ``time_eigh`` is the
baseline, numpy.linalg.eigh of the updated matrix.
"""

import numpy as np

from onlinepca_fast.app.bench import rank_one_problem
from onlinepca_fast.kernels import RankOneUpdater, rank_one_update

from . import workloads as W


def _problem(n, structured, seed=0):
    return rank_one_problem(n, "structured" if structured else "dense", seed)


class RankOneUpdate:
    params = ([100, 1000], ["dense", "structured"])
    param_names = ["n", "z"]
    timeout = 300
    repeat = (3, 10, 10.0)

    def setup(self, n, z):
        W.one_blas_thread()
        self.evals, self.evecs, self.x = _problem(n, z == "structured")
        self.rho = 0.7
        a = (self.evecs * self.evals) @ self.evecs.T
        self.a = a + self.rho * np.outer(self.x, self.x)
        self.updater = RankOneUpdater(n)
        self.work_evals = self.evals.copy()
        self.work_evecs = self.evecs.copy()
        self.sign = 1.0

    def time_update(self, n, z):
        # Alternate +rho and -rho so that repeated calls keep returning to
        # the same matrix instead of drifting.
        self.updater.update(self.work_evals, self.work_evecs,
                            self.sign * self.rho, self.x)
        self.sign = -self.sign

    def time_rank_one_update(self, n, z):
        rank_one_update(self.evals, self.evecs, self.rho, self.x)

    def time_eigh(self, n, z):
        np.linalg.eigh(self.a)

    def track_eigenvalue_error(self, n, z):
        """max |lambda - lambda_eigh| / ||A||_2."""
        new_evals, _ = rank_one_update(self.evals, self.evecs, self.rho,
                                       self.x)
        ref = np.linalg.eigvalsh(self.a)
        return float(np.abs(new_evals - ref).max() / np.abs(ref).max())

    track_eigenvalue_error.unit = "relative"

    def track_orthogonality(self, n, z):
        """||Q^T Q - I||_F of the updated eigenvectors."""
        _, new_evecs = rank_one_update(self.evals, self.evecs, self.rho,
                                       self.x)
        return float(np.linalg.norm(new_evecs.T @ new_evecs - np.eye(n)))

    track_orthogonality.unit = "absolute"

    def track_residual(self, n, z):
        """||A Q - Q L||_F / ||A||_2."""
        new_evals, new_evecs = rank_one_update(self.evals, self.evecs,
                                               self.rho, self.x)
        resid = np.linalg.norm(self.a @ new_evecs - new_evecs * new_evals)
        return float(resid / np.abs(new_evals).max())

    track_residual.unit = "relative"


class RankOneChain:
    """10^3 chained in-place updates with random signs: the learners' loop."""

    params = [50, 200]
    param_names = ["n"]
    timeout = 300

    def setup(self, n):
        W.one_blas_thread()
        rng = np.random.default_rng(1)
        self.xs = rng.standard_normal((1000, n)) / np.sqrt(n)
        self.rhos = rng.choice([-1.0, 1.0], 1000)
        self.n = n

    def _chain(self):
        n = self.n
        evals, evecs = np.full(n, -np.log(n)), np.eye(n)
        upd = RankOneUpdater(n)
        for x, rho in zip(self.xs, self.rhos):
            upd.update(evals, evecs, rho, x)
        return evals, evecs

    def time_chain(self, n):
        self._chain()

    def track_chain_orthogonality(self, n):
        _, evecs = self._chain()
        return float(np.linalg.norm(evecs.T @ evecs - np.eye(n)))

    track_chain_orthogonality.unit = "absolute"


class StructuredProduct:
    """The update with a dense z with the hierarchical eigenvector product
    (the default from ``STRUCTURED_PRODUCT_MIN`` on) and with the dense GEMM
    forced, against one n x n x n dgemm: thread CPU time, best of 3 inside
    one call (``python benchmarks/ratios_structured.py`` prints the same)."""

    params = ([1000, 2000], ["structured", "dense"])
    param_names = ["n", "product"]
    timeout = 300

    def setup(self, n, product):
        W.one_blas_thread()
        self.work = W.RankOneProduct(n)

    def track_ms_per_update(self, n, product):
        return 1e3 * self.work.update_seconds(product)

    track_ms_per_update.unit = "ms"

    def track_ratio_to_dgemm(self, n, product):
        return self.work.update_seconds(product) / self.work.gemm_seconds()

    track_ratio_to_dgemm.unit = "ratio"

    def track_orthogonality(self, n, product):
        """max |Q^T Q - I| after one update."""
        return self.work.orthogonality(product)

    track_orthogonality.unit = "absolute"
