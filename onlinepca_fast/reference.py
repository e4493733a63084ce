"""Plain NumPy reference implementations.

Every compiled kernel and learner of :mod:`onlinepca_fast` has a
straightforward NumPy counterpart here: sort-based capping, the loop of
Algorithm 2 of Warmuth & Kuzmin (2008), ``numpy.linalg.eigh`` for eigen
updates.  They are the oracle in the tests and the baseline in the
benchmarks; they favour obviousness over speed.
"""

import numpy as np

# --- capping, decomposition and sampling (begin) ---
# --- capping, decomposition and sampling (end) ---

# --- rank_one_update (begin) ---
def rank_one_update(evals, evecs, rho, x):
    """Eigensystem of ``evecs @ diag(evals) @ evecs.T + rho * outer(x, x)``.

    Forms the matrix and calls ``numpy.linalg.eigh``: O(n^3).  Returns the
    ascending eigenvalues and the eigenvectors in the columns, like
    :func:`onlinepca_fast.kernels.rank_one_update`.
    """
    evals = np.asarray(evals, dtype=np.float64)
    evecs = np.asarray(evecs, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    a = (evecs * evals) @ evecs.T + rho * np.outer(x, x)
    return np.linalg.eigh(0.5 * (a + a.T))
# --- rank_one_update (end) ---
