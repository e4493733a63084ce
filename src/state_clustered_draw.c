/*
 * state_clustered_draw.c -- the clustered state's draw (state.h, step 2 of
 * state_clustered.c): the corner from the explicit weights and the
 * cluster's, the energy of x in the cluster directions a corner leaves out
 * (Haar, from a generator seeded by the trial's uniform), and Follow the
 * Leader's deterministic choice of cluster directions.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "state_clustered_draw.h"

#include "cap.h"
#include "clustered_basis.h"
#include "logweights.h"
#include "systematic.h"

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
static void project_out_q(const opf_learner *s, const opf_clustered *cs, opf_ws *w, ptrdiff_t m,
                          ptrdiff_t nb, double *v)
{
    if (m == 0)
        return;
    gemv_b(s, cs, (int)nb, 1.0, v, 0.0, w->y2);       /* B v */
    gemv_rt(s, cs, (int)nb, (int)m, w->y2, w->tmp);   /* Q^T v */
    memset(w->y2, 0, (size_t)nb * sizeof(double));
    gemv_r(s, cs, (int)nb, (int)m, 1.0, w->tmp, w->y2); /* R Q^T v */
    gemv_bt(s, cs, (int)nb, -1.0, w->y2, v);
}

/* Project h out of Q and of the `count` orthonormal directions before it
 * in w->haar (classical Gram-Schmidt, twice); returns its norm. */
static double project_out_all(const opf_learner *s, const opf_clustered *cs, opf_ws *w,
                              ptrdiff_t m, ptrdiff_t nb, ptrdiff_t count,
                              double *h)
{
    const ptrdiff_t n = s->n;
    for (int pass = 0; pass < 2; pass++) {
        project_out_q(s, cs, w, m, nb, h);
        for (ptrdiff_t p = 0; p < count; p++) {
            const double *hp = w->haar + p * n;
            const double c = opf_cl_dot(hp, h, n);
            for (ptrdiff_t i = 0; i < n; i++)
                h[i] -= c * hp[i];
        }
    }
    return sqrt(opf_cl_dot(h, h, n));
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
double opf_haar_energy(ptrdiff_t e, ptrdiff_t c, double u, double beta2)
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

/*
 * W = cap(exp(A)) of the cumulative law, as groups: the explicit capped
 * weights to cw[0..m), the cluster's capped log-weight and weight to *lc,
 * *wc (0 without a cluster).  As the dense state (state_dense.c,
 * cap_log_at_any_level), the values are capped relative to the d-th
 * largest when that is beyond +-512, so that the normalisation does not
 * cancel.  work: 3 (m + 1) doubles.
 */
int opf_cl_capped_weights(ptrdiff_t n, ptrdiff_t d, ptrdiff_t m,
                          const double *mu, double mu_c, double *cw,
                          double *lc, double *wc, double *work)
{
    const ptrdiff_t c = n - m;
    double *v = work, *mult = work + m + 1, *out = work + 2 * (m + 1);
    ptrdiff_t g = 0, i;
    const double vd = c >= d ? mu_c : mu[m - 1 - (d - c - 1)];
    const double sh = opf_cap_level(vd);
    if (c > 0) {
        v[g] = mu_c - sh;
        mult[g++] = (double)c;
    }
    for (i = m - 1; i >= 0; i--) {
        v[g] = mu[i] - sh;
        mult[g++] = 1.0;
    }
    if (opf_cap_groups(v, mult, g, d, out) < 0)
        return OPF_EINVAL; /* not reached: d < n */
    g = 0;
    *lc = c > 0 ? out[g++] : 0.0;
    *wc = c > 0 ? exp(*lc) : 0.0;
    for (i = m - 1; i >= 0; i--)
        cw[i] = exp(out[g++]);
    return OPF_OK;
}

/*
 * What the sampler draws from (step 2 of state_clustered.c).  When the
 * cluster is at the cap (WK Alg. 2: capped entries belong to every corner)
 * the corner is the whole cluster plus d - c explicit entries drawn from
 * the explicit weights alone.  With more cluster slots than the k a corner
 * leaves out, the same marginals come from m + k entries: c - k slots are
 * in every corner, the other k (virtual) each with probability pv, so that
 * the cluster's expected count is c d omega_c; the explicit ones with
 * d omega_i; corners of size m.  Otherwise the full vector: the explicit
 * weights, then c copies of the cluster's.  Given how many cluster slots
 * are drawn, which cluster directions are left out is uniform (Haar).
 */
opf_cl_plan opf_cl_corner_plan(ptrdiff_t n, ptrdiff_t d, ptrdiff_t m,
                               const double *om, double lc, double wc,
                               double *wexp)
{
    const ptrdiff_t c = n - m, k = n - d;
    opf_cl_plan p;
    ptrdiff_t i;
    p.v = om;
    p.len = m;
    p.size = d;
    p.left_out = 0;
    if (c == 0) {
        return p;
    } else if (lc == -log((double)d)) {
        p.size = d - c; /* explicit entries in the corner */
    } else if (c > k) {
        const double dd = (double)d;
        const double pv = fmin(1.0, fmax(0.0, 1.0 - (double)c
                               * (1.0 - dd * wc) / (double)k));
        for (i = 0; i < m; i++)
            wexp[i] = dd * om[i];
        for (i = 0; i < k; i++)
            wexp[m + i] = pv;
        p.v = wexp;
        p.len = m + k;
        p.size = m;
        p.left_out = k;
    } else {
        memcpy(wexp, om, (size_t)m * sizeof(double));
        for (i = m; i < n; i++)
            wexp[i] = wc;
        p.v = wexp;
        p.len = n;
        p.left_out = c;
    }
    return p;
}

ptrdiff_t opf_cl_corner_take(const opf_cl_plan *p, ptrdiff_t m,
                             ptrdiff_t *corner, ptrdiff_t *left_out)
{
    ptrdiff_t i, ne = 0;
    *left_out = p->left_out;
    for (i = 0; i < p->size; i++) {
        if (corner[i] < m)
            corner[ne++] = corner[i];
        else
            (*left_out)--;
    }
    return ne;
}

/* The realized loss of the corner drawn with u from the explicit weights
 * om[0..m) and the cluster's (capped log-weight lc, weight wc): explicit
 * entries of the corner contribute z_i^2, the cluster's slots the energy
 * of x in the complement (beta2) minus that of the directions left out. */
int opf_cl_draw(const opf_learner *s, const opf_clustered *cs, opf_ws *w, double u, ptrdiff_t m,
                double beta2, const double *om, double lc, double wc,
                double *rl)
{
    const ptrdiff_t n = s->n, c = n - m;
    const opf_cl_plan p = opf_cl_corner_plan(n, s->d, m, om, lc, wc,
                                             w->wexp);
    double r = 0.0;
    ptrdiff_t i, ne, left_out;
    if (p.size > 0) {
        const int st = opf_draw_corner(s->sampler, p.v, p.len, p.size, u,
                                       w->corner, w->decw, w->deciw);
        if (st != OPF_OK)
            return st;
    }
    ne = opf_cl_corner_take(&p, m, w->corner, &left_out);
    for (i = 0; i < ne; i++)
        r += w->z[w->corner[i]] * w->z[w->corner[i]];
    if (c > 0)
        r += fmax(0.0, beta2 - opf_haar_energy(left_out, c, u, beta2));
    *rl = r;
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
double opf_cl_leader_loss(const opf_learner *s, const opf_clustered *cs, opf_ws *w, ptrdiff_t m,
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
        const double nrm = project_out_all(s, cs, w, m, nb, got, h);
        if (!(nrm > 0.5))
            continue;
        for (ptrdiff_t j = 0; j < n; j++)
            h[j] /= nrm;
        const double cf = opf_cl_dot(h, y, n);
        r -= cf * cf;
        got++;
    }
    return fmax(0.0, r);
}
