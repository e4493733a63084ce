"""asv benchmarks of the learners against the NumPy reference learners.

``python benchmarks/ratios_learners.py`` prints the ratios in one run.
"""

import numpy as np

import onlinepca_fast as opf
from onlinepca_fast import reference
from onlinepca_fast.bench import ChunkedStream
from onlinepca_fast.datasets import shifting_subspaces


class PCATrial:
    """Per-trial time of partial_fit on the WK Sec. 8 stream."""

    params = ([(20, 2), (100, 10), (500, 10)],
              ["OnlinePCA", "CenteredOnlinePCA", "OnlineAdaptivePCA", "FollowTheLeader"])
    param_names = ["(n, k)", "learner"]
    timeout = 300

    def setup(self, nk, name):
        n, k = nk
        self.X, _ = shifting_subspaces(n, 2, (100, 100, 100), random_state=0)
        kw = {} if name == "FollowTheLeader" else {"random_state": 0}
        self.learner = getattr(opf, name)(n_components=k, **kw).fit(self.X[:10])

    def time_partial_fit_300(self, nk, name):
        self.learner.partial_fit(self.X)

    def time_learn_one(self, nk, name):
        self.learner.learn_one(self.X[0])


class ClusteredTrial:
    """Per-trial time of OnlinePCA on the capped structure (state="clustered")
    in steady state, power-law rows (``python benchmarks/ratios_clustered.py``
    prints the ratios against IncrementalPCA)."""

    params = ([1000, 2000, 10_000], ["OnlinePCA", "OnlineAdaptivePCA"])
    param_names = ["n", "learner"]
    timeout = 600

    def setup(self, n, name):
        stream = ChunkedStream("power", n)
        self.learner = getattr(opf, name)(10, random_state=0, state="clustered")
        self.learner.partial_fit(stream.rows(500))
        self.X = stream.rows(100)

    def time_partial_fit_100(self, n, name):
        self.learner.partial_fit(self.X)


class CumulativeShortStream:
    """Per-trial time of the cumulative learners on the capped structure: a
    short stream (t ~ 100) in a high dimension costs O(n t), not O(n^2)
    (``python benchmarks/ratios_cumulative.py`` prints the ratios against the
    dense state)."""

    params = ([2000, 20_000], ["CenteredOnlinePCA", "FollowTheLeader"])
    param_names = ["n", "learner"]
    timeout = 600

    def setup(self, n, name):
        stream = ChunkedStream("power", n)
        self.learner = getattr(opf, name)(10, state="clustered")
        self.learner.partial_fit(stream.rows(100))
        self.X = stream.rows(20)

    def time_partial_fit_20(self, n, name):
        self.learner.partial_fit(self.X)


class PCATrialReference:
    params = ([(20, 2), (100, 10)], ["OnlinePCA", "CenteredOnlinePCA"])
    param_names = ["(n, k)", "learner"]
    timeout = 300

    def setup(self, nk, name):
        n, k = nk
        self.X, _ = shifting_subspaces(n, 2, (10, 10, 10), random_state=0)
        self.learner = getattr(reference, name)(n_components=k, random_state=0)

    def time_partial_fit_30(self, nk, name):
        self.learner.partial_fit(self.X)


class ExpertsTrial:
    params = ([10**3, 10**4, 10**5], ["decomposition", "systematic"])
    param_names = ["n", "sampler"]
    timeout = 300

    def setup(self, n, sampler):
        self.L = np.random.default_rng(0).random((10, n))
        self.learner = opf.CappedHedge(n_components=n // 2, sampler=sampler,
                                       random_state=0).fit(self.L[:1])

    def time_partial_fit_10(self, n, sampler):
        self.learner.partial_fit(self.L)


class Accuracy:
    """Agreement of the maintained eigenvectors after many trials."""

    params = [20, 100]
    param_names = ["n"]
    timeout = 300

    def setup(self, n):
        self.X, _ = shifting_subspaces(n, 2, (2000, 2000), random_state=1)

    def track_orthogonality_after_4000_trials(self, n):
        pca = opf.CenteredOnlinePCA(n_components=2, centered=False, random_state=0).fit(self.X)
        Q = pca.eigenvectors_
        return float(np.abs(Q.T @ Q - np.eye(n)).max())


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(
        description=__doc__.strip().splitlines()[0],
        epilog="asv benchmarks: run them with `asv run` (or `asv run --python=same "
               "--quick` for the installed build) from the checkout's root.").parse_args()
    print(__doc__)
