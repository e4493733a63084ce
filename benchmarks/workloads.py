"""The workloads of the benchmarks, defined once: the asv suite (``bench_*.py``)
and the scripts that print ratios (``ratios_*.py``) both measure these.

Every figure here is measured inside one call with its own repeats (the
median over chunks of rows, or the best of several runs by the thread's CPU
time), so that one call gives a figure a stall of a shared machine does not
decide: asv's ``--quick`` calls a benchmark once, and the ``track_``
benchmarks built on these functions still report a robust figure.  BLAS
runs on one thread (:func:`one_blas_thread`): NumPy's and SciPy's OpenBLAS
pools otherwise spin against each other on few cores.

Nothing here is named like an asv benchmark (``time_``, ``track_``,
``peakmem_``, ``mem_``), so asv finds no benchmark in this module.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads OpenBLAS
os.environ.setdefault("OMP_NUM_THREADS", "1")

import copy  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import onlinepca_fast as opf  # noqa: E402
from onlinepca_fast import metrics  # noqa: E402
from onlinepca_fast.bench import ChunkedStream, best_time, rank_one_problem  # noqa: E402
from onlinepca_fast.datasets import digits_stream, shifting_subspaces  # noqa: E402
from onlinepca_fast.kernels import RankOneUpdater  # noqa: E402

#: The learners timed against IncrementalPCA, in both states.
LEARNERS = ("OnlinePCA", "OnlineAdaptivePCA", "CenteredOnlinePCA", "FollowTheLeader")
STATES = ("dense", "clustered")
K, ETA, ALPHA = 10, 1.0, 1e-5
#: The learners whose learn_one is timed against partial_fit.
ROW_LEARNERS = ("OnlinePCA", "OnlineAdaptivePCA", "CenteredOnlinePCA")


def one_blas_thread():
    """Limit BLAS to one thread for the rest of the process (threadpoolctl)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def one_blas_thread_report(threads=False):
    """:func:`one_blas_thread`, then print one line per BLAS library,
    ``# BLAS: <internal_api> <version> architecture <architecture>`` and,
    with `threads`, `` threads <num_threads>``."""
    from threadpoolctl import threadpool_info

    one_blas_thread()
    for info in threadpool_info():
        if info.get("user_api") == "blas":
            line = (f"# BLAS: {info.get('internal_api')} {info.get('version')} "
                    f"architecture {info.get('architecture')}")
            if threads:
                line += f" threads {info.get('num_threads')}"
            print(line)


def make_learner(name, state="dense", n_components=K):
    """A learner of `name` with the benchmarks' parameters (an explicit eta, so
    the figures do not move with the default learning rate)."""
    cls = getattr(opf, name)
    params = dict(n_components=n_components, state=state)
    if name != "FollowTheLeader":
        params.update(eta=ETA, random_state=0)
    if name == "OnlineAdaptivePCA":
        params.update(alpha=ALPHA)
    return cls(**params)


# --- per-trial time against n, IncrementalPCA the baseline --------------------------

class LearnerTrials:
    """A learner warmed up on `warm` power-law rows of dimension n
    (:class:`onlinepca_fast.bench.ChunkedStream`), and `chunks` further
    chunks of `chunk` rows to time it on."""

    def __init__(self, name, n, state, warm=100, chunk=50, chunks=3):
        stream = ChunkedStream("power", n)
        self.learner = make_learner(name, state)
        self.learner.partial_fit(stream.rows(warm))
        self.chunks = [stream.rows(chunk) for _ in range(chunks)]
        self.name, self.n, self.state = name, n, state

    def seconds_per_trial(self):
        """Median over the chunks of the seconds per trial (the learner goes on
        learning: call once per instance)."""
        return median_per_row(self.learner.partial_fit, self.chunks)

    def incremental_pca_per_sample(self):
        """scikit-learn's IncrementalPCA(K).partial_fit on the same chunks,
        seconds per sample (its first chunk initialises it, untimed)."""
        from sklearn.decomposition import IncrementalPCA

        ipca = IncrementalPCA(n_components=K)
        ipca.partial_fit(self.chunks[0])
        return median_per_row(ipca.partial_fit, self.chunks)

    def ratio_to_incremental_pca(self):
        """(learner seconds per trial, IncrementalPCA seconds per sample, ratio)."""
        theirs = self.incremental_pca_per_sample()
        ours = self.seconds_per_trial()
        return ours, theirs, ours / theirs


def median_per_row(fit, chunks, clock=time.perf_counter):
    """Median over `chunks` of the seconds per row of ``fit(chunk)``, timed
    by `clock` (wall time by default; benchmarks/state_targets.py passes
    ``time.thread_time``)."""
    times = []
    for X in chunks:
        t0 = clock()
        fit(X)
        times.append((clock() - t0) / X.shape[0])
    return float(np.median(times))


def clustered_large(n=100_000, trials=200):
    """OnlinePCA (clustered) on `trials` power-law rows of dimension n in
    chunks of 100: the work whose peak memory the suite tracks.  Returns
    the learner."""
    stream = ChunkedStream("power", n)
    learner = make_learner("OnlinePCA", "clustered")
    for _ in range(trials // 100):
        learner.partial_fit(stream.rows(100))
    return learner


# --- the structured eigenvector product against one dgemm ---------------------------

def _best_cpu(fn, repeat, prepare=None):
    return best_time(fn, repeat=repeat, budget=float("inf"), prepare=prepare,
                     clock=time.thread_time)


class RankOneProduct:
    """A rank-one update of order n with a dense z (nothing deflates), timed
    with the structured and with the dense eigenvector product, and one
    n x n x n dgemm; thread CPU time, best of `repeat`."""

    def __init__(self, n, rho=-0.7):
        self.n, self.rho = n, rho
        self.evals, self.evecs, self.x = rank_one_problem(n, "dense", seed=n)
        self.updater = RankOneUpdater(n)
        self.d, self.q = self.evals.copy(), self.evecs.copy()

    def _restore(self):
        self.d[:] = self.evals
        self.q[:] = self.evecs

    def update_seconds(self, product, repeat=3):
        """Seconds of one in-place update with `product` ("structured" or "dense")."""
        def run():
            self.updater.update(self.d, self.q, self.rho, self.x)

        self.updater.product = product
        return _best_cpu(run, repeat, self._restore)

    def gemm_seconds(self, repeat=3):
        rng = np.random.default_rng(0)
        a, b = rng.standard_normal((self.n, self.n)), rng.standard_normal((self.n, self.n))
        out = np.empty((self.n, self.n))
        return _best_cpu(lambda: np.matmul(a, b, out=out), repeat)

    def orthogonality(self, product):
        """max |Q^T Q - I| after one update with `product`."""
        self._restore()
        self.updater.product = product
        self.updater.update(self.d, self.q, self.rho, self.x)
        return float(np.abs(self.q.T @ self.q - np.eye(self.n)).max())


# --- loss against the best fixed subspace on real data ----------------------------

#: YL's parameters on real data (experiments.digits): k = 2, eta = 5, alpha = 1e-4.
DIGITS = dict(n_components=2, eta=5.0, alpha=1e-4)


def digits_regret(name, segment_length=None):
    """(total expected loss, loss of the best fixed 2-dim subspace in
    hindsight, regret) of learner `name` on scikit-learn's bundled digits
    streamed class by class (:func:`onlinepca_fast.datasets.digits_stream`)."""
    X, _ = digits_stream(segment_length=segment_length, random_state=0)
    params = dict(n_components=DIGITS["n_components"])
    if name != "FollowTheLeader":
        params.update(eta=DIGITS["eta"], random_state=0)
    if name == "OnlineAdaptivePCA":
        params.update(alpha=DIGITS["alpha"])
    learner = getattr(opf, name)(**params).fit(X)
    total = float(learner.expected_losses_.sum())
    best = float(metrics.best_subspace_loss(X, DIGITS["n_components"]))
    return total, best, total - best


# --- learn_one against a row inside partial_fit -------------------------------------

def learn_one_overhead(name, n=20, rows=2000, repeats=7, warmup=50):
    """Seconds per row inside one ``partial_fit``, per ``learn_one(row)`` call
    and per river ``learn_one(dict)`` call (None without river), from the same
    warmed-up state over the same rows, best of `repeats` (the cases take
    turns in each round, so a slow spell hits them alike)."""
    try:
        from onlinepca_fast import river as opr
    except ImportError:
        opr = None
    X, _ = shifting_subspaces(n, 2, (rows + warmup,), random_state=0)
    head, body = X[:warmup], X[warmup:]
    warm = make_learner(name, n_components=2).partial_fit(head)
    row_list = [np.array(r) for r in body]  # own 1-D arrays, as a stream delivers them

    def batch(learner):
        learner.partial_fit(body)

    def one_by_one(learner):
        learn_one = learner.learn_one
        for r in row_list:
            learn_one(r)

    cases = [(lambda: copy.deepcopy(warm), batch), (lambda: copy.deepcopy(warm), one_by_one)]
    if opr is not None:
        keys = [f"x{j}" for j in range(n)]
        params = dict(n_components=2, eta=ETA, random_state=0)
        if name == "OnlineAdaptivePCA":
            params.update(alpha=ALPHA)
        model = getattr(opr, name)(**params)
        for r in head:
            model.learn_one(dict(zip(keys, r.tolist())))
        dicts = [dict(zip(keys, r.tolist())) for r in body]

        def dict_by_dict(m):
            learn_one = m.learn_one
            for x in dicts:
                learn_one(x)

        cases.append((lambda: copy.deepcopy(model), dict_by_dict))
    best = [float("inf")] * len(cases)
    for _ in range(repeats):
        for i, (setup, run) in enumerate(cases):
            state = setup()
            start = time.perf_counter()
            run(state)
            best[i] = min(best[i], time.perf_counter() - start)
    times = [t / body.shape[0] for t in best]
    return (times[0], times[1], times[2] if opr is not None else None)
