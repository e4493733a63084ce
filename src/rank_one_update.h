#ifndef OPF_RANK_ONE_UPDATE_H
#define OPF_RANK_ONE_UPDATE_H

#include <stddef.h>

/*
 * Eigensystem of a symmetric rank-one update, in place:
 *
 *     Q diag(d) Q^T + rho x x^T  =  Q' diag(d') Q'^T,   d' ascending.
 *
 * Gu & Eisenstat's method as LAPACK's divide and conquer uses it
 * (dlaed2/dlaed8 deflation, dlaed4 roots, dlaed3/dlaed9 Loewner
 * eigenvectors), for either sign of rho.  See rank_one_update.c.
 *
 * Layout: q is row-major (C order) with leading dimension ldq >= n, and its
 * COLUMNS are the eigenvectors: component i of the eigenvector of d[j] is
 * q[i * ldq + j].  (For Fortran BLAS this array is Q^T in column-major
 * order.)
 *
 * BLAS/LAPACK are not linked: the caller passes the routines (Fortran
 * calling convention, 32-bit integers, as scipy.linalg.cython_blas and
 * cython_lapack export them).
 */

/* Status codes (negative: failure; d and q are then left unchanged). */
#define OPF_R1_OK 0
#define OPF_R1_EINVAL -1     /* size, leading dimension, pointer or flag */
#define OPF_R1_EEVALS -10    /* d not finite or not ascending */
#define OPF_R1_ERHO -11      /* rho not finite */
#define OPF_R1_EX -12        /* x not finite */
#define OPF_R1_EEVECS -13    /* Q^T x not finite: q holds inf or NaN */
#define OPF_R1_EOVERFLOW -14 /* |rho| * |x|^2 overflows */
#define OPF_R1_EFAILED -15   /* dlaed4, bisection and dsyevr all failed */

/*
 * Deflation tolerance: a component of the unit vector u = Q^T x / |Q^T x| is
 * dropped when r |u_j| <= tol, exactly equal eigenvalues are always merged
 * (one Householder reflector per run), and two nearly equal ones by a
 * Givens rotation when the off-diagonal entry it discards,
 * |(d_j - d_i) c s|, is <= tol, where
 *
 *     tol = OPF_R1_DEFLATION_FACTOR * eps * max(max_j |d_j|, r),
 *     r   = |rho| |x|^2  (the 2-norm of the update term),
 *
 * so every deflation perturbs the matrix by at most 8 eps ||A||-ish.  8 is
 * LAPACK's factor in dlaed2/dlaed8; LAPACK raised it to 64 in 2026 (PR 1317)
 * and reverted that (PR 1372) because close pairs were then deflated instead
 * of solved and eigenvectors lost accuracy.
 */
#define OPF_R1_DEFLATION_FACTOR 8.0

/* flags: testing switches that force the fallback paths. */
#define OPF_R1_FORCE_BISECTION 1 /* every root by bisection, not dlaed4 */
#define OPF_R1_FORCE_EIG 2       /* the non-deflated block by dsyevr */

typedef void (*opf_r1_dgemm_t)(char *transa, char *transb, int *m, int *n,
                               int *k, double *alpha, double *a, int *lda,
                               double *b, int *ldb, double *beta, double *c,
                               int *ldc);
typedef void (*opf_r1_dgemv_t)(char *trans, int *m, int *n, double *alpha,
                               double *a, int *lda, double *x, int *incx,
                               double *beta, double *y, int *incy);
typedef void (*opf_r1_dlaed4_t)(int *n, int *i, double *d, double *z,
                                double *delta, double *rho, double *dlam,
                                int *info);
typedef void (*opf_r1_dsyevr_t)(char *jobz, char *range, char *uplo, int *n,
                                double *a, int *lda, double *vl, double *vu,
                                int *il, int *iu, double *abstol, int *m,
                                double *w, double *z, int *ldz, int *isuppz,
                                double *work, int *lwork, int *iwork,
                                int *liwork, int *info);

typedef struct {
    opf_r1_dgemm_t dgemm;
    opf_r1_dgemv_t dgemv;
    opf_r1_dlaed4_t dlaed4;
    opf_r1_dsyevr_t dsyevr;
} opf_r1_lapack;

/* What one call did (all zero for a no-op). */
typedef struct {
    ptrdiff_t m;                 /* order of the secular equation solved */
    ptrdiff_t n_reflectors;      /* Householder reflectors (exact ties) */
    ptrdiff_t n_rotations;       /* Givens rotations (near ties) */
    ptrdiff_t n_dlaed4_failures; /* roots where dlaed4 failed its checks */
    ptrdiff_t n_bisection;       /* roots solved by bisection instead */
    ptrdiff_t n_eig;             /* 1 if the block was solved by dsyevr */
} opf_r1_info;

/* Workspace lengths for opf_rank_one_update at order n. */
size_t opf_r1_work_len(ptrdiff_t n);  /* doubles: 2 n^2 + 40 n + 26 */
size_t opf_r1_iwork_len(ptrdiff_t n); /* ints:   23 n + 10 */

/*
 * Overwrite d (n, ascending) and q (n x n, see Layout) with the eigensystem
 * of Q diag(d) Q^T + rho x x^T.  rho == 0 or Q^T x == 0 leaves d and q
 * untouched (and so does an update below the deflation tolerance).
 * work/iwork: opf_r1_work_len(n) doubles, opf_r1_iwork_len(n) ints; no
 * other memory is allocated.  info may be NULL.
 *
 * Returns OPF_R1_OK or a negative status; on failure d and q are unchanged.
 */
int opf_rank_one_update(ptrdiff_t n, double *d, double *q, ptrdiff_t ldq,
                        double rho, const double *x, double *work, int *iwork,
                        const opf_r1_lapack *fns, int flags,
                        opf_r1_info *info);

#endif
