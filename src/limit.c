/*
 * limit.c -- the master of eta = "auto" (OnlinePCA, OnlineAdaptivePCA) and
 * its second learner, the eta -> infinity limit of the capped update
 * (limit.h; derivation in docs/adaptive_rates.md).
 *
 * The limit learner B keeps M (in loss units) as r <= k explicit
 * directions U with values below one flat level b, every other direction
 * at b.  Its parameter is cap at zero temperature of M before flattening:
 * 1/d on the directions strictly above M's d-th eigenvalue, the rest of
 * the mass shared by the tie group at it, so it keeps U (and k - r
 * directions drawn uniformly in the tie group: U's complement, or the c
 * rows of a tie that formed below the old level).  A trial: z = U x, the
 * residual e = x - U^T z, rho = |e|; M - x x^T acts on span(U, e) as
 * diag(values, b) - v v^T, v = (z, rho): an (r+1) x (r+1) eigenproblem;
 * with r + 1 > k its largest eigenvalue is the new flat level (the cap at
 * zero temperature), and directions at the level join it (the tie group of
 * the next trial).  O(n k^2) (the rotation of the directions, one n x
 * (k+1) x (k+1) GEMM) + O(k^2).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "limit.h"
#include "rank_one_update.h"
#include "state_clustered_draw.h"


void opf_master_init(double *m)
{
    m[0] = m[1] = m[2] = 0.0;
    m[3] = 0.5;
}

double opf_master_weight(const double *m) { return m[3]; }

void opf_limit_init(double *lim, ptrdiff_t n, ptrdiff_t k)
{
    memset(lim, 0, sizeof(double) * (size_t)OPF_LIMIT_LEN(n, k));
    opf_master_init(lim);
}

size_t opf_limit_work_len(ptrdiff_t n, ptrdiff_t k)
{
    const size_t N = (size_t)k + 1;
    return 2 + 3 * N + N * N + opf_r1_work_len((ptrdiff_t)N) + (size_t)n
           + 2 * N * (size_t)n;
}

size_t opf_limit_iwork_len(ptrdiff_t k)
{
    return opf_r1_iwork_len(k + 1);
}

/* The workspace: hdr = (new b, new r), the new values, z, the
 * eigenvalues and vectors of the small problem and the rank-one update's
 * work, the residual, the stacked old directions and the new ones. */
typedef struct {
    double *hdr, *vals, *z, *ev, *zv, *r1w, *res, *old, *vnew;
} limit_ws;

static limit_ws split(double *work, ptrdiff_t n, ptrdiff_t k)
{
    const ptrdiff_t N = k + 1;
    limit_ws w;
    w.hdr = work;
    w.vals = w.hdr + 2;
    w.z = w.vals + N;
    w.ev = w.z + N;
    w.zv = w.ev + N;
    w.r1w = w.zv + N * N;
    w.res = w.r1w + opf_r1_work_len(N);
    w.old = w.res + n;
    w.vnew = w.old + N * n;
    return w;
}

/* Below this many directions the small products are plain loops: a BLAS
 * call costs more than its k n flops there (the digits, k = 2: a third of
 * the limit's time). */
#define SMALL_K 16

/* z = U v (r rows of length n), then res -= U^T z. */
static void project_out(const double *U, ptrdiff_t r, ptrdiff_t n,
                        const double *v, double *z, double *res,
                        const opf_lapack *fns)
{
    ptrdiff_t i, j;
    if (r <= SMALL_K) {
        for (j = 0; j < r; j++) {
            const double *u = U + j * n;
            double a = 0.0;
            for (i = 0; i < n; i++)
                a += u[i] * v[i];
            z[j] = a;
        }
        for (j = 0; j < r; j++) {
            const double *u = U + j * n, a = z[j];
            for (i = 0; i < n; i++)
                res[i] -= a * u[i];
        }
    } else {
        int nn = (int)n, rr = (int)r, one = 1;
        double fone = 1.0, fzero = 0.0, fm1 = -1.0;
        char tr = 'T', nt = 'N';
        fns->dgemv(&tr, &nn, &rr, &fone, (double *)U, &nn, (double *)v, &one,
                   &fzero, z, &one);
        fns->dgemv(&nt, &nn, &rr, &fm1, (double *)U, &nn, z, &one, &fone, res,
                   &one);
    }
}

/* Row j of out (N x n) = sum_i e[i N + j] row i of old (N x n). */
static void rotate_rows(const double *old, const double *e, ptrdiff_t N,
                        ptrdiff_t n, double *out, const opf_lapack *fns)
{
    ptrdiff_t i, j, l;
    if (N <= SMALL_K) {
        for (j = 0; j < N; j++) {
            double *o = out + j * n;
            for (l = 0; l < n; l++)
                o[l] = 0.0;
            for (i = 0; i < N; i++) {
                const double c = e[i * N + j], *a = old + i * n;
                for (l = 0; l < n; l++)
                    o[l] += c * a[l];
            }
        }
    } else {
        int nn = (int)n, NN = (int)N;
        double fone = 1.0, fzero = 0.0;
        char nt = 'N', tt = 'T';
        fns->dgemm(&nt, &tt, &nn, &NN, &NN, &fone, (double *)old, &nn,
                   (double *)e, &NN, &fzero, out, &nn);
    }
}

/* |T x|^2 of the tie group's c rows (after the r below ones) */
static double tie_energy(const double *T, ptrdiff_t c, ptrdiff_t n,
                         const double *x)
{
    double e = 0.0;
    ptrdiff_t i, j;
    for (j = 0; j < c; j++) {
        const double *t = T + j * n;
        double a = 0.0;
        for (i = 0; i < n; i++)
            a += t[i] * x[i];
        e += a * a;
    }
    return e;
}

int opf_limit_prepare(const double *lim, ptrdiff_t n, ptrdiff_t k,
                      const double *x, double u, double *work, int *iwork,
                      const opf_lapack *fns, double *h, double *real)
{
    limit_ws w = split(work, n, k);
    const ptrdiff_t r = (ptrdiff_t)lim[5], c = (ptrdiff_t)lim[4],
                    d = n - k;
    const double *vals = lim + OPF_LIMIT_HEAD;
    const double *U = vals + k + 1;
    double xx = 0.0, rho2 = 0.0, nb = 0.0;
    ptrdiff_t i, j, N, cnt, keep, tied = 0;
    for (i = 0; i < n; i++) {
        xx += x[i] * x[i];
        w.res[i] = x[i];
    }
    if (r > 0) /* z = U x, e = x - U^T z (twice when x is mostly in U) */
        project_out(U, r, n, x, w.z, w.res, fns);
    for (i = 0; i < n; i++)
        rho2 += w.res[i] * w.res[i];
    if (r > 0 && rho2 < xx / 16.0) {
        double *z2 = w.ev; /* scratch until the eigenproblem */
        project_out(U, r, n, w.res, z2, w.res, fns);
        for (j = 0; j < r; j++)
            w.z[j] += z2[j];
        rho2 = 0.0;
        for (i = 0; i < n; i++)
            rho2 += w.res[i] * w.res[i];
    }
    /* W = cap_inf(M): 1/d on the a = n - r - c directions strictly above
     * the d-th eigenvalue, the remaining (d - a) / d shared by its tie
     * group, 0 below.  c = 0: the whole flat space is the tie group (a =
     * 0, weight 1/(n - r) each); else its c rows are stored (a = d - 1).
     * The corner keeps the r below and k - r directions drawn uniformly in
     * the tie group. */
    if (c > 0) {
        const double t2 = fmin(tie_energy(U + r * n, c, n, w.res), rho2);
        const double a = (double)(n - r - c);
        *h = rho2 - t2 + ((double)d - a) * t2 / (double)c;
        *real = fmax(0.0, rho2 - opf_haar_energy(k - r, c, u, t2));
    } else {
        *h = (double)d * rho2 / (double)(n - r);
        *real = r >= k ? rho2
                       : fmax(0.0, rho2 - opf_haar_energy(k - r, n - r, u,
                                                          rho2));
    }
    /* the eigenproblem of diag(values, 0) - v v^T on span(U, e) (the tie
     * group is at the level: M's update is flat_d(M) - x x^T) */
    N = (rho2 > 1e-24 * xx && rho2 > 0.0) ? r + 1 : r;
    if (N > 0) { /* Gu-Eisenstat on the identity: eigenvectors in zv's
                    columns (row-major), eigenvalues ascending in ev */
        const double rho = sqrt(rho2);
        int st;
        w.z[r] = rho; /* v = (z, rho) when N = r + 1 */
        for (j = 0; j < N; j++) {
            w.ev[j] = j < r ? vals[j] : 0.0;
            for (i = 0; i < N; i++)
                w.zv[j * N + i] = i == j ? 1.0 : 0.0;
        }
        /* the deflation tolerance at this update's scale: values far below
         * the level (old, cumulative) must not set it */
        st = opf_rank_one_update_scaled(N, w.ev, w.zv, N, -1.0, w.z, w.r1w,
                                        iwork, fns, 0, xx, NULL);
        if (st != OPF_OK)
            return st;
        if (r > 0)
            memcpy(w.old, U, sizeof(double) * (size_t)(r * n));
        if (N > r)
            for (i = 0; i < n; i++)
                w.old[r * n + i] = w.res[i] / rho;
        /* new row j = sum_i zv[i N + j] old row i */
        rotate_rows(w.old, w.zv, N, n, w.vnew, fns);
    }
    cnt = N;
    {
        /* a value within 1e-12 |x|^2 of the level ties with it: the
         * update's rounding near the level is of that size (the level moved
         * by at most |x|^2), whatever the values far below it */
        const double tol = 1e-12 * xx;
        if (N > k) { /* the cap at zero temperature: the d-th largest, the
                        top of the small problem, is the new level */
            nb = w.ev[N - 1];
            cnt = N - 1;
            /* the n - N old flat directions are strictly above it: its tie
             * group (two or more of the small problem's) shares the last
             * 1/d at the next trial; else they are all at the level */
            if (nb < -tol) {
                for (j = N - 1; j > 0 && w.ev[j - 1] >= nb - tol; j--)
                    ;
                tied = N - j > 1 ? N - j : 0;
            }
        }
        /* stored relative to the level (only the order matters) and at
         * least -2^1000 below it (a direction that far below is kept
         * whatever follows), so that no stream makes them overflow */
        for (keep = 0; keep < cnt && w.ev[keep] < nb - tol; keep++)
            w.vals[keep] = fmax(w.ev[keep] - nb, -0x1p1000);
    }
    w.hdr[0] = (double)tied;
    w.hdr[1] = (double)keep;
    return OPF_OK;
}

/* softplus(z) = log(1 + e^z), for any z (infinities included). */
static double softplus(double z)
{
    return z > 0.0 ? z + log1p(exp(-z)) : log1p(exp(z));
}

/* The logit log(p / (1 - p)) of A's weight from the master's state: eta^M
 * times the lead L_B - L_A (a lead within 1e-12 of the losses is none;
 * while Delta^M = 0, or when eta^M overflows, the leader's: +-inf). */
static double master_logit(const double *m)
{
    const double lead = fabs(m[0]) <= 1e-12 * m[1] ? 0.0 : m[0];
    if (lead == 0.0)
        return 0.0;
    if (m[2] > 0.0)
        return log(2.0) * (lead / m[2]); /* +-inf if it overflows */
    return lead > 0.0 ? INFINITY : -INFINITY;
}

/* The master's mixability gap at rate eta: (1/eta) log(p e^{q x} + q
 * e^{-p x}), x = eta (h_b - h_a), with p and q = 1 - p from their logs
 * (either may be tiny: a weight that rounds to 1 still has its q).  For
 * |x| <= 1 as log1p(p q x^2 S), S = sum_{j>=1} h_j / (j+1)! with h_j =
 * sum_i a^i b^(j-1-i), a = q x, b = -p x (the exponential series, whose
 * first-order terms cancel exactly), so a small gap keeps its own relative
 * precision; else q dh + log(p + q e^{-x}) / eta in the log domain. */
static double master_gap(double lp, double lq, double eta, double dh)
{
    const double p = exp(lp), q = exp(lq), x = eta * dh;
    if (fabs(x) <= 1.0) {
        const double a = q * x, b = -p * x;
        double h = 1.0, bj = 1.0, fact = 2.0, S = 0.5;
        int j;
        for (j = 1; j < 24; j++) {
            bj *= b;
            h = a * h + bj;    /* h_{j+1} */
            fact *= (double)(j + 2);
            S += h / fact;
        }
        return log1p(exp(lp + lq) * x * x * S) / eta;
    } else {
        const double u = lp, v = lq - x, m = fmax(u, v);
        return q * dh + (m + log1p(exp(-fabs(u - v)))) / eta;
    }
}

double opf_master_commit(double *mst, double h_a, double h_b)
{
    const double z = master_logit(mst), gap = mst[2], lead = mst[0];
    const double lp = -softplus(-z), lq = -softplus(z);
    const double p = exp(lp), q = exp(lq), eta = log(2.0) / gap;
    const double el = p * h_a + q * h_b;
    double dh = h_b - h_a, delta, ng;
    /* AdaHedge over {A, B} with D = log 2, computed from the differences of
     * the losses (the only quantity it depends on), so that it is as
     * scale-free as they are.  A difference within rounding of the losses
     * (1e-12 of them) is none: the two learners start equal, and a
     * rounding-sized gap would set the master's rate. */
    if (!(fabs(dh) > 1e-12 * fmax(h_a, h_b)))
        dh = 0.0;
    if (dh == 0.0)
        delta = 0.0;
    else if (gap > 0.0 && isfinite(eta))
        delta = master_gap(lp, lq, eta, dh);
    else if (lead >= 0.0) /* the infinite rate: el - (min(L_a + h_a, L_b +
                             h_b) - min(L_a, L_b)), in differences */
        delta = q * dh - fmin(0.0, lead + dh);
    else
        delta = -p * dh - fmin(0.0, -lead - dh);
    if (!(delta > 0.0))
        delta = 0.0;
    ng = fmin(gap + delta, DBL_MAX);
    mst[0] = fmax(fmin(lead + dh, DBL_MAX), -DBL_MAX);
    mst[1] = fmin(mst[1] + fmax(h_a, h_b), DBL_MAX);
    mst[2] = ng;
    mst[3] = exp(-softplus(-master_logit(mst)));
    return el;
}

double opf_limit_commit(double *lim, ptrdiff_t n, ptrdiff_t k,
                        const double *work, double h_a, double h_b)
{
    limit_ws w = split((double *)work, n, k);
    const ptrdiff_t tied = (ptrdiff_t)w.hdr[0], keep = (ptrdiff_t)w.hdr[1];
    lim[4] = (double)tied;
    lim[5] = (double)keep;
    if (keep > 0)
        memcpy(lim + OPF_LIMIT_HEAD, w.vals, sizeof(double) * (size_t)keep);
    if (keep + tied > 0)
        memcpy(lim + OPF_LIMIT_HEAD + k + 1, w.vnew,
               sizeof(double) * (size_t)((keep + tied) * n));
    return opf_master_commit(lim, h_a, h_b);
}
