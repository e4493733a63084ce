#ifndef OPF_RANK_ONE_UPDATE_H
#define OPF_RANK_ONE_UPDATE_H

#include <stddef.h>

#include "common.h"

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
 * BLAS/LAPACK are not linked: the caller passes the routines in an
 * opf_lapack table (common.h).
 */

/* Status codes (common.h; d and q are left unchanged on failure):
 * OPF_EINVAL, OPF_EEVALS, OPF_ERHO, OPF_EX, OPF_EEVECS, OPF_EOVERFLOW,
 * OPF_EFAILED (dlaed4, bisection and dsyevr all failed). */

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

/* What one call did (all zero for a no-op). */
typedef struct {
    ptrdiff_t m;                 /* order of the secular equation solved */
    ptrdiff_t n_reflectors;      /* Householder reflectors (exact ties) */
    ptrdiff_t n_rotations;       /* Givens rotations (near ties) */
    ptrdiff_t n_dlaed4_failures; /* roots where dlaed4 failed its checks */
    ptrdiff_t n_bisection;       /* roots solved by bisection instead */
    ptrdiff_t n_eig;             /* 1 if the block was solved by dsyevr */
    ptrdiff_t n_structured;      /* 1 if the eigenvectors were formed by the
                                    hierarchical product (hodlr.h) */
    ptrdiff_t n_product_fallbacks; /* 1 if it declined: one GEMM instead */
} opf_r1_info;

/* Workspace lengths for opf_rank_one_update at order n. */
size_t opf_r1_work_len(ptrdiff_t n);  /* doubles: 2 n^2 + 40 n + 26 */
size_t opf_r1_iwork_len(ptrdiff_t n); /* ints:   23 n + 10 */

/*
 * Overwrite d (n, ascending) and q (n x n, see Layout) with the eigensystem
 * of Q diag(d) Q^T + rho x x^T.  rho == 0 or Q^T x == 0 leaves d and q
 * untouched (and so does an update below the deflation tolerance).
 * work/iwork: opf_r1_work_len(n) doubles, opf_r1_iwork_len(n) ints; no
 * other memory is allocated.  info may be NULL.  flags: 0, or the testing
 * switches OPF_FORCE_BISECTION / OPF_FORCE_EIG (common.h).
 *
 * Returns OPF_OK or a negative status; on failure d and q are unchanged.
 */
int opf_rank_one_update(ptrdiff_t n, double *d, double *q, ptrdiff_t ldq,
                        double rho, const double *x, double *work, int *iwork,
                        const opf_lapack *fns, int flags,
                        opf_r1_info *info);

/*
 * The same with the deflation tolerance's scale max_j |d_j| capped at
 * dscale (> 0; INFINITY: the call above):
 *
 *     tol = OPF_R1_DEFLATION_FACTOR * eps * max(min(max_j |d_j|, dscale), r).
 *
 * For the learners' log-weights (state_dense.c, state_clustered.c): eigenvalues far
 * below the ones that carry weight (a log-weight -1e15 after one spike)
 * must neither set the tolerance -- every later update would be deflated
 * and the learner freeze -- nor be floored, which would tie them and lose
 * which directions lead.  Poles are still solved exactly; a pair of poles
 * that the smaller tolerance no longer deflates is solved by the secular
 * equation (or its bisection / dsyevr fallbacks).
 */
int opf_rank_one_update_scaled(ptrdiff_t n, double *d, double *q,
                               ptrdiff_t ldq, double rho, const double *x,
                               double *work, int *iwork,
                               const opf_lapack *fns, int flags,
                               double dscale, opf_r1_info *info);

#endif
