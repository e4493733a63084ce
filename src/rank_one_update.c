/*
 * rank_one_update.c -- eigensystem of Q diag(d) Q^T + rho x x^T, in place.
 *
 * Contract (see rank_one_update.h): d ascending, Q orthogonal (row-major,
 * columns are eigenvectors), rho of either sign; on success d and Q hold
 * the ascending eigenvalues and orthonormal eigenvectors of the update.  On
 * failure nothing is written.  No allocation: all workspace is the caller's.
 *
 * Method: Gu & Eisenstat (SIAM J. Matrix Anal. Appl. 15, 1994), as LAPACK's
 * divide and conquer applies it.
 *   1. z = Q^T x (one GEMV).  rho < 0 is reduced to rho > 0 by negating and
 *      reversing the eigenvalues ("working order"); the result is reversed
 *      back when it is written.
 *   2. Deflation as dlaed2/dlaed8: components of z below the tolerance are
 *      dropped (their eigenpairs are kept), and each pair of nearly equal
 *      eigenvalues is merged by a Givens rotation that moves z's weight
 *      onto the second of them.  A run of c exactly equal eigenvalues (the
 *      common case: capped learners) is merged at once by one Householder
 *      reflector, O(n c) with no dependency chain, where c - 1 chained
 *      rotations would be latency bound.  Both are applied row by row.
 *   3. The m non-deflated roots of 1 + rho sum w_j^2 / (d_j - lambda) by
 *      LAPACK dlaed4, which also returns d_j - lambda accurately (from the
 *      structured product's crossover on, fns->tune.min_order, the
 *      interior roots by the same fixed weight iteration with vectorised
 *      sums, secular_roots.c, dlaed4 if it does not converge).  A root
 *      dlaed4 fails on is found by bisection on its interlacing interval;
 *      if that fails too the m x m block is solved by dsyevr (MRRR, a
 *      method that does not go through dlaed4).
 *   4. w recomputed by the Loewner formula from those differences (as
 *      dlaed3/dlaed9), so the secular eigenvectors w_j / (d_j - lambda_i)
 *      are orthogonal to working precision.
 *   5. One GEMM of Q's non-deflated columns (gathered into a contiguous
 *      block) by the m x m secular eigenvectors -- from the crossover on
 *      (fns->tune: opf_structured_product) a hierarchical product,
 *      O(n m r log m) (hodlr.c) -- and a merge that puts deflated and new
 *      eigenpairs in ascending order.
 * Cost: O(n^2) (GEMV, deflation, gathers, merge; O(n c) for a cluster of
 * c) + O(m^2) (roots: a few O(m) sweeps each; Loewner) + the product,
 * O(n m^2) as one GEMM, O(n m r log m) hierarchical: the product is most
 * of an update that deflates little.
 * Workspace: 2 n^2 + O(n) doubles, 23 n + O(1) ints.
 * Deflation, the secular solve, the merge and the GEMM (steps 2-5) are in
 * secular.c and secular_roots.c, shared with the bordered update
 * (bordered_update.c).
 */

#include "rank_one_update.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "hodlr.h"
#include "secular.h"

size_t opf_r1_work_len(ptrdiff_t n) { return opf_sec_work_len(n); }

size_t opf_r1_iwork_len(ptrdiff_t n) { return opf_sec_iwork_len(n); }

/*
 * Eigenpairs of diag(dlam) + rho w w^T (dlam strictly ascending, rho > 0,
 * |w| = 1): lam ascending, unit eigenvectors in the columns of s (s + i m),
 * the whole array reversed if reverse (opf_reverse).  Returns 1 on success.
 */
static int solve_block(int m, const double *dlam, const double *w, double rho,
                       opf_sec_ws *ws, double *s, double *scratch,
                       const opf_lapack *fns, int flags, int reverse,
                       opf_r1_info *info)
{
    if (m == 1) {
        ws->lam[0] = dlam[0] + rho * w[0] * w[0];
        s[0] = 1.0;
        return 1;
    }
    if (!(flags & OPF_FORCE_EIG) &&
        opf_sec_solve(m, dlam, w, rho, ws, s, fns, flags, reverse,
                      &info->n_dlaed4_failures, &info->n_bisection))
        return 1;
    /* Last resort: dsyevr of diag(dlam) + rho w w^T, formed in scratch
     * (column j of the lower triangle). */
    info->n_eig = 1;
    for (int j = 0; j < m; j++) {
        double *col = scratch + (ptrdiff_t)j * m;
        for (int i = j; i < m; i++)
            col[i] = rho * w[i] * w[j];
        col[j] += dlam[j];
    }
    if (!opf_sec_syevr(m, scratch, ws->lam, s, ws, fns))
        return 0;
    if (reverse)
        opf_reverse(s, (size_t)m * m);
    return 1;
}

/* ---- the update --------------------------------------------------------- */

int opf_rank_one_update(ptrdiff_t n, double *d, double *q, ptrdiff_t ldq,
                        double rho, const double *x, double *work, int *iwork,
                        const opf_lapack *fns, int flags, opf_r1_info *info)
{
    return opf_rank_one_update_scaled(n, d, q, ldq, rho, x, work, iwork, fns,
                                      flags, INFINITY, info);
}

int opf_rank_one_update_scaled(ptrdiff_t n, double *d, double *q,
                               ptrdiff_t ldq, double rho, const double *x,
                               double *work, int *iwork,
                               const opf_lapack *fns, int flags,
                               double dscale, opf_r1_info *info)
{
    opf_r1_info scratch_info;
    opf_sec_ws ws;
    opf_sec_defl df;

    if (info == NULL)
        info = &scratch_info;
    memset(info, 0, sizeof *info);
    if (n < 0 || n > INT_MAX / 26 || ldq < (n > 1 ? n : 1) || ldq > INT_MAX ||
        (flags & ~(OPF_FORCE_BISECTION | OPF_FORCE_EIG)) ||
        !opf_lapack_ok(fns))
        return OPF_EINVAL;
    if (n == 0)
        return OPF_OK;
    if (!d || !q || !x || !work || !iwork)
        return OPF_EINVAL;
    if (!isfinite(rho))
        return OPF_ERHO;
    for (ptrdiff_t j = 0; j < n; j++)
        if (!isfinite(d[j]) || (j > 0 && d[j] < d[j - 1]))
            return OPF_EEVALS;
    for (ptrdiff_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return OPF_EX;
    if (rho == 0.0)
        return OPF_OK;

    int ni = (int)n, ldqi = (int)ldq; /* Fortran takes int * */
    opf_sec_layout(n, work, iwork, &ws);

    /* 1. z = Q^T x */
    opf_gemv_qt(fns, ni, ni, q, ldqi, x, ws.zq);
    for (int i = 0; i < ni; i++)
        if (!isfinite(ws.zq[i]))
            return OPF_EEVECS;

    /* Working order: ascending eigenvalues of sg * A, sg = sign(rho). */
    const int sg = rho > 0.0 ? 1 : -1;
#define COL(k) (sg > 0 ? (k) : ni - 1 - (k))
    double zmax = 0.0;
    for (int k = 0; k < ni; k++) {
        ws.dw[k] = sg * d[COL(k)];
        ws.u[k] = ws.zq[COL(k)];
        zmax = fmax(zmax, fabs(ws.u[k]));
    }
#undef COL
    if (zmax == 0.0)
        return OPF_OK; /* x orthogonal to everything: exact no-op */
    double sum = 0.0;
    for (int k = 0; k < ni; k++) {
        const double t = ws.u[k] / zmax;
        sum += t * t;
    }
    const double znrm = zmax * sqrt(sum);
    const double r = fabs(rho) * znrm * znrm; /* 2-norm of the update */
    if (!isfinite(r))
        return OPF_EOVERFLOW;
    if (r == 0.0)
        return OPF_OK;
    for (int k = 0; k < ni; k++)
        ws.u[k] /= znrm;

    /* 2. Deflation (secular.c), tolerance documented in the header. */
    const double dmax = fmin(fmax(fabs(d[0]), fabs(d[ni - 1])), dscale);
    const double tol = OPF_R1_DEFLATION_FACTOR * DBL_EPSILON * fmax(dmax, r);
    if (r * (zmax / znrm) <= tol)
        return OPF_OK; /* the whole update is below the tolerance */
    opf_sec_deflate(ni, r, tol, &ws, &df);
    const int m = df.k; /* >= 1: the largest component is kept */
    info->m = m;
    info->n_rotations = df.nrot;
    info->n_reflectors = df.nh;

    /* 3-4. The secular block, scaled by a power of two (exact) to norm
     * ~1 as dstedc does, with w renormalised as dlaed4 assumes. */
    double big = r, wz = 0.0;
    for (int l = 0; l < m; l++) {
        big = fmax(big, fabs(ws.dw[ws.nd[l]]));
        wz = fmax(wz, fabs(ws.u[ws.nd[l]]));
    }
    int e2;
    frexp(big, &e2);
    const double scale = ldexp(1.0, e2);
    double wsum = 0.0;
    for (int l = 0; l < m; l++) {
        const double t = ws.u[ws.nd[l]] / wz;
        wsum += t * t;
    }
    const double wn = wz * sqrt(wsum);
    for (int l = 0; l < m; l++) {
        ws.dlam[l] = ws.dw[ws.nd[l]] / scale;
        ws.w[l] = ws.u[ws.nd[l]] / wn;
    }
    const double rho_s = (r / scale) * wn * wn;

    /* The product's path, decided once here (S's layout and the product
     * must agree).  With nothing deflated and rho < 0 the hierarchical
     * product needs S's rows and columns in the same (interlacing) order:
     * the whole array reversed, which the Loewner pass does while each
     * column is in cache; Q's rows are then read as they are (the new
     * vectors, Q J S J in working order, are Q (J S J)). */
    ws.hier = opf_structured_product(m, &fns->tune);
    const int reversed = df.ndf == 0 && sg < 0 && ws.hier;
    double *S = ws.big;
    if (!solve_block(m, ws.dlam, ws.w, rho_s, &ws, S, S + (size_t)m * m, fns,
                     flags, reversed, info))
        return OPF_EFAILED;

    /* Merge into ascending order (deflated first on ties) and write d.
     * Nothing can fail from here on. */
    for (int l = 0; l < m; l++)
        ws.lam[l] *= scale;
    opf_sec_merge(m, ws.lam, df.ndf, sg, d, &ws);

    /* 5. Eigenvectors: one GEMM  Q_new[:, new] = Q[:, nd] S.  With nothing
     * deflated the i-th new vector goes to column COL(i): order S's columns
     * that way so that the GEMM writes straight into Q. */
    int gsign = sg;
    if (df.ndf == 0 && sg < 0) {
        if (reversed) {
            gsign = 1;
        } else {
            for (int a = 0, b = m - 1; a < b; a++, b--)
                for (int k = 0; k < m; k++) {
                    const double t = S[(size_t)a * m + k];
                    S[(size_t)a * m + k] = S[(size_t)b * m + k];
                    S[(size_t)b * m + k] = t;
                }
        }
        for (int c = 0; c < m; c++)
            ws.onew[c] = c;
    }
    opf_sec_vectors(ni, m, m, S, m, gsign, &df, q, ldqi, &ws, (size_t)m * m,
                    fns);
    info->n_structured = ws.n_structured;
    info->n_product_fallbacks = ws.n_product_fallbacks;
    return OPF_OK;
}
