"""Binding layer: the only place where the C kernels of ``src/`` meet Python.

The wrappers here take typed memoryviews of already validated arrays
(validation lives in :mod:`onlinepca_fast.kernels`), release the GIL around
the C call and turn a C status code into a Python exception.  Callers own
the outputs and the workspace, so a learner can allocate them once.
"""

cdef int _raise(Py_ssize_t status, str what) except -1:
    if status == OPF_ENOTCAPPED:
        raise ValueError(f"{what}: the vector is not in the capped simplex "
                         "(more than d entries at the cap or fewer than d "
                         "positive entries)")
    raise ValueError(f"{what}: invalid argument (status {status})")


def cap(const double[::1] x, Py_ssize_t d, bint log_domain,
        double[::1] out, double[::1] work):
    """Project x onto the capped simplex into out; return (n_capped, n_raised)."""
    cdef Py_ssize_t r, n_raised = 0
    with nogil:
        r = opf_cap(&x[0], x.shape[0], d, log_domain, &out[0], &work[0],
                    &n_raised)
    if r < 0:
        _raise(r, "cap")
    return r, n_raised


def decompose(const double[::1] w, Py_ssize_t d, double[::1] coef,
              Py_ssize_t[:, ::1] corners, double[::1] work,
              Py_ssize_t[::1] iwork):
    """Write every corner of Algorithm 2; return their number m.

    Returns -1 if there are more corners than the rows of `corners`.
    """
    cdef Py_ssize_t m
    with nogil:
        m = opf_decompose(&w[0], w.shape[0], d, 0.0, corners.shape[0],
                          &coef[0], &corners[0, 0], NULL, &work[0], &iwork[0])
    if m == OPF_ENOSPACE:
        return -1
    if m < 0:
        _raise(m, "decompose")
    return m


def select_corner(const double[::1] w, Py_ssize_t d, double u,
                  Py_ssize_t[::1] chosen, double[::1] work,
                  Py_ssize_t[::1] iwork):
    """Corner of Algorithm 2 drawn by the uniform u; return its position."""
    cdef Py_ssize_t j
    with nogil:
        j = opf_decompose(&w[0], w.shape[0], d, u, 0, NULL, NULL, &chosen[0],
                          &work[0], &iwork[0])
    if j < 0:
        _raise(j, "sample_corner")
    return j


def sample_systematic(const double[::1] w, Py_ssize_t d, double u,
                      Py_ssize_t[::1] chosen):
    """Systematic sample of d indices, inclusion probabilities d w_i/|w|."""
    cdef int r
    with nogil:
        r = opf_sample_systematic(&w[0], w.shape[0], d, u, &chosen[0])
    if r < 0:
        _raise(r, "sample_corner")


# --- rank_one_update (begin) ---
# --- rank_one_update (end) ---
