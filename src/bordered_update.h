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
 * as two rank-one updates (see bordered_update.c for the splitting).  This
 * is how the online kernel PCA learner keeps the eigensystem of the kernel
 * matrix of all past instances without re-diagonalising it.
 *
 * Layout as rank_one_update.h: q is row-major with leading dimension
 * ldq >= m + 1 and its COLUMNS are the eigenvectors; d and q must have room
 * for order m + 1 (the (m+1)-th row of q and d[m] are written).
 */

/* Status codes (negative: failure). */
#define OPF_BU_OK 0
#define OPF_BU_EINVAL -1     /* size, leading dimension or pointer */
#define OPF_BU_EY -30        /* y or kappa not finite, or |y| overflows */
/* The first rank-one update failed: d and q are restored to the input. */
#define OPF_BU_EFIRST -31
/* The second rank-one update failed: d and q hold the eigensystem of an
 * intermediate matrix; the caller must rebuild them (e.g. by eigh). */
#define OPF_BU_EPARTIAL -32

/* What one call did. */
typedef struct {
    ptrdiff_t m1, m2;        /* secular orders of the two rank-one updates */
    ptrdiff_t n_fallbacks;   /* bisection roots + dsyevr blocks in them */
} opf_bu_info;

/* Workspace for orders up to `capacity` (= the largest m + 1). */
size_t opf_bu_work_len(ptrdiff_t capacity);  /* doubles */
size_t opf_bu_iwork_len(ptrdiff_t capacity); /* ints */

/*
 * Grow the eigensystem (d[0..m), q) of A to that of the bordered matrix.
 * y: m entries (ignored when m == 0); kappa: the new diagonal entry.
 * work/iwork: opf_bu_work_len / opf_bu_iwork_len of some capacity >= m + 1.
 * info may be NULL.
 */
int opf_bordered_update(ptrdiff_t m, double *d, double *q, ptrdiff_t ldq,
                        const double *y, double kappa, double *work,
                        int *iwork, const opf_r1_lapack *fns,
                        opf_bu_info *info);

#endif
