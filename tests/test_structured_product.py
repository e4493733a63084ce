"""The hierarchical eigenvector product of the rank-one and bordered updates
(issue 15, ``src/hodlr.c``).

Oracles: numpy.linalg.eigh of the formed matrix (eigenvalues, residual
||A Q - Q L|| and orthogonality, as tests/test_rank_one_update.py), and the
same update with the dense GEMM forced (the eigenvectors must agree to a
few ulps: both multiply by the same secular eigenvector matrix).  Every
test asserts that the structured path was taken (or, for the fallback,
declined), so that a silent GEMM cannot pass for it.

Small orders reach the structured path through a context of their own
(``_kernels.tuning``: crossover 64, leaves of 16): the same code with more
levels, cheap enough for chains of 10^4 updates.
"""

import zlib

import numpy as np
import pytest
from test_rank_one_update import (  # noqa: F401 (an autouse fixture)
    check_eigensystem,
    formed,
    random_orthogonal,
    single_threaded_blas,
)

import onlinepca_fast as opf
from onlinepca_fast import _kernels, reference
from onlinepca_fast.kernels import (
    STRUCTURED_PRODUCT_MIN,
    RankOneUpdater,
    bordered_update,
    rank_one_update,
)

SAME_TOL = 1e-12  # |Q_structured - Q_dense| entrywise


@pytest.fixture
def small_crossover():
    """The structured path from 64 non-deflated eigenvalues, leaves of 16,
    for what the test makes (yields that context: it counts the products)."""
    with _kernels.tuning(min_order=64, leaf=16) as ctx:
        yield ctx


def spectrum(kind, n, rng):
    if kind == "random":
        return np.sort(rng.standard_normal(n))
    if kind == "learner":  # as A = -log n - eta C: wide spread, a tight top
        return np.sort(-np.log(n) - 200.0 * rng.random(n) ** 6)
    if kind == "clusters":  # exact pairs: reflectors, then a block of n / 2
        return np.sort(np.repeat(rng.standard_normal(n // 2), 2))
    if kind == "geometric":  # gaps from 1e-7 to 1
        return np.cumsum(np.logspace(-7, 0, n))
    raise ValueError(kind)


def both(evals, evecs, rho, x):
    """The update structured (asserted) and with the dense product forced."""
    new, vec, info = rank_one_update(evals, evecs, rho, x, _return_info=True)
    new_d, vec_d, info_d = rank_one_update(evals, evecs, rho, x, product="dense",
                                           _return_info=True)
    assert info["n_structured"] == 1 and info["n_product_fallbacks"] == 0, info
    assert info_d["n_structured"] == 0
    np.testing.assert_array_equal(new, new_d)  # the product does not touch them
    return new, vec, vec_d, info


#: orders at which every case keeps at least STRUCTURED_PRODUCT_MIN
#: eigenvalues out of deflation (huge rho deflates more)
ORDERS = {"random": 640, "learner": 760, "clusters": 1100, "geometric": 1200}


@pytest.mark.parametrize("kind", list(ORDERS))
@pytest.mark.parametrize("rho", [0.7, -0.7, 1e4, -1e8, -3e-3])
def test_rank_one_update_against_eigh(kind, rho):
    n = ORDERS[kind]
    rng = np.random.default_rng(zlib.crc32(repr((kind, rho)).encode()))
    evals, evecs = spectrum(kind, n, rng), random_orthogonal(n, rng)
    x = rng.standard_normal(n)
    new, vec, vec_d, info = both(evals, evecs, rho, x)
    assert info["m"] >= STRUCTURED_PRODUCT_MIN
    check_eigensystem(evals, evecs, rho, x, new, vec)
    assert np.abs(vec - vec_d).max() <= SAME_TOL


def test_tiny_z_components_deflate_and_the_rest_is_structured():
    n = 2 * STRUCTURED_PRODUCT_MIN
    rng = np.random.default_rng(7)
    evals, evecs = spectrum("random", n, rng), random_orthogonal(n, rng)
    z = rng.standard_normal(n)
    z[rng.permutation(n)[:n // 4]] *= 1e-20  # a quarter below the tolerance
    x = evecs @ z
    new, vec, vec_d, info = both(evals, evecs, -2.0, x)
    assert STRUCTURED_PRODUCT_MIN <= info["m"] < n
    check_eigensystem(evals, evecs, -2.0, x, new, vec)
    assert np.abs(vec - vec_d).max() <= SAME_TOL


@pytest.mark.parametrize("force", [None, "bisection", "eig"])
def test_rho_negative_odd_order_with_every_solver(force):
    """rho < 0 with nothing deflated: the hierarchical product reads S
    reversed as a whole, which the Loewner pass writes column pair by
    column pair (an odd order leaves a middle column, reversed in place)
    and which follows dsyevr when that solves the block (the product may
    decline dsyevr's vectors: then the GEMM reads the reversed S)."""
    n = STRUCTURED_PRODUCT_MIN + 129
    rng = np.random.default_rng(641)
    evals, evecs = spectrum("random", n, rng), random_orthogonal(n, rng)
    x = rng.standard_normal(n)
    new, vec, info = rank_one_update(evals, evecs, -0.7, x, _force=force,
                                     _return_info=True)
    new_d, vec_d, info_d = rank_one_update(evals, evecs, -0.7, x, _force=force,
                                           product="dense", _return_info=True)
    assert info["m"] == n, info
    # dsyevr's vectors may be declined (then the GEMM reads the reversed S)
    assert info["n_structured"] + info["n_product_fallbacks"] == 1, info
    assert info["n_structured"] == 1 or force == "eig"
    assert info_d["n_structured"] == 0
    assert info["n_eig"] == (force == "eig")
    check_eigensystem(evals, evecs, -0.7, x, new, vec)
    np.testing.assert_array_equal(new, new_d)
    assert np.abs(vec - vec_d).max() <= SAME_TOL


@pytest.fixture
def crossover_at_two():
    """The structured path (and the root iteration) from order 2 on."""
    with _kernels.tuning(min_order=2, leaf=16) as ctx:
        yield ctx


@pytest.mark.parametrize("n", [2, 3, 5, 33])
@pytest.mark.parametrize("rho", [0.7, -0.7])
def test_tiny_orders_on_the_structured_path(crossover_at_two, n, rho):
    """Orders 2 (dlaed4 returns the eigenvectors), 3 and 5 (a middle
    column) with S reversed for rho < 0; below two leaves the product
    declines and the GEMM reads the reversed S; 33 is hierarchical."""
    rng = np.random.default_rng(n)
    evals, evecs = spectrum("random", n, rng), random_orthogonal(n, rng)
    x = rng.standard_normal(n)
    new, vec, info = rank_one_update(evals, evecs, rho, x, _return_info=True)
    assert info["m"] == n, info
    assert info["n_structured"] == (n >= 32)
    assert info["n_structured"] + info["n_product_fallbacks"] == 1, info
    check_eigensystem(evals, evecs, rho, x, new, vec)


def test_order_4000():
    """The largest order of the issue: eigenvectors as the dense product's
    (which tests/test_rank_one_update.py checks against eigh), orthonormal,
    and the eigenvalues satisfy the trace identity."""
    n = 4000
    rng = np.random.default_rng(4000)
    evals = np.sort(rng.standard_normal(n))
    evecs = random_orthogonal(n, rng)
    x = rng.standard_normal(n)
    new, vec, vec_d, info = both(evals, evecs, -0.5, x)
    assert info["m"] == n
    assert np.abs(vec - vec_d).max() <= SAME_TOL
    assert np.abs(vec.T @ vec - np.eye(n)).max() <= 1e-12
    np.testing.assert_allclose(new.sum(), evals.sum() - 0.5 * x @ x, rtol=1e-12)


def test_bordered_update_against_eigh():
    m = STRUCTURED_PRODUCT_MIN + 100
    rng = np.random.default_rng(11)
    evals = np.sort(rng.random(m) * 5)
    evecs = random_orthogonal(m, rng)
    y, kappa = rng.standard_normal(m), 3.0
    A = formed(evals, evecs, 0.0, np.zeros(m))
    B = np.block([[A, y[:, None]], [y[None, :], np.array([[kappa]])]])
    new, vec, info = bordered_update(evals, evecs, y, kappa, _return_info=True)
    new_d, vec_d, info_d = bordered_update(evals, evecs, y, kappa, product="dense",
                                           _return_info=True)
    assert info["n_structured"] == 1 and info_d["n_structured"] == 0
    ref = np.linalg.eigvalsh(B)
    norm = np.abs(ref).max()
    np.testing.assert_allclose(new, ref, rtol=0, atol=1e-13 * norm)
    assert np.linalg.norm(B @ vec - vec * new) <= 1e-12 * norm
    assert np.linalg.norm(vec.T @ vec - np.eye(m + 1)) <= 1e-13 * (m + 1)
    assert np.abs(vec - vec_d).max() <= SAME_TOL


def test_a_declined_product_falls_back_to_the_gemm_and_is_counted(small_crossover):
    n = 300
    rng = np.random.default_rng(3)
    evals, evecs = spectrum("random", n, rng), random_orthogonal(n, rng)
    x = rng.standard_normal(n)
    updater = RankOneUpdater(n)
    d1, q1 = evals.copy(), evecs.copy()
    updater.update(d1, q1, 0.9, x)
    assert updater.n_structured_products == 1 and updater.n_product_fallbacks == 0
    with _kernels.tuning(decline=True):  # every compression declines
        declining = RankOneUpdater(n)
    d2, q2 = evals.copy(), evecs.copy()
    declining.update(d2, q2, 0.9, x)
    assert declining.n_structured_products == 0 and declining.n_product_fallbacks == 1
    assert declining.last_info["n_product_fallbacks"] == 1
    check_eigensystem(evals, evecs, 0.9, x, d2, q2)
    np.testing.assert_array_equal(d1, d2)
    assert np.abs(q1 - q2).max() <= SAME_TOL
    updater.update(d1, q1, -0.9, x)  # the first updater's setting is its own
    assert updater.n_structured_products == 2 and updater.n_product_fallbacks == 0


def test_chain_of_10000_updates(small_crossover):
    """10^4 structured updates in a row (random signs, an occasional
    near-tie): eigenvalues, residual and orthogonality as the dense
    product's after the same chain."""
    n, steps = 160, 10_000
    rng = np.random.default_rng(10)
    evals = np.sort(rng.standard_normal(n))
    evecs = random_orthogonal(n, rng)
    A = formed(evals, evecs, 0.0, np.zeros(n))
    updater = RankOneUpdater(n)
    d, q = evals.copy(), evecs.copy()
    X = rng.standard_normal((steps, n)) / np.sqrt(n)
    rhos = rng.choice([-1.0, 1.0], steps) * rng.uniform(0.01, 0.3, steps)
    for x, rho in zip(X, rhos):
        updater.update(d, q, rho, x)
        A += rho * np.outer(x, x)
    assert updater.n_structured_products >= 0.9 * steps
    assert updater.n_product_fallbacks == 0
    ref = np.linalg.eigvalsh(0.5 * (A + A.T))
    norm = np.abs(ref).max()
    np.testing.assert_allclose(d, ref, rtol=0, atol=1e-12 * norm)
    assert np.linalg.norm(A @ q - q * d) <= 1e-12 * norm * np.sqrt(n)
    assert np.abs(q.T @ q - np.eye(n)).max() <= 1e-12


def test_learners_with_the_structured_product_match_the_reference(small_crossover):
    """CenteredOnlinePCA in its dense steady state (every update structured
    from the 64th trial) and OnlineKernelPCA (bordered updates): the same
    losses as with the dense product and as the NumPy reference."""
    n, T = 80, 200
    rng = np.random.default_rng(12)
    X = rng.standard_normal((T, n)) * np.linspace(1.0, 0.05, n)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    fast = opf.CenteredOnlinePCA(4, eta=2.0, random_state=0, state="dense").fit(X)
    assert small_crossover.n_structured >= T - n  # the steady state
    with _kernels.tuning(product="dense") as dense_ctx:
        dense = opf.CenteredOnlinePCA(4, eta=2.0, random_state=0, state="dense").fit(X)
    assert dense_ctx.n_structured == 0
    ref = reference.CenteredOnlinePCA(4, eta=2.0, random_state=0).fit(X)
    for other in (dense, ref):
        np.testing.assert_allclose(fast.expected_losses_, other.expected_losses_,
                                   rtol=0, atol=1e-9)
    Xk = X[:120, :6]
    before = small_crossover.n_structured
    kfast = opf.OnlineKernelPCA(3, kernel="rbf", gamma=0.5, eta=2.0, random_state=0).fit(Xk)
    assert small_crossover.n_structured - before >= 20  # bordered, order >= 64
    with _kernels.tuning(product="dense") as dense_ctx:
        kdense = opf.OnlineKernelPCA(3, kernel="rbf", gamma=0.5, eta=2.0,
                                     random_state=0).fit(Xk)
    assert dense_ctx.n_structured == 0
    kref = reference.OnlineKernelPCA(3, kernel="rbf", gamma=0.5, eta=2.0, random_state=0).fit(Xk)
    for other in (kdense, kref):
        np.testing.assert_allclose(kfast.expected_losses_, other.expected_losses_,
                                   rtol=0, atol=1e-9)


def test_the_product_alone_against_numpy_and_its_profile():
    """The benchmarks' hook (_hierarchical_product): G @ S by the
    hierarchical product alone, against NumPy's product, with the flop
    count its blocks imply (every low-rank block cheaper than its dense
    product, the whole well below one GEMM's 2 n^3)."""
    n = 1000
    rng = np.random.default_rng(25)
    evals = np.sort(rng.standard_normal(n))
    z = rng.standard_normal(n)
    _, S = rank_one_update(evals, np.eye(n), -0.7, z)  # the secular eigenvectors
    G = random_orthogonal(n, rng)
    out, st = _kernels._hierarchical_product(S, G)
    assert np.abs(out - G @ S).max() <= 1e-13
    assert st["n_blocks"] == 2 ** (st["levels"] + 1) - 2  # two per inner node
    assert 1 <= st["mean_rank"] <= st["max_rank"] <= 96
    leaf = _kernels.current_context().leaf
    assert st["leaf_flops"] <= 2.0 * n * n * leaf
    assert st["leaf_flops"] + st["lowrank_flops"] <= 0.3 * 2.0 * n ** 3
    # the compression alone: the same blocks, nothing written
    mark = np.full((n, n), 7.0)
    none, st2 = _kernels._hierarchical_product(S, G, apply=False, out=mark)
    assert none is None and st2 == st and (mark == 7.0).all()
    # into a given array, the same numbers
    again, _ = _kernels._hierarchical_product(S, G, out=mark)
    assert again is mark and np.array_equal(mark, out)


def test_the_product_hook_rejects_bad_shapes_and_reports_a_decline():
    S = np.eye(100)
    with pytest.raises(ValueError, match="g must have 100 columns"):
        _kernels._hierarchical_product(S, np.ones((5, 99)))
    with pytest.raises(ValueError, match="ks x ks"):
        _kernels._hierarchical_product(np.ones((100, 103)), np.ones((5, 100)))
    with pytest.raises(ValueError, match="out must be"):
        _kernels._hierarchical_product(S, np.ones((5, 100)), out=np.empty((4, 100)))
    with pytest.raises(RuntimeError, match="declined"):  # below twice the leaf
        _kernels._hierarchical_product(np.eye(20), np.ones((3, 20)))


@pytest.mark.parametrize("leaf", [16, 37, 96])
def test_the_product_with_each_leaf_size_any_rows_and_the_extra_column(leaf):
    """Every leaf's block of S and its rows of the factors above it are
    applied as one GEMM and added into the blocks' T's: against NumPy with
    the leaves small (many levels) and large, a K = ks + 1 column block
    (the last leaf one column wider) and row counts that are not a
    multiple of the chunk (one row; 1300 = 512 + 512 + 276)."""
    rng = np.random.default_rng(leaf)
    ks = 700
    evals = np.sort(rng.standard_normal(ks))
    _, S = rank_one_update(evals, np.eye(ks), 0.9, rng.standard_normal(ks))
    S = np.hstack([S, rng.standard_normal((ks, 1)) * 1e-3])  # ks x (ks + 1)
    with _kernels.tuning(leaf=leaf):
        for nr in (1, 1300):
            G = rng.standard_normal((nr, ks))
            out, st = _kernels._hierarchical_product(S, G)
            assert np.abs(out - G @ S).max() <= 1e-13 * np.abs(G).sum(axis=1).max()
            assert st["levels"] >= 1


def test_the_product_of_a_row_does_not_depend_on_the_other_rows():
    """Each output row is its own row of G times S, whatever the chunk it
    falls in: the first rows of a product are those of the product of the
    first rows alone.  Bit for bit on OpenBLAS's Haswell kernel (measured);
    the test allows the last bits, since a BLAS may round a GEMM's column
    differently with the number of columns (a small-matrix path), and an
    update's product always has all n rows of Q anyway.  From two rows on:
    OpenBLAS computes a product with one row by its GEMV (NumPy's
    ``G[:1] @ S`` differs from ``(G @ S)[:1]`` likewise)."""
    rng = np.random.default_rng(7)
    n = 900
    _, S = rank_one_update(np.sort(rng.standard_normal(n)), np.eye(n), -0.5,
                           rng.standard_normal(n))
    G = rng.standard_normal((1100, n))
    whole, _ = _kernels._hierarchical_product(S, G)
    for k in (2, 300, 512, 700):
        part, _ = _kernels._hierarchical_product(S, G[:k])
        assert np.abs(part - whole[:k]).max() <= 1e-14 * np.abs(whole).max()


def test_the_product_of_a_block_diagonal_s():
    """Off-diagonal blocks of rank zero (S = I): nothing is added, G comes
    back exactly."""
    rng = np.random.default_rng(3)
    G = rng.standard_normal((50, 400))
    out, st = _kernels._hierarchical_product(np.eye(400), G)
    assert st["mean_rank"] == 0 and np.array_equal(out, G)


def test_the_leaf_tuning_is_bounded_by_the_workspace():
    before = _kernels.current_context()
    with pytest.raises(ValueError, match="leaf must be in"):
        with _kernels.tuning(leaf=97):
            pass
    with pytest.raises(ValueError, match="leaf must be in"):
        with _kernels.tuning(leaf=15):
            pass
    assert _kernels.current_context() is before


# --- an updater's own threads (issue 37: the split product and solve) -----------

def _updates_with_threads(n_threads, cases, flags=0):
    """The results of `cases` (evals, evecs, rho, x) by an updater with
    `n_threads` threads, and its counters."""
    upd = RankOneUpdater(cases[0][0].shape[0], n_threads=n_threads)
    out = []
    for evals, evecs, rho, x in cases:
        d, q = evals.copy(), evecs.copy()
        upd.update(d, q, rho, x, _flags=flags)
        out.append((d, q, upd.last_info))
    return out


@pytest.mark.parametrize("flags", [0, _kernels.R1_FORCE_BISECTION, _kernels.R1_TEST_BAD_DLAED4,
                                   _kernels.R1_FORCE_EIG],
                         ids=["default", "bisection", "bad-dlaed4", "eig"])
def test_threads_change_no_bit(flags):
    """The same updates with 1, 2 and 3 threads of the updater's own: the
    hierarchical product (rows split by fixed chunks, blocks compressed in
    slots), the secular solve (roots, Loewner weights and vectors split)
    and every fallback give the single thread's numbers bit for bit, and
    the same counters.  Orders above and below the split's minimum, both
    signs of rho, with and without deflation (a cluster: reflectors, the
    gathered path)."""
    rng = np.random.default_rng(37)
    cases = []
    for n, kind in [(700, "random"), (700, "clusters"), (1100, "learner")]:
        evals, evecs = spectrum(kind, n, rng), random_orthogonal(n, rng)
        for rho in (0.6, -0.6):
            cases.append((evals, evecs, rho, rng.standard_normal(n)))
    by_size = {}
    for case in cases:
        by_size.setdefault(case[0].shape[0], []).append(case)
    for group in by_size.values():
        one = _updates_with_threads(1, group, flags)
        assert any(info["n_structured"] for _, _, info in one) or flags == _kernels.R1_FORCE_EIG
        for k in (2, 3):
            for (d1, q1, i1), (dk, qk, ik) in zip(one, _updates_with_threads(k, group, flags)):
                np.testing.assert_array_equal(dk, d1)
                np.testing.assert_array_equal(qk, q1)
                assert ik == i1


def test_a_declined_threaded_product_falls_back_alike():
    """A product declined by the testing switch falls back to the GEMM with
    any number of threads: counted alike, the same numbers."""
    n = 640
    rng = np.random.default_rng(641)
    evals, evecs = spectrum("random", n, rng), random_orthogonal(n, rng)
    x = rng.standard_normal(n)
    results = []
    for k in (1, 2):
        with _kernels.tuning(decline=True):
            upd = RankOneUpdater(n, n_threads=k)
        d, q = evals.copy(), evecs.copy()
        upd.update(d, q, -0.4, x)
        assert upd.n_product_fallbacks == 1 and upd.n_structured_products == 0
        results.append((d, q))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    check_eigensystem(evals, evecs, -0.4, x, *results[0])


def test_n_threads_is_validated_kept_and_pickled():
    import pickle
    upd = RankOneUpdater(10, n_threads=2)
    assert upd.n_threads in (1, 2)  # 1 without POSIX threads
    assert pickle.loads(pickle.dumps(upd)).n_threads == upd.n_threads
    assert RankOneUpdater(10).n_threads == 1
    for bad in (0, -1, 2.0, True, "2", 257):
        with pytest.raises(ValueError, match="n_threads must be an int in"):
            RankOneUpdater(10, n_threads=bad)


def test_threaded_updaters_in_threads_of_their_own():
    """Two updaters with two threads each, called at once from two Python
    threads (the GIL released): each gives the numbers of a single-thread
    update."""
    import threading
    n = 500
    rng = np.random.default_rng(5)
    evals, evecs = spectrum("random", n, rng), random_orthogonal(n, rng)
    xs = [rng.standard_normal(n) for _ in range(2)]
    want = [rank_one_update(evals, evecs, 0.3, x) for x in xs]
    got = [None, None]

    def run(i):
        upd = RankOneUpdater(n, n_threads=2)
        d, q = evals.copy(), evecs.copy()
        for _ in range(3):
            d[:], q[:] = evals, evecs
            upd.update(d, q, 0.3, xs[i])
        got[i] = (d, q)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for (d, q), (dw, qw) in zip(got, want):
        np.testing.assert_array_equal(d, dw)
        np.testing.assert_array_equal(q, qw)
