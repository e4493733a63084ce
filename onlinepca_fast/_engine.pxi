# The compiled trial loop of the learners, on either state of an
# eigen-learner (included by _kernels.pyx): src/learner.c, src/state.h


cdef class Engine:
    """The compiled trial loop of one learner (see ``src/learner.c``), bound
    to the arrays of one state object (``learners/_state.py``): made by
    :meth:`dense` or :meth:`clustered`.

    It points into the learner's arrays (which the learner owns and
    pickles) and owns its workspace.  The learners check every policy (which
    representation serves which learner, the values of the hyper-parameters)
    once, in their parameter constraints; here the shapes are checked, so
    that no call from Python can make the C code read or write outside an
    array, and the C code refuses (``OPF_EINVAL``) what its own contract
    excludes.

    ``config`` is the learner's ``EngineConfig`` (kind, n, d, eta, alpha,
    share, sampler, centered, center_lr_inv, matrix_input, auto_rate,
    alpha_auto); ``shared`` the learner's arrays besides the state: ``(t,
    rate, limit, mean, wsum)`` -- ``rate`` and ``limit`` None unless
    eta="auto".
    """
    cdef opf_learner s
    cdef Context _ctx  # s.fns: the BLAS table and settings (_context.pxi)
    cdef object _keep  # the arrays s points into, and the workspace
    cdef object _lock
    cdef object _keep_limit  # the master's state and workspace (eta="auto")
    cdef int _state  # STATE_DENSE or STATE_CLUSTERED: which table s.ops is
    cdef opf_dense _dense  # the arrays of s.state (one of the two)
    cdef opf_clustered _clustered

    def __cinit__(self, *args, **kwargs):
        self._lock = threading.Lock()

    cdef int _configure(self, object config, int state, const opf_state_ops *ops,
                        object shared) except -1:
        """The parameters of ``opf_learner`` from the config, and the shared
        arrays (t, rate, limit, mean, wsum) checked against n."""
        cdef Py_ssize_t n = config.n
        cdef Py_ssize_t d = config.d
        cdef double[::1] rate_v
        cdef double[::1] mean_v
        cdef Py_ssize_t[::1] t_v
        t, rate, limit, mean, wsum = shared
        t_v = t
        if t_v.shape[0] != 1 or not 1 <= d <= n:
            raise ValueError("Engine: inconsistent state shapes")
        mean_v = mean
        if mean_v.shape[0] != n:
            raise ValueError("Engine: inconsistent state shapes (mean)")
        self.s.n = n
        self.s.d = d
        self.s.kind = config.kind
        self._state = state
        self.s.ops = ops
        self.s.sampler = config.sampler
        self.s.share = config.share
        self.s.centered = config.centered
        self.s.mean_first = config.mean_first
        self.s.matrix_input = config.matrix_input
        self.s.with_matrices = config.matrix_input or (
            config.kind == OPF_KIND_MEG and config.share == OPF_SHARE_PAST)
        self.s.alpha_auto = config.alpha_auto
        self.s.adaptive_d = config.adaptive_d
        self.s.alpha = config.alpha
        self.s.center_lr_inv = config.center_lr_inv
        self.s.t = &t_v[0]
        self.s.mean = &mean_v[0]
        self._ctx = _current.get()  # the settings of the engine's kernels
        self.s.fns = &self._ctx.fns
        if config.auto_rate:
            rate_v = rate
            if rate_v.shape[0] != 3:
                raise ValueError("Engine: eta='auto' needs the rate state (3,)")
            # the rate lives in rate[1]; eta = inf keeps every size bound on
            # a step (learner.c) at its most careful
            self.s.eta = INFINITY
            self.s.rate = &rate_v[0]
        else:
            self.s.eta = config.eta
            self.s.rate = NULL
        if limit is not None:
            self._bind_limit(limit, n, n - d, config.auto_rate, config.kind,
                             config.matrix_input)
        return 0

    @staticmethod
    def dense(config, double[::1] lam not None, double[::1] omega not None,
              double[:, ::1] q not None, shared):
        """The engine of a dense state: ``lam``, ``omega`` (n,), ``q`` (n, n)
        for the eigen-learners (1 x 1 for the experts, no basis), ``wsum``
        n x n (n for the experts) with share="past"."""
        cdef Engine self = Engine.__new__(Engine)
        self._configure(config, OPF_STATE_DENSE, &opf_dense_state, shared)
        self.s.m_stop = -1  # never switch (until the learner sets it)
        cdef Py_ssize_t n = self.s.n
        cdef int kind = self.s.kind
        cdef bint basis = kind == OPF_KIND_MEG or kind == OPF_KIND_CUMULATIVE
        cdef Py_ssize_t need_wsum = 1
        cdef double[::1] wsum = shared[4]
        if self.s.share == OPF_SHARE_PAST:
            need_wsum = n * n if kind == OPF_KIND_MEG else n
        if not (lam.shape[0] == n and omega.shape[0] == n and q.shape[0] >= 1
                and q.shape[1] >= 1
                and (not basis or (q.shape[0] == n and q.shape[1] == n))
                and wsum.shape[0] >= need_wsum):
            raise ValueError("Engine: inconsistent state shapes")
        work = np.zeros(opf_learner_work_len(n, kind, self.s.with_matrices))  # hint zeroed
        iwork = np.empty(opf_learner_iwork_len(n), dtype=np.intp)
        r1iwork = np.empty(opf_r1_iwork_len(n) if basis else 1, dtype=np.intc)
        cdef double[::1] work_v = work
        cdef Py_ssize_t[::1] iwork_v = iwork
        cdef int[::1] r1iwork_v = r1iwork
        self._keep = (lam, omega, q, shared, work, iwork, r1iwork)
        self._dense.lam = &lam[0]
        self._dense.omega = &omega[0]
        self._dense.q = &q[0, 0]
        self._dense.wsum = &wsum[0]
        self.s.state = &self._dense
        self.s.work = &work_v[0]
        self.s.iwork = &iwork_v[0]
        self.s.r1iwork = &r1iwork_v[0]
        return self

    @staticmethod
    def clustered(config, double[:, ::1] b not None, double[:, ::1] r not None,
                  double[::1] mu not None, double[::1] omega not None,
                  double[::1] clus not None, Py_ssize_t[::1] dims not None, shared):
        """The engine of a clustered state: ``b`` (cap, n), ``r`` (cap, cap),
        ``mu`` and ``omega`` (cap,), ``clus`` (2,), ``dims`` (2,), and a
        workspace for that capacity.  When a trial needs more room the loop
        stops with ``STATUS_ECAPACITY``; the state grows (a new object) and
        the learner binds a new engine."""
        cdef Engine self = Engine.__new__(Engine)
        self._configure(config, OPF_STATE_CLUSTERED, &opf_clustered_state, shared)
        self.s.m_stop = 0  # never switch (until the learner sets it)
        cdef Py_ssize_t cap = b.shape[0], n = self.s.n
        if not (n >= 2 and self.s.d < n and clus.shape[0] == 2 and dims.shape[0] == 2
                and 1 <= cap <= n and b.shape[1] == n and r.shape[0] == cap
                and r.shape[1] == cap and mu.shape[0] == cap
                and omega.shape[0] == cap and 0 <= dims[0] <= dims[1] <= cap):
            raise ValueError("Engine: inconsistent state shapes")
        work = np.empty(opf_clustered_work_len(n, cap, n - self.s.d))
        iwork = np.empty(opf_learner_iwork_len(n), dtype=np.intp)
        r1iwork = np.empty(opf_r1_iwork_len(cap + 1), dtype=np.intc)
        cdef double[::1] work_v = work
        cdef Py_ssize_t[::1] iwork_v = iwork
        cdef int[::1] r1iwork_v = r1iwork
        self._keep = (b, r, mu, omega, clus, dims, shared, work, iwork, r1iwork)
        self._clustered.cap = cap
        self._clustered.b = &b[0, 0]
        self._clustered.r = &r[0, 0]
        self._clustered.mu = &mu[0]
        self._clustered.omega = &omega[0]
        self._clustered.clus = &clus[0]
        self._clustered.dims = &dims[0]
        self.s.state = &self._clustered
        self.s.work = &work_v[0]
        self.s.iwork = &iwork_v[0]
        self.s.r1iwork = &r1iwork_v[0]
        return self

    cdef int _bind_limit(self, object lim_obj, Py_ssize_t n, Py_ssize_t k,
                         bint auto_rate, int kind, bint matrix_input) except -1:
        """eta="auto" of OnlinePCA and CenteredOnlinePCA: the master over the
        learner, its eta -> infinity limit and Follow the Leader on a sketch
        (``src/limit.h``), state ``limit_state(n, k)``; of VarianceMinimizer
        (d = 1, no mixing, dense): the master over the learner and Follow the
        Leader read off its state, ``master_state()``."""
        cdef double[::1] lim = lim_obj
        if lim.shape[0] == OPF_MASTER_LEN:
            if not (auto_rate and kind == OPF_KIND_MEG and k == n - 1
                    and self.s.share == OPF_SHARE_NONE
                    and self._state == OPF_STATE_DENSE):
                raise ValueError("Engine: inconsistent state shapes (leader master)")
            self._keep_limit = (lim_obj,)
            self.s.lead = &lim[0]
            return 0
        if not (auto_rate and kind in (OPF_KIND_MEG, OPF_KIND_CUMULATIVE)
                and self.s.sampler != OPF_SAMPLER_LEADER and not matrix_input
                and lim.shape[0] == OPF_LIMIT_LEN(n, k)
                and opf_limit_state_ok(&lim[0], n, k)):
            raise ValueError("Engine: inconsistent state shapes (limit)")
        work = np.empty(opf_limit_work_len(n, k))
        iwork = np.empty(opf_limit_iwork_len(n, k), dtype=np.intc)
        cdef double[::1] work_v = work
        cdef int[::1] iwork_v = iwork
        self._keep_limit = (lim_obj, work, iwork)
        self.s.lim = &lim[0]
        self.s.limw = &work_v[0]
        self.s.limiw = &iwork_v[0]

    @property
    def state(self):
        """:data:`STATE_DENSE` or :data:`STATE_CLUSTERED`."""
        return self._state

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
    def switch_due(self):
        """Whether the state is at its ``m_stop``: the next trial belongs to
        the other representation (``opf_learner_switch_due``)."""
        return bool(opf_learner_switch_due(&self.s))

    def run(self, const double[:, ::1] X, const double[::1] u,
            double[::1] exp_loss, double[::1] real_loss):
        """Run one trial per row of X (T x n vectors, or T x n*n matrices
        flattened); return ``(done, status)``: all T with
        :data:`STATUS_OK`, or -- without an exception -- fewer (or all)
        with :data:`STATUS_SWITCH` (the last trial left the state at its
        ``m_stop``: the rest is for the other representation) or fewer with
        :data:`STATUS_ECAPACITY` (the clustered state needs larger arrays;
        nothing but B's compression changed).

        In the main thread a Ctrl-C stops the chunk between two trials or
        inside an O(n^3) one, which is then undone (``src/interrupt.h``),
        and raises ``KeyboardInterrupt`` with the state that of the trials
        done (the learner's trial counter says how many).  In a thread
        watching a :class:`StopFlag` (:func:`watching`), the flag set stops
        the chunk before its next trial and raises :class:`Stopped`,
        likewise.

        If a trial fails, the trials before it are done (their losses
        written), that trial changed nothing, and the exception from
        :func:`status_error` carries ``trials_done``.
        """
        cdef Py_ssize_t T = X.shape[0], done = 0
        cdef int status = 0
        cdef Py_ssize_t width = self.s.n * self.s.n if self.s.matrix_input else self.s.n
        if T == 0:
            return 0, OPF_OK
        if X.shape[1] != width:
            raise ValueError(f"X must have {width} columns, got {X.shape[1]}")
        _check_losses(T, u, exp_loss, real_loss)
        _enter(self._lock, "Engine.run")
        cdef int armed = 0
        cdef StopFlag stop = _watched_flag()
        try:
            armed = _arm()
            self.s.poll = armed
            self.s.stop = _stop_pointer(stop)
            with nogil:
                done = opf_learner_trials(&self.s, &X[0, 0], T, &u[0], &exp_loss[0],
                                          &real_loss[0], &status)
        finally:
            self.s.poll = 0
            self.s.stop = NULL
            _disarm(armed)
            self._lock.release()
        _honour(armed)  # Ctrl-C: KeyboardInterrupt, the state after `done` trials
        _honour_stop(stop, status)  # stopped from another thread: Stopped, likewise
        if status == OPF_OK or status == OPF_SWITCH or status == OPF_ECAPACITY:
            return done, status
        if status == OPF_EINTR:
            return done, status
        raise status_error(status, "trial", trials_done=done)


# What the clustered state's trial computes (src/state_clustered_draw.c),
# for the accessors of ClusteredState: the weights of W and a drawn corner.

def cluster_capped_weights(Py_ssize_t n, Py_ssize_t d, const double[::1] mu not None,
                           double mu_c):
    """W = cap(exp(A)) of the clustered cumulative state: ``(w, wc, lc)``,
    the weights of the explicit directions (as ``mu``), the cluster's weight
    and its capped log-weight (0, 0 without a cluster)
    (``opf_cl_capped_weights``)."""
    cdef Py_ssize_t m = mu.shape[0]
    if not (1 <= d < n and m <= n and (m > 0 or n > 0)):
        raise ValueError("cluster_capped_weights: inconsistent sizes")
    w = np.empty(m)
    work = np.empty(3 * (m + 1))
    cdef double[::1] w_v = w
    cdef double[::1] work_v = work
    cdef double lc = 0.0, wc = 0.0
    cdef int st
    with nogil:
        st = opf_cl_capped_weights(n, d, m, &mu[0] if m else NULL, mu_c,
                                   &w_v[0] if m else NULL, &lc, &wc, &work_v[0])
    _check(st, "cluster_capped_weights")
    return w, wc, lc


def cluster_corner(Py_ssize_t n, Py_ssize_t d, const double[::1] om not None,
                   double lc, double wc, int sampler, rng):
    """A corner of W drawn as the clustered state's trial draws it
    (``opf_cl_corner_plan``), with one uniform of ``rng`` if a draw is
    needed: ``(explicit, left_out)``, the explicit directions in the corner
    and how many cluster directions it leaves out."""
    cdef Py_ssize_t m = om.shape[0], ne = 0, left_out = 0
    cdef opf_cl_plan p
    cdef double u
    cdef int st = OPF_OK
    if not (1 <= d < n and m <= n):
        raise ValueError("cluster_corner: inconsistent sizes")
    wexp = np.empty(n)
    corner = np.empty(n, dtype=np.intp)
    work = np.empty(n)
    iwork = np.empty(3 * n, dtype=np.intp)
    cdef double[::1] wexp_v = wexp
    cdef Py_ssize_t[::1] corner_v = corner
    cdef double[::1] work_v = work
    cdef Py_ssize_t[::1] iwork_v = iwork
    p = opf_cl_corner_plan(n, d, m, &om[0] if m else NULL, lc, wc, &wexp_v[0])
    if p.size > 0:
        u = rng.random()
        with nogil:
            st = opf_draw_corner(sampler, p.v, p.len, p.size, u, &corner_v[0],
                                 &work_v[0], &iwork_v[0])
        _check(st, "cluster_corner")
    ne = opf_cl_corner_take(&p, m, &corner_v[0], &left_out)
    return corner[:ne].copy(), left_out
