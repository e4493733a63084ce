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

/* ---- the sketches: B (ell = k) and F (ell = opf_leader_ell) ---------- */

/*
 * A sketch's state (OPF_SKETCH_LEN(n, ell) doubles): sk[0] = c (its stored
 * tie group, B only), sk[1] = r, sk[2] = nb, then the ell + 1 values, the
 * coordinates R ((ell + 1) x cap, row j: direction j in the basis) and the
 * basis rows Bb (cap x n, orthonormal; nb in use), cap = OPF_SKETCH_CAP.
 * A trial appends at most one basis row (x's part outside the basis) and
 * rotates the small R, O(n nb + ell^2 nb); when the basis is full it is
 * compressed to the directions kept (Bb <- R Bb, R <- I): O(n ell cap)
 * every ell + 1 trials or so, O(n ell) a trial on average, instead of
 * rotating n-long rows every trial (O(n ell^2)).
 */
#define SK_HEAD 3

ptrdiff_t opf_leader_ell(ptrdiff_t n, ptrdiff_t k)
{
    const ptrdiff_t ell = 4 * k > 24 ? 4 * k : 24;
    return ell < n ? ell : n;
}

static double *sk_vals(double *sk) { return sk + SK_HEAD; }
static double *sk_coord(double *sk, ptrdiff_t ell)
{
    return sk + SK_HEAD + ell + 1;
}
static double *sk_basis(double *sk, ptrdiff_t ell)
{
    return sk_coord(sk, ell) + (ell + 1) * OPF_SKETCH_CAP(ell);
}

static double *sketch_b(double *lim) { return lim + OPF_MASTER3_LEN; }
static double *sketch_f(double *lim, ptrdiff_t n, ptrdiff_t k)
{
    return lim + OPF_MASTER3_LEN + OPF_SKETCH_LEN(n, k);
}

/* The workspace of a sketch's trial: hdr = (new c, new r, new nb,
 * compressed), the new values, z (coordinates in the directions), g and q
 * (in the basis), the eigenvalues and vectors of the small problem and the
 * rank-one update's work, the part of x outside the basis, the new
 * coordinates, the new basis rows (the appended one, or all after a
 * compression). */
typedef struct {
    double *hdr, *vals, *z, *g, *q, *ev, *zv, *r1w, *res, *rnew, *bnew,
        *stack;
} limit_ws;

static size_t sketch_work_len(ptrdiff_t n, ptrdiff_t ell)
{
    const size_t N = (size_t)ell + 1, cap = (size_t)OPF_SKETCH_CAP(ell);
    return 4 + N + (N + 1) + 2 * cap + N + N * N
           + opf_r1_work_len((ptrdiff_t)N) + (size_t)n + 2 * N * cap
           + N * (size_t)n;
}

static limit_ws split(double *work, ptrdiff_t n, ptrdiff_t ell)
{
    const ptrdiff_t N = ell + 1, cap = OPF_SKETCH_CAP(ell);
    limit_ws w;
    w.hdr = work;
    w.vals = w.hdr + 4;
    w.z = w.vals + N;
    w.g = w.z + N + 1;
    w.q = w.g + cap;
    w.ev = w.q + cap;
    w.zv = w.ev + N;
    w.r1w = w.zv + N * N;
    w.res = w.r1w + opf_r1_work_len(N);
    w.rnew = w.res + n;
    w.bnew = w.rnew + N * cap;
    w.stack = w.bnew + N * n;
    return w;
}

void opf_limit_init(double *lim, ptrdiff_t n, ptrdiff_t k)
{
    memset(lim, 0, sizeof(double) * (size_t)OPF_LIMIT_LEN(n, k));
    opf_master3_init(lim);
}

size_t opf_limit_work_len(ptrdiff_t n, ptrdiff_t k)
{
    return sketch_work_len(n, k) + sketch_work_len(n, opf_leader_ell(n, k))
           + (size_t)n;
}

double *opf_limit_instance(double *work, ptrdiff_t n, ptrdiff_t k)
{
    return work + sketch_work_len(n, k)
           + sketch_work_len(n, opf_leader_ell(n, k));
}

size_t opf_limit_iwork_len(ptrdiff_t n, ptrdiff_t k)
{
    return opf_r1_iwork_len(opf_leader_ell(n, k) + 1);
}

/* Below this many rows the products are plain loops: a BLAS call costs
 * more than its flops there (the digits, k = 2: a third of the limit's
 * time). */
#define SMALL_K 16

/* g = Bb v (nb rows of length n), then res -= Bb^T g. */
static void project_out(const double *Bb, ptrdiff_t nb, ptrdiff_t n,
                        const double *v, double *g, double *res,
                        const opf_lapack *fns)
{
    ptrdiff_t i, j;
    if (nb <= SMALL_K) {
        for (j = 0; j < nb; j++) {
            const double *b = Bb + j * n;
            double a = 0.0;
            for (i = 0; i < n; i++)
                a += b[i] * v[i];
            g[j] = a;
        }
        for (j = 0; j < nb; j++) {
            const double *b = Bb + j * n, a = g[j];
            for (i = 0; i < n; i++)
                res[i] -= a * b[i];
        }
    } else {
        int nn = (int)n, rr = (int)nb, one = 1;
        double fone = 1.0, fzero = 0.0, fm1 = -1.0;
        char tr = 'T', nt = 'N';
        fns->dgemv(&tr, &nn, &rr, &fone, (double *)Bb, &nn, (double *)v,
                   &one, &fzero, g, &one);
        fns->dgemv(&nt, &nn, &rr, &fm1, (double *)Bb, &nn, g, &one, &fone,
                   res, &one);
    }
}

/* out (rows x n) = C (rows x nb, leading dimension ldc) Bb (nb x n). */
static void combine_rows(const double *C, ptrdiff_t ldc, ptrdiff_t rows,
                         const double *Bb, ptrdiff_t nb, ptrdiff_t n,
                         double *out, const opf_lapack *fns)
{
    ptrdiff_t i, j, l;
    if (rows <= SMALL_K && nb <= SMALL_K) {
        for (j = 0; j < rows; j++) {
            double *o = out + j * n;
            for (l = 0; l < n; l++)
                o[l] = 0.0;
            for (i = 0; i < nb; i++) {
                const double c = C[j * ldc + i], *a = Bb + i * n;
                for (l = 0; l < n; l++)
                    o[l] += c * a[l];
            }
        }
    } else {
        int nn = (int)n, rr = (int)rows, kk = (int)nb, lc = (int)ldc;
        double fone = 1.0, fzero = 0.0;
        char nt = 'N';
        /* column-major: out^T (n x rows) = Bb^T (n x nb) C^T (nb x rows) */
        fns->dgemm(&nt, &nt, &nn, &rr, &kk, &fone, (double *)Bb, &nn,
                   (double *)C, &lc, &fzero, out, &nn);
    }
}

static double dot(const double *a, const double *b, ptrdiff_t m)
{
    double s = 0.0;
    ptrdiff_t i;
    for (i = 0; i < m; i++)
        s += a[i] * b[i];
    return s;
}

/*
 * The parameter of a sketch (M = -S in loss units: r explicit values below
 * one flat level 0) is W = cap_inf(M): 1/d on the directions strictly
 * above M's d-th largest eigenvalue, the rest of the mass shared equally
 * by those tied with it, 0 below.  Its expected loss d tr(W x x^T) and the
 * realized loss of a corner drawn with u: the directions below the d-th
 * and the rest drawn uniformly in the tie group.  z: x's coordinates in
 * the r directions, rho2 its energy outside them, t2 its energy in the
 * stored tie group.
 */
static void sketch_losses(const double *sk, ptrdiff_t n, ptrdiff_t k,
                          const double *z, double rho2, double t2, double u,
                          double *h, double *real)
{
    const ptrdiff_t r = (ptrdiff_t)sk[1], c = (ptrdiff_t)sk[0], d = n - k;
    const double *vals = sk + SK_HEAD;
    ptrdiff_t j;
    if (c > 0) { /* B's stored tie group at the level (a = n - r - c above) */
        const double a = (double)(n - r - c);
        t2 = fmin(t2, rho2);
        *h = rho2 - t2 + ((double)d - a) * t2 / (double)c;
        *real = fmax(0.0, rho2 - opf_haar_energy(k - r, c, u, t2));
    } else if (r <= k) { /* the d-th largest is the level: its tie group is
                            the whole flat space (and the values within
                            the tolerance of it were merged into it) */
        *h = (double)d * rho2 / (double)(n - r);
        *real = r >= k ? rho2
                       : fmax(0.0, rho2 - opf_haar_energy(k - r, n - r, u,
                                                          rho2));
    } else { /* F: the d-th largest is the explicit value k (ascending) */
        const double b = vals[k];
        const double tol = 1e-12 * fmax(fabs(vals[0]), DBL_MIN);
        ptrdiff_t lo = k, hi = k + 1;
        double above = rho2, tied = 0.0;
        while (lo > 0 && vals[lo - 1] >= b - tol)
            lo--;
        while (hi < r && vals[hi] <= b + tol)
            hi++;
        for (j = hi; j < r; j++)
            above += z[j] * z[j];
        for (j = lo; j < hi; j++)
            tied += z[j] * z[j];
        /* a = n - hi above, c = hi - lo tied: each gets (d - a) / (d c) */
        *h = above + (double)(d - (n - hi)) * tied / (double)(hi - lo);
        *real = above + tied
                - (k > lo ? opf_haar_energy(k - lo, hi - lo, u, tied) : 0.0);
        *real = fmax(0.0, *real);
    }
}

/* One sketch's trial on x, into its workspace: the losses, and its next
 * state after S += g^2 x x^T (hdr, vals, rnew, bnew).  ell = k: B, whose
 * tie group at its new level is kept for the next trial. */
static int sketch_prepare(const double *skc, ptrdiff_t n, ptrdiff_t k,
                          ptrdiff_t ell, const double *x, double gx,
                          double u, double *work, int *iwork,
                          const opf_lapack *fns, double *h, double *real)
{
    double *sk = (double *)skc;
    limit_ws w = split(work, n, ell);
    const ptrdiff_t r = (ptrdiff_t)sk[1], c = (ptrdiff_t)sk[0],
                    nb = (ptrdiff_t)sk[2], cap = OPF_SKETCH_CAP(ell);
    const double *vals = sk_vals(sk), *R = sk_coord(sk, ell),
                 *Bb = sk_basis(sk, ell);
    double xx = 0.0, out2 = 0.0, rho2, t2 = 0.0, nb_level = 0.0, rho = 0.0;
    ptrdiff_t i, j, N, cnt, keep, tied = 0, nb2 = nb;
    for (i = 0; i < n; i++) {
        xx += x[i] * x[i];
        w.res[i] = x[i];
    }
    /* g = Bb x, res = x - Bb^T g (twice when x is mostly in the basis) */
    if (nb > 0) {
        project_out(Bb, nb, n, x, w.g, w.res, fns);
        out2 = dot(w.res, w.res, n);
        if (out2 < xx / 16.0) {
            project_out(Bb, nb, n, w.res, w.q, w.res, fns);
            for (j = 0; j < nb; j++)
                w.g[j] += w.q[j];
            out2 = dot(w.res, w.res, n);
        }
    } else {
        out2 = xx;
    }
    /* z = R_r g, q = g - R_r^T z (twice when g is mostly in R's rows) */
    for (j = 0; j < nb; j++)
        w.q[j] = w.g[j];
    for (i = 0; i < 2; i++) {
        double q2 = 0.0;
        for (j = 0; j < r; j++) {
            const double a = dot(R + j * cap, w.q, nb);
            w.z[j] = i ? w.z[j] + a : a;
            for (ptrdiff_t l = 0; l < nb; l++)
                w.q[l] -= a * R[j * cap + l];
        }
        q2 = dot(w.q, w.q, nb);
        if (i || !(q2 + out2 < xx / 16.0))
            break;
    }
    rho2 = dot(w.q, w.q, nb) + out2;
    for (j = r; j < r + c; j++) {
        const double a = dot(R + j * cap, w.g, nb);
        t2 += a * a;
    }
    sketch_losses(sk, n, k, w.z, rho2, t2, u, h, real);
    /* the eigenproblem of diag(values, 0) - v v^T on span(U, e) (a stored
     * tie group is at the level: M's update is flat(M) - g^2 x x^T) */
    N = (rho2 > 1e-24 * xx && rho2 > 0.0 && gx > 0.0) ? r + 1 : r;
    if (!(gx > 0.0)) { /* nothing to learn: the state as it is */
        for (j = 0; j < r; j++)
            w.vals[j] = vals[j];
        for (j = 0; j < r; j++)
            memcpy(w.rnew + j * cap, R + j * cap, sizeof(double) * (size_t)nb);
        w.hdr[0] = 0.0;
        w.hdr[1] = (double)r;
        w.hdr[2] = (double)nb;
        w.hdr[3] = 0.0;
        return OPF_OK;
    }
    if (N > r) { /* the new direction e = (Bb^T q + res) / rho, its
                    coordinates in the basis, with res as a new row */
        const double outn = sqrt(out2);
        rho = sqrt(rho2);
        if (out2 > 1e-30 * xx && outn > 0.0) {
            for (i = 0; i < n; i++)
                w.bnew[i] = w.res[i] / outn;
            w.q[nb] = outn;
            nb2 = nb + 1;
        }
    }
    if (N > 0) { /* Gu-Eisenstat on the identity: eigenvectors in zv's
                    columns (row-major), eigenvalues ascending in ev */
        int st;
        double xg = xx;
        w.z[r] = rho; /* v = g (z, rho) when N = r + 1 */
        if (gx != 1.0) {
            for (j = 0; j <= r; j++)
                w.z[j] *= gx;
            xg *= gx * gx;
        }
        for (j = 0; j < N; j++) {
            w.ev[j] = j < r ? vals[j] : 0.0;
            for (i = 0; i < N; i++)
                w.zv[j * N + i] = i == j ? 1.0 : 0.0;
        }
        /* the deflation tolerance at this update's scale: values far below
         * the level (old, cumulative) must not set it */
        st = opf_rank_one_update_scaled(N, w.ev, w.zv, N, -1.0, w.z, w.r1w,
                                        iwork, fns, 0, xg, NULL);
        if (st != OPF_OK)
            return st;
        xx = xg;
        /* new coordinates: row j = sum_i zv[i N + j] (old row i; i = r: q / rho) */
        for (i = 0; i < N; i++) {
            double *o = w.stack + i * cap;
            ptrdiff_t l;
            if (i < r) {
                memcpy(o, R + i * cap, sizeof(double) * (size_t)nb);
                for (l = nb; l < nb2; l++)
                    o[l] = 0.0;
            } else {
                for (l = 0; l < nb2; l++)
                    o[l] = w.q[l] / rho;
            }
        }
        if (N <= SMALL_K) {
            for (j = 0; j < N; j++) {
                double *o = w.rnew + j * cap;
                for (ptrdiff_t l = 0; l < nb2; l++)
                    o[l] = 0.0;
                for (i = 0; i < N; i++) {
                    const double cf = w.zv[i * N + j], *a = w.stack + i * cap;
                    for (ptrdiff_t l = 0; l < nb2; l++)
                        o[l] += cf * a[l];
                }
            }
        } else { /* column-major: rnew^T = stack^T zv^T */
            int mm = (int)nb2, NN = (int)N, lc = (int)cap;
            double fone = 1.0, fzero = 0.0;
            char nt = 'N', tt = 'T';
            fns->dgemm(&nt, &tt, &mm, &NN, &NN, &fone, w.stack, &lc, w.zv,
                       &NN, &fzero, w.rnew, &lc);
        }
    }
    cnt = N;
    {
        /* a value within 1e-12 |x|^2 of the level ties with it: the
         * update's rounding near the level is of that size (the level moved
         * by at most |x|^2), whatever the values far below it */
        const double tol = 1e-12 * xx;
        if (N > ell) { /* the shrink (the cap at zero temperature for B):
                          the top of the small problem is the new level */
            nb_level = w.ev[N - 1];
            cnt = N - 1;
            /* B: the n - N old flat directions are strictly above it: its
             * tie group (two or more of the small problem's) shares the
             * last 1/d at the next trial; else they are all at the level */
            if (ell == k && nb_level < -tol) {
                for (j = N - 1; j > 0 && w.ev[j - 1] >= nb_level - tol; j--)
                    ;
                tied = N - j > 1 ? N - j : 0;
            }
        }
        /* stored relative to the level (only the order matters) and at
         * least -2^1000 below it (a direction that far below is kept
         * whatever follows), so that no stream makes them overflow */
        for (keep = 0; keep < cnt && w.ev[keep] < nb_level - tol; keep++)
            w.vals[keep] = fmax(w.ev[keep] - nb_level, -0x1p1000);
    }
    w.hdr[0] = (double)tied;
    w.hdr[1] = (double)keep;
    w.hdr[2] = (double)nb2;
    w.hdr[3] = 0.0;
    return OPF_OK;
}

/* Commit a sketch's trial; when its basis is full, compress it to the
 * directions kept: Bb <- R Bb (one GEMM), R <- I. */
static void sketch_commit(double *sk, ptrdiff_t n, ptrdiff_t ell,
                          double *work, const opf_lapack *fns)
{
    limit_ws w = split(work, n, ell);
    const ptrdiff_t tied = (ptrdiff_t)w.hdr[0], keep = (ptrdiff_t)w.hdr[1],
                    nb2 = (ptrdiff_t)w.hdr[2], nb = (ptrdiff_t)sk[2],
                    cap = OPF_SKETCH_CAP(ell), rows = keep + tied;
    double *R = sk_coord(sk, ell), *Bb = sk_basis(sk, ell);
    ptrdiff_t i, j;
    sk[0] = (double)tied;
    sk[1] = (double)keep;
    sk[2] = (double)nb2;
    if (keep > 0)
        memcpy(sk_vals(sk), w.vals, sizeof(double) * (size_t)keep);
    for (j = 0; j < rows; j++)
        memcpy(R + j * cap, w.rnew + j * cap, sizeof(double) * (size_t)nb2);
    if (nb2 > nb)
        memcpy(Bb + nb * n, w.bnew, sizeof(double) * (size_t)n);
    if (nb2 < cap)
        return;
    combine_rows(R, cap, rows, Bb, nb2, n, w.bnew, fns);
    memcpy(Bb, w.bnew, sizeof(double) * (size_t)(rows * n));
    for (j = 0; j < rows; j++)
        for (i = 0; i < cap; i++)
            R[j * cap + i] = i == j ? 1.0 : 0.0;
    sk[2] = (double)rows;
}

int opf_limit_prepare(const double *lim, ptrdiff_t n, ptrdiff_t k,
                      const double *x, double g, double ub, double uf,
                      double *work, int *iwork, const opf_lapack *fns,
                      double *h, double *real)
{
    const ptrdiff_t ell = opf_leader_ell(n, k);
    int st = sketch_prepare(sketch_b((double *)lim), n, k, k, x, g, ub, work,
                            iwork, fns, h, real);
    if (st != OPF_OK)
        return st;
    return sketch_prepare(sketch_f((double *)lim, n, k), n, k, ell, x, g, uf,
                          work + sketch_work_len(n, k), iwork, fns, h + 1,
                          real + 1);
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


/* ---- the master over A, B and F (AdaHedge, D = log 3) ------------------ */

/* mk[0] the scale (sum of max_i h_i), mk[1] Delta^M, mk[2..5) L_i - L_A
 * (mk[2] = 0), mk[5..8) the weights of the next trial. */
#define MK_K 3
#define MK_SCALE 0
#define MK_GAP 1
#define MK_LEAD 2
#define MK_W (2 + MK_K)

/* log-weights of the next trial from the leads and the gap: eta^M =
 * log 3 / Delta^M on L_i - min L (a lead within 1e-12 of the scale is
 * none); while Delta^M = 0, or when eta^M overflows, the leaders share. */
static void master3_logw(const double *mk, double *lw)
{
    const double *L = mk + MK_LEAD;
    double lmin = L[0], m = -INFINITY, sum = 0.0;
    int i, leaders = 0;
    for (i = 1; i < MK_K; i++)
        lmin = fmin(lmin, L[i]);
    for (i = 0; i < MK_K; i++) {
        double lead = L[i] - lmin;
        if (lead <= 1e-12 * mk[MK_SCALE])
            lead = 0.0;
        if (lead == 0.0)
            lw[i] = 0.0;
        else if (mk[MK_GAP] > 0.0)
            lw[i] = -log((double)MK_K) * (lead / mk[MK_GAP]); /* -inf if it
                                                                  overflows */
        else
            lw[i] = -INFINITY;
        leaders += lw[i] == 0.0;
        m = fmax(m, lw[i]);
    }
    (void)leaders;
    for (i = 0; i < MK_K; i++)
        sum += exp(lw[i] - m);
    for (i = 0; i < MK_K; i++)
        lw[i] -= m + log(sum);
}

void opf_master3_init(double *mk)
{
    int i;
    memset(mk, 0, sizeof(double) * OPF_MASTER3_LEN);
    for (i = 0; i < MK_K; i++)
        mk[MK_W + i] = 1.0 / MK_K;
}

double opf_master3_weight(const double *mk, int i) { return mk[MK_W + i]; }

/* e^{-y} - 1 + y >= 0, without cancellation for small |y| */
static double expm1_tail(double y)
{
    if (fabs(y) < 0.5) {
        double term = y * y / 2.0, sum = 0.0;
        int j;
        for (j = 3; j < 30 && term != 0.0; j++) {
            sum += term;
            term *= -y / (double)j;
        }
        return sum;
    }
    return expm1(-y) + y;
}

double opf_master3_commit(double *mk, const double *h_in)
{
    double lw[MK_K], h[MK_K], p[MK_K], hmin = h_in[0], hmax = h_in[0];
    double el = 0.0, hbar = 0.0, delta, eta;
    double *L = mk + MK_LEAD;
    int i;
    master3_logw(mk, lw);
    for (i = 1; i < MK_K; i++) {
        hmin = fmin(hmin, h_in[i]);
        hmax = fmax(hmax, h_in[i]);
    }
    for (i = 0; i < MK_K; i++) {
        p[i] = exp(lw[i]);
        el += p[i] * h_in[i];
        /* a difference within 1e-12 of the losses is none (the learners
         * start equal; a rounding-sized gap would set the master's rate) */
        h[i] = fabs(h_in[i] - hmin) <= 1e-12 * hmax ? hmin : h_in[i];
        hbar += p[i] * (h[i] - hmin);
    }
    eta = log((double)MK_K) / mk[MK_GAP];
    if (mk[MK_GAP] > 0.0 && isfinite(eta)) {
        /* the mixability gap (1/eta) log sum p_i e^{-eta (h_i - hbar)}:
         * series of its nonnegative terms when small (a small gap keeps
         * its relative precision), else in the log domain */
        double big = 0.0, acc = 0.0;
        for (i = 0; i < MK_K; i++)
            big = fmax(big, fabs(eta * (h[i] - hmin - hbar)));
        if (big <= 1.0) {
            for (i = 0; i < MK_K; i++)
                acc += p[i] * expm1_tail(eta * (h[i] - hmin - hbar));
            delta = log1p(acc) / eta;
        } else {
            double m = -INFINITY, sum = 0.0;
            for (i = 0; i < MK_K; i++)
                m = fmax(m, lw[i] - eta * (h[i] - hmin));
            for (i = 0; i < MK_K; i++)
                sum += exp(lw[i] - eta * (h[i] - hmin) - m);
            delta = hbar + (m + log(sum)) / eta;
        }
    } else { /* the infinite rate: hbar - (min(L + h) - min L) */
        double lmin = L[0], lh = L[0] + (h[0] - hmin);
        for (i = 1; i < MK_K; i++) {
            lmin = fmin(lmin, L[i]);
            lh = fmin(lh, L[i] + (h[i] - hmin));
        }
        delta = hbar - (lh - lmin);
    }
    if (!(delta > 0.0))
        delta = 0.0;
    mk[MK_GAP] = fmin(mk[MK_GAP] + delta, DBL_MAX);
    for (i = 1; i < MK_K; i++)
        L[i] = fmax(fmin(L[i] + (h[i] - h[0]), DBL_MAX), -DBL_MAX);
    mk[MK_SCALE] = fmin(mk[MK_SCALE] + hmax, DBL_MAX);
    master3_logw(mk, lw);
    for (i = 0; i < MK_K; i++)
        mk[MK_W + i] = exp(lw[i]);
    return el;
}

double opf_limit_commit(double *lim, ptrdiff_t n, ptrdiff_t k, double *work,
                        const opf_lapack *fns, const double *h)
{
    sketch_commit(sketch_b(lim), n, k, work, fns);
    sketch_commit(sketch_f(lim, n, k), n, opf_leader_ell(n, k),
                  work + sketch_work_len(n, k), fns);
    return opf_master3_commit(lim, h);
}
