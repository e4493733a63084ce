"""The workloads of the asv suite (``benchmarks/bench_*.py``), defined once.

Every benchmark module builds its data and its learners here, and times
through one helper, :func:`interleaved`: the thing measured and its
baseline take turns in each round (so that a slow spell of a shared
machine hits both alike), each round's time is read by the thread's CPU
clock unless a figure needs wall time, and a ratio is the minimum of one
over the minimum of the other.  A ``track_`` benchmark built on it reports
a figure measured in one run, inside one call: comparable between two
commits even when the machine's load differs (``benchmarks/README.md``).

BLAS runs on one thread: NumPy's and SciPy's OpenBLAS pools otherwise spin
against each other on few cores (:func:`blas_threads` for the figures of
two threads).

The process-wide switches of the compiled core (the dense eigenvector
product, the hierarchical product's tuning, the exp kernels' instruction
set) and the learners' private attributes are used in one section below,
"switches and private hooks", and nowhere else under ``benchmarks/``.

Nothing here is named like an asv benchmark (``time_``, ``track_``,
``peakmem_``, ``mem_``, ``timeraw_``), so asv finds no benchmark in this
module.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads OpenBLAS
os.environ.setdefault("OMP_NUM_THREADS", "1")

import contextlib  # noqa: E402
import copy  # noqa: E402
import gc  # noqa: E402
import itertools  # noqa: E402
import math  # noqa: E402
import pickle  # noqa: E402
import signal  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402
from typing import Callable, NamedTuple, Optional  # noqa: E402

import numpy as np  # noqa: E402
import scipy.linalg  # noqa: E402

import onlinepca_fast as opf  # noqa: E402
from onlinepca_fast import metrics, reference  # noqa: E402
from onlinepca_fast.app.bench import (  # noqa: E402,F401  (re-exported: the benchmarks' data)
    ChunkedStream,
    cone_stream,
    log_weights,
    low_rank_stream,
    rank_one_problem,
)
from onlinepca_fast.datasets import digits_stream, noisy_cone, shifting_subspaces  # noqa: E402
from onlinepca_fast.kernels import RankOneUpdater, rank_one_update  # noqa: E402

#: The learners timed against IncrementalPCA, in both states.
LEARNERS = ("OnlinePCA", "OnlineAdaptivePCA", "CenteredOnlinePCA", "FollowTheLeader")
STATES = ("dense", "clustered")
K, ETA, ALPHA = 10, 1.0, 1e-5
#: The learners whose learn_one is timed against partial_fit.
ROW_LEARNERS = ("OnlinePCA", "OnlineAdaptivePCA", "CenteredOnlinePCA")
#: Rows per IncrementalPCA.partial_fit call, the baseline of the per-row figures.
IPCA_BATCH = 100


# --- sizes -------------------------------------------------------------------------

#: Set by tests/test_benchmarks.py: every workload at a size that runs in
#: about a second, so that the test suite calls each benchmark once.
TINY = False


def size(full, tiny):
    """`full`, or `tiny` in the test suite's run (:data:`TINY`)."""
    return tiny if TINY else full


# --- timing ----------------------------------------------------------------------

# asv's settings of the time_ benchmarks, imported by every benchmark module
# (asv reads them from the module): the calling thread's CPU time, so that
# another process taking the core does not count (one BLAS thread: all the
# work is on this thread), in 2 rounds (asv runs each round of each
# parameter in a process of its own: more rounds cost more imports than
# samples) of 3-10 samples each, so that a full run (not --quick, which
# takes one sample) gives `asv compare` the statistics to tell a change
# from noise.
timer = time.thread_time
rounds = 2
repeat = (3, 10, 10.0)
warmup_time = 0.2


#: The shortest round :func:`interleaved` times a job for (seconds).
MIN_TIMED = 0.005


class Job(NamedTuple):
    """A unit of work timed by :func:`interleaved`: ``run()`` timed,
    ``prepare()`` (if any) untimed before each run, `count` the rows (or
    calls) one run does, so that the times are per row."""

    run: Callable[[], object]
    prepare: Optional[Callable[[], object]] = None
    count: int = 1


def interleaved(jobs, repeat=5, clock=time.thread_time):
    """Seconds per row of each job in each of `repeat` rounds.

    Each job runs once untimed first (a warm-up: caches, lazily built
    engines, BLAS buffers); then every round runs each job once, in turn.
    Timed one job after the other instead, a slow spell of a shared machine
    moved a ratio of minima by 10-20%.  `clock`: the calling thread's CPU
    time by default (one BLAS thread: all the work is on this thread, and
    the time other processes take the core is not counted);
    ``time.perf_counter`` for work on several threads.

    A job without ``prepare`` whose run takes less than :data:`MIN_TIMED`
    runs that many times over in each round (as timeit's ``number``): a
    round of microseconds measures the clock and the caches more than the
    work (two runs of a 30 us ratio differed by 2x).

    Returns a list (one per job) of lists (one per round) of seconds.
    """
    number = []
    for job in jobs:
        if job.prepare is not None:
            job.prepare()
        t0 = clock()
        job.run()
        warm = clock() - t0
        number.append(1 if job.prepare is not None or warm >= MIN_TIMED
                      else min(10_000, math.ceil(MIN_TIMED / max(warm, 1e-7))))
    times = [[] for _ in jobs]
    for _ in range(repeat):
        for job, calls, seconds in zip(jobs, number, times):
            if job.prepare is not None:
                job.prepare()
            t0 = clock()
            for _ in range(calls):
                job.run()
            seconds.append((clock() - t0) / (calls * job.count))
    return times


def minima(jobs, repeat=5, clock=time.thread_time):
    """The minimum over the rounds of :func:`interleaved`, per job."""
    return [min(t) for t in interleaved(jobs, repeat, clock)]


def ratio(job, baseline, repeat=5, clock=time.thread_time):
    """min(job) / min(baseline), timed in interleaved rounds."""
    ours, theirs = minima([job, baseline], repeat, clock)
    return ours / theirs


def chunks_job(fit, chunks):
    """A job that calls ``fit(chunk)`` on the next of `chunks` (equal sizes;
    cycled) each run: a learner that goes on learning."""
    rows = itertools.cycle(chunks)
    current = [None]

    def prepare():
        current[0] = next(rows)

    return Job(lambda: fit(current[0]), prepare, chunks[0].shape[0])


def copy_job(warm, rows, first=1):
    """A job that fits a copy of `warm` (taken untimed) on `rows`: the same
    state and rows every run.  The copy's first `first` rows are fitted
    untimed: a copy builds its engine on its first row (the workspace
    allocated and first touched, ~3x a steady trial at n = 2000)."""
    current = [None]

    def prepare():
        current[0] = copy.deepcopy(warm)
        if first:
            current[0].partial_fit(rows[:first])

    return Job(lambda: current[0].partial_fit(rows[first:]), prepare, rows.shape[0] - first)


def gemm_job(n):
    """One n x n x n dgemm through SciPy's BLAS (the one the kernels call)."""
    from scipy.linalg.blas import dgemm

    rng = np.random.default_rng(0)
    a = np.asfortranarray(rng.standard_normal((n, n)))
    b = np.asfortranarray(rng.standard_normal((n, n)))
    c = np.zeros((n, n), order="F")
    return Job(lambda: dgemm(1.0, a, b, c=c, overwrite_c=1))


# --- BLAS threads ------------------------------------------------------------------

def one_blas_thread():
    """Limit BLAS to one thread for the rest of the process (threadpoolctl)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def blas_threads(k):
    """Run BLAS on `k` threads from now on (threadpoolctl); also a context
    that restores the previous limits at its end."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=k, user_api="blas")


# --- switches and private hooks (the one place the benchmarks use them) -------------

@contextlib.contextmanager
def product_settings(product="auto", min_order=None, cpu_level=None):
    """The compiled core's settings for the objects made and the calls run
    inside the block, in this thread (``_kernels.tuning``; an object made
    before keeps its own).

    `product`: ``"dense"`` (one GEMM for every eigenvector product),
    ``"structured"`` or ``"auto"`` (the default: hierarchical from
    ``STRUCTURED_PRODUCT_MIN`` on); `min_order`: the hierarchical product's
    crossover order; `cpu_level`: the highest instruction set of the exp
    kernels (2 AVX-512, 1 AVX2, 0 baseline).  Yields the context.
    """
    from onlinepca_fast import _kernels

    changes = {} if product == "auto" else {"product": product}
    if min_order is not None:
        changes["min_order"] = min_order
    if cpu_level is not None:
        changes["cpu_level"] = cpu_level
    with _kernels.tuning(**changes) as ctx:
        yield ctx


def dense(fn):
    """`fn` run with the dense eigenvector product for what it makes."""
    def run():
        with product_settings("dense"):
            return fn()
    return run


def structured_min_order():
    """The order from which the eigenvector product is hierarchical now."""
    from onlinepca_fast import _kernels

    return _kernels.current_context().min_order


def hierarchical_product(S, G, out, apply=True):
    """``G @ S`` by the hierarchical product alone: (out, stats) (the
    compression only with ``apply=False``)."""
    from onlinepca_fast import _kernels

    return _kernels._hierarchical_product(S, G, apply=apply, out=out)


def _state(learner):
    """The learner's state object (``learner._state``, with ``clustered``,
    ``b``, ``dims``); before the one-state redesign (issue 40) the learner
    itself held them (``_is_clustered()``, ``_b``, ``_dims``): both are
    read, so that a commit of either side can be benchmarked."""
    state = getattr(learner, "_state", None)
    if state is not None and hasattr(state, "clustered"):
        return state.clustered, getattr(state, "b", None), getattr(state, "dims", None)
    if learner._is_clustered():
        return True, learner._b, learner._dims
    return False, None, None


def is_clustered(learner):
    """Whether `learner` is in its clustered state."""
    return _state(learner)[0]


def explicit_basis(learner):
    """The basis a trial reads: the clustered state's explicit basis (nb x n)
    or the dense state's eigenvectors (n x n); and m, the explicit
    eigenpairs."""
    clustered, b, dims = _state(learner)
    if not clustered:
        return np.ascontiguousarray(learner.eigenvectors_.T), learner.n_features_in_
    m, nb = int(dims[0]), int(dims[1])
    return np.ascontiguousarray(b[:nb]), m


# --- learners against IncrementalPCA ---------------------------------------------------

def make_learner(name, state="dense", n_components=K):
    """A learner of `name` with the benchmarks' parameters (an explicit eta, so
    the figures do not move with the default learning rate)."""
    params = dict(n_components=n_components, state=state)
    if name != "FollowTheLeader":
        params.update(eta=ETA, random_state=0)
    if name == "OnlineAdaptivePCA":
        params.update(alpha=ALPHA)
    return getattr(opf, name)(**params)


def ipca_job(first, chunks):
    """scikit-learn's IncrementalPCA(K), initialised on the rows `first`,
    going on over `chunks` (IPCA_BATCH rows each)."""
    from sklearn.decomposition import IncrementalPCA

    ipca = IncrementalPCA(n_components=K)
    ipca.partial_fit(first)
    return chunks_job(ipca.partial_fit, chunks)


class PerRow:
    """A learner warmed up on `warm` rows of a ChunkedStream (`kind`, n),
    timed per row on `chunk`-row chunks, against IncrementalPCA fed batches
    of IPCA_BATCH rows of the same stream."""

    def __init__(self, learner, kind, n, warm, chunk=50, rounds=5, exponent=0.5, seed=0):
        stream = ChunkedStream(kind, n, seed=seed, exponent=exponent)
        warm_rows = stream.rows(max(warm, IPCA_BATCH))
        for i in range(0, warm, 300):
            learner.partial_fit(warm_rows[i:min(i + 300, warm)])
        self.learner, self.rounds = learner, rounds
        # a few distinct chunks, cycled (at n = 10^5 a batch is 80 MB)
        self.chunks = [stream.rows(chunk) for _ in range(3)]
        self.batches = [stream.rows(IPCA_BATCH) for _ in range(2)]
        self.ipca_rows = warm_rows[-IPCA_BATCH:].copy()  # IncrementalPCA's first batch

    def job(self):
        return chunks_job(self.learner.partial_fit, self.chunks)

    def seconds(self):
        """Seconds per trial (min over the rounds; the learner goes on learning)."""
        return minima([self.job()], self.rounds)[0]

    def over_ipca(self):
        """The learner's seconds per trial over IncrementalPCA's per row."""
        return ratio(self.job(), ipca_job(self.ipca_rows, self.batches), self.rounds)

    def over_two_passes(self):
        """The learner's seconds per trial over ``B @ x`` then ``B.T @ y`` on
        the basis B the trial reads (:func:`explicit_basis`): a trial must
        read it at least twice, once for the row's coordinates and once to
        update the basis."""
        B, _ = explicit_basis(self.learner)
        x = np.random.default_rng(0).standard_normal(B.shape[1])
        passes = Job(lambda: B.T @ (B @ x))
        return ratio(self.job(), passes, self.rounds)


def default_learner(label, n):
    """The learners of the defaults' per-row table (issue 23): None where the
    label is not timed at n (the cumulative learners' clustered state keeps
    every row explicit: beyond n = 2000 their warm-up takes minutes)."""
    if label == "OnlinePCA":
        return opf.OnlinePCA(K, random_state=0)
    if label.startswith("OnlinePCA eta="):
        eta = float(label.split("=")[1])
        return opf.OnlinePCA(K, eta=eta, random_state=0) if eta == 1 or n <= 2000 else None
    if n > 2000:
        return None
    if label == "CenteredOnlinePCA":
        return opf.CenteredOnlinePCA(K, random_state=0)
    if label == "FollowTheLeader":
        return opf.FollowTheLeader(K)
    raise ValueError(f"unknown learner {label!r}")


def clustered_large(n=100_000, trials=200):
    """OnlinePCA (clustered) on `trials` power-law rows of dimension n in
    chunks of 100: the work whose peak memory the suite tracks."""
    stream = ChunkedStream("power", n)
    learner = make_learner("OnlinePCA", "clustered")
    for _ in range(max(1, trials // 100)):
        learner.partial_fit(stream.rows(min(trials, 100)))
    return learner


# --- learners against the NumPy reference ------------------------------------------------

class MatrixFunctionPCA:
    """WK Alg. 5 the way the public research code does it: every trial
    takes logm, expm and an SVD of the full matrix, and caps by sorting."""

    def __init__(self, n_components, eta=1.0, seed=0):
        self.k, self.eta, self.rng = n_components, eta, np.random.default_rng(seed)

    def partial_fit(self, X):
        n = X.shape[1]
        if not hasattr(self, "W"):
            self.W = np.eye(n) / n
        d = n - self.k
        for x in X:
            U, w, _ = np.linalg.svd(self.W)
            corner = reference.sample_corner(w, d, self.rng)
            z = U.T @ x
            self.loss = np.sum(z[corner] ** 2)
            M = scipy.linalg.expm(scipy.linalg.logm(self.W).real - self.eta * np.outer(x, x))
            U, w, _ = np.linalg.svd(M)
            self.W = (U * reference.cap(w, d)) @ U.T
        return self


def speedup_over_reference(name, n, k, rows_fast=50, rows_slow=2, repeat=5):
    """The reference learner's (or, for ``"logm/expm/svd"``, the research
    code's) seconds per trial over the compiled learner's, on the WK Sec. 8
    stream (rank-2 segments), both going on learning."""
    X, _ = shifting_subspaces(n, 2, (500, 500, 500), random_state=0)
    if name == "logm/expm/svd":
        fast, slow = opf.OnlinePCA(k, eta=ETA, random_state=0), MatrixFunctionPCA(k)
    else:
        fast = getattr(opf, name)(n_components=k, eta=ETA, random_state=0)
        slow = getattr(reference, name)(n_components=k, eta=ETA, random_state=0)
    fast.partial_fit(X[:2])
    slow.partial_fit(X[:2])
    chunk = [X[i:i + rows_fast] for i in range(2, X.shape[0] - rows_fast, rows_fast)]
    few = [X[i:i + rows_slow] for i in range(2, X.shape[0] - rows_slow, rows_slow)]
    return ratio(chunks_job(slow.partial_fit, few), chunks_job(fast.partial_fit, chunk), repeat)


def capped_hedge_over_exp(n, sampler, rows=5, repeat=5):
    """CappedHedge(k = n/2) per trial over one ``numpy.exp`` of n weights."""
    L = np.random.default_rng(0).random((rows * (repeat + 2) + 1, n))
    learner = opf.CappedHedge(n_components=n // 2, eta=ETA, sampler=sampler,
                              random_state=0).fit(L[:1])
    w = np.random.default_rng(1).random(n)
    chunks = [L[i:i + rows] for i in range(1, L.shape[0] - rows + 1, rows)]
    return ratio(chunks_job(learner.partial_fit, chunks), Job(lambda: np.exp(w)), repeat)


# --- the dense and the clustered state ----------------------------------------------------

def subspace_rows(n, r, T, seed=0):
    """Rows in a random r-dimensional subspace (standard deviations i^-0.7),
    max |x| = 1: m = r explicit directions stay explicit."""
    rng = np.random.default_rng(seed)
    B = np.linalg.qr(rng.standard_normal((n, r)))[0]
    X = (rng.standard_normal((T, r)) * np.arange(1, r + 1) ** -0.7) @ B.T
    return X / np.linalg.norm(X, axis=1).max()


def full_rank_rows(n, T, seed=0):
    """Full-rank rows (spectrum i^-0.7 in a random basis), max |x| = 1: each
    row adds one explicit direction."""
    rng = np.random.default_rng(seed)
    B = np.linalg.qr(rng.standard_normal((n, n)))[0]
    X = (rng.standard_normal((T, n)) * np.arange(1, n + 1) ** -0.7) @ B.T
    return X / np.linalg.norm(X, axis=1).max()


def clustered_over_dense(regime, n, m, trials=None, repeat=3):
    """A clustered trial's time over a dense one's with m explicit
    directions, OnlinePCA (k = 10, eta = 1e-3: capping does not bind).

    ``"steady"``: rows in an m-dimensional subspace, warmed up on 3 m + 200
    rows, `trials` (100) more timed: m holds still.  ``"growing"``:
    full-rank rows, each adds a direction: warmed up to m - trials / 2,
    `trials` (40) more timed.  Each from copies of one warmed-up learner per
    state, the two states in interleaved rounds."""
    if regime == "steady":
        trials = trials or 100
        warm = 3 * m + 200
        X = subspace_rows(n, m, warm + trials + 1)
    else:
        trials = trials or 40
        warm = max(1, m - trials // 2)
        X = full_rank_rows(n, warm + trials + 1)
    jobs = []
    for state in ("clustered", "dense"):
        learner = opf.OnlinePCA(10, eta=1e-3, state=state, random_state=0)
        learner.partial_fit(X[:warm])
        jobs.append(copy_job(learner, X[warm:]))
    clustered, dense = minima(jobs, repeat)
    return clustered / dense


def dense_over_clustered(name, n, warm=200, rows=50, repeat=3):
    """`name` (k = 10) in its dense state per trial over its clustered state,
    power-law rows, from copies warmed up on the same rows."""
    stream = ChunkedStream("power", n)
    X = stream.rows(warm + rows + 1)
    jobs = []
    for state in ("dense", "clustered"):
        learner = make_learner(name, state).partial_fit(X[:warm])
        jobs.append(copy_job(learner, X[warm:]))
    dense, clustered = minima(jobs, repeat)
    return dense / clustered


# --- learn_one against a row inside partial_fit ---------------------------------------

def learn_one_jobs(name, n=20, rows=2000, warmup=50):
    """Jobs from one warmed-up state over the same rows (copies): the rows
    inside one ``partial_fit``, one ``learn_one(row)`` call per row and (None
    without river) one river ``learn_one(dict)`` call per row; n = 20, k = 2."""
    X, _ = shifting_subspaces(n, 2, (rows + warmup,), random_state=0)
    head, body = X[:warmup], X[warmup:]
    warm = make_learner(name, n_components=2).partial_fit(head)
    row_list = [np.array(r) for r in body]  # own 1-D arrays, as a stream delivers them
    current = [None]

    def copy_of(model):
        def prepare():
            current[0] = copy.deepcopy(model)
        return prepare

    def one_by_one():
        learn_one = current[0].learn_one
        for r in row_list:
            learn_one(r)

    batch = Job(lambda: current[0].partial_fit(body), copy_of(warm), len(row_list))
    single = Job(one_by_one, copy_of(warm), len(row_list))
    try:
        from onlinepca_fast import river as opr
    except ImportError:
        return batch, single, None
    keys = [f"x{j}" for j in range(n)]
    params = dict(n_components=2, eta=ETA, random_state=0)
    if name == "OnlineAdaptivePCA":
        params.update(alpha=ALPHA)
    model = getattr(opr, name)(**params)
    for r in head:
        model.learn_one(dict(zip(keys, r.tolist())))
    dicts = [dict(zip(keys, r.tolist())) for r in body]

    def dict_by_dict():
        learn_one = current[0].learn_one
        for x in dicts:
            learn_one(x)

    return batch, single, Job(dict_by_dict, copy_of(model), len(dicts))


# --- loss against the best fixed subspace on real data ----------------------------------

#: YL's parameters on real data (experiments.digits): k = 2, eta = 5, alpha = 1e-4.
DIGITS = dict(n_components=2, eta=5.0, alpha=1e-4)


def digits_regret(name, segment_length=None):
    """(total expected loss, loss of the best fixed 2-dim subspace in
    hindsight, regret) of learner `name` on scikit-learn's bundled digits
    streamed class by class (:func:`onlinepca_fast.datasets.digits_stream`)."""
    X, _ = digits_stream(segment_length=segment_length, random_state=0)
    X = X[:size(X.shape[0], 200)]
    params = dict(n_components=DIGITS["n_components"])
    if name != "FollowTheLeader":
        params.update(eta=DIGITS["eta"], random_state=0)
    if name == "OnlineAdaptivePCA":
        params.update(alpha=DIGITS["alpha"])
    learner = getattr(opf, name)(**params).fit(X)
    total = float(learner.expected_losses_.sum())
    best = float(metrics.best_subspace_loss(X, DIGITS["n_components"]))
    return total, best, total - best


# --- eta="auto" against fixed rates on real streams (issue 24) -----------------------------

#: The fixed rates of the grid the auto rate is compared with (x ~3.16 steps).
GRID = 10.0 ** np.arange(-2.0, 5.01, 0.5)


def scaled(X):
    """X scaled by one common factor so that max |x| = 1."""
    return X / np.linalg.norm(X, axis=1).max()


def digits_rows():
    """The 1797 8x8 digits of ``load_digits`` (n = 64), class by class."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return d.data[np.argsort(d.target, kind="stable")].astype(float)


def image_patches(per_image=1000, size=10, seed=0):
    """size x size grey patches of the two images of ``load_sample_images``:
    `per_image` random patches of one image, then of the other (seeded)."""
    from sklearn.datasets import load_sample_images

    rng = np.random.default_rng(seed)
    rows = []
    for img in load_sample_images().images:
        g = img.astype(float).mean(axis=2)
        i = rng.integers(0, g.shape[0] - size, per_image)
        j = rng.integers(0, g.shape[1] - size, per_image)
        rows.append(np.stack([g[a:a + size, b:b + size].ravel() for a, b in zip(i, j)]))
    return np.concatenate(rows)


def cancer_rows():
    """scikit-learn's breast_cancer (n = 30, raw features), by class."""
    from sklearn.datasets import load_breast_cancer

    d = load_breast_cancer()
    return d.data[np.argsort(d.target, kind="stable")].astype(float)


def diabetes_rows():
    """scikit-learn's diabetes (n = 10), sorted by target."""
    from sklearn.datasets import load_diabetes

    d = load_diabetes()
    return d.data[np.argsort(d.target, kind="stable")].astype(float)


def macro_rows():
    """statsmodels' quarterly macrodata, n = 10 log-differences in time
    order (ImportError without statsmodels)."""
    import statsmodels.api as sm

    d = sm.datasets.macrodata.load_pandas().data
    cols = ["realgdp", "realcons", "realinv", "realgovt", "realdpi", "cpi", "m1",
            "tbilrate", "unemp", "pop"]
    return np.diff(np.log(np.abs(d[cols].to_numpy(float)) + 1.0), axis=0)



def tiled_patches(*images, size=8):
    """Non-overlapping size x size tiles of scikit-image's bundled images
    (``skimage.data``, colour made grey), in raster order, one image after
    the other: a shift where the image changes (ImportError without
    scikit-image)."""
    from skimage import color, data

    rows = []
    for name in images:
        im = getattr(data, name)()
        im = color.rgb2gray(im) * 255.0 if im.ndim == 3 else im.astype(float)
        h, w = (im.shape[0] // size) * size, (im.shape[1] // size) * size
        tiles = im[:h, :w].reshape(h // size, size, w // size, size).transpose(0, 2, 1, 3)
        rows.append(tiles.reshape(-1, size * size))
    return np.concatenate(rows)


def statsmodels_rows(name):
    """The numeric columns of a statsmodels data set, in file order
    (ImportError without statsmodels)."""
    import statsmodels.api as sm

    X = getattr(sm.datasets, name).load_pandas().data.select_dtypes("number")
    return X.to_numpy(dtype=float)

#: The streams of the auto rate's table (rows scaled to max |x| = 1); the
#: last three were not used to design the rates (OnlinePCA and
#: OnlineAdaptivePCA only).
AUTO_STREAMS = {"digits": digits_rows, "patches": image_patches, "cancer": cancer_rows,
                "diabetes": diabetes_rows, "macro": macro_rows}
AUTO_LEARNERS = ("OnlinePCA", "OnlineAdaptivePCA", "CenteredOnlinePCA")
AUTO_KS = (2, 5, 10)


def auto_stream(name):
    """A stream of the auto rate's table, scaled (truncated in the tiny run)."""
    X = scaled(AUTO_STREAMS[name]())
    return X[:size(X.shape[0], 40)]


def auto_case_runs(stream, learner, k):
    """Whether the table has (stream, learner, k): the centered learner on the
    design streams only, k < n - 1."""
    n = {"digits": 64, "patches": 100, "cancer": 30, "diabetes": 10, "macro": 10}[stream]
    return k < n - 1 and (learner != "CenteredOnlinePCA" or stream in ("digits", "patches"))


def rate_learner(name, k, eta):
    return getattr(opf, name)(k, eta=eta, random_state=0)


def total_loss(learner, X):
    return float(learner.fit(X).expected_losses_.sum())


def auto_rate_table():
    """(stream, learner, k) -> dict of auto, eta1, best (the best grid eta's)
    losses, each over the loss of the best fixed rank-k subspace in
    hindsight (centered for CenteredOnlinePCA), and best_eta.  Minutes:
    every case fits 17 learners."""
    grid = size(GRID, GRID[::7])
    table = {}
    for stream in AUTO_STREAMS:
        try:
            X = auto_stream(stream)
        except ImportError:  # statsmodels is not installed: no macrodata
            continue
        for learner in AUTO_LEARNERS:
            for k in AUTO_KS:
                if not auto_case_runs(stream, learner, k):
                    continue
                best = metrics.best_subspace_loss(X, k, centered=learner == "CenteredOnlinePCA")
                losses = [total_loss(rate_learner(learner, k, float(e)), X) for e in grid]
                i = int(np.argmin(losses))
                table[stream, learner, k] = dict(
                    auto=total_loss(rate_learner(learner, k, "auto"), X) / best,
                    eta1=total_loss(rate_learner(learner, k, 1.0), X) / best,
                    best=losses[i] / best, best_eta=float(grid[i]))
    return table


def auto_time_ratio(make, X, repeat=3):
    """Seconds per trial of ``make("auto").fit(X)`` over ``make(1.0).fit(X)``."""
    def fit(eta):
        return Job(lambda: make(eta).fit(X), count=X.shape[0])
    return ratio(fit("auto"), fit(1.0), repeat)


def kernel_digits():
    """Every sixth row of the digits class by class (300 rows, n = 64)."""
    return scaled(digits_rows()[::6])


#: The kernel auto rate's streams and kernels: digits (rbf, gamma = 1), KW's
#: noisy cone (Sec. 5, 400 rows in R^20; (x . y)^2), 400 image patches
#: (200 of each image; linear).
KERNEL_STREAMS = {
    "digits": (kernel_digits, dict(kernel="rbf", gamma=1.0)),
    "cone": (lambda: noisy_cone(400, 20, random_state=0, embedding="padded"),
             dict(kernel="poly", degree=2, gamma=1.0, coef0=0.0)),
    "patches": (lambda: scaled(image_patches(200)), dict(kernel="linear")),
}


def kernel_stream(name):
    make, params = KERNEL_STREAMS[name]
    X = make()
    return X[:size(X.shape[0], 30)], params


def kernel_learner(r, eta, params):
    return opf.OnlineKernelPCA(r, eta=eta, random_state=0, budget=None, **params)


def kernel_auto_rate_table():
    """(stream, r) -> dict of auto, eta1, best over the loss of the best
    rank-r feature-space subspace in hindsight (tr K minus the r largest
    eigenvalues of the whole stream's kernel matrix), best_eta and the
    auto learner's final eta_."""
    grid = size(GRID, GRID[::7])
    table = {}
    for name in KERNEL_STREAMS:
        X, params = kernel_stream(name)
        Kx = reference.gram(X, X, **params)
        lam = np.linalg.eigvalsh((Kx + Kx.T) / 2)
        for r in AUTO_KS:
            best = np.trace(Kx) - np.clip(lam[-r:], 0, None).sum()
            auto = kernel_learner(r, "auto", params).fit(X)
            losses = [total_loss(kernel_learner(r, float(e), params), X) for e in grid]
            i = int(np.argmin(losses))
            table[name, r] = dict(
                auto=float(auto.expected_losses_.sum()) / best,
                eta1=total_loss(kernel_learner(r, 1.0, params), X) / best,
                best=losses[i] / best, best_eta=float(grid[i]), final_eta=float(auto.eta_))
    return table


# --- the rank-one update and the structured eigenvector product ---------------------------

class RankOneCase:
    """A rank-one update of order n (:func:`onlinepca_fast.app.bench.rank_one_problem`
    of `kind`), in place with a RankOneUpdater per product ("auto": the
    default, "dense": one GEMM), restored before each run."""

    def __init__(self, n, kind="dense", rho=0.7, seed=None):
        self.n, self.rho = n, rho
        self.evals, self.evecs, self.x = rank_one_problem(n, kind, seed=n if seed is None else seed)
        self.updaters = {p: RankOneUpdater(n, product=p) for p in ("auto", "dense")}
        self.d, self.q = self.evals.copy(), self.evecs.copy()

    def restore(self):
        self.d[:] = self.evals
        self.q[:] = self.evecs

    def update_job(self, product="auto"):
        """The in-place update (what a learner pays per trial) with `product`."""
        updater = self.updaters[product]

        def run():
            updater.update(self.d, self.q, self.rho, self.x)

        return Job(run, self.restore)

    def public_job(self):
        """:func:`onlinepca_fast.kernels.rank_one_update`: validation, copies,
        workspace."""
        return Job(lambda: rank_one_update(self.evals, self.evecs, self.rho, self.x))

    def eigh_job(self):
        """numpy.linalg.eigh of the updated matrix."""
        a = (self.evecs * self.evals) @ self.evecs.T + self.rho * np.outer(self.x, self.x)
        return Job(lambda: np.linalg.eigh(a))

    def updated(self, product="auto"):
        """(evals, evecs, m, structured products done) after one update."""
        self.restore()
        updater = self.updaters[product]
        updater.update(self.d, self.q, self.rho, self.x)
        info = updater.last_info
        return self.d.copy(), self.q.copy(), info["m"], info["n_structured"]

    def residual(self, product="auto"):
        """|A Q - Q L| / |A| of the update (A formed from the problem)."""
        d, q, _, _ = self.updated(product)
        a_q = self.evecs @ ((self.evecs.T @ q) * self.evals[:, None]) \
            + self.rho * np.outer(self.x, self.x @ q)
        return float(np.linalg.norm(a_q - q * d) / max(abs(d[0]), abs(d[-1])))

    def orthogonality(self, product="auto"):
        """max |Q^T Q - I| after one update."""
        _, q, _, _ = self.updated(product)
        return float(np.abs(q.T @ q - np.eye(self.n)).max())


def structured_profile(n, rho=-0.7, repeat=5):
    """Where the structured update's time goes at order n (dense z).

    S (the secular eigenvector matrix) is the update of the identity, G the
    problem's eigenvectors.  The update, the compression alone, the whole
    hierarchical product (compression and application) and one dgemm are
    timed in interleaved rounds; each figure is the minimum over the rounds.
    The rest of the update is the update minus the product (deflation, the
    secular solve, the Loewner weights, gathering G, reversing S when
    rho < 0).  The flops are the product's own count from its blocks."""
    case = RankOneCase(n, "dense", rho)
    _, S = rank_one_update(case.evals, np.eye(n), rho, case.evecs.T @ case.x)
    S = np.asfortranarray(S)  # the layout the product reads (no copy in the timing)
    G = np.ascontiguousarray(case.evecs)
    out = np.empty((n, n))
    t_update, t_comp, t_prod, t_gemm = minima([
        case.update_job(),
        Job(lambda: hierarchical_product(S, G, out, apply=False)),
        Job(lambda: hierarchical_product(S, G, out)),
        gemm_job(n)], repeat)
    out, stats = hierarchical_product(S, G, out)
    gemm_rate = 2.0 * n ** 3 / t_gemm
    flops = stats["leaf_flops"] + stats["lowrank_flops"]
    rest = t_update - t_prod
    return dict(
        levels=stats["levels"], blocks=stats["n_blocks"], mean_rank=stats["mean_rank"],
        max_rank=stats["max_rank"], flops_over_dgemm=flops / (2.0 * n ** 3),
        compression=t_comp, application=t_prod - t_comp,
        application_rate_over_dgemm=flops / (t_prod - t_comp) / gemm_rate, rest=rest,
        update_over_dgemm=t_update / t_gemm,
        at_dgemm_rate=(flops / gemm_rate + t_comp + rest) / t_gemm,
        error=float(np.abs(out - G @ S).max()))


def learner_product_speedup(name, n, repeat=3):
    """`name`'s time per trial with the dense eigenvector product forced over
    its time with the default (hierarchical) one, in its steady state: from
    copies of one warmed-up learner on the same rows (a copy's first row,
    which builds its engine, untimed); the two products' losses agree to 1e-9.

    CenteredOnlinePCA (k = 10, dense state) at dimension n after n + 20 rows
    (every direction reached); OnlineKernelPCA (r = 5, rbf, gamma = 0.1)
    after n rows of dimension 10 (a bordered update of order ~n a trial)."""
    if name == "CenteredOnlinePCA":
        rng = np.random.default_rng(1)
        X = rng.standard_normal((n + 30, n)) * np.arange(1, n + 1) ** -0.5
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        warm_rows, timed = X[:n + 20], X[n + 20:]
        warm = opf.CenteredOnlinePCA(10, random_state=0, state="dense").fit(warm_rows)
    else:
        X = np.random.default_rng(2).standard_normal((n + 10, 10))
        warm = opf.OnlineKernelPCA(5, kernel="rbf", gamma=0.1, budget=None,
                                   random_state=0).fit(X[:n])
        timed = X[n:]
    forced = copy_job(warm, timed)
    forced = Job(dense(forced.run), dense(forced.prepare), forced.count)
    t_default, t_dense = minima([copy_job(warm, timed), forced], repeat)
    return t_dense / t_default


# --- kernel PCA ------------------------------------------------------------------------------

KERNELS = {
    "poly2": dict(kernel="poly", degree=2, gamma=1.0, coef0=0.0),  # KW Sec. 5, rank <= 210
    "rbf": dict(kernel="rbf", gamma="auto"),                         # numerically full rank
}


def kernel_pca_after(t, kernel, extra=200):
    """(OnlineKernelPCA(5) fitted on t points of KW's noisy cone, the
    stream of t + extra points)."""
    X = cone_stream(t + extra)
    learner = opf.OnlineKernelPCA(5, eta=ETA, random_state=0, budget=None,
                                  **KERNELS[kernel]).fit(X[:t])
    return learner, X


def secular_order(learner):
    """Mean order of the learner's secular equations: non-deflated + 1."""
    stats = learner.update_stats_
    return stats["secular_sum"] / stats["n_updates"]


# --- reliability: threads, long runs, memory, Ctrl-C ------------------------------------------

def two_threads_speedup(name="OnlinePCA", n=200, T=300, repeat=3):
    """Wall time of two independent learners (k = 10) run one after the
    other over their time in two threads (the trial loop releases the GIL:
    ~2 on two free cores), best of `repeat`; the results are the same
    either way."""
    data = [low_rank_stream(T, n, seed) for seed in (1, 2)]

    def job(i):
        learner = getattr(opf, name)(10, random_state=i)
        for part in np.array_split(data[i], 10):
            learner.partial_fit(part)
        return learner.expected_losses_[-1]

    expected = [job(0), job(1)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        def threaded():
            assert list(pool.map(job, (0, 1))) == expected
        seq, thr = minima([Job(lambda: [job(0), job(1)]), Job(threaded)], repeat,
                          clock=time.perf_counter)
    return seq / thr


def orthogonality(Q):
    return float(np.linalg.norm(Q.T @ Q - np.eye(Q.shape[0]), 2))


def drift(T, every, n=20, eta=0.5, chunk=50_000):
    """After T trials at n = 20 with ``reorthogonalize_every=every``:
    (||Q^T Q - I||_2 of CenteredOnlinePCA(centered=False) (WK Alg. 6), the
    distance of its eigenvalues from eigvalsh of ``-log(n) I - eta sum x
    x^T`` formed from the data over ||A||_2, ||Q^T Q - I||_2 of OnlinePCA)."""
    alg6 = opf.CenteredOnlinePCA(2, eta=eta, centered=False, random_state=0,
                                 record_losses=False, reorthogonalize_every=every)
    alg5 = opf.OnlinePCA(2, eta=eta, random_state=0, record_losses=False,
                         reorthogonalize_every=every)
    S = np.zeros((n, n))
    chunk = min(chunk, T)
    for t in range(chunk, T + 1, chunk):
        X = low_rank_stream(chunk, n, t)
        alg6.partial_fit(X)
        alg5.partial_fit(X)
        S += X.T @ X
    A = -math.log(n) * np.eye(n) - eta * S
    error = float(np.abs(np.linalg.eigvalsh(A) - alg6.eigenvalues_).max() / np.linalg.norm(A, 2))
    return orthogonality(alg6.eigenvectors_), error, orthogonality(alg5.eigenvectors_)


def memory_growth(T=10**5, n=20, batch=1000, record=False):
    """Bytes of traced memory gained over T trials (after a warm-up batch)."""
    X = low_rank_stream(batch, n, 0)
    learner = opf.OnlinePCA(3, random_state=0, record_losses=record).partial_fit(X)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(max(1, T // batch)):
            learner.partial_fit(X)
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


def interrupt_case(case, n=700, t=2500):
    """(learner, rows) of an expensive trial: ``OnlinePCA(share="past")`` at
    dimension n (every trial two n x n GEMMs and an eigendecomposition), or
    OnlineKernelPCA (rbf) after t instances (a bordered update of order t;
    minutes to build at t = 2500)."""
    if case == "share_past":
        X = np.random.default_rng(1).standard_normal((40, n)) / np.sqrt(n)
        learner = opf.OnlinePCA(5, eta=0.5, share="past", alpha=0.01, random_state=0)
        return learner.partial_fit(X[:3]), X[3:]
    X = np.random.default_rng(0).standard_normal((t + 100, 10))
    return opf.OnlineKernelPCA(5, kernel="rbf", gamma="auto", budget=None,
                               random_state=0).fit(X[:t]), X[t:]


def trial_seconds(before, X, repeats=3):
    """Wall seconds of one trial from `before` (best of `repeats` copies)."""
    return min(interleaved([copy_job(before, X[:2])], repeats, time.perf_counter)[0])


def interrupt_latencies(before, X, shots, per_trial, seed=0):
    """Seconds from SIGINT to the KeyboardInterrupt caught around
    ``partial_fit``, one per shot: a helper thread sends the signal at a
    uniform moment within the first three trials of a batch."""
    rng = np.random.default_rng(seed)
    out = []
    # Python's own handler (KeyboardInterrupt), whatever the runner installed
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        for _ in range(3 * shots):
            out += _one_shot(before, X, rng.uniform(0.2, 3.0) * per_trial)
            if len(out) == shots:
                return out
    finally:
        signal.signal(signal.SIGINT, previous)
    raise RuntimeError(f"{len(out)} of {shots} batches were interrupted in {3 * shots} tries")


def _one_shot(before, X, delay):
    """[seconds from SIGINT to KeyboardInterrupt], or [] when the batch
    ended before the signal came."""
    learner = pickle.loads(pickle.dumps(before))
    sent = []

    def sender():
        time.sleep(delay)
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=sender)
    try:
        thread.start()
        learner.partial_fit(X)
        thread.join()  # the batch ended first: the signal is still coming
        time.sleep(1.0)
    except KeyboardInterrupt:
        caught = time.perf_counter()
        thread.join()
        return [caught - sent[0]]
    return []
