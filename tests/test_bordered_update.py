"""Tests of kernels.bordered_update: the eigensystem of [[A, y], [y^T, kappa]]
grown from that of A as one arrowhead eigenproblem (src/bordered_update.c):
z = Q^T y, deflation, one secular equation, one GEMM.

Compared with numpy.linalg.eigh of the formed matrix B (reference), on
single steps -- random, y = 0, y with zeros, exact and near ties, kappa on
an eigenvalue of A, low rank, extreme scales, every fallback forced -- and
on whole growing kernel matrices, full rank or low rank.

Tolerances
----------
The update is backward stable: the computed eigenpairs are exact for a
matrix within a small multiple of ``eps |B|`` of B (the deflation
tolerance is ``8 eps max(|d|, |kappa|, |y|)``).  With ``n`` the order of B
and ``|B|`` its 2-norm, one step must give

- eigenvalues within EIG_RTOL * |B| of eigh's (EIG_RTOL = 1e-13: the
  eigenvalues of a symmetric matrix move by at most the perturbation),
- ``|V^T V - I|_2 <= ORTH_RTOL * n`` and ``|B V - V diag(w)|_2 <=
  RES_RTOL * n * |B|`` (ORTH_RTOL = RES_RTOL = 1e-15, i.e. ~5 n eps: the
  GEMM and the secular solve accumulate rounding over n terms; measured
  up to ~1.5 n eps).  The block solved by dsyevr (MRRR, forced) is much
  less orthogonal (measured up to ~90 n eps, 6e-13 at n = 31):
  DSYEVR_FACTOR = 100 times the two bounds then.

A growth of T steps accumulates those errors about linearly:
GROWTH_RTOL = 1e-12 (~4500 eps) for T = 300.
"""

import numpy as np
import pytest

from onlinepca_fast import _kernels, kernels, reference

EIG_RTOL = 1e-13
ORTH_RTOL = 1e-15
RES_RTOL = 1e-15
DSYEVR_FACTOR = 100
GROWTH_RTOL = 1e-12

FORCES = [None, "bisection", "eig", "bad_dlaed4"]


def _bordered(evals, Q, y, kappa):
    m = len(evals)
    A = (Q * evals) @ Q.T
    return np.block([[A, np.reshape(y, (m, 1))],
                     [np.reshape(y, (1, m)), np.array([[kappa]])]])


def _check(B, w, V, force=None):
    """w, V is an accurate eigensystem of B (see the module docstring)."""
    n = B.shape[0]
    f = DSYEVR_FACTOR if force == "eig" else 1
    w_ref = np.linalg.eigvalsh(B)
    nrm = max(np.abs(w_ref).max(), np.finfo(float).tiny)
    assert np.all(np.diff(w) >= 0), "eigenvalues not ascending"
    assert np.abs(w - w_ref).max() <= EIG_RTOL * nrm
    assert np.linalg.norm(V.T @ V - np.eye(n), 2) <= f * ORTH_RTOL * max(n, 4)
    assert np.linalg.norm(B @ V - V * w, 2) <= f * RES_RTOL * max(n, 4) * nrm


def _random_eigensystem(m, rng, spectrum="random"):
    if spectrum == "ties":
        evals = np.sort(rng.integers(0, 3, m).astype(np.float64))
    elif spectrum == "zeros":
        evals = np.sort(np.concatenate([np.zeros(m - m // 3), rng.random(m // 3)]))
    else:
        evals = np.sort(rng.standard_normal(m))
    Q, _ = np.linalg.qr(rng.standard_normal((m, m)))
    return evals, Q


# --- single steps ------------------------------------------------------------

@pytest.mark.parametrize("spectrum", ["random", "ties", "zeros"])
@pytest.mark.parametrize("m", [1, 2, 5, 40])
def test_one_step_matches_eigh(m, spectrum):
    rng = np.random.default_rng(m)
    evals, Q = _random_eigensystem(m, rng, spectrum)
    y, kappa = rng.standard_normal(m), float(rng.standard_normal())
    w, V = kernels.bordered_update(evals, Q, y, kappa)
    w_ref, _ = reference.bordered_update(evals, Q, y, kappa)
    np.testing.assert_allclose(w, w_ref, rtol=0, atol=EIG_RTOL * np.abs(w_ref).max())
    _check(_bordered(evals, Q, y, kappa), w, V)


@pytest.mark.parametrize("force", FORCES)
@pytest.mark.parametrize("m", [0, 1, 2, 3, 5, 20, 100, 300])
def test_random_against_eigh(m, force):
    """Random A, y, kappa: nothing deflates, the secular order is m + 1, and
    every path (dlaed4, forced bisection, forced dsyevr, a failing dlaed4
    caught and replaced by bisection) is accurate."""
    rng = np.random.default_rng(100 + m)
    evals, Q = _random_eigensystem(m, rng)
    y, kappa = rng.standard_normal(m), float(rng.standard_normal())
    w, V, info = kernels.bordered_update(evals, Q, y, kappa, _force=force,
                                         _return_info=True)
    _check(_bordered(evals, Q, y, kappa), w, V, force)
    if m == 0:
        assert info["order"] == 0
        return
    assert info["order"] == m + 1
    assert info["n_fallbacks"] == info["n_bisection"] + info["n_eig"]
    if force == "eig":
        assert info["n_eig"] == 1 and info["n_bisection"] == 0
    elif force == "bisection":
        assert info["n_bisection"] == m + 1 and info["n_dlaed4_failures"] == 0
        assert info["n_eig"] == 0
    elif force == "bad_dlaed4" and m + 1 > 2:
        # the stand-in fails (info = 1) on odd roots and returns a root
        # outside its interval on roots 2 mod 4: all caught, all bisected
        bad = len(range(1, m + 1, 2)) + len(range(2, m, 4))
        assert info["n_dlaed4_failures"] == bad
        assert info["n_bisection"] == bad and info["n_eig"] == 0
    else:
        assert info["n_fallbacks"] == 0 and info["n_dlaed4_failures"] == 0


def test_failure_leaves_the_arrays_unchanged():
    """dsyevr failing with the block forced onto it: the whole update fails
    (LinAlgError) and the caller's arrays hold exactly what they held."""
    rng = np.random.default_rng(7)
    m = 6
    evals, Q = _random_eigensystem(m, rng)
    ev = np.full(m + 1, 9.0)
    ev[:m] = evals
    q = np.full((m + 1, m + 1), 9.0)
    q[:m, :m] = Q
    ev0, q0 = ev.copy(), q.copy()
    flags = _kernels.R1_FORCE_EIG | _kernels.R1_TEST_FAILING_DSYEVR
    with pytest.raises(np.linalg.LinAlgError, match="arrays are unchanged"):
        _kernels.bordered_update(ev, q, m, rng.standard_normal(m), 0.5, _flags=flags)
    np.testing.assert_array_equal(ev, ev0)
    np.testing.assert_array_equal(q, q0)
    # without the forcing flag the secular path succeeds, dsyevr unused
    info = _kernels.bordered_update(ev, q, m, rng.standard_normal(m), 0.5,
                                    _flags=_kernels.R1_TEST_FAILING_DSYEVR)
    assert info["n_eig"] == 0


def test_invalid_state_is_reported_not_used():
    """The C update itself rejects a non-ascending or non-finite state."""
    ev, q = np.array([2.0, 1.0, 0.0]), np.eye(3)
    with pytest.raises(np.linalg.LinAlgError, match="ascending"):
        _kernels.bordered_update(ev, q, 2, np.ones(2), 0.0)
    ev, q = np.array([1.0, 2.0, 0.0]), np.eye(3)
    q[0, 0] = np.nan
    q0 = q.copy()
    with pytest.raises(np.linalg.LinAlgError):
        _kernels.bordered_update(ev, q, 2, np.ones(2), 0.0)
    np.testing.assert_array_equal(q, q0)
    with pytest.raises(ValueError, match="_flags"):
        _kernels.bordered_update(np.zeros(3), np.eye(3), 2, np.ones(2), 0.0, _flags=1 << 5)


def test_empty_and_zero_border():
    w, V = kernels.bordered_update(np.empty(0), np.empty((0, 0)), np.empty(0), 2.5)
    np.testing.assert_array_equal(w, [2.5])
    np.testing.assert_array_equal(V, [[1.0]])
    # y = 0: kappa is inserted in order, nothing else changes
    w, V = kernels.bordered_update([1.0, 3.0], np.eye(2), [0.0, 0.0], 2.0)
    np.testing.assert_array_equal(w, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.abs(V), [[1, 0, 0], [0, 0, 1], [0, 1, 0]])


@pytest.mark.parametrize("m", [1, 5, 50])
def test_zero_border_is_an_exact_insertion(m):
    """y = 0 (and y below the tolerance): (kappa, e_{m+1}) inserted after
    any equal eigenvalues, A's eigenpairs untouched bit for bit."""
    rng = np.random.default_rng(m)
    evals, Q = _random_eigensystem(m, rng, "ties")
    for y in (np.zeros(m), np.full(m, 1e-300)):
        kappa = float(evals[m // 2])  # equal to an eigenvalue of A
        w, V, info = kernels.bordered_update(evals, Q, y, kappa, _return_info=True)
        p = int(np.searchsorted(evals, kappa, side="right"))
        np.testing.assert_array_equal(w, np.insert(evals, p, kappa))
        np.testing.assert_array_equal(V[:m, :p], Q[:, :p])
        np.testing.assert_array_equal(V[:m, p + 1:], Q[:, p:])
        np.testing.assert_array_equal(V[:, p], np.eye(m + 1)[m])
        np.testing.assert_array_equal(V[m, np.arange(m + 1) != p], 0.0)
        assert info["order"] == 0


@pytest.mark.parametrize("force", FORCES)
def test_y_with_zeros(force):
    """z = Q^T y with zero components: those eigenpairs deflate unchanged
    (A diagonal, so z = y), and the rest is solved."""
    rng = np.random.default_rng(3)
    m = 30
    evals = np.sort(rng.standard_normal(m))
    y = rng.standard_normal(m)
    zero = rng.permutation(m)[:12]
    y[zero] = 0.0
    kappa = 0.3
    w, V, info = kernels.bordered_update(evals, np.eye(m), y, kappa, _force=force,
                                         _return_info=True)
    _check(_bordered(evals, np.eye(m), y, kappa), w, V, force)
    assert info["order"] == m - 12 + 1
    for j in zero:  # the deflated e_j is still an eigenvector, for evals[j]
        col = np.flatnonzero(np.abs(V[j]) == 1.0)
        assert len(col) == 1 and w[col[0]] == evals[j]


@pytest.mark.parametrize("force", FORCES)
def test_exact_ties_and_near_ties(force):
    """Clusters of exactly equal eigenvalues (one Householder reflector per
    cluster) and pairs closer than the tolerance (Givens rotations), with
    kappa equal to a clustered eigenvalue."""
    rng = np.random.default_rng(11)
    base = np.repeat([-1.0, 0.0, 0.5, 2.0], [6, 5, 1, 7])
    near = np.array([1.0, 1.0 + 1e-17, 1.0 + 3e-16, 1.0 + 1e-15, 1.0 + 1e-13,
                     1.0 + 1e-10, 1.5, 1.5 * (1 + 2 ** -52)])
    evals = np.sort(np.concatenate([base, near]))
    m = len(evals)
    _, Q = _random_eigensystem(m, rng)
    y = rng.standard_normal(m)
    for kappa in (0.0, 2.0, 1.0):
        w, V, info = kernels.bordered_update(evals, Q, y, kappa, _force=force,
                                             _return_info=True)
        _check(_bordered(evals, Q, y, kappa), w, V, force)
        assert info["n_reflectors"] == 4  # the clusters of 6, 5, 7 and 2 (1 + 1e-17 == 1)
        assert info["n_rotations"] >= 3   # among the near ties
        assert info["order"] <= m + 1 - (5 + 4 + 6 + 1) - 3


@pytest.mark.parametrize("force", FORCES)
@pytest.mark.parametrize("where", ["bottom", "middle", "top"])
def test_kappa_equal_to_an_eigenvalue(where, force):
    rng = np.random.default_rng(5)
    m = 25
    evals, Q = _random_eigensystem(m, rng)
    kappa = float(evals[{"bottom": 0, "middle": m // 2, "top": m - 1}[where]])
    y = rng.standard_normal(m)
    w, V = kernels.bordered_update(evals, Q, y, kappa, _force=force)
    _check(_bordered(evals, Q, y, kappa), w, V, force)


@pytest.mark.parametrize("rank", [3, 10])
def test_low_rank_kernel_deflates(rank):
    """A = X X^T of rank r with m = 200, the border of a new point of the
    same span: the m - r zero eigenvalues deflate, so the secular order is
    at most r + 2 (r poles, one merged zero cluster, kappa)."""
    rng = np.random.default_rng(rank)
    m = 200
    X = rng.standard_normal((m + 1, rank))
    K = X @ X.T
    evals, Q = np.linalg.eigh(K[:m, :m])
    for force in FORCES:
        w, V, info = kernels.bordered_update(evals, Q, K[:m, m], K[m, m], _force=force,
                                             _return_info=True)
        _check(K, w, V, force)
        assert info["order"] <= rank + 2


def test_outer_roots_far_out():
    """|y| much larger than A and kappa: the extreme roots are near -+|y|."""
    rng = np.random.default_rng(2)
    m = 40
    evals, Q = _random_eigensystem(m, rng)
    y = 1e6 * rng.standard_normal(m)
    for kappa in (-3.0, 0.0, 1e7):
        w, V = kernels.bordered_update(evals, Q, y, kappa)
        _check(_bordered(evals, Q, y, kappa), w, V)


@pytest.mark.parametrize("force", FORCES)
@pytest.mark.parametrize("scale", [1e-150, 1e-300, 1e150, 1e300])
def test_huge_and_tiny_scales(scale, force):
    """The update is homogeneous: B scaled by s gives eigenvalues scaled by
    s and the same accuracy relative to |B|, without overflow or underflow."""
    rng = np.random.default_rng(9)
    m = 30
    evals, Q = _random_eigensystem(m, rng)
    y, kappa = rng.standard_normal(m), float(rng.standard_normal())
    w, V = kernels.bordered_update(scale * evals, Q, scale * y, scale * kappa,
                                   _force=force)
    assert np.isfinite(w).all() and np.isfinite(V).all()
    # compare in unit scale: B / scale has eigenvalues w / scale
    _check(_bordered(evals, Q, y, kappa), w / scale, V, force)


def test_mixed_scales():
    """A tiny border on a big A (all deflated: an insertion), and a big
    border on a tiny A."""
    rng = np.random.default_rng(4)
    m = 20
    evals, Q = _random_eigensystem(m, rng)
    y = rng.standard_normal(m)
    w, V, info = kernels.bordered_update(1e150 * evals, Q, 1e-150 * y, 0.0,
                                         _return_info=True)
    assert info["order"] == 0
    np.testing.assert_array_equal(np.delete(w, np.flatnonzero(w == 0.0)), 1e150 * evals)
    w, V = kernels.bordered_update(1e-150 * evals, Q, 1e150 * y, 1e150)
    _check(_bordered(1e-150 * evals, Q, 1e150 * y, 1e150) / 1e150, w / 1e150, V)


# --- growth ----------------------------------------------------------------------

def _grow(K, force_flags=0):
    T = K.shape[0]
    ev = np.zeros(T)
    Q = np.zeros((T, T))
    orders = []
    for m in range(T):
        info = _kernels.bordered_update(ev, Q, m, np.ascontiguousarray(K[:m, m]),
                                        float(K[m, m]), _flags=force_flags)
        orders.append(info["order"])
    return ev, Q, orders


def _rbf_gram(X, gamma):
    """The rbf Gram matrix exp(-gamma |x_i - x_j|^2) of the rows of X, symmetrised."""
    sq = (X * X).sum(1)
    K = np.exp(-gamma * (sq[:, None] + sq[None, :] - 2 * X @ X.T))
    return (K + K.T) / 2


def _assert_grown_accurately(K, w, V, scale):
    """(w, V) grown from K agrees with eigh: eigenvalues within GROWTH_RTOL
    scale, ||V^T V - I||_2 <= GROWTH_RTOL and ||K V - V diag(w)||_2 <=
    GROWTH_RTOL scale."""
    assert np.abs(w - np.linalg.eigvalsh(K)).max() <= GROWTH_RTOL * scale
    assert np.linalg.norm(V.T @ V - np.eye(K.shape[0]), 2) <= GROWTH_RTOL
    assert np.linalg.norm(K @ V - V * w, 2) <= GROWTH_RTOL * scale


@pytest.mark.parametrize("rank", [3, 20, None])
def test_growing_kernel_matrix(rank):
    """Grow a Gram matrix X X^T row by row: low rank must stay cheap and exact."""
    rng = np.random.default_rng(0)
    T = 300
    X = rng.standard_normal((T, rank if rank else T)) / 3
    K = X @ X.T
    w, V, orders = _grow(K)
    w_ref = np.linalg.eigvalsh(K)
    scale = w_ref.max()
    np.testing.assert_allclose(w, w_ref, rtol=0, atol=GROWTH_RTOL * scale)
    np.testing.assert_allclose(V.T @ V, np.eye(T), rtol=0, atol=GROWTH_RTOL)
    np.testing.assert_allclose((V * w) @ V.T, K, rtol=0, atol=GROWTH_RTOL * scale)
    if rank is not None:
        # the m - rank zero eigenvalues are deflated: at most rank + 1 poles
        # and kappa enter the secular equation
        assert max(orders) <= rank + 2


def test_growing_rbf_kernel():
    """A full-rank rbf kernel grown point by point for 300 points: the
    eigensystem agrees with eigh at the end and stays orthogonal (the
    drift grows slowly, about linearly in the number of steps)."""
    K = _rbf_gram(np.random.default_rng(1).standard_normal((300, 5)), gamma=0.1)
    w, V, orders = _grow(K)
    _assert_grown_accurately(K, w, V, scale=np.linalg.eigvalsh(K).max())
    # numerically full rank in its leading part: little deflates early on
    assert orders[50] == 51


@pytest.mark.parametrize("flags", [_kernels.R1_FORCE_BISECTION, _kernels.R1_FORCE_EIG,
                                   _kernels.R1_TEST_BAD_DLAED4])
def test_growing_with_fallbacks(flags):
    """Every fallback path keeps a long growth accurate, too."""
    K = _rbf_gram(np.random.default_rng(6).standard_normal((120, 4)), gamma=0.2)
    w, V, _ = _grow(K, flags)
    _assert_grown_accurately(K, w, V, scale=np.abs(w).max())


def test_validation():
    with pytest.raises(ValueError, match="ascending"):
        kernels.bordered_update([2.0, 1.0], np.eye(2), [0.0, 0.0], 1.0)
    with pytest.raises(ValueError, match=r"evecs must have shape \(2, 2\)"):
        kernels.bordered_update([1.0, 2.0], np.eye(3), [0.0, 0.0], 1.0)
    with pytest.raises(ValueError, match=r"y must have shape \(2,\)"):
        kernels.bordered_update([1.0, 2.0], np.eye(2), [0.0], 1.0)
    with pytest.raises(ValueError, match="y must be finite"):
        kernels.bordered_update([1.0, 2.0], np.eye(2), [np.nan, 0.0], 1.0)
    with pytest.raises(ValueError, match="kappa must be a finite number"):
        kernels.bordered_update([1.0], np.eye(1), [0.0], np.inf)
    with pytest.raises(TypeError, match="kappa must be a real number"):
        kernels.bordered_update([1.0], np.eye(1), [0.0], "1")
    with pytest.raises(ValueError, match="_force must be one of"):
        kernels.bordered_update([1.0], np.eye(1), [0.0], 1.0, _force="nope")


# --- near the float64 maximum (issue 13) ---------------------------------------

@pytest.mark.parametrize("y_scale, kappa", [(1e308, 1.0), (1e200, 1e308), (1e150, -1e300)])
def test_near_the_float_maximum_is_finite_and_exact(y_scale, kappa):
    rng = np.random.default_rng(4)
    m = 5
    evals = np.sort(rng.standard_normal(m) * 1e307)
    Q = np.linalg.qr(rng.standard_normal((m, m)))[0]
    y = rng.uniform(-1, 1, m) * y_scale / 3
    s = 2.0 ** -600
    B = np.zeros((m + 1, m + 1))
    B[:m, :m] = (Q * (evals * s)) @ Q.T
    B[:m, m] = B[m, :m] = y * s
    B[m, m] = kappa * s
    exact = np.linalg.eigvalsh(B) / s
    w, V = kernels.bordered_update(evals, Q, y, kappa)
    scale = np.abs(exact).max()
    np.testing.assert_allclose(w, exact, rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(V.T @ V, np.eye(m + 1), rtol=0, atol=1e-13)


def test_beyond_the_float_maximum_is_a_value_error():
    with pytest.raises(ValueError, match="evals, y and kappa give updated eigenvalues"):
        kernels.bordered_update(np.array([1e308]), np.eye(1), np.array([1e308]), 1e308)


@pytest.mark.parametrize("m", [1, 30, 400])
def test_fortran_ordered_evecs_give_the_c_result_bit_for_bit(m):
    """evecs in Fortran order (scipy.linalg.eigh's) are copied into the
    bordered matrix's block by a blocked transpose, an exact copy: the
    C-ordered call's result bit for bit (400: the hierarchical product)."""
    rng = np.random.default_rng(m)
    evals, Q = _random_eigensystem(m, rng)
    y, kappa = rng.standard_normal(m), 0.4
    c, f = np.ascontiguousarray(Q), np.asfortranarray(Q)
    want = kernels.bordered_update(evals, c, y, kappa, _return_info=True)
    got = kernels.bordered_update(evals, f, y, kappa, _return_info=True)
    assert want[2]["n_structured"] == (m == 400)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(f, c)  # untouched
