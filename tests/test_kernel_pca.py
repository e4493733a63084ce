"""Tests of OnlineKernelPCA (Kuzmin & Warmuth 2007, "KW", Algorithm 6).

The compiled learner (bordered eigen-updates of the kernel matrix) is
compared with the NumPy reference (eigh of the full kernel matrix every
trial, KW's matrices P~ and W~ formed explicitly), with the linear learner
that KW update (2) defines (CenteredOnlinePCA(centered=False)), and with
KW's Sec. 5 experiment.

Tolerances
----------
REF_RTOL = 1e-8 (the issue's figure; observed ~1e-12): the two learners
compute the same quantities from eigensystems that agree to a few
``eps |K|`` per trial.  Losses near zero (an instance almost in the span of
the past ones) are compared with an absolute floor REF_ATOL = 1e-10 times
the largest ``k(x, x)``.
LINEAR_RTOL = 1e-9: the kernel and the feature-space learner agree exactly
in exact arithmetic when the cap binds (see test_linear_kernel_*).
"""

import functools
import math
import pickle

import numpy as np
import pytest

import onlinepca_fast as opf
from onlinepca_fast import _kernels, reference
from onlinepca_fast.datasets import noisy_cone
from onlinepca_fast.kernels import null_space_tol
from onlinepca_fast.reference import gram

REF_RTOL = 1e-8
REF_ATOL = 1e-10
LINEAR_RTOL = 1e-9


# The matrices here are small: BLAS threads only contend (conftest.py's
# one_blas_thread, around every test of this module).
pytestmark = pytest.mark.usefixtures("one_blas_thread")

KW_KERNEL = dict(kernel="poly", degree=2, gamma=1.0, coef0=0.0)  # (x . y)^2


def _data(T=300, n=8, seed=0):
    return np.random.default_rng(seed).standard_normal((T, n)) / np.sqrt(n)


def _assert_losses_close(fast, ref, kappa_max):
    atol = REF_ATOL * kappa_max
    np.testing.assert_allclose(fast.expected_losses_, ref.expected_losses_,
                               rtol=REF_RTOL, atol=atol)
    np.testing.assert_allclose(fast.realized_losses_, ref.realized_losses_,
                               rtol=REF_RTOL, atol=atol)


# -- against the reference ----------------------------------------------------

@pytest.mark.parametrize("params", [
    dict(kernel="rbf"),
    dict(kernel="rbf", gamma=2.0, sampler="systematic"),
    KW_KERNEL,
    dict(kernel="poly", degree=3, gamma=0.5, coef0=1.0),
    dict(kernel="linear"),
], ids=["rbf", "rbf-systematic", "poly2", "poly3", "linear"])
def test_trajectory_matches_reference(params):
    X = _data()
    fast = opf.OnlineKernelPCA(4, eta=2.0, random_state=7, **params).fit(X)
    ref = reference.OnlineKernelPCA(4, eta=2.0, random_state=7, **params).fit(X)
    kappa = np.diag(gram(X, X, **{k: v for k, v in params.items()
                                            if k != "sampler"}))
    _assert_losses_close(fast, ref, kappa.max())
    # same eigensystem as eigh of the full kernel matrix at the end
    np.testing.assert_allclose(fast.eigenvalues_, ref.eigenvalues_, rtol=0,
                               atol=1e-11 * np.abs(ref.eigenvalues_).max())


def test_trajectory_matches_reference_on_the_kw_cone():
    X = noisy_cone(300, 20, random_state=1, embedding="padded")
    fast = opf.OnlineKernelPCA(5, random_state=3, **KW_KERNEL).fit(X)
    ref = reference.OnlineKernelPCA(5, random_state=3, **KW_KERNEL).fit(X)
    _assert_losses_close(fast, ref, (np.einsum("ij,ij->i", X, X) ** 2).max())


def test_large_feature_norms():
    """KW Sec. 5: kernel eigenvalues ~1e9 overflow exp(-eta lambda) in the
    linear domain; in the log domain the trajectory is still the reference's."""
    X = np.random.default_rng(0).standard_normal((200, 6)) * 30
    fast = opf.OnlineKernelPCA(3, random_state=0, **KW_KERNEL).fit(X)
    ref = reference.OnlineKernelPCA(3, random_state=0, **KW_KERNEL).fit(X)
    assert fast.eigenvalues_.max() > 1e8 and np.exp(-fast.eigenvalues_.max()) == 0.0
    _assert_losses_close(fast, ref, (np.einsum("ij,ij->i", X, X) ** 2).max())


def test_callable_kernel_matches_builtin():
    X = _data(120)

    def cubic(A, B):
        return (0.5 * A @ B.T + 1.0) ** 3

    a = opf.OnlineKernelPCA(3, kernel=cubic, random_state=0).fit(X)
    b = opf.OnlineKernelPCA(3, kernel="poly", degree=3, gamma=0.5, coef0=1.0,
                            random_state=0).fit(X)
    # the same draws; values to rounding (cubic's GEMM rounds its inner
    # products otherwise than the builtin's shape-independent sums)
    np.testing.assert_allclose(a.expected_losses_, b.expected_losses_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a.realized_losses_, b.realized_losses_, rtol=1e-12, atol=1e-14)


def test_batches_equal_one_fit():
    X = _data(150)
    # (gamma="scale" is fixed by the first batch: see test_gamma_scale_*)
    whole = opf.OnlineKernelPCA(3, gamma=0.125, random_state=5).fit(X)
    parts = opf.OnlineKernelPCA(3, gamma=0.125, random_state=5)
    for lo, hi in [(0, 1), (1, 40), (40, 41), (41, 150)]:
        parts.partial_fit(X[lo:hi])
    ones = opf.OnlineKernelPCA(3, gamma=0.125, random_state=5)
    for x in X:
        ones.learn_one(x)
    for other in (parts, ones):
        np.testing.assert_allclose(other.expected_losses_, whole.expected_losses_,
                                   rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(other.eigenvalues_, whole.eigenvalues_, rtol=0,
                                   atol=1e-12 * whole.eigenvalues_.max())
    assert parts.n_trials_ == ones.n_trials_ == 150


# -- first trials, draws and zero eigenvalues -----------------------------------

def test_first_trials_project_on_the_span_of_the_past():
    """t - 1 <= r: deterministic, error k(x, x) - y^T K^+ y (k(x, x) at t = 1)."""
    X = _data(40, n=6)
    r = 5
    kpca = opf.OnlineKernelPCA(r, kernel="rbf", gamma="auto", random_state=0).fit(X)
    K = gram(X, X, "rbf")
    expect = [K[0, 0]]
    for t in range(1, r + 1):
        y = K[:t, t]
        expect.append(K[t, t] - y @ np.linalg.pinv(K[:t, :t]) @ y)
    np.testing.assert_allclose(kpca.expected_losses_[:r + 1], expect, rtol=1e-10, atol=1e-14)
    np.testing.assert_array_equal(kpca.realized_losses_[:r + 1], kpca.expected_losses_[:r + 1])
    # afterwards the draws randomise: realized differs from expected somewhere
    assert np.any(kpca.realized_losses_[r + 1:] != kpca.expected_losses_[r + 1:])


def test_one_uniform_per_trial():
    X = _data(30)
    kpca = opf.OnlineKernelPCA(4, random_state=11).fit(X)
    rng = np.random.default_rng(11)
    rng.random(30)
    assert kpca._rng.random() == rng.random()


def test_zero_eigenvalues_of_a_low_rank_kernel():
    """Linear kernel on 3-d data: K has t - 4 zero eigenvalues; no blow-up."""
    X = _data(200, n=3)
    kpca = opf.OnlineKernelPCA(1, kernel="linear", random_state=0).fit(X)
    ref = reference.OnlineKernelPCA(1, kernel="linear", random_state=0).fit(X)
    kappa = np.einsum("ij,ij->i", X, X)
    _assert_losses_close(kpca, ref, kappa.max())
    lam = kpca.eigenvalues_
    n_null = np.count_nonzero(np.abs(lam) <= null_space_tol(lam))
    assert n_null == 200 - 3
    # losses are errors of projections: 0 <= loss <= k(x, x) up to rounding
    for losses in (kpca.expected_losses_, kpca.realized_losses_):
        assert np.all(losses >= -1e-12 * kappa.max())
        assert np.all(losses <= kappa * (1 + 1e-12))
    # without the threshold, a null direction outside the corner would divide
    # rounding noise by rounding noise: check that such noise is present
    z = kpca.eigenvectors_.T @ (X @ X[-1])
    null = np.abs(lam) <= null_space_tol(lam)
    assert np.abs(z[null]).max() > 0


def test_repeated_instances():
    """Exact duplicates make even an rbf kernel matrix singular."""
    base = _data(30, n=4)
    X = np.concatenate([base, base[::-1], base])
    kpca = opf.OnlineKernelPCA(3, kernel="rbf", random_state=2).fit(X)
    ref = reference.OnlineKernelPCA(3, kernel="rbf", random_state=2).fit(X)
    _assert_losses_close(kpca, ref, 1.0)
    # a repeated point lies in the span of the past: its error is at most
    # that of its direction being left out, never above k(x, x) = 1
    assert np.all(kpca.expected_losses_ <= 1 + 1e-12)
    assert np.all(kpca.expected_losses_[30:] >= -1e-9)


def test_null_space_tol():
    lam = np.array([-1e-16, 0.0, 2.0, 5.0])
    assert null_space_tol(lam) == 4 * np.finfo(float).eps * 5.0
    assert null_space_tol(lam) == _kernels.kpca_null_tol(lam)
    assert null_space_tol(np.empty(0)) == 0.0


# -- KW footnote 2: the linear kernel and update (2) in feature space -----------

def _effective_rank(X, eta):
    """S^t = tr(I - exp(-eta C^t)) before each trial t."""
    S = np.zeros(X.shape[0])
    for t in range(1, X.shape[0]):
        lam = np.linalg.eigvalsh(X[:t].T @ X[:t])
        S[t] = np.sum(-np.expm1(-eta * np.clip(lam, 0.0, None)))
    return S


@pytest.mark.parametrize("N, r, T, scale", [
    (10, 2, 200, 0.3),  # t - 1 >= N for most trials
    (50, 3, 40, 1.0),   # t - 1 < N throughout, cap binding early
])
def test_linear_kernel_equals_update_2_when_the_cap_binds(N, r, T, scale):
    """S^t >= r  =>  same expected loss as CenteredOnlinePCA(centered=False)."""
    eta = 1.0
    X = np.random.default_rng(N).standard_normal((T, N)) * scale
    kpca = opf.OnlineKernelPCA(r, kernel="linear", eta=eta, random_state=0).fit(X)
    lin = opf.CenteredOnlinePCA(r, eta=eta, centered=False, random_state=0).fit(X)
    S = _effective_rank(X, eta)
    binding = S >= r
    assert binding.sum() >= 0.9 * T
    if N > T:
        assert np.any(binding & (np.arange(T) < N))  # cap binding with t - 1 < N
    np.testing.assert_allclose(kpca.expected_losses_[binding], lin.expected_losses_[binding],
                               rtol=LINEAR_RTOL, atol=0)


def test_linear_kernel_differs_from_update_2_when_the_cap_does_not_bind():
    """S^t < r: the linear learner weights the null space of C^t below the cap
    and the kernel learner cannot; equal only if rank = N = t - 1."""
    N, r, T, eta = 10, 2, 60, 1.0
    X = np.random.default_rng(1).standard_normal((T, N)) * 0.05
    kpca = opf.OnlineKernelPCA(r, kernel="linear", eta=eta, random_state=0).fit(X)
    lin = opf.CenteredOnlinePCA(r, eta=eta, centered=False, random_state=0).fit(X)
    S = _effective_rank(X, eta)
    assert np.all(S < r)  # small norms: eta sum |x|^2 < r for the whole run
    rel = np.abs(kpca.expected_losses_ - lin.expected_losses_) / lin.expected_losses_
    t_minus_1 = np.arange(T)
    np.testing.assert_allclose(rel[t_minus_1 == N], 0.0, atol=LINEAR_RTOL)
    assert np.all(rel[(t_minus_1 > r) & (t_minus_1 != N)] > 1e-6)
    assert rel.max() > 0.05


# -- KW Section 5 -------------------------------------------------------------

def _offline_kernel_pca_losses(K, r):
    """Per-instance losses of KW Alg. 2 (top-r eigenvectors of the full K)."""
    lam, U = np.linalg.eigh(K)
    return np.diag(K) - (U[:, -r:] ** 2 * lam[-r:]).sum(axis=1)


def test_kw_cone_average_regret_decreases_to_zero():
    T, r = 800, 2
    X = noisy_cone(T, 20, noise=0.05, random_state=0, embedding="padded")
    K = (X @ X.T) ** 2
    assert np.diag(K).max() <= 1.0  # KW: feature norms bounded by one
    kpca = opf.OnlineKernelPCA(r, eta=1.0, random_state=0, **KW_KERNEL).fit(X)
    regret = np.cumsum(kpca.expected_losses_ - _offline_kernel_pca_losses(K, r))
    average = regret / np.arange(1, T + 1)
    checkpoints = average[[T // 8 - 1, T // 4 - 1, T // 2 - 1, T - 1]]
    assert np.all(np.diff(checkpoints) < 0)
    assert average[-1] < 0.25 * average[20:].max()
    assert 0 < average[-1] < 0.01  # per trial, with k(x, x) up to ~0.5


def test_kw_cone_compression_relative_to_energy():
    """What holds about "kernel PCA compresses the cone better than linear PCA".

    The cone points' features x x^T span 5 dimensions (z^2 (c^2, cs, c, s^2,
    s, 1) with c^2 + s^2 = 1), the points themselves 3, so at the same r the
    degree-2 kernel does NOT leave a smaller fraction of the energy
    unexplained: offline (KW Alg. 2 vs Alg. 1) and online (this learner vs
    the uncentered WK Alg. 6), linear PCA has the lower relative error.
    (The absolute kernel losses are smaller only because |x|^4 < |x|^2 for
    |x| < 1: a unit change, not compression.)  What the kernel captures is
    the quadratic structure: with r = 5 the noiseless cone is compressed
    without error in feature space.
    """
    T = 400
    X = noisy_cone(T, 20, noise=0.05, random_state=0, embedding="padded")
    K = (X @ X.T) ** 2
    energy_k, energy_l = np.trace(K), np.einsum("ij,ij->", X, X)
    mu = np.linalg.eigvalsh(X.T @ X)
    for r in (2, 3, 5):
        kernel_rel = _offline_kernel_pca_losses(K, r).sum() / energy_k
        linear_rel = mu[:-r].sum() / energy_l
        assert linear_rel < kernel_rel
    r = 3
    online_k = opf.OnlineKernelPCA(r, random_state=0, **KW_KERNEL).fit(X)
    online_l = opf.CenteredOnlinePCA(r, centered=False, random_state=0).fit(X)
    assert (online_l.expected_losses_.sum() / energy_l
            < online_k.expected_losses_.sum() / energy_k)
    clean = noisy_cone(T, 20, noise=0.0, random_state=0, embedding="padded")
    Kc = (clean @ clean.T) ** 2
    assert _offline_kernel_pca_losses(Kc, 5).sum() <= 1e-10 * np.trace(Kc)
    assert _offline_kernel_pca_losses(Kc, 4).sum() > 1e-2 * np.trace(Kc)


# -- state: accuracy, pickling, fallback ----------------------------------------

def test_maintained_eigensystem_stays_accurate():
    X = noisy_cone(1200, 20, random_state=4, embedding="padded")
    kpca = opf.OnlineKernelPCA(5, random_state=0, budget=None, **KW_KERNEL).fit(X)
    K = (X @ X.T) ** 2
    lam, U = kpca.eigenvalues_, kpca.eigenvectors_
    scale = np.abs(lam).max()
    np.testing.assert_allclose(lam, np.linalg.eigvalsh(K), rtol=0, atol=1e-11 * scale)
    np.testing.assert_allclose(U.T @ U, np.eye(1200), rtol=0, atol=1e-11)
    np.testing.assert_allclose((U * lam) @ U.T, K, rtol=0, atol=1e-11 * scale)


def test_pickle_mid_stream_continues_identically():
    X = _data(160)
    a = opf.OnlineKernelPCA(3, random_state=9).fit(X[:80])
    b = pickle.loads(pickle.dumps(a))
    assert b._q.shape == (80, 80)  # only the used part of the buffers is stored
    a.partial_fit(X[80:])
    b.partial_fit(X[80:])
    np.testing.assert_array_equal(a.expected_losses_, b.expected_losses_)
    np.testing.assert_array_equal(a.realized_losses_, b.realized_losses_)
    np.testing.assert_array_equal(a.eigenvalues_, b.eigenvalues_)
    assert a._rng.random() == b._rng.random()


class _FailingEngine:
    """Runs the real engine but reports a failed bordered update at one
    trial (OPF_EFAILED, as the C update would), leaving garbage in the
    eigensystem, which the learner must not rely on."""

    def __init__(self, engine, learner, fail_at):
        self.engine, self.learner, self.fail_at = engine, learner, fail_at

    def run(self, G, u, el, rl):
        k = self.fail_at
        if k is None or k >= G.shape[0]:
            return self.engine.run(G, u, el, rl)
        assert self.engine.run(G[:k + 1], u[:k + 1], el[:k + 1], rl[:k + 1]) == k + 1
        self.learner._m[0] -= 1  # the failed trial's instance is not counted
        m = int(self.learner._m[0]) + 1
        self.learner._q[:m, :m] = 1.0  # intermediate eigensystem: invalid
        self.fail_at = None
        raise _kernels.status_error(_kernels.STATUS_EFAILED, "test", trials_done=k)


def test_failed_update_is_rebuilt_by_eigh(monkeypatch):
    X = _data(120)
    good = opf.OnlineKernelPCA(3, gamma=0.125, random_state=1).fit(X)
    bad = opf.OnlineKernelPCA(3, gamma=0.125, random_state=1).fit(X[:50])
    real, failures = bad._get_engine, [30]

    def get_engine(cfg):  # fail once, at trial 50 + 30
        return _FailingEngine(real(cfg), bad, failures.pop() if failures else None)

    monkeypatch.setattr(bad, "_get_engine", get_engine)
    bad.partial_fit(X[50:])
    assert bad.n_eigh_fallbacks_ == 1
    assert bad.n_trials_ == 120
    np.testing.assert_allclose(bad.expected_losses_, good.expected_losses_, rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(bad.eigenvalues_, good.eigenvalues_, rtol=0,
                               atol=1e-11 * good.eigenvalues_.max())


# -- API and validation -----------------------------------------------------------

def test_attributes_and_transform():
    X = _data(100, n=5)
    kpca = opf.OnlineKernelPCA(2, kernel="linear", random_state=0).fit(X)
    assert kpca.X_fit_.shape == (100, 5) and kpca.n_features_in_ == 5
    w = kpca.weights_
    assert w.shape == (100,)
    np.testing.assert_allclose(w.sum(), 1.0, rtol=1e-12)
    assert w.max() <= (1 + 1e-12) / (100 - 2)
    # linear kernel: transform = coordinates on the top-2 principal axes
    Z = kpca.transform(X[:10])
    _, V = np.linalg.eigh(X.T @ X)
    np.testing.assert_allclose(np.abs(Z), np.abs(X[:10] @ V[:, [-1, -2]]), rtol=1e-9,
                               atol=1e-12)
    assert opf.OnlineKernelPCA(3).fit(X[:2]).weights_ is None
    np.testing.assert_array_equal(opf.OnlineKernelPCA(2, random_state=0).fit_transform(X),
                                  opf.OnlineKernelPCA(2, random_state=0).fit(X).transform(X))


def test_params_and_repr():
    kpca = opf.OnlineKernelPCA(2, kernel="poly", degree=2)
    params = kpca.get_params()
    assert params["kernel"] == "poly" and params["degree"] == 2 and params["gamma"] == "scale"
    assert params["budget"] == 1000 and params["map_size"] == 64
    assert repr(kpca) == "OnlineKernelPCA(degree=2, kernel='poly', n_components=2)"
    kpca.set_params(eta=0.5)
    assert kpca.eta == 0.5
    assert opf.OnlineKernelPCA(2, record_losses=False).fit(_data(20)).expected_losses_.size == 0


def _snapshot(kpca):
    return (kpca.n_trials_, kpca.expected_losses_.copy(), kpca.eigenvalues_.copy(),
            kpca.X_fit_.copy(), kpca._rng.bit_generator.state)


def _assert_same(a, b):
    assert a[0] == b[0] and a[4] == b[4]
    for u, v in zip(a[1:4], b[1:4]):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("bad, exc, match", [
    (np.full((3, 4), np.nan), ValueError, "X contains NaN or infinity"),
    (np.ones((3, 5)), ValueError, "X has 5 features"),
    (np.ones(4), ValueError, "X must have 2 dimensions"),
    (np.array([["a"] * 4]), TypeError, "X must be a real numeric array"),
])
def test_bad_rows_leave_the_state_unchanged(bad, exc, match):
    kpca = opf.OnlineKernelPCA(2, random_state=0).fit(_data(30, n=4))
    before = _snapshot(kpca)
    with pytest.raises(exc, match=match):
        kpca.partial_fit(bad)
    _assert_same(before, _snapshot(kpca))
    if "features" not in match:  # fit may change the width, nothing else
        with pytest.raises(exc, match=match):
            kpca.fit(bad)
        _assert_same(before, _snapshot(kpca))


@pytest.mark.parametrize("kernel, exc, match", [
    (lambda A, B: np.full((len(A), len(B)), np.nan), ValueError,
     "kernel returned NaN or infinite values"),
    (lambda A, B: np.ones((len(B), len(A) + 1)), ValueError,
     r"kernel\(X, Y\) must return an array of shape"),
    (lambda A, B: np.full((len(A), len(B)), "x"), TypeError,
     "kernel must return a real numeric Gram matrix"),
])
def test_bad_kernel_output_leaves_the_state_unchanged(kernel, exc, match):
    X = _data(30, n=4)
    calls = []

    def switching(A, B):
        calls.append(1)
        return A @ B.T if len(calls) == 1 else kernel(A, B)

    kpca = opf.OnlineKernelPCA(2, kernel=switching, random_state=0).fit(X[:20])
    before = _snapshot(kpca)
    with pytest.raises(exc, match=match):
        kpca.partial_fit(X[20:])
    _assert_same(before, _snapshot(kpca))
    with pytest.raises(exc, match=match):
        kpca.fit(X)  # fit validates the kernel before resetting
    _assert_same(before, _snapshot(kpca))
    with pytest.raises(exc, match=match):
        opf.OnlineKernelPCA(2, kernel=kernel).learn_one(X[0])


def test_overflowing_builtin_kernel():
    X = np.full((3, 4), 1e120)
    with pytest.raises(ValueError, match=r"kernel returned NaN or infinite values \(scale"):
        opf.OnlineKernelPCA(1, kernel="poly").fit(X)


@pytest.mark.parametrize("params, exc, match", [
    (dict(n_components=0), ValueError, "n_components must be an integer >= 1"),
    (dict(n_components=1.5), TypeError, "n_components must be an integer"),
    (dict(eta=0.0), ValueError, "eta must be a finite number > 0"),
    (dict(kernel="sigmoid"), ValueError, "kernel must be one of"),
    (dict(degree=0), ValueError, "degree must be an integer >= 1"),
    (dict(degree=2.0), TypeError, "degree must be an integer"),
    (dict(gamma=-1.0), ValueError, r"gamma must be one of \['scale', 'auto', None\] or a "
                                   "finite number > 0"),
    (dict(gamma="median"), ValueError, r"gamma must be one of \['scale', 'auto', None\]"),
    (dict(budget=0), ValueError, "budget must be an integer >= 1"),
    (dict(budget=2.0), TypeError, "budget must be"),
    (dict(map_size=0), ValueError, "map_size must be an integer >= 1"),
    (dict(coef0=np.nan), ValueError, "coef0 must be a finite number"),
    (dict(sampler="median"), ValueError, "sampler must be one of"),
    (dict(random_state="seed"), TypeError, "random_state must be None, an int"),
])
def test_bad_hyper_parameters(params, exc, match):
    kw = dict(n_components=2)
    kw.update(params)
    kpca = opf.OnlineKernelPCA(**kw)
    with pytest.raises(exc, match=match):
        kpca.fit(_data(10, n=3))
    assert not hasattr(kpca, "n_features_in_")
    if "random_state" in params:
        return  # used at the next reset only, like the other learners
    good = opf.OnlineKernelPCA(2, random_state=0).fit(_data(10, n=3))
    before = _snapshot(good)
    good.set_params(**params)
    with pytest.raises(exc, match=match):
        good.partial_fit(_data(5, n=3))
    _assert_same(before, _snapshot(good))


def test_kernel_change_mid_stream_is_refused():
    kpca = opf.OnlineKernelPCA(2, kernel="rbf", random_state=0).fit(_data(10, n=3))
    kpca.set_params(gamma=3.0)
    with pytest.raises(ValueError, match="kernel parameters .* changed"):
        kpca.partial_fit(_data(5, n=3))
    kpca.set_params(gamma="scale", degree=5, coef0=2.0)  # irrelevant to rbf
    kpca.partial_fit(_data(5, n=3))
    assert kpca.n_trials_ == 15


# --- finite but huge values (issue 13) ------------------------------------------

def _huge_kernel(X, Y):
    return np.full((len(X), len(Y)), 1e300)


@pytest.mark.parametrize("kernel, kw", [
    ("rbf", {}), ("linear", {}), ("poly", dict(degree=2, gamma=1.0, coef0=0.0)),
    (_huge_kernel, {})], ids=["rbf", "linear", "poly", "callable"])
def test_huge_finite_values_are_rejected_before_any_change(kernel, kw):
    learner = opf.OnlineKernelPCA(1, kernel=kernel, random_state=0, **kw)
    if callable(kernel):
        bad = np.ones((3, 2))
    else:
        learner.partial_fit([[1.0, 1.0], [2.0, 0.5]])
        bad = [[1, 1], [1.3e154, 0], [1.3e154, 0], [2, 1]]
    before = pickle.dumps(learner)
    with pytest.raises(ValueError, match=r"X row [01] is too large"):
        learner.partial_fit(bad)
    assert pickle.dumps(learner) == before
    if kernel == "linear":  # |x|^2 fine, but the kernel values beyond the bound / t
        with pytest.raises(ValueError, match=r"X row 0 is too large for the kernel"):
            learner.partial_fit([[1e77, 1.0]])
        assert pickle.dumps(learner) == before


@pytest.mark.parametrize("eta", [1e-12, 1.0, 1e6])
@pytest.mark.parametrize("kernel, kw", [
    ("linear", {}), ("poly", dict(degree=2, gamma=1.0, coef0=0.0))], ids=["linear", "poly"])
def test_kernel_values_just_below_the_bound_keep_the_state_finite(kernel, kw, eta):
    """At 0.9 times the documented bound the eigenvalues, losses and weights
    stay finite and the losses keep the scale of the data."""
    T = 60
    X = np.random.default_rng(0).standard_normal((T, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    bound = min(2.0 ** 500, 2.0 ** 1020 / max(1.0, eta)) / T
    scale = math.sqrt(0.9 * bound) if kernel == "linear" else (0.9 * bound) ** 0.25
    learner = opf.OnlineKernelPCA(2, kernel=kernel, eta=eta, random_state=0, **kw).fit(X * scale)
    assert np.isfinite(learner.eigenvalues_).all()
    assert np.isfinite(learner.expected_losses_).all()
    assert np.isfinite(learner.weights_).all()
    assert 0 < learner.expected_losses_[-1] <= 0.9 * bound * T


def test_a_batch_that_cannot_be_allocated_changes_nothing(monkeypatch):
    """Issue 13, item 10: a MemoryError while growing the buffers is raised
    up front with the figure; the learner is as before and keeps working."""
    X = noisy_cone(60, embedding="padded", random_state=1)
    learner = opf.OnlineKernelPCA(2, random_state=0).fit(X[:20])
    before = pickle.dumps(learner)

    def no_memory(**kwargs):
        raise MemoryError

    real = _kernels.KernelPCAEngine
    monkeypatch.setattr(_kernels, "KernelPCAEngine", no_memory)
    with pytest.raises(MemoryError, match=r"need room for 30 .* GiB .* nothing was changed"):
        learner.partial_fit(X[20:30])
    assert pickle.dumps(learner) == before
    monkeypatch.setattr(_kernels, "KernelPCAEngine", real)
    learner.partial_fit(X[20:])
    whole = opf.OnlineKernelPCA(2, random_state=0).fit(X[:20]).partial_fit(X[20:])
    np.testing.assert_array_equal(learner.expected_losses_, whole.expected_losses_)


def test_update_stats_count_the_bordered_updates():
    X = noisy_cone(40, embedding="padded", random_state=2)
    learner = opf.OnlineKernelPCA(2, kernel="poly", degree=2, gamma=1.0, coef0=0.0,
                                  random_state=0).fit(X[:10])
    assert learner.update_stats_["n_updates"] == 10
    learner.partial_fit(X[10:])  # the buffers grow: a new engine, counting afresh
    after = learner.update_stats_
    assert after["n_updates"] == 30
    learner.partial_fit(X[:2])  # grows by half again: 2 on a new engine
    learner.partial_fit(X[2:4])  # within capacity: the same engine counts on
    assert learner.update_stats_["n_updates"] == 4
    # the secular order is at most the instances so far + 1, at least 0
    assert 0 <= after["secular_sum"] <= sum(range(12, 42))
    assert after["n_fallbacks"] == 0


# --- kernels that are not positive semi-definite (issue 22, item 12) --------------------

def _sigmoid(A, B):  # scikit-learn's sigmoid kernel: not PSD
    from sklearn.metrics.pairwise import sigmoid_kernel

    return sigmoid_kernel(A, B)


def _negated_rbf(A, B):
    from sklearn.metrics.pairwise import rbf_kernel

    return -rbf_kernel(A, B)


def test_a_kernel_that_is_not_psd_is_refused_where_its_matrix_becomes_indefinite():
    """The sigmoid kernel was accepted (expected losses down to -25.8).  Row by
    row, the learner accepts each prefix whose kernel matrix numpy's eigvalsh
    finds PSD and refuses the first one where it is clearly not, naming
    ``kernel`` and changing nothing; a fit on all rows is refused too."""
    X = np.random.default_rng(0).standard_normal((60, 5))
    K = _sigmoid(X, X)
    smallest = [np.linalg.eigvalsh(K[:t, :t])[0] for t in range(1, len(X) + 1)]
    first_bad = next(t for t, lam in enumerate(smallest, 1) if lam < 0)
    assert min(smallest[:first_bad - 1]) > 1e-3 and smallest[first_bad - 1] < -1e-2
    kpca = opf.OnlineKernelPCA(2, kernel=_sigmoid, random_state=0)
    for x in X[:first_bad - 1]:
        kpca.partial_fit(x[np.newaxis])
    before, pickled = _snapshot(kpca), pickle.dumps(kpca)
    with pytest.raises(ValueError, match=r"^kernel is not positive semi-definite: with X "
                                         r"row 0 the kernel matrix has an eigenvalue below"):
        kpca.partial_fit(X[first_bad - 1:first_bad])
    _assert_same(before, _snapshot(kpca))
    assert pickle.dumps(kpca) == pickled
    with pytest.raises(ValueError, match=f"with X row {first_bad - 1} the kernel matrix"):
        opf.OnlineKernelPCA(2, kernel=_sigmoid).fit(X)
    with pytest.raises(ValueError, match="kernel is not positive semi-definite"):
        kpca.fit(X)  # fit validates before resetting
    _assert_same(before, _snapshot(kpca))


def test_a_negative_kernel_diagonal_is_refused():
    """A negated rbf made transform return NaN."""
    X = _data(20, n=4)
    with pytest.raises(ValueError, match=r"^kernel is not positive semi-definite: "
                                         r"k\(x, x\) = -1 < 0 for X row 0"):
        opf.OnlineKernelPCA(2, kernel=_negated_rbf).fit(X)
    kpca = opf.OnlineKernelPCA(2, kernel=_negated_rbf)
    with pytest.raises(ValueError, match=r"k\(x, x\) = -1 < 0"):
        kpca.learn_one(X[0])
    assert not hasattr(kpca, "n_features_in_")


def test_psd_kernels_up_to_rounding_pass_the_check():
    """A callable rbf on repeated points (a singular kernel matrix whose
    eigenvalues numpy finds slightly negative) is accepted, in one batch and
    in batches of 7, with the same losses as the built-in rbf."""
    from sklearn.metrics.pairwise import rbf_kernel

    X = np.repeat(_data(40, n=4, seed=3), 3, axis=0)
    K = rbf_kernel(X, gamma=0.05)
    assert np.linalg.eigvalsh(K)[0] < 0  # rounding: negative in floating point
    gram = functools.partial(rbf_kernel, gamma=0.05)
    one = opf.OnlineKernelPCA(3, kernel=gram, random_state=1).fit(X)
    split = opf.OnlineKernelPCA(3, kernel=gram, random_state=1)
    for i in range(0, len(X), 7):
        split.partial_fit(X[i:i + 7])
    assert one.n_trials_ == split.n_trials_ == len(X)
    builtin = opf.OnlineKernelPCA(3, kernel="rbf", gamma=0.05, random_state=1).fit(X)
    np.testing.assert_allclose(one.expected_losses_, builtin.expected_losses_,
                               rtol=1e-9, atol=1e-12)
