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
 *      LAPACK dlaed4, which also returns d_j - lambda accurately.  A root
 *      dlaed4 fails on is found by bisection on its interlacing interval;
 *      if that fails too the m x m block is solved by dsyevr (MRRR, a
 *      method that does not go through dlaed4).
 *   4. w recomputed by the Loewner formula from those differences (as
 *      dlaed3/dlaed9), so the secular eigenvectors w_j / (d_j - lambda_i)
 *      are orthogonal to working precision.
 *   5. One GEMM of Q's non-deflated columns (gathered into a contiguous
 *      block) by the m x m secular eigenvectors, and a merge that puts
 *      deflated and new eigenpairs in ascending order.
 * Cost: O(n^2) (GEMV, deflation, gathers, merge; O(n c) for a cluster of
 * c) + O(m^2) (roots: a few O(m) sweeps each; Loewner) + O(n m^2) (the
 * GEMM).  At n = 1000 with nothing deflated: GEMM ~60%, roots ~35%.
 * Workspace: 2 n^2 + O(n) doubles, 23 n + O(1) ints.
 */

#include "rank_one_update.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

/* Pointers into the caller's workspace. */
typedef struct {
    double *zq;     /* n: Q^T x, original order */
    double *u;      /* n: z / |z| in working order, then deflation-altered */
    double *dw;     /* n: eigenvalues in working order, rotation-altered */
    double *dlam;   /* m: non-deflated poles, scaled */
    double *w;      /* m: non-deflated weights, unit norm */
    double *lam;    /* m: new eigenvalues, scaled */
    double *what;   /* m: Loewner weights */
    double *dd;     /* m: poles shifted to the bisection origin */
    double *tmp;    /* n: one row of Q in working order */
    double *defval; /* n: deflated eigenvalues, sorted */
    double *rc;     /* n: rotation cosines */
    double *rs;     /* n: rotation sines */
    double *hv;     /* n: Householder vectors, packed */
    double *hbeta;  /* n: their 2 / (v^T v) */
    double *syw;    /* 26 n + 1: dsyevr work */
    double *big;    /* 2 n^2: S (m x m), then G, R or the deflated columns */
    int *nd;        /* m: working index of each non-deflated pair */
    int *df;        /* n - m: working index of each deflated pair, sorted */
    int *rp, *rj;   /* rotations act on working columns (rp, rj) */
    int *hidx;      /* n: working columns of each reflector, packed */
    int *hoff;      /* n + 1: reflector h spans hidx[hoff[h] .. hoff[h+1]) */
    int *hfirst;    /* n: its first column if its columns are contiguous */
    int *onew;      /* m: output column of each new eigenvector */
    int *odf;       /* n - m: output column of each deflated eigenvector */
    int *mark;      /* n: flags per working index */
    int *list;      /* n: working indices a row pass loads */
    int *isuppz;    /* 2 n: dsyevr; later the deflated columns to move */
    int *syiw;      /* 10 n: dsyevr iwork */
} r1_ws;

size_t opf_r1_work_len(ptrdiff_t n)
{
    size_t u = n > 0 ? (size_t)n : 0;
    return 2 * u * u + 40 * u + 26;
}

size_t opf_r1_iwork_len(ptrdiff_t n)
{
    size_t u = n > 0 ? (size_t)n : 0;
    return 23 * u + 10;
}

static void r1_layout(ptrdiff_t n, double *work, int *iwork, r1_ws *s)
{
    s->zq = work;
    s->u = s->zq + n;
    s->dw = s->u + n;
    s->dlam = s->dw + n;
    s->w = s->dlam + n;
    s->lam = s->w + n;
    s->what = s->lam + n;
    s->dd = s->what + n;
    s->tmp = s->dd + n;
    s->defval = s->tmp + n;
    s->rc = s->defval + n;
    s->rs = s->rc + n;
    s->hv = s->rs + n;
    s->hbeta = s->hv + n;
    s->syw = s->hbeta + n;
    s->big = s->syw + 26 * n + 1;
    s->nd = iwork;
    s->df = s->nd + n;
    s->rp = s->df + n;
    s->rj = s->rp + n;
    s->onew = s->rj + n;
    s->odf = s->onew + n;
    s->mark = s->odf + n;
    s->list = s->mark + n;
    s->hidx = s->list + n;
    s->hoff = s->hidx + n;
    s->hfirst = s->hoff + n + 1;
    s->isuppz = s->hfirst + n;
    s->syiw = s->isuppz + 2 * n;
}

/* ---- the secular equation --------------------------------------------- */

/* f(tau) = 1/rho + sum w_k^2 / (dd_k - tau), dd = poles minus the origin. */
static double secular(int m, const double *dd, const double *w, double rhoinv,
                      double tau)
{
    double f = rhoinv;
    for (int k = 0; k < m; k++)
        f += w[k] * w[k] / (dd[k] - tau);
    return f;
}

/* delta_k = d_k - lambda_l must interlace: delta_l < 0 < delta_{l+1}. */
static int root_ok(int m, int l, const double *delta, double lam)
{
    if (!isfinite(lam) || !(delta[l] < 0.0))
        return 0;
    return l == m - 1 || delta[l + 1] > 0.0;
}

/*
 * Root l (0-based, m >= 2) by bisection on its interval (dlam_l, dlam_{l+1}),
 * or (dlam_{m-1}, dlam_{m-1} + rho |w|^2] for the last.  Like dlaed4 it works
 * relative to the nearer pole, so that the differences delta_k it returns
 * are accurate (the Loewner formula needs them).  Returns 1 on success.
 */
static int bisect_root(int m, int l, const double *dlam, const double *w,
                       double rho, double *delta, double *lam, double *dd)
{
    const double rhoinv = 1.0 / rho;
    int org = l;
    double lo, hi;

    for (int k = 0; k < m; k++)
        dd[k] = dlam[k] - dlam[l];
    if (l < m - 1) {
        const double gap = dlam[l + 1] - dlam[l];
        const double mid = 0.5 * gap;
        const double f = secular(m, dd, w, rhoinv, mid);
        if (!isfinite(f))
            return 0;
        if (f >= 0.0) {
            lo = 0.0;
            hi = mid;
        } else {
            org = l + 1;
            for (int k = 0; k < m; k++)
                dd[k] = dlam[k] - dlam[l + 1];
            lo = mid - gap;
            hi = 0.0;
        }
    } else {
        double wsum = 0.0;
        for (int k = 0; k < m; k++)
            wsum += w[k] * w[k];
        /* lambda_max - d_max <= rho |w|^2; widen for rounding. */
        hi = 2.0 * rho * wsum;
        lo = 0.0;
        if (!(hi > 0.0) || !(secular(m, dd, w, rhoinv, hi) >= 0.0))
            return 0;
    }

    /* f increases from -inf to +inf across the interval.  Stop when the
     * bracket is two adjacent floats: at most ~2100 halvings. */
    for (int it = 0; it < 2200; it++) {
        const double mid = lo + 0.5 * (hi - lo);
        if (mid <= lo || mid >= hi)
            break;
        const double f = secular(m, dd, w, rhoinv, mid);
        if (isnan(f))
            return 0;
        if (f > 0.0)
            hi = mid;
        else if (f < 0.0)
            lo = mid;
        else
            lo = hi = mid;
    }
    /* Never return the origin itself: that is a pole (delta = 0). */
    const double tau = org == l ? (lo > 0.0 ? lo : hi) : (hi < 0.0 ? hi : lo);
    for (int k = 0; k < m; k++)
        delta[k] = dd[k] - tau;
    *lam = dlam[org] + tau;
    return root_ok(m, l, delta, *lam);
}

/*
 * Loewner (dlaed3/dlaed9): the weights what_k for which the computed
 * lambdas are the exact eigenvalues are
 *     what_k^2 = -prod_i (dlam_k - lambda_i) / prod_{i != k} (dlam_k - dlam_i).
 * loewner_factor multiplies root i's factors into what (started at 1), so
 * that each column delta_i = dlam - lambda_i is used while it is in cache.
 */
static void loewner_factor(int m, int i, const double *dlam,
                           const double *delta, double *what)
{
    const double li = dlam[i];
    for (int k = 0; k < i; k++)
        what[k] *= delta[k] / (dlam[k] - li);
    what[i] *= delta[i];
    for (int k = i + 1; k < m; k++)
        what[k] *= delta[k] / (dlam[k] - li);
}

/* Overwrite the columns delta_i of s with the unit eigenvectors
 * what_k / (dlam_k - lambda_i), what signed as w.  Returns 1 on success. */
static int loewner_vectors(int m, const double *w, double *s, double *what)
{
    for (int k = 0; k < m; k++) {
        if (!(what[k] <= 0.0))
            return 0;
        what[k] = copysign(sqrt(-what[k]), w[k]);
    }
    for (int i = 0; i < m; i++) {
        double *v = s + (ptrdiff_t)i * m;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        int j = 0;
        for (int k = 0; k < m; k++) /* vectorises */
            v[k] = what[k] / v[k];
        /* four partial sums: a single one is a latency-bound chain */
        for (; j + 4 <= m; j += 4) {
            s0 += v[j] * v[j];
            s1 += v[j + 1] * v[j + 1];
            s2 += v[j + 2] * v[j + 2];
            s3 += v[j + 3] * v[j + 3];
        }
        for (; j < m; j++)
            s0 += v[j] * v[j];
        double sum = (s0 + s1) + (s2 + s3);
        if (!(sum > DBL_MIN) || !(sum < DBL_MAX)) { /* rare: rescale */
            double vmax = 0.0;
            for (int k = 0; k < m; k++)
                vmax = fmax(vmax, fabs(v[k]));
            if (!(vmax > 0.0) || !isfinite(vmax))
                return 0;
            sum = 0.0;
            for (int k = 0; k < m; k++)
                sum += (v[k] / vmax) * (v[k] / vmax);
            if (!isfinite(sum)) /* a NaN that fmax skipped */
                return 0;
            const double inv = 1.0 / (vmax * sqrt(sum));
            for (int k = 0; k < m; k++)
                v[k] *= inv;
            continue;
        }
        const double inv = 1.0 / sqrt(sum);
        for (int k = 0; k < m; k++)
            v[k] *= inv;
    }
    return 1;
}

/* Last resort: dsyevr of diag(dlam) + rho w w^T, formed in a (m x m). */
static int eig_block(int m, const double *dlam, const double *w, double rho,
                     double *lam, double *s, double *a, const r1_ws *ws,
                     const opf_r1_lapack *fns)
{
    char jobz = 'V', range = 'A', uplo = 'L';
    double vl = 0.0, vu = 0.0, abstol = 0.0;
    int il = 1, iu = m, found = 0, info = 0, ld = m;
    int lwork = 26 * m > 1 ? 26 * m : 1, liwork = 10 * m > 1 ? 10 * m : 1;

    for (int j = 0; j < m; j++) { /* column j of the lower triangle */
        double *col = a + (ptrdiff_t)j * m;
        for (int i = j; i < m; i++)
            col[i] = rho * w[i] * w[j];
        col[j] += dlam[j];
    }
    fns->dsyevr(&jobz, &range, &uplo, &ld, a, &ld, &vl, &vu, &il, &iu,
                &abstol, &found, lam, s, &ld, ws->isuppz, ws->syw, &lwork,
                ws->syiw, &liwork, &info);
    if (info != 0 || found != m)
        return 0;
    for (ptrdiff_t k = 0; k < (ptrdiff_t)m * m; k++)
        if (!isfinite(s[k]))
            return 0;
    for (int k = 0; k < m; k++)
        if (!isfinite(lam[k]))
            return 0;
    return 1;
}

/*
 * Eigenpairs of diag(dlam) + rho w w^T (dlam strictly ascending, rho > 0,
 * |w| = 1): lam ascending, unit eigenvectors in the columns of s (s + i m).
 * Returns 1 on success.
 */
static int solve_block(int m, const double *dlam, const double *w, double rho,
                       const r1_ws *ws, double *s, double *scratch,
                       const opf_r1_lapack *fns, int flags, opf_r1_info *info)
{
    double *lam = ws->lam;

    if (m == 1) {
        lam[0] = dlam[0] + rho * w[0] * w[0];
        s[0] = 1.0;
        return 1;
    }
    if (!(flags & OPF_R1_FORCE_EIG)) {
        /* For m == 2 dlaed4 (via dlaed5) returns the unit eigenvector in
         * delta rather than the differences. */
        const int vecmode = m == 2 && !(flags & OPF_R1_FORCE_BISECTION);
        int good = 1;
        for (int k = 0; k < m; k++)
            ws->what[k] = 1.0;
        for (int l = 0; l < m && good; l++) {
            double *delta = s + (ptrdiff_t)l * m;
            int ok = 0;
            if (!(flags & OPF_R1_FORCE_BISECTION)) {
                int mi = m, li = l + 1, inf = 0;
                double r = rho;
                fns->dlaed4(&mi, &li, (double *)dlam, (double *)w, delta, &r,
                            &lam[l], &inf);
                if (vecmode)
                    ok = inf == 0 && isfinite(lam[l]) && isfinite(delta[0]) &&
                         isfinite(delta[1]);
                else
                    ok = inf == 0 && root_ok(m, l, delta, lam[l]);
                if (!ok)
                    info->n_dlaed4_failures++;
            }
            if (!ok && !vecmode) {
                ok = bisect_root(m, l, dlam, w, rho, delta, &lam[l], ws->dd);
                if (ok)
                    info->n_bisection++;
            }
            if (ok && !vecmode)
                loewner_factor(m, l, dlam, delta, ws->what);
            good = ok;
        }
        if (good && (vecmode || loewner_vectors(m, w, s, ws->what)))
            return 1;
    }
    info->n_eig = 1;
    return eig_block(m, dlam, w, rho, lam, s, scratch, ws, fns);
}

/* ---- the update --------------------------------------------------------- */

/* t[k] = row[column of working index k] for the nl indices in list
 * (all n when list is NULL). */
static void load_row(double *t, const double *row, const int *list, int nl,
                     int n, int sg)
{
    if (list == NULL || nl == n) {
        if (sg > 0)
            memcpy(t, row, (size_t)n * sizeof *t);
        else
            for (int k = 0; k < n; k++)
                t[k] = row[n - 1 - k];
    } else if (sg > 0) {
        for (int j = 0; j < nl; j++)
            t[list[j]] = row[list[j]];
    } else {
        for (int j = 0; j < nl; j++)
            t[list[j]] = row[n - 1 - list[j]];
    }
}

/* Apply the deflating transformations, reflectors first, to one row t of Q
 * (in working order): t <- t H_1 ... H_nh G_1 ... G_nrot. */
static void apply_deflation(double *t, const r1_ws *ws, int nh, int nrot)
{
    const int *hidx = ws->hidx, *rp = ws->rp, *rj = ws->rj;
    const double *rc = ws->rc, *rs = ws->rs;
    for (int h = 0; h < nh; h++) {
        const int a = ws->hoff[h], c = ws->hoff[h + 1] - a;
        const double *v = ws->hv + a;
        double dot = 0.0;
        if (ws->hfirst[h] >= 0) { /* the usual case: contiguous */
            double *tc = t + ws->hfirst[h];
            double d1 = 0.0, d2 = 0.0, d3 = 0.0;
            int j = 0;
            for (; j + 4 <= c; j += 4) { /* four independent sums */
                dot += tc[j] * v[j];
                d1 += tc[j + 1] * v[j + 1];
                d2 += tc[j + 2] * v[j + 2];
                d3 += tc[j + 3] * v[j + 3];
            }
            for (; j < c; j++)
                dot += tc[j] * v[j];
            dot = ((dot + d1) + (d2 + d3)) * ws->hbeta[h];
            for (j = 0; j < c; j++)
                tc[j] -= dot * v[j];
        } else {
            const int *idx = hidx + a;
            for (int j = 0; j < c; j++)
                dot += t[idx[j]] * v[j];
            dot *= ws->hbeta[h];
            for (int j = 0; j < c; j++)
                t[idx[j]] -= dot * v[j];
        }
    }
    for (int r = 0; r < nrot; r++) {
        const double a = t[rp[r]], b = t[rj[r]];
        t[rp[r]] = rc[r] * a + rs[r] * b;
        t[rj[r]] = rc[r] * b - rs[r] * a;
    }
}

int opf_rank_one_update(ptrdiff_t n, double *d, double *q, ptrdiff_t ldq,
                        double rho, const double *x, double *work, int *iwork,
                        const opf_r1_lapack *fns, int flags, opf_r1_info *info)
{
    opf_r1_info scratch_info;
    r1_ws ws;

    if (info == NULL)
        info = &scratch_info;
    memset(info, 0, sizeof *info);
    if (n < 0 || n > INT_MAX / 26 || ldq < (n > 1 ? n : 1) || ldq > INT_MAX ||
        (flags & ~(OPF_R1_FORCE_BISECTION | OPF_R1_FORCE_EIG)) ||
        fns == NULL || !fns->dgemm || !fns->dgemv || !fns->dlaed4 ||
        !fns->dsyevr)
        return OPF_R1_EINVAL;
    if (n == 0)
        return OPF_R1_OK;
    if (!d || !q || !x || !work || !iwork)
        return OPF_R1_EINVAL;
    if (!isfinite(rho))
        return OPF_R1_ERHO;
    for (ptrdiff_t j = 0; j < n; j++)
        if (!isfinite(d[j]) || (j > 0 && d[j] < d[j - 1]))
            return OPF_R1_EEVALS;
    for (ptrdiff_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return OPF_R1_EX;
    if (rho == 0.0)
        return OPF_R1_OK;

    int ni = (int)n, ldqi = (int)ldq; /* Fortran takes int * */
    r1_layout(n, work, iwork, &ws);

    /* 1. z = Q^T x.  Row-major Q is column-major Q^T: GEMV 'N'. */
    {
        char tr = 'N';
        int one = 1;
        double alpha = 1.0, beta = 0.0;
        fns->dgemv(&tr, &ni, &ni, &alpha, q, &ldqi,
                   (double *)x, &one, &beta, ws.zq, &one);
    }
    for (int i = 0; i < ni; i++)
        if (!isfinite(ws.zq[i]))
            return OPF_R1_EEVECS;

    /* Working order: ascending eigenvalues of sg * A, sg = sign(rho). */
    const int sg = rho > 0.0 ? 1 : -1;
#define COL(k) (sg > 0 ? (k) : ni - 1 - (k))
    double zmax = 0.0;
    for (int k = 0; k < ni; k++) {
        ws.dw[k] = sg * d[COL(k)];
        ws.u[k] = ws.zq[COL(k)];
        zmax = fmax(zmax, fabs(ws.u[k]));
    }
    if (zmax == 0.0)
        return OPF_R1_OK; /* x orthogonal to everything: exact no-op */
    double sum = 0.0;
    for (int k = 0; k < ni; k++) {
        const double t = ws.u[k] / zmax;
        sum += t * t;
    }
    const double znrm = zmax * sqrt(sum);
    const double r = fabs(rho) * znrm * znrm; /* 2-norm of the update */
    if (!isfinite(r))
        return OPF_R1_EOVERFLOW;
    if (r == 0.0)
        return OPF_R1_OK;
    for (int k = 0; k < ni; k++)
        ws.u[k] /= znrm;

    /* 2. Deflation (dlaed2/dlaed8), tolerance documented in the header. */
    const double dmax = fmax(fabs(d[0]), fabs(d[ni - 1]));
    const double tol = OPF_R1_DEFLATION_FACTOR * DBL_EPSILON * fmax(dmax, r);
    if (r * (zmax / znrm) <= tol)
        return OPF_R1_OK; /* the whole update is below the tolerance */

    /* 2a. Each run of exactly equal eigenvalues with c >= 2 components
     * above the tolerance: one reflector H = I - beta v v^T with
     * H u_C = -sign(u_last) |u_C| e_last.  The other c - 1 components
     * become 0 and deflate in 2b with their eigenvalues untouched. */
    int nh = 0, nhv = 0;
    ws.hoff[0] = 0;
    for (int a = 0, b; a < ni; a = b) {
        int c = 0;
        double ss = 0.0;
        for (b = a; b < ni && ws.dw[b] == ws.dw[a]; b++)
            if (r * fabs(ws.u[b]) > tol) {
                ws.hidx[nhv + c++] = b;
                ss += ws.u[b] * ws.u[b];
            }
        if (c < 2)
            continue;
        const int last = ws.hidx[nhv + c - 1];
        const double tau = copysign(sqrt(ss), ws.u[last]);
        for (int j = 0; j < c; j++)
            ws.hv[nhv + j] = ws.u[ws.hidx[nhv + j]];
        ws.hv[nhv + c - 1] += tau;
        /* v^T v = ss + 2 tau u_last + tau^2 = 2 tau (tau + u_last) */
        ws.hbeta[nh] = 1.0 / (tau * ws.hv[nhv + c - 1]);
        for (int j = 0; j < c - 1; j++)
            ws.u[ws.hidx[nhv + j]] = 0.0;
        ws.u[last] = -tau;
        ws.hfirst[nh] = last - ws.hidx[nhv] == c - 1 ? ws.hidx[nhv] : -1;
        nhv += c;
        ws.hoff[++nh] = nhv;
    }

    /* 2b. Small components and nearly equal pairs. */
    int m = 0, ndf = 0, nrot = 0, prev = -1;
    for (int k = 0; k < ni; k++) {
        if (r * fabs(ws.u[k]) <= tol) {
            ws.df[ndf] = k;
            ws.defval[ndf++] = ws.dw[k];
            continue;
        }
        if (prev < 0) {
            prev = k;
            continue;
        }
        const double tau = hypot(ws.u[k], ws.u[prev]);
        const double c = ws.u[k] / tau, s = -ws.u[prev] / tau;
        const double t = ws.dw[k] - ws.dw[prev]; /* >= 0 */
        if (fabs(t * c * s) <= tol) {
            /* Rotate (prev, k) so that z's weight sits on k.  The rotated
             * diagonal is d_prev + t s^2, d_k - t s^2 (exact when t = 0, so
             * an exact cluster keeps its value bit for bit); the discarded
             * off-diagonal t c s is below tol. */
            const double ts2 = t * s * s;
            ws.u[k] = tau;
            ws.u[prev] = 0.0;
            ws.rp[nrot] = prev;
            ws.rj[nrot] = k;
            ws.rc[nrot] = c;
            ws.rs[nrot++] = s;
            ws.df[ndf] = prev;
            ws.defval[ndf++] = ws.dw[prev] + ts2;
            ws.dw[k] -= ts2;
        } else {
            ws.nd[m++] = prev;
        }
        prev = k;
    }
    ws.nd[m++] = prev; /* prev >= 0: the largest component is kept */
    info->m = m;
    info->n_rotations = nrot;
    info->n_reflectors = nh;

    /* Deflated eigenvalues ascending.  Rotations move a value within
     * [d_prev, d_k], so the list is nearly sorted: insertion sort. */
    for (int j = 1; j < ndf; j++) {
        const double v = ws.defval[j];
        const int idx = ws.df[j];
        int i = j - 1;
        for (; i >= 0 && ws.defval[i] > v; i--) {
            ws.defval[i + 1] = ws.defval[i];
            ws.df[i + 1] = ws.df[i];
        }
        ws.defval[i + 1] = v;
        ws.df[i + 1] = idx;
    }

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

    double *S = ws.big;
    double *G = ws.big + (size_t)m * m;
    if (!solve_block(m, ws.dlam, ws.w, rho_s, &ws, S, G, fns, flags, info))
        return OPF_R1_EFAILED;

    /* Merge into ascending order (deflated first on ties) and write d.
     * Nothing can fail from here on. */
    {
        int a = 0, b = 0;
        for (int p = 0; p < ni; p++) {
            const int oc = COL(p);
            const double vnew = a < m ? ws.lam[a] * scale : 0.0;
            if (b == ndf || (a < m && vnew < ws.defval[b])) {
                ws.onew[a++] = oc;
                d[oc] = sg * vnew;
            } else {
                ws.odf[b] = oc;
                d[oc] = sg * ws.defval[b++];
            }
        }
    }

    /* 5. Eigenvectors: one GEMM  Q_new[:, new] = Q[:, nd] S.  In
     * column-major terms the output block (m x n, ld) is S^T G^T, with G
     * (n x m, row-major) the gathered columns. */
    const size_t nn = (size_t)ni * ni, nm = (size_t)ni * m, mm = (size_t)m * m;
    char trT = 'T', trN = 'N';
    double one = 1.0, zero = 0.0;
    int mi = m;

    if (m == ni) {
        /* Nothing deflated: the i-th new vector goes to column COL(i).
         * Order S's columns that way and write straight into Q. */
        if (sg < 0)
            for (int a = 0, b = m - 1; a < b; a++, b--)
                for (int k = 0; k < m; k++) {
                    const double t = S[(size_t)a * m + k];
                    S[(size_t)a * m + k] = S[(size_t)b * m + k];
                    S[(size_t)b * m + k] = t;
                }
        for (int i = 0; i < ni; i++) {
            const double *row = q + (size_t)i * ldq;
            double *g = G + (size_t)i * m;
            load_row(g, row, NULL, 0, ni, sg);
        }
        fns->dgemm(&trT, &trN, &mi, &ni, &mi, &one, S, &mi, G, &mi,
                   &zero, q, &ldqi);
    } else if (mm + 2 * nm <= 2 * nn) {
        /* Few survivors: the GEMM writes R (n x m) and only the columns
         * that change are read and written; deflated columns that neither
         * rotate nor move stay where they are. mark: 1 rotated or
         * reflected, 2 non-deflated, 4 deflated and to be written. */
        double *R = G + nm;
        int *mark = ws.mark, *list = ws.list, *moved = ws.isuppz;
        int nl = 0, nmv = 0;
        memset(mark, 0, (size_t)ni * sizeof *mark);
        for (int t = 0; t < nrot; t++)
            mark[ws.rp[t]] = mark[ws.rj[t]] = 1;
        for (int t = 0; t < nhv; t++)
            mark[ws.hidx[t]] = 1;
        for (int l = 0; l < m; l++)
            mark[ws.nd[l]] |= 2;
        for (int k = 0; k < ni; k++)
            if (mark[k])
                list[nl++] = k;
        for (int i = 0; i < ni; i++) {
            const double *row = q + (size_t)i * ldq;
            double *g = G + (size_t)i * m;
            load_row(ws.tmp, row, list, nl, ni, sg);
            apply_deflation(ws.tmp, &ws, nh, nrot);
            for (int l = 0; l < m; l++)
                g[l] = ws.tmp[ws.nd[l]];
        }
        fns->dgemm(&trT, &trN, &mi, &ni, &mi, &one, S, &mi, G, &mi,
                   &zero, R, &mi);

        for (int j = 0; j < ndf; j++) {
            const int k = ws.df[j];
            if (ws.odf[j] != COL(k) || (mark[k] & 1)) {
                moved[nmv++] = j;
                mark[k] |= 4;
            }
        }
        nl = 0;
        for (int k = 0; k < ni; k++)
            if (mark[k] & 5)
                list[nl++] = k;
        for (int i = 0; i < ni; i++) {
            double *row = q + (size_t)i * ldq;
            const double *rr = R + (size_t)i * m;
            load_row(ws.tmp, row, list, nl, ni, sg);
            apply_deflation(ws.tmp, &ws, nh, nrot);
            for (int t = 0; t < nmv; t++)
                row[ws.odf[moved[t]]] = ws.tmp[ws.df[moved[t]]];
            for (int l = 0; l < m; l++)
                row[ws.onew[l]] = rr[l];
        }
    } else {
        /* Many survivors (m > 0.73 n): save the deflated columns (after
         * rotation) in D, let the GEMM overwrite Q[:, :m], then place
         * every column. */
        double *D = G + nm;
        for (int i = 0; i < ni; i++) {
            const double *row = q + (size_t)i * ldq;
            double *g = G + (size_t)i * m, *dv = D + (size_t)i * ndf;
            load_row(ws.tmp, row, NULL, 0, ni, sg);
            apply_deflation(ws.tmp, &ws, nh, nrot);
            for (int l = 0; l < m; l++)
                g[l] = ws.tmp[ws.nd[l]];
            for (int j = 0; j < ndf; j++)
                dv[j] = ws.tmp[ws.df[j]];
        }
        fns->dgemm(&trT, &trN, &mi, &ni, &mi, &one, S, &mi, G, &mi,
                   &zero, q, &ldqi);
        for (int i = 0; i < ni; i++) {
            double *row = q + (size_t)i * ldq;
            const double *dv = D + (size_t)i * ndf;
            memcpy(ws.tmp, row, (size_t)m * sizeof *row);
            for (int l = 0; l < m; l++)
                row[ws.onew[l]] = ws.tmp[l];
            for (int j = 0; j < ndf; j++)
                row[ws.odf[j]] = dv[j];
        }
    }
#undef COL
    return OPF_R1_OK;
}
