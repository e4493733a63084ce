"""Binding layer: the only place where the C kernels of ``src/`` meet Python.

The wrappers take typed memoryviews of arrays the Python layer has already
validated (:mod:`onlinepca_fast.kernels`, the learners), check that every
buffer is large enough for what the C code will touch, release the GIL
around the C call, and turn a negative C status into an exception through
one mapper, :func:`status_error`.  Callers own the outputs and the
workspace, so a learner allocates them once.

BLAS/LAPACK reach the C code as function pointers taken from scipy's
Cython exports (``scipy.linalg.cython_blas`` / ``cython_lapack``), so this
extension links no BLAS of its own.
"""

from scipy.linalg.cython_blas cimport dgemm, dgemv
from scipy.linalg.cython_lapack cimport dlaed4, dormtr, dstemr, dsyevr, dsytrd
from cpython.exc cimport PyErr_CheckSignals
from libc.math cimport INFINITY

import threading

import numpy as np
from numpy.linalg import LinAlgError

# --- statuses ------------------------------------------------------------------

#: Statuses that mean a numerical method failed (not a bad argument).
_NUMERICAL_FAILURES = frozenset([OPF_EFAILED, OPF_EEIG])

STATUS_EFAILED = OPF_EFAILED
STATUS_ECAPACITY = OPF_ECAPACITY


class TrialError(ValueError):
    """A compiled trial loop stopped at a trial that failed.

    The trials before it are done (``trials_done`` of them, their losses
    written) and the failing one changed nothing; ``status`` is the C
    status.  The learners' batch runner (``learners/_batch.py``) reports it
    as a ``RuntimeError`` naming the trial.
    """


class TrialLinAlgError(TrialError, LinAlgError):
    """A :class:`TrialError` whose numerical method failed (an eigen-update
    whose fallbacks all failed, dsyevr)."""


def status_error(int status, str what, trials_done=None):
    """The exception for the C status code `status` of the routine `what`.

    ``LinAlgError`` when a numerical method failed (an eigen-update whose
    fallbacks all failed, dsyevr), ``ValueError`` for an argument the C code
    rejected; from the compiled trial loops (`trials_done` given, the
    trials completed before the failing one) their subclasses
    :class:`TrialLinAlgError` and :class:`TrialError`.  The exception
    carries ``status`` and ``trials_done``.
    """
    numerical = status in _NUMERICAL_FAILURES
    if trials_done is None:
        cls = LinAlgError if numerical else ValueError
    else:
        cls = TrialLinAlgError if numerical else TrialError
    err = cls(f"{what}: {opf_strerror(status).decode()}")
    err.status = status
    err.trials_done = trials_done
    return err


cdef inline int _check(Py_ssize_t status, str what) except -1:
    if status < 0:
        raise status_error(<int>status, what)
    return 0


include "_interrupts.pxi"


cdef int _need(Py_ssize_t have, Py_ssize_t need, str name) except -1:
    if have < need:
        raise ValueError(f"{name} has {have} entries, needs at least {need}")
    return 0


# --- the BLAS/LAPACK table and the settings that travel with it ---------------

# BLAS/LAPACK for every C routine, from scipy (no BLAS of our own), with
# the default settings; a caller's own are in its Context (_context.pxi).
cdef opf_lapack _LAPACK
_LAPACK.dgemm = dgemm
_LAPACK.dgemv = dgemv
_LAPACK.dlaed4 = dlaed4
_LAPACK.dsyevr = dsyevr
_LAPACK.dsytrd = dsytrd  # dsyevr's phases (src/phased_eig.h)
_LAPACK.dstemr = dstemr
_LAPACK.dormtr = dormtr
_LAPACK.tune = opf_tuning_default()
_LAPACK.n_structured = NULL
_LAPACK.pool = NULL  # an updater's own threads are set per call


include "_context.pxi"


# --- capping, exp, range -------------------------------------------------------

def cap(const double[::1] x, Py_ssize_t d, bint log_domain,
        double[::1] out, double[::1] work):
    """Project x onto the capped simplex into out; return (n_capped, n_raised)."""
    cdef Py_ssize_t r, n_raised = 0, n = x.shape[0]
    if not 1 <= d <= n:
        raise ValueError(f"d must satisfy 1 <= d <= {n}, got {d}")
    _need(out.shape[0], n, "out")
    _need(work.shape[0], 3 * n, "work")
    cdef int level = (<Context>_current.get()).fns.tune.cpu_level
    with nogil:
        r = opf_cap_ex(&x[0], n, d, log_domain, &out[0], NULL, &work[0],
                       &n_raised, NULL, level)
    _check(r, "cap")
    return r, n_raised


def cap_hinted(const double[::1] x, Py_ssize_t d, double lo, double hi,
               double xmax, double[::1] out, double[::1] out_lin,
               double[::1] work, const double[::1] step=None, double eta=0.0):
    """cap_log with a bracket [lo, hi] for the threshold (src/cap.h), of x,
    or (step given, xmax finite) of x - eta * step.

    Returns (n_capped, shift, bracketed, ymin); ymin = min(x - eta * step)
    (NaN without step).  For tests and benchmarks: the learners pass their
    bracket from C.
    """
    cdef Py_ssize_t r, n_raised = 0, n = x.shape[0]
    cdef opf_cap_hint hint
    cdef int level = (<Context>_current.get()).fns.tune.cpu_level
    if not 1 <= d <= n:
        raise ValueError(f"d must satisfy 1 <= d <= {n}, got {d}")
    _need(out.shape[0], n, "out")
    _need(out_lin.shape[0], n, "out_lin")
    _need(work.shape[0], 3 * n, "work")
    hint.lo = lo
    hint.hi = hi
    hint.xmax = xmax
    hint.step = NULL
    hint.eta = eta
    hint.ymin = float("nan")
    if step is not None:
        if step.shape[0] != n:
            raise ValueError("step must have the length of x")
        if not (xmax == xmax and abs(xmax) != float("inf")):
            raise ValueError("step needs a finite upper bound xmax of x - eta * step")
        hint.step = &step[0]
    with nogil:
        r = opf_cap_ex(&x[0], n, d, 1, &out[0], &out_lin[0], &work[0],
                       &n_raised, &hint, level)
    _check(r, "cap")
    return r, hint.shift, bool(hint.bracketed), hint.ymin


def limit_state(Py_ssize_t n, Py_ssize_t k):
    """The initial state of eta="auto"'s master (``src/limit.h``): both
    learners' losses 0, weight 1/2, the limit learner with no direction."""
    if not 1 <= k < n:
        raise ValueError(f"limit_state: need 1 <= k < n, got k={k}, n={n}")
    out = np.empty(OPF_LIMIT_LEN(n, k))
    cdef double[::1] v = out
    opf_limit_init(&v[0], n, k)
    return out


def master_state():
    """The initial state of a master over a learner and its limit
    (``src/limit.h``; OnlineKernelPCA's eta="auto")."""
    out = np.empty(OPF_MASTER_LEN)
    cdef double[::1] v = out
    opf_master_init(&v[0])
    return out


def value_range(x):
    """(min, max) of the float64 array x (any shape, C-contiguous) in one
    pass; (nan, nan) if it holds a NaN."""
    cdef const double[::1] flat = x.reshape(-1)
    cdef double lo = 0.0, hi = 0.0
    if flat.shape[0] == 0:
        raise ValueError("value_range of an empty array")
    with nogil:
        opf_range(&flat[0], flat.shape[0], &lo, &hi)
    return lo, hi


def exp_shifted(const double[::1] x, double shift, double[::1] out):
    """out = exp(x - shift) for x <= shift, by src/vexp.c, in the version
    the current context's ``cpu_level`` picks (for tests)."""
    cdef int level = (<Context>_current.get()).fns.tune.cpu_level
    _need(out.shape[0], x.shape[0], "out")
    if x.shape[0] == 0:
        return
    with nogil:
        opf_exp_shifted(&x[0], x.shape[0], shift, &out[0], level)


# --- decomposition and sampling ------------------------------------------------

def decompose(const double[::1] w, Py_ssize_t d, double[::1] coef,
              Py_ssize_t[:, ::1] corners, double[::1] work,
              Py_ssize_t[::1] iwork):
    """Write every corner of Algorithm 2; return their number m.

    Returns -1 if there are more corners than the rows of `corners`.
    """
    cdef Py_ssize_t m, n = w.shape[0]
    if not 1 <= d <= n:
        raise ValueError(f"d must satisfy 1 <= d <= {n}, got {d}")
    if corners.shape[0] < 1 or corners.shape[1] != d:
        raise ValueError(f"corners must have shape (capacity >= 1, {d})")
    _need(coef.shape[0], corners.shape[0], "coef")
    _need(work.shape[0], n, "work")
    _need(iwork.shape[0], 3 * n, "iwork")
    with nogil:
        m = opf_decompose(&w[0], n, d, 0.0, corners.shape[0], &coef[0],
                          &corners[0, 0], NULL, &work[0], &iwork[0])
    if m == OPF_ENOSPACE:
        return -1
    _check(m, "decompose")
    return m


def select_corner(const double[::1] w, Py_ssize_t d, double u,
                  Py_ssize_t[::1] chosen, double[::1] work,
                  Py_ssize_t[::1] iwork):
    """Corner of Algorithm 2 drawn by the uniform u; return its position."""
    cdef Py_ssize_t j, n = w.shape[0]
    if not 1 <= d <= n:
        raise ValueError(f"d must satisfy 1 <= d <= {n}, got {d}")
    _need(chosen.shape[0], d, "chosen")
    _need(work.shape[0], n, "work")
    _need(iwork.shape[0], 3 * n, "iwork")
    with nogil:
        j = opf_decompose(&w[0], n, d, u, 0, NULL, NULL, &chosen[0],
                          &work[0], &iwork[0])
    _check(j, "sample_corner")
    return j


def sample_systematic(const double[::1] w, Py_ssize_t d, double u,
                      Py_ssize_t[::1] chosen, double[::1] work):
    """Systematic sample of d indices, inclusion probabilities d w_i/|w|."""
    cdef int r
    cdef Py_ssize_t n = w.shape[0]
    if not 1 <= d <= n:
        raise ValueError(f"d must satisfy 1 <= d <= {n}, got {d}")
    _need(chosen.shape[0], d, "chosen")
    _need(work.shape[0], n, "work")
    with nogil:
        r = opf_sample_systematic(&w[0], n, d, u, &chosen[0], &work[0])
    _check(r, "sample_corner")


def sample_systematic_sum(const double[::1] w, Py_ssize_t d, double u,
                          const double[::1] v, Py_ssize_t[::1] scratch):
    """(sum of v over the systematic sample, sum of w * v); the list is
    not formed."""
    cdef int r
    cdef Py_ssize_t n = w.shape[0]
    cdef double vsum = 0.0, wv = 0.0
    if not 1 <= d <= n:
        raise ValueError(f"d must satisfy 1 <= d <= {n}, got {d}")
    _need(v.shape[0], n, "v")
    _need(scratch.shape[0], d, "scratch")
    with nogil:
        r = opf_sample_systematic_sum(&w[0], n, d, u, &v[0], &vsum, &wv,
                                      &scratch[0])
    _check(r, "sample_corner")
    return vsum, wv


# --- eigen-updates -------------------------------------------------------------

#: Deflation tolerance factor: tol = R1_DEFLATION_FACTOR * eps *
#: max(max|evals|, |rho| |x|^2) (LAPACK dlaed2/dlaed8 use 8).
R1_DEFLATION_FACTOR = OPF_R1_DEFLATION_FACTOR


def transpose_into(const double[:, :] a not None, double[:, :] out not None):
    """out[j, i] = a[i, j] for the m x n matrix a (out n x m; the rows of
    both contiguous, their starts strided), by cache blocks with the GIL
    released: how the eigen-updates take a Fortran-ordered matrix (``a``
    its transpose, viewed in C order) to C order, several times faster than
    NumPy's copy."""
    cdef Py_ssize_t m = a.shape[0], n = a.shape[1]
    if out.shape[0] != n or out.shape[1] != m:
        raise ValueError(f"out must be {n} x {m}, got {out.shape[0]} x {out.shape[1]}")
    if m == 0 or n == 0:
        return
    if (a.strides[1] != sizeof(double) or out.strides[1] != sizeof(double)
            or a.strides[0] % sizeof(double) or out.strides[0] % sizeof(double)):
        raise ValueError("transpose_into: the rows of a and out must be contiguous")
    with nogil:
        opf_transpose(m, n, &a[0, 0], a.strides[0] // sizeof(double), &out[0, 0],
                      out.strides[0] // sizeof(double))


include "_test_hooks.pxi"


cdef inline void _enter(object lock, str what) except *:
    """Take an object's lock without waiting: a second thread calling into
    the same stateful object gets a RuntimeError at once (its workspace and
    state arrays would be overwritten under the first call)."""
    if not lock.acquire(False):
        raise RuntimeError(f"{what} is already running in another thread on this object; "
                           "it is not thread-safe: use one object per thread or "
                           "serialize the calls (nothing was changed)")


cdef double[:, ::1] _c_matrix(object a, str name) except *:
    """`a` as a writable C-contiguous float64 matrix view, or an error that
    names it (Cython's own does not)."""
    cdef double[:, ::1] view
    if a is None:
        raise TypeError(f"{name} must be an array, got None")
    try:
        view = a
    except (ValueError, TypeError, BufferError) as err:
        raise type(err)(f"{name} must be a writable C-contiguous float64 matrix "
                        f"({err}); np.ascontiguousarray({name}) converts one once, "
                        f"for example the Fortran-ordered result of scipy.linalg.eigh") from None
    return view


cdef class RankOneUpdater:
    # (the first line is the constructor's signature for inspect, help() and
    # numpydoc: a type's __text_signature__; Python strips it from __doc__)
    """RankOneUpdater(n, *, product="auto", n_threads=1)
--

In-place eigen-update ``Q diag(d) Q^T + rho x x^T`` of order n.

    Holds all workspace (``2 n^2 + O(n)`` doubles) so that :meth:`update`
    allocates nothing; a learner makes one and calls it every trial.  Not
    safe to share between threads: use one updater per thread.  A call
    while another thread's call on the same updater runs raises a
    ``RuntimeError`` at once and changes nothing.

    Layout: ``evecs`` is C-contiguous (n, n) and its *columns* are the
    eigenvectors, ``evals`` ascending.  The method is Gu & Eisenstat's
    (see ``src/rank_one_update.c``); deflation tolerance
    ``R1_DEFLATION_FACTOR * eps * max(max|evals|, |rho| |x|^2)``.

    Parameters
    ----------
    n : int
        Order of the eigensystems updated.
    product : {"auto", "dense", "structured"}, default="auto"
        How the new eigenvectors are formed from the old ones: "auto" by
        the hierarchical product from ``STRUCTURED_PRODUCT_MIN``
        non-deflated eigenvalues on and one GEMM below; "dense" always one
        GEMM; "structured" hierarchical wherever it applies (from twice
        its leaf size on).  The eigenvectors agree to a few ulps either
        way; the setting belongs to this updater alone (also as the
        attribute :attr:`product`).
    n_threads : int, default=1
        Threads of this updater's own (made once, here): the hierarchical
        product's rows and the secular equation's roots are split over
        them, with the same results bit for bit as on one thread.  Give
        the BLAS one thread meanwhile (it is called from each of them).

    Attributes
    ----------
    n : int
    n_threads : int
        The threads an update uses, this one included (fewer than asked
        if the system could not make them, or without POSIX threads).
    n_updates : int
        Successful calls.
    n_dlaed4_failures : int
        Roots on which dlaed4 reported failure or returned a root outside
        its interlacing interval.
    n_bisection_roots : int
        Roots solved by bisection instead (after a dlaed4 failure, or
        forced).
    n_eig_fallbacks : int
        Calls whose non-deflated block was solved by ``dsyevr`` (after a
        bisection failure, or forced).
    n_structured_products : int
        Calls whose eigenvector product was hierarchical (from
        ``STRUCTURED_PRODUCT_MIN`` non-deflated eigenvalues on).
    n_product_fallbacks : int
        Calls whose eigenvector product the hierarchical method declined
        (a compression missed its tolerance or check): one GEMM instead.
    """
    cdef readonly Py_ssize_t n
    cdef readonly long long n_updates
    cdef readonly long long n_dlaed4_failures
    cdef readonly long long n_bisection_roots
    cdef readonly long long n_eig_fallbacks
    cdef readonly long long n_product_fallbacks
    cdef readonly long long n_structured_products
    cdef object _work_arr
    cdef object _iwork_arr
    cdef double *_work
    cdef int *_iwork
    cdef opf_r1_info _last
    cdef object _lock
    cdef Context _ctx
    cdef opf_pool *_pool
    cdef readonly int n_threads

    def __cinit__(self, *args, **kwargs):
        self._lock = threading.Lock()
        self._pool = NULL

    def __dealloc__(self):
        opf_pool_destroy(self._pool)

    def __init__(self, Py_ssize_t n, *, product="auto", n_threads=1):
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        if (not isinstance(n_threads, int) or isinstance(n_threads, bool)
                or not 1 <= n_threads <= 256):
            raise ValueError(f"n_threads must be an int in [1, 256], got {n_threads!r}")
        self._ctx = _context_for(product)
        if self._pool == NULL and n_threads > 1:
            self._pool = opf_pool_create(n_threads)
        self.n_threads = opf_pool_size(self._pool)
        cdef double[::1] work = np.empty(opf_r1_work_len(n))
        cdef int[::1] iwork = np.empty(opf_r1_iwork_len(n), dtype=np.intc)
        self.n = n
        self._work_arr = work.base
        self._iwork_arr = iwork.base
        self._work = &work[0]
        self._iwork = &iwork[0]

    @property
    def product(self):
        """"auto", "dense" or "structured": how this updater forms the new
        eigenvectors (see the class's parameters); settable."""
        return self._ctx.product

    @product.setter
    def product(self, value):
        cdef Context ctx = _current.get()
        if value == "auto":
            self._ctx = self._ctx.replace(product=ctx.product)
        else:
            self._ctx = self._ctx.replace(product=value)

    def update(self, double[::1] evals not None, evecs not None,
               double rho, const double[::1] x not None, *, int _flags=0):
        """Overwrite evals (n,) and evecs (n, n) with the updated eigensystem.

        Parameters
        ----------
        evals : ndarray of shape (n,), float64
            Ascending eigenvalues; overwritten.
        evecs : ndarray of shape (n, n), float64, C-contiguous
            Eigenvectors in the columns; overwritten.
        rho : float
            Weight of the rank-one term.
        x : ndarray of shape (n,), float64
            The vector of the rank-one term.
        _flags : int, default=0
            Testing only: forces the fallback paths.

        Raises
        ------
        ValueError, numpy.linalg.LinAlgError, RuntimeError
            Wrong shapes or an argument the C code rejects; every method for
            the secular equation failed; another thread's call is running.
            The arrays are then left unchanged.
        """
        cdef Py_ssize_t n = self.n
        cdef int status
        # a reference for the call's duration: the counter the table points
        # to lives in the context, which the product's setter may replace
        cdef Context ctx = self._ctx
        cdef opf_lapack fns = ctx.fns
        cdef double[:, ::1] q = _c_matrix(evecs, "evecs")
        fns.pool = self._pool
        if evals.shape[0] != n:
            raise ValueError(f"evals must have shape ({n},), got "
                             f"({evals.shape[0]},)")
        if q.shape[0] != n or q.shape[1] != n:
            raise ValueError(f"evecs must have shape ({n}, {n}), got "
                             f"({q.shape[0]}, {q.shape[1]})")
        if x.shape[0] != n:
            raise ValueError(f"x must have shape ({n},), got ({x.shape[0]},)")
        _flags = _test_fns(&fns, _flags)
        _enter(self._lock, "RankOneUpdater.update")
        try:
            with nogil:
                status = opf_rank_one_update(n, &evals[0], &q[0, 0], n, rho,
                                             &x[0], self._work, self._iwork, &fns,
                                             _flags, &self._last)
        finally:
            self._lock.release()
        _check(status, "rank_one_update")
        self.n_updates += 1
        self.n_dlaed4_failures += self._last.n_dlaed4_failures
        self.n_bisection_roots += self._last.n_bisection
        self.n_eig_fallbacks += self._last.n_eig
        self.n_product_fallbacks += self._last.n_product_fallbacks
        self.n_structured_products += self._last.n_structured

    @property
    def n_fallbacks(self):
        """Roots solved by bisection plus blocks solved by dsyevr."""
        return self.n_bisection_roots + self.n_eig_fallbacks

    @property
    def last_info(self):
        """What the last call did, as a dict (zeros for a no-op)."""
        return {"m": self._last.m,
                "n_reflectors": self._last.n_reflectors,
                "n_rotations": self._last.n_rotations,
                "n_dlaed4_failures": self._last.n_dlaed4_failures,
                "n_bisection": self._last.n_bisection,
                "n_eig": self._last.n_eig,
                "n_structured": self._last.n_structured,
                "n_product_fallbacks": self._last.n_product_fallbacks}

    def __reduce__(self):
        return (_rebuild_updater,
                (self.n, self.n_updates, self.n_dlaed4_failures,
                 self.n_bisection_roots, self.n_eig_fallbacks,
                 self.n_product_fallbacks, self.product, self.n_threads))


def _rebuild_updater(n, n_updates, n_dlaed4_failures, n_bisection_roots,
                     n_eig_fallbacks, n_product_fallbacks=0, product="auto",
                     n_threads=1):
    cdef RankOneUpdater u = RankOneUpdater(n, product=product, n_threads=n_threads)
    u.n_updates = n_updates
    u.n_dlaed4_failures = n_dlaed4_failures
    u.n_bisection_roots = n_bisection_roots
    u.n_eig_fallbacks = n_eig_fallbacks
    u.n_product_fallbacks = n_product_fallbacks
    return u


include "_product.pxi"


def bordered_update(double[::1] evals not None, double[:, ::1] evecs not None,
                    Py_ssize_t m, const double[::1] y not None, double kappa,
                    *, product="auto", int _flags=0):
    """Grow, in place, the eigensystem of order m to that of the bordered matrix.

    ``evals[:m]`` (ascending) and the leading m x m block of ``evecs``
    (columns are eigenvectors, leading dimension ``evecs.shape[1]``) describe
    A; on return ``evals[:m+1]`` and the leading (m+1) x (m+1) block describe
    ``[[A, y], [y^T, kappa]]``.  The method is one arrowhead eigenproblem
    (``src/bordered_update.c``): ``z = Q^T y``, deflation, one secular
    equation for the non-deflated block, one GEMM.  Returns a dict: the
    order of that secular equation (``order``: non-deflated eigenvalues + 1,
    0 if all deflated), the deflating reflectors and rotations, dlaed4
    failures, bisection roots, dsyevr blocks and ``n_fallbacks`` (the last
    two added).  ``product``: as :class:`RankOneUpdater`'s.  ``_flags``
    (testing only): the ``R1_FORCE_*`` and ``R1_TEST_*`` switches.  On
    error the arrays are unchanged.
    """
    cdef Py_ssize_t ldq = evecs.shape[1]
    cdef const double *yp = NULL
    cdef opf_bu_info info
    cdef Context ctx = _context_for(product)
    cdef opf_lapack fns = ctx.fns
    cdef int st
    if m < 0 or evals.shape[0] < m + 1 or evecs.shape[0] < m + 1 or ldq < m + 1:
        raise ValueError(f"evals and evecs must have room for order {m + 1}, got "
                         f"shapes ({evals.shape[0]},) and ({evecs.shape[0]}, {ldq})")
    if y.shape[0] < m:
        raise ValueError(f"y must have {m} entries, got {y.shape[0]}")
    if m > 0:
        yp = &y[0]
    _flags = _test_fns(&fns, _flags)
    work = np.empty(opf_bu_work_len(m + 1))
    iwork = np.empty(opf_bu_iwork_len(m + 1), dtype=np.intc)
    cdef double[::1] work_v = work
    cdef int[::1] iwork_v = iwork
    with nogil:
        st = opf_bordered_update(m, &evals[0], &evecs[0, 0], ldq, yp, kappa,
                                 &work_v[0], &iwork_v[0], &fns, _flags, &info)
    _check(st, "bordered_update")
    return {"order": info.order, "n_reflectors": info.n_reflectors,
            "n_rotations": info.n_rotations,
            "n_dlaed4_failures": info.n_dlaed4_failures,
            "n_bisection": info.n_bisection, "n_eig": info.n_eig,
            "n_fallbacks": info.n_fallbacks, "n_structured": info.n_structured,
            "n_product_fallbacks": info.n_product_fallbacks}


# --- the learners' trial loops -------------------------------------------------

KIND_MEG = OPF_KIND_MEG
#: capping shifts the level by the d-th largest entry beyond +-this (src/logweights.h)
CAP_SHIFT_AT = OPF_CAP_SHIFT_AT
KIND_CUMULATIVE = OPF_KIND_CUMULATIVE
KIND_EXPERTS = OPF_KIND_EXPERTS
KIND_SIMPLEX_VAR = OPF_KIND_SIMPLEX_VAR
SAMPLER_DECOMPOSITION = OPF_SAMPLER_DECOMPOSITION
SAMPLER_SYSTEMATIC = OPF_SAMPLER_SYSTEMATIC
SAMPLER_LEADER = OPF_SAMPLER_LEADER
SHARE_NONE = OPF_SHARE_NONE
SHARE_FIXED = OPF_SHARE_FIXED
SHARE_UNIFORM = OPF_SHARE_UNIFORM
SHARE_PAST = OPF_SHARE_PAST
STATE_DENSE = OPF_STATE_DENSE
STATE_CLUSTERED = OPF_STATE_CLUSTERED
#: the trial loop's statuses that are not failures (src/common.h)
STATUS_OK = OPF_OK
STATUS_SWITCH = OPF_SWITCH
STATUS_EINTR = OPF_EINTR


def explicit_count(const double[::1] lam not None):
    """m of an ascending spectrum: n minus its top group (the entries within
    4 eps max(1, |top|) of the largest), as the clustered state and
    ``state="auto"`` count it (``opf_explicit_count``)."""
    if lam.shape[0] == 0:
        raise ValueError("explicit_count: an empty spectrum")
    return opf_explicit_count(&lam[0], lam.shape[0])


cdef int _check_losses(Py_ssize_t T, const double[::1] u,
                       double[::1] exp_loss, double[::1] real_loss) except -1:
    _need(u.shape[0], T, "u")
    _need(exp_loss.shape[0], T, "exp_loss")
    _need(real_loss.shape[0], T, "real_loss")
    return 0


include "_engine.pxi"


def cap_groups(const double[::1] v not None, const double[::1] mult not None,
               Py_ssize_t d, double[::1] out not None):
    """Capped normalised log-weights of groups (values ``v`` descending,
    multiplicities ``mult``) into ``out``; returns the number of capped
    groups (see ``opf_cap_groups`` in ``src/cap.h``)."""
    cdef Py_ssize_t g = v.shape[0], r
    _need(mult.shape[0], g, "mult")
    _need(out.shape[0], g, "out")
    if g == 0:
        raise ValueError("cap_groups: no groups")
    with nogil:
        r = opf_cap_groups(&v[0], &mult[0], g, d, &out[0])
    _check(r, "cap_groups")
    return r





include "_row_path.pxi"

include "_kernel_pca_engine.pxi"
