# Declarations of the C kernels in ../src.  Nothing but `cdef extern` blocks:
# the only place C meets Python is _kernels.pyx.

cdef extern from "cap.h" nogil:
    int OPF_OK
    int OPF_EINVAL
    int OPF_ENOTCAPPED
    int OPF_ENOSPACE
    Py_ssize_t opf_cap(const double *x, Py_ssize_t n, Py_ssize_t d,
                       int log_domain, double *out, double *work,
                       Py_ssize_t *n_raised)

cdef extern from "decompose.h" nogil:
    Py_ssize_t opf_decompose(const double *w, Py_ssize_t n, Py_ssize_t d,
                             double select, Py_ssize_t capacity,
                             double *coef,
                             Py_ssize_t *corners, Py_ssize_t *chosen,
                             double *work, Py_ssize_t *iwork)

cdef extern from "systematic.h" nogil:
    int opf_sample_systematic(const double *w, Py_ssize_t n, Py_ssize_t d,
                              double u, Py_ssize_t *chosen)

# --- rank_one_update declarations (begin) ---
# --- rank_one_update declarations (end) ---
