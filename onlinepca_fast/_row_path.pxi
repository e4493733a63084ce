# learn_one's short path (included by _kernels.pyx, after Engine).
#
# A learner's learn_one costs the Python-level validation of a whole batch
# (argument parsing, a private copy, the range pass, the family's checks, the
# generator call, the loss record) around a trial of ~2 us at n = 20.  A
# RowPath does all of it in one compiled call for the common case -- a
# float64 row of the fitted width whose values lie in a region where every
# check of the family is known to pass -- and declines everything else
# (returns False, nothing changed), so that the validating path decides, and
# raises, exactly as partial_fit does.

from cpython.buffer cimport PyBUF_FORMAT, PyBUF_STRIDES, PyBuffer_Release, PyObject_GetBuffer
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.math cimport isfinite
from libc.stdint cimport uint32_t, uint64_t
from libc.string cimport memcpy

cdef extern from "pythread.h":
    unsigned long PyThread_get_thread_ident()

# numpy.random's bitgen_t, its documented C interface to a bit generator (the
# "BitGenerator" capsule); Generator.random() returns next_double(state).
ctypedef struct _np_bitgen:
    void *state
    uint64_t (*next_uint64)(void *st) noexcept nogil
    uint32_t (*next_uint32)(void *st) noexcept nogil
    double (*next_double)(void *st) noexcept nogil
    uint64_t (*next_raw)(void *st) noexcept nogil


cdef object _NDARRAY = np.ndarray


cdef class RowPath:
    """One trial on one row, for a learner's ``learn_one``, in one call.

    Built by the learner after a validated ``learn_one`` (its
    hyper-parameters, engine and state then known good) with the *region* of
    rows that pass every check of its family: entries in ``[lo, hi]``, ``max
    |x_i| <= amax``, ``|x|^2 <= norm2`` and ``x = 0`` or ``|x|^2 >=
    norm2_min``.  :meth:`learn` runs the trial of
    partial_fit on such a row -- same uniform from the learner's generator
    (PCG64 or PCG64DXSM, which a failed trial rewinds), same loss record
    (``records``, the learner's :class:`~onlinepca_fast.learners._base.LossRecords`,
    or None), same re-orthogonalisation (``reorthogonalize``, the state's,
    every `every` trials) -- under the learner's guard and the engine's
    lock.  It holds no reference to the learner (no reference cycle): only
    to the pieces it drives.  It declines (False, nothing changed) whenever
    the state is due to change representation (``state="auto"``), so that
    the validating path switches first.
    """
    cdef Engine engine            # the learner's engine (either state)
    cdef object guard, bits, records, losses_obj, reorth
    # the guard's try_fast_write/exit_fast_write, the engine's and the bit
    # generator's locks, looked up once
    cdef object g_enter, g_exit, e_acquire, e_release, b_acquire, b_release
    cdef _np_bitgen *bitgen
    cdef double lo, hi, amax, norm2, norm2_min
    cdef Py_ssize_t n, every
    cdef double[::1] row
    cdef double[:, ::1] losses

    def __init__(self, Engine engine not None, guard, rng, Py_ssize_t every,
                 reorthogonalize, records, double lo, double hi, double amax,
                 double norm2, double norm2_min=0.0):
        self.engine = engine
        if self.engine.s.matrix_input:
            raise ValueError("RowPath: the engine takes matrices")
        if every and reorthogonalize is None:
            raise ValueError("RowPath: re-orthogonalisation every > 0 needs the state's")
        self.n = self.engine.s.n
        self.guard = guard
        self.g_enter, self.g_exit = guard.try_fast_write, guard.exit_fast_write
        self.e_acquire, self.e_release = self.engine._lock.acquire, self.engine._lock.release
        self.row = np.empty(self.n)
        self.every = every
        self.reorth = reorthogonalize
        self.records = records
        self.lo, self.hi, self.amax, self.norm2 = lo, hi, amax, norm2
        self.norm2_min = norm2_min
        self.bitgen = NULL
        if rng is not None:
            self.bits = rng.bit_generator
            self.b_acquire, self.b_release = self.bits.lock.acquire, self.bits.lock.release
            self.bitgen = <_np_bitgen *>PyCapsule_GetPointer(self.bits.capsule,
                                                            "BitGenerator")

    cdef bint _take_row(self, x) except -1:
        """Copy x into the private row if it is a native float64 ndarray of
        shape (n,); False otherwise."""
        cdef Py_buffer view
        cdef Py_ssize_t i, step
        cdef char *src
        cdef double *dst = &self.row[0]
        if type(x) is not _NDARRAY:
            return False
        PyObject_GetBuffer(x, &view, PyBUF_STRIDES | PyBUF_FORMAT)
        try:
            if (view.ndim != 1 or view.shape[0] != self.n or view.format == NULL
                    or view.format[0] != b'd' or view.format[1] != 0):
                return False
            src = <char *>view.buf
            step = view.strides[0]
            for i in range(self.n):
                memcpy(&dst[i], src + i * step, sizeof(double))
        finally:
            PyBuffer_Release(&view)
        return True

    cdef bint _in_region(self) noexcept:
        """Every entry finite and the row in the region (NaN fails every
        comparison; |x|^2 overflowing to inf fails isfinite)."""
        cdef const double *x = &self.row[0]
        cdef double v, lo = x[0], hi = x[0], n2 = 0.0
        cdef Py_ssize_t i
        for i in range(self.n):
            v = x[i]
            n2 += v * v
            if v < lo:
                lo = v
            if v > hi:
                hi = v
        return (isfinite(n2) and lo >= self.lo and hi <= self.hi
                and -lo <= self.amax and hi <= self.amax and n2 <= self.norm2
                and (n2 >= self.norm2_min or (lo == 0.0 and hi == 0.0)))

    cdef int _record_at(self, Py_ssize_t col) except -1:
        """The records' buffer, with room for column col (grown by the
        records, geometrically)."""
        cdef object buf = self.records.buf
        if buf is not self.losses_obj or col >= self.losses.shape[1]:
            if col >= buf.shape[1]:
                buf = self.records.room(col + 1)
            self.losses = buf
            self.losses_obj = buf
        return 0

    def learn(self, x):
        """One trial on the row x; True if done, False if x is not a row this
        path takes or the learner is busy (nothing changed: the caller
        validates and decides)."""
        if not self._take_row(x) or not self._in_region():
            return False
        return self._trial()

    cdef bint _trial(self) except -1:
        """The trial on the private row, under the learner's guard."""
        cdef Py_ssize_t col = 0, done, t
        cdef double u = 0.0, exp_loss = 0.0, real_loss = 0.0
        cdef int status = 0
        cdef bint record = self.records is not None
        if not self.g_enter():
            return False  # nested, a reader, or another thread: the caller decides
        try:
            if not self.e_acquire(False):
                return False
            try:
                if opf_learner_switch_due(&self.engine.s):
                    return False  # the other representation's trial
                if record:
                    col = self.records.count
                    self._record_at(col)
                if self.bitgen != NULL:
                    self.b_acquire()  # as Generator.random() does
                    u = self.bitgen.next_double(self.bitgen.state)
                    self.b_release()
                with nogil:
                    done = opf_learner_trials(&self.engine.s, &self.row[0], 1, &u,
                                              &exp_loss, &real_loss, &status)
                if done < 1 and status == OPF_ECAPACITY:
                    # the clustered state needs larger arrays (the trial
                    # changed nothing but B's compression, the same Q): the
                    # validating path grows them and runs the trial
                    if self.bitgen != NULL:
                        self.bits.advance(-1)
                    return False
                if done < 1:
                    if self.bitgen != NULL:  # the failed trial consumed no uniform
                        self.bits.advance(-1)
                    raise RuntimeError(
                        "the trial failed in the compiled kernel "
                        f"({status_error(status, 'trial')}); nothing was changed"
                    ) from status_error(status, "trial", trials_done=0)
                if record:
                    self.losses[0, col] = exp_loss
                    self.losses[1, col] = real_loss
                    self.records.count = col + 1
                t = self.engine.s.t[0]
                if self.every and t % self.every == 0:
                    self.reorth()
            finally:
                self.e_release()
        finally:
            self.g_exit()
        return True
