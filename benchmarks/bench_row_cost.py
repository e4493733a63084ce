"""The cost of a row with the defaults, against IncrementalPCA (issue 37).

``DefaultsPerRow`` (``bench_learners``) times OnlinePCA's defaults and the
cumulative learners from n = 50; issue 37 asks for both default learners
(OnlinePCA and OnlineAdaptivePCA) and the cumulative ones
(CenteredOnlinePCA, FollowTheLeader) at n = 64, 100, 400 and 1000, on the
full-rank decaying stream and on real streams shipped in scikit-learn:

- ``decay N``: full rank, standard deviations i^-0.7 in a random basis,
  n = N (the stream of ``DefaultsPerRow``: seed 1, 1,800 warm-up rows);
- ``digits``: the 1797 8x8 digits of ``load_digits`` (n = 64), class by
  class, rows scaled so that the largest norm is 1;
- ``patches``: 10x10 grey patches of ``load_sample_images`` (n = 100),
  1000 of one image then 1000 of the other, scaled the same way.

Each learner with its defaults (``eta="auto"``, ``state="auto"``), k = 10,
warmed up on the stream's first rows, then timed per row on chunks of 50
rows (the learner goes on learning), against IncrementalPCA (k = 10)
fed batches of 100 rows of the same stream, the two in interleaved rounds
by thread CPU time (:func:`benchmarks.workloads.ratio`).  Targets: the
default learners <= 1x, the cumulative learners <= 2x.
"""

import onlinepca_fast as opf

from . import workloads as W
from .workloads import repeat, rounds, timer, warmup_time  # noqa: F401  (asv's settings)

#: The real streams: their loaders and the rows they warm the learner on.
REAL = {"digits": (W.digits_rows, 1000), "patches": (W.image_patches, 1200)}
CHUNK = 50


class ArrayPerRow(W.PerRow):
    """:class:`benchmarks.workloads.PerRow` on the rows of an array: the
    learner warmed up on ``X[:warm]``, timed on chunks of the rows after,
    IncrementalPCA started on the 100 rows before them and fed batches of
    100 rows after them."""

    def __init__(self, learner, X, warm, chunk=CHUNK, rounds=4):
        for i in range(0, warm, 300):
            learner.partial_fit(X[i:min(i + 300, warm)])
        rest = X[warm:]
        self.learner, self.rounds = learner, rounds
        self.chunks = [rest[i:i + chunk] for i in range(0, rest.shape[0] - chunk + 1, chunk)]
        self.batches = [rest[i:i + W.IPCA_BATCH]
                        for i in range(0, rest.shape[0] - W.IPCA_BATCH + 1, W.IPCA_BATCH)]
        self.ipca_rows = X[warm - W.IPCA_BATCH:warm].copy()


def learner_with_defaults(name):
    """`name` with its defaults, k = 10 (seeded)."""
    if name == "FollowTheLeader":
        return opf.FollowTheLeader(W.K)
    return getattr(opf, name)(W.K, random_state=0)


class DefaultsRowCost:
    """Per row after warm-up, the learner with its defaults over
    IncrementalPCA (batch 100) per row; the explicit directions m after the
    run; microseconds per row."""

    params = (["decay 64", "decay 100", "decay 400", "decay 1000", "digits", "patches"],
              list(W.LEARNERS))
    param_names = ["stream", "learner"]
    timeout = 1200

    def setup(self, stream, name):
        W.one_blas_thread()
        learner = learner_with_defaults(name)
        if stream in REAL:
            load, warm = REAL[stream]
            X = W.scaled(load())
            if W.TINY:
                X, warm = X[:W.IPCA_BATCH + 2 * CHUNK + 20], W.IPCA_BATCH
            self.work = ArrayPerRow(learner, X, warm)
        else:
            n = int(stream.split()[1])
            self.work = W.PerRow(learner, "decay", n, W.size(1800, 20), chunk=CHUNK,
                                 rounds=4, exponent=0.7, seed=1)

    def track_over_incremental_pca(self, stream, name):
        return self.work.over_ipca()

    track_over_incremental_pca.unit = "ratio"

    def track_us_per_row(self, stream, name):
        return 1e6 * self.work.seconds()

    track_us_per_row.unit = "us"

    def track_explicit_directions(self, stream, name):
        return W.explicit_basis(self.work.learner)[1]

    track_explicit_directions.unit = "directions"
