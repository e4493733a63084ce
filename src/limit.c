/*
 * limit.c -- the master of eta = "auto" (OnlinePCA, OnlineAdaptivePCA,
 * CenteredOnlinePCA), its second learner, the eta -> infinity limit of the
 * capped update, and its third, Follow the Leader on a lagged Frequent
 * Directions sketch (limit.h; derivation in docs/adaptive_rates.md).
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
 * the next trial).  The directions are coordinates in an orthonormal basis
 * of at most 2 (k + 1) rows (a new row per trial: e / rho), rotated by the
 * small problem's eigenvectors; a full basis is compressed to the
 * directions kept (one GEMM): O(n k + k^3) a trial on average.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "limit.h"
#include "rank_one_update.h"
#include "simd.h"
#include "state_clustered_draw.h"


void opf_master_init(double *m)
{
    m[0] = m[1] = m[2] = 0.0;
    m[3] = 0.5;
}

double opf_master_weight(const double *m) { return m[3]; }

/* ---- B's sketch (ell = k) ------------------------------------------------ */

/*
 * B's state (OPF_SKETCH_LEN(n, k) doubles): sk[0] = c (its stored tie
 * group), sk[1] = r, sk[2] = nb, then the k + 1 values, the coordinates R
 * ((k + 1) x cap, row j: direction j in the basis) and the basis rows Bb
 * (cap x n, orthonormal; nb in use), cap = OPF_SKETCH_CAP(k).  A trial
 * appends at most one basis row (x's part outside the basis) and rotates
 * the small R, O(n nb + k^2 nb); when the basis is full it is compressed
 * to the directions kept (Bb <- R Bb, R <- I): O(n k cap) every k + 1
 * trials or so, O(n k) a trial on average, instead of rotating n-long rows
 * every trial (O(n k^2)).
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

/* v is an integer in [lo, hi] */
static int count_in(double v, double lo, double hi)
{
    return v >= lo && v <= hi && v == floor(v);
}

static ptrdiff_t leader_capacity(double absorbed, ptrdiff_t ell);

int opf_limit_state_ok(const double *lim, ptrdiff_t n, ptrdiff_t k)
{
    const double *b = lim + OPF_MASTER3_LEN,
                 *f = b + OPF_SKETCH_LEN(n, k);
    const ptrdiff_t ell = opf_leader_ell(n, k);
    const double K = (double)k, L = (double)ell;
    return count_in(b[1], 0.0, K) && count_in(b[0], 0.0, K + 1.0 - b[1])
           && b[0] != 1.0 && count_in(b[2], 0.0, 2.0 * (K + 1.0))
           && f[0] == 0.0 && count_in(f[1], 0.0, L)
           && count_in(f[3], 0.0, (double)OPF_LEADER_LAG * L)
           && count_in(f[2], 0.0,
                       (double)leader_capacity(f[3], ell) - 1.0);
}

static size_t leader_work_len(ptrdiff_t n, ptrdiff_t ell);

size_t opf_limit_work_len(ptrdiff_t n, ptrdiff_t k)
{
    return sketch_work_len(n, k) + leader_work_len(n, opf_leader_ell(n, k))
           + (size_t)n;
}

double *opf_limit_instance(double *work, ptrdiff_t n, ptrdiff_t k)
{
    return work + sketch_work_len(n, k)
           + leader_work_len(n, opf_leader_ell(n, k));
}

size_t opf_limit_iwork_len(ptrdiff_t n, ptrdiff_t k)
{
    /* B's rank-one update, or F's dsyevr (isuppz and iwork) of order at
     * most 2 ell */
    const size_t b = opf_r1_iwork_len(k + 1),
                 f = 24 * (size_t)opf_leader_ell(n, k);
    return b > f ? b : f;
}

/* Below this many entries (and, for the small products of coordinates,
 * this many rows) the products are plain loops: a BLAS call costs more
 * than its flops there (the digits, k = 2: a third of the limit's time);
 * above, BLAS's vectorised kernels (n = 1000: the loops were a fifth of
 * the limit's instructions). */
#define SMALL_K 16
#define SMALL_WORK 2048

/* g = Bb v (nb rows of length n). */
static void project(const double *Bb, ptrdiff_t nb, ptrdiff_t n,
                    const double *v, double *g, const opf_lapack *fns)
{
    ptrdiff_t i, j;
    if (nb * n < SMALL_WORK) {
        for (j = 0; j < nb; j++) {
            const double *b = Bb + j * n;
            double a = 0.0;
            for (i = 0; i < n; i++)
                a += b[i] * v[i];
            g[j] = a;
        }
    } else {
        int nn = (int)n, rr = (int)nb, one = 1;
        double fone = 1.0, fzero = 0.0;
        char tr = 'T';
        fns->dgemv(&tr, &nn, &rr, &fone, (double *)Bb, &nn, (double *)v,
                   &one, &fzero, g, &one);
    }
}

/* g = Bb v (nb rows of length n), then res -= Bb^T g. */
static void project_out(const double *Bb, ptrdiff_t nb, ptrdiff_t n,
                        const double *v, double *g, double *res,
                        const opf_lapack *fns)
{
    ptrdiff_t i, j;
    project(Bb, nb, n, v, g, fns);
    if (nb * n < SMALL_WORK) {
        for (j = 0; j < nb; j++) {
            const double *b = Bb + j * n, a = g[j];
            for (i = 0; i < n; i++)
                res[i] -= a * b[i];
        }
    } else {
        int nn = (int)n, rr = (int)nb, one = 1;
        double fone = 1.0, fm1 = -1.0;
        char nt = 'N';
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

OPF_MULTIVERSION
static double dot(const double *a, const double *b, ptrdiff_t m)
{
    double s = 0.0;
    ptrdiff_t i;
    OPF_SIMD_WITH(reduction(+:s))
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
 * stored tie group (c > 0: B's).  F passes r = the end of its tie group at
 * the k-th (leader_hi): the directions below it need no coordinates.
 */
static void sketch_losses(ptrdiff_t c, ptrdiff_t r, const double *vals,
                          ptrdiff_t n, ptrdiff_t k, const double *z,
                          double rho2, double t2, double u, double *h,
                          double *real)
{
    const ptrdiff_t d = n - k;
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
                          ptrdiff_t ell, const double *x, double xx,
                          double gx, double u, double *work, int *iwork,
                          const opf_lapack *fns, double *h, double *real)
{
    double *sk = (double *)skc;
    limit_ws w = split(work, n, ell);
    const ptrdiff_t r = (ptrdiff_t)sk[1], c = (ptrdiff_t)sk[0],
                    nb = (ptrdiff_t)sk[2], cap = OPF_SKETCH_CAP(ell);
    const double *vals = sk_vals(sk), *R = sk_coord(sk, ell),
                 *Bb = sk_basis(sk, ell);
    double out2 = 0.0, rho2, t2 = 0.0, nb_level = 0.0, rho = 0.0;
    ptrdiff_t i, j, N, cnt, keep, tied = 0, nb2 = nb;
    memcpy(w.res, x, sizeof(double) * (size_t)n);
    /* g = Bb x, res = x - Bb^T g (twice when x is mostly in the basis) */
    if (nb > 0) {
        project_out(Bb, nb, n, x, w.g, w.res, fns);
        out2 = dot(w.res, w.res, n);
        if (out2 < xx / 16.0) {
            const double first = out2;
            project_out(Bb, nb, n, w.res, w.q, w.res, fns);
            for (j = 0; j < nb; j++)
                w.g[j] += w.q[j];
            out2 = dot(w.res, w.res, n);
            /* x is in the span to the basis's precision: the second pass
             * took half of what the first left (that was the basis's own
             * non-orthogonality, about delta |x| for a basis orthonormal
             * to delta), or what is left is the rounding of the
             * projections, |r| <= 8 sqrt(nb + 1) eps |x|.  Appended, such a
             * part would be orthogonal to the basis only to about delta
             * |x| / |r|, and each row in the span would multiply that again:
             * on a texture then an upscaled image (rows in a 16-dimensional
             * span, k = 20) B's basis went from 1e-14 to 0.98 off
             * orthonormal in 30 rows and its losses reached 1.9 |x|^2.
             * Kept, a part has |r| >= (what the first pass left in the
             * span), so the new row is orthogonal to about delta. */
            if (out2 < 0.5 * first
                || out2 <= 64.0 * (double)(nb + 1) * DBL_EPSILON * DBL_EPSILON * xx) {
                for (i = 0; i < n; i++)
                    w.res[i] = 0.0;
                out2 = 0.0;
            }
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
    sketch_losses(c, r, vals, n, k, w.z, rho2, t2, u, h, real);
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

/* ---- F: Follow the Leader on a lagged Frequent Directions sketch -------- */

/*
 * F's state (OPF_LEADER_LEN(n, ell) doubles): lf[0] = 0 (no stored tie
 * group), lf[1] = r, lf[2] = nbuf, lf[3] = the rows absorbed so far (capped
 * at OPF_LEADER_LAG ell, from where the buffer's capacity is ell), then
 * the ell values -sigma_j of its sketch S (ascending: the largest sigma
 * first), its directions U (ell x n, the first r rows orthonormal: S = U^T
 * diag(sigma) U) and the buffer (ell x n, the first nbuf rows: g x of the
 * trials since the last refresh).
 *
 * A trial predicts with cap_inf(-S) (z = U x over the rows down to the tie
 * group at the k-th, O(n k)) and appends g x to the buffer; when the buffer
 * holds leader_capacity rows, the refresh absorbs them: the eigensystem of
 * S + sum of the buffered rows, then Frequent Directions' shrink by its
 * (ell+1)-th largest eigenvalue.  The refresh is one symmetric
 * eigenproblem of order N = r + nbuf <= 2 ell (the Gram matrix of the rows
 * [diag(sqrt(sigma)) U; buffer], whose U block is diag(sigma)) or of order
 * n when n <= N (the n x n matrix formed), and two GEMMs of n x ell x N:
 * O(n ell^2 + ell^3) every ell trials, O(n ell + ell^2) a trial on average
 * (level-3 BLAS), where the exact per-trial sketch cost O(n ell + ell^3) a
 * trial with an order-(ell+1) eigen-update (docs/adaptive_rates.md).
 */
#define LF_HEAD 4

static const double *lf_rows(const double *lf, ptrdiff_t ell)
{
    return lf + LF_HEAD + ell;
}

/* The buffer's capacity after `absorbed` rows: ceil(absorbed / LAG), at
 * least 1 and at most ell, so that F's sketch is never older than a fifth
 * of the stream nor than ell rows. */
static ptrdiff_t leader_capacity(double absorbed, ptrdiff_t ell)
{
    const double c = ceil(absorbed / OPF_LEADER_LAG);
    return c < 1.0 ? 1 : (c >= (double)ell ? ell : (ptrdiff_t)c);
}

/* The rows of U a prediction reads: all r while r <= k (the d-th largest of
 * -S is the flat level), else down to the end of the tie group at the k-th
 * (sketch_losses' tolerance). */
static ptrdiff_t leader_hi(const double *vals, ptrdiff_t r, ptrdiff_t k)
{
    ptrdiff_t hi = k + 1;
    double b, tol;
    if (r <= k)
        return r;
    b = vals[k];
    tol = 1e-12 * fmax(fabs(vals[0]), DBL_MIN);
    while (hi < r && vals[hi] <= b + tol)
        hi++;
    return hi;
}

/* F's trial workspace: hdr = (action: 0 none, 1 append, 2 refresh; the
 * new r; the rows absorbed), the new values, z and q (coordinates), e (the
 * residual), the row g x, the matrix of the refresh and its eigenvectors
 * (D x D each, D = 2 ell), its eigenvalues and dsyevr's work, the products
 * with the buffer (P, BB), the coefficients of the new directions and the
 * new directions (ell x n). */
typedef struct {
    double *hdr, *vals, *z, *q, *e, *xrow, *G, *Z, *ev, *evw, *P, *BB, *C,
        *unew;
} leader_ws;

/* dsyevr's work per order: 26 is its minimum, (block size + 6) lets
 * dsytrd and dormtr use blocked, level-3 code */
#define EV_WORK 72

static size_t leader_work_len(ptrdiff_t n, ptrdiff_t ell)
{
    const size_t L = (size_t)ell, D = 2 * L;
    return 4 + L + 2 * L + 2 * (size_t)n + 2 * D * D + D + EV_WORK * D + 2 * L * L
           + L * D + L * (size_t)n;
}

static leader_ws leader_split(double *work, ptrdiff_t n, ptrdiff_t ell)
{
    const ptrdiff_t D = 2 * ell;
    leader_ws w;
    w.hdr = work;
    w.vals = w.hdr + 4;
    w.z = w.vals + ell;
    w.q = w.z + ell;
    w.e = w.q + ell;
    w.xrow = w.e + n;
    w.G = w.xrow + n;
    w.Z = w.G + D * D;
    w.ev = w.Z + D * D;
    w.evw = w.ev + D;
    w.P = w.evw + EV_WORK * D;
    w.BB = w.P + ell * ell;
    w.C = w.BB + ell * ell;
    w.unew = w.C + ell * D;
    return w;
}

/* out (rows x n) = beta out + C (rows x nb, leading dimension ldc) Bb (nb x
 * n): a GEMM (column-major: out^T = Bb^T C^T). */
static void gemm_rows(const double *C, int ldc, int rows, const double *Bb,
                      int nb, int n, double beta, double *out,
                      const opf_lapack *fns)
{
    double one = 1.0;
    char nt = 'N';
    fns->dgemm(&nt, &nt, &n, &rows, &nb, &one, (double *)Bb, &n, (double *)C,
               &ldc, &beta, out, &n);
}

/* Modified Gram-Schmidt, twice, on the rows [0, p) of U (p x n): the Gram
 * matrix of the refresh squares the spread of the values, so a direction
 * whose value is far below the largest comes out orthogonal only to
 * about eps sigma_1 / sigma_j; the prediction reads these rows. */
static void orthonormalize_rows(double *U, ptrdiff_t p, ptrdiff_t n)
{
    ptrdiff_t i, j, l;
    int pass;
    for (j = 0; j < p; j++) {
        double *u = U + j * n, nrm;
        for (pass = 0; pass < 2; pass++)
            for (i = 0; i < j; i++) {
                const double *v = U + i * n, a = dot(v, u, n);
                for (l = 0; l < n; l++)
                    u[l] -= a * v[l];
            }
        nrm = sqrt(dot(u, u, n));
        for (l = 0; l < n; l++)
            u[l] /= nrm;
    }
}

/* The refresh: the new values and directions into w (hdr[1] = their
 * number) from S, the buffer's nbuf rows and w->xrow. */
static int leader_refresh(const double *lf, ptrdiff_t n, ptrdiff_t k,
                          ptrdiff_t ell, leader_ws *w, int *iwork,
                          const opf_lapack *fns)
{
    const ptrdiff_t r = (ptrdiff_t)lf[1], nbuf = (ptrdiff_t)lf[2],
                    m = nbuf + 1, N = r + m;
    const double *vals = lf + LF_HEAD, *U = lf_rows(lf, ell),
                 *buf = U + ell * n;
    const int formed = n <= N; /* the n x n matrix, not the Gram matrix */
    int dim = (int)(formed ? n : N), il = 0, iu = 0, cnt = 0, info = 0,
        lwork = EV_WORK * dim, liwork = 10 * dim, one = 1;
    double vl = 0.0, vu = 0.0, abstol = 0.0, fone = 1.0, fzero = 0.0, delta,
           top, tol;
    char jobz = 'V', range = 'A', uplo = 'L', tr = 'T';
    ptrdiff_t i, j, a, kk = 0;
    if (formed) { /* Ys = [sqrt(sigma) U; buffer; x] (N x n, in Z), then
                     G = Ys^T Ys (n x n) */
        double *Ys = w->Z;
        int nn = (int)n, NN = (int)N;
        char nt = 'N', tt = 'T';
        for (i = 0; i < r; i++) {
            const double s = sqrt(-vals[i]);
            for (j = 0; j < n; j++)
                Ys[i * n + j] = s * U[i * n + j];
        }
        memcpy(Ys + r * n, buf, sizeof(double) * (size_t)(nbuf * n));
        memcpy(Ys + (N - 1) * n, w->xrow, sizeof(double) * (size_t)n);
        fns->dgemm(&nt, &tt, &nn, &nn, &NN, &fone, Ys, &nn, Ys, &nn, &fzero,
                   w->G, &nn);
    } else { /* the Gram matrix of [sqrt(sigma) U; buffer; x] (N x N) */
        int nn = (int)n, rr = (int)r, mm = (int)m;
        double *G = w->G;
        if (r > 0 && nbuf > 0) /* P = buffer U^T (nbuf x r, leading dim r) */
            opf_gemm_abt(fns, (int)nbuf, rr, nn, buf, nn, U, nn, w->P, rr);
        if (r > 0) /* the last row of P: U x */
            fns->dgemv(&tr, &nn, &rr, &fone, (double *)U, &nn, w->xrow, &one,
                       &fzero, w->P + nbuf * r, &one);
        if (nbuf > 0) { /* BB = [buffer; x] buffer^T (m x nbuf, lead m) */
            int nbb = (int)nbuf;
            opf_gemm_abt(fns, nbb, nbb, nn, buf, nn, buf, nn, w->BB, mm);
            fns->dgemv(&tr, &nn, &nbb, &fone, (double *)buf, &nn, w->xrow,
                       &one, &fzero, w->BB + nbuf * m, &one);
        }
        w->BB[nbuf * m + nbuf] = dot(w->xrow, w->xrow, n);
        for (i = 0; i < N * N; i++)
            G[i] = 0.0;
        for (i = 0; i < r; i++)
            G[i * N + i] = -vals[i];
        for (a = 0; a < m; a++) {
            for (i = 0; i < r; i++) {
                const double v = sqrt(-vals[i]) * w->P[a * r + i];
                G[i * N + r + a] = v;
                G[(r + a) * N + i] = v;
            }
            for (i = 0; i <= a; i++) {
                const double v = w->BB[a * m + i];
                G[(r + i) * N + r + a] = v;
                G[(r + a) * N + r + i] = v;
            }
        }
    }
    fns->dsyevr(&jobz, &range, &uplo, &dim, w->G, &dim, &vl, &vu, &il, &iu,
                &abstol, &cnt, w->ev, w->Z, &dim, iwork, w->evw, &lwork,
                iwork + 2 * dim, &liwork, &info);
    if (info != 0 || cnt != dim)
        return OPF_EEIG;
    /* Frequent Directions' shrink by the (ell+1)-th largest (none when
     * there are at most ell); a value within the tolerance of the level is
     * none: 1e-12 of the energy absorbed (the level moved by at most that)
     * plus 64 eps of the largest (the eigenvalues' rounding), so that an
     * old direction far above the new rows does not set it */
    delta = dim > ell ? fmax(w->ev[dim - ell - 1], 0.0) : 0.0;
    top = w->ev[dim - 1];
    tol = dot(w->xrow, w->xrow, n);
    for (i = 0; i < nbuf; i++)
        tol += dot(buf + i * n, buf + i * n, n);
    tol = 1e-12 * tol + 64.0 * DBL_EPSILON * top;
    while (kk < (dim < ell ? dim : ell) && w->ev[dim - 1 - kk] - delta > tol)
        kk++;
    for (j = 0; j < kk; j++)
        w->vals[j] = -fmin(w->ev[dim - 1 - j] - delta, 0x1p1000);
    if (formed) {
        for (j = 0; j < kk; j++)
            memcpy(w->unew + j * n, w->Z + (dim - 1 - j) * (ptrdiff_t)dim,
                   sizeof(double) * (size_t)n);
    } else if (kk > 0) { /* u_j = [sqrt(sigma) U; buffer; x]^T z_j /
                            sqrt(lambda_j) */
        const int NN = (int)N;
        for (j = 0; j < kk; j++) {
            const double *zc = w->Z + (dim - 1 - j) * (ptrdiff_t)dim;
            const double s = 1.0 / sqrt(w->ev[dim - 1 - j]);
            for (i = 0; i < r; i++)
                w->C[j * N + i] = zc[i] * sqrt(-vals[i]) * s;
            for (a = 0; a < m; a++)
                w->C[j * N + r + a] = zc[r + a] * s;
        }
        if (r > 0)
            gemm_rows(w->C, NN, (int)kk, U, (int)r, (int)n, 0.0, w->unew,
                      fns);
        if (nbuf > 0)
            gemm_rows(w->C + r, NN, (int)kk, buf, (int)nbuf, (int)n,
                      r > 0 ? 1.0 : 0.0, w->unew, fns);
        for (j = 0; j < kk; j++) {
            const double c = w->C[j * N + N - 1];
            double *o = w->unew + j * n;
            if (r + nbuf == 0)
                for (i = 0; i < n; i++)
                    o[i] = c * w->xrow[i];
            else
                for (i = 0; i < n; i++)
                    o[i] += c * w->xrow[i];
        }
        orthonormalize_rows(w->unew, leader_hi(w->vals, kk, k), n);
    }
    w->hdr[1] = (double)kk;
    return OPF_OK;
}

/* F's trial on x into its workspace (the state is unchanged): its losses,
 * and its next state after g x joins the buffer (and, when it is full,
 * the refresh). */
static int leader_prepare(const double *lf, ptrdiff_t n, ptrdiff_t k,
                          ptrdiff_t ell, const double *x, double xx, double g,
                          double u, double *work, int *iwork,
                          const opf_lapack *fns, double *h, double *real)
{
    leader_ws w = leader_split(work, n, ell);
    const ptrdiff_t r = (ptrdiff_t)lf[1], nbuf = (ptrdiff_t)lf[2];
    const double *vals = lf + LF_HEAD, *U = lf_rows(lf, ell);
    const ptrdiff_t hi = leader_hi(vals, r, k);
    double rho2 = xx;
    ptrdiff_t i;
    w.hdr[0] = 0.0;
    /* z = U_hi x and x's energy outside U_hi: |x|^2 - |z|^2 while that
     * keeps at least 1/16 of |x|^2 (then exact to 32 eps), else from the
     * residual e = x - U_hi^T z, projected twice */
    if (hi > 0) {
        project(U, hi, n, x, w.z, fns);
        rho2 = xx - dot(w.z, w.z, hi);
        if (rho2 < xx / 16.0) {
            memcpy(w.e, x, sizeof(double) * (size_t)n);
            project_out(U, hi, n, x, w.z, w.e, fns);
            project_out(U, hi, n, w.e, w.q, w.e, fns);
            for (i = 0; i < hi; i++)
                w.z[i] += w.q[i];
            rho2 = dot(w.e, w.e, n);
        }
    }
    sketch_losses(0, hi, vals, n, k, w.z, rho2, 0.0, u, h, real);
    if (!(g > 0.0)) /* nothing to learn */
        return OPF_OK;
    for (i = 0; i < n; i++)
        w.xrow[i] = g * x[i];
    w.hdr[2] = (double)(nbuf + 1);
    if (nbuf + 1 < leader_capacity(lf[3], ell)) {
        w.hdr[0] = 1.0;
        return OPF_OK;
    }
    w.hdr[0] = 2.0;
    return leader_refresh(lf, n, k, ell, &w, iwork, fns);
}

/* Commit F's trial: the row joins the buffer, or the refresh's sketch
 * replaces S and the buffer empties. */
static void leader_commit(double *lf, ptrdiff_t n, ptrdiff_t ell,
                          double *work)
{
    leader_ws w = leader_split(work, n, ell);
    double *U = lf + LF_HEAD + ell, *buf = U + ell * n;
    const ptrdiff_t nbuf = (ptrdiff_t)lf[2];
    if (w.hdr[0] == 1.0) {
        memcpy(buf + nbuf * n, w.xrow, sizeof(double) * (size_t)n);
        lf[2] = (double)(nbuf + 1);
    } else if (w.hdr[0] == 2.0) {
        const ptrdiff_t kk = (ptrdiff_t)w.hdr[1];
        memcpy(lf + LF_HEAD, w.vals, sizeof(double) * (size_t)kk);
        memcpy(U, w.unew, sizeof(double) * (size_t)(kk * n));
        lf[1] = (double)kk;
        lf[2] = 0.0;
        lf[3] = fmin(lf[3] + w.hdr[2], (double)(OPF_LEADER_LAG * ell));
    }
}

int opf_limit_prepare(const double *lim, ptrdiff_t n, ptrdiff_t k,
                      const double *x, double g, double ub, double uf,
                      double *work, int *iwork, const opf_lapack *fns,
                      double *h, double *real)
{
    const ptrdiff_t ell = opf_leader_ell(n, k);
    const double xx = dot(x, x, n);
    int st = sketch_prepare(sketch_b((double *)lim), n, k, k, x, xx, g, ub,
                            work, iwork, fns, h, real);
    if (st != OPF_OK)
        return st;
    return leader_prepare(sketch_f((double *)lim, n, k), n, k, ell, x, xx, g,
                          uf, work + sketch_work_len(n, k), iwork, fns, h + 1,
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
    leader_commit(sketch_f(lim, n, k), n, opf_leader_ell(n, k),
                  work + sketch_work_len(n, k));
    return opf_master3_commit(lim, h);
}
