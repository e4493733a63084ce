"""eta="auto" against fixed learning rates on real streams (issue 24): the
quality of the defaults (``track_``, losses; deterministic) and their cost
(a time ratio measured in one run).

Streams, shipped inside scikit-learn (no download; rows scaled by one
common factor so that max |x| = 1): ``digits``, the 1797 8x8 digits
(n = 64) class by class (a shift every ~180 rows); ``patches``, 10x10 grey
patches (n = 100), 1000 of one image of ``load_sample_images`` then 1000 of
the other; not used to design the rates (OnlinePCA and OnlineAdaptivePCA
only): ``cancer`` (breast_cancer, n = 30, by class), ``diabetes`` (n = 10,
by target) and ``macro`` (statsmodels' macrodata, n = 10 log-differences;
skipped without statsmodels).

A loss is divided by the loss of the best fixed rank-k subspace in
hindsight (centered for CenteredOnlinePCA).  The tables take minutes: each
class computes its table once per run (``setup_cache``).
"""

from onlinepca_fast import metrics

from . import auto_rate_candidates as candidates
from . import workloads as W
from .workloads import repeat, rounds, timer, warmup_time  # noqa: F401  (asv's settings)


class AutoRate:
    """eta="auto", eta = 1 and the best eta of a grid 0.01 .. 1e5 (x ~3.16
    steps) in hindsight (targets: auto <= 1.15x the best grid eta and
    <= 1.02x eta = 1), and the time per trial of auto over eta = 1."""

    params = (list(W.AUTO_STREAMS), list(W.AUTO_LEARNERS), list(W.AUTO_KS))
    param_names = ["stream", "learner", "k"]
    timeout = 3600

    def setup_cache(self):
        W.one_blas_thread()
        return W.auto_rate_table()

    def setup(self, table, stream, learner, k):
        if (stream, learner, k) not in table:
            raise NotImplementedError  # not in the table (see workloads.auto_case_runs)
        W.one_blas_thread()
        self.row = table[stream, learner, k]

    def track_auto_over_best_subspace(self, table, stream, learner, k):
        return self.row["auto"]

    track_auto_over_best_subspace.unit = "ratio"

    def track_eta1_over_best_subspace(self, table, stream, learner, k):
        return self.row["eta1"]

    track_eta1_over_best_subspace.unit = "ratio"

    def track_best_eta_over_best_subspace(self, table, stream, learner, k):
        return self.row["best"]

    track_best_eta_over_best_subspace.unit = "ratio"

    def track_auto_over_best_eta(self, table, stream, learner, k):
        return self.row["auto"] / self.row["best"]

    track_auto_over_best_eta.unit = "ratio"

    def track_auto_over_eta1(self, table, stream, learner, k):
        return self.row["auto"] / self.row["eta1"]

    track_auto_over_eta1.unit = "ratio"

    def track_best_eta(self, table, stream, learner, k):
        return self.row["best_eta"]

    track_best_eta.unit = "eta"

    def track_time_auto_over_eta1(self, table, stream, learner, k):
        X = W.auto_stream(stream)
        return W.auto_time_ratio(lambda eta: W.rate_learner(learner, k, eta), X)

    track_time_auto_over_eta1.unit = "ratio"


class AutoRateKernel:
    """OnlineKernelPCA: eta="auto", eta = 1 and the best grid eta over the
    loss of the best rank-r feature-space subspace in hindsight (tr K minus
    the r largest eigenvalues of the whole stream's kernel matrix), the
    auto rate's final eta_ and its time over eta = 1's.  Streams: every
    sixth digit (300 rows, rbf, gamma = 1), KW's noisy cone (400 rows in
    R^20, (x . y)^2), 400 image patches (linear)."""

    params = (list(W.KERNEL_STREAMS), list(W.AUTO_KS))
    param_names = ["stream", "r"]
    timeout = 3600

    def setup_cache(self):
        W.one_blas_thread()
        return W.kernel_auto_rate_table()

    def setup(self, table, stream, r):
        W.one_blas_thread()
        self.row = table[stream, r]

    def track_auto_over_best_subspace(self, table, stream, r):
        return self.row["auto"]

    track_auto_over_best_subspace.unit = "ratio"

    def track_auto_over_best_eta(self, table, stream, r):
        return self.row["auto"] / self.row["best"]

    track_auto_over_best_eta.unit = "ratio"

    def track_auto_over_eta1(self, table, stream, r):
        return self.row["auto"] / self.row["eta1"]

    track_auto_over_eta1.unit = "ratio"

    def track_final_eta(self, table, stream, r):
        return self.row["final_eta"]

    track_final_eta.unit = "eta"

    def track_time_auto_over_eta1(self, table, stream, r):
        X, params = W.kernel_stream(stream)
        return W.auto_time_ratio(lambda eta: W.kernel_learner(r, eta, params), X, repeat=1)

    track_time_auto_over_eta1.unit = "ratio"


#: The candidates of benchmarks/auto_rate_candidates.py, every learner's.
CANDIDATES = ("auto", "inf", "FlipFlop", "master(auto,inf)", "master(auto,inf,4 grid)",
              "master(auto,auto restart)", "FTL(C^t)", "FlipFlop(C^t)", "FTL")


class AutoRateCandidates:
    """The NumPy prototypes of candidate rates beyond AdaHedge
    (``benchmarks/auto_rate_candidates.py``: FlipFlop, the eta -> infinity
    limit, masters over sub-learners), loss over the best fixed subspace's,
    on the design streams; compare with ``AutoRate``."""

    params = (["digits", "patches"], list(W.AUTO_LEARNERS), list(W.AUTO_KS), list(CANDIDATES))
    param_names = ["stream", "learner", "k", "candidate"]
    timeout = 1200

    def setup(self, stream, learner, k, candidate):
        self.X = W.auto_stream(stream)
        self.make = candidates.candidates(learner, self.X.shape[1], k).get(candidate)
        if self.make is None:
            raise NotImplementedError  # not a candidate for this learner
        self.best = metrics.best_subspace_loss(self.X, k,
                                               centered=learner == "CenteredOnlinePCA")

    def track_loss_over_best_subspace(self, stream, learner, k, candidate):
        return candidates.total_loss(self.X, self.make) / self.best

    track_loss_over_best_subspace.unit = "ratio"


class AutoCost:
    """The cost of eta="auto" per row (issue 36 item 4: at most 1.5x a fixed
    eta from n = 1000, and not above IncrementalPCA where eta = 1 is below
    it): OnlinePCA's default (k = 10) on the decaying full-rank stream of
    ``DefaultsPerRow`` (standard deviations i^-0.7, seed 1, 1,800 warm-up
    rows), timed per row on chunks of 50 rows in interleaved rounds against
    the same learner at eta = 1, at the fixed rate auto reached after the
    warm-up (the same number of explicit directions), and IncrementalPCA
    (batches of 100 rows); and eta="adahedge", the rate learner without the
    master (without mixing it follows the same rates as auto's)."""

    params = ([400, 1000, 2000, 4000],)
    param_names = ["n"]
    timeout = 1800

    def setup(self, n):
        import onlinepca_fast as opf

        W.one_blas_thread()
        n, warm = W.size(n, 30), W.size(1800, W.IPCA_BATCH)
        auto = W.PerRow(opf.OnlinePCA(W.K, random_state=0), "decay", n, warm, exponent=0.7,
                        seed=1)
        rate = auto.learner.eta_
        self.jobs = {"auto": auto.job()}
        for label, eta in (("adahedge", "adahedge"), ("eta1", 1.0), ("same rate", rate)):
            fixed = W.PerRow(opf.OnlinePCA(W.K, eta=eta, random_state=0), "decay", n, warm,
                             exponent=0.7, seed=1)
            self.jobs[label] = fixed.job()
        self.jobs["ipca"] = W.ipca_job(auto.ipca_rows, auto.batches)
        self.seconds = dict(zip(self.jobs, W.minima(list(self.jobs.values()), W.size(5, 1))))

    def track_auto_over_eta1(self, n):
        return self.seconds["auto"] / self.seconds["eta1"]

    def track_auto_over_same_rate(self, n):
        return self.seconds["auto"] / self.seconds["same rate"]

    def track_auto_over_ipca(self, n):
        return self.seconds["auto"] / self.seconds["ipca"]

    def track_eta1_over_ipca(self, n):
        return self.seconds["eta1"] / self.seconds["ipca"]

    def track_auto_us_per_row(self, n):
        return 1e6 * self.seconds["auto"]

    def track_adahedge_over_eta1(self, n):
        return self.seconds["adahedge"] / self.seconds["eta1"]

    def track_adahedge_over_same_rate(self, n):
        return self.seconds["adahedge"] / self.seconds["same rate"]

    def track_adahedge_over_ipca(self, n):
        return self.seconds["adahedge"] / self.seconds["ipca"]

    track_auto_over_eta1.unit = track_auto_over_same_rate.unit = "ratio"
    track_auto_over_ipca.unit = track_eta1_over_ipca.unit = "ratio"
    track_adahedge_over_eta1.unit = track_adahedge_over_same_rate.unit = "ratio"
    track_adahedge_over_ipca.unit = "ratio"
    track_auto_us_per_row.unit = "us"
