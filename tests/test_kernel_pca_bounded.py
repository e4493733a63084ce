"""OnlineKernelPCA's bounded mode (issue 39) and gamma="scale" (issue 36).

After ``budget`` trials the learner runs KW update (2) in the span of the
``map_size`` leading feature-space eigenvectors of the landmarks (the
instances stored), a Nystrom map.  The oracles here are independent of the
compiled code:

- the NumPy reference (``reference.OnlineKernelPCA(budget=...)``: ``eigh``
  of the landmarks' kernel matrix at the switch, ``eigh`` of C every trial);
- the uncentered WK Algorithm 6 (``reference.CenteredOnlinePCA(centered=False)``)
  run on the feature map of the stream computed here in NumPy: at a numeric
  rate KW update (2) in a D-dimensional space *is* that learner;
- the kernel itself: the map's kernel ``phi(x) . phi(y)`` against ``k(x, y)``
  (Cauchy-Schwarz bound on the residuals), and the regret bound against the
  best rank-r subspace of the kernel's feature space (the top eigenvalues
  of the full kernel matrix).

Tolerances: REF_RTOL as tests/test_kernel_pca.py (the eigensystems agree to
a few eps per trial); bit for bit wherever the claim is "same numbers".
"""

import copy
import pickle
import warnings

import numpy as np
import pytest
from learner_cases import assert_same_state

import onlinepca_fast as opf
from onlinepca_fast import _kernels, reference
from onlinepca_fast.reference import gram

REF_RTOL = 1e-8
REF_ATOL = 1e-10

pytestmark = pytest.mark.usefixtures("one_blas_thread")

B, D, R = 60, 12, 3  # budget, map_size, n_components of the small cases


def _data(T=200, n=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((T, n)) * np.linspace(1.0, 0.3, n)
    return X / np.sqrt(n)


def _bounded(**kw):
    args = dict(budget=B, map_size=D, random_state=3)
    args.update(kw)
    return opf.OnlineKernelPCA(R, **args)


def _kernel_args(learner):
    return dict(kernel=learner.kernel, degree=learner.degree, gamma=learner.gamma_,
                coef0=learner.coef0)


def _explicit_map(L, kw, map_size):
    """The Nystrom map computed here: eigh of the landmarks' kernel matrix,
    the map_size leading eigenpairs above the null-space tolerance."""
    K = gram(L, L, **kw)
    lam, U = np.linalg.eigh((K + K.T) / 2)
    keep = np.flatnonzero(lam > lam.shape[0] * np.finfo(float).eps * np.abs(lam).max())
    keep = keep[-map_size:]
    return U[:, keep] / np.sqrt(lam[keep]), lam, keep


# -- short streams: today's numbers ---------------------------------------------------

def test_a_stream_within_the_budget_is_the_exact_learner_bit_for_bit():
    X = _data(150)
    exact = opf.OnlineKernelPCA(R, gamma=0.7, budget=None, random_state=1).fit(X)
    default = opf.OnlineKernelPCA(R, gamma=0.7, random_state=1).fit(X)  # budget 1000
    assert default.feature_map_ is None
    for a, b in ((exact.expected_losses_, default.expected_losses_),
                 (exact.realized_losses_, default.realized_losses_),
                 (exact.eigenvalues_, default.eigenvalues_),
                 (exact.eigenvectors_, default.eigenvectors_)):
        np.testing.assert_array_equal(a, b, strict=True)
    # a longer stream: its first `budget` trials are those of the exact learner
    Y = _data(100, seed=2)
    bounded = opf.OnlineKernelPCA(R, gamma=0.7, budget=B, map_size=D, random_state=1).fit(Y)
    exact = opf.OnlineKernelPCA(R, gamma=0.7, budget=None, random_state=1).fit(Y)
    np.testing.assert_array_equal(bounded.expected_losses_[:B], exact.expected_losses_[:B])
    np.testing.assert_array_equal(bounded.realized_losses_[:B], exact.realized_losses_[:B])
    assert bounded.feature_map_.shape == (B, D)


# -- against the oracles ------------------------------------------------------------------

@pytest.mark.parametrize("params", [
    dict(kernel="rbf"),
    dict(kernel="rbf", gamma=2.0, eta=3.0, sampler="systematic"),
    dict(kernel="poly", degree=2, gamma=1.0, coef0=0.0),
    dict(kernel="poly", degree=3),
    dict(kernel="linear"),  # rank n < map_size: the map is the whole feature space
    dict(kernel=lambda A, B: (0.5 * A @ B.T + 1.0) ** 2),
], ids=["rbf-auto", "rbf-eta-systematic", "poly2", "poly3", "linear", "callable"])
def test_bounded_mode_matches_the_numpy_reference(params):
    X = _data(220)
    fast = _bounded(**params).fit(X)
    ref = reference.OnlineKernelPCA(R, budget=B, map_size=D, random_state=3, **params).fit(X)
    assert fast.gamma_ == pytest.approx(ref.gamma_, rel=1e-14)
    scale = np.abs(ref.expected_losses_).max()
    np.testing.assert_allclose(fast.expected_losses_, ref.expected_losses_, rtol=REF_RTOL,
                               atol=REF_ATOL * scale)
    np.testing.assert_allclose(fast.realized_losses_, ref.realized_losses_, rtol=REF_RTOL,
                               atol=REF_ATOL * scale)
    np.testing.assert_allclose(fast.eigenvalues_, ref.eigenvalues_, rtol=0,
                               atol=1e-11 * ref.eigenvalues_.max())
    assert fast.approximation_error_ == pytest.approx(ref.approximation_error_, rel=1e-9,
                                                      abs=1e-12 * scale)
    assert fast.truncation_error_ == pytest.approx(ref.truncation_error_, rel=1e-9,
                                                   abs=1e-10 * scale)
    if params.get("eta", "auto") == "auto":
        assert fast.mixability_gap_ == pytest.approx(ref.mixability_gap_, rel=1e-9)


@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_bounded_mode_is_wk_algorithm_6_on_the_explicit_feature_map(kernel):
    """At a numeric rate the bounded mode is the uncentered WK Alg. 6 (KW
    update (2)) in the map's D-dimensional space, run on the landmarks'
    coordinates (whose matrix is diag(lambda_D), the state at the switch) and
    then on the mapped rows: its expected losses are that learner's plus the
    residuals k(x, x) - |phi(x)|^2."""
    X = _data(200, seed=4)
    eta = 1.5
    fast = _bounded(kernel=kernel, eta=eta).fit(X)
    kw = _kernel_args(fast)
    M, lam, keep = _explicit_map(X[:B], kw, D)
    landmark_rows = (gram(X[:B], X[:B], **kw) @ M)  # = U_D diag(lambda_D)^1/2
    np.testing.assert_allclose(landmark_rows.T @ landmark_rows, np.diag(lam[keep]),
                               rtol=0, atol=1e-10 * lam.max())
    Phi = gram(X[B:], X[:B], **kw) @ M
    wk6 = reference.CenteredOnlinePCA(R, eta=eta, centered=False, random_state=0)
    wk6.fit(np.vstack([landmark_rows, Phi]))
    residual = np.diag(gram(X[B:], X[B:], **kw)) - np.einsum("ij,ij->i", Phi, Phi)
    np.testing.assert_allclose(fast.expected_losses_[B:],
                               wk6.expected_losses_[B:] + residual,
                               rtol=REF_RTOL, atol=REF_ATOL * np.abs(Phi).max() ** 2)
    assert fast.approximation_error_ == pytest.approx(residual.sum(), rel=1e-9)


def test_the_map_kernel_error_is_within_its_bound():
    """phi(x) . phi(y) approximates k(x, y) with |k - phi . phi| <= sqrt(e(x)
    e(y)), e = k(x, x) - |phi(x)|^2 >= 0 (the residuals are orthogonal to the
    map's space); on the landmarks the residuals sum to the dropped trace."""
    X = _data(300, seed=5)
    fast = _bounded().fit(X)
    kw = _kernel_args(fast)
    M = fast.feature_map_
    L = fast.X_fit_
    np.testing.assert_array_equal(L, X[:B])
    Z = np.vstack([X[:B], X[B:]])
    Phi = gram(Z, L, **kw) @ M
    K = gram(Z, Z, **kw)
    e = np.diag(K) - np.einsum("ij,ij->i", Phi, Phi)
    assert e.min() >= -1e-12
    err = np.abs(K - Phi @ Phi.T)
    bound = np.sqrt(np.outer(np.maximum(e, 0), np.maximum(e, 0)))
    assert (err <= bound + 1e-12).all()
    assert e[:B].sum() == pytest.approx(fast.truncation_error_, rel=1e-8, abs=1e-12)
    assert e[B:].sum() == pytest.approx(fast.approximation_error_, rel=1e-8)
    # the map keeps the D leading directions: e on the landmarks is at most lambda_{D+1}
    lam = np.linalg.eigvalsh(gram(L, L, **kw))
    assert e[:B].max() <= lam[-D - 1] * (1 + 1e-8)


@pytest.mark.parametrize("stream, params", [
    ("data", dict(kernel="rbf")),
    ("data", dict(kernel="poly", degree=2, gamma=1.0, coef0=0.0)),
    ("shift", dict(kernel="rbf")),
])
def test_regret_bound_of_the_bounded_mode(stream, params):
    """L_T <= L* + 2 Delta_T + 2 Delta^M_T + tau + eps_T against the best
    rank-r subspace of the kernel's feature space (tau = truncation_error_,
    eps_T = approximation_error_; docs/kernel_pca.md)."""
    X = _data(400, seed=6)
    if stream == "shift":  # the second half away from the landmarks
        X[200:] += 1.5
    fast = _bounded(**params).fit(X)
    K = gram(X, X, **_kernel_args(fast))
    lam = np.linalg.eigvalsh((K + K.T) / 2)
    best = np.trace(K) - lam[-R:].sum()
    regret = fast.expected_losses_.sum() - best
    bound = (2 * fast.mixability_gap_ + 2 * fast.master_gap_ + fast.truncation_error_
             + fast.approximation_error_)
    assert regret <= bound
    assert fast.approximation_error_ > 0 and fast.truncation_error_ > 0


# -- same inputs, same numbers ------------------------------------------------------------

def _splits(T):
    return [(0, 1), (1, B - 1), (B - 1, B), (B, B + 1), (B + 1, B + 40), (B + 40, T)]


def _square(A, Bm):
    """A callable kernel whose every entry is rounded alike whatever the
    shapes (no GEMM), so that batch splits give the same bits."""
    return (np.add.reduce(A[:, None, :] * Bm[None, :, :], axis=-1) + 1.0) ** 2 / 4


@pytest.mark.parametrize("params", [dict(), dict(kernel="poly"), dict(kernel=_square)],
                         ids=["rbf", "poly", "callable"])
def test_batch_split_learn_one_pickle_and_copies_give_the_same_bits(params):
    X = _data(150, seed=7)
    params = dict(gamma=0.5, **params)  # ("scale" is set by the first batch)
    whole = _bounded(**params).fit(X)
    split = _bounded(**params)
    for a, b in _splits(len(X)):
        split.partial_fit(X[a:b])
    one = _bounded(**params)
    copies = []
    for i, x in enumerate(X):
        one.learn_one(x)
        if i in (B - 2, B - 1, B + 5):  # before, at and after the switch
            one = pickle.loads(pickle.dumps(one))
            copies.append((i, copy.copy(one), copy.deepcopy(one)))
    for other in (split, one):
        assert_same_state(other, whole)
    for i, shallow, deep in copies:
        for c in (shallow, deep):
            c.partial_fit(X[i + 1:])
            assert_same_state(c, whole)


def test_the_switch_is_made_when_the_budget_is_reached():
    """The state after `budget` trials is the bounded mode's, whether the
    batch ended there or went on."""
    X = _data(100, seed=8)
    at = _bounded().fit(X[:B])
    assert at.feature_map_ is not None and at.X_fit_.shape == (B, X.shape[1])
    assert at.eigenvalues_.shape == (D,) and at.eigenvectors_.shape == (D, D)
    np.testing.assert_array_equal(at.eigenvectors_, np.eye(D))
    before = _bounded().fit(X[:B - 1])
    assert before.feature_map_ is None and before.eigenvalues_.shape == (B - 1,)
    # the eigenvalues at the switch: the D leading ones of the landmarks' kernel matrix
    exact = opf.OnlineKernelPCA(R, budget=None, random_state=3).fit(X[:B])
    np.testing.assert_array_equal(at.eigenvalues_, exact.eigenvalues_[-D:])
    # memory stays: the landmarks, the map and a D x D eigensystem
    at.partial_fit(X[B:])
    assert at.X_fit_.shape == (B, X.shape[1]) and at.eigenvectors_.shape == (D, D)
    assert at._X.shape[0] == B and at._q.size == 0


def test_random_state_fixes_the_draws_the_map_is_the_datas():
    X = _data(120, seed=9)
    a = _bounded(random_state=11).fit(X)
    b = _bounded(random_state=11).fit(X)
    c = _bounded(random_state=12).fit(X)
    assert_same_state(a, b)
    np.testing.assert_array_equal(a.feature_map_, c.feature_map_)
    np.testing.assert_array_equal(a.expected_losses_[:R + 1], c.expected_losses_[:R + 1])
    assert not np.array_equal(a.realized_losses_, c.realized_losses_)


def test_a_lowered_budget_switches_at_the_next_batch_and_map_size_is_read_there():
    X = _data(150, seed=10)
    a = opf.OnlineKernelPCA(R, gamma=0.5, budget=None, random_state=0).fit(X[:80])
    a.set_params(budget=B, map_size=D)  # 80 instances stored: switches now
    a.partial_fit(X[80:90])
    assert a.X_fit_.shape[0] == 80 and a.feature_map_.shape == (80, D)
    a.set_params(map_size=5, budget=None)  # read at the switch only
    a.partial_fit(X[90:])
    assert a.feature_map_.shape == (80, D) and a.n_trials_ == 150
    ref = reference.OnlineKernelPCA(R, gamma=0.5, budget=80, map_size=D,
                                    random_state=0).fit(X)
    np.testing.assert_allclose(a.expected_losses_, ref.expected_losses_, rtol=REF_RTOL,
                               atol=REF_ATOL)


def test_transform_and_weights_in_the_bounded_mode():
    X = _data(140, seed=11)
    fast = _bounded().fit(X)
    kw = _kernel_args(fast)
    Phi = gram(X[:7], fast.X_fit_, **kw) @ fast.feature_map_
    C = fast.eigenvectors_ @ np.diag(fast.eigenvalues_) @ fast.eigenvectors_.T
    lam, V = np.linalg.eigh(C)
    Z = fast.transform(X[:7])
    expect = Phi @ V[:, ::-1][:, :R]
    np.testing.assert_allclose(np.abs(Z), np.abs(expect), rtol=1e-9, atol=1e-12)
    w = fast.weights_
    assert w.shape == (D,) and w.sum() == pytest.approx(1.0, rel=1e-12)
    assert w.max() <= 1.0 / (D - R) * (1 + 1e-12)
    # at the switch, transform is the exact learner's (the same coordinates)
    at = _bounded().fit(X[:B])
    exact = opf.OnlineKernelPCA(R, budget=None, random_state=3).fit(X[:B])
    np.testing.assert_allclose(at.transform(X[B:B + 5]), exact.transform(X[B:B + 5]),
                               rtol=1e-9, atol=1e-12)


# -- bad input: refused, nothing changed --------------------------------------------------

class _Breakable:
    """An rbf kernel (a callable) that, once `broken`, gives k(x, x) = 0.1 on
    the diagonal calls: not positive semi-definite."""

    broken = False

    def __call__(self, A, Bm):
        G = np.exp(-np.sum((A[:, None, :] - Bm[None, :, :]) ** 2, axis=-1))
        if self.broken and A.shape == Bm.shape and np.array_equal(A, Bm):
            G[np.diag_indices_from(G)] = 0.1
        return G


@pytest.mark.parametrize("where", ["after", "straddling"])
@pytest.mark.parametrize("bad", ["nan", "too large", "not psd"])
def test_bad_rows_in_the_bounded_mode_change_nothing(where, bad):
    X = _data(120, seed=12)
    params = {"nan": {}, "too large": dict(kernel="poly", gamma=1.0),
              "not psd": dict(kernel=_Breakable())}[bad]
    learner = _bounded(**params).fit(X[:B + 10] if where == "after" else X[:B - 10])
    rows = X[B + 10:B + 40].copy() if where == "after" else X[B - 10:B + 20].copy()
    if bad == "nan":
        rows[25, 2] = np.nan
        match = "NaN or infinity"
    elif bad == "too large":  # (x . y)^3 ~ 1e150: beyond 2**500 / t
        rows[25] *= 1e50
        match = "X row 25 is too large for the kernel"
    else:
        learner.kernel.broken = True
        match = ("not positive semi-definite: with X row "
                 + ("0" if where == "after" else "10") + ", k\\(x, x\\) = 0.1 is below")
    before = pickle.dumps(learner)
    with pytest.raises(ValueError, match=match):
        learner.partial_fit(rows)
    assert pickle.dumps(learner) == before


# -- interruption ---------------------------------------------------------------------------

@pytest.mark.parametrize("allowed", [5, 19, 20, 21, 50])
def test_ctrl_c_in_a_batch_that_switches_leaves_a_prefix(monkeypatch, allowed):
    """A KeyboardInterrupt after `allowed` trials of a batch that switches
    (20 exact rows, then the bounded mode; 20: right at the switch): the
    learner is that of the rows processed -- switched if it reached the
    budget -- and going on gives the uninterrupted fit."""
    X = _data(140, seed=13)
    before = _bounded().fit(X[:B - 20])
    rest = X[B - 20:]
    full = pickle.loads(pickle.dumps(before)).partial_fit(rest)
    real = _kernels.KernelPCAEngine
    left = [allowed]

    class Interrupting(real):
        """Runs the trials allowed, then raises as a Ctrl-C in the loop would."""

        def _limited(self, run, rows, *args):
            n = min(rows, left[0])
            done = run(*(a[:n] for a in args)) if n else 0
            left[0] -= done
            if n < rows:
                raise KeyboardInterrupt
            return done

        def run(self, G, *args):
            return self._limited(super().run, G.shape[0], G, *args)

        def run_features(self, Phi, *args):
            return self._limited(super().run_features, Phi.shape[0], Phi, *args)

    learner = pickle.loads(pickle.dumps(before))
    monkeypatch.setattr(_kernels, "KernelPCAEngine", Interrupting)
    with pytest.raises(KeyboardInterrupt):
        learner.partial_fit(rest)
    monkeypatch.setattr(_kernels, "KernelPCAEngine", real)
    learner._engine = None  # (the interrupting one; engines are rebuilt at will)
    assert learner.n_trials_ - before.n_trials_ == allowed
    assert (learner.feature_map_ is not None) == (allowed >= 20)
    prefix = pickle.loads(pickle.dumps(before)).partial_fit(rest[:allowed])
    assert_same_state(learner, prefix)
    assert_same_state(learner.partial_fit(rest[allowed:]), full)


def test_ctrl_c_inside_the_bounded_modes_chunk_is_honoured():
    """The compiled feature-form loop polls SIGINT before each trial."""
    import signal
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("needs Python's default SIGINT handler")
    X = _data(140, seed=14)
    before = _bounded().fit(X[:B + 5])
    rest = X[B + 5:]
    full = pickle.loads(pickle.dumps(before)).partial_fit(rest)
    for k in (1, 2, 7):
        learner = pickle.loads(pickle.dumps(before))
        learner._pace = 100
        _kernels._interrupt_at_poll(k)
        try:
            with pytest.raises(KeyboardInterrupt):
                learner.partial_fit(rest)
        finally:
            _kernels._interrupt_at_poll(0)
        done = learner.n_trials_ - before.n_trials_
        assert done == k - 1
        prefix = pickle.loads(pickle.dumps(before))
        assert_same_state(learner, prefix.partial_fit(rest[:done]) if done else prefix)
        assert_same_state(learner.partial_fit(rest[done:]), full)


def test_a_failed_rank_one_update_is_rebuilt_by_eigh(monkeypatch):
    X = _data(130, seed=15)
    good = _bounded(gamma=0.5).fit(X)
    bad = _bounded(gamma=0.5).fit(X[:B + 10])
    real = bad._get_engine
    fail = [True]

    class Failing:
        features = True

        def __init__(self, engine):
            self.engine = engine

        def run_features(self, Phi, kappa, u, el, rl):
            if not fail:
                return self.engine.run_features(Phi, kappa, u, el, rl)
            fail.clear()
            k = min(3, Phi.shape[0] - 1)
            done = self.engine.run_features(Phi[:k + 1], kappa[:k + 1], u[:k + 1],
                                            el[:k + 1], rl[:k + 1])
            assert done == k + 1
            bad._bounded.trials[0] -= 1  # the failed trial is not counted ...
            lam, Q = bad._bounded.evals, bad._bounded.q
            C = (Q * lam) @ Q.T - np.outer(Phi[k], Phi[k])
            lam[:], Q[:] = np.linalg.eigh(C)  # ... and its update not made
            raise _kernels.status_error(_kernels.STATUS_EFAILED, "test", trials_done=k)

    monkeypatch.setattr(bad, "_get_engine", lambda p: Failing(real(p)))
    bad.partial_fit(X[B + 10:])
    assert bad.n_eigh_fallbacks_ == 1 and bad.n_trials_ == len(X)
    np.testing.assert_allclose(bad.expected_losses_, good.expected_losses_, rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(bad.eigenvalues_, good.eigenvalues_, rtol=0,
                               atol=1e-11 * good.eigenvalues_.max())


# -- gamma="scale" ---------------------------------------------------------------------------

@pytest.mark.parametrize("kernel", ["rbf", "poly"])
@pytest.mark.parametrize("budget", [None, B])
def test_gamma_scale_gives_the_same_losses_for_x_and_c_x(kernel, budget):
    """The kernel values of gamma="scale" are those of X for c X: the same
    learner, to rounding (1e-12 relative), from c = 1e-6 to 1e6."""
    X = _data(130, seed=16)
    ref = opf.OnlineKernelPCA(R, kernel=kernel, budget=budget, map_size=D,
                              random_state=2).fit(X)
    for c in (1e-6, 1e-3, 7.0, 1e6):
        scaled = opf.OnlineKernelPCA(R, kernel=kernel, budget=budget, map_size=D,
                                     random_state=2).fit(c * X)
        assert scaled.gamma_ == pytest.approx(ref.gamma_ / c ** 2, rel=1e-14)
        np.testing.assert_allclose(scaled.expected_losses_, ref.expected_losses_,
                                   rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(scaled.realized_losses_, ref.realized_losses_,
                                   rtol=1e-12, atol=1e-14)


def test_gamma_scale_is_fixed_by_the_first_rows_of_the_first_batch():
    X = _data(250, n=5, seed=17) + 3.0
    fit = opf.OnlineKernelPCA(R, random_state=0).fit(X)
    assert fit.gamma_ == pytest.approx(1.0 / (5 * X[:100].var()), rel=1e-13)
    # any split whose first batch has at least 100 rows: the same bits
    parts = opf.OnlineKernelPCA(R, random_state=0)
    for a, b in ((0, 100), (100, 101), (101, 250)):
        parts.partial_fit(X[a:b])
    assert_same_state(parts, fit)
    # a shorter first batch (learn_one: one row) sets it from its rows
    one = opf.OnlineKernelPCA(R, random_state=0).learn_one(X[0])
    assert one.gamma_ == pytest.approx(1.0 / (5 * X[0].var()), rel=1e-13)
    # later batches do not change it; constant first rows: 1.0 (as scikit-learn)
    one.partial_fit(X[1:50] * 10)
    assert one.gamma_ == pytest.approx(1.0 / (5 * X[0].var()), rel=1e-13)
    assert opf.OnlineKernelPCA(R).fit(np.ones((10, 5))).gamma_ == 1.0


def test_gamma_auto_and_the_deprecated_none():
    X = _data(50, n=4, seed=18)
    auto = opf.OnlineKernelPCA(R, gamma="auto", random_state=0).fit(X)
    assert auto.gamma_ == 0.25
    with pytest.warns(DeprecationWarning, match="gamma=None is deprecated"):
        old = opf.OnlineKernelPCA(R, gamma=None, random_state=0).fit(X)
    np.testing.assert_array_equal(old.expected_losses_, auto.expected_losses_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        old.partial_fit(X)  # warns at the reset only


def test_gamma_scale_refuses_a_scale_beyond_the_float_range():
    X = np.full((3, 4), 1e-200)
    X[1] *= 2
    before = opf.OnlineKernelPCA(R)
    with pytest.raises(ValueError, match="gamma='scale'"):
        before.fit(X)
    assert not hasattr(before, "n_features_in_")
    assert opf.OnlineKernelPCA(R, gamma=1.0).fit(X).n_trials_ == 3


def test_the_bounded_modes_eigenvectors_are_reorthogonalised_at_fixed_counts():
    """After every 10,000 trials of the bounded mode one Newton-Schulz step
    (part of the trial) restores |Q^T Q - I| to rounding, at the same trials
    however the stream is split; losses as the NumPy reference's."""
    rng = np.random.default_rng(19)
    X = rng.standard_normal((B + 10_002, 6)) * np.linspace(1.0, 0.3, 6) / np.sqrt(6)
    whole = _bounded(gamma=0.5, map_size=16).fit(X)
    Q = whole.eigenvectors_
    assert np.abs(Q.T @ Q - np.eye(16)).max() <= 2e-15  # ~4e-14 without the step
    split = _bounded(gamma=0.5, map_size=16)
    for a, b in ((0, B + 9_999), (B + 9_999, B + 10_000), (B + 10_000, len(X))):
        split.partial_fit(X[a:b])
    assert_same_state(split, whole)
    C = (Q * whole.eigenvalues_) @ Q.T
    Phi = gram(X, whole.X_fit_, **_kernel_args(whole)) @ whole.feature_map_
    np.testing.assert_allclose(C, Phi.T @ Phi, rtol=0, atol=1e-10 * whole.eigenvalues_.max())
