/*
 * bordered_update.c -- eigensystem of [[A, y], [y^T, kappa]] from that of A.
 *
 * Contract (see bordered_update.h): A = Q diag(d) Q^T of order m, d
 * ascending, Q orthogonal (row-major, columns are eigenvectors, leading
 * dimension ldq); on success d[0..m] and the leading (m+1) x (m+1) block of
 * q hold the ascending eigenvalues and orthonormal eigenvectors of the
 * bordered matrix.  On failure nothing is written.  No allocation.
 *
 * Method: one arrowhead eigenproblem (Gu & Eisenstat, SIAM J. Matrix Anal.
 * Appl. 16 (1995) 172-191, solve exactly this form).
 *   1. z = Q^T y (one GEMV).  In the basis blockdiag(Q, 1) the bordered
 *      matrix is the arrowhead
 *          M = [[diag(d), z], [z^T, kappa]],
 *      whose eigenvalues are the m + 1 roots of
 *          f(lam) = lam - kappa + sum_i z_i^2 / (d_i - lam),
 *      one in each of (-inf, d_0), (d_0, d_1), ..., (d_{m-1}, +inf)
 *      (f' > 0 between the poles), the eigenvector of lam being
 *      ((z_i / (lam - d_i))_i, 1), normalised.
 *   2. Deflation (secular.c, shared with the rank-one update; tolerance in
 *      the header): |z_i| <= tol leaves (d_i, (Q e_i, 0)) an eigenpair;
 *      exact ties are merged by one Householder reflector per run, near
 *      ties by Givens rotations.  k poles remain, strictly ascending; the
 *      arrowhead block has order K = k + 1.  k = 0 (y = 0, or y orthogonal
 *      to A's eigenvectors up to tol) just inserts (kappa, e_{m+1}).
 *   3. The K x K block, scaled by a power of two, is turned into a
 *      rank-one secular equation by the exact change of variable below and
 *      solved root by root by dlaed4, with the rank-one update's bisection
 *      fallback and Loewner (Gu-Eisenstat) recomputation of the weights,
 *      so that the eigenvectors are orthogonal to working precision
 *      (secular_roots.c).  If that fails, the block is formed and solved by
 *      dsyevr.
 *   4. Merge into ascending order, then ONE GEMM: the new eigenvectors are
 *      [[Q_nd V_top], [v_last]], Q_nd the m x k non-deflated columns of Q
 *      (after deflation), V the K x K block eigenvectors; deflated pairs
 *      are carried over with a 0 in the new last row (secular.c).
 *
 * The change of variable.  For sigma above the spectrum of the block,
 * sigma I - M is positive definite, and its inverse is a diagonal plus a
 * rank-one matrix (block inversion through the Schur complement s of the
 * kappa entry):
 *
 *     (sigma I - M)^{-1} = N = diag(0, g) + (1/s) v v^T,
 *     g_i = 1 / (sigma - d_i),   v = (1, (g_i z_i)_i),
 *     s   = sigma - kappa - sum_i g_i z_i^2 = -f(sigma) > 0
 *
 * (coordinates ordered kappa first, then the poles: then the poles of N,
 * 0 < g_0 < ... < g_{k-1}, ascend with d).  M and N have the same
 * eigenvectors, and mu_j = 1 / (sigma - lam_j) ascends with lam_j; N is a
 * rank-one update rho = 1/s > 0 of a diagonal -- exactly dlaed4's problem
 * (v normalised, N scaled by a power of two).  Back: lam_j = sigma -
 * 1/mu_j, and the eigenvectors of N are those of M as they stand (check
 * with the eigenvector of N, (1/mu, (g_i z_i / (g_i - mu))_i), which is
 * proportional to (1, (z_i / (lam - d_i))_i)).
 *
 * Accuracy.  sigma = max(d_{k-1}, kappa) + 2 |z| (non-deflated part, in
 * scaled units, where max(|d|, |kappa|, |z|) < 1).  Then sigma - d_i and
 * sigma - kappa are >= 2 |z|, so sum g_i z_i^2 <= |z| / 2 <= (sigma -
 * kappa) / 4: s has no cancellation; |v|^2 <= 5/4; and, since every kept
 * |z_i| > tol, g <= 1 / (8 eps): nothing overflows.  Error analysis, all
 * normwise in ||M||:
 *   - fl(1 / fl(sigma - d_i)) is the exact g of a pole moved by at most
 *     ~2 eps |sigma - d_i| <= 8 eps ||M|| -- the size of the deflation
 *     tolerance.  Rounding is monotone, so the g stay ascending; kept
 *     poles differ by > 2 tol = 16 eps max(|d|, |kappa|, |z|), i.e. by
 *     more than 3 ulps of sigma - d, so they stay distinct (checked: any
 *     violation goes to dsyevr).
 *   - fl(g_i z_i) and s carry relative errors O(eps) and O(k eps): a
 *     relative perturbation of z and a perturbation of kappa by O(k eps)
 *     (sigma - kappa) -- the same bound as evaluating f once, which every
 *     secular solver does.
 *   - dlaed4 with the Loewner weights gives eigenvalues mu_j and
 *     orthonormal eigenvectors exact for an N~ near N componentwise (Gu &
 *     Eisenstat), hence for the arrowhead M~ = sigma I - N~^{-1}, whose
 *     eigenvectors are the same vectors; lam_j = sigma - 1/mu_j adds one
 *     rounding, <= eps |sigma - lam_j| <= 4 eps ||M||.
 * So the computed eigenpairs are exact for a matrix within O(eps ||M||) of
 * the bordered one, with eigenvectors orthogonal to working precision: the
 * guarantee of a direct arrowhead root finder with Loewner vectors, and of
 * the two rank-one updates this replaces.  What the shift gives up is only
 * the componentwise (relative) accuracy of pole gaps far from sigma, which
 * enter relative to sigma - d_i rather than exactly; neither the normwise
 * bound nor kernel PCA (which zeroes eigenvalues below m eps max|lam|)
 * depends on it.  In exchange the root finder is LAPACK's, with its
 * tested convergence (a few O(k) iterations per root).
 *
 * Cost: O(m^2) (GEMV, deflation, gathers, merge) + O(K^2) (roots, Loewner)
 * + O(m k K) for the one GEMM.  For a kernel matrix of rank r, y is (up to
 * rounding) orthogonal to the eigenvectors of its zero eigenvalues, so
 * k <= r + 1 and the GEMM is m x (r + 1) x (r + 2).
 */

#include "bordered_update.h"
#include "interrupt.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "secular.h"

size_t opf_bu_work_len(ptrdiff_t capacity)
{
    return opf_sec_work_len(capacity);
}

size_t opf_bu_iwork_len(ptrdiff_t capacity)
{
    return opf_sec_iwork_len(capacity);
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

/* Everything deflated: insert eigenvalue kappa with eigenvector e_{m+1}
 * after any equal entries of d. */
static void insert(ptrdiff_t m, double *d, double *q, ptrdiff_t ldq,
                   double kappa)
{
    ptrdiff_t i, p = m;
    for (i = 0; i < m; i++)
        if (d[i] > kappa) {
            p = i;
            break;
        }
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

/*
 * Eigenpairs of the scaled arrowhead block [[kap, b^T], [b, diag(a)]]
 * (coordinates: kappa first, then the k poles a, strictly ascending; b has
 * no zero and norm bn): eigenvalues ascending in ws->lam, unit eigenvectors
 * in the columns of s (K x K, K = k + 1).  Returns 1 on success.
 */
static int solve_arrowhead(int k, const double *a, const double *b,
                           double kap, double bn, opf_sec_ws *ws, double *s,
                           double *scratch, const opf_lapack *fns,
                           int flags, opf_bu_info *info)
{
    const int K = k + 1;
    double *g = ws->dlam, *v = ws->w;

    if (!(flags & OPF_FORCE_EIG)) {
        /* N = diag(0, g) + (1/s) v v^T, see the header comment. */
        const double sigma = fmax(a[k - 1], kap) + 2.0 * bn;
        double acc = 0.0, vmax = 1.0;
        int good = 1;
        g[0] = 0.0;
        v[0] = 1.0;
        for (int l = 0; l < k; l++) {
            g[l + 1] = 1.0 / (sigma - a[l]);
            v[l + 1] = b[l] * g[l + 1];
            acc += b[l] * v[l + 1];
            vmax = fmax(vmax, fabs(v[l + 1]));
            good &= g[l + 1] > g[l] && isfinite(g[l + 1]);
        }
        const double sch = (sigma - kap) - acc;
        good &= sch > 0.0 && isfinite(sch);
        if (good) {
            double vs = 0.0;
            for (int l = 0; l < K; l++)
                vs += (v[l] / vmax) * (v[l] / vmax);
            const double vn = vmax * sqrt(vs);
            const double rho = (vn / sch) * vn;
            int e2;
            frexp(fmax(g[k], rho), &e2);
            const double sc = ldexp(1.0, e2); /* exact scaling of N */
            for (int l = 0; l < K; l++) {
                g[l] /= sc;
                v[l] /= vn;
            }
            if (opf_sec_solve(K, g, v, rho / sc, ws, s, fns, flags, 0,
                              &info->n_dlaed4_failures, &info->n_bisection)) {
                for (int j = 0; j < K; j++) /* mu ascending: lam ascending */
                    ws->lam[j] = sigma - 1.0 / (ws->lam[j] * sc);
                return 1;
            }
        }
    }
    /* Last resort: dsyevr of the block, formed in scratch (lower
     * triangle, column-major). */
    info->n_eig = 1;
    memset(scratch, 0, (size_t)K * K * sizeof *scratch);
    scratch[0] = kap;
    for (int l = 0; l < k; l++) {
        scratch[l + 1] = b[l];
        scratch[(size_t)(l + 1) * K + l + 1] = a[l];
    }
    return opf_sec_syevr(K, scratch, ws->lam, s, ws, fns);
}

int opf_bordered_update(ptrdiff_t m, double *d, double *q, ptrdiff_t ldq,
                        const double *y, double kappa, double *work,
                        int *iwork, const opf_lapack *fns, int flags,
                        opf_bu_info *info)
{
    opf_bu_info local;
    opf_sec_ws ws;
    opf_sec_defl df;
    ptrdiff_t i;

    if (info == NULL)
        info = &local;
    memset(info, 0, sizeof *info);
    if (m < 0 || m >= INT_MAX / 26 || ldq < m + 1 || ldq > INT_MAX ||
        d == NULL || q == NULL || work == NULL || iwork == NULL ||
        !opf_lapack_ok(fns) || (m > 0 && y == NULL) ||
        (flags & ~(OPF_FORCE_BISECTION | OPF_FORCE_EIG | OPF_POLL_INTERRUPT)))
        return OPF_EINVAL;
    if (!isfinite(kappa))
        return OPF_EY;
    for (i = 0; i < m; i++)
        if (!isfinite(y[i]))
            return OPF_EY;
    if (!isfinite(norm2(y, m)))
        return OPF_EY;
    for (i = 0; i < m; i++)
        if (!isfinite(d[i]) || (i > 0 && d[i] < d[i - 1]))
            return OPF_EFAILED;
    if (m == 0) {
        d[0] = kappa;
        q[0] = 1.0;
        return OPF_OK;
    }

    const int mi = (int)m, ldqi = (int)ldq; /* Fortran takes int * */
    opf_sec_layout(m + 1, work, iwork, &ws);

    /* 1. z = Q^T y */
    opf_gemv_qt(fns, mi, mi, q, ldqi, y, ws.zq);
    double zmax = 0.0;
    for (int j = 0; j < mi; j++) {
        if (!isfinite(ws.zq[j]))
            return OPF_EFAILED;
        zmax = fmax(zmax, fabs(ws.zq[j]));
    }
    if (zmax == 0.0) {
        insert(m, d, q, ldq, kappa);
        return OPF_OK;
    }
    double sum = 0.0;
    for (int j = 0; j < mi; j++) {
        const double t = ws.zq[j] / zmax;
        sum += t * t;
    }
    const double znrm = zmax * sqrt(sum); /* = |y| up to rounding */
    if (!isfinite(znrm))
        return OPF_EY;

    /* 2. Deflation (secular.c), tolerance documented in the header. */
    const double dmax = fmax(fabs(d[0]), fabs(d[mi - 1]));
    const double tol = OPF_R1_DEFLATION_FACTOR * DBL_EPSILON *
                       fmax(fmax(dmax, fabs(kappa)), znrm);
    if (zmax <= tol) {
        insert(m, d, q, ldq, kappa);
        return OPF_OK;
    }
    for (int j = 0; j < mi; j++) {
        ws.dw[j] = d[j];
        ws.u[j] = ws.zq[j] / znrm;
    }
    opf_sec_deflate(mi, znrm, tol, &ws, &df);
    const int k = df.k, K = k + 1; /* k >= 1: the largest |z_j| is kept */
    info->order = K;
    info->n_rotations = df.nrot;
    info->n_reflectors = df.nh;

    /* 3. The block, scaled by a power of two to max(|a|, |kap|, |b|) < 1.
     * a (the poles) goes to ws.zq, b (the weights) to ws.tmp: both free
     * until the eigenvectors are formed. */
    double *a = ws.zq, *b = ws.tmp;
    double big = fabs(kappa), umax = 0.0, us = 0.0;
    for (int l = 0; l < k; l++) {
        big = fmax(big, fabs(ws.dw[ws.nd[l]]));
        umax = fmax(umax, fabs(ws.u[ws.nd[l]]));
    }
    for (int l = 0; l < k; l++) {
        const double t = ws.u[ws.nd[l]] / umax;
        us += t * t;
    }
    const double bn0 = znrm * (umax * sqrt(us)); /* |z| of the block */
    int e2;
    frexp(fmax(big, bn0), &e2);
    const double scale = ldexp(1.0, e2);
    const double zs = znrm / scale;
    for (int l = 0; l < k; l++) {
        a[l] = ws.dw[ws.nd[l]] / scale;
        b[l] = ws.u[ws.nd[l]] * zs;
    }
    double *S = ws.big;
    if (!solve_arrowhead(k, a, b, kappa / scale, bn0 / scale, &ws, S,
                         S + (size_t)K * K, fns, flags & ~OPF_POLL_INTERRUPT,
                         info))
        return OPF_EFAILED;
    /* the last point where the update can stop with d and q unchanged */
    if (opf_interrupt_poll(flags & OPF_POLL_INTERRUPT, OPF_POLL_BORDERED))
        return OPF_EINTR;
    info->n_fallbacks = info->n_bisection + info->n_eig;

    /* 4. Merge (deflated first on ties) and write d; nothing can fail from
     * here on.  Then the eigenvectors: rows 0..m-1 by one GEMM of the
     * non-deflated columns by S's pole rows (S + 1, leading dimension K),
     * row m from S's kappa row (deflated pairs: 0). */
    for (int j = 0; j < K; j++)
        ws.lam[j] *= scale;
    opf_sec_merge(K, ws.lam, df.ndf, 1, d, &ws);
    opf_sec_vectors(mi, k, K, S + 1, K, 1, &df, q, ldqi, &ws,
                    (size_t)K * K, fns);
    info->n_structured = ws.n_structured;
    info->n_product_fallbacks = ws.n_product_fallbacks;
    double *last = q + m * ldq;
    for (int c = 0; c < K; c++)
        last[ws.onew[c]] = S[(size_t)c * K];
    for (int j = 0; j < df.ndf; j++)
        last[ws.odf[j]] = 0.0;
    return OPF_OK;
}
