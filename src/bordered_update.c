/*
 * bordered_update.c -- eigensystem of [[A, y], [y^T, kappa]] from that of A.
 *
 * Contract (see bordered_update.h): A = Q diag(d) Q^T of order m, d
 * ascending, Q orthogonal (row-major, columns are eigenvectors, leading
 * dimension ldq); on success d[0..m] and the leading (m+1) x (m+1) block of
 * q hold the ascending eigenvalues and orthonormal eigenvectors of the
 * bordered matrix.  No allocation.
 *
 * Splitting.  With beta = |y|, f = (y/beta, 0) and e = e_{m+1},
 *
 *     [[A, y], [y^T, kappa]] = [[A, 0], [0, kappa]] + beta (f e^T + e f^T)
 *                            = blockdiag(A, kappa)
 *                              + (beta/2) (f + e)(f + e)^T
 *                              - (beta/2) (f - e)(f - e)^T,
 *
 * because f is orthogonal to e.  The eigensystem of blockdiag(A, kappa) is
 * Q extended by the unit vector e with eigenvalue kappa, inserted at its
 * sorted position (one shift of the trailing columns of every row, O(m^2)
 * memory moves); then two rank-one updates (rank_one_update.c) with
 * rho = +beta/2, x = (y/beta, +1) and rho = -beta/2, x = (y/beta, -1).
 * (Any other placeholder kappa0 on the new diagonal also gives exactly two
 * rank-one terms -- the eigenpairs of the 2 x 2 matrix [[0, beta],
 * [beta, kappa - kappa0]] in the basis (f, e) -- but kappa0 = kappa makes
 * them the symmetric +-beta/2 pair, whose norms never exceed that of the
 * bordered matrix.)
 *
 * Deflation inside the rank-one updates is what keeps low-rank kernel
 * matrices cheap: a kernel matrix of rank rho has m - rho eigenvalues at
 * rounding level; y is (up to rounding) orthogonal to their eigenvectors, so
 * those components of Q^T x are dropped and the near-equal eigenvalues are
 * merged, and only about rho + 1 eigenpairs enter the secular equation and
 * the GEMM.
 *
 * Cost: O(m^2) (shift, two GEMVs, deflation, merges) + O(m k1^2 + m k2^2)
 * for the two GEMMs, k1, k2 the non-deflated orders.  Backward error: that
 * of two rank-one updates, each within 8 eps max(|d|, beta) of exact.
 */

#include "bordered_update.h"

#include <math.h>
#include <string.h>

size_t opf_bu_work_len(ptrdiff_t capacity)
{
    size_t c = capacity > 0 ? (size_t)capacity : 0;
    return c + opf_r1_work_len(capacity);
}

size_t opf_bu_iwork_len(ptrdiff_t capacity)
{
    return opf_r1_iwork_len(capacity);
}

/* Scaled 2-norm (no overflow for finite input unless the norm does). */
static double norm2(const double *y, ptrdiff_t m)
{
    double s = 0.0, sum = 0.0;
    ptrdiff_t i;
    for (i = 0; i < m; i++) {
        const double a = fabs(y[i]);
        s = a > s ? a : s;
    }
    if (s == 0.0)
        return 0.0;
    for (i = 0; i < m; i++) {
        const double v = y[i] / s;
        sum += v * v;
    }
    return s * sqrt(sum);
}

/* Insert eigenvalue kappa with eigenvector e_{m+1} at position p. */
static void insert(ptrdiff_t m, double *d, double *q, ptrdiff_t ldq,
                   ptrdiff_t p, double kappa)
{
    ptrdiff_t i;
    const size_t tail = (size_t)(m - p) * sizeof(double);
    for (i = 0; i < m; i++) {
        double *row = q + i * ldq;
        memmove(row + p + 1, row + p, tail);
        row[p] = 0.0;
    }
    memset(q + m * ldq, 0, (size_t)(m + 1) * sizeof(double));
    q[m * ldq + p] = 1.0;
    memmove(d + p + 1, d + p, tail);
    d[p] = kappa;
}

/* Undo insert() (the (m+1)-th row and d[m] are left as garbage). */
static void remove_inserted(ptrdiff_t m, double *d, double *q, ptrdiff_t ldq,
                            ptrdiff_t p)
{
    ptrdiff_t i;
    const size_t tail = (size_t)(m - p) * sizeof(double);
    for (i = 0; i < m; i++) {
        double *row = q + i * ldq;
        memmove(row + p, row + p + 1, tail);
    }
    memmove(d + p, d + p + 1, tail);
}

int opf_bordered_update(ptrdiff_t m, double *d, double *q, ptrdiff_t ldq,
                        const double *y, double kappa, double *work,
                        int *iwork, const opf_r1_lapack *fns,
                        opf_bu_info *info)
{
    opf_bu_info local = {0, 0, 0};
    opf_r1_info r1;
    double beta, *x = work, *r1work = work + (m + 1);
    ptrdiff_t i, p;
    int st;

    if (info == NULL)
        info = &local;
    *info = local;
    if (m < 0 || ldq < m + 1 || d == NULL || q == NULL || work == NULL
        || iwork == NULL || fns == NULL || (m > 0 && y == NULL))
        return OPF_BU_EINVAL;
    if (!isfinite(kappa))
        return OPF_BU_EY;
    for (i = 0; i < m; i++)
        if (!isfinite(y[i]))
            return OPF_BU_EY;
    beta = norm2(y, m);
    if (!isfinite(beta))
        return OPF_BU_EY;

    /* position of kappa among the ascending d: after any equal entries */
    p = m;
    for (i = 0; i < m; i++)
        if (d[i] > kappa) {
            p = i;
            break;
        }
    insert(m, d, q, ldq, p, kappa);
    if (beta == 0.0)
        return OPF_BU_OK;

    for (i = 0; i < m; i++)
        x[i] = y[i] / beta;
    x[m] = 1.0;
    st = opf_rank_one_update(m + 1, d, q, ldq, 0.5 * beta, x, r1work, iwork,
                             fns, 0, &r1);
    if (st != OPF_R1_OK) {
        remove_inserted(m, d, q, ldq, p);
        return OPF_BU_EFIRST;
    }
    info->m1 = r1.m;
    info->n_fallbacks += r1.n_bisection + r1.n_eig;
    x[m] = -1.0;
    st = opf_rank_one_update(m + 1, d, q, ldq, -0.5 * beta, x, r1work, iwork,
                             fns, 0, &r1);
    if (st != OPF_R1_OK)
        return OPF_BU_EPARTIAL;
    info->m2 = r1.m;
    info->n_fallbacks += r1.n_bisection + r1.n_eig;
    return OPF_BU_OK;
}
