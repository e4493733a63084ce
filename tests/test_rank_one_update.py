"""Tests of the symmetric rank-one eigen-update (kernels.rank_one_update).

The oracle is numpy.linalg.eigh of the explicitly formed matrix
(onlinepca_fast.reference.rank_one_update).  Eigenvectors are checked
through the residual ||A Q - Q L|| and orthogonality ||Q^T Q - I||, which
certify them without depending on the basis chosen inside a cluster.
||A|| is the 2-norm (max |eigenvalue| from eigh); residual and
orthogonality are measured in the Frobenius norm, which bounds the 2-norm
from above, so the checks are at least as strict as stated.
"""

import pickle
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onlinepca_fast import _kernels, reference
from onlinepca_fast.kernels import DEFLATION_FACTOR, RankOneUpdater, rank_one_update

@pytest.fixture(autouse=True, scope="module")
def single_threaded_blas():
    """NumPy and SciPy wheels bundle separate OpenBLAS builds.  This module
    alternates between them (eigh vs the kernel), and their idle worker
    threads spin and starve each other on few cores: 5-50 s instead of
    ~6 s on 2 cores.  threadpoolctl (installed with the test extra's
    scikit-learn) limits both to one thread while the module runs."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


SIZES = [1, 2, 3, 5, 20, 100, 300]
EVAL_RTOL = 1e-13   # |lambda - lambda_eigh| <= EVAL_RTOL ||A||
RESID_RTOL = 1e-12  # ||A Q - Q L|| <= RESID_RTOL ||A||
ORTH_TOL = 1e-13    # ||Q^T Q - I|| <= ORTH_TOL n


def random_orthogonal(n, rng):
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))


def random_problem(n, rng):
    """A generic update: a random orthogonal basis, ascending standard normal
    eigenvalues and a standard normal x (drawn in this order)."""
    evecs = random_orthogonal(n, rng)
    evals = np.sort(rng.standard_normal(n))
    return evals, evecs, rng.standard_normal(n)


def formed(evals, evecs, rho, x):
    a = (evecs * evals) @ evecs.T + rho * np.outer(x, x)
    return 0.5 * (a + a.T)


def check_eigensystem(evals, evecs, rho, x, new_evals, new_evecs):
    """Assert the three accuracy criteria against eigh of the formed matrix."""
    n = evals.shape[0]
    a = formed(evals, evecs, rho, x)
    ref_evals = np.linalg.eigvalsh(a)
    norm_a = max(np.abs(ref_evals).max(), np.finfo(float).tiny)
    assert new_evals.shape == (n,) and new_evecs.shape == (n, n)
    assert np.all(np.diff(new_evals) >= 0)
    np.testing.assert_allclose(new_evals, ref_evals, rtol=0,
                               atol=EVAL_RTOL * norm_a)
    resid = np.linalg.norm(a @ new_evecs - new_evecs * new_evals)
    assert resid <= RESID_RTOL * norm_a
    orth = np.linalg.norm(new_evecs.T @ new_evecs - np.eye(n))
    assert orth <= ORTH_TOL * n


def run(evals, evecs, rho, x, **kw):
    """rank_one_update with the info dict, checked against eigh."""
    new_evals, new_evecs, info = rank_one_update(evals, evecs, rho, x,
                                                 _return_info=True, **kw)
    check_eigensystem(evals, evecs, rho, x, new_evals, new_evecs)
    return new_evals, new_evecs, info


# --- generic inputs -------------------------------------------------------

@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("rho", [1.0, -1.0, 0.37, -25.0])
def test_random_against_eigh(n, rho):
    rng = np.random.default_rng(n)
    evals, evecs, x = random_problem(n, rng)
    _, _, info = run(evals, evecs, rho, x)
    assert info["m"] == n  # generic data: nothing deflates
    assert info["n_bisection"] == 0 and info["n_eig"] == 0


@pytest.mark.parametrize("n", SIZES)
def test_matches_reference_module(n):
    rng = np.random.default_rng(100 + n)
    evecs = random_orthogonal(n, rng)
    evals = np.sort(rng.uniform(0, 3, n))
    x = rng.standard_normal(n)
    new_evals, _ = rank_one_update(evals, evecs, 0.5, x)
    ref_evals, _ = reference.rank_one_update(evals, evecs, 0.5, x)
    norm_a = np.abs(ref_evals).max()
    np.testing.assert_allclose(new_evals, ref_evals, rtol=0,
                               atol=EVAL_RTOL * norm_a)


def test_small_example():
    new_evals, new_evecs = rank_one_update(np.zeros(2), np.eye(2), 2.0,
                                           [1.0, 0.0])
    np.testing.assert_array_equal(new_evals, [0.0, 2.0])
    np.testing.assert_allclose(np.abs(new_evecs), [[0, 1], [1, 0]],
                               rtol=0, atol=1e-15)


# --- adversarial inputs ---------------------------------------------------

@pytest.mark.parametrize("n", [2, 3, 5, 20, 100, 300])
@pytest.mark.parametrize("rho", [1.0, -1.0])
def test_exact_ties(n, rho):
    rng = np.random.default_rng(7 * n)
    evecs = random_orthogonal(n, rng)
    evals = np.sort(rng.integers(-2, 3, n).astype(float))
    x = rng.standard_normal(n)
    run(evals, evecs, rho, x)


@pytest.mark.parametrize("n", [3, 20, 100])
@pytest.mark.parametrize("rho", [1.0, -1.0])
def test_ties_within_1e15(n, rho):
    rng = np.random.default_rng(11 * n)
    evecs = random_orthogonal(n, rng)
    evals = np.sort(1.0 + 1e-15 * rng.integers(0, 4, n))
    evals[n // 2:] += 1e-15 * np.arange(n - n // 2)
    evals.sort()
    x = rng.standard_normal(n)
    run(evals, evecs, rho, x)


@pytest.mark.parametrize("n", [2, 3, 5, 20, 100, 300])
@pytest.mark.parametrize("rho", [1.0, -1.0, 1e3])
@pytest.mark.parametrize("where", ["low", "high"])
def test_cluster_of_size_n_minus_1(n, rho, where):
    rng = np.random.default_rng(13 * n)
    evecs = random_orthogonal(n, rng)
    evals = np.full(n, 0.25)
    evals[0 if where == "low" else -1] = -1.0 if where == "low" else 2.0
    x = rng.standard_normal(n)
    new_evals, _, info = run(evals, evecs, rho, x)
    # One reflector deflates the cluster: O(n c) work, not a size-n solve,
    # and n - 2 eigenvalues stay exactly at the cluster value.
    assert info["m"] <= 2
    assert info["n_reflectors"] == (1 if n > 2 else 0)
    assert np.count_nonzero(new_evals == 0.25) >= n - 2


@pytest.mark.parametrize("n", [1, 5, 100])
@pytest.mark.parametrize("rho", [2.0, -2.0])
def test_multiple_of_identity(n, rho):
    rng = np.random.default_rng(17 * n)
    evecs = random_orthogonal(n, rng)
    evals = np.full(n, 3.0)
    x = rng.standard_normal(n)
    new_evals, _, info = run(evals, evecs, rho, x)
    assert info["m"] == 1
    assert np.count_nonzero(new_evals == 3.0) == n - 1
    np.testing.assert_allclose(new_evals[-1 if rho > 0 else 0],
                               3.0 + rho * (x @ x), rtol=1e-14)


@pytest.mark.parametrize("n", [3, 20, 300])
@pytest.mark.parametrize("rho", [1.0, -1.0])
def test_z_with_exact_zeros(n, rho):
    # evecs = I makes z = x exactly.
    rng = np.random.default_rng(19 * n)
    evals = np.sort(rng.standard_normal(n))
    x = rng.standard_normal(n)
    x[::3] = 0.0
    new_evals, new_evecs, info = run(evals, np.eye(n), rho, x)
    assert info["m"] == n - len(range(0, n, 3))
    # the deflated pairs are returned exactly
    for j in range(0, n, 3):
        k = int(np.flatnonzero(new_evals == evals[j])[0])
        np.testing.assert_allclose(np.abs(new_evecs[:, k]), np.eye(n)[j],
                                   rtol=0, atol=0)


@pytest.mark.parametrize("n", [1, 5, 100])
@pytest.mark.parametrize("rho", [1.0, -3.0])
def test_z_along_one_eigenvector(n, rho):
    rng = np.random.default_rng(23 * n)
    evecs = random_orthogonal(n, rng)
    evals = np.sort(rng.standard_normal(n))
    j = n // 2
    x = 1.5 * evecs[:, j]
    _, _, info = run(evals, evecs, rho, x)
    assert info["m"] == 1


@pytest.mark.parametrize("n", [20, 300])
@pytest.mark.parametrize("rho", [1.0, -1.0])
@pytest.mark.parametrize("basis", ["identity", "random"])
def test_z_spanning_1e_200_to_1(n, rho, basis):
    rng = np.random.default_rng(29 * n)
    evecs = np.eye(n) if basis == "identity" else random_orthogonal(n, rng)
    evals = np.sort(rng.standard_normal(n))
    z = np.logspace(-200, 0, n) * rng.choice([-1.0, 1.0], n)
    rng.shuffle(z)
    run(evals, evecs, rho, evecs @ z)


@pytest.mark.parametrize("n", [5, 100])
@pytest.mark.parametrize("rho", [1e-300, 1e-20, -1e-20, 1e-13, 1e20, -1e20,
                                 1e100, -1e100])
def test_rho_tiny_and_huge(n, rho):
    rng = np.random.default_rng(31 * n)
    evals, evecs, x = random_problem(n, rng)
    run(evals, evecs, rho, x)


@pytest.mark.parametrize("scale", [1e-150, 1e150])
def test_tiny_and_huge_matrices(scale):
    rng = np.random.default_rng(37)
    n = 30
    evecs = random_orthogonal(n, rng)
    evals = scale * np.sort(rng.standard_normal(n))
    x = np.sqrt(scale) * rng.standard_normal(n)
    run(evals, evecs, -0.7, x)


@pytest.mark.parametrize("n", [100, 300])
def test_capped_learner_structure(n):
    # 80% of the eigenvalues in one exact cluster, z on 5 eigen-directions
    rng = np.random.default_rng(41 * n)
    evecs = random_orthogonal(n, rng)
    evals = np.sort(rng.standard_normal(n))
    evals[: int(0.8 * n)] = evals[int(0.4 * n)]
    evals.sort()
    z = np.zeros(n)
    z[rng.choice(n, 5, replace=False)] = rng.standard_normal(5)
    _, _, info = run(evals, evecs, 1.0, evecs @ z)
    assert info["m"] <= 5
    _, _, info = run(evals, evecs, -1.0, rng.standard_normal(n))
    assert info["m"] <= n - int(0.8 * n) + 1


@settings(derandomize=True, deadline=None, max_examples=150)
@given(
    evals=st.lists(st.sampled_from([-1.0, 0.0, 0.5, 0.5 + 2e-16, 1.0, 4.0]),
                   min_size=1, max_size=12).map(sorted),
    x_int=st.lists(st.integers(-3, 3), min_size=12, max_size=12),
    rho=st.sampled_from([-10.0, -1.0, -1e-9, 1e-9, 0.5, 1.0, 100.0]),
    seed=st.integers(0, 2**16),
)
def test_property_small_tied_problems(evals, x_int, rho, seed):
    n = len(evals)
    evals = np.asarray(evals)
    x = np.asarray(x_int[:n], dtype=float)
    evecs = (np.eye(n) if seed % 3 == 0
             else random_orthogonal(n, np.random.default_rng(seed)))
    check_eigensystem(evals, evecs, rho, x,
                      *rank_one_update(evals, evecs, rho, x))


def test_loewner_keeps_large_blocks_orthogonal():
    """The Loewner step (z recomputed from the computed roots) keeps the
    secular eigenvectors orthogonal at working precision.  With evecs = I
    the result is those vectors themselves; at n = 1000 with components of
    z spread over 12 decades, vectors built from the original z measured
    up to 5e-13 here, the Loewner ones at most 2.3e-14."""
    n = 1000
    worst = 0.0
    for seed in range(6):
        rng = np.random.default_rng(seed)
        evals = np.sort(rng.standard_normal(n))
        x = rng.standard_normal(n) * 10.0 ** rng.uniform(-12, 0, n)
        for rho in (1.0, -1.0):
            upd = RankOneUpdater(n)
            new_evals, new_evecs = evals.copy(), np.eye(n)
            upd.update(new_evals, new_evecs, rho, x)
            orth = np.linalg.norm(new_evecs.T @ new_evecs - np.eye(n))
            worst = max(worst, orth)
    assert worst <= 8e-14


# --- no-ops ---------------------------------------------------------------

@pytest.mark.parametrize("rho, x_zero", [(0.0, False), (1.0, True),
                                         (-2.0, True)])
def test_exact_noop(rho, x_zero):
    rng = np.random.default_rng(43)
    n = 7
    evecs = random_orthogonal(n, rng)
    evals = np.sort(rng.standard_normal(n))
    x = np.zeros(n) if x_zero else rng.standard_normal(n)
    new_evals, new_evecs, info = rank_one_update(evals, evecs, rho, x,
                                                 _return_info=True)
    np.testing.assert_array_equal(new_evals, evals)
    np.testing.assert_array_equal(new_evecs, evecs)
    assert new_evals is not evals and new_evecs is not evecs
    assert info["m"] == 0


def test_update_below_tolerance_is_noop():
    evals = np.array([1.0, 2.0, 3.0])
    x = np.array([1.0, 1.0, 1.0])
    rho = 0.5 * DEFLATION_FACTOR * np.finfo(float).eps / 3.0
    new_evals, new_evecs = rank_one_update(evals, np.eye(3), rho, x)
    np.testing.assert_array_equal(new_evals, evals)
    np.testing.assert_array_equal(new_evecs, np.eye(3))


# --- long chains ----------------------------------------------------------

@pytest.mark.parametrize("start", ["identity", "random"])
def test_long_chain_stays_accurate(start):
    """10^4 in-place updates with random signs at n = 50."""
    rng = np.random.default_rng(47)
    n, steps = 50, 10_000
    if start == "identity":  # the learners' start: a multiple of I
        evals, evecs = np.full(n, -np.log(n)), np.eye(n)
    else:
        evecs = random_orthogonal(n, rng)
        evals = np.sort(rng.standard_normal(n))
    acc = formed(evals, evecs, 0.0, np.zeros(n))
    upd = RankOneUpdater(n)
    xs = rng.standard_normal((steps, n)) / np.sqrt(n)
    rhos = rng.choice([-1.0, 1.0], steps) * rng.uniform(0.1, 1.0, steps)
    for x, rho in zip(xs, rhos):
        upd.update(evals, evecs, rho, x)
        acc += rho * np.outer(x, x)
    ref_evals = np.linalg.eigvalsh(acc)
    norm_acc = np.abs(ref_evals).max()
    assert np.linalg.norm(evecs.T @ evecs - np.eye(n)) <= 1e-10
    np.testing.assert_allclose(evals, ref_evals, rtol=0,
                               atol=1e-9 * norm_acc)
    resid = np.linalg.norm(acc @ evecs - evecs * evals)
    assert resid <= 1e-9 * norm_acc
    assert upd.n_updates == steps


# --- fallback paths -------------------------------------------------------

FALLBACK_CASES = ["random", "cluster", "ties", "tiny_z"]
FALLBACK_GRID = ([(n, case) for n in (2, 3, 20, 100) for case in FALLBACK_CASES]
                 + [(300, "random"), (300, "cluster")])


def fallback_problem(case, n, rng):
    evals, evecs, x = random_problem(n, rng)
    if case == "cluster":
        evals[: n // 2] = evals[n // 4]
        evals.sort()
    elif case == "ties":
        evals = np.sort(rng.integers(0, max(2, n // 3), n).astype(float))
    elif case == "tiny_z":
        x = evecs @ (np.logspace(-12, 0, n) * rng.choice([-1.0, 1.0], n))
    return evals, evecs, x


def on_fallback_grid(test):
    """Runs ``test(n, case, rho)`` for each (n, case) of FALLBACK_GRID and
    rho = 0.8 and -0.8."""
    test = pytest.mark.parametrize("rho", [0.8, -0.8])(test)
    return pytest.mark.parametrize("n, case", FALLBACK_GRID)(test)


def forced(force, n, case, rho, seed):
    """The info of an update forced onto one path, checked against eigh."""
    evals, evecs, x = fallback_problem(case, n, np.random.default_rng(seed))
    return run(evals, evecs, rho, x, _force=force)[2]


@on_fallback_grid
def test_forced_bisection(n, case, rho):
    info = forced("bisection", n, case, rho, seed=53 * n)
    # a block of order 1 has a closed form and needs no root finder
    assert info["n_bisection"] == (info["m"] if info["m"] >= 2 else 0)
    assert info["n_dlaed4_failures"] == 0 and info["n_eig"] == 0


@on_fallback_grid
def test_forced_eig(n, case, rho):
    info = forced("eig", n, case, rho, seed=59 * n)
    assert info["n_eig"] == (1 if info["m"] >= 2 else 0)
    assert info["n_bisection"] == 0


@pytest.mark.parametrize("n", [3, 20, 100])
@pytest.mark.parametrize("rho", [1.0, -1.0])
def test_failing_dlaed4_falls_back_to_bisection(n, rho):
    """A dlaed4 that fails (info = 1) or returns a root outside its interval
    is caught; those roots are redone by bisection and counted."""
    rng = np.random.default_rng(61 * n)
    evals, evecs, x = fallback_problem("random", n, rng)
    upd = RankOneUpdater(n)
    new_evals, new_evecs = evals.copy(), evecs.copy()
    upd.update(new_evals, new_evecs, rho, x,
               _flags=_kernels.R1_TEST_BAD_DLAED4)
    check_eigensystem(evals, evecs, rho, x, new_evals, new_evecs)
    # odd roots report failure; roots 2 mod 4 return a wrong root
    expected = n // 2 + len(range(2, n - 1, 4))
    assert upd.n_dlaed4_failures == expected
    assert upd.n_bisection_roots == expected
    assert upd.n_fallbacks == expected and upd.n_eig_fallbacks == 0


def test_total_failure_leaves_arrays_unchanged():
    """dsyevr failing with the block forced onto it: the update fails with
    LinAlgError, counts nothing, and the arrays hold what they held."""
    rng = np.random.default_rng(71)
    n = 8
    evals, evecs, x = fallback_problem("random", n, rng)
    upd = RankOneUpdater(n)
    new_evals, new_evecs = evals.copy(), evecs.copy()
    with pytest.raises(np.linalg.LinAlgError, match="all failed"):
        upd.update(new_evals, new_evecs, 1.0, x,
                   _flags=_kernels.R1_FORCE_EIG | _kernels.R1_TEST_FAILING_DSYEVR)
    np.testing.assert_array_equal(new_evals, evals)
    np.testing.assert_array_equal(new_evecs, evecs)
    assert upd.n_updates == 0
    # the stand-in is swapped out again after the call
    upd.update(new_evals, new_evecs, 1.0, x, _flags=_kernels.R1_FORCE_EIG)
    check_eigensystem(evals, evecs, 1.0, x, new_evals, new_evecs)


def test_updater_counts_fallbacks():
    rng = np.random.default_rng(67)
    n = 10
    evals, evecs, x = fallback_problem("random", n, rng)
    upd = RankOneUpdater(n)
    for flags in (0, _kernels.R1_FORCE_BISECTION, _kernels.R1_FORCE_EIG):
        upd.update(evals.copy(), evecs.copy(), 1.0, x, _flags=flags)
    assert upd.n_updates == 3
    assert upd.n_bisection_roots == n
    assert upd.n_eig_fallbacks == 1
    assert upd.n_fallbacks == n + 1
    assert upd.last_info["n_eig"] == 1


# --- the in-place updater -------------------------------------------------

def test_updater_in_place_matches_function():
    rng = np.random.default_rng(71)
    n = 40
    evals, evecs, x = random_problem(n, rng)
    expect_evals, expect_evecs = rank_one_update(evals, evecs, -0.3, x)
    upd = RankOneUpdater(n)
    upd.update(evals, evecs, -0.3, x)
    np.testing.assert_array_equal(evals, expect_evals)
    np.testing.assert_array_equal(evecs, expect_evecs)


def test_updater_rejects_bad_arguments_and_keeps_state():
    rng = np.random.default_rng(73)
    n = 6
    evals, evecs, _ = random_problem(n, rng)
    upd = RankOneUpdater(n)
    with pytest.raises(ValueError, match=r"n must be >= 1"):
        RankOneUpdater(0)
    with pytest.raises(ValueError, match=r"evals must have shape \(6,\)"):
        upd.update(np.zeros(5), evecs.copy(), 1.0, np.ones(n))
    with pytest.raises(ValueError, match=r"evecs must have shape \(6, 6\)"):
        upd.update(evals.copy(), np.eye(5), 1.0, np.ones(n))
    with pytest.raises(ValueError, match=r"x must have shape \(6,\)"):
        upd.update(evals.copy(), evecs.copy(), 1.0, np.ones(5))
    bad_evals, q = evals[::-1].copy(), evecs.copy()
    with pytest.raises(ValueError, match="ascending"):
        upd.update(bad_evals, q, 1.0, np.ones(n))
    np.testing.assert_array_equal(bad_evals, evals[::-1])
    np.testing.assert_array_equal(q, evecs)
    with pytest.raises(ValueError, match="x must be finite"):
        upd.update(evals.copy(), evecs.copy(), 1.0, np.full(n, np.nan))
    with pytest.raises(ValueError, match="rho must be finite"):
        upd.update(evals.copy(), evecs.copy(), np.inf, np.ones(n))
    q = evecs.copy()
    q[0, 0] = np.nan
    with pytest.raises(ValueError, match="evecs must be finite"):
        upd.update(evals.copy(), q, 1.0, np.ones(n))
    with pytest.raises(ValueError, match="overflows"):
        upd.update(evals.copy(), evecs.copy(), 1e300, np.full(n, 1e10))
    assert upd.n_updates == 0


def test_updater_pickles():
    upd = RankOneUpdater(4)
    upd.update(np.arange(4.0), np.eye(4), 1.0, np.ones(4),
               _flags=_kernels.R1_FORCE_BISECTION)
    clone = pickle.loads(pickle.dumps(upd))
    assert clone.n == 4
    assert (clone.n_updates, clone.n_bisection_roots) == (1, 4)


def test_updaters_in_threads_agree_with_serial():
    rng = np.random.default_rng(79)
    n, steps, workers = 60, 40, 4
    problems = []
    for _ in range(workers):
        evecs = random_orthogonal(n, rng)
        evals = np.sort(rng.standard_normal(n))
        xs = rng.standard_normal((steps, n))
        problems.append((evals, evecs, xs))

    def chain(evals, evecs, xs):
        evals, evecs = evals.copy(), evecs.copy()
        upd = RankOneUpdater(n)
        for k, x in enumerate(xs):
            upd.update(evals, evecs, (-1.0) ** k, x)
        return evals, evecs

    serial = [chain(*p) for p in problems]
    results = [None] * workers

    def target(i):
        results[i] = chain(*problems[i])

    threads = [threading.Thread(target=target, args=(i,))
               for i in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (e1, v1), (e2, v2) in zip(serial, results):
        np.testing.assert_allclose(e2, e1, rtol=0, atol=1e-12)
        np.testing.assert_allclose(v2, v1, rtol=0, atol=1e-10)


# --- input validation of the public function ------------------------------

def good_args(n=3):
    return dict(evals=np.array([1.0, 2.0, 3.0])[:n], evecs=np.eye(n),
                rho=1.0, x=np.ones(n))


@pytest.mark.parametrize("bad, exc, match", [
    (dict(evals=["a", "b", "c"]), TypeError, r"evals must be a real numeric"),
    (dict(evals=[1 + 1j, 2, 3]), ValueError, r"Complex data not supported: evals"),
    (dict(evals=[True, False, True]), TypeError, r"evals must be a real"),
    (dict(evals=np.ones((3, 1))), ValueError, r"evals must be a non-empty 1-D"),
    (dict(evals=[]), ValueError, r"evals must be a non-empty 1-D"),
    (dict(evals=[1.0, np.nan, 3.0]), ValueError, r"evals must be finite"),
    (dict(evals=[1.0, np.inf, 3.0]), ValueError, r"evals must be finite"),
    (dict(evals=[3.0, 2.0, 1.0]), ValueError,
     r"evals must be in ascending order, got evals\[0\] = 3.0 > evals\[1\]"),
    (dict(evecs=np.eye(2)), ValueError,
     r"evecs must have shape \(3, 3\), got \(2, 2\)"),
    (dict(evecs=np.ones(9)), ValueError, r"evecs must have shape \(3, 3\)"),
    (dict(evecs=[[1, 0, 0], [0, 1, 0], [0, 0, np.nan]]), ValueError,
     r"evecs must be finite"),
    (dict(evecs=np.array([[1, 0, 0], [0, 1, 0], [0, 0, "1"]], dtype=object)), TypeError,
     r"evecs must hold real numbers"),
    (dict(rho="1"), TypeError, r"rho must be a real number, got str"),
    (dict(rho=True), TypeError, r"rho must be a real number, got bool"),
    (dict(rho=1j), TypeError, r"rho must be a real number, got complex"),
    (dict(rho=[1.0]), TypeError, r"rho must be a real number, got list"),
    (dict(rho=None), TypeError, r"rho must be a real number, got NoneType"),
    (dict(rho=np.nan), ValueError, r"rho must be a finite number"),
    (dict(rho=-np.inf), ValueError, r"rho must be a finite number"),
    (dict(x=[1.0, 2.0]), ValueError, r"x must have shape \(3,\), got \(2,\)"),
    (dict(x=[[1.0, 2.0, 3.0]]), ValueError, r"x must have shape \(3,\)"),
    (dict(x=[1.0, np.inf, 0.0]), ValueError, r"x must be finite"),
    (dict(x=["1", "2", "3"]), TypeError, r"x must be a real numeric"),
    (dict(x=[[1.0], [1.0, 2.0], 3.0]), ValueError,
     r"x must be a rectangular numeric array"),
    (dict(rho=1e300, x=[1e200, 0.0, 0.0]), ValueError,
     r"evals, rho and x give updated eigenvalues beyond the float64 range"),
    (dict(_force="newton"), ValueError, r"_force must be one of"),
])
def test_bad_input(bad, exc, match):
    args = good_args()
    args.update(bad)
    with pytest.raises(exc, match=match):
        rank_one_update(**args)


def test_inputs_not_modified_without_overwrite():
    rng = np.random.default_rng(83)
    n = 25
    evals, evecs, x = random_problem(n, rng)
    saved = (evals.copy(), evecs.copy(), x.copy())
    for force in (None, "bisection", "eig"):
        new_evals, new_evecs = rank_one_update(evals, evecs, -1.5, x,
                                               _force=force)
        assert not np.shares_memory(new_evals, evals)
        assert not np.shares_memory(new_evecs, evecs)
    np.testing.assert_array_equal(evals, saved[0])
    np.testing.assert_array_equal(evecs, saved[1])
    np.testing.assert_array_equal(x, saved[2])


def test_overwrite_reuses_arrays():
    rng = np.random.default_rng(89)
    n = 12
    evals, evecs, x = random_problem(n, rng)
    expect = rank_one_update(evals, evecs, 2.0, x)
    new_evals, new_evecs = rank_one_update(evals, evecs, 2.0, x,
                                           overwrite=True)
    assert new_evals is evals and new_evecs is evecs
    np.testing.assert_array_equal(new_evals, expect[0])
    np.testing.assert_array_equal(new_evecs, expect[1])


def test_overwrite_with_inconvertible_inputs_copies():
    evals = [1, 2, 3]                 # a list: cannot be written into
    evecs = np.asfortranarray(np.eye(3))  # not C-contiguous
    new_evals, new_evecs = rank_one_update(evals, evecs, 1.0, [1, 0, 0],
                                           overwrite=True)
    assert evals == [1, 2, 3]
    np.testing.assert_array_equal(evecs, np.eye(3))
    np.testing.assert_allclose(new_evals, [2.0, 2.0, 3.0], rtol=0,
                               atol=1e-15)
    assert new_evecs.flags.c_contiguous


# --- near the float64 maximum (issue 13) ---------------------------------------

@pytest.mark.parametrize("rho", [1.0, -1.0, 1e-300])
@pytest.mark.parametrize("x_scale", [1.0, 1e100, 1e150])
def test_near_the_float_maximum_finite_and_exact_or_a_value_error(rho, x_scale):
    """evals up to 1e308 and x up to 1e150: the update is solved scaled by a
    power of two; the result is finite and matches eigh of the scaled matrix
    (to eps of the norm), or a ValueError names the arguments when the true
    eigenvalues exceed the float64 range.  Inputs unchanged on error."""
    rng = np.random.default_rng(3)
    n = 6
    d = np.sort(np.concatenate([[-1e308, 1e308], rng.standard_normal(n - 2) * 1e300]))
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    x = rng.standard_normal(n) * x_scale
    s = 2.0 ** -600  # the oracle in a safe range
    A = (Q * (d * s)) @ Q.T + (rho * s) * np.outer(x, x)
    exact = np.linalg.eigvalsh(A) / s
    if not np.isfinite(exact).all() or np.abs(exact).max() > 1.7e308:
        d0, Q0 = d.copy(), Q.copy()
        with pytest.raises(ValueError, match="evals, rho and x give updated eigenvalues"):
            rank_one_update(d, Q, rho, x, overwrite=True)
        np.testing.assert_array_equal(d, d0)
        np.testing.assert_array_equal(Q, Q0)
        return
    w, V = rank_one_update(d, Q, rho, x)
    scale = np.abs(exact).max()
    np.testing.assert_allclose(w, exact, rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(V.T @ V, np.eye(n), rtol=0, atol=1e-13)
    np.testing.assert_allclose((V * (w * s)) @ V.T, A, rtol=0, atol=1e-13 * scale * s)


# --- array order (issue 40: any order the public kernels accept at the best one's speed)

@pytest.mark.parametrize("n, rho, product", [(40, 0.8, "auto"), (40, -0.8, "auto"),
                                             (400, -0.8, "auto"), (400, 0.8, "dense"),
                                             (333, 1e300, "auto")])
def test_fortran_ordered_evecs_give_the_c_result_bit_for_bit(n, rho, product):
    """evecs as scipy.linalg.eigh returns them (Fortran order): copied to C
    order by a blocked transpose, an exact copy, so the result is the
    C-ordered call's bit for bit (400: the hierarchical product; 1e300:
    the scaled path), the input is untouched unless overwrite is allowed
    (a Fortran array is then still copied: the result is C-ordered)."""
    rng = np.random.default_rng(n)
    evals = np.sort(rng.standard_normal(n))
    c = np.ascontiguousarray(random_orthogonal(n, rng))
    f = np.asfortranarray(c)
    x = rng.standard_normal(n)
    want = rank_one_update(evals, c, rho, x, product=product)
    for overwrite in (False, True):
        before = f.copy(order="F")
        got = rank_one_update(evals, f, rho, x, overwrite=overwrite, product=product)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        assert got[1].flags.c_contiguous
        np.testing.assert_array_equal(f, before)


def test_transpose_into_is_an_exact_transpose_of_any_shape():
    rng = np.random.default_rng(1)
    for m, n in [(1, 1), (1, 70), (70, 1), (63, 65), (130, 129)]:
        a = rng.standard_normal((m, n))
        out = np.full((n + 2, m + 3), np.nan)
        _kernels.transpose_into(a, out[1:n + 1, 2:m + 2])  # strided rows
        np.testing.assert_array_equal(out[1:n + 1, 2:m + 2], a.T)
        assert np.isnan(out[0]).all() and np.isnan(out[:, :2]).all()
        assert np.isnan(out[n + 1]).all() and np.isnan(out[:, m + 2]).all()
    with pytest.raises(ValueError, match="out must be"):
        _kernels.transpose_into(np.ones((2, 3)), np.empty((2, 3)))
    with pytest.raises(ValueError, match="must be contiguous"):
        _kernels.transpose_into(np.ones((4, 6))[:, ::2], np.empty((3, 4)))


def test_updater_names_evecs_when_it_is_not_c_ordered():
    """RankOneUpdater writes in place, so it takes C order only; a Fortran
    array (eigh's) is refused with a message that names evecs and says
    how to convert it, and nothing is written."""
    n = 6
    rng = np.random.default_rng(2)
    evals = np.sort(rng.standard_normal(n))
    f = np.asfortranarray(random_orthogonal(n, rng))
    before_f, before_d = f.copy(order="F"), evals.copy()
    upd = RankOneUpdater(n)
    with pytest.raises(ValueError, match=r"evecs must be a writable C-contiguous float64 "
                                         r"matrix .*np.ascontiguousarray\(evecs\)"):
        upd.update(evals, f, 1.0, np.ones(n))
    with pytest.raises(ValueError, match="evecs must be a writable C-contiguous"):
        upd.update(evals, np.ones((n, n), dtype=np.float32), 1.0, np.ones(n))
    with pytest.raises(TypeError, match="'evecs' must not be None"):
        upd.update(evals, None, 1.0, np.ones(n))
    np.testing.assert_array_equal(f, before_f)
    np.testing.assert_array_equal(evals, before_d)
    assert upd.n_updates == 0
