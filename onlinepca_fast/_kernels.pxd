# Declarations of the C kernels in ../src.  Nothing but `cdef extern` blocks:
# the only place C meets Python is _kernels.pyx.

cdef extern from "pool.h" nogil:
    ctypedef struct opf_pool:
        pass
    opf_pool *opf_pool_create(int n_threads)
    void opf_pool_destroy(opf_pool *pool)
    int opf_pool_size(const opf_pool *pool)

cdef extern from "common.h" nogil:
    int OPF_OK, OPF_EINVAL, OPF_ENOTCAPPED, OPF_ENOSPACE, OPF_EEVALS
    int OPF_ERHO, OPF_EX, OPF_EEVECS, OPF_EOVERFLOW, OPF_EFAILED, OPF_EEIG
    int OPF_EY, OPF_ECAPACITY, OPF_SWITCH, OPF_EINTR
    const char *opf_strerror(int status)
    int OPF_FORCE_BISECTION, OPF_FORCE_EIG
    int OPF_SAMPLER_DECOMPOSITION, OPF_SAMPLER_SYSTEMATIC, OPF_SAMPLER_LEADER

    ctypedef void (*opf_dgemm_t)(char *, char *, int *, int *, int *,
                                 double *, double *, int *, double *,
                                 int *, double *, double *,
                                 int *) noexcept nogil
    ctypedef void (*opf_dgemv_t)(char *, int *, int *, double *,
                                 double *, int *, double *, int *,
                                 double *, double *, int *) noexcept nogil
    ctypedef void (*opf_dlaed4_t)(int *, int *, double *, double *,
                                  double *, double *, double *,
                                  int *) noexcept nogil
    ctypedef void (*opf_dsyevr_t)(char *, char *, char *, int *,
                                  double *, int *, double *, double *,
                                  int *, int *, double *, int *,
                                  double *, double *, int *, int *,
                                  double *, int *, int *, int *,
                                  int *) noexcept nogil
    ctypedef void (*opf_dsytrd_t)(char *, int *, double *, int *, double *,
                                  double *, double *, double *, int *,
                                  int *) noexcept nogil
    ctypedef void (*opf_dstemr_t)(char *, char *, int *, double *, double *,
                                  double *, double *, int *, int *, int *,
                                  double *, double *, int *, int *, int *,
                                  bint *, double *, int *, int *, int *,
                                  int *) noexcept nogil
    ctypedef void (*opf_dormtr_t)(char *, char *, char *, int *, int *,
                                  double *, int *, double *, double *, int *,
                                  double *, int *, int *) noexcept nogil
    int OPF_PRODUCT_AUTO, OPF_PRODUCT_DENSE, OPF_PRODUCT_STRUCTURED
    ctypedef struct opf_tuning:
        int product
        int min_order
        int leaf
        int decline
        int cpu_level
    opf_tuning opf_tuning_default()
    ctypedef struct opf_lapack:
        opf_dgemm_t dgemm
        opf_dgemv_t dgemv
        opf_dlaed4_t dlaed4
        opf_dsyevr_t dsyevr
        opf_dsytrd_t dsytrd
        opf_dstemr_t dstemr
        opf_dormtr_t dormtr
        opf_tuning tune
        long long *n_structured
        opf_pool *pool
    void opf_transpose(Py_ssize_t m, Py_ssize_t n, const double *a, Py_ssize_t lda,
                       double *b, Py_ssize_t ldb)
    int opf_draw_corner(int sampler, const double *w, Py_ssize_t n, Py_ssize_t d,
                        double u, Py_ssize_t *corner, double *work,
                        Py_ssize_t *iwork)

cdef extern from "interrupt.h" nogil:
    int opf_interrupt_arm()
    void opf_interrupt_disarm()
    void opf_interrupt_test_countdown(long k)
    int opf_interrupt_test_site()
    void opf_interrupt_stop(int *flag)
    int opf_interrupt_stopped(const int *flag)

cdef extern from "phased_eig.h" nogil:
    int opf_eig_phased(int n, double *a, double *w, double *z, double *work,
                       int *iwork, int *isuppz, double *save,
                       const opf_lapack *fns, int poll)

cdef extern from "cap.h" nogil:
    Py_ssize_t opf_cap(const double *x, Py_ssize_t n, Py_ssize_t d,
                       int log_domain, double *out, double *out_lin,
                       double *work, Py_ssize_t *n_raised)
    ctypedef struct opf_cap_hint:
        double lo, hi, xmax
        const double *step
        double eta, shift, ymin
        int bracketed
    Py_ssize_t opf_cap_ex(const double *x, Py_ssize_t n, Py_ssize_t d,
                          int log_domain, double *out, double *out_lin,
                          double *work, Py_ssize_t *n_raised,
                          opf_cap_hint *hint, int level)
    Py_ssize_t opf_cap_groups(const double *v, const double *mult, Py_ssize_t g,
                              Py_ssize_t d, double *out)

cdef extern from "vexp.h" nogil:
    void opf_exp_shifted(const double *x, Py_ssize_t n, double shift,
                         double *out, int level)
    int opf_cpu_level()
    int opf_cpu_use(int level)

cdef extern from "decompose.h" nogil:
    Py_ssize_t opf_decompose(const double *w, Py_ssize_t n, Py_ssize_t d,
                             double select, Py_ssize_t capacity,
                             double *coef, Py_ssize_t *corners,
                             Py_ssize_t *chosen, double *work,
                             Py_ssize_t *iwork)

cdef extern from "systematic.h" nogil:
    int opf_sample_systematic(const double *w, Py_ssize_t n, Py_ssize_t d,
                              double u, Py_ssize_t *chosen, double *work)
    int opf_sample_systematic_sum(const double *w, Py_ssize_t n,
                                  Py_ssize_t d, double u, const double *v,
                                  double *vsum, double *wv,
                                  Py_ssize_t *scratch)

cdef extern from "hodlr.h" nogil:
    int OPF_HODLR_MIN
    int OPF_HODLR_LEAF
    int OPF_HODLR_LEAF_MIN
    ctypedef struct opf_hodlr_stats:
        int n_blocks
        int levels
        double rank_sum
        double rank_max
        double leaf_flops
        double lowrank_flops
    size_t opf_hodlr_work_len(Py_ssize_t nr, Py_ssize_t K)
    int opf_hodlr_profile(int nr, int ks, int K, const double *s, int lds,
                          const double *g, int ldg, double *out, int ldo,
                          double *work, const opf_lapack *fns, int apply,
                          opf_hodlr_stats *st)

cdef extern from "rank_one_update.h" nogil:
    double OPF_R1_DEFLATION_FACTOR
    ctypedef struct opf_r1_info:
        Py_ssize_t m
        Py_ssize_t n_reflectors
        Py_ssize_t n_rotations
        Py_ssize_t n_dlaed4_failures
        Py_ssize_t n_bisection
        Py_ssize_t n_eig
        Py_ssize_t n_structured
        Py_ssize_t n_product_fallbacks
    size_t opf_r1_work_len(Py_ssize_t n)
    size_t opf_r1_iwork_len(Py_ssize_t n)
    int opf_rank_one_update(Py_ssize_t n, double *d, double *q,
                            Py_ssize_t ldq, double rho, const double *x,
                            double *work, int *iwork,
                            const opf_lapack *fns, int flags,
                            opf_r1_info *info)

cdef extern from "bordered_update.h" nogil:
    ctypedef struct opf_bu_info:
        Py_ssize_t order
        Py_ssize_t n_reflectors
        Py_ssize_t n_rotations
        Py_ssize_t n_dlaed4_failures
        Py_ssize_t n_bisection
        Py_ssize_t n_eig
        Py_ssize_t n_fallbacks
        Py_ssize_t n_structured
        Py_ssize_t n_product_fallbacks
    size_t opf_bu_work_len(Py_ssize_t capacity)
    size_t opf_bu_iwork_len(Py_ssize_t capacity)
    int opf_bordered_update(Py_ssize_t m, double *d, double *q,
                            Py_ssize_t ldq, const double *y, double kappa,
                            double *work, int *iwork, const opf_lapack *fns,
                            int flags, opf_bu_info *info)

cdef extern from "learner.h" nogil:
    int OPF_KIND_MEG, OPF_KIND_CUMULATIVE, OPF_KIND_EXPERTS, OPF_KIND_SIMPLEX_VAR
    int OPF_SHARE_NONE, OPF_SHARE_FIXED, OPF_SHARE_UNIFORM, OPF_SHARE_PAST
    int OPF_STATE_DENSE, OPF_STATE_CLUSTERED
    ctypedef struct opf_state_ops:
        pass
    const opf_state_ops opf_dense_state
    const opf_state_ops opf_clustered_state
    ctypedef struct opf_learner:
        Py_ssize_t n, d
        int kind, sampler, share, centered, mean_first, matrix_input
        const opf_state_ops *ops
        int with_matrices
        double eta, alpha, center_lr_inv
        double *rate
        int alpha_auto
        int adaptive_d
        double *lim
        double *limw
        int *limiw
        double *lead
        void *state
        double *mean
        Py_ssize_t *t
        double *work
        Py_ssize_t *iwork
        int *r1iwork
        const opf_lapack *fns
        Py_ssize_t m_stop
        int poll
        const int *stop
    size_t opf_learner_work_len(Py_ssize_t n, int kind, int with_matrices)
    size_t opf_clustered_work_len(Py_ssize_t n, Py_ssize_t cap, Py_ssize_t k)
    size_t opf_learner_iwork_len(Py_ssize_t n)
    void opf_range(const double *x, Py_ssize_t n, double *lo, double *hi)
    Py_ssize_t opf_learner_trials(const opf_learner *s, const double *X,
                                  Py_ssize_t T, const double *u,
                                  double *exp_loss, double *real_loss,
                                  int *status)
    int opf_learner_switch_due(const opf_learner *s)

cdef extern from "common.h" nogil:
    Py_ssize_t opf_explicit_count(const double *lam, Py_ssize_t n)

cdef extern from "limit.h" nogil:
    Py_ssize_t OPF_LIMIT_LEN(Py_ssize_t n, Py_ssize_t k)
    Py_ssize_t OPF_SKETCH_LEN(Py_ssize_t n, Py_ssize_t ell)
    Py_ssize_t opf_leader_ell(Py_ssize_t n, Py_ssize_t k)
    int OPF_MASTER_LEN
    int OPF_MASTER3_LEN
    void opf_master3_init(double *mk)
    double opf_master3_commit(double *mk, const double *h)
    void opf_master_init(double *m)
    double opf_master_commit(double *m, double h_a, double h_b)
    void opf_limit_init(double *lim, Py_ssize_t n, Py_ssize_t k)
    int opf_limit_state_ok(const double *lim, Py_ssize_t n, Py_ssize_t k)
    size_t opf_limit_work_len(Py_ssize_t n, Py_ssize_t k)
    size_t opf_limit_iwork_len(Py_ssize_t n, Py_ssize_t k)

cdef extern from "logweights.h" nogil:
    double OPF_CAP_SHIFT_AT

cdef extern from "kernel_pca.h" nogil:
    ctypedef struct opf_kpca:
        Py_ssize_t r
        int sampler
        double eta
        double *rate
        double *master
        Py_ssize_t capacity
        double *evals
        double *q
        Py_ssize_t *m
        Py_ssize_t *t
        double *residual
        double *work
        Py_ssize_t *iwork
        int *buiwork
        const opf_lapack *fns
        int poll
        const int *stop
    ctypedef struct opf_kpca_stats:
        long long n_updates
        long long secular_sum
        long long n_fallbacks
    size_t opf_kpca_work_len(Py_ssize_t capacity)
    size_t opf_kpca_iwork_len(Py_ssize_t capacity)
    double opf_kpca_null_tol(Py_ssize_t m, const double *evals)
    double opf_kpca_gap(double h, double kappa, double eta)
    Py_ssize_t opf_kpca_trials(const opf_kpca *s, const double *G,
                               Py_ssize_t ldg, Py_ssize_t T, const double *u,
                               double *exp_loss, double *real_loss,
                               int *status, opf_kpca_stats *stats)
    size_t opf_kpca_feature_work_len(Py_ssize_t order)
    Py_ssize_t opf_kpca_feature_trials(const opf_kpca *s, const double *Phi,
                                       Py_ssize_t T, const double *kappa,
                                       const double *u, double *exp_loss,
                                       double *real_loss, int *status,
                                       opf_kpca_stats *stats)
    void opf_kpca_map(const opf_lapack *fns, Py_ssize_t nl, Py_ssize_t dim,
                      const double *M, const double *K, Py_ssize_t ldk,
                      Py_ssize_t T, double *Phi, double *khat)

cdef extern from "state_dense.h" nogil:
    ctypedef struct opf_dense:
        double *lam
        double *omega
        double *q
        double *wsum

cdef extern from "state_clustered.h" nogil:
    ctypedef struct opf_clustered:
        Py_ssize_t cap
        double *b
        double *r
        double *mu
        double *omega
        double *clus
        Py_ssize_t *dims

cdef extern from "state_clustered_draw.h" nogil:
    ctypedef struct opf_cl_plan:
        const double *v
        Py_ssize_t len, size, left_out
    int opf_cl_capped_weights(Py_ssize_t n, Py_ssize_t d, Py_ssize_t m,
                              const double *mu, double mu_c, double *cw,
                              double *lc, double *wc, double *work)
    opf_cl_plan opf_cl_corner_plan(Py_ssize_t n, Py_ssize_t d, Py_ssize_t m,
                                   const double *om, double lc, double wc,
                                   double *wexp)
    Py_ssize_t opf_cl_corner_take(const opf_cl_plan *p, Py_ssize_t m,
                                  Py_ssize_t *corner, Py_ssize_t *left_out)
