"""Tests of the argument checks (``_validation.py``) as every learner and
kernel applies them: bad input of every kind is rejected with a
``ValueError``/``TypeError`` naming the argument and leaves the learner
byte for byte as it was (``pickle.dumps`` before and after are equal); a
bad row anywhere in a batch rejects the whole batch; hyper-parameters,
random states, the step bound MAX_STEP and the public kernels' arguments.
"""

import math
import pickle

import numpy as np
import pytest
from learner_cases import (
    LEARNERS,
    N,
    assert_in_capped_set,
    assert_same_state,
    fitted,
    make_data,
)
from numpy.testing import assert_array_equal

import onlinepca_fast as opf
from onlinepca_fast import kernels
from onlinepca_fast.learners import MAX_STEP


def _with_str(arr):
    arr.flat[arr.size // 2] = "0.5"  # a string that looks like a number
    return arr


def _bad_batches(kind, n=N):
    """(label, batch, exception, message pattern) for partial_fit/fit."""
    good = make_data(kind, 9, 99, n)
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
        cases.append(("step-overflow", bad, ValueError, r"X row 4 is too large.*2\*\*1020"))
    return cases


def _cases_for(entry):
    return [(entry, *case) for case in _bad_batches(entry[2])]


BAD_CASES = [c for entry in LEARNERS for c in _cases_for(entry)]


def _bad_case_id(case):
    return f"{case[0][0]}-{case[1]}"


@pytest.mark.parametrize("case", BAD_CASES, ids=[_bad_case_id(c) for c in BAD_CASES])
def test_bad_batch_is_rejected_and_changes_nothing(case):
    entry, label, X, exc, match = case
    learner = fitted(entry)
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


def test_bad_single_instance_is_rejected_and_changes_nothing(learner_case):
    learner = fitted(learner_case)
    x = make_data(learner_case[2], 1, 5)[0]
    before = pickle.dumps(learner)
    bad_nan = x.copy()
    bad_nan.flat[-1] = np.nan
    for bad, exc, match in [
        (bad_nan, ValueError, "x contains NaN or infinity"),
        (x[np.newaxis, np.newaxis], ValueError, "x must have 1 .*dimension"),
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
    X = make_data("vector", 1001, 11)
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
    ("OnlineKernelPCA", "record_losses", 0, TypeError, "record_losses must be a bool"),
    ("OnlineKernelPCA", "record_losses", None, TypeError, "record_losses must be a bool"),
    ("OnlineKernelPCA", "record_losses", "yes", TypeError, "record_losses must be a bool"),
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
    X = make_data(entry[2], 10, 3)
    # mid-stream: set_params, then the next call fails and changes nothing
    learner = fitted(entry).set_params(**{param: value})
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
        learner.partial_fit(make_data("vector", 5, 0))
    assert not hasattr(learner, "n_features_in_")
    fitted = opf.OnlinePCA(2, random_state=0).partial_fit(make_data("vector", 5, 0))
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
        assert_same_state(a, b)
        assert_in_capped_set(a)
    U = np.full((2, N), np.iinfo(np.uint64).max)
    assert_in_capped_set(opf.OnlinePCA(2, random_state=0).partial_fit(U))
    L = np.array([[0, 1, 1, 0, 0, 1]], dtype=np.uint8)
    assert_same_state(opf.CappedHedge(2, random_state=0).partial_fit(L),
                       opf.CappedHedge(2, random_state=0).partial_fit(L.astype(float)))


def test_transform_and_inverse_transform_reject_bad_input():
    learner = opf.OnlinePCA(2, random_state=0).partial_fit(make_data("vector", 20, 0))
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


def test_a_sparse_matrix_is_rejected_where_dense_data_is_required():
    # the learners' fit, partial_fit, learn_one and transform take it (test_sparse.py)
    import scipy.sparse as sparse
    learner = opf.OnlinePCA(2, random_state=0).partial_fit(
        sparse.csr_matrix(make_data("vector", 5, 0)))
    before = pickle.dumps(learner)
    with pytest.raises(TypeError, match="X is a sparse matrix; dense data is required"):
        learner.inverse_transform(sparse.csr_matrix(np.ones((2, 2))))
    assert pickle.dumps(learner) == before


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
    assert_in_capped_set(learner)
    x[0, 1] = edge * (1 + 1e-14)
    before = pickle.dumps(learner)
    with pytest.raises(ValueError, match=r"X row 0 is too large .* exceeds 2\*\*1020"):
        learner.partial_fit(x)
    assert pickle.dumps(learner) == before


@pytest.mark.parametrize("make", [
    lambda **kw: opf.OnlinePCA(2, **kw),
    lambda **kw: opf.OnlineAdaptivePCA(2, **kw),
    lambda **kw: opf.CenteredOnlinePCA(2, **kw),
    lambda **kw: opf.CenteredOnlinePCA(2, centered=False, **kw),
])
def test_too_large_names_the_rate_the_user_gave(make):
    """Issue 35, item 13: with eta="auto" (the default) the message said
    "eta = 1.0", the value the check uses for it."""
    x = np.zeros((1, N))
    x[0, 1] = 2.0 ** 511
    with pytest.raises(ValueError, match=r'too large for eta="auto": \(?\|x.* exceeds '
                                         r"2\*\*1020, .*; rescale the data \(nothing"):
        make().partial_fit(x)
    with pytest.raises(ValueError, match=r"too large for eta = 2.0: max\(1, eta\) \* "
                                         r".*; rescale the data or eta \(nothing"):
        make(eta=2.0).partial_fit(x)


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
     "evals, rho and x give updated eigenvalues beyond the float64 range"),
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
