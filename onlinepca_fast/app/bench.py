"""Timing the compiled learners against the NumPy reference (``onlinepca-fast
bench``), and the timer the scripts under ``benchmarks/`` share.

Times are medians over chunks (a stall of a shared machine does not decide
the figure), with BLAS limited to one thread unless asked otherwise: NumPy's
and SciPy's separate OpenBLAS pools spin against each other on few cores.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import datasets
from .._typing import FloatArray
from .._validation import N_COMPONENTS, Interval, check_scalar

__all__ = ["per_trial", "best_time", "blas_limit", "benchmark", "format_benchmark",
           "low_rank_stream", "log_weights", "rank_one_problem", "cone_stream",
           "ChunkedStream"]


# --- the workloads every benchmark draws from (benchmarks/ and asv) ---------------

def low_rank_stream(T: int, n: int, seed: int = 0, rank: int = 5, noise: float = 0.1) -> FloatArray:
    """Rows of a rank-`rank` Gaussian plus isotropic noise, scaled into the unit ball.

    Parameters
    ----------
    T : int
        Number of rows.
    n : int
        Dimension.
    seed : int, default=0
        Seed of the rows.
    rank : int, default=5
        Rank of the signal.
    noise : float, default=0.1
        Standard deviation of the isotropic noise.

    Returns
    -------
    X : ndarray of shape (T, n)
        Rows of norm at most one.
    """
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, rank)) / np.sqrt(rank)
    X = rng.standard_normal((T, rank)) @ B.T + noise * rng.standard_normal((T, n))
    return X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))


class ChunkedStream:
    """Rows of a large dimension, generated chunk by chunk with no n x n matrix.

    Parameters
    ----------
    kind : {"power", "signal"}
        ``"power"`` (or ``"decay"``): standard deviations i^-exponent in a
        random basis (a product of three Householder reflectors);
        ``"signal"``: a rank-20 signal plus isotropic noise.
    n : int
        Dimension.
    seed : int, default=0
        Seed of the basis and the rows.
    exponent : float, default=0.5
        Decay of the standard deviations of ``"power"`` (0.5: variances i^-1).
    """

    def __init__(self, kind: str, n: int, seed: int = 0, exponent: float = 0.5) -> None:
        if kind == "decay":
            kind = "power"
        if kind not in ("power", "signal"):
            raise ValueError(f"kind must be 'power', 'decay' or 'signal', got {kind!r}")
        self.kind, self.n = kind, n
        self.rng = np.random.default_rng(seed)
        if kind == "power":
            self.scale = np.arange(1, n + 1.0) ** -float(exponent)
            self.reflectors = [v / np.linalg.norm(v) for v in self.rng.standard_normal((3, n))]
        else:
            self.basis = np.linalg.qr(self.rng.standard_normal((n, 20)))[0]

    def rows(self, T: int) -> FloatArray:
        """The next T rows, each of norm at most one.

        Parameters
        ----------
        T : int
            Number of rows.

        Returns
        -------
        X : ndarray of shape (T, n)
            The rows.
        """
        n = self.n
        if self.kind == "power":
            Z = self.rng.standard_normal((T, n)) * self.scale
            for v in self.reflectors:
                Z -= 2.0 * np.outer(Z @ v, v)
            Z *= 0.5
        else:
            Z = (self.rng.standard_normal((T, 20)) * np.linspace(1.0, 0.3, 20)) @ self.basis.T
            Z = 0.5 * Z + 0.1 * self.rng.standard_normal((T, n)) / np.sqrt(n)
        return Z / np.maximum(1.0, np.linalg.norm(Z, axis=1, keepdims=True))


def log_weights(n: int, seed: int = 0) -> FloatArray:
    """Log-weights as a learner has them after a few hundred trials (wide spread).

    Parameters
    ----------
    n : int
        Number of weights.
    seed : int, default=0
        Seed.

    Returns
    -------
    mu : ndarray of shape (n,)
        Gaussian log-weights of standard deviation 20.
    """
    return np.random.default_rng(seed).normal(scale=20.0, size=n)


def rank_one_problem(
        n: int, kind: str = "dense", seed: int = 0,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The eigensystem and vector of a rank-one eigen-update of order n.

    Parameters
    ----------
    n : int
        Order.
    kind : {"dense", "cluster80", "structured"}, default="dense"
        ``"dense"``: random spectrum and x, nothing deflates;
        ``"cluster80"``: 80% of the eigenvalues in one exact cluster (as
        capped learners have), dense x; ``"structured"``: that cluster and
        x on 5 eigen-directions.
    seed : int, default=0
        Seed.

    Returns
    -------
    evals : ndarray of shape (n,)
        Ascending eigenvalues.
    evecs : ndarray of shape (n, n)
        Orthonormal eigenvectors in the columns.
    x : ndarray of shape (n,)
        The update's vector.
    """
    rng = np.random.default_rng(seed)
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    evecs = np.ascontiguousarray(q * np.sign(np.diag(r)))
    evals = np.sort(rng.standard_normal(n))
    x = rng.standard_normal(n)
    if kind in ("structured", "cluster80"):
        evals[: int(0.8 * n)] = evals[int(0.4 * n)]
        evals.sort()
    if kind == "structured":
        z = np.zeros(n)
        k = min(5, n)
        z[rng.choice(n, k, replace=False)] = rng.standard_normal(k)
        x = evecs @ z
    return evals, evecs, x


def cone_stream(T: int, n_features: int = 20) -> FloatArray:
    """KW Sec. 5's padded 3-d cone with noise (the kernel PCA workload).

    Parameters
    ----------
    T : int
        Number of points.
    n_features : int, default=20
        Dimension.

    Returns
    -------
    X : ndarray of shape (T, n_features)
        :func:`onlinepca_fast.datasets.noisy_cone` with noise 0.05, seed 0.
    """
    return datasets.noisy_cone(T, n_features, noise=0.05, random_state=0,
                               embedding="padded")


# --- the timers -------------------------------------------------------------------

def best_time(fn: Callable[[], object], repeat: int = 5, budget: float = 2.0,
              prepare: Callable[[], object] | None = None,
              clock: Callable[[], float] = time.perf_counter) -> float:
    """Minimum time of ``fn()`` over up to `repeat` runs within about `budget` s.

    Parameters
    ----------
    fn : callable
        The work timed, called without arguments (once more as a warm-up).
    repeat : int, default=5
        Most runs timed.
    budget : float, default=2.0
        Seconds after which no further run starts (at least one is timed).
    prepare : callable or None, default=None
        Run untimed before each run (e.g. to restore a state).
    clock : callable, default=time.perf_counter
        The clock read around each run.

    Returns
    -------
    seconds : float
        The smallest time measured.
    """
    if prepare is not None:
        prepare()
    fn()  # warm-up
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < repeat and (not times or time.perf_counter() - start < budget):
        if prepare is not None:
            prepare()
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return min(times)


def _sizes(n_features, n_components):
    n = check_scalar(n_features, "n_features", Interval("int", 2, 10 ** 5))
    k = check_scalar(n_components, "n_components", N_COMPONENTS, {"n": n})
    return n, k


def per_trial(make: Callable[[], Any], X: FloatArray, budget: float, chunk: int) -> float:
    """Median over chunks of the seconds per trial of ``make().partial_fit``.

    The median, not the mean, so that a stall of the machine (another
    process, BLAS threads competing for the cores) does not decide the
    figure.

    Parameters
    ----------
    make : callable
        Returns a fresh learner; its first two rows are not timed.
    X : ndarray of shape (T, n)
        The rows, cycled through with a fresh learner at the end.
    budget : float
        Seconds of timed work (at least three chunks).
    chunk : int
        Rows per ``partial_fit`` call timed.

    Returns
    -------
    seconds : float
        Median seconds per trial.
    """
    elapsed = 0.0
    times: list[float] = []
    lo = X.shape[0]
    while elapsed < budget or len(times) < 3:
        if lo >= X.shape[0]:  # a fresh learner; its lazy initialisation is not timed
            learner = make()
            learner.partial_fit(X[:2])
            lo = 2
        rows = X[lo:lo + chunk]
        start = time.perf_counter()
        learner.partial_fit(rows)
        dt = time.perf_counter() - start
        elapsed += dt
        times.append(dt / rows.shape[0])
        lo += rows.shape[0]
    return float(np.median(times))


def blas_limit(threads: int | None) -> Any:
    """A context limiting the BLAS threads (threadpoolctl), or None if unavailable.

    Parameters
    ----------
    threads : int or None
        Threads allowed; None for no limit.

    Returns
    -------
    context : threadpoolctl.threadpool_limits or None
        None if `threads` is None or threadpoolctl is not installed.
    """
    if threads is None:
        return None
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    return threadpool_limits(limits=threads, user_api="blas")


#: The longest measurement :func:`benchmark` takes, in seconds (its 8
#: measurements then take about 80 minutes); a larger budget is refused.
MAX_BUDGET = 600.0
_BUDGET = Interval("real", 0.0, MAX_BUDGET, closed="right")


def benchmark(
        sizes: Sequence[tuple[int, int]] = ((20, 2), (100, 10)),
        learners: Sequence[str] = ("OnlinePCA", "CenteredOnlinePCA"), budget: float = 1.0,
        blas_threads: int | None = 1, progress: Callable[[str], object] | None = None,
) -> list[dict[str, Any]]:
    """Per-trial times of the compiled learners against the NumPy reference.

    Each learner runs on the WK Sec. 8 stream (rank-2 segments of 500) for
    about ``budget`` seconds, at eta = 1 on both sides (the papers'
    fixed-rate algorithm: the reference has no ``eta="auto"``, whose master
    and limit learner cost more per trial); the fast one in batches of 100 rows
    (``partial_fit``, one compiled loop per batch), the reference in
    batches of 5 (it calls ``eigh`` every trial).  The time per trial is
    the median over the batches.

    Parameters
    ----------
    sizes : sequence of (n_features, n_components), default=((20, 2), (100, 10))
        The (n, k) pairs to time.
    learners : sequence of str, default=("OnlinePCA", "CenteredOnlinePCA")
        Names present in both :mod:`onlinepca_fast` and
        :mod:`onlinepca_fast.reference`.
    budget : float, default=1.0
        Seconds per measurement, at most :data:`MAX_BUDGET` (600).
    blas_threads : int or None, default=1
        Limit BLAS to this many threads during the measurements (needs
        ``threadpoolctl``, installed with scikit-learn), so both sides are
        timed single-threaded: on a busy machine multithreaded BLAS inside
        the reference's ``eigh`` can be 100 times slower than one thread.
        None leaves the library's default.
    progress : callable or None
        Called with a one-line message after each measurement.

    Returns
    -------
    rows : list of dict
        ``learner, n_features, n_components, fast_us, reference_us, ratio,
        blas_threads`` (``"default"`` if the limit could not be applied).
    """
    from .. import learners as fast_module
    from .. import reference

    budget = check_scalar(budget, "budget", _BUDGET)
    limit = blas_limit(blas_threads)
    threads = "default" if limit is None else blas_threads
    rows = []
    try:
        for n, k in sizes:
            n, k = _sizes(n, k)
            X, _ = datasets.shifting_subspaces(n, min(2, n), (500, 500, 500), random_state=0)
            for name in learners:
                fast_cls, ref_cls = getattr(fast_module, name), getattr(reference, name)
                fast = per_trial(lambda: fast_cls(k, eta=1.0, random_state=0), X, budget, 100)
                ref = per_trial(lambda: ref_cls(k, eta=1.0, random_state=0), X, budget, 5)
                rows.append(dict(learner=name, n_features=n, n_components=k,
                                 fast_us=fast * 1e6, reference_us=ref * 1e6, ratio=ref / fast,
                                 blas_threads=threads))
                if progress is not None:
                    progress(f"bench: {name} n={n} k={k} done")
    finally:
        if limit is not None:
            limit.restore_original_limits()
    return rows


def format_benchmark(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows of :func:`benchmark` as a text table.

    Parameters
    ----------
    rows : list of dict
        As returned by :func:`benchmark`.

    Returns
    -------
    table : str
        One line per learner and size, with the ratio.
    """
    lines = [f"{'learner':<20} {'n':>5} {'k':>4} {'fast us/trial':>14} "
             f"{'reference us/trial':>19} {'ratio':>8}"]
    lines += [f"{r['learner']:<20} {r['n_features']:>5} {r['n_components']:>4} "
              f"{r['fast_us']:>14.2f} {r['reference_us']:>19.1f} {r['ratio']:>7.0f}x"
              for r in rows]
    if rows:
        threads = rows[0]["blas_threads"]
        lines.append(f"eta = 1 on both sides; BLAS threads: {threads}" + (
            " (threadpoolctl not installed: on a busy machine set OPENBLAS_NUM_THREADS=1)"
            if threads == "default" else ""))
    return "\n".join(lines)
