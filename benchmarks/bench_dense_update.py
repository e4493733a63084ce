"""asv benchmarks: the in-place dense rank-one update (issue 37).

A dense z (nothing deflates), ``RankOneUpdater.update`` in place, the
hierarchical eigenvector product:

- ``track_ratio_to_dgemm``: its thread CPU time over one n x n x n dgemm's
  (targets <= 0.3 at n = 2000, <= 0.15 at 4000), one BLAS thread, the two
  timed in interleaved rounds;
- ``track_two_thread_speedup``: the wall time of the update with one
  thread over its time with two threads of the updater's own (target
  >= 1.6 at n = 4000), BLAS on one thread, interleaved.  A machine whose
  cores are busy with other work shows less (and a single-core one 1).

The minimum of each job over its rounds, so that a slow spell of a shared
machine does not decide the ratio.
"""

import time

import numpy as np

from onlinepca_fast.kernels import RankOneUpdater

from . import workloads as W


def interleaved_minima(jobs, rounds, clock=time.thread_time, prepare=None):
    """The minimum time of each job over `rounds` rounds of one call each
    (`prepare`, untimed, before every call), after one untimed call each."""
    for job in jobs:
        if prepare:
            prepare()
        job()
    times = [[] for _ in jobs]
    for _ in range(rounds):
        for job, t in zip(jobs, times):
            if prepare:
                prepare()
            t0 = clock()
            job()
            t.append(clock() - t0)
    return [min(t) for t in times]


class DenseUpdate:
    """The update of order n against one dgemm, and with two threads."""

    params = [2000, 4000]
    param_names = ["n"]
    timeout = 1800

    def setup(self, n):
        W.one_blas_thread()
        self.evals, self.evecs, self.x = W.rank_one_problem(n, "dense", seed=n)
        self.d, self.q = self.evals.copy(), self.evecs.copy()
        self.one = RankOneUpdater(n)
        self.two = RankOneUpdater(n, n_threads=2)
        rng = np.random.default_rng(0)
        self.a = np.asfortranarray(rng.standard_normal((n, n)))
        self.b = np.asfortranarray(rng.standard_normal((n, n)))
        self.c = np.zeros((n, n), order="F")

    def _restore(self):
        self.d[:] = self.evals
        self.q[:] = self.evecs

    def _update(self, updater):
        return lambda: updater.update(self.d, self.q, -0.7, self.x)

    def track_ratio_to_dgemm(self, n):
        from scipy.linalg.blas import dgemm

        def gemm():
            dgemm(1.0, self.a, self.b, c=self.c, overwrite_c=1)

        t_update, t_gemm = interleaved_minima([self._update(self.one), gemm], rounds=3,
                                              prepare=self._restore)
        return t_update / t_gemm

    track_ratio_to_dgemm.unit = "ratio"

    def track_two_thread_speedup(self, n):
        t_one, t_two = interleaved_minima([self._update(self.one), self._update(self.two)],
                                          rounds=5, clock=time.perf_counter,
                                          prepare=self._restore)
        return t_one / t_two

    track_two_thread_speedup.unit = "ratio"
