# Testing stand-ins of the LAPACK routines (included by _kernels.pyx): the
# tests force every fallback path of the eigen-updates through these.

#: Testing switches for RankOneUpdater.update(..., _flags=...) and
#: bordered_update(..., _flags=...): every root by bisection; the block by
#: dsyevr; a dlaed4 that reports failure (info = 1) on odd roots and
#: returns a root outside its interval (info = 0) on roots 2 mod 4, to
#: exercise the checks that catch both; a dsyevr that always fails (with
#: R1_FORCE_EIG: the whole update fails, to test that nothing is written).
R1_FORCE_BISECTION = OPF_FORCE_BISECTION
R1_FORCE_EIG = OPF_FORCE_EIG
cdef enum:
    _TEST_BAD_DLAED4 = 1 << 8
    _TEST_FAILING_DSYEVR = 1 << 9
R1_TEST_BAD_DLAED4 = _TEST_BAD_DLAED4
R1_TEST_FAILING_DSYEVR = _TEST_FAILING_DSYEVR

cdef void _bad_dlaed4(int *n, int *i, double *d, double *z, double *delta,
                      double *rho, double *dlam, int *info) noexcept nogil:
    dlaed4(n, i, d, z, delta, rho, dlam, info)
    if n[0] > 2 and i[0] % 2 == 0:  # 1-based: odd 0-based roots
        info[0] = 1
    elif n[0] > 2 and i[0] % 4 == 3 and i[0] < n[0]:
        dlam[0] = d[i[0]] + 1.0  # beyond the next pole
        for k in range(n[0]):
            delta[k] = d[k] - dlam[0]


cdef void _failing_dsyevr(char *jobz, char *range_, char *uplo, int *n,
                          double *a, int *lda, double *vl, double *vu,
                          int *il, int *iu, double *abstol, int *m,
                          double *w, double *z, int *ldz, int *isuppz,
                          double *work, int *lwork, int *iwork,
                          int *liwork, int *info) noexcept nogil:
    info[0] = 1


cdef int _test_fns(opf_lapack *fns, int flags) except -1:
    """Swap in the testing stand-ins the flags ask for; return the C flags."""
    if flags & ~(OPF_FORCE_BISECTION | OPF_FORCE_EIG | _TEST_BAD_DLAED4
                 | _TEST_FAILING_DSYEVR):
        raise ValueError(f"_flags: unknown bits in {flags}")
    if flags & _TEST_BAD_DLAED4:
        fns.dlaed4 = _bad_dlaed4
    if flags & _TEST_FAILING_DSYEVR:
        fns.dsyevr = _failing_dsyevr
    return flags & ~(_TEST_BAD_DLAED4 | _TEST_FAILING_DSYEVR)


def _interrupt_at_poll(long k):
    """Testing: raise SIGINT at the k-th poll (``src/interrupt.h``) of the
    armed trial loops from now on (0: off); returns nothing."""
    opf_interrupt_test_countdown(k)


def _interrupt_site():
    """Testing: the poll site that raised the SIGINT (-1: none yet)."""
    return opf_interrupt_test_site()


def _eig_phased(double[:, ::1] a not None, bint phased=True):
    """Testing: (w, Z) of the symmetric matrix `a` (destroyed) by dsyevr in
    its three phases (``src/phased_eig.h``), or (phased=False) by one
    dsyevr call as the learners made it before; Z's columns are the
    eigenvectors."""
    cdef int n = a.shape[0], st
    if n < 1 or a.shape[1] != n:
        raise ValueError("a must be square")
    cdef opf_lapack fns = _LAPACK
    if not phased:
        fns.dsytrd = NULL
    w = np.empty(n)
    z = np.empty((n, n))
    work = np.empty(26 * n)
    save = np.empty((n, n))
    iwork = np.empty(12 * n, dtype=np.intc)
    cdef double[::1] w_v = w, work_v = work
    cdef double[:, ::1] z_v = z, save_v = save
    cdef int[::1] iw_v = iwork
    with nogil:
        st = opf_eig_phased(n, &a[0, 0], &w_v[0], &z_v[0, 0], &work_v[0],
                            &iw_v[2 * n], &iw_v[0], &save_v[0, 0], &fns, 0)
    if st != OPF_OK:
        raise status_error(st, "eig")
    return w, z.T


def _master3_run(double[:, ::1] h not None):
    """Testing: the master over three learners of ``src/limit.c``
    (``opf_master3_commit``) on given expected losses (T x 3); returns (its
    expected losses, its state)."""
    cdef Py_ssize_t T = h.shape[0], t
    if h.shape[1] != 3:
        raise ValueError("h must have 3 columns")
    state = np.empty(OPF_MASTER3_LEN)
    out = np.empty(T)
    cdef double[::1] m = state
    cdef double[::1] o = out
    opf_master3_init(&m[0])
    for t in range(T):
        o[t] = opf_master3_commit(&m[0], &h[t, 0])
    return out, state


def leader_ell(Py_ssize_t n, Py_ssize_t k):
    """The size of the sketch of eta="auto"'s Follow the Leader
    (``opf_leader_ell``, ``src/limit.h``): min(n, 4k)."""
    return opf_leader_ell(n, k)


def _master_run(const double[::1] h_a not None, const double[::1] h_b not None):
    """Testing: the master of ``src/limit.c`` (``opf_master_commit``) on
    given expected losses of its two learners; returns (its expected
    losses, its state [L_B - L_A, scale, Delta^M, weight of A])."""
    cdef Py_ssize_t T = h_a.shape[0], t
    if h_b.shape[0] != T:
        raise ValueError("h_a and h_b must have the same length")
    state = np.empty(OPF_MASTER_LEN)
    out = np.empty(T)
    cdef double[::1] m = state
    cdef double[::1] o = out
    opf_master_init(&m[0])
    for t in range(T):
        o[t] = opf_master_commit(&m[0], h_a[t], h_b[t])
    return out, state
