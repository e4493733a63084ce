"""The symmetric rank-one eigen-update and its structured eigenvector product.

- ``RankOneUpdate``, ``RankOneChain``: times and accuracy (``time_update``
  is what a learner pays per trial, in place; ``time_rank_one_update`` adds
  the public function's validation, copies and workspace; ``time_eigh``
  is the baseline);
- ``RankOneSpeedup``: eigh over the update, the public function over the
  update, the update over one n x n dgemm, measured in one run;
- ``StructuredProduct`` and the classes after it: the hierarchical
  eigenvector product (``src/hodlr.c``, from ``STRUCTURED_PRODUCT_MIN``
  non-deflated eigenvalues on) against the dense GEMM and one dgemm, its
  crossover, where its time goes, two BLAS threads, and the learners'
  steady state with either product.  docs/performance/structured_product.md
  gives the figures and the profile.

Benchmark against the BLAS's best kernel: unset ``OPENBLAS_CORETYPE`` and
``OPENBLAS_L2_SIZE`` for the run (``tools/bench.sh`` does, and prints the
architecture threadpoolctl reports).
"""

import time

import numpy as np

from onlinepca_fast.kernels import RankOneUpdater, rank_one_update

from . import workloads as W
from .workloads import repeat, rounds, timer, warmup_time  # noqa: F401  (asv's settings)


class RankOneUpdate:
    params = ([100, 1000], ["dense", "structured"])
    param_names = ["n", "z"]
    timeout = 300

    def setup(self, n, z):
        W.one_blas_thread()
        self.evals, self.evecs, self.x = W.rank_one_problem(n, z, seed=0)
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
        new_evals, _ = rank_one_update(self.evals, self.evecs, self.rho, self.x)
        ref = np.linalg.eigvalsh(self.a)
        return float(np.abs(new_evals - ref).max() / np.abs(ref).max())

    track_eigenvalue_error.unit = "relative"

    def track_orthogonality(self, n, z):
        """||Q^T Q - I||_F of the updated eigenvectors."""
        _, new_evecs = rank_one_update(self.evals, self.evecs, self.rho, self.x)
        return float(np.linalg.norm(new_evecs.T @ new_evecs - np.eye(n)))

    track_orthogonality.unit = "absolute"

    def track_residual(self, n, z):
        """||A Q - Q L||_F / ||A||_2."""
        new_evals, new_evecs = rank_one_update(self.evals, self.evecs, self.rho, self.x)
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


class RankOneSpeedup:
    """The in-place update (RankOneUpdater) against eigh of the updated
    matrix, the public ``rank_one_update`` and one n x n dgemm, in one run.

    ``dense``: random spectrum and x, nothing deflates (m = n; targets at
    n = 1000: eigh >= 3x the update, the update <= 1.5 dgemm);
    ``structured``: x on 5 eigen-directions and 80% of the eigenvalues in
    one exact cluster (target at n = 1000: eigh >= 30x); ``cluster80``:
    the same cluster with a dense x (m ~ 0.2 n)."""

    params = ([20, 100, 300, 1000, 2000], ["dense", "structured", "cluster80"])
    param_names = ["n", "case"]
    timeout = 600

    def setup(self, n, case):
        W.one_blas_thread()
        self.case = W.RankOneCase(n, case)
        self.repeat = 5 if n >= 1000 else 9 if n >= 300 else 30

    def track_eigh_over_update(self, n, case):
        return W.ratio(self.case.eigh_job(), self.case.update_job(), self.repeat)

    track_eigh_over_update.unit = "ratio"

    def track_public_over_update(self, n, case):
        return W.ratio(self.case.public_job(), self.case.update_job(), self.repeat)

    track_public_over_update.unit = "ratio"

    def track_update_over_dgemm(self, n, case):
        return W.ratio(self.case.update_job(), W.gemm_job(n), self.repeat)

    track_update_over_dgemm.unit = "ratio"

    def track_non_deflated(self, n, case):
        """m, the non-deflated eigenvalues of the update."""
        return self.case.updated()[2]

    track_non_deflated.unit = "eigenvalues"


class StructuredProduct:
    """The update with a dense z (nothing deflates, rho = -0.7) with the
    default eigenvector product (hierarchical: n >= STRUCTURED_PRODUCT_MIN)
    and with the dense GEMM forced, and one n x n x n dgemm, timed in
    interleaved rounds (targets: default / dgemm <= 0.6 / 0.3 / 0.15 at
    n = 1000 / 2000 / 4000).  The growth exponent of the update time
    between two n is log(ms_b / ms_a) / log(n_b / n_a) of
    ``track_ms_per_update`` (a GEMM's: 3)."""

    params = [1000, 2000, 4000]
    param_names = ["n"]
    timeout = 900

    def setup(self, n):
        W.one_blas_thread()
        self.case = W.RankOneCase(W.size(n, 400), "dense", rho=-0.7)

    def _minima(self, n):
        return W.minima([self.case.update_job(), self.case.update_job("dense"),
                         W.gemm_job(self.case.n)], repeat=5)

    def track_ms_per_update(self, n):
        return 1e3 * self._minima(n)[0]

    track_ms_per_update.unit = "ms"

    def track_structured_over_dgemm(self, n):
        t_structured, _, t_gemm = self._minima(n)
        return t_structured / t_gemm

    track_structured_over_dgemm.unit = "ratio"

    def track_dense_over_dgemm(self, n):
        _, t_dense, t_gemm = self._minima(n)
        return t_dense / t_gemm

    track_dense_over_dgemm.unit = "ratio"

    def track_residual(self, n):
        """|A Q - Q L| / |A| of the hierarchical product's update (<= 1e-12)."""
        return self.case.residual()

    track_residual.unit = "relative"

    def track_orthogonality(self, n):
        """max |Q^T Q - I| after one update (<= 1e-12)."""
        return self.case.orthogonality()

    track_orthogonality.unit = "absolute"


class StructuredCrossover:
    """The update's time with the hierarchical product over its time with
    the dense GEMM at orders around the crossover (the crossover lowered to
    100 for the measurement): how ``STRUCTURED_PRODUCT_MIN`` was chosen."""

    params = [200, 256, 320, 384, 448, 512, 640]
    param_names = ["n"]
    timeout = 300

    def setup(self, n):
        W.one_blas_thread()
        with W.product_settings(min_order=100):  # the updaters keep the setting
            self.case = W.RankOneCase(n, "dense", rho=-0.7)

    def track_structured_over_dense(self, n):
        return W.ratio(self.case.update_job(), self.case.update_job("dense"), repeat=9)

    track_structured_over_dense.unit = "ratio"


class StructuredProfile:
    """Where the structured update's time goes (one BLAS thread,
    :func:`benchmarks.workloads.structured_profile`, computed once a run
    for every n): the hierarchy (levels, blocks, mean and max rank), the
    product's flops over one dgemm's, the compression's, the application's
    and the rest of the update's time (secular solve, Loewner weights,
    deflation, gathering), the application's flop rate over the dgemm's,
    and the update over one dgemm were the product to run at the dgemm's
    rate."""

    params = [1000, 2000, 4000]
    param_names = ["n"]
    timeout = 1800

    def setup_cache(self):
        W.one_blas_thread()
        return {n: W.structured_profile(W.size(n, 400)) for n in self.params}

    #: its track_ benchmarks: name -> (the profile's entry, unit, scale,
    #: docstring), made by _profile_figure below the class
    figures = {
        "levels": ("levels", "levels", 1, None),
        "blocks": ("blocks", "blocks", 1, None),
        "mean_rank": ("mean_rank", "rank", 1, None),
        "max_rank": ("max_rank", "rank", 1, None),
        "flops_over_dgemm": ("flops_over_dgemm", "ratio", 1, None),
        "compression_ms": ("compression", "ms", 1e3, None),
        "application_ms": ("application", "ms", 1e3, None),
        "rest_of_update_ms": ("rest", "ms", 1e3, None),
        "application_rate_over_dgemm": ("application_rate_over_dgemm", "ratio", 1, None),
        "update_over_dgemm": ("update_over_dgemm", "ratio", 1, None),
        "update_over_dgemm_at_dgemm_rate": ("at_dgemm_rate", "ratio", 1, None),
        "product_error": ("error", "absolute", 1, "max |G S (hierarchical) - G @ S|."),
    }


def _profile_figure(name, key, unit, scale, doc):
    """StructuredProfile's benchmark track_<name>: scale * the profile's `key`."""
    def track(self, profiles, n):
        return scale * profiles[n][key]
    track.__name__ = f"track_{name}"
    track.__qualname__ = f"StructuredProfile.track_{name}"
    track.__doc__ = doc
    track.unit = unit
    return track


for _name, _figure in StructuredProfile.figures.items():
    setattr(StructuredProfile, f"track_{_name}", _profile_figure(_name, *_figure))
del _name, _figure


class StructuredThreads:
    """Wall time on one BLAS thread over two, the update with the default
    product and one dgemm (target at n = 4000: the update >= 1.6x).  Wall
    time on a shared machine: meaningful only with two free cores."""

    params = ([2000, 4000], ["update", "dgemm"])
    param_names = ["n", "work"]
    timeout = 900

    def setup(self, n, work):
        n = W.size(n, 400)
        self.job = W.RankOneCase(n, "dense", rho=-0.7).update_job() if work == "update" \
            else W.gemm_job(n)

    def teardown(self, n, work):
        W.one_blas_thread()

    def track_one_thread_over_two(self, n, work):
        def on(k):
            def prepare():
                W.blas_threads(k)  # untimed: threadpoolctl looks up the libraries
                if self.job.prepare is not None:
                    self.job.prepare()
            return W.Job(self.job.run, prepare)
        return W.ratio(on(1), on(2), repeat=5, clock=time.perf_counter)

    track_one_thread_over_two.unit = "ratio"


class StructuredLearners:
    """A learner's time per trial with the dense product forced over its
    time with the default one, in its steady state (targets at 2000:
    CenteredOnlinePCA >= 3x, OnlineKernelPCA >= 2x):
    CenteredOnlinePCA (k = 10, dense state) at dimension n,
    OnlineKernelPCA (rbf) after n rows (minutes of warm-up at 2000)."""

    params = ([500, 2000], ["CenteredOnlinePCA", "OnlineKernelPCA"])
    param_names = ["n", "learner"]
    timeout = 1800

    def setup(self, n, name):
        W.one_blas_thread()

    def track_dense_over_structured(self, n, name):
        return W.learner_product_speedup(name, W.size(n, 340))

    track_dense_over_structured.unit = "ratio"
