# The compiled trial loop of the learners, on either state of an
# eigen-learner (included by _kernels.pyx): src/learner.c, src/state.h


cdef class Engine:
    """The compiled trial loop of one learner (see ``src/learner.c``), on
    either state of an eigen-learner (``state``: :data:`STATE_DENSE`, or
    :data:`STATE_CLUSTERED`, ``src/state.h``).

    It points into the learner's state arrays (which the learner owns and
    pickles) and owns its workspace.  The learners validate every value;
    the shapes are checked here too, so that no call from Python can make
    the C code read or write outside an array.

    The dense state: ``lam``, ``omega`` (n,), ``q`` (n, n), ``mean`` (n,),
    ``wsum``.  The clustered state (MEG with share None, "fixed" or
    "uniform", and the cumulative learners): ``lam`` (the explicit
    log-eigenvalues) and ``omega`` (cap,), ``b`` (cap, n), ``r`` (cap, cap),
    ``clus`` (2,), ``dims`` (2,), ``mean`` (n,) for the cumulative learners;
    when a trial needs more room, ``grow()`` (the learner's) is called with
    the GIL and returns the new, larger (b, r, lam, omega).
    """
    cdef opf_learner s
    cdef Context _ctx  # s.fns: the BLAS table and settings (_context.pxi)
    cdef object _keep  # the arrays s points into
    cdef object _lock
    cdef object _grow
    cdef object _keep_limit  # the master's state and workspace (eta="auto")

    def __cinit__(self, *args, **kwargs):
        self._lock = threading.Lock()

    def __init__(self, *, int kind, Py_ssize_t n, Py_ssize_t d, double eta,
                 double alpha, int share, int sampler, bint centered=False,
                 double center_lr_inv=0.0, bint matrix_input=False,
                 double[::1] lam, double[::1] omega, double[:, ::1] q=None,
                 double[::1] mean=None, double[::1] wsum=None,
                 Py_ssize_t[::1] t, bint auto_rate=False, double[::1] rate=None,
                 bint alpha_auto=False, int state=OPF_STATE_DENSE,
                 double[:, ::1] b=None, double[:, ::1] r=None,
                 double[::1] clus=None, Py_ssize_t[::1] dims=None, grow=None,
                 double[::1] limit=None):
        cdef bint clustered = state == OPF_STATE_CLUSTERED
        cdef bint with_matrices = matrix_input or (
            kind == OPF_KIND_MEG and share == OPF_SHARE_PAST)
        cdef bint basis = kind == OPF_KIND_MEG or kind == OPF_KIND_CUMULATIVE
        cdef Py_ssize_t need_wsum = 1
        if share == OPF_SHARE_PAST:
            need_wsum = n * n if kind == OPF_KIND_MEG else n
        if kind not in (OPF_KIND_MEG, OPF_KIND_CUMULATIVE, OPF_KIND_EXPERTS,
                        OPF_KIND_SIMPLEX_VAR) or sampler not in (
                OPF_SAMPLER_DECOMPOSITION, OPF_SAMPLER_SYSTEMATIC,
                OPF_SAMPLER_LEADER) or share not in (
                OPF_SHARE_NONE, OPF_SHARE_FIXED, OPF_SHARE_UNIFORM,
                OPF_SHARE_PAST) or state not in (OPF_STATE_DENSE, OPF_STATE_CLUSTERED):
            raise ValueError("Engine: unknown kind, sampler, share or state")
        if clustered and not (
                basis and not matrix_input and share != OPF_SHARE_PAST
                and (kind == OPF_KIND_CUMULATIVE or sampler != OPF_SAMPLER_LEADER)
                and (kind == OPF_KIND_MEG or share == OPF_SHARE_NONE)):
            raise ValueError("Engine: the clustered state serves MEG (share None, "
                             "fixed or uniform) and the cumulative learners only")
        if auto_rate and (rate is None or rate.shape[0] != 3):
            raise ValueError("Engine: eta='auto' needs the rate state (3,)")
        if t.shape[0] != 1 or not 1 <= d <= n or (
                (centered or kind == OPF_KIND_CUMULATIVE)
                and (mean is None or mean.shape[0] != n)):
            raise ValueError("Engine: inconsistent state shapes")
        if clustered:
            if not (n >= 2 and d < n and clus is not None and clus.shape[0] == 2
                    and dims is not None and dims.shape[0] == 2 and b is not None
                    and r is not None and lam is not None and omega is not None):
                raise ValueError("Engine: inconsistent state shapes")
        elif not (lam.shape[0] == n and omega.shape[0] == n and q is not None
                  and q.shape[0] >= 1 and q.shape[1] >= 1 and mean is not None
                  and mean.shape[0] == n
                  and (not basis or (q.shape[0] == n and q.shape[1] == n))
                  and wsum is not None and wsum.shape[0] >= need_wsum):
            raise ValueError("Engine: inconsistent state shapes")
        self.s.n = n
        self.s.d = d
        self.s.kind = kind
        self.s.state = state
        self.s.sampler = sampler
        self.s.share = share
        self.s.centered = centered
        self.s.matrix_input = matrix_input
        self.s.with_matrices = with_matrices
        # eta = "auto": the rate lives in rate[1]; eta = inf keeps every
        # size bound on a step (learner.c) at its most careful
        self.s.eta = INFINITY if auto_rate else eta
        self.s.rate = &rate[0] if auto_rate else NULL
        self.s.alpha_auto = alpha_auto
        self.s.alpha = alpha
        self.s.center_lr_inv = center_lr_inv
        self.s.m_stop = 0 if clustered else -1
        self.s.t = &t[0]
        self.s.mean = &mean[0] if mean is not None else NULL
        self._ctx = _current.get()  # the settings of the engine's kernels
        self.s.fns = &self._ctx.fns
        self._grow = grow
        if limit is not None:
            self._bind_limit(limit.base, n, n - d, auto_rate, kind, matrix_input)
        if clustered:
            self.s.clus = &clus[0]
            self.s.dims = &dims[0]
            self.s.wsum = NULL
            self.s.q = NULL
            # the arrays themselves (not the memoryviews): bound_b is b
            self._bind(b.base, r.base, lam.base, omega.base, (mean, t, rate, clus, dims))
            return
        work = np.zeros(opf_learner_work_len(n, kind, with_matrices))  # hint zeroed
        iwork = np.empty(opf_learner_iwork_len(n), dtype=np.intp)
        r1iwork = np.empty(opf_r1_iwork_len(n) if basis else 1, dtype=np.intc)
        cdef double[::1] work_v = work
        cdef Py_ssize_t[::1] iwork_v = iwork
        cdef int[::1] r1iwork_v = r1iwork
        self._keep = (lam, omega, q, mean, wsum, t, work, iwork, r1iwork, rate)
        self.s.lam = &lam[0]
        self.s.omega = &omega[0]
        self.s.q = &q[0, 0]
        self.s.wsum = &wsum[0]
        self.s.work = &work_v[0]
        self.s.iwork = &iwork_v[0]
        self.s.r1iwork = &r1iwork_v[0]

    cdef int _bind_limit(self, object lim_obj, Py_ssize_t n, Py_ssize_t k,
                         bint auto_rate, int kind, bint matrix_input) except -1:
        """eta="auto" of OnlinePCA: the master over the learner and its
        eta -> infinity limit (``src/limit.h``), state ``limit_state(n, k)``."""
        cdef double[::1] lim = lim_obj
        if not (auto_rate and kind == OPF_KIND_MEG and not matrix_input
                and lim.shape[0] == OPF_LIMIT_LEN(n, k)
                and 0 <= lim[5] <= k and lim[5] == <Py_ssize_t>lim[5]):
            raise ValueError("Engine: inconsistent state shapes (limit)")
        work = np.empty(opf_limit_work_len(n, k))
        iwork = np.empty(opf_limit_iwork_len(k), dtype=np.intc)
        cdef double[::1] work_v = work
        cdef int[::1] iwork_v = iwork
        self._keep_limit = (lim_obj, work, iwork)
        self.s.lim = &lim[0]
        self.s.limw = &work_v[0]
        self.s.limiw = &iwork_v[0]

    cdef int _bind(self, object b_obj, object r_obj, object lam_obj,
                   object omega_obj, object small) except -1:
        """The clustered state's arrays of capacity b.shape[0] (again after
        ``grow()``, with the lock held), and a workspace for that capacity.
        Not callable from Python: it repoints the C state."""
        cdef double[:, ::1] b = b_obj
        cdef double[:, ::1] r = r_obj
        cdef double[::1] lam = lam_obj
        cdef double[::1] omega = omega_obj
        cdef Py_ssize_t cap = b.shape[0], n = self.s.n
        if not (1 <= cap <= n and b.shape[1] == n and r.shape[0] == cap
                and r.shape[1] == cap and lam.shape[0] == cap
                and omega.shape[0] == cap
                and 0 <= self.s.dims[0] <= self.s.dims[1] <= cap):
            raise ValueError("Engine: inconsistent state shapes")
        work = np.empty(opf_clustered_work_len(n, cap, n - self.s.d))
        iwork = np.empty(opf_learner_iwork_len(n), dtype=np.intp)
        r1iwork = np.empty(opf_r1_iwork_len(cap + 1), dtype=np.intc)
        cdef double[::1] work_v = work
        cdef Py_ssize_t[::1] iwork_v = iwork
        cdef int[::1] r1iwork_v = r1iwork
        self._keep = (b_obj, r_obj, lam_obj, omega_obj, small, work, iwork, r1iwork)
        self.s.cap = cap
        self.s.b = &b[0, 0]
        self.s.r = &r[0, 0]
        self.s.lam = &lam[0]
        self.s.omega = &omega[0]
        self.s.work = &work_v[0]
        self.s.iwork = &iwork_v[0]
        self.s.r1iwork = &r1iwork_v[0]

    @property
    def state(self):
        """:data:`STATE_DENSE` or :data:`STATE_CLUSTERED`."""
        return self.s.state

    @property
    def context(self):
        """The settings the engine's kernels run with (a ``Context``: the
        current one when the engine was built)."""
        return self._ctx

    @property
    def m_stop(self):
        """state="auto": stop after the trial that leaves the state at this
        many explicit directions -- dense: at most (-1: never), clustered:
        at least (0: never); see ``src/learner.h``."""
        return self.s.m_stop

    @m_stop.setter
    def m_stop(self, Py_ssize_t value):
        self.s.m_stop = value

    @property
    def capacity(self):
        """The clustered state's rows of ``b`` (the dense state: n)."""
        return self.s.cap if self.s.state == OPF_STATE_CLUSTERED else self.s.n

    @property
    def bound_b(self):
        """The clustered state's array ``b`` the engine points into (None
        for the dense state): the learner rebuilds the engine when its
        ``b`` is another array (grown, restored)."""
        return self._keep[0] if self.s.state == OPF_STATE_CLUSTERED else None

    cdef Py_ssize_t _trials(self, const double *X, Py_ssize_t T, const double *u,
                            double *exp_loss, double *real_loss, int *status,
                            bint grow) except -1:
        """T trials, growing the clustered state's arrays through ``grow()``
        when a trial needs room (with the lock held; the GIL is released
        around each compiled stretch)."""
        cdef Py_ssize_t done, total = 0
        cdef Py_ssize_t stride = self.s.n * self.s.n if self.s.matrix_input else self.s.n
        while True:
            with nogil:
                done = opf_learner_trials(&self.s, X + total * stride, T - total,
                                          u + total, exp_loss + total,
                                          real_loss + total, status)
            total += done
            if (total == T or status[0] != OPF_ECAPACITY or not grow
                    or self._grow is None):
                return total
            b, r, lam, omega = self._grow()
            self._bind(b, r, lam, omega, self._keep[4])

    def run(self, const double[:, ::1] X, const double[::1] u,
            double[::1] exp_loss, double[::1] real_loss):
        """Run one trial per row of X (T x n vectors, or T x n*n matrices
        flattened); return the number done: T, or fewer when a trial left
        the state at its ``m_stop`` (the rest is for the other state).

        In the main thread a Ctrl-C stops the chunk between two trials or
        inside an O(n^3) one, which is then undone (``src/interrupt.h``),
        and raises ``KeyboardInterrupt`` with the state that of the trials
        done (fewer are returned if Python's handler does not raise).

        If a trial fails, the trials before it are done (their losses
        written), that trial changed nothing, and the exception from
        :func:`status_error` carries ``trials_done``.
        """
        cdef Py_ssize_t T = X.shape[0], done = 0
        cdef int status = 0
        cdef Py_ssize_t width = self.s.n * self.s.n if self.s.matrix_input else self.s.n
        if T == 0:
            return 0
        if X.shape[1] != width:
            raise ValueError(f"X must have {width} columns, got {X.shape[1]}")
        _check_losses(T, u, exp_loss, real_loss)
        _enter(self._lock, "Engine.run")
        cdef int armed = 0
        try:
            armed = _arm()
            self.s.poll = armed
            done = self._trials(&X[0, 0], T, &u[0], &exp_loss[0], &real_loss[0],
                                &status, True)
        finally:
            self.s.poll = 0
            _disarm(armed)
            self._lock.release()
        _honour(armed)  # Ctrl-C: KeyboardInterrupt, the state after `done` trials
        if done < T and status != OPF_SWITCH and status != OPF_EINTR:
            raise status_error(status, "trial", trials_done=done)
        return done

    def run_one(self, const double[::1] x, double u, double[:, ::1] losses,
                Py_ssize_t col):
        """One trial on the instance x; its losses go to losses[:, col].

        The learners' learn_one: one call, no temporary arrays.  On failure
        nothing changed and the exception from :func:`status_error` carries
        ``trials_done = 0``.
        """
        cdef Py_ssize_t done
        cdef int status = 0
        cdef Py_ssize_t width = self.s.n * self.s.n if self.s.matrix_input else self.s.n
        if x.shape[0] != width:
            raise ValueError(f"x must have {width} entries, got {x.shape[0]}")
        if losses.shape[0] != 2 or not 0 <= col < losses.shape[1]:
            raise ValueError("losses must have shape (2, > col)")
        _enter(self._lock, "Engine.run_one")
        try:
            done = self._trials(&x[0], 1, &u, &losses[0, col], &losses[1, col],
                                &status, True)
        finally:
            self._lock.release()
        if done < 1:
            raise status_error(status, "trial", trials_done=0)
