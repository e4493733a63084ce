"""asv benchmarks: the eigen-updates on a Fortran-ordered eigenvector matrix.

``scipy.linalg.eigh`` returns its eigenvectors in Fortran order; the public
updates take either order.  ``track_fortran_over_c`` is the time of a call
with the Fortran-ordered matrix over the time of the same call with the
C-ordered one (issue 40: at most 1.2), both timed in interleaved rounds in
one run (thread CPU time, the minimum of each), so that a slow spell of a
shared machine hits both alike.
"""

import numpy as np

from onlinepca_fast.kernels import bordered_update, rank_one_update

from . import workloads as W
from .bench_dense_update import interleaved_minima


class ArrayOrder:
    """The ratio of Fortran to C order for each public update (a dense z,
    nothing deflates: the updates' costliest case)."""

    params = ([1000, 2000, 4000], ["rank_one_update", "bordered_update"])
    param_names = ["n", "kernel"]
    timeout = 900

    def setup(self, n, kernel):
        W.one_blas_thread()
        evals, evecs, x = W.rank_one_problem(n, "dense", seed=n)
        c, f = np.ascontiguousarray(evecs), np.asfortranarray(evecs)
        if kernel == "rank_one_update":
            self.jobs = [lambda: rank_one_update(evals, f, 0.7, x),
                         lambda: rank_one_update(evals, c, 0.7, x)]
        else:
            self.jobs = [lambda: bordered_update(evals, f, x, 0.3),
                         lambda: bordered_update(evals, c, x, 0.3)]

    def track_fortran_over_c(self, n, kernel):
        t_f, t_c = interleaved_minima(self.jobs, rounds=5)
        return t_f / t_c

    track_fortran_over_c.unit = "ratio"
