"""The learners: per-trial time against scikit-learn's IncrementalPCA and the
NumPy reference, the dense against the clustered state, the defaults, the
learn_one overhead, memory and loss on real data.

Every ratio is measured in one run, the two sides in interleaved rounds
(:func:`benchmarks.workloads.interleaved`), so it is comparable between two
commits whatever the machine's load; IncrementalPCA is fed batches of
``IPCA_BATCH`` = 100 rows and timed per row.
"""

import numpy as np

import onlinepca_fast as opf
from onlinepca_fast import reference

from . import workloads as W
from .workloads import repeat, rounds, timer, warmup_time  # noqa: F401  (asv's settings)


class LearnerTrial:
    """Per-trial time of each learner (k = 10, eta = 1) in each state on
    power-law rows (spectrum i^-1 in a random basis) after 100 rows, and
    its ratio to IncrementalPCA per row (targets: OnlinePCA and
    OnlineAdaptivePCA clustered <= 2x at n = 1000, 2000; OnlinePCA at
    n = 100,000 <= 3x), and m, the explicit eigenpairs after the run."""

    params = ([100, 1000, 2000, 10_000, 100_000], list(W.LEARNERS), list(W.STATES))
    param_names = ["n", "learner", "state"]
    timeout = 900

    def setup(self, n, name, state):
        if n > 2000 and state == "dense":
            raise NotImplementedError  # O(n^3) a trial: the clustered state's size
        W.one_blas_thread()
        self.work = W.PerRow(W.make_learner(name, state), "power", n, warm=W.size(100, 20),
                             chunk=20)

    def track_ms_per_trial(self, n, name, state):
        return 1e3 * self.work.seconds()

    track_ms_per_trial.unit = "ms"

    def track_ratio_to_incremental_pca(self, n, name, state):
        return self.work.over_ipca()

    track_ratio_to_incremental_pca.unit = "ratio"

    def track_explicit_directions(self, n, name, state):
        self.work.seconds()
        return W.explicit_basis(self.work.learner)[1]

    track_explicit_directions.unit = "directions"


class StateSpeedup:
    """Each learner's dense state per trial over its clustered state (k = 10,
    eta = 1, 200 power-law rows then 50 timed, from copies)."""

    params = ([1000, 2000, 4000], list(W.LEARNERS))
    param_names = ["n", "learner"]
    timeout = 900

    def setup(self, n, name):
        W.one_blas_thread()

    def track_dense_over_clustered(self, n, name):
        return W.dense_over_clustered(name, n, warm=W.size(200, 20), rows=W.size(50, 5))

    track_dense_over_clustered.unit = "ratio"


class StateCrossover:
    """OnlinePCA's clustered trial over its dense trial with m explicit
    directions (``state="auto"`` switches to dense where this passes 1):
    ``steady``, rows in an m-dimensional subspace (what ``state="auto"`` is
    set from); ``growing``, full-rank rows, each adding a direction
    (:func:`benchmarks.workloads.clustered_over_dense`)."""

    params = (["steady", "growing"], [20, 32, 50, 100, 200, 400, 1000, 2000],
              [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8])
    param_names = ["regime", "n", "m/n"]
    timeout = 600

    def setup(self, regime, n, fraction):
        self.m = max(1, int(round(fraction * n)))
        if self.m > 400:
            raise NotImplementedError  # a clustered warm-up costs ~m^3 a trial
        W.one_blas_thread()

    def track_clustered_over_dense(self, regime, n, fraction):
        trials = W.size(None, 4)
        return W.clustered_over_dense(regime, n, self.m, trials=trials)

    track_clustered_over_dense.unit = "ratio"


class DefaultsPerRow:
    """The learners with their defaults (``eta="auto"``, ``state="auto"``;
    OnlinePCA also with eta = 1 and 100), k = 10, per row after 1,800 rows
    (300 at n = 100,000), on ``decay`` (full rank, standard deviations
    i^-0.7) or ``signal`` (rank-20 signal plus noise) rows; against
    IncrementalPCA per row and against two passes over the basis a trial
    reads (``B @ x``, ``B.T @ y``: the memory-bound floor of a trial);
    and the explicit directions m and the rate eta_ after the run
    (issues 23, 37)."""

    params = (["decay", "signal"], [50, 100, 200, 400, 1000, 2000, 10_000, 100_000],
              ["OnlinePCA", "OnlinePCA eta=1", "OnlinePCA eta=100", "CenteredOnlinePCA",
               "FollowTheLeader"])
    param_names = ["stream", "n", "learner"]
    timeout = 1200

    def setup(self, kind, n, label):
        learner = W.default_learner(label, n)
        if learner is None:
            raise NotImplementedError  # the cumulative learners up to n = 2000
        W.one_blas_thread()
        warm = W.size(1800 if n <= 10_000 else 300, 20)
        self.work = W.PerRow(learner, kind, n, warm, chunk=50, rounds=4, exponent=0.7,
                             seed=1)

    def track_over_incremental_pca(self, kind, n, label):
        return self.work.over_ipca()

    track_over_incremental_pca.unit = "ratio"

    def track_over_two_passes(self, kind, n, label):
        return self.work.over_two_passes()

    track_over_two_passes.unit = "ratio"

    def track_explicit_directions(self, kind, n, label):
        return W.explicit_basis(self.work.learner)[1]

    track_explicit_directions.unit = "directions"

    def track_eta(self, kind, n, label):
        return float(getattr(self.work.learner, "eta_", np.inf))

    track_eta.unit = "eta"


class ReferenceSpeedup:
    """The NumPy reference (eigh every trial) per trial over the compiled
    learner on the WK Sec. 8 stream (targets: >= 20x at n = 20, >= 100x at
    n = 500); ``logm/expm/svd``: the public research code's trial over
    OnlinePCA's."""

    params = ([(20, 2), (500, 10)],
              ["OnlinePCA", "CenteredOnlinePCA", "OnlineAdaptivePCA", "logm/expm/svd"])
    param_names = ["(n, k)", "learner"]
    timeout = 600

    def setup(self, nk, name):
        if name == "logm/expm/svd" and nk[0] > 100:
            raise NotImplementedError  # seconds a trial
        W.one_blas_thread()

    def track_reference_over_compiled(self, nk, name):
        n, k = nk
        return W.speedup_over_reference(name, n, k)

    track_reference_over_compiled.unit = "ratio"


class CappedHedgeSpeed:
    """CappedHedge (k = n/2) per trial over one ``numpy.exp`` over its n
    weights (target at n = 10^5, systematic sampler: <= 10x)."""

    params = ([10**3, 10**5], ["systematic", "decomposition"])
    param_names = ["n", "sampler"]
    timeout = 300

    def setup(self, n, sampler):
        W.one_blas_thread()

    def track_trial_over_exp(self, n, sampler):
        return W.capped_hedge_over_exp(n, sampler)

    track_trial_over_exp.unit = "ratio"


class ClusteredLarge:
    """OnlinePCA (clustered, k = 10) on 200 power-law rows at n = 10^5
    (target: peak RSS < 1.5 GB)."""

    timeout = 300

    def setup(self):
        W.one_blas_thread()

    def peakmem_online_pca_clustered_n100000(self):
        W.clustered_large(W.size(100_000, 1000), W.size(200, 20))


class DigitsRegret:
    """Total loss over that of the best fixed 2-dim subspace in hindsight on
    the digits stream (YL's k = 2, eta = 5, alpha = 1e-4); lower is better.
    A ratio, not the regret: the regret is negative on this shifting stream
    (the learners beat the best fixed subspace), which asv's comparison
    misreads."""

    params = ["OnlinePCA", "OnlineAdaptivePCA", "FollowTheLeader"]
    param_names = ["learner"]
    timeout = 300

    def setup(self, name):
        W.one_blas_thread()

    def track_loss_over_best_subspace(self, name):
        total, best, _ = W.digits_regret(name)
        return total / best

    track_loss_over_best_subspace.unit = "ratio"


class LearnOneOverhead:
    """A learn_one call per row over a row inside partial_fit, from the same
    state over the same 1000 rows (n = 20, k = 2; target: <= 2x): the array
    learner's ``learn_one(row)`` and the river transformer's
    ``learn_one(dict)``."""

    params = (list(W.ROW_LEARNERS), ["array", "river"])
    param_names = ["learner", "call"]
    timeout = 300

    def setup(self, name, call):
        W.one_blas_thread()
        batch, single, river = W.learn_one_jobs(name, rows=W.size(1000, 50))
        if call == "river" and river is None:
            raise NotImplementedError  # river is not installed
        self.batch, self.call = batch, single if call == "array" else river

    def track_ratio_to_batch_row(self, name, call):
        return W.ratio(self.call, self.batch, repeat=5)

    track_ratio_to_batch_row.unit = "ratio"


class PCATrialReference:
    """The NumPy reference learners (eigh every trial), 30 trials."""

    params = ([(20, 2), (100, 10)], ["OnlinePCA", "CenteredOnlinePCA"])
    param_names = ["(n, k)", "learner"]
    timeout = 300

    def setup(self, nk, name):
        W.one_blas_thread()
        n, k = nk
        self.X, _ = W.shifting_subspaces(n, 2, (10, 10, 10), random_state=0)
        self.learner = getattr(reference, name)(n_components=k, eta=W.ETA, random_state=0)

    def time_partial_fit_30(self, nk, name):
        self.learner.partial_fit(self.X)


class ExpertsTrial:
    params = ([10**3, 10**5], ["decomposition", "systematic"])
    param_names = ["n", "sampler"]
    timeout = 300

    def setup(self, n, sampler):
        self.L = np.random.default_rng(0).random((10, n))
        self.learner = opf.CappedHedge(n_components=n // 2, eta=W.ETA, sampler=sampler,
                                       random_state=0).fit(self.L[:1])

    def time_partial_fit_10(self, n, sampler):
        self.learner.partial_fit(self.L)


class Accuracy:
    """Agreement of the maintained eigenvectors after many trials."""

    params = [20, 100]
    param_names = ["n"]
    timeout = 300

    def setup(self, n):
        W.one_blas_thread()
        T = W.size(2000, 50)
        self.X, _ = W.shifting_subspaces(n, 2, (T, T), random_state=1)

    def track_orthogonality_after_4000_trials(self, n):
        pca = opf.CenteredOnlinePCA(n_components=2, eta=W.ETA, centered=False,
                                    random_state=0).fit(self.X)
        Q = pca.eigenvectors_  # n x m: the explicit ones in the clustered state
        return float(np.abs(Q.T @ Q - np.eye(Q.shape[1])).max())

    track_orthogonality_after_4000_trials.unit = "absolute"
