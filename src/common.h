#ifndef OPF_COMMON_H
#define OPF_COMMON_H

/*
 * common.h -- what every kernel shares: the status codes (one enum, one
 * message table, opf_strerror), the BLAS/LAPACK function table the binding
 * layer fills from scipy.linalg.cython_blas / cython_lapack (no BLAS is
 * linked by this package) with the settings and the threads that travel
 * with a call (opf_tuning, opf_pool), the sampler enum, and the row-major
 * BLAS calls the kernels make on eigenvector matrices.
 *
 * Layout convention of every eigenvector matrix q: row-major (C order) with
 * leading dimension ldq, and its COLUMNS are the eigenvectors (component i
 * of eigenvector j is q[i * ldq + j]).  For column-major Fortran BLAS the
 * same memory is Q^T, which is what the helpers below account for.
 */

#include <stddef.h>

#include "pool.h"

/* Status codes: 0 success, negative failure.  A kernel that fails leaves
 * its outputs (and, for the in-place updates, its inputs) unchanged unless
 * its header says otherwise. */
enum {
    OPF_OK = 0,
    OPF_EINVAL = -1,      /* a size, leading dimension, pointer or flag
                             outside the documented domain */
    OPF_ENOTCAPPED = -2,  /* decompose/sample: not in the capped simplex */
    OPF_ENOSPACE = -3,    /* decompose: more corners than the output holds */
    OPF_EEVALS = -10,     /* eigenvalues not finite or not ascending */
    OPF_ERHO = -11,       /* rank-one update: rho not finite */
    OPF_EX = -12,         /* rank-one update: x not finite */
    OPF_EEVECS = -13,     /* Q^T x not finite: the eigenvectors hold inf/NaN */
    OPF_EOVERFLOW = -14,  /* rank-one update: |rho| |x|^2 overflows */
    OPF_EFAILED = -15,    /* an eigen-update's secular equation and all its
                             fallbacks (bisection, dsyevr) failed, or (the
                             bordered update) its input eigensystem is not
                             finite and ascending */
    OPF_EEIG = -20,       /* dsyevr of a formed matrix failed */
    OPF_EY = -30,         /* bordered update: y or kappa not finite, or |y|
                             overflows */
    OPF_ECAPACITY = -40,  /* kernel PCA: the batch does not fit the capacity */
    OPF_SWITCH = 1,       /* not a failure: the trial loop stopped after a
                             trial that left the state at its m_stop (the
                             learners' state="auto" changes representation
                             there); the trials done are complete */
    OPF_EINTR = 2         /* not a failure: SIGINT arrived (interrupt.h); the
                             trials done are complete and the next one
                             changed nothing */
};

/* A short English description of a status code (never NULL). */
const char *opf_strerror(int status);

/* Testing switches of the eigen-updates (rank_one_update.h,
 * bordered_update.h) that force their fallback paths. */
enum {
    OPF_FORCE_BISECTION = 1, /* every root by bisection, not dlaed4 */
    OPF_FORCE_EIG = 2,       /* the non-deflated block by dsyevr */
    OPF_POLL_INTERRUPT = 4   /* not testing: the bordered update polls the
                                SIGINT flag before it writes (interrupt.h)
                                and returns OPF_EINTR, nothing changed */
};

/* Samplers of a d-corner from capped weights (WK Alg. 2 and 5). */
enum {
    OPF_SAMPLER_DECOMPOSITION = 0, /* WK Alg. 2, corner drawn by its coefficient */
    OPF_SAMPLER_SYSTEMATIC = 1,    /* Madow, inclusion probabilities d w_i */
    OPF_SAMPLER_LEADER = 2         /* deterministic: the last d positions */
};

/*
 * Draw the corner of d indices (into corner, unsorted) from the capped
 * weights w[0..n) with the uniform u by `sampler`.  work: n doubles;
 * iwork: 3 n indices (decomposition only).  The one sampler dispatch of
 * the trial loops (learner.c, kernel_pca.c).  Returns OPF_OK or a status.
 */
int opf_draw_corner(int sampler, const double *w, ptrdiff_t n, ptrdiff_t d,
                    double u, ptrdiff_t *corner, double *work,
                    ptrdiff_t *iwork);

/* BLAS/LAPACK as scipy.linalg.cython_blas / cython_lapack export them
 * (Fortran calling convention, 32-bit integers). */
typedef void (*opf_dgemm_t)(char *transa, char *transb, int *m, int *n,
                            int *k, double *alpha, double *a, int *lda,
                            double *b, int *ldb, double *beta, double *c,
                            int *ldc);
typedef void (*opf_dgemv_t)(char *trans, int *m, int *n, double *alpha,
                            double *a, int *lda, double *x, int *incx,
                            double *beta, double *y, int *incy);
typedef void (*opf_dlaed4_t)(int *n, int *i, double *d, double *z,
                             double *delta, double *rho, double *dlam,
                             int *info);
typedef void (*opf_dsyevr_t)(char *jobz, char *range, char *uplo, int *n,
                             double *a, int *lda, double *vl, double *vu,
                             int *il, int *iu, double *abstol, int *m,
                             double *w, double *z, int *ldz, int *isuppz,
                             double *work, int *lwork, int *iwork,
                             int *liwork, int *info);

/* dsyevr's three phases (phased_eig.h); optional: NULL, one dsyevr call */
typedef void (*opf_dsytrd_t)(char *uplo, int *n, double *a, int *lda,
                             double *d, double *e, double *tau, double *work,
                             int *lwork, int *info);
typedef void (*opf_dstemr_t)(char *jobz, char *range, int *n, double *d,
                             double *e, double *vl, double *vu, int *il,
                             int *iu, int *m, double *w, double *z, int *ldz,
                             int *nzc, int *isuppz, int *tryrac, double *work,
                             int *lwork, int *iwork, int *liwork, int *info);
typedef void (*opf_dormtr_t)(char *side, char *uplo, char *trans, int *m,
                             int *n, double *a, int *lda, double *tau,
                             double *c, int *ldc, double *work, int *lwork,
                             int *info);

/* How an eigen-update forms its new eigenvectors (opf_tuning.product):
 * AUTO the hierarchical product from the crossover order on (hodlr.h), one
 * GEMM below it; DENSE always one GEMM; STRUCTURED the hierarchical product
 * wherever it applies (two leaves at least). */
enum {
    OPF_PRODUCT_AUTO = 0,
    OPF_PRODUCT_DENSE = 1,
    OPF_PRODUCT_STRUCTURED = 2
};

/*
 * The settings a kernel takes from its caller rather than from a global:
 * they travel in the opf_lapack table below, so that every kernel that is
 * handed the table sees them, and two callers (threads, learners) with
 * different settings never see each other's.  opf_tuning_default() gives
 * the defaults; the testing values force paths that the defaults reach
 * only at large orders, or on other CPUs.
 */
typedef struct {
    int product;   /* OPF_PRODUCT_*; default AUTO */
    int min_order; /* the hierarchical product's crossover, and the order
                      from which secular_roots.c iterates the interior roots
                      itself; default OPF_HODLR_MIN (hodlr.h) */
    int leaf;      /* the hierarchy's largest leaf, OPF_HODLR_LEAF_MIN to
                      OPF_HODLR_LEAF (the workspace holds either); default
                      OPF_HODLR_LEAF */
    int decline;   /* testing: nonzero makes every hierarchical product
                      decline (the GEMM fallback); default 0 */
    int cpu_level; /* the highest instruction-set version the exp kernels
                      may run (vexp.h: 0 baseline, 1 AVX2, 2 AVX-512), -1
                      (default) the detected one; a level the CPU lacks
                      runs the detected one */
} opf_tuning;

opf_tuning opf_tuning_default(void);

typedef struct {
    opf_dgemm_t dgemm;
    opf_dgemv_t dgemv;
    opf_dlaed4_t dlaed4;
    opf_dsyevr_t dsyevr;
    opf_dsytrd_t dsytrd;
    opf_dstemr_t dstemr;
    opf_dormtr_t dormtr;
    opf_tuning tune;
    /* NULL, or a counter of the hierarchical products done with this table
     * (incremented atomically: tests check that a path was taken) */
    long long *n_structured;
    /* NULL, or the worker threads of the call's owner (pool.h): the
     * hierarchical product and the secular solve split their work over
     * them, with the same results as on one thread */
    opf_pool *pool;
} opf_lapack;

/* 1 if every routine of the table is set. */
static inline int opf_lapack_ok(const opf_lapack *fns)
{
    return fns != NULL && fns->dgemm && fns->dgemv && fns->dlaed4
           && fns->dsyevr;
}

/*
 * z[0..n) = Q^T x for the rows x of length m: Q is row-major m x n with
 * leading dimension ldq (its columns are eigenvectors), i.e. z_j = sum_i
 * q[i ldq + j] x_i.  Column-major BLAS sees that memory as the n x m matrix
 * Q^T, so this is GEMV 'N'.
 */
static inline void opf_gemv_qt(const opf_lapack *fns, int m, int n,
                               const double *q, int ldq, const double *x,
                               double *z)
{
    int inc = 1;
    double one = 1.0, zero = 0.0;
    char nt = 'N';
    fns->dgemv(&nt, &n, &m, &one, (double *)q, &ldq, (double *)x, &inc,
               &zero, z, &inc);
}

/*
 * C = A B^T for row-major A (m x k, lda) and B (n x k, ldb) into row-major
 * C (m x n, ldc).  Column-major BLAS sees row-major X as X^T, so it
 * computes C^T = B A^T: GEMM('T', 'N') on (B^T as stored, A^T as stored).
 */
static inline void opf_gemm_abt(const opf_lapack *fns, int m, int n, int k,
                                const double *a, int lda, const double *b,
                                int ldb, double *c, int ldc)
{
    double one = 1.0, zero = 0.0;
    char tr = 'T', nt = 'N';
    fns->dgemm(&tr, &nt, &n, &m, &k, &one, (double *)b, &ldb, (double *)a,
               &lda, &zero, c, &ldc);
}

/* Carve `count` consecutive arrays of `len` doubles from a caller's
 * workspace starting at p: *parts[i] = p + i len.  Returns the end, where
 * the next (differently sized) array starts. */
static inline double *opf_carve(double *p, size_t len, double **const *parts,
                                int count)
{
    for (int i = 0; i < count; i++, p += len)
        *parts[i] = p;
    return p;
}

/*
 * The explicit directions of an ascending spectrum lam[0..n): n minus the
 * size of its top group, the entries within 4 eps max(1, |top|) of the
 * largest (the cluster of the clustered state, state_clustered.c, which merges
 * entries within that tolerance).  The one definition of m that
 * state="auto" compares in both representations.  O(n - m).
 */
static inline ptrdiff_t opf_explicit_count(const double *lam, ptrdiff_t n)
{
    const double top = lam[n - 1];
    const double tol = 4.0 * 2.220446049250313e-16
                       * (1.0 > (top < 0 ? -top : top)
                              ? 1.0 : (top < 0 ? -top : top));
    ptrdiff_t c = 0;
    while (c < n && lam[n - 1 - c] >= top - tol)
        c++;
    return n - c;
}

/* b[j * ldb + i] = a[i * lda + j] for i < m, j < n: the transpose of the
 * row-major m x n matrix a into the row-major n x m matrix b, in cache
 * blocks (a strided pass over one of them would miss the cache on every
 * element).  Exact: a copy. */
void opf_transpose(ptrdiff_t m, ptrdiff_t n, const double *a, ptrdiff_t lda,
                   double *b, ptrdiff_t ldb);

/* The k-th largest of v[0..n) (1 <= k <= n), reordering v: Hoare
 * selection with a median-of-three pivot, O(n) expected. */
double opf_kth_largest(double *v, ptrdiff_t n, ptrdiff_t k);

#endif
