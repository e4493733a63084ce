# OnlineKernelPCA's compiled trial loop (src/kernel_pca.c), included in
# _kernels.pyx (the one binding module).

def kpca_gap(double h, double kappa, double eta):
    """The feature-space mixability gap of eta="auto" (``opf_kpca_gap``)."""
    return opf_kpca_gap(h, kappa, eta)


def kpca_null_tol(const double[::1] evals not None):
    """``m * eps * max|evals|``: eigenvalues of K at most this are zero."""
    if evals.shape[0] == 0:
        return 0.0
    return opf_kpca_null_tol(evals.shape[0], &evals[0])


def kpca_map(const double[:, ::1] M not None, const double[:, ::1] K not None,
             double[:, ::1] Phi not None, double[::1] khat=None):
    """``Phi[j] = M^T K[j]`` and (unless None) ``khat[j] = |Phi[j]|^2``, row
    by row (``opf_kpca_map``: one GEMV per row, so a row's values do not
    depend on the other rows)."""
    cdef Py_ssize_t T = K.shape[0], nl = M.shape[0], dim = M.shape[1]
    if not (K.shape[1] == nl and Phi.shape[0] == T and Phi.shape[1] == dim
            and (khat is None or khat.shape[0] == T)):
        raise ValueError("kpca_map: inconsistent shapes")
    if T == 0:
        return
    with nogil:
        opf_kpca_map(&_LAPACK, nl, dim, &M[0, 0] if nl and dim else NULL,
                     &K[0, 0] if nl else NULL, nl, T,
                     &Phi[0, 0] if dim else NULL,
                     &khat[0] if khat is not None else NULL)


cdef class KernelPCAEngine:
    """The compiled trial loop of OnlineKernelPCA (see ``src/kernel_pca.c``).

    Points into the learner's state arrays ``evals`` (capacity,), ``q``
    (capacity, capacity) and ``m`` (1,), which the learner owns and pickles,
    and owns a workspace for that capacity.  A larger capacity needs a new
    engine.  With ``t`` and ``residual`` (the bounded mode's trial counter
    and residual sum) it runs the feature form (:meth:`run_features`):
    ``evals``, ``q`` are then the eigensystem of ``C`` of order ``m[0]``.
    """
    cdef opf_kpca s
    cdef opf_kpca_stats st
    cdef Context _ctx  # s.fns: the BLAS table and settings (_context.pxi)
    cdef object _keep
    cdef object _lock
    cdef readonly bint features

    def __cinit__(self, *args, **kwargs):
        self._lock = threading.Lock()

    def __init__(self, *, Py_ssize_t r, int sampler, double eta,
                 double[::1] evals, double[:, ::1] q, Py_ssize_t[::1] m,
                 bint auto_rate=False, double[::1] rate=None,
                 double[::1] master=None, Py_ssize_t[::1] t=None,
                 double[::1] residual=None):
        cdef Py_ssize_t cap = q.shape[0]
        cdef bint features = t is not None
        if not (cap >= 1 and q.shape[1] == cap and evals.shape[0] == cap
                and m.shape[0] == 1 and 0 <= m[0] <= cap and r >= 1):
            raise ValueError("KernelPCAEngine: inconsistent state shapes")
        if sampler not in (OPF_SAMPLER_DECOMPOSITION, OPF_SAMPLER_SYSTEMATIC):
            raise ValueError("KernelPCAEngine: unknown sampler")
        if auto_rate and (rate is None or rate.shape[0] != 3):
            raise ValueError("KernelPCAEngine: eta='auto' needs the rate state (3,)")
        if master is not None and not (auto_rate and master.shape[0] == OPF_MASTER_LEN):
            raise ValueError("KernelPCAEngine: the master needs eta='auto' and its "
                             f"state ({OPF_MASTER_LEN},)")
        if features and not (residual is not None and residual.shape[0] >= 1
                             and t.shape[0] == 1 and m[0] == cap):
            raise ValueError("KernelPCAEngine: the feature form needs t (1,), "
                             "residual (1,) and m[0] == the order of q")
        self.features = features
        work = np.empty(opf_kpca_feature_work_len(cap) if features else
                        opf_kpca_work_len(cap))
        iwork = np.empty(opf_kpca_iwork_len(cap), dtype=np.intp)
        buiwork = np.empty(max(opf_bu_iwork_len(cap), opf_r1_iwork_len(cap)),
                           dtype=np.intc)
        cdef double[::1] work_v = work
        cdef Py_ssize_t[::1] iwork_v = iwork
        cdef int[::1] buiwork_v = buiwork
        self._keep = (evals, q, m, work, iwork, buiwork, rate, master, t, residual)
        self.s.t = &t[0] if features else NULL
        self.s.residual = &residual[0] if features else NULL
        self.s.master = &master[0] if master is not None else NULL
        self.s.r = r
        self.s.sampler = sampler
        self.s.eta = eta
        self.s.rate = &rate[0] if auto_rate else NULL  # eta="auto": rate[1]
        self.s.capacity = cap
        self.s.evals = &evals[0]
        self.s.q = &q[0, 0]
        self.s.m = &m[0]
        self.s.work = &work_v[0]
        self.s.iwork = &iwork_v[0]
        self.s.buiwork = &buiwork_v[0]
        self._ctx = _current.get()
        self.s.fns = &self._ctx.fns

    @property
    def capacity(self):
        return self.s.capacity

    def run(self, const double[:, ::1] G, const double[::1] u,
            double[::1] exp_loss, double[::1] real_loss):
        """One trial per row of G; return the number done (T unless
        interrupted: as :meth:`Engine.run`, a Ctrl-C stops between trials
        or inside the bordered update, before it writes).

        Row j holds the kernel values of instance j with the m0 + j stored
        instances and itself (m0 = instances stored before the call).  If a
        trial fails the exception carries ``trials_done`` (see
        ``src/kernel_pca.h`` for what a failed bordered update leaves).
        """
        cdef Py_ssize_t T = G.shape[0], done
        cdef int status = 0
        if self.features:
            raise ValueError("KernelPCAEngine.run: a feature-form engine (run_features)")
        if T == 0:
            return 0
        _check_losses(T, u, exp_loss, real_loss)
        if self.s.m[0] + T > self.s.capacity or G.shape[1] < self.s.m[0] + T:
            raise status_error(OPF_ECAPACITY, "kernel PCA trial", trials_done=0)
        _enter(self._lock, "KernelPCAEngine.run")
        cdef int armed = 0
        cdef StopFlag stop = _watched_flag()
        try:
            armed = _arm()
            self.s.poll = armed
            self.s.stop = _stop_pointer(stop)
            with nogil:
                done = opf_kpca_trials(&self.s, &G[0, 0], G.shape[1], T, &u[0],
                                       &exp_loss[0], &real_loss[0], &status,
                                       &self.st)
        finally:
            self.s.poll = 0
            self.s.stop = NULL
            _disarm(armed)
            self._lock.release()
        _honour(armed)  # Ctrl-C: KeyboardInterrupt, the state after `done` trials
        _honour_stop(stop, status)  # stopped from another thread: Stopped, likewise
        if done < T and status != OPF_EINTR:
            raise status_error(status, "kernel PCA trial", trials_done=done)
        return done

    def run_features(self, const double[:, ::1] Phi, const double[::1] kappa,
                     const double[::1] u, double[::1] exp_loss, double[::1] real_loss):
        """One trial of the feature form per row of ``Phi`` (the feature
        vectors, ``m[0]`` columns; ``kappa`` the kernel diagonals); return the
        number done, as :meth:`run` (a failed rank-one update: the exception
        carries ``trials_done``, see ``src/kernel_pca.h``)."""
        cdef Py_ssize_t T = Phi.shape[0], done
        cdef int status = 0
        if not self.features:
            raise ValueError("KernelPCAEngine.run_features: a kernel-form engine (run)")
        if T == 0:
            return 0
        _check_losses(T, u, exp_loss, real_loss)
        if Phi.shape[1] != self.s.m[0] or kappa.shape[0] != T:
            raise ValueError("KernelPCAEngine.run_features: inconsistent shapes")
        _enter(self._lock, "KernelPCAEngine.run_features")
        cdef int armed = 0
        try:
            armed = _arm()
            self.s.poll = armed
            with nogil:
                done = opf_kpca_feature_trials(
                    &self.s, &Phi[0, 0] if self.s.m[0] else NULL, T, &kappa[0],
                    &u[0], &exp_loss[0], &real_loss[0], &status, &self.st)
        finally:
            self.s.poll = 0
            _disarm(armed)
            self._lock.release()
        _honour(armed)
        if done < T and status != OPF_EINTR:
            raise status_error(status, "kernel PCA trial", trials_done=done)
        return done

    @property
    def stats(self):
        """Bordered updates done, the sum of their secular orders, fallbacks
        (bisection roots + dsyevr blocks)."""
        return {"n_updates": self.st.n_updates, "secular_sum": self.st.secular_sum,
                "n_fallbacks": self.st.n_fallbacks}
