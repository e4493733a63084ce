"""Reliability of the learners on long-lived streams (issue 7, SPEC section 4).

- Bad input of every kind is rejected with a ``ValueError``/``TypeError``
  naming the argument, and leaves the learner byte for byte as it was
  (``pickle.dumps`` before and after are equal); a bad row anywhere in a
  batch rejects the whole batch.
- Learners pickle and deep-copy mid-stream and continue bit for bit.
- Long runs: 10^5 trials at n = 50 with the orthogonality of the maintained
  eigenvectors and the agreement with a from-scratch eigendecomposition
  monitored; periodic re-orthogonalisation keeps ``||Q^T Q - I||`` small.
- Extreme but legal input (eta in [1e-12, 1e6], norms in [1e-150, 1e150],
  repeated instances, one axis for 10^4 trials, zero vectors) keeps the
  state finite and the density matrix in the capped set.
- Independent learners in threads give the sequential results.
- Memory does not grow with the number of trials beyond the loss records.

Tolerances
----------
CAPPED_ATOL = 1e-12: the density matrix ``Q diag(w) Q^T`` is formed in
floating point from orthonormal Q (error ~ n eps) and weights summing to
one to ~n eps; 1e-12 is the bound the issue asks for.
ORTH_ATOL = 1e-10: the bound on ``||Q^T Q - I||_2`` the issue asks for;
measured ~1e-13 with the default re-orthogonalisation (see the long-run
test for the drift without it).
"""

import copy
import gc
import math
import pickle
import sys
import tracemalloc
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import onlinepca_fast as opf
from onlinepca_fast import _kernels, kernels
from onlinepca_fast.learners import MAX_STEP

CAPPED_ATOL = 1e-12
ORTH_ATOL = 1e-10
N = 6

# (id, factory, kind of instance): one entry per learner and per code path
# of the trial loop that keeps different state (mixing, centering, sampler).
LEARNERS = [
    ("Hedge", lambda: opf.Hedge(eta=2.0, random_state=1), "loss"),
    ("CappedHedge-past", lambda: opf.CappedHedge(
        2, share="past", alpha=0.05, sampler="systematic", random_state=2), "loss"),
    ("OnlinePCA", lambda: opf.OnlinePCA(2, eta=3.0, random_state=3), "vector"),
    ("OnlinePCA-past", lambda: opf.OnlinePCA(
        2, share="past", alpha=0.05, random_state=4), "vector"),
    ("OnlinePCA-uniform", lambda: opf.OnlinePCA(
        2, share="uniform", alpha=0.05, sampler="systematic", random_state=5), "vector"),
    ("OnlineAdaptivePCA", lambda: opf.OnlineAdaptivePCA(2, random_state=6), "vector"),
    ("CenteredOnlinePCA", lambda: opf.CenteredOnlinePCA(
        2, eta=2.0, center_lr_inv=1.5, random_state=7), "vector"),
    ("Uncentered6", lambda: opf.CenteredOnlinePCA(
        2, centered=False, mean_init=np.full(N, 0.1), random_state=8), "vector"),
    ("FollowTheLeader", lambda: opf.FollowTheLeader(2, centered=True), "vector"),
    ("VarianceMinimizer", lambda: opf.VarianceMinimizer(
        share="fixed", alpha=0.01, random_state=9), "unit"),
    ("VarianceMinimizer-matrix", lambda: opf.VarianceMinimizer(random_state=10), "matrix"),
    ("SimplexVarianceMinimizer", lambda: opf.SimplexVarianceMinimizer(alpha=0.01), "unit"),
]
IDS = [entry[0] for entry in LEARNERS]
PCA_IDS = {"OnlinePCA", "OnlinePCA-past", "OnlinePCA-uniform", "OnlineAdaptivePCA",
           "CenteredOnlinePCA", "Uncentered6", "FollowTheLeader"}
BASIS_CLASSES = (opf.OnlinePCA, opf.CenteredOnlinePCA, opf.FollowTheLeader,
                 opf.VarianceMinimizer)


def _data(kind, T, seed, n=N):
    rng = np.random.default_rng(seed)
    if kind == "loss":
        return rng.random((T, n))
    if kind == "matrix":
        V = np.linalg.qr(rng.standard_normal((T, n, n)))[0]
        C = (V * rng.random((T, 1, n))) @ V.transpose(0, 2, 1)
        return (C + C.transpose(0, 2, 1)) / 2
    X = rng.standard_normal((T, n)) * np.linspace(1.0, 0.2, n) + (kind == "vector")
    return X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))


def _fitted(entry, T=40, seed=0):
    _, make, kind = entry
    return make().partial_fit(_data(kind, T, seed))


def _state_arrays(learner):
    """Everything a learner's future depends on, as comparable values."""
    d = learner.__dict__
    skip = {"_losses", *learner._transient()}
    arrays = {k: v for k, v in d.items() if isinstance(v, np.ndarray) and k not in skip}
    rng = d.get("_rng")
    return (arrays, rng.bit_generator.state if rng is not None else None,
            learner.expected_losses_.copy(), learner.realized_losses_.copy())


def _assert_same_state(a, b):
    skip = set(a._transient()) | {"_rng", "_losses", "random_state"}
    others = [{k: v for k, v in x.__dict__.items()
               if k not in skip and not isinstance(v, np.ndarray)} for x in (a, b)]
    assert others[0] == others[1]
    sa, sb = _state_arrays(a), _state_arrays(b)
    assert sa[0].keys() == sb[0].keys()
    for key in sa[0]:
        assert_array_equal(sa[0][key], sb[0][key], err_msg=key, strict=True)
    assert sa[1] == sb[1]
    assert_array_equal(sa[2], sb[2], strict=True)
    assert_array_equal(sa[3], sb[3], strict=True)


def _density_in_capped_set(learner):
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


def _orthogonality(Q):
    return np.linalg.norm(Q.T @ Q - np.eye(Q.shape[0]), 2)


# ==============================================================================
# Bad input
# ==============================================================================

def _with_str(arr):
    arr.flat[arr.size // 2] = "0.5"  # a string that looks like a number
    return arr


def _bad_batches(kind, n=N):
    """(label, batch, exception, message pattern) for partial_fit/fit."""
    good = _data(kind, 9, 99, n)
    if kind == "loss":
        good = np.clip(good, 0.0, 1.0)
    mid = good.shape[0] // 2
    cases = []
    for label, value in [("nan", np.nan), ("inf", np.inf), ("-inf", -np.inf)]:
        bad = good.copy()
        bad[mid].flat[0] = value  # a bad entry in the middle row
        cases.append((f"{label}-middle-row", bad, ValueError, "X contains NaN or infinity"))
    bad = good.copy()
    bad[-1].flat[-1] = np.nan
    cases.append(("nan-last-row", bad, ValueError, "X contains NaN or infinity"))
    wide = np.concatenate([good, good[..., :1]], axis=-1)
    if kind == "matrix":
        cases.append(("wrong-width", np.concatenate([wide, wide[:, :1]], axis=1),
                      ValueError, f"X has {n + 1} features, but .* is expecting {n}"))
        cases.append(("not-square", wide, ValueError, "X must hold square n x n matrices"))
        cases.append(("ndim-4", good[..., np.newaxis], ValueError, "X must have 2 or 3 dim"))
        cases.append(("not-symmetric", good + np.triu(np.full((n, n), 0.01), 1),
                      ValueError, "X must hold symmetric matrices"))
        cases.append(("eigenvalue>1", 2.0 * np.eye(n)[np.newaxis], ValueError,
                      r"X must hold matrices with eigenvalues in \[0, 1\]"))
    else:
        cases.append(("wrong-width", wide, ValueError,
                      f"X has {n + 1} features, but .* is expecting {n}"))
        cases.append(("ndim-1", good[0], ValueError, "X must have 2 .*dimensions"))
        if kind == "loss" or kind == "vector":
            cases.append(("ndim-3", good[np.newaxis], ValueError, "X must have 2 dim"))
    cases += [
        ("ndim-0", 0.5, ValueError, "X must have .*dimensions, got an array of shape \\(\\)"),
        ("empty", good[:0], ValueError, "X has 0 sample"),
        ("no-features", np.zeros((3, 0)), ValueError, "X has 0 feature"),
        ("complex", good.astype(complex), ValueError, "Complex data not supported: X"),
        ("complex-list", [[1j] * n], ValueError, "Complex data not supported: X"),
        ("object-with-str", _with_str(good.astype(object)), TypeError,
         "X must hold real numbers, got the string"),
        ("python-bigint", [[10 ** 400] + [0] * (n - 1)], ValueError,
         "X holds a number beyond the float64 range"),
        ("str", good.astype(str), TypeError, "X must be a real numeric array"),
        ("bool", good > 0.5, TypeError, "X must be a real numeric array"),
        ("datetime", np.zeros((2, n), "M8[s]"), TypeError, "X must be a real numeric array"),
        ("none", None, TypeError, "X must be an array of real numbers, got None"),
        ("ragged", [[0.1] * n, [0.1] * (n - 1)], ValueError,
         "X must be a rectangular numeric array"),
    ]
    if np.finfo(np.longdouble).max > np.finfo(np.float64).max:
        big = good.astype(np.longdouble)
        big[mid].flat[0] = np.longdouble("1e400")
        cases.append(("longdouble-beyond-float64", big, ValueError, "X contains NaN or inf"))
    if kind == "loss":
        for label, value in [("loss>1", 1.5), ("loss<0", -1e-300)]:
            bad = good.copy()
            bad[mid, 0] = value
            cases.append((label, bad, ValueError, r"X must hold loss vectors in \[0, 1\]"))
        cases.append(("int-loss-2", np.full((2, n), 2), ValueError, "X must hold loss"))
    if kind == "unit":
        bad = good.copy()
        bad[mid] = 0.8
        cases.append(("norm>1", bad, ValueError, "X must hold vectors of norm at most 1"))
        cases.append(("int64-max", np.full((2, n), np.iinfo(np.int64).max), ValueError,
                      "X must hold vectors of norm at most 1"))
    if kind == "vector":
        bad = good.copy()
        bad[mid] = 1e200  # finite, but eta |x|^2 overflows
        cases.append(("step-overflow", bad, ValueError, r"X row 4 is too large .*2\*\*1020"))
    return cases


def _cases_for(entry):
    return [(entry, *case) for case in _bad_batches(entry[2])]


BAD_CASES = [c for entry in LEARNERS for c in _cases_for(entry)]


def _case_id(case):
    return f"{case[0][0]}-{case[1]}"


@pytest.mark.parametrize("case", BAD_CASES, ids=[_case_id(c) for c in BAD_CASES])
def test_bad_batch_is_rejected_and_changes_nothing(case):
    entry, label, X, exc, match = case
    learner = _fitted(entry)
    before = pickle.dumps(learner)
    # fit resets, so a new width is legal for it (and for a fresh learner)
    methods = [learner.partial_fit] + ([] if label == "wrong-width" else [learner.fit])
    for method in methods:
        with pytest.raises(exc, match=match):
            method(X)
        assert pickle.dumps(learner) == before
    if label == "wrong-width":
        return
    fresh = entry[1]()  # and on a fresh learner nothing is created
    before = pickle.dumps(fresh)
    with pytest.raises(exc, match=match):
        fresh.partial_fit(X)
    assert pickle.dumps(fresh) == before
    assert not hasattr(fresh, "n_features_in_")


@pytest.mark.parametrize("entry", LEARNERS, ids=IDS)
def test_bad_single_instance_is_rejected_and_changes_nothing(entry):
    learner = _fitted(entry)
    x = _data(entry[2], 1, 5)[0]
    before = pickle.dumps(learner)
    bad_nan = x.copy()
    bad_nan.flat[-1] = np.nan
    for bad, exc, match in [
        (bad_nan, ValueError, "x contains NaN or infinity"),
        (x[np.newaxis, np.newaxis], ValueError, "x must have 1 .*dimensions"),
        (np.append(x, 0.0) if x.ndim == 1 else x[:-1], ValueError, "x (has|must)"),
        (x.astype(complex), ValueError, "Complex data not supported: x"),
        (_with_str(x.astype(object)), TypeError, "x must hold real numbers"),
        (x[:0], ValueError, "x has 0"),
    ]:
        with pytest.raises(exc, match=match):
            learner.learn_one(bad)
        assert pickle.dumps(learner) == before


def test_a_bad_row_anywhere_rejects_the_whole_batch():
    """The chosen semantics: validate the whole batch, then run it."""
    X = _data("vector", 1001, 11)
    learner = opf.OnlinePCA(2, random_state=0).partial_fit(X[:10])
    before = pickle.dumps(learner)
    for row in (0, 500, 1000):
        bad = X.copy()
        bad[row, 3] = np.nan
        with pytest.raises(ValueError, match="X contains NaN or infinity"):
            learner.partial_fit(bad)
        assert learner.n_trials_ == 10
        assert pickle.dumps(learner) == before
    assert learner.partial_fit(X).n_trials_ == 1011


# hyper-parameters: (learner id, parameter, value, exception, message)
BAD_PARAMS = [
    ("OnlinePCA", "n_components", 0, ValueError, "n_components must satisfy 1 <= "),
    ("OnlinePCA", "n_components", N, ValueError, "n_components must satisfy .* <= 5"),
    ("OnlinePCA", "n_components", -1, ValueError, "n_components must satisfy"),
    ("OnlinePCA", "n_components", 10 ** 30, ValueError, "n_components must satisfy"),
    ("OnlinePCA", "n_components", np.uint64(2 ** 64 - 1), ValueError, "n_components must"),
    ("OnlinePCA", "n_components", 2.0, TypeError, "n_components must be an integer"),
    ("OnlinePCA", "n_components", True, TypeError, "n_components must be an integer"),
    ("OnlinePCA", "n_components", None, TypeError, "n_components must be an integer"),
    ("OnlinePCA", "eta", 0.0, ValueError, "eta must be a finite number > 0"),
    ("OnlinePCA", "eta", -1.0, ValueError, "eta must be a finite number > 0"),
    ("OnlinePCA", "eta", np.nan, ValueError, "eta must be a finite number > 0"),
    ("OnlinePCA", "eta", np.inf, ValueError, "eta must be a finite number > 0"),
    ("OnlinePCA", "eta", 1e308, ValueError, r"eta must .*at most 2\*\*1020"),
    ("OnlinePCA", "eta", 10 ** 400, ValueError, "eta must be a finite number"),
    ("OnlinePCA", "eta", "1", TypeError, "eta must be a real number"),
    ("OnlinePCA", "eta", 1j, TypeError, "eta must be a real number"),
    ("OnlinePCA", "eta", np.array([1.0]), TypeError, "eta must be a real number"),
    ("OnlinePCA", "eta", True, TypeError, "eta must be a real number"),
    ("OnlinePCA-uniform", "alpha", 1.0, ValueError, "alpha must satisfy 0 <= alpha < 1"),
    ("OnlinePCA-uniform", "alpha", -1e-300, ValueError, "alpha must satisfy 0 <= alpha"),
    ("OnlinePCA-uniform", "alpha", np.nan, ValueError, "alpha must satisfy 0 <= alpha"),
    ("OnlinePCA-uniform", "alpha", 10 ** 400, ValueError, "alpha must be a finite number"),
    ("OnlinePCA-uniform", "alpha", "0.1", TypeError, "alpha must be a real number"),
    ("OnlinePCA", "share", "shared", ValueError, "share must be one of"),
    ("OnlinePCA", "sampler", "random", ValueError, "sampler must be one of"),
    ("OnlinePCA", "record_losses", "no", TypeError, "record_losses must be a bool"),
    ("OnlinePCA", "reorthogonalize_every", 0, ValueError, "reorthogonalize_every must"),
    ("OnlinePCA", "reorthogonalize_every", 1.5, TypeError, "reorthogonalize_every must"),
    ("CappedHedge-past", "n_components", N, ValueError, "n_components must satisfy"),
    ("CappedHedge-past", "alpha", 1.0, ValueError, "alpha must satisfy"),
    ("CappedHedge-past", "eta", 0, ValueError, "eta must be a finite number > 0"),
    ("Hedge", "eta", -2, ValueError, "eta must be a finite number > 0"),
    ("CenteredOnlinePCA", "center_lr_inv", -1.0, ValueError, "center_lr_inv must be"),
    ("CenteredOnlinePCA", "center_lr_inv", np.inf, ValueError, "center_lr_inv must be"),
    ("CenteredOnlinePCA", "center_lr_inv", 10 ** 400, ValueError, "center_lr_inv must"),
    ("CenteredOnlinePCA", "center_lr_inv", "0", TypeError, "center_lr_inv must be a real"),
    ("CenteredOnlinePCA", "centered", 1, TypeError, "centered must be a bool"),
    ("Uncentered6", "mean_init", [0.0, 1.0], ValueError, "mean_init must have 6 entries"),
    ("Uncentered6", "mean_init", [np.nan] * N, ValueError, "mean_init contains NaN"),
    ("Uncentered6", "mean_init", ["a"] * N, TypeError, "mean_init must be a real"),
    ("FollowTheLeader", "n_components", N, ValueError, "n_components must satisfy"),
    ("VarianceMinimizer", "share", "uniform", ValueError, "share must be one of"),
    ("VarianceMinimizer", "alpha", 1.5, ValueError, "alpha must satisfy"),
    ("SimplexVarianceMinimizer", "eta", 0.0, ValueError, "eta must be a finite number"),
    ("SimplexVarianceMinimizer", "alpha", -0.5, ValueError, "alpha must satisfy"),
]
_BY_ID = dict((entry[0], entry) for entry in LEARNERS)


@pytest.mark.parametrize("case", BAD_PARAMS,
                         ids=[f"{c[0]}-{c[1]}={c[2]!r}"[:60] for c in BAD_PARAMS])
def test_bad_hyper_parameter_is_rejected_and_changes_nothing(case):
    name, param, value, exc, match = case
    entry = _BY_ID[name]
    X = _data(entry[2], 10, 3)
    # mid-stream: set_params, then the next call fails and changes nothing
    learner = _fitted(entry).set_params(**{param: value})
    before = pickle.dumps(learner)
    for call in (learner.partial_fit, learner.fit, lambda X: learner.learn_one(X[0])):
        with pytest.raises(exc, match=match):
            call(X)
        assert pickle.dumps(learner) == before
    # unfitted: nothing is created
    fresh = entry[1]().set_params(**{param: value})
    before = pickle.dumps(fresh)
    with pytest.raises(exc, match=match):
        fresh.partial_fit(X)
    assert pickle.dumps(fresh) == before


def test_invalid_parameter_name():
    learner = opf.OnlinePCA(2)
    with pytest.raises(ValueError, match="Invalid parameter 'etta' for estimator OnlinePCA"):
        learner.set_params(etta=1.0)


@pytest.mark.parametrize("random_state, exc, match", [
    (-1, ValueError, "random_state must be a non-negative seed"),
    (1.5, TypeError, "random_state must be None, an int or a numpy.random.Generator"),
    ("0", TypeError, "random_state must be None, an int"),
    (np.random.RandomState(0), TypeError, "random_state must be None, an int"),
])
def test_bad_random_state(random_state, exc, match):
    learner = opf.OnlinePCA(2, random_state=random_state)
    with pytest.raises(exc, match=match):
        learner.partial_fit(_data("vector", 5, 0))
    assert not hasattr(learner, "n_features_in_")
    fitted = opf.OnlinePCA(2, random_state=0).partial_fit(_data("vector", 5, 0))
    before = pickle.dumps(fitted)
    with pytest.raises(exc, match=match):
        fitted.sample_projection(random_state)
    assert pickle.dumps(fitted) == before


def test_integer_inputs_are_converted_exactly():
    """Integer instances, including int64/uint64 extremes, are legal data."""
    X = np.array([[np.iinfo(np.int64).max, 0, -3, 1, 0, 2],
                  [np.iinfo(np.int64).min, 5, 0, 0, 1, 0]])
    for make in (lambda: opf.OnlinePCA(2, random_state=0),
                 lambda: opf.CenteredOnlinePCA(2, eta=1e-30, random_state=0),
                 lambda: opf.FollowTheLeader(2)):
        a, b = make().partial_fit(X), make().partial_fit(X.astype(np.float64))
        _assert_same_state(a, b)
        _density_in_capped_set(a)
    U = np.full((2, N), np.iinfo(np.uint64).max)
    _density_in_capped_set(opf.OnlinePCA(2, random_state=0).partial_fit(U))
    L = np.array([[0, 1, 1, 0, 0, 1]], dtype=np.uint8)
    _assert_same_state(opf.CappedHedge(2, random_state=0).partial_fit(L),
                       opf.CappedHedge(2, random_state=0).partial_fit(L.astype(float)))


def test_transform_and_inverse_transform_reject_bad_input():
    learner = opf.OnlinePCA(2, random_state=0).partial_fit(_data("vector", 20, 0))
    before = pickle.dumps(learner)
    for Y, exc, match in [
        (np.ones((2, N - 1)), ValueError, "X has 5 features"),
        (np.full((2, N), np.nan), ValueError, "X contains NaN"),
        (np.ones((2, N), complex), ValueError, "Complex data not supported: X"),
        (np.ones(N), ValueError, "X must have 2 dimensions"),
    ]:
        with pytest.raises(exc, match=match):
            learner.transform(Y)
    for Y, exc, match in [
        (np.ones((2, 3)), ValueError, r"X must have shape \(n_samples, 2\)"),
        (np.full((2, 2), np.inf), ValueError, "X contains NaN or infinity"),
        (np.ones((2, 2), complex), ValueError, "Complex data not supported: X"),
        (np.full((2, 2), None, object), ValueError, "X contains NaN"),
        ([["a", "b"]], TypeError, "X must be a real numeric array"),
        ([[1.0, 2.0], [1.0]], ValueError, "X must be a rectangular numeric array"),
    ]:
        with pytest.raises(exc, match=match):
            learner.inverse_transform(Y)
    assert pickle.dumps(learner) == before


def test_a_sparse_matrix_is_rejected():
    sparse = pytest.importorskip("scipy.sparse")
    learner = opf.OnlinePCA(2, random_state=0)
    with pytest.raises(TypeError, match="X is a sparse matrix"):
        learner.partial_fit(sparse.csr_matrix(_data("vector", 5, 0)))


# --- the step bound -----------------------------------------------------------

@pytest.mark.parametrize("make, centered", [
    (lambda eta: opf.OnlinePCA(2, eta=eta, random_state=0), None),
    (lambda eta: opf.CenteredOnlinePCA(2, eta=eta, centered=False, random_state=0), False),
    (lambda eta: opf.CenteredOnlinePCA(2, eta=eta, random_state=0), True),
])
@pytest.mark.parametrize("eta", [1e-12, 1.0, 1e6])
def test_step_bound_is_max_step(make, centered, eta):
    """max(1, eta) |x|^2 <= 2**1020 is accepted, beyond is rejected."""
    # the centered learner checks |x| + max(|m|, max|x_j|) <= 2 |x| here
    reach = 2.0 if centered else 1.0
    edge = math.sqrt(MAX_STEP / max(1.0, eta)) / reach
    x = np.zeros((1, N))
    x[0, 1] = edge * (1 - 1e-15)
    learner = make(eta).partial_fit(x)
    assert np.isfinite(learner.eigenvalues_).all()
    _density_in_capped_set(learner)
    x[0, 1] = edge * (1 + 1e-14)
    before = pickle.dumps(learner)
    with pytest.raises(ValueError, match=r"X row 0 is too large .* exceeds 2\*\*1020"):
        learner.partial_fit(x)
    assert pickle.dumps(learner) == before


# --- a failure inside the compiled loop ------------------------------------------

def test_kernel_failure_on_the_first_trial_changes_nothing():
    """A non-finite eigensystem (here planted) makes the rank-one update fail:
    RuntimeError, and the failing trial changed nothing."""
    learner = opf.OnlinePCA(2, random_state=0).partial_fit(_data("vector", 10, 0))
    learner._q[0, 0] = np.nan  # what a kernel returning NaN would leave
    before = pickle.dumps(learner)
    with pytest.raises(RuntimeError, match=r"trial 0 of the batch failed .*evecs must be finite"):
        learner.partial_fit(_data("vector", 5, 1))
    assert pickle.dumps(learner) == before


class _FailingEngine:
    """Wraps the engine: runs the first `ok` trials, then reports a failure."""

    def __init__(self, engine, ok):
        self.engine, self.ok = engine, ok

    def run(self, X, u, el, rl):
        ok = min(self.ok, X.shape[0])
        done = self.engine.run(X[:ok], u[:ok], el[:ok], rl[:ok]) if ok else 0
        self.ok -= done
        if done == X.shape[0]:
            return done
        raise _kernels.status_error(-99, "test", trials_done=done)


@pytest.mark.parametrize("entry", [e for e in LEARNERS if e[0] in
                                   ("OnlinePCA", "CappedHedge-past", "FollowTheLeader")],
                         ids=lambda e: e[0])
def test_kernel_failure_mid_batch_keeps_exactly_the_rows_before(entry):
    _, make, kind = entry
    X = _data(kind, 30, 4)
    failing = make().partial_fit(X[:5])
    engine = failing._get_engine(failing._plan(X[5:], False, 1.0, "X", False)[0])
    failing._engine = _FailingEngine(engine, 12)
    with pytest.raises(RuntimeError, match="trial 12 of the batch failed .* 12 rows"):
        failing.partial_fit(X[5:])
    failing._engine = None
    reference = make().partial_fit(X[:5]).partial_fit(X[5:17])
    _assert_same_state(failing, reference)
    _assert_same_state(failing.partial_fit(X[17:]), reference.partial_fit(X[17:]))


# --- kernels ------------------------------------------------------------------------

KERNEL_CASES = [
    (kernels.cap, ([1.0, np.nan], 1), ValueError, "w contains NaN"),
    (kernels.cap, ([1.0, np.inf], 1), ValueError, "w contains infinite values"),
    (kernels.cap, ([1.0, -1.0], 1), ValueError, "w must be non-negative"),
    (kernels.cap, ([], 1), ValueError, "w must not be empty"),
    (kernels.cap, (np.ones((2, 2)), 1), ValueError, "w must be 1-D"),
    (kernels.cap, ([[1.0, 2.0], [1.0]], 1), ValueError, "w must be a rectangular numeric"),
    (kernels.cap, ([1.0, 1j], 1), ValueError, "Complex data not supported: w"),
    (kernels.cap, (np.array([1, "2"], object), 1), TypeError, "w must hold real numbers"),
    (kernels.cap, (["1", "2"], 1), TypeError, "w must be a real numeric array"),
    (kernels.cap, ([True, False], 1), TypeError, "w must be a real numeric array"),
    (kernels.cap, ([1.0, 2.0], 3), ValueError, "d must satisfy 1 <= d <= 2"),
    (kernels.cap, ([1.0, 2.0], 0), ValueError, "d must satisfy 1 <= d <= 2"),
    (kernels.cap, ([1.0, 2.0], 10 ** 30), ValueError, "d must satisfy 1 <= d <= 2"),
    (kernels.cap, ([1.0, 2.0], 1.0), TypeError, "d must be an integer"),
    (kernels.cap_log, ([0.0, np.inf], 1), ValueError, r"mu contains \+inf"),
    (kernels.cap_log, ([0.0, np.nan], 1), ValueError, "mu contains NaN"),
    (kernels.cap_log, ([0.0, 1j], 1), ValueError, "Complex data not supported: mu"),
    (kernels.decompose, ([0.9, 0.1], 2), ValueError, "w is not in the capped simplex"),
    (kernels.decompose, ([0.0, 0.0], 1), ValueError, "w must have a positive sum"),
    (kernels.decompose, ([1e308] * 3, 2), ValueError, "w must have a finite sum"),
    (kernels.decompose, ([0.5, 0.5, 0.0], 3), ValueError, "w is not in the capped"),
    (kernels.decompose, ([0.5, np.nan], 1), ValueError, "w contains NaN"),
    (kernels.sample_corner, ([0.5, 0.5], 1, 0, "bogus"), ValueError, "method must be one of"),
    (kernels.sample_corner, ([0.5, 0.5], 1, "0"), TypeError, "rng must be None, an int"),
    (kernels.sample_corner, ([0.5, 0.5], 1, -5), ValueError, "rng must be a non-negative"),
    (kernels.sample_corner, ([0.9, 0.1], 2), ValueError, "w is not in the capped simplex"),
    (kernels.sample_corner, ([1e308] * 3, 2), ValueError, "w must have a finite sum"),
    (kernels.rank_one_update, ([2.0, 1.0], np.eye(2), 1.0, [1.0, 0.0]), ValueError,
     "evals must be in ascending order"),
    (kernels.rank_one_update, ([1.0, np.nan], np.eye(2), 1.0, [1.0, 0.0]), ValueError,
     "evals must be finite"),
    (kernels.rank_one_update, ([1.0, 2.0], np.full((2, 2), np.inf), 1.0, [1.0, 0.0]),
     ValueError, "evecs must be finite"),
    (kernels.rank_one_update, ([1.0, 2.0], np.eye(3), 1.0, [1.0, 0.0]), ValueError,
     r"evecs must have shape \(2, 2\)"),
    (kernels.rank_one_update, ([1.0, 2.0], np.eye(2), np.nan, [1.0, 0.0]), ValueError,
     "rho must be a finite number"),
    (kernels.rank_one_update, ([1.0, 2.0], np.eye(2), "1", [1.0, 0.0]), TypeError,
     "rho must be a real number"),
    (kernels.rank_one_update, ([1.0, 2.0], np.eye(2), 1.0, [1.0, 0.0, 0.0]), ValueError,
     r"x must have shape \(2,\)"),
    (kernels.rank_one_update, ([1.0, 2.0], np.eye(2), 1.0, [1j, 0.0]), ValueError,
     "Complex data not supported: x"),
    (kernels.rank_one_update, ([1.0, 2.0], np.eye(2), 1e300, [1e200, 0.0]), ValueError,
     r"rho \* \|x\|\^2 overflows"),
    (kernels.rank_one_update, ([], np.eye(0), 1.0, []), ValueError, "evals must be a non-empty"),
    (kernels.rank_one_update, ([1.0, 2.0], [[1.0, 0.0], [1.0]], 1.0, [1.0, 0.0]), ValueError,
     "evecs must be a rectangular numeric array"),
]


@pytest.mark.parametrize("func, args, exc, match", KERNEL_CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(KERNEL_CASES)])
def test_kernels_reject_bad_input(func, args, exc, match):
    arrays = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(exc, match=match):
        func(*args)
    for a, b in zip(args, arrays):  # inputs untouched
        if isinstance(a, np.ndarray):
            assert_array_equal(a, b)


# ==============================================================================
# Persistence
# ==============================================================================

@pytest.mark.parametrize("entry", LEARNERS, ids=IDS)
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_resume_mid_stream_is_bit_for_bit(entry, how):
    _, make, kind = entry
    X = _data(kind, 90, 21)
    make_small = (lambda: make().set_params(reorthogonalize_every=7)) \
        if isinstance(make(), BASIS_CLASSES) else make  # cross re-orthogonalisations
    uninterrupted = make_small().partial_fit(X[:33])
    if how == "pickle":
        resumed = pickle.loads(pickle.dumps(uninterrupted))
    else:
        resumed = copy.deepcopy(uninterrupted)
    _assert_same_state(resumed, uninterrupted)
    for part in (X[33:34], X[34:80]):
        uninterrupted.partial_fit(part)
        resumed.partial_fit(part)
        # (not pickle bytes: pickle's memo differs for unpickled dtype objects)
        _assert_same_state(resumed, uninterrupted)
    resumed.learn_one(X[80])
    uninterrupted.learn_one(X[80])
    # the same as one batch from the start
    one_batch = make_small().partial_fit(X[:81])
    _assert_same_state(resumed, one_batch)
    # the generator was saved too: the next draws agree
    if hasattr(resumed, "sample_projection"):
        assert_array_equal(resumed.sample_projection(), uninterrupted.sample_projection())


def test_unfitted_learner_pickles():
    learner = pickle.loads(pickle.dumps(opf.OnlinePCA(3, eta=0.5, random_state=1)))
    assert learner.get_params() == opf.OnlinePCA(3, eta=0.5, random_state=1).get_params()
    X = _data("vector", 20, 0)
    _assert_same_state(learner.partial_fit(X),
                       opf.OnlinePCA(3, eta=0.5, random_state=1).partial_fit(X))


def test_resume_with_a_shared_generator():
    """A Generator passed as random_state travels inside the pickle."""
    rng = np.random.default_rng(5)
    X = _data("vector", 40, 1)
    a = opf.OnlinePCA(2, random_state=rng).partial_fit(X[:20])
    b = pickle.loads(pickle.dumps(a))
    assert_array_equal(a.partial_fit(X[20:]).expected_losses_,
                       b.partial_fit(X[20:]).expected_losses_)


def test_pickle_from_another_version_warns():
    learner = opf.OnlinePCA(2, random_state=0).partial_fit(_data("vector", 10, 0))
    state = learner.__getstate__()
    assert state["_onlinepca_fast_version"] == opf.__version__
    assert "_engine" not in state  # raw pointers are rebuilt, never pickled
    for saved in ("0.0.1", None):
        tampered = dict(state)
        if saved is None:
            del tampered["_onlinepca_fast_version"]  # a pickle from before versioning
        else:
            tampered["_onlinepca_fast_version"] = saved
        clone = opf.OnlinePCA.__new__(opf.OnlinePCA)
        with pytest.warns(UserWarning, match=f"saved by onlinepca_fast {saved}, this is "):
            clone.__setstate__(tampered)
        assert "_onlinepca_fast_version" not in clone.__dict__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pickle.loads(pickle.dumps(learner))  # same version: silent


# ==============================================================================
# Long runs
# ==============================================================================

def _long_stream(T, n, seed, chunk):
    """Chunks of a low-rank stream with noise, in the unit ball."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, 5)) / math.sqrt(5)
    for _ in range(T // chunk):
        X = rng.standard_normal((chunk, 5)) @ B.T + 0.1 * rng.standard_normal((chunk, n))
        yield X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))


LONG_T, LONG_N, LONG_CHUNK = 100_000, 50, 5_000


@pytest.mark.parametrize("every", [10_000, None], ids=["default", "never"])
def test_long_run_uncentered_alg6_matches_eigh(every):
    """10^5 trials: the maintained eigensystem of A = -log(n) I - eta sum x x^T
    against numpy's eigh of A formed from the data, every 5000 trials.

    Measured (n = 50, low-rank stream): without re-orthogonalisation
    ||Q^T Q - I|| grows about linearly, from 5.4e-14 after 5000 trials to
    2.9e-13 after 10^5 (~3e-18 per trial; up to 1e-16 per trial at n = 200
    on anisotropic data, i.e. past 1e-10 within ~10^6 trials); with the
    default (every 10^4 trials) it stays below 7.5e-14.  The eigenvalues
    agree with eigh to 2e-14 (default) and 5e-14 (never) relative to ||A||.
    """
    n, eta = LONG_N, 0.5
    learner = opf.CenteredOnlinePCA(5, eta=eta, centered=False, random_state=0,
                                    record_losses=False, reorthogonalize_every=every)
    S = np.zeros((n, n))
    worst = []
    for X in _long_stream(LONG_T, n, 1, LONG_CHUNK):
        learner.partial_fit(X)
        S += X.T @ X
        Q, lam = learner.eigenvectors_, learner.eigenvalues_
        A = -math.log(n) * np.eye(n) - eta * S
        scale = np.linalg.norm(A, 2)
        orth = _orthogonality(Q)
        assert orth <= ORTH_ATOL
        assert np.all(np.diff(lam) >= 0)
        assert np.abs(np.linalg.eigvalsh(A) - lam).max() <= 1e-11 * scale
        assert np.linalg.norm((Q * lam) @ Q.T - A, 2) <= 1e-11 * scale
        _density_in_capped_set(learner)
        worst.append(orth)
    assert learner.n_trials_ == LONG_T
    if every is None:  # the drift the default removes
        assert worst[-1] > 2.5 * worst[0]
    else:
        assert max(worst) < 2.5e-13


def test_long_run_online_pca_stays_orthogonal_and_capped():
    """10^5 trials of WK Alg. 5 at n = 50: log W after capping has no closed
    form in the data, so check orthogonality, the capped set and the exact
    cap level of the top eigenvalues, every 5000 trials."""
    n, k = LONG_N, 5
    learner = opf.OnlinePCA(k, eta=1.0, random_state=0, record_losses=False)
    for X in _long_stream(LONG_T, n, 2, LONG_CHUNK):
        learner.partial_fit(X)
        lam = learner.eigenvalues_
        assert _orthogonality(learner.eigenvectors_) <= ORTH_ATOL
        assert np.all(np.diff(lam) >= 0) and np.isfinite(lam).all()
        assert lam[-1] <= -math.log(n - k)  # capped entries are exactly -log(n-k)
        _density_in_capped_set(learner)
    assert learner.n_trials_ == LONG_T


def test_reorthogonalization_restores_orthogonality():
    """One Newton-Schulz step takes an error of 1e-8 to rounding level and
    moves the eigenvectors by no more than that error."""
    learner = opf.OnlinePCA(3, random_state=0).partial_fit(_data("vector", 200, 0, n=20))
    rng = np.random.default_rng(0)
    learner._q += 1e-8 * rng.standard_normal(learner._q.shape)
    before = learner._q.copy()
    assert _orthogonality(before) > 1e-9
    learner._reorthogonalize()
    assert _orthogonality(learner._q) < 1e-14
    assert np.abs(learner._q - before).max() < 1e-7
    _density_in_capped_set(learner.partial_fit(_data("vector", 50, 1, n=20)))


@pytest.mark.parametrize("make", [
    lambda: opf.OnlinePCA(2, share="fixed", alpha=1e-3, random_state=0, reorthogonalize_every=5),
    lambda: opf.CenteredOnlinePCA(2, random_state=0, reorthogonalize_every=5),
    lambda: opf.FollowTheLeader(2, reorthogonalize_every=5),
    lambda: opf.VarianceMinimizer(random_state=0, reorthogonalize_every=5),
], ids=["OnlinePCA", "CenteredOnlinePCA", "FollowTheLeader", "VarianceMinimizer"])
def test_reorthogonalization_does_not_depend_on_batch_boundaries(make):
    X = _data("unit", 53, 3)
    batch = make().partial_fit(X)
    single = make()
    for x in X:
        single.learn_one(x)
    mixed = make()
    for part in np.split(X, [3, 4, 12, 13, 31]):
        mixed.partial_fit(part)
    _assert_same_state(batch, single)
    _assert_same_state(batch, mixed)
    never = make().set_params(reorthogonalize_every=None).partial_fit(X)
    assert not np.array_equal(never.eigenvectors_, batch.eigenvectors_)  # it did act


# ==============================================================================
# Extreme but legal input
# ==============================================================================

def _extreme_stream(pattern, T, scale, seed):
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


PCA_MAKERS = [
    ("OnlinePCA", lambda eta: opf.OnlinePCA(2, eta=eta, random_state=0)),
    ("OnlinePCA-fixed", lambda eta: opf.OnlinePCA(
        2, eta=eta, share="fixed", alpha=1e-6, random_state=0)),
    ("OnlinePCA-past", lambda eta: opf.OnlinePCA(
        2, eta=eta, share="past", alpha=1e-3, random_state=0)),
    ("CenteredOnlinePCA", lambda eta: opf.CenteredOnlinePCA(2, eta=eta, random_state=0)),
    ("Uncentered6", lambda eta: opf.CenteredOnlinePCA(
        2, eta=eta, centered=False, random_state=0)),
    ("FollowTheLeader", lambda eta: opf.FollowTheLeader(2)),
]


def _check_extreme(learner):
    assert np.isfinite(learner.eigenvalues_).all()
    assert np.all(np.diff(learner.eigenvalues_) >= 0)
    assert _orthogonality(learner.eigenvectors_) <= ORTH_ATOL
    _density_in_capped_set(learner)
    if learner.record_losses:
        assert np.isfinite(learner.expected_losses_).all()


@pytest.mark.parametrize("pattern", ["random", "one-axis", "repeated", "zeros", "alternating"])
@pytest.mark.parametrize("scale", [1e150, 1.0, 1e-150])
@pytest.mark.parametrize("eta", [1e6, 1e-12])
@pytest.mark.parametrize("name, make", PCA_MAKERS, ids=[m[0] for m in PCA_MAKERS])
def test_extreme_input_keeps_the_pca_learners_finite_and_capped(name, make, eta, scale,
                                                                 pattern):
    T = 10_000 if pattern == "one-axis" else 400
    learner = make(eta)
    X = _extreme_stream(pattern, T, scale, seed=1)
    for part in np.array_split(X, 4):
        learner.partial_fit(part)
        _check_extreme(learner)
    assert learner.n_trials_ == T


def test_log_weights_are_floored_2_pow_1020_below_the_largest():
    """eta |x|^2 = 1e306 per trial along one axis: without the floor the
    log-weight reaches -inf after ~180 trials (and the rank-one update
    refuses it); with it the weight stays exp(-2**1020) = 0."""
    X = _extreme_stream("one-axis", 400, 1e150, 0)
    for learner in (opf.OnlinePCA(2, eta=1e6, random_state=0),
                    opf.CenteredOnlinePCA(2, eta=1e6, centered=False, random_state=0)):
        learner.partial_fit(X)
        lam = learner.eigenvalues_
        assert lam[0] == lam[-1] - MAX_STEP  # the floor, exactly
        assert lam[1] == lam[-1]  # the other directions are untouched
        _density_in_capped_set(learner)
        assert learner.density_[2, 2] == 0.0
        # ordinary data afterwards keep it finite and capped
        learner.partial_fit(_extreme_stream("random", 50, 1.0, 1))
        _check_extreme(learner)


def test_centered_spectrum_is_shifted_when_it_leaves_the_range():
    """Isotropic data at eta |x|^2 = 1e306: every eigenvalue of A falls by
    ~1e306/n per trial; past -2**1020 the spectrum is shifted up (W is
    shift invariant) instead of overflowing."""
    X = _extreme_stream("random", 2000, 1e150, 3)
    learner = opf.CenteredOnlinePCA(2, eta=1e6, centered=False, random_state=0)
    for part in np.array_split(X, 10):
        learner.partial_fit(part)
        _check_extreme(learner)
        assert learner.eigenvalues_[-1] >= -2 * MAX_STEP
    assert learner.eigenvalues_[0] < -1e306  # far beyond -log(n): it did accumulate


@pytest.mark.parametrize("eta", [1e-12, 1.0, 1e6, MAX_STEP / 2])
@pytest.mark.parametrize("make", [
    lambda eta: opf.Hedge(eta=eta, random_state=0),
    lambda eta: opf.CappedHedge(2, eta=eta, random_state=0),
    lambda eta: opf.CappedHedge(2, eta=eta, share="past", alpha=1e-3, random_state=0),
    lambda eta: opf.CappedHedge(2, eta=eta, share="fixed", alpha=1e-9, random_state=0),
    lambda eta: opf.SimplexVarianceMinimizer(eta=eta, alpha=1e-9),
    lambda eta: opf.VarianceMinimizer(eta=eta, random_state=0),
], ids=["Hedge", "CappedHedge", "CappedHedge-past", "CappedHedge-fixed",
        "SimplexVarianceMinimizer", "VarianceMinimizer"])
def test_extreme_eta_keeps_the_other_learners_finite_and_capped(make, eta):
    rng = np.random.default_rng(0)
    learner = make(eta)
    if isinstance(learner, (opf.Hedge, opf.CappedHedge)):
        L = (rng.random((600, N)) < 0.5).astype(float)  # 0/1 losses
        L[:300, :3] = 1.0  # three experts lose everything, then come back
        L[300:, :3] = 0.0
        X = L
    else:
        X = np.zeros((600, N))
        X[:300, 0] = 1.0
        X[300:] = _extreme_stream("random", 300, 1.0, 0)
    for part in np.array_split(X, 3):
        learner.partial_fit(part)
        assert np.isfinite(learner._lam).all()
        assert np.isfinite(learner.expected_losses_).all()
        _density_in_capped_set(learner)


# ==============================================================================
# Threads
# ==============================================================================

def _thread_job(args):
    make, X, splits = args
    learner = make()
    for part in np.split(X, splits):
        learner.partial_fit(part)
    return learner


def test_independent_learners_in_threads_match_sequential_runs():
    n = 30
    rng = np.random.default_rng(0)
    jobs = []
    for i in range(6):
        X = rng.standard_normal((400, n)) * np.linspace(1, 0.1, n)
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
        make = [lambda i=i: opf.OnlinePCA(3, random_state=i, reorthogonalize_every=50),
                lambda i=i: opf.CenteredOnlinePCA(3, random_state=i),
                lambda i=i: opf.CappedHedge(3, share="past", alpha=0.01, random_state=i),
                lambda: opf.FollowTheLeader(3)][i % 4]
        data = np.abs(X) if i % 4 == 2 else X
        jobs.append((make, data, sorted(rng.choice(np.arange(1, 400), 5, replace=False))))
    sequential = [_thread_job(job) for job in jobs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        threaded = list(pool.map(_thread_job, jobs))
    for a, b in zip(sequential, threaded):
        _assert_same_state(a, b)


# ==============================================================================
# Memory
# ==============================================================================

def _rss_bytes():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096
    except OSError:
        return None


@pytest.mark.parametrize("record", [False, True])
def test_memory_does_not_grow_with_the_number_of_trials(record):
    """10^5 trials in batches of 1000 (n = 20): traced memory grows by the
    loss records only (16 bytes a trial, in a buffer that doubles), and not
    at all without them.  Measured: ~0 bytes (record=False), 2.1 MB for the
    10^5 recorded pairs (record=True); RSS within ~1 MB."""
    n, T, batch = 20, 100_000, 1000
    X = _data("vector", batch, 0, n=n)
    learner = opf.OnlinePCA(3, random_state=0, record_losses=record,
                            reorthogonalize_every=10_000)
    learner.partial_fit(X)  # engine and workspace exist from here on
    gc.collect()
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        rss0 = _rss_bytes()
        for _ in range(T // batch):
            learner.partial_fit(X)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - base
        rss1 = _rss_bytes()
    finally:
        tracemalloc.stop()
    losses = 16 * (T + batch)  # two float64 per trial
    if record:
        assert learner.expected_losses_.shape == (T + batch,)
        assert grown <= 2 * losses + 64 * 1024
    else:
        assert learner.expected_losses_.shape == (0,)
        assert learner._losses.size == 0  # nothing kept per trial
        assert grown <= 64 * 1024
    if rss0 is not None and sys.platform.startswith("linux"):
        assert rss1 - rss0 <= 2 * losses * record + 8 * 2**20
    assert learner.n_trials_ == T + batch
