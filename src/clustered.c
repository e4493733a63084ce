/*
 * clustered.c -- OnlinePCA on the capped structure: O(n m) per trial.
 *
 * The state (clustered.h) is m explicit eigenpairs of log W plus one
 * implicit cluster, the orthogonal complement of their span, with one
 * log-eigenvalue mu_c and multiplicity c = n - m.  W^0 = I/n is the pure
 * cluster.  A trial with instance x (WK Alg. 5; YL Alg. 4 with fixed share):
 *
 * 1. z = Q^T x and the part r = x - Q z of x in the complement, beta = |r|.
 *    With Q = B^T R: y = B x, r_B = x - B^T y (again if it lost more than
 *    half of |x|^2: classical Gram-Schmidt twice is enough), z = R^T y, and
 *    r = r_B + B^T s with s = y - R z (again if it lost more than half of
 *    |y|^2; s = 0 when R is square).  Without the second pass s carries
 *    an error ~ eps |y| / |s| that the new direction inherits.
 * 2. The draw and the losses.  The weights are exp(mu) and, c times,
 *    exp(mu_c).  When the cluster is at the cap (WK Alg. 2: capped entries
 *    belong to every corner) the corner is the whole cluster plus d - c of
 *    the explicit entries, drawn by the sampler from the explicit weights
 *    alone (the same corners, coefficients scaled by (d - c)/d, as Alg. 2
 *    on the full vector).  Otherwise the sampler runs on the full vector
 *    (explicit entries then c copies of the cluster's weight) and the
 *    corner leaves out e <= k slots of the cluster: any orthonormal basis of
 *    the complement is an eigenbasis of W, so these are e directions drawn
 *    uniformly (Haar) in the complement, from a generator seeded by the
 *    trial's uniform u (so the draw is reproducible and needs no second
 *    stream), independently of x.
 * 3. The update: in the basis [Q, r/beta] log W - eta x x^T is
 *    diag(mu, mu_c) - eta [z; beta][z; beta]^T plus mu_c on the rest of the
 *    complement: one rank-one update of size m + 1 (rank_one_update.c, with
 *    Q = I), whose eigenvectors U give R <- [R, e] U (e: r/beta in B's
 *    coordinates, r_B/|r_B| appended to B).  If eta beta^2 is below the
 *    rank-one update's deflation tolerance, x has no part in the complement
 *    worth keeping and the update is of size m.
 * 4. Fixed share (before capping), capping with multiplicities
 *    (opf_cap_groups), uniform share (after): the same steps as the dense
 *    learner (learner.c), on m + 1 groups.  Explicit entries that end at the
 *    cluster's value (capped when the cluster is capped, or within a few
 *    ulps of it) merge into it: they are the top ones, so m just shrinks.
 *    With no cluster left (c = 0), entries at the cap form a new one.
 * 5. keep_finite as the dense learner: entries more than 2^1020 below the
 *    top are raised to that floor; the rank-one update's tolerance is taken
 *    relative to the entries within 2^20 of the top (learner.c, r1_scale),
 *    so that no entry needs a closer floor (which tied leading directions).
 *
 * A trial either completes or leaves the learner's weights and span as they
 * were (B and R may have been compressed: the same Q).  No allocation.
 */
#include "clustered.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "adaptive_rate.h"
#include "interrupt.h"
#include "learner.h"
#include "logweights.h"
#include "rank_one_update.h"

#define OPF_BLOCK 256          /* columns of B per compression block */

size_t opf_clustered_work_len(ptrdiff_t n, ptrdiff_t cap, ptrdiff_t k)
{
    const size_t c1 = (size_t)cap + 1, nn = (size_t)n;
    return 9 * c1 + 2 * c1 * c1 + opf_r1_work_len((ptrdiff_t)c1) + 4 * nn
           + (size_t)k * nn + OPF_BLOCK * c1;
}

size_t opf_clustered_iwork_len(ptrdiff_t n) { return 4 * (size_t)n; }

typedef struct {
    double *y, *y2, *z, *sv, *dsm, *xs, *tmp, *mult, *cw; /* cap + 1 each */
    double *qsm, *rnew;                              /* (cap + 1)^2 each */
    double *r1w, *rb, *yc, *wexp, *decw, *haar, *blk;
    ptrdiff_t *corner, *deciw;
} cws;

static cws split(const opf_clustered *s)
{
    cws w;
    const size_t c1 = (size_t)s->cap + 1, nn = (size_t)s->n;
    double *p = s->work;
    w.y = p;
    w.y2 = w.y + c1;
    w.z = w.y2 + c1;
    w.sv = w.z + c1;
    w.dsm = w.sv + c1;
    w.xs = w.dsm + c1;
    w.tmp = w.xs + c1;
    w.mult = w.tmp + c1;
    w.cw = w.mult + c1;
    w.qsm = w.cw + c1;
    w.rnew = w.qsm + c1 * c1;
    w.r1w = w.rnew + c1 * c1;
    w.rb = w.r1w + opf_r1_work_len((ptrdiff_t)c1);
    w.yc = w.rb + nn;
    w.wexp = w.yc + nn;
    w.decw = w.wexp + nn;
    w.haar = w.decw + nn;
    w.blk = w.haar + (size_t)(s->n - s->d) * nn;
    w.corner = s->iwork;
    w.deciw = s->iwork + s->n;
    return w;
}

/* ---- small BLAS helpers ---------------------------------------------------- */

static double dot(const double *a, const double *b, ptrdiff_t n)
{
    double acc = 0.0;
    for (ptrdiff_t i = 0; i < n; i++)
        acc += a[i] * b[i];
    return acc;
}

/* y[0..nb) = alpha * B x + beta * y  (B: nb rows of length n) */
static void gemv_b(const opf_clustered *s, int nb, double alpha,
                   const double *x, double beta, double *y)
{
    int n = (int)s->n, inc = 1;
    char tr = 'T';
    s->fns->dgemv(&tr, &n, &nb, &alpha, s->b, &n, (double *)x, &inc, &beta, y,
                  &inc);
}

/* x[0..n) += alpha * B^T y */
static void gemv_bt(const opf_clustered *s, int nb, double alpha,
                    const double *y, double *x)
{
    int n = (int)s->n, inc = 1;
    double one = 1.0;
    char nt = 'N';
    s->fns->dgemv(&nt, &n, &nb, &alpha, s->b, &n, (double *)y, &inc, &one, x,
                  &inc);
}

/* z[0..m) = R^T y (y: nb) */
static void gemv_rt(const opf_clustered *s, int nb, int m, const double *y,
                    double *z)
{
    int ld = (int)s->cap, inc = 1;
    double one = 1.0, zero = 0.0;
    char nt = 'N';
    if (m == 0)
        return;
    if (nb == 0) {
        memset(z, 0, (size_t)m * sizeof(double));
        return;
    }
    s->fns->dgemv(&nt, &m, &nb, &one, s->r, &ld, (double *)y, &inc, &zero, z,
                  &inc);
}

/* y[0..nb) += alpha * R z (z: m) */
static void gemv_r(const opf_clustered *s, int nb, int m, double alpha,
                   const double *z, double *y)
{
    int ld = (int)s->cap, inc = 1;
    double one = 1.0;
    char tr = 'T';
    if (m == 0 || nb == 0)
        return;
    s->fns->dgemv(&tr, &m, &nb, &alpha, s->r, &ld, (double *)z, &inc, &one, y,
                  &inc);
}

/* B <- R^T B (m rows), R <- I: the same Q, nb = m.  Blocked over the
 * columns of B so that the product needs OPF_BLOCK x m of scratch only. */
static void compress(const opf_clustered *s, const cws *w, ptrdiff_t m,
                     ptrdiff_t nb)
{
    const ptrdiff_t n = s->n, cap = s->cap;
    int im = (int)m, inb = (int)nb, ldb = (int)n, ldr = (int)cap;
    double one = 1.0, zero = 0.0;
    char nt = 'N', tr = 'T';
    if (m > 0 && nb > 0) {
        for (ptrdiff_t j0 = 0; j0 < n; j0 += OPF_BLOCK) {
            int jb = (int)(n - j0 < OPF_BLOCK ? n - j0 : OPF_BLOCK);
            /* column-major: blk (jb x m) = B^T[j0:j0+jb, :nb] R[:nb, :m] */
            s->fns->dgemm(&nt, &tr, &jb, &im, &inb, &one, s->b + j0, &ldb,
                          s->r, &ldr, &zero, w->blk, &jb);
            for (ptrdiff_t i = 0; i < m; i++)
                memcpy(s->b + i * n + j0, w->blk + i * jb,
                       (size_t)jb * sizeof(double));
        }
    }
    for (ptrdiff_t j = 0; j < m; j++) {
        memset(s->r + j * cap, 0, (size_t)m * sizeof(double));
        s->r[j * cap + j] = 1.0;
    }
    s->dims[1] = m;
}

/* ---- capping with multiplicities ------------------------------------------- */

ptrdiff_t opf_cap_groups(const double *v, const double *mult, ptrdiff_t g,
                         ptrdiff_t d, double *out)
{
    double total = 0.0, ncap = 0.0;
    ptrdiff_t r, i;
    for (i = 0; i < g; i++)
        total += mult[i];
    if (d < 1 || g < 1 || (double)d > total)
        return OPF_EINVAL;
    const double cap = -log((double)d);
    for (r = 0; r < g; r++) {
        /* groups r.. uncapped: shift so that their mass is 1 - ncap/d */
        const double top = v[r];
        double sum = 0.0;
        for (i = r; i < g; i++)
            sum += mult[i] * exp(v[i] - top);
        const double shift = log(((double)d - ncap) / (double)d)
                             - (top + log(sum));
        /* (exactly, capping group r is needed only if fewer than d entries
         * are then capped; with rounding it may look needed when it would
         * make d or more: then it is at the cap to rounding, and clamped) */
        if (top + shift <= cap || r == g - 1 || ncap + mult[r] >= (double)d) {
            for (i = 0; i < r; i++)
                out[i] = cap;
            for (i = r; i < g; i++)
                out[i] = fmin(v[i] + shift, cap);
            return r;
        }
        ncap += mult[r];
    }
    return OPF_EINVAL; /* not reached */
}

/* ---- the draw ------------------------------------------------------------------ */

/* splitmix64: the generator of the Haar directions, seeded by u's bits */
static uint64_t splitmix(uint64_t *st)
{
    uint64_t z = (*st += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double unit_open(uint64_t *st) /* uniform in (0, 1) */
{
    return ((double)(splitmix(st) >> 11) + 0.5) * 0x1p-53;
}

/* Fill v[0..n) with standard normals (Box-Muller). */
static void gaussians(double *v, ptrdiff_t n, uint64_t *st)
{
    for (ptrdiff_t i = 0; i < n; i += 2) {
        const double a = sqrt(-2.0 * log(unit_open(st)));
        const double b = 6.283185307179586 * unit_open(st);
        v[i] = a * cos(b);
        if (i + 1 < n)
            v[i + 1] = a * sin(b);
    }
}

/* Remove from v its components along Q = B^T R (m columns). */
static void project_out_q(const opf_clustered *s, const cws *w, ptrdiff_t m,
                          ptrdiff_t nb, double *v)
{
    if (m == 0)
        return;
    gemv_b(s, (int)nb, 1.0, v, 0.0, w->y2);       /* B v */
    gemv_rt(s, (int)nb, (int)m, w->y2, w->tmp);   /* Q^T v */
    memset(w->y2, 0, (size_t)nb * sizeof(double));
    gemv_r(s, (int)nb, (int)m, 1.0, w->tmp, w->y2); /* R Q^T v */
    gemv_bt(s, (int)nb, -1.0, w->y2, v);
}

/* Project h out of Q and of the `count` orthonormal directions before it
 * in w->haar (classical Gram-Schmidt, twice); returns its norm. */
static double project_out_all(const opf_clustered *s, const cws *w,
                              ptrdiff_t m, ptrdiff_t nb, ptrdiff_t count,
                              double *h)
{
    const ptrdiff_t n = s->n;
    for (int pass = 0; pass < 2; pass++) {
        project_out_q(s, w, m, nb, h);
        for (ptrdiff_t p = 0; p < count; p++) {
            const double *hp = w->haar + p * n;
            const double c = dot(hp, h, n);
            for (ptrdiff_t i = 0; i < n; i++)
                h[i] -= c * hp[i];
        }
    }
    return sqrt(dot(h, h, n));
}

/* A Gamma(a, 1) variate, a > 0 (Marsaglia & Tsang, ACM TOMS 26, 2000; for
 * a < 1, Gamma(a + 1) U^(1/a)). */
static double gamma_variate(double a, uint64_t *st)
{
    double boost = 1.0, g, v, uu;
    if (a < 1.0) {
        boost = pow(unit_open(st), 1.0 / a);
        a += 1.0;
    }
    const double dd = a - 1.0 / 3.0, cc = 1.0 / sqrt(9.0 * dd);
    for (;;) {
        do {
            gaussians(&g, 1, st);
            v = 1.0 + cc * g;
        } while (v <= 0.0);
        v = v * v * v;
        uu = unit_open(st);
        if (uu < 1.0 - 0.0331 * (g * g) * (g * g)
                || log(uu) < 0.5 * g * g + dd * (1.0 - v + log(v)))
            return dd * v * boost;
    }
}

/*
 * The energy of x in e orthonormal directions drawn uniformly (Haar) in the
 * c-dimensional complement of Q, where x's energy is beta2, drawn with the
 * generator seeded by the bits of u.  By rotation invariance it is beta2
 * times the energy of a uniform unit vector of R^c in e fixed coordinates,
 * Beta(e/2, (c - e)/2) = X / (X + Y) with X ~ Gamma(e/2), Y ~ Gamma((c - e)/2):
 * O(1) instead of drawing and orthogonalising e vectors of length n.
 */
static double haar_energy(ptrdiff_t e, ptrdiff_t c, double u, double beta2)
{
    uint64_t st;
    if (e <= 0 || !(beta2 > 0.0))
        return 0.0;
    if (e >= c)
        return beta2;
    memcpy(&st, &u, sizeof st);
    st ^= 0x5851F42D4C957F2DULL;
    const double a = gamma_variate(0.5 * (double)e, &st);
    const double b = gamma_variate(0.5 * (double)(c - e), &st);
    return a + b > 0.0 ? beta2 * (a / (a + b)) : beta2 * ((double)e / (double)c);
}

/* Draw `size` of the `len` weights in wexp (the m explicit entries, then
 * cluster slots): adds z_i^2 of the explicit ones drawn to *r and returns
 * the number of cluster slots drawn in *slots. */
static int draw_split(const opf_clustered *s, const cws *w, double u,
                      ptrdiff_t m, ptrdiff_t len, ptrdiff_t size, double *r,
                      ptrdiff_t *slots)
{
    int st = opf_draw_corner(s->sampler, w->wexp, len, size, u, w->corner,
                             w->decw, w->deciw);
    if (st != OPF_OK)
        return st;
    for (ptrdiff_t i = 0; i < size; i++) {
        const ptrdiff_t j = w->corner[i];
        if (j < m)
            *r += w->z[j] * w->z[j];
        else
            (*slots)++;
    }
    return OPF_OK;
}

/* The realized loss of the corner drawn with u from the explicit weights
 * om[0..m) and the cluster's (capped log-weight lc, weight wc): explicit
 * entries of the corner contribute z_i^2, the cluster's slots the energy
 * of x in the complement (beta2) minus that of the slots left out. */
static int draw(const opf_clustered *s, const cws *w, double u, ptrdiff_t m,
                ptrdiff_t nb, double beta2, const double *x, const double *om,
                double lc, double wc, double *rl)
{
    const ptrdiff_t n = s->n, d = s->d, c = n - m;
    const double cap = -log((double)d);
    double r = 0.0;
    ptrdiff_t i, in_cluster = 0;
    int st;
    if (c == 0) {
        st = opf_draw_corner(s->sampler, om, m, d, u, w->corner,
                             w->decw, w->deciw);
        if (st != OPF_OK)
            return st;
        for (i = 0; i < d; i++)
            r += w->z[w->corner[i]] * w->z[w->corner[i]];
    } else if (lc == cap) {
        const ptrdiff_t dd = d - c; /* explicit entries in the corner */
        if (dd > 0) {
            st = opf_draw_corner(s->sampler, om, m, dd, u, w->corner,
                                 w->decw, w->deciw);
            if (st != OPF_OK)
                return st;
            for (i = 0; i < dd; i++)
                r += w->z[w->corner[i]] * w->z[w->corner[i]];
        }
        r += beta2;
    } else if (c > n - d) {
        /* More cluster slots than the k left out of a corner: the same
         * marginals from m + k entries.  c - k slots are in every corner,
         * the other k (virtual) each with probability pv, so that the
         * cluster's expected count is c d omega_c; the explicit ones with
         * d omega_i; corners of size m.  Given how many virtual slots are
         * drawn, which cluster directions are left out is uniform (Haar):
         * each is left out with probability 1 - d omega_c, as WK Alg. 2
         * on all n weights would, in O((m + k)^2) instead of O(n^2). */
        const ptrdiff_t k = n - d;
        const double dd = (double)d;
        ptrdiff_t virt = 0;
        if (m > 0) {
            const double pv = fmin(1.0, fmax(0.0, 1.0 - (double)c
                                   * (1.0 - dd * wc) / (double)k));
            for (i = 0; i < m; i++)
                w->wexp[i] = dd * om[i];
            for (i = 0; i < k; i++)
                w->wexp[m + i] = pv;
            if ((st = draw_split(s, w, u, m, m + k, m, &r, &virt)) != OPF_OK)
                return st;
        }
        r += fmax(0.0, beta2 - haar_energy(k - virt, c, u, beta2));
    } else {
        memcpy(w->wexp, om, (size_t)m * sizeof(double));
        for (i = m; i < n; i++)
            w->wexp[i] = wc;
        if ((st = draw_split(s, w, u, m, n, d, &r, &in_cluster)) != OPF_OK)
            return st;
        r += fmax(0.0, beta2 - haar_energy(c - in_cluster, c, u, beta2));
    }
    *rl = r;
    return OPF_OK;
}

/* ---- the trial -------------------------------------------------------------------- */

/* Mix the normalised log-weights with the uniform distribution (the
 * groups: m explicit and the cluster). */
static void mix(double *mu, ptrdiff_t m, double *mu_c, ptrdiff_t n,
                double alpha)
{
    opf_mix_uniform_log(mu, m, n, alpha);
    opf_mix_uniform_log(mu_c, 1, n, alpha);
}

/* Compress B when it is due; OPF_ECAPACITY when there is no room for a
 * row, or so little that B would be compressed every few trials (the
 * caller grows the arrays and calls again). */
static int make_room(const opf_clustered *s, const cws *w, ptrdiff_t m,
                     ptrdiff_t *nb)
{
    const ptrdiff_t c = s->n - m, cap = s->cap;
    if (c > 0 && (*nb + 1 > cap || *nb >= m + m / 2 + 16) && *nb > m) {
        compress(s, w, m, *nb);
        *nb = m;
    }
    if (c > 0 && (*nb + 1 > cap || (*nb == m && m + m / 4 + 4 > cap && cap < s->n)))
        return OPF_ECAPACITY;
    return OPF_OK;
}

/* 1. z = Q^T x into w->z, s = y - R z into w->sv, r_B into w->rb; returns
 * |x|^2 and the energies |r_B|^2, |s|^2 of x in the complement. */
static void coordinates(const opf_clustered *s, const cws *w, ptrdiff_t m,
                        ptrdiff_t nb, const double *x, double *xx_out,
                        double *rr_out, double *ss_out)
{
    const ptrdiff_t n = s->n;
    const double xx = dot(x, x, n);
    double rr = xx, ss = 0.0;
    memcpy(w->rb, x, (size_t)n * sizeof(double));
    if (nb > 0) {
        gemv_b(s, (int)nb, 1.0, x, 0.0, w->y);
        gemv_bt(s, (int)nb, -1.0, w->y, w->rb);
        rr = dot(w->rb, w->rb, n);
        if (rr < 0.0625 * xx) { /* DGKS with 1/4 in norm: |x| / |r_B| <= 4 keeps the new row orthogonal to ~4 n_B eps */
            gemv_b(s, (int)nb, 1.0, w->rb, 0.0, w->y2);
            gemv_bt(s, (int)nb, -1.0, w->y2, w->rb);
            for (ptrdiff_t i = 0; i < nb; i++)
                w->y[i] += w->y2[i];
            rr = dot(w->rb, w->rb, n);
        }
        gemv_rt(s, (int)nb, (int)m, w->y, w->z);
        memcpy(w->sv, w->y, (size_t)nb * sizeof(double));
        if (nb == m) {
            /* R is square: Q spans B's rows, s is rounding only */
            memset(w->sv, 0, (size_t)nb * sizeof(double));
        } else {
            const double yy = dot(w->y, w->y, nb);
            gemv_r(s, (int)nb, (int)m, -1.0, w->z, w->sv);
            ss = dot(w->sv, w->sv, nb);
            if (ss < 0.5 * yy) { /* as r_B: a second pass keeps s _|_ R */
                gemv_rt(s, (int)nb, (int)m, w->sv, w->tmp);
                gemv_r(s, (int)nb, (int)m, -1.0, w->tmp, w->sv);
                for (ptrdiff_t i = 0; i < m; i++)
                    w->z[i] += w->tmp[i];
            }
        }
        ss = dot(w->sv, w->sv, nb);
    }
    if (m == n)
        rr = ss = 0.0; /* no complement: what is left is rounding */
    *xx_out = xx;
    *rr_out = rr;
    *ss_out = ss;
}

/*
 * 3. log W (or A) - rho x x^T on [Q, r/beta]: one rank-one update of size
 * m + 1 (m if x's part in the complement is below the deflation
 * tolerance).  On success the new values are in s->mu[0..*mp) (ascending,
 * at most mu_c) and R, B describe the new Q; on failure nothing changed.
 */
static int update(const opf_clustered *s, const cws *w, ptrdiff_t m,
                  ptrdiff_t nb, double rho, double xx, double rr, double ss,
                  ptrdiff_t *mp_out, ptrdiff_t *nb_out)
{
    const ptrdiff_t n = s->n, cap = s->cap, c = n - m;
    ptrdiff_t i;
    double dmax = c > 0 ? fabs(s->clus[0]) : 0.0;
    if (m > 0)
        dmax = fmax(dmax, fmax(fabs(s->mu[0]), fabs(s->mu[m - 1])));
    /* relative to the entries that carry weight (learner.c, r1_scale) */
    const double dscale = opf_r1_scale(c > 0 ? s->clus[0] : s->mu[m - 1]);
    dmax = fmin(dmax, dscale);
    const double tol = OPF_R1_DEFLATION_FACTOR * DBL_EPSILON
                       * fmax(dmax, rho * xx);
    int add = 0, append = 0;
    double beta = 0.0;
    if (c > 0 && rho * rr > tol) {
        add = append = 1;
        beta = sqrt(ss + rr);
    } else if (c > 0 && rho * ss > tol) {
        add = 1;
        beta = sqrt(ss);
    }
    const ptrdiff_t mp = m + add, nb1 = nb + append;
    *mp_out = mp;
    *nb_out = nb1;
    if (mp == 0)
        return OPF_OK; /* x = 0 on an untouched learner: nothing changes */
    memcpy(w->dsm, s->mu, (size_t)m * sizeof(double));
    memcpy(w->xs, w->z, (size_t)m * sizeof(double));
    if (add) {
        w->dsm[m] = s->clus[0];
        w->xs[m] = beta;
    }
    memset(w->qsm, 0, (size_t)(mp * mp) * sizeof(double));
    for (i = 0; i < mp; i++)
        w->qsm[i * mp + i] = 1.0;
    opf_r1_info info;
    const int st = opf_rank_one_update_scaled(mp, w->dsm, w->qsm, mp, -rho,
                                              w->xs, w->r1w, s->r1iwork,
                                              s->fns, 0, dscale, &info);
    if (st != OPF_OK)
        return st;

    /* Nothing can fail from here on.  R <- [R, e] U */
    if (add) {
        if (append) {
            const double rn = sqrt(rr);
            double *brow = s->b + nb * n;
            for (i = 0; i < n; i++)
                brow[i] = w->rb[i] / rn;
            memset(s->r + nb * cap, 0, (size_t)m * sizeof(double));
            s->r[nb * cap + m] = rn / beta;
        }
        for (i = 0; i < nb; i++)
            s->r[i * cap + m] = w->sv[i] / beta;
    }
    {
        int imp = (int)mp, inb1 = (int)nb1, ld = (int)cap;
        double one = 1.0, zero = 0.0;
        char nt = 'N';
        /* column-major: rnew (mp x nb1) = U^T R^T, i.e. rnew = R U row-major */
        s->fns->dgemm(&nt, &nt, &imp, &inb1, &imp, &one, w->qsm, &imp, s->r,
                      &ld, &zero, w->rnew, &ld);
        for (i = 0; i < nb1; i++)
            memcpy(s->r + i * cap, w->rnew + i * cap,
                   (size_t)mp * sizeof(double));
    }
    memcpy(s->mu, w->dsm, (size_t)mp * sizeof(double));
    return OPF_OK;
}

/* Explicit entries that ended within a few ulps of the cluster's value
 * merge into it (they are the top ones): the new m. */
static ptrdiff_t merge_into_cluster(const double *mu, ptrdiff_t m,
                                    double mu_c)
{
    const double tolm = 4.0 * DBL_EPSILON * fmax(1.0, fabs(mu_c));
    while (m > 0 && mu[m - 1] >= mu_c - tolm)
        m--;
    return m;
}


static int trial(const opf_clustered *s, const cws *w, const double *x,
                 double u, double *el, double *rl)
{
    const ptrdiff_t n = s->n, d = s->d;
    ptrdiff_t m = s->dims[0], nb = s->dims[1], i;
    const ptrdiff_t c = n - m;
    const double capv = -log((double)d);
    double xx, rr, ss;
    int st;

    if ((st = make_room(s, w, m, &nb)) != OPF_OK)
        return st;
    coordinates(s, w, m, nb, x, &xx, &rr, &ss);
    const double beta2 = ss + rr;

    /* 2. losses and the draw */
    double e = 0.0;
    for (i = 0; i < m; i++)
        e += s->omega[i] * w->z[i] * w->z[i];
    if (c > 0)
        e += s->clus[1] * beta2;
    if ((st = draw(s, w, u, m, nb, beta2, x, s->omega, s->clus[0],
                   s->clus[1], rl)) != OPF_OK)
        return st;
    *el = e * (double)d;

    /* 3. the rank-one update on [Q, r/beta] (eta = "auto": the rate's
     * step, then both log-weights scaled by gamma, as learner.c) */
    double step = s->eta, gamma = 1.0, delta = 0.0;
    if (!s->rate
        || opf_rate_trial(s->rate, (double)n, (double)d, *el, xx, &step,
                          &gamma, &delta))
        if ((st = update(s, w, m, nb, step, xx, rr, ss, &m, &nb)) != OPF_OK)
            return st;
    if (s->rate && isfinite(s->rate[1]) && step == s->rate[1] && m > 0) {
        /* the exact gap from the updated groups, as learner.c */
        const double top = m < n ? s->clus[0] : s->mu[m - 1];
        double sum = (double)(n - m) * exp(s->clus[0] - top);
        for (i = 0; i < m; i++)
            sum += exp(s->mu[i] - top);
        delta = opf_rate_exact(s->rate, (double)n, (double)d, *el,
                               top + log(sum), &gamma);
    }
    if (s->rate)
        opf_rate_commit(s->rate, opf_rate_scale((double)n, (double)d), delta);
    if (m == 0)
        return OPF_OK;
    double mu_c = s->clus[0];
    ptrdiff_t cc = n - m;
    if (gamma != 1.0) {
        for (i = 0; i < m; i++)
            s->mu[i] *= gamma;
        mu_c *= gamma;
    }

    /* 4. mixing and capping */
    if (s->share == OPF_SHARE_FIXED && s->alpha > 0.0) {
        /* YL: v is a distribution before (11b) */
        const double top = cc > 0 ? mu_c : s->mu[m - 1];
        const double lse = opf_log_total(s->mu, m, top, (double)cc, mu_c);
        for (i = 0; i < m; i++)
            s->mu[i] -= lse;
        mu_c -= lse;
        mix(s->mu, m, &mu_c, n, s->alpha);
    }
    /* groups, descending: the cluster, then the explicit entries */
    ptrdiff_t g = 0;
    if (cc > 0) {
        w->dsm[g] = mu_c;
        w->mult[g++] = (double)cc;
    }
    for (i = m - 1; i >= 0; i--) {
        w->dsm[g] = s->mu[i];
        w->mult[g++] = 1.0;
    }
    if (opf_cap_groups(w->dsm, w->mult, g, d, w->xs) < 0)
        return OPF_EINVAL; /* not reached: d < n */
    g = 0;
    if (cc > 0)
        mu_c = w->xs[g++];
    for (i = m - 1; i >= 0; i--)
        s->mu[i] = w->xs[g++];
    if (s->share == OPF_SHARE_UNIFORM && s->alpha > 0.0)
        mix(s->mu, m, &mu_c, n, s->alpha);

    /* merge the entries that reached the cluster */
    if (cc > 0) {
        m = merge_into_cluster(s->mu, m, mu_c);
    } else if (s->mu[m - 1] == capv) {
        while (m > 0 && s->mu[m - 1] == capv)
            m--;
        mu_c = capv;
    }
    cc = n - m;

    /* 5. keep finite */
    opf_floor_ascending(s->mu, m, cc > 0 ? mu_c : s->mu[m - 1],
                        OPF_EIGEN_FLOOR);
    for (i = 0; i < m; i++)
        s->omega[i] = exp(s->mu[i]);
    s->clus[0] = mu_c;
    s->clus[1] = exp(mu_c);
    s->dims[0] = m;
    s->dims[1] = nb;
    return OPF_OK;
}

/*
 * W = cap(exp(A)) of the cumulative state, as groups: the explicit capped
 * weights to w->cw[0..m), the cluster's capped log-weight and weight to
 * *lc, *wc.  As the dense learner (learner.c, cap_log_at_any_level), the
 * values are capped relative to the d-th largest when that is beyond
 * +-512, so that the normalisation does not cancel.
 */
static int cumulative_weights(const opf_clustered *s, const cws *w,
                              ptrdiff_t m, double *lc, double *wc)
{
    const ptrdiff_t n = s->n, d = s->d, c = n - m;
    const double mu_c = s->clus[0];
    ptrdiff_t g = 0, i;
    const double vd = c >= d ? mu_c : s->mu[m - 1 - (d - c - 1)];
    const double sh = opf_cap_level(vd);
    if (c > 0) {
        w->dsm[g] = mu_c - sh;
        w->mult[g++] = (double)c;
    }
    for (i = m - 1; i >= 0; i--) {
        w->dsm[g] = s->mu[i] - sh;
        w->mult[g++] = 1.0;
    }
    if (opf_cap_groups(w->dsm, w->mult, g, d, w->xs) < 0)
        return OPF_EINVAL; /* not reached: d < n */
    g = 0;
    *lc = c > 0 ? w->xs[g++] : 0.0;
    *wc = c > 0 ? exp(*lc) : 0.0;
    for (i = m - 1; i >= 0; i--)
        w->cw[i] = exp(w->xs[g++]);
    return OPF_OK;
}

/*
 * Follow the Leader's loss: the energy of y outside its k leading
 * directions, the explicit ones first (ascending A), then, if m < k,
 * k - m directions of the cluster chosen deterministically: the unit
 * vectors e_0, e_1, ... in turn, each projected out of Q and of the ones
 * taken (twice), taken when more than half its norm remains (the
 * learner's components_ uses the same rule).
 */
static double leader_loss(const opf_clustered *s, const cws *w, ptrdiff_t m,
                          ptrdiff_t nb, double beta2, const double *y)
{
    const ptrdiff_t n = s->n, k = n - s->d;
    double r = 0.0;
    ptrdiff_t i;
    if (m >= k) {
        for (i = k; i < m; i++)
            r += w->z[i] * w->z[i];
        return r + beta2;
    }
    r = beta2;
    ptrdiff_t got = 0;
    for (i = 0; i < n && got < k - m; i++) {
        double *h = w->haar + got * n;
        memset(h, 0, (size_t)n * sizeof(double));
        h[i] = 1.0;
        const double nrm = project_out_all(s, w, m, nb, got, h);
        if (!(nrm > 0.5))
            continue;
        for (ptrdiff_t j = 0; j < n; j++)
            h[j] /= nrm;
        const double cf = dot(h, y, n);
        r -= cf * cf;
        got++;
    }
    return fmax(0.0, r);
}

/* WK Alg. 6 and Follow the Leader on the clustered state of A. */
static int trial_cumulative(const opf_clustered *s, const cws *w,
                            const double *x, double u, double *el, double *rl)
{
    const ptrdiff_t n = s->n, d = s->d, t = *s->t + 1;
    ptrdiff_t m = s->dims[0], nb = s->dims[1], i;
    const ptrdiff_t c = n - m;
    double xx, rr, ss, f = 1.0;
    int st;

    if ((st = make_room(s, w, m, &nb)) != OPF_OK)
        return st;
    for (i = 0; i < n; i++)
        w->yc[i] = x[i] - s->mean[i];
    coordinates(s, w, m, nb, w->yc, &xx, &rr, &ss);
    const double beta2 = ss + rr;

    /* 2. losses and the draw, with W = cap(exp(A)) */
    if (s->sampler == OPF_SAMPLER_LEADER) {
        *rl = *el = leader_loss(s, w, m, nb, beta2, w->yc);
    } else {
        double lc, wc, e = 0.0;
        if ((st = cumulative_weights(s, w, m, &lc, &wc)) != OPF_OK)
            return st;
        for (i = 0; i < m; i++)
            e += w->cw[i] * w->z[i] * w->z[i];
        if (c > 0)
            e += wc * beta2;
        if ((st = draw(s, w, u, m, nb, beta2, w->yc, w->cw, lc, wc, rl))
            != OPF_OK)
            return st;
        *el = e * (double)d;
    }

    /* 3. A <- A - eta f y y^T (eq. 16) */
    if (s->centered)
        f = opf_center_factor(s->center_lr_inv, t); /* eq. (16) */
    double step = s->eta, gamma = 1.0, delta = 0.0;
    int learn = !s->rate
                || opf_rate_trial(s->rate, (double)n, (double)d, *el, xx,
                                  &step, &gamma, &delta);
    if (f > 0.0 && learn) {
        if ((st = update(s, w, m, nb, step * f, xx, rr, ss, &m, &nb))
            != OPF_OK)
            return st;
        if (m < n)
            m = merge_into_cluster(s->mu, m, s->clus[0]);
    }
    if (s->rate) { /* A = eta_t (log W0 - C^t), as learner.c */
        if (gamma != 1.0) {
            for (i = 0; i < m; i++)
                s->mu[i] *= gamma;
            s->clus[0] *= gamma;
        }
        opf_rate_commit(s->rate, opf_rate_scale((double)n, (double)d), delta);
        s->rate[2] += f * xx; /* tr C^t: explained_variance_ at any rate */
    }
    if (s->centered) /* eq. (15) */
        opf_center_update(s->mean, x, n, s->center_lr_inv, t);

    /* keep finite: A's level is not normalised (learner.c) */
    double top = m < n ? s->clus[0] : s->mu[m - 1];
    top = opf_lift_level(s->mu, m, &s->clus[0], top);
    opf_floor_ascending(s->mu, m, top, OPF_EIGEN_FLOOR);
    s->clus[1] = exp(s->clus[0]);
    s->dims[0] = m;
    s->dims[1] = nb;
    return OPF_OK;
}

ptrdiff_t opf_clustered_trials(const opf_clustered *s, const double *X,
                               ptrdiff_t T, const double *u,
                               double *exp_loss, double *real_loss,
                               int *status)
{
    cws w;
    ptrdiff_t i;
    *status = OPF_OK;
    if (s->n < 2 || s->d < 1 || s->d >= s->n || s->cap < 1 || s->cap > s->n
        || (s->share != OPF_SHARE_NONE && s->share != OPF_SHARE_FIXED
            && s->share != OPF_SHARE_UNIFORM)
        || (s->cumulative && (s->share != OPF_SHARE_NONE || !s->mean))
        || (!s->cumulative && s->sampler == OPF_SAMPLER_LEADER)
        || !opf_lapack_ok(s->fns)) {
        *status = OPF_EINVAL;
        return 0;
    }
    w = split(s);
    for (i = 0; i < T; i++) {
        opf_clustered at = *s; /* alpha = "auto": this trial's alpha_t */
        int st;
        if (opf_interrupt_poll(s->poll, OPF_POLL_CLUSTERED_TRIAL)) {
            *status = OPF_EINTR;
            return i;
        }
        if (s->alpha_auto)
            at.alpha = opf_rate_alpha(*s->t + 1);
        st = s->cumulative ? trial_cumulative(&at, &w, X + i * s->n, u[i],
                                              exp_loss + i, real_loss + i)
                           : trial(&at, &w, X + i * s->n, u[i], exp_loss + i,
                                   real_loss + i);
        if (st != OPF_OK) {
            *status = st;
            return i;
        }
        (*s->t)++;
        if (s->m_stop > 0 && s->dims[0] >= s->m_stop) {
            *status = OPF_SWITCH;
            return i + 1;
        }
    }
    return i;
}
