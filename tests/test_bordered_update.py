"""Tests of kernels.bordered_update: the eigensystem of [[A, y], [y^T, kappa]]
grown from that of A by two rank-one updates (src/bordered_update.c).

Compared with numpy.linalg.eigh of the formed matrix (reference), on single
steps and on whole growing kernel matrices, including low-rank ones whose
zero eigenvalues must be deflated.

Tolerances
----------
Each step is two backward-stable rank-one updates, so eigenvalues are exact
for a matrix within a few ``eps |A|`` of the bordered one: EIG_RTOL = 1e-13
relative to the largest eigenvalue.  Orthogonality ORTH_ATOL = 1e-13 per
step; over a growth of 300 steps errors accumulate (about linearly), hence
GROWTH_RTOL = 1e-12.
"""

import numpy as np
import pytest

from onlinepca_fast import kernels, reference

EIG_RTOL = 1e-13
ORTH_ATOL = 1e-13
GROWTH_RTOL = 1e-12


def _random_eigensystem(m, rng, spectrum="random"):
    if spectrum == "ties":
        evals = np.sort(rng.integers(0, 3, m).astype(np.float64))
    elif spectrum == "zeros":
        evals = np.sort(np.concatenate([np.zeros(m - m // 3), rng.random(m // 3)]))
    else:
        evals = np.sort(rng.standard_normal(m))
    Q, _ = np.linalg.qr(rng.standard_normal((m, m)))
    return evals, Q


@pytest.mark.parametrize("spectrum", ["random", "ties", "zeros"])
@pytest.mark.parametrize("m", [1, 2, 5, 40])
def test_one_step_matches_eigh(m, spectrum):
    rng = np.random.default_rng(m)
    evals, Q = _random_eigensystem(m, rng, spectrum)
    y, kappa = rng.standard_normal(m), float(rng.standard_normal())
    w, V = kernels.bordered_update(evals, Q, y, kappa)
    w_ref, _ = reference.bordered_update(evals, Q, y, kappa)
    A = np.block([[(Q * evals) @ Q.T, y[:, None]], [y[None, :], np.array([[kappa]])]])
    scale = np.abs(w_ref).max()
    np.testing.assert_allclose(w, w_ref, rtol=0, atol=EIG_RTOL * scale)
    assert np.all(np.diff(w) >= 0)
    np.testing.assert_allclose(V.T @ V, np.eye(m + 1), rtol=0, atol=ORTH_ATOL)
    np.testing.assert_allclose((V * w) @ V.T, A, rtol=0, atol=EIG_RTOL * scale)


def test_empty_and_zero_border():
    w, V = kernels.bordered_update(np.empty(0), np.empty((0, 0)), np.empty(0), 2.5)
    np.testing.assert_array_equal(w, [2.5])
    np.testing.assert_array_equal(V, [[1.0]])
    # y = 0: kappa is inserted in order, nothing else changes
    w, V = kernels.bordered_update([1.0, 3.0], np.eye(2), [0.0, 0.0], 2.0)
    np.testing.assert_array_equal(w, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.abs(V), [[1, 0, 0], [0, 0, 1], [0, 1, 0]])


@pytest.mark.parametrize("rank", [3, 20, None])
def test_growing_kernel_matrix(rank):
    """Grow a Gram matrix X X^T row by row: low rank must stay cheap and exact."""
    rng = np.random.default_rng(0)
    T = 300
    X = rng.standard_normal((T, rank if rank else T)) / 3
    K = X @ X.T
    w, V = np.empty(0), np.empty((0, 0))
    orders = []
    ev = np.zeros(T + 1)
    Q = np.zeros((T + 1, T + 1))
    for m in range(T):
        info = kernels._kernels.bordered_update(ev, Q, m, np.ascontiguousarray(K[:m, m]),
                                                float(K[m, m]))
        orders.append(info["order"])
    w, V = ev[:T], Q[:T, :T]
    w_ref = np.linalg.eigvalsh(K)
    scale = w_ref.max()
    np.testing.assert_allclose(w, w_ref, rtol=0, atol=GROWTH_RTOL * scale)
    np.testing.assert_allclose(V.T @ V, np.eye(T), rtol=0, atol=GROWTH_RTOL)
    np.testing.assert_allclose((V * w) @ V.T, K, rtol=0, atol=GROWTH_RTOL * scale)
    if rank is not None:
        # the m - rank zero eigenvalues are deflated: at most rank + 1 poles
        # and kappa enter the secular equation
        assert max(orders) <= rank + 2


def test_validation():
    with pytest.raises(ValueError, match="ascending"):
        kernels.bordered_update([2.0, 1.0], np.eye(2), [0.0, 0.0], 1.0)
    with pytest.raises(ValueError, match=r"evecs must have shape \(2, 2\)"):
        kernels.bordered_update([1.0, 2.0], np.eye(3), [0.0, 0.0], 1.0)
    with pytest.raises(ValueError, match=r"y must have shape \(2,\)"):
        kernels.bordered_update([1.0, 2.0], np.eye(2), [0.0], 1.0)
    with pytest.raises(ValueError, match="y must be finite"):
        kernels.bordered_update([1.0, 2.0], np.eye(2), [np.nan, 0.0], 1.0)
    with pytest.raises(ValueError, match="kappa must be finite"):
        kernels.bordered_update([1.0], np.eye(1), [0.0], np.inf)
    with pytest.raises(TypeError, match="kappa must be a real number"):
        kernels.bordered_update([1.0], np.eye(1), [0.0], "1")
