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
# --- rank_one_update (end) ---
