# OnlinePCA and the cumulative learners (WK Alg. 6, Follow the Leader) on the
# capped structure (included by _kernels.pyx, after Engine): src/clustered.c
def cap_groups(const double[::1] v not None, const double[::1] mult not None,
               Py_ssize_t d, double[::1] out not None):
    """Capped normalised log-weights of groups (values ``v`` descending,
    multiplicities ``mult``) into ``out``; returns the number of capped
    groups (see ``opf_cap_groups`` in ``src/clustered.h``)."""
    cdef Py_ssize_t g = v.shape[0], r
    _need(mult.shape[0], g, "mult")
    _need(out.shape[0], g, "out")
    if g == 0:
        raise ValueError("cap_groups: no groups")
    with nogil:
        r = opf_cap_groups(&v[0], &mult[0], g, d, &out[0])
    _check(r, "cap_groups")
    return r


cdef class ClusterEngine:
    """The compiled trial loop of OnlinePCA, or (``cumulative=True``) of WK
    Algorithm 6 and Follow the Leader, on the capped structure (see
    ``src/clustered.c``).

    Points into the learner's arrays ``b`` (cap, n), ``r`` (cap, cap),
    ``mu`` and ``omega`` (cap,), ``clus`` (2,), ``dims`` (2,) and ``t``
    (1,), which the learner owns and pickles, and owns a workspace for that
    capacity.  When a trial needs more room, ``grow()`` (the learner's) is
    called with the GIL and returns the new, larger (b, r, mu, omega).
    """
    cdef opf_clustered s
    cdef object _keep
    cdef object _grow
    cdef object _lock
    cdef object _rate

    def __cinit__(self, *args, **kwargs):
        self._lock = threading.Lock()

    def __init__(self, *, Py_ssize_t n, Py_ssize_t d, double eta, double alpha,
                 int share, int sampler, double[:, ::1] b, double[:, ::1] r,
                 double[::1] mu, double[::1] omega, double[::1] clus,
                 Py_ssize_t[::1] dims, Py_ssize_t[::1] t, grow=None,
                 bint cumulative=False, bint centered=False,
                 double center_lr_inv=0.0, double[::1] mean=None,
                 bint auto_rate=False, double[::1] rate=None,
                 bint alpha_auto=False):
        if not (n >= 2 and 1 <= d < n and clus.shape[0] == 2
                and dims.shape[0] == 2 and t.shape[0] == 1
                and (not cumulative or (mean is not None and mean.shape[0] == n))):
            raise ValueError("ClusterEngine: inconsistent state shapes")
        samplers = [OPF_SAMPLER_DECOMPOSITION, OPF_SAMPLER_SYSTEMATIC]
        shares = [OPF_SHARE_NONE]
        if cumulative:
            samplers.append(OPF_SAMPLER_LEADER)
        else:
            shares += [OPF_SHARE_FIXED, OPF_SHARE_UNIFORM]
        if sampler not in samplers or share not in shares:
            raise ValueError("ClusterEngine: unknown sampler or share")
        self.s.cumulative = cumulative
        self.s.centered = centered
        self.s.center_lr_inv = center_lr_inv
        self.s.mean = &mean[0] if cumulative else NULL
        self.s.n = n
        self.s.d = d
        self.s.sampler = sampler
        self.s.share = share
        if auto_rate and (rate is None or rate.shape[0] != 3):
            raise ValueError("ClusterEngine: eta='auto' needs the rate state (3,)")
        self.s.eta = INFINITY if auto_rate else eta
        self.s.rate = &rate[0] if auto_rate else NULL
        self.s.alpha_auto = alpha_auto
        self._rate = rate
        self.s.alpha = alpha
        self.s.clus = &clus[0]
        self.s.dims = &dims[0]
        self.s.t = &t[0]
        self.s.fns = &_LAPACK
        self.s.m_stop = 0
        self._grow = grow
        self._bind(b, r, mu, omega, (clus, dims, t, mean))

    def _bind(self, double[:, ::1] b, double[:, ::1] r, double[::1] mu,
              double[::1] omega, small):
        cdef Py_ssize_t cap = b.shape[0], n = self.s.n
        if not (1 <= cap <= n and b.shape[1] == n and r.shape[0] == cap
                and r.shape[1] == cap and mu.shape[0] == cap
                and omega.shape[0] == cap
                and 0 <= self.s.dims[0] <= self.s.dims[1] <= cap):
            raise ValueError("ClusterEngine: inconsistent state shapes")
        work = np.empty(opf_clustered_work_len(n, cap, n - self.s.d))
        iwork = np.empty(opf_clustered_iwork_len(n), dtype=np.intp)
        r1iwork = np.empty(opf_r1_iwork_len(cap + 1), dtype=np.intc)
        cdef double[::1] work_v = work
        cdef Py_ssize_t[::1] iwork_v = iwork
        cdef int[::1] r1iwork_v = r1iwork
        self._keep = (b, r, mu, omega, small, work, iwork, r1iwork)
        self.s.cap = cap
        self.s.b = &b[0, 0]
        self.s.r = &r[0, 0]
        self.s.mu = &mu[0]
        self.s.omega = &omega[0]
        self.s.work = &work_v[0]
        self.s.iwork = &iwork_v[0]
        self.s.r1iwork = &r1iwork_v[0]

    @property
    def m_stop(self):
        """state="auto": stop after the trial that leaves at least this
        many explicit directions (0: never; see ``src/clustered.h``)."""
        return self.s.m_stop

    @m_stop.setter
    def m_stop(self, Py_ssize_t value):
        self.s.m_stop = value

    @property
    def capacity(self):
        return self.s.cap

    @property
    def bound_b(self):
        """The array ``b`` the engine points into."""
        return self._keep[0]

    def run(self, const double[:, ::1] X, const double[::1] u,
            double[::1] exp_loss, double[::1] real_loss):
        """One trial per row of X; return the number done (as :meth:`Engine.run`),
        growing the arrays through ``grow()`` when a trial needs room."""
        cdef Py_ssize_t T = X.shape[0], done, total = 0
        cdef int status = 0
        if T == 0:
            return 0
        if X.shape[1] != self.s.n:
            raise ValueError(f"X must have {self.s.n} columns, got {X.shape[1]}")
        _check_losses(T, u, exp_loss, real_loss)
        _enter(self._lock, "ClusterEngine.run")
        cdef int armed = 0
        try:
            armed = _arm()
            while True:
                self.s.poll = armed
                with nogil:
                    done = opf_clustered_trials(
                        &self.s, &X[total, 0], T - total, &u[total],
                        &exp_loss[total], &real_loss[total], &status)
                self.s.poll = 0
                total += done
                if total == T or status != OPF_ECAPACITY or self._grow is None:
                    break
                b, r, mu, omega = self._grow()
                self._bind(b, r, mu, omega, self._keep[4])
        finally:
            self.s.poll = 0
            _disarm(armed)
            self._lock.release()
        _honour(armed)  # Ctrl-C: KeyboardInterrupt, the state after `total` trials
        if total < T and status != OPF_SWITCH and status != OPF_EINTR:
            raise status_error(status, "trial", trials_done=total)
        return total

