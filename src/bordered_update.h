#ifndef OPF_BORDERED_UPDATE_H
#define OPF_BORDERED_UPDATE_H

#include <stddef.h>

#include "rank_one_update.h"

/*
 * Eigensystem of a symmetric matrix grown by one row and column, in place:
 *
 *     [ A    y     ]                          A = Q diag(d) Q^T   (order m)
 *     [ y^T  kappa ]  =  Q' diag(d') Q'^T,    d' ascending        (order m+1)
 *
 * as ONE arrowhead eigenproblem: in the basis blockdiag(Q, 1) the bordered
 * matrix is [[diag(d), z], [z^T, kappa]] with z = Q^T y; after deflation
 * its non-deflated part is solved by one secular equation and the
 * eigenvectors are formed by one GEMM (see bordered_update.c).  This is how
 * the online kernel PCA learner keeps the eigensystem of the kernel matrix
 * of all past instances without re-diagonalising it.
 *
 * Layout as rank_one_update.h: q is row-major with leading dimension
 * ldq >= m + 1 and its COLUMNS are the eigenvectors; d and q must have room
 * for order m + 1 (the (m+1)-th row and column of q and d[m] are written;
 * their input values are never read).
 */

/* Status codes (common.h): OPF_EINVAL; OPF_EY (y or kappa not finite, or
 * |y| overflows); OPF_EFAILED (d not finite or not ascending, Q^T y not
 * finite -- q holds inf or NaN --, or the secular equation and its
 * fallbacks all failed).  On failure d and q are unchanged. */

/*
 * Deflation tolerance (as rank_one_update.h, with the arrowhead's own
 * scale): a component z_j of z = Q^T y with |z_j| <= tol is dropped,
 * exactly equal eigenvalues are merged by one Householder reflector per
 * run and two nearly equal ones by a Givens rotation when the off-diagonal
 * entry it discards is <= tol, where
 *
 *     tol = OPF_R1_DEFLATION_FACTOR * eps * max(max_j |d_j|, |kappa|, |z|).
 */

/* What one call did. */
typedef struct {
    ptrdiff_t order;             /* order of the secular equation solved:
                                    non-deflated eigenvalues of A + 1, or 0
                                    when everything deflated */
    ptrdiff_t n_reflectors;      /* Householder reflectors (exact ties) */
    ptrdiff_t n_rotations;       /* Givens rotations (near ties) */
    ptrdiff_t n_dlaed4_failures; /* roots where dlaed4 failed its checks */
    ptrdiff_t n_bisection;       /* roots solved by bisection instead */
    ptrdiff_t n_eig;             /* 1 if the block was solved by dsyevr */
    ptrdiff_t n_fallbacks;       /* n_bisection + n_eig */
    ptrdiff_t n_structured;      /* as opf_r1_info (rank_one_update.h) */
    ptrdiff_t n_product_fallbacks;
} opf_bu_info;

/* Workspace for orders up to `capacity` (= the largest m + 1). */
size_t opf_bu_work_len(ptrdiff_t capacity);  /* doubles: 2 c^2 + 40 c + 26 */
size_t opf_bu_iwork_len(ptrdiff_t capacity); /* ints:    23 c + 10 */

/*
 * Grow the eigensystem (d[0..m), q) of A to that of the bordered matrix.
 * y: m entries (ignored when m == 0); kappa: the new diagonal entry.
 * work/iwork: opf_bu_work_len / opf_bu_iwork_len of some capacity >= m + 1;
 * no other memory is allocated.  flags: 0, or the testing switches
 * OPF_FORCE_BISECTION (every root by bisection) / OPF_FORCE_EIG (the
 * arrowhead block by dsyevr), and OPF_POLL_INTERRUPT: poll the SIGINT flag
 * (interrupt.h) once the block is solved and return OPF_EINTR, d and q
 * unchanged, if it is set.  info may be NULL.
 * Returns OPF_OK, OPF_EINTR or a negative status (see above).
 */
int opf_bordered_update(ptrdiff_t m, double *d, double *q, ptrdiff_t ldq,
                        const double *y, double kappa, double *work,
                        int *iwork, const opf_lapack *fns, int flags,
                        opf_bu_info *info);

#endif
