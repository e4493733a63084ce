"""The one list of learners shared by every parametrized test, and the
streams and state comparisons the test modules share.

A test that takes the argument ``learner_case`` runs once per entry of
``LEARNERS`` (conftest.py's ``pytest_generate_tests``): every learner and
every code path of the trial loop that keeps different state (mixing,
centering, sampler).

Tolerances
----------
CAPPED_ATOL = 1e-12: the density matrix ``Q diag(w) Q^T`` is formed in
floating point from orthonormal Q (error ~ n eps) and weights summing to
one to ~n eps; 1e-12 is the bound issue 7 asked for.
ORTH_ATOL = 1e-10: the bound on ``||Q^T Q - I||_2``; measured ~1e-13 with the
default re-orthogonalisation (see the long-run tests for the drift
without it).
"""

import copy
import math
import pickle
import threading
import time

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import onlinepca_fast as opf
from onlinepca_fast import reference

RANDOMISED = ["Hedge", "CappedHedge", "OnlinePCA", "OnlineAdaptivePCA",
              "CenteredOnlinePCA", "VarianceMinimizer"]

DETERMINISTIC = ["FollowTheLeader", "SimplexVarianceMinimizer"]

WITH_K = {"CappedHedge", "OnlinePCA", "OnlineAdaptivePCA", "CenteredOnlinePCA", "FollowTheLeader"}

PCA_LEARNERS = {"OnlinePCA", "OnlineAdaptivePCA", "CenteredOnlinePCA", "VarianceMinimizer"}

EXPERTS = {"Hedge", "CappedHedge"}

SAMPLERS = ["decomposition", "systematic"]


def parameter_of(learner):
    """W (n x n) for the PCA learners, the weight vector for the others."""
    if type(learner).__name__ in EXPERTS | {"SimplexVarianceMinimizer"}:
        return learner.weights_
    return learner.density_


def build(module, name, k, **kw):
    cls = getattr(module, name)
    return cls(k, **kw) if name in WITH_K else cls(**kw)


def unit_ball(X):
    return X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))


def pca_stream(T, n, seed, n_segments=4, rank=None):
    """Segments of noisy low-rank Gaussians, rows scaled at random into the unit ball."""
    rng = np.random.default_rng(seed)
    rank = rank or max(2, n // 10)
    X = np.empty((T, n))
    for idx in np.array_split(np.arange(T), n_segments):
        B = rng.standard_normal((n, rank)) / math.sqrt(rank)
        X[idx] = rng.standard_normal((len(idx), rank)) @ B.T
        X[idx] += 0.2 * rng.standard_normal((len(idx), n)) / math.sqrt(n)
    X *= rng.uniform(0.3, 1.5, size=(T, 1))
    return unit_ball(X)


def loss_stream(T, n, seed, n_segments=4):
    """Loss vectors in [0, 1]^n; which experts are good changes per segment."""
    rng = np.random.default_rng(seed)
    L = rng.random((T, n))
    for idx in np.array_split(np.arange(T), n_segments):
        L[idx] *= rng.permutation(np.linspace(0.2, 1.0, n))
    return L


def cov_stream(T, n, seed):
    """Symmetric matrices 0 <= C <= I."""
    rng = np.random.default_rng(seed)
    V = np.linalg.qr(rng.standard_normal((T, n, n)))[0]
    lam = rng.random((T, 1, n)) ** 3
    C = (V * lam) @ V.transpose(0, 2, 1)
    return (C + C.transpose(0, 2, 1)) / 2


def wk_sec8_stream(n, sizes, seed):
    """WK Sec. 8 / Fig. 3: segments from zero-mean Gaussians with random rank-2
    covariance; points of norm > 1 normalised to 1."""
    rng = np.random.default_rng(seed)
    parts = [rng.standard_normal((T, 2)) @ rng.standard_normal((n, 2)).T for T in sizes]
    return unit_ball(np.concatenate(parts))


def unsplit_trials(learner, rtol, atol):
    """Trials whose drawn corner contains each cluster of numerically equal
    eigenvalues (log-weights for experts) entirely or not at all.

    On those trials the corner is the same set of positions in the ascending
    order for any choice of basis inside the clusters, so the compiled and
    the reference learner must draw the same subset and incur the same
    realized loss.  Two recorded levels are "equal" when they differ by at
    most ``atol + rtol * max|levels|`` (levels are log-weights for the
    randomised learners, so ``atol`` is relative on the weights).
    """
    mask = []
    for levels, corner in zip(learner.eigenvalues_history_, learner.corners_):
        inside = np.zeros(levels.size, dtype=bool)
        inside[corner] = True
        order = np.argsort(levels, kind="stable")
        close = np.diff(levels[order]) <= atol + rtol * np.abs(levels).max()
        mask.append(not np.any(close & (inside[order][1:] != inside[order][:-1])))
    return np.array(mask)


CAPPED_ATOL = 1e-12

ORTH_ATOL = 1e-10

N = 6

# (id, factory, kind of instance): one entry per learner and per code path
# of the trial loop that keeps different state (mixing, centering, sampler).
LEARNERS = [
    ("Hedge", lambda: opf.Hedge(eta=2.0, random_state=1), "loss"),
    ("CappedHedge-past", lambda: opf.CappedHedge(
        2, eta=1.0, share="past", alpha=0.05, sampler="systematic", random_state=2), "loss"),
    ("OnlinePCA", lambda: opf.OnlinePCA(2, eta=3.0, random_state=3), "vector"),
    ("OnlinePCA-past", lambda: opf.OnlinePCA(
        2, eta=1.0, share="past", alpha=0.05, random_state=4), "vector"),
    ("OnlinePCA-uniform", lambda: opf.OnlinePCA(
        2, eta=1.0, share="uniform", alpha=0.05, sampler="systematic", random_state=5),
     "vector"),
    ("OnlineAdaptivePCA", lambda: opf.OnlineAdaptivePCA(2, eta=1.0, random_state=6), "vector"),
    ("OnlinePCA-clustered", lambda: opf.OnlinePCA(
        2, eta=3.0, state="clustered", random_state=12), "vector"),
    ("OnlineAdaptivePCA-clustered", lambda: opf.OnlineAdaptivePCA(
        2, eta=1.0, alpha=0.01, sampler="systematic", state="clustered", random_state=13),
     "vector"),
    ("CenteredOnlinePCA", lambda: opf.CenteredOnlinePCA(
        2, eta=2.0, center_lr_inv=1.5, random_state=7), "vector"),
    ("Uncentered6", lambda: opf.CenteredOnlinePCA(
        2, eta=1.0, centered=False, mean_init=np.full(N, 0.1), random_state=8), "vector"),
    ("FollowTheLeader", lambda: opf.FollowTheLeader(2, centered=True), "vector"),
    ("CenteredOnlinePCA-clustered", lambda: opf.CenteredOnlinePCA(
        2, eta=2.0, center_lr_inv=1.5, state="clustered", random_state=14), "vector"),
    ("Uncentered6-clustered", lambda: opf.CenteredOnlinePCA(
        2, eta=1.0, centered=False, mean_init=np.full(N, 0.1), sampler="systematic",
        state="clustered", random_state=15), "vector"),
    ("FollowTheLeader-clustered", lambda: opf.FollowTheLeader(
        2, centered=True, state="clustered"), "vector"),
    ("VarianceMinimizer", lambda: opf.VarianceMinimizer(
        eta=1.0, share="fixed", alpha=0.01, random_state=9), "unit"),
    ("VarianceMinimizer-matrix", lambda: opf.VarianceMinimizer(eta=1.0, random_state=10), "matrix"),
    ("SimplexVarianceMinimizer", lambda: opf.SimplexVarianceMinimizer(eta=1.0, alpha=0.01), "unit"),
    ("OnlineKernelPCA", lambda: opf.OnlineKernelPCA(
        2, kernel="rbf", gamma=0.5, eta=2.0, random_state=11), "vector"),
]

IDS = [entry[0] for entry in LEARNERS]

PCA_IDS = {"OnlinePCA", "OnlinePCA-past", "OnlinePCA-uniform", "OnlineAdaptivePCA",
           "OnlinePCA-clustered", "OnlineAdaptivePCA-clustered",
           "CenteredOnlinePCA", "Uncentered6", "FollowTheLeader",
           "CenteredOnlinePCA-clustered", "Uncentered6-clustered", "FollowTheLeader-clustered"}

BASIS_CLASSES = (opf.OnlinePCA, opf.CenteredOnlinePCA, opf.FollowTheLeader,
                 opf.VarianceMinimizer)


def make_data(kind, T, seed, n=N):
    rng = np.random.default_rng(seed)
    if kind == "loss":
        return rng.random((T, n))
    if kind == "matrix":
        V = np.linalg.qr(rng.standard_normal((T, n, n)))[0]
        C = (V * rng.random((T, 1, n))) @ V.transpose(0, 2, 1)
        return (C + C.transpose(0, 2, 1)) / 2
    X = rng.standard_normal((T, n)) * np.linspace(1.0, 0.2, n) + (kind == "vector")
    return X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))


def fitted(entry, T=40, seed=0):
    _, make, kind = entry
    return make().partial_fit(make_data(kind, T, seed))


def persisted(learner):
    """The learner's persisted state (``__getstate__``: only the used part
    of grown buffers) with its state object's fields spread out as
    ``_state.<field>`` and the loss records as their used columns."""
    d = dict(learner.__getstate__())
    state = d.pop("_state", None)
    if state is not None:
        d.update({f"_state.{k}": v for k, v in vars(state).items()})
    records = d.pop("_records", None)
    if records is not None:
        d["_records"] = records.buf[:, :records.count]
    return d


def state_arrays(learner):
    """Everything a learner's future depends on, as comparable values: its
    persisted state (see :func:`persisted`)."""
    d = persisted(learner)
    skip = {"_records", *learner._TRANSIENT}
    arrays = {k: v for k, v in d.items() if isinstance(v, np.ndarray) and k not in skip}
    rng = d.get("_rng")
    return (arrays, rng.bit_generator.state if rng is not None else None,
            learner.expected_losses_.copy(), learner.realized_losses_.copy())


def assert_same_state(a, b):
    skip = set(a._TRANSIENT) | {"_rng", "_records", "random_state"}
    others = [{k: v for k, v in x.items()
               if k not in skip and not isinstance(v, np.ndarray)}
              for x in (persisted(a), persisted(b))]
    differ = sorted(k for k in others[0].keys() | others[1].keys()
                    if others[0].get(k, others) != others[1].get(k, others))
    assert not differ, [(k, others[0].get(k), others[1].get(k)) for k in differ]
    sa, sb = state_arrays(a), state_arrays(b)
    assert sa[0].keys() == sb[0].keys()
    for key in sa[0]:
        assert_array_equal(sa[0][key], sb[0][key], err_msg=key, strict=True)
    assert sa[1] == sb[1]
    assert_array_equal(sa[2], sb[2], strict=True)
    assert_array_equal(sa[3], sb[3], strict=True)


def assert_split_learn_one_pickle_match(make, X, pickle_after):
    """A learner of ``make()`` fed X in one batch, in the batches 0:1, 1:37,
    37:38, 38:end, and row by row through ``learn_one`` with a pickle round
    trip after row `pickle_after`: the same losses bit for bit, and the same
    ``eta_`` and ``mixability_gap_`` (eta="auto")."""
    whole = make().fit(X)
    split = make()
    for a, b in ((0, 1), (1, 37), (37, 38), (38, X.shape[0])):
        split.partial_fit(X[a:b])
    one = make()
    for i, x in enumerate(X):
        one.learn_one(x)
        if i == pickle_after:
            one = pickle.loads(pickle.dumps(one))
    for other in (split, one):
        assert_array_equal(other.expected_losses_, whole.expected_losses_)
        assert_array_equal(other.realized_losses_, whole.realized_losses_)
        assert other.eta_ == whole.eta_ and other.mixability_gap_ == whole.mixability_gap_


def assert_in_capped_set(learner):
    """W (or the weight vector) has trace 1 and eigenvalues in [0, 1/(n-k)]."""
    n = learner.n_features_in_
    if hasattr(learner, "density_"):
        W = learner.density_
        assert np.isfinite(W).all()
        assert np.abs(W - W.T).max() <= CAPPED_ATOL
        ev = np.linalg.eigvalsh(W)
        trace = np.trace(W)
    else:
        ev = learner.weights_
        trace = math.fsum(ev)
    d = 1 if isinstance(learner, (opf.Hedge, opf.VarianceMinimizer,
                                  opf.SimplexVarianceMinimizer)) else n - learner.n_components
    assert trace == pytest.approx(1.0, rel=0, abs=CAPPED_ATOL)
    assert ev.min() >= -CAPPED_ATOL
    assert ev.max() <= 1.0 / d + CAPPED_ATOL


def orthogonality(Q):
    """|Q^T Q - I|_2 of the columns of Q (n x n, or the clustered state's n x m)."""
    return np.linalg.norm(Q.T @ Q - np.eye(Q.shape[1]), 2)


def extreme_stream(pattern, T, scale, seed):
    rng = np.random.default_rng(seed)
    if pattern == "random":
        X = rng.standard_normal((T, N))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    elif pattern == "one-axis":
        X = np.zeros((T, N))
        X[:, 2] = 1.0
    elif pattern == "repeated":
        X = np.tile(rng.standard_normal(N) / math.sqrt(N), (T, 1))
    elif pattern == "zeros":
        X = np.zeros((T, N))
    elif pattern == "alternating":  # a suppressed axis comes back
        X = np.zeros((T, N))
        X[: T // 2, 0] = 1.0
        X[T // 2:, 1] = 1.0
    return X * scale


def wait_for_writer(learner, thread, timeout=10.0):
    """Wait until `thread` holds `learner`'s guard for writing (its batch
    runs); False if it never did within `timeout` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and thread.is_alive():
        guard = learner.__dict__.get("_guard")
        if guard is not None and guard._writer is not None:
            return True
        time.sleep(0.0005)
    return False


COPIERS = [copy.copy, copy.deepcopy, lambda x: pickle.loads(pickle.dumps(x))]


def fit_while_reading(learner, batches, read, pause=0.0):
    """Feeds each of ``batches`` to ``learner.partial_fit`` in one thread
    (sleeping ``pause`` seconds after each) while another calls ``read(i)``
    for i = 0, 1, 2, ... until the feeding is over.  Returns what the two
    threads raised (each stops at its first exception): a test expects []."""
    finished = threading.Event()
    errors = []

    def feed():
        try:
            for batch in batches:
                learner.partial_fit(batch)
                if pause:
                    time.sleep(pause)
        except Exception as exc:  # noqa: BLE001 - returned to the test
            errors.append(exc)
        finally:
            finished.set()

    def reader():
        i = 0
        try:
            while not finished.is_set():
                read(i)
                i += 1
        except Exception as exc:  # noqa: BLE001 - returned to the test
            errors.append(exc)

    threads = [threading.Thread(target=feed), threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def assert_copy_of_rows_done(dup, make, X):
    """``dup``, a copy taken while ``make()`` was fed X, is bit for bit the
    learner fed X's first ``dup.n_trials_`` rows in one call."""
    t = dup.n_trials_
    assert len(dup.expected_losses_) == t == len(dup.realized_losses_)
    if t == 0:  # copied after the first batch set the learner up, before a trial:
        return make()  # the caller's next rows decide (a fresh learner's numbers)
    expected = make().partial_fit(X[:t])
    assert_same_state(dup, expected)
    return expected


def clustered_dense_reference(name, k, X, fit_clustered, **params):
    """The learner ``name`` with ``state="clustered"`` fed X by
    ``fit_clustered(learner, X)``, what that returned (a record of the
    trials), and the same learner with ``state="dense"`` and the NumPy
    reference's, both fitted on X (random_state=0 for the three)."""
    clustered = getattr(opf, name)(k, state="clustered", random_state=0, **params)
    record = fit_clustered(clustered, X)
    dense = getattr(opf, name)(k, state="dense", random_state=0, **params).fit(X)
    ref = getattr(reference, name)(k, random_state=0, **params).fit(X)
    return clustered, record, dense, ref


def assert_clustered_matches(clustered, dense, ref, values_rtol):
    """The clustered state's expected losses are the reference's and the
    dense state's (1e-9), its density matrix the dense one (CAPPED_ATOL), its
    full eigensystem the dense eigenvalues (``values_rtol``, 1e-9 absolute)
    with orthonormal eigenvectors (1e-12).  Returns that eigensystem."""
    for other in (ref, dense):
        np.testing.assert_allclose(clustered.expected_losses_, other.expected_losses_,
                                   rtol=0, atol=1e-9)
    np.testing.assert_allclose(clustered.density_, dense.density_, rtol=0, atol=CAPPED_ATOL)
    values, vectors = clustered.full_eigensystem()
    np.testing.assert_allclose(values, dense.eigenvalues_, rtol=values_rtol, atol=1e-9)
    assert orthogonality(vectors) <= 1e-12
    return values, vectors
