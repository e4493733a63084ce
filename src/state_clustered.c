/*
 * state_clustered.c -- the clustered representation of the eigen-learners'
 * state (state.h): O(n m) per trial.
 *
 * The state (learner.h, state.h) is m explicit eigenpairs of log W plus one
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
 *    coordinates, r_B/|r_B| appended to B).  If eta |x| beta (the update's
 *    coupling to the complement) is below the rank-one update's deflation
 *    tolerance, x has no part in the complement worth keeping and the
 *    update is of size m.
 * 4. Fixed share (before capping), capping with multiplicities
 *    (opf_cap_groups), uniform share (after): the same steps as the dense
 *    state (state_dense.c), on m + 1 groups.  Explicit entries that end at the
 *    cluster's value (capped when the cluster is capped, or within a few
 *    ulps of it) merge into it: they are the top ones, so m just shrinks.
 *    With no cluster left (c = 0), entries at the cap form a new one.
 * 5. keep_finite as the dense learner: entries more than 2^60 below the
 *    top (Follow the Leader: 2^1020, logweights.h) are raised to that
 *    floor; the rank-one update's tolerance is taken relative to the
 *    entries within 2^20 of the top (state_dense.c, r1_scale), so that no
 *    entry needs a closer floor (which tied leading directions).
 *
 * A trial either completes or leaves the learner's weights and span as they
 * were (B and R may have been compressed: the same Q).  No allocation.
 */
#include "state.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "adaptive_rate.h"
#include "cap.h"
#include "clustered_basis.h"
#include "interrupt.h"
#include "learner.h"
#include "logweights.h"
#include "rank_one_update.h"
#include "state_clustered_draw.h"

#define OPF_BLOCK 256          /* columns of B per compression block */

size_t opf_clustered_work_len(ptrdiff_t n, ptrdiff_t cap, ptrdiff_t k)
{
    const size_t c1 = (size_t)cap + 1, nn = (size_t)n;
    return 9 * c1 + 2 * c1 * c1 + opf_r1_work_len((ptrdiff_t)c1) + 4 * nn
           + (size_t)k * nn + OPF_BLOCK * c1;
}


static opf_ws clustered_split(const opf_learner *s, const void *self)
{
    const opf_clustered *cs = self;
    opf_ws w;
    const size_t c1 = (size_t)cs->cap + 1, nn = (size_t)s->n;
    /* vectors of the small update (m + 1), of x's length (n) */
    double **const small[] = {&w.y, &w.y2, &w.z, &w.sv, &w.dsm, &w.xs, &w.tmp,
                              &w.mult, &w.cw};
    double **const vectors[] = {&w.rb, &w.yc, &w.wexp, &w.decw};
    memset(&w, 0, sizeof w);
    w.qsm = opf_carve(s->work, c1, small, 9);
    w.rnew = w.qsm + c1 * c1;
    w.r1w = w.rnew + c1 * c1;
    w.haar = opf_carve(w.r1w + opf_r1_work_len((ptrdiff_t)c1), nn, vectors, 4);
    w.blk = w.haar + (size_t)(s->n - s->d) * nn;
    w.corner = s->iwork;
    w.deciw = s->iwork + s->n;
    w.m = cs->dims[0];
    w.nb = cs->dims[1];
    return w;
}

/* B <- R^T B (m rows), R <- I: the same Q, nb = m.  Blocked over the
 * columns of B so that the product needs OPF_BLOCK x m of scratch only. */
static void compress(const opf_learner *s, const opf_clustered *cs, opf_ws *w, ptrdiff_t m,
                     ptrdiff_t nb)
{
    const ptrdiff_t n = s->n, cap = cs->cap;
    int im = (int)m, inb = (int)nb, ldb = (int)n, ldr = (int)cap;
    double one = 1.0, zero = 0.0;
    char nt = 'N', tr = 'T';
    if (m > 0 && nb > 0) {
        for (ptrdiff_t j0 = 0; j0 < n; j0 += OPF_BLOCK) {
            int jb = (int)(n - j0 < OPF_BLOCK ? n - j0 : OPF_BLOCK);
            /* column-major: blk (jb x m) = B^T[j0:j0+jb, :nb] R[:nb, :m] */
            s->fns->dgemm(&nt, &tr, &jb, &im, &inb, &one, cs->b + j0, &ldb,
                          cs->r, &ldr, &zero, w->blk, &jb);
            for (ptrdiff_t i = 0; i < m; i++)
                memcpy(cs->b + i * n + j0, w->blk + i * jb,
                       (size_t)jb * sizeof(double));
        }
    }
    for (ptrdiff_t j = 0; j < m; j++) {
        memset(cs->r + j * cap, 0, (size_t)m * sizeof(double));
        cs->r[j * cap + j] = 1.0;
    }
    cs->dims[1] = m;
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
static int make_room(const opf_learner *s, const opf_clustered *cs, opf_ws *w, ptrdiff_t m,
                     ptrdiff_t *nb)
{
    const ptrdiff_t c = s->n - m, cap = cs->cap;
    if (c > 0 && (*nb + 1 > cap || *nb >= m + m / 2 + 16) && *nb > m) {
        compress(s, cs, w, m, *nb);
        *nb = m;
    }
    if (c > 0 && (*nb + 1 > cap || (*nb == m && m + m / 4 + 4 > cap && cap < s->n)))
        return OPF_ECAPACITY;
    return OPF_OK;
}

/* 1. z = Q^T x into w->z, s = y - R z into w->sv, r_B into w->rb; returns
 * |x|^2 and the energies |r_B|^2, |s|^2 of x in the complement. */
static void coordinates(const opf_learner *s, const opf_clustered *cs, opf_ws *w, ptrdiff_t m,
                        ptrdiff_t nb, const double *x, double *xx_out,
                        double *rr_out, double *ss_out)
{
    const ptrdiff_t n = s->n;
    double xx = 0.0;
    for (ptrdiff_t i = 0; i < n; i++) { /* opf_cl_dot(x, x, n) and r_B = x in one read of x */
        xx += x[i] * x[i];
        w->rb[i] = x[i];
    }
    double rr = xx, ss = 0.0;
    if (nb > 0) {
        gemv_b(s, cs, (int)nb, 1.0, x, 0.0, w->y);
        gemv_bt(s, cs, (int)nb, -1.0, w->y, w->rb);
        rr = opf_cl_dot(w->rb, w->rb, n);
        if (rr < 0.0625 * xx) { /* DGKS with 1/4 in norm: |x| / |r_B| <= 4 keeps the new row orthogonal to ~4 n_B eps */
            gemv_b(s, cs, (int)nb, 1.0, w->rb, 0.0, w->y2);
            gemv_bt(s, cs, (int)nb, -1.0, w->y2, w->rb);
            for (ptrdiff_t i = 0; i < nb; i++)
                w->y[i] += w->y2[i];
            rr = opf_cl_dot(w->rb, w->rb, n);
        }
        gemv_rt(s, cs, (int)nb, (int)m, w->y, w->z);
        memcpy(w->sv, w->y, (size_t)nb * sizeof(double));
        if (nb == m) {
            /* R is square: Q spans B's rows, s is rounding only */
            memset(w->sv, 0, (size_t)nb * sizeof(double));
        } else {
            const double yy = opf_cl_dot(w->y, w->y, nb);
            gemv_r(s, cs, (int)nb, (int)m, -1.0, w->z, w->sv);
            ss = opf_cl_dot(w->sv, w->sv, nb);
            if (ss < 0.5 * yy) { /* as r_B: a second pass keeps s _|_ R */
                gemv_rt(s, cs, (int)nb, (int)m, w->sv, w->tmp);
                gemv_r(s, cs, (int)nb, (int)m, -1.0, w->tmp, w->sv);
                for (ptrdiff_t i = 0; i < m; i++)
                    w->z[i] += w->tmp[i];
            }
        }
        ss = opf_cl_dot(w->sv, w->sv, nb);
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
 * tolerance).  On success the new values are in cs->mu[0..*mp) (ascending,
 * at most mu_c) and R, B describe the new Q; on failure nothing changed.
 */
static int update(const opf_learner *s, const opf_clustered *cs, opf_ws *w, ptrdiff_t m,
                  ptrdiff_t nb, double rho, double xx, double rr, double ss,
                  ptrdiff_t *mp_out, ptrdiff_t *nb_out)
{
    const ptrdiff_t n = s->n, cap = cs->cap, c = n - m;
    ptrdiff_t i;
    double dmax = c > 0 ? fabs(cs->clus[0]) : 0.0;
    if (m > 0)
        dmax = fmax(dmax, fmax(fabs(cs->mu[0]), fabs(cs->mu[m - 1])));
    /* relative to the entries that carry weight (state_dense.c, r1_scale) */
    const double dscale = opf_r1_scale(c > 0 ? cs->clus[0] : cs->mu[m - 1]);
    dmax = fmin(dmax, dscale);
    const double tol = OPF_R1_DEFLATION_FACTOR * DBL_EPSILON
                       * fmax(dmax, rho * xx);
    /* x's part beta in the complement is dropped only if the update's
     * coupling to it, rho |x| beta (r |u_j| of the rank-one update's
     * deflation, rank_one_update.h: the off-diagonal entries the arrow
     * would have), is below the tolerance.  Testing its energy rho beta^2
     * instead dropped couplings up to sqrt(tol rho |x|^2): a row of norm
     * 1e-9 beside a center of 1e-3 tilted WK Alg. 6's leading direction by
     * 4e-9 where the dense state kept it (issue 35, item 6). */
    const double coupling = rho * sqrt(xx);
    int add = 0, append = 0;
    double beta = 0.0;
    /* A part of x outside Q at the rounding of the projections that found
     * it, |r| <= 8 sqrt(nb + 1) eps |x|, is not kept, whatever the
     * coupling: its direction is that of the rounding, not of x, so a row
     * appended along it is orthogonal to B only to about B's own
     * orthogonality times |x| / |r_B|, which the next such row multiplies
     * again.  At a large rate the coupling passed the tolerance with |r_B|
     * ~ 8 eps |x| (rows in Q's span), and B lost its orthogonality within
     * a few such rows (OnlineAdaptivePCA, eta = "auto", 64 features: W's
     * trace reached 1.08, its losses above |x|^2).  Dropping it moves the
     * update by at most rho |x|^2 8 sqrt(nb + 1) eps, the rounding of the
     * dense state's update. */
    const double noise = 64.0 * (double)(nb + 1) * DBL_EPSILON * DBL_EPSILON * xx;
    if (rr <= noise)
        rr = 0.0;
    if (ss <= noise)
        ss = 0.0;
    if (c > 0 && coupling * sqrt(rr) > tol) {
        add = append = 1;
        beta = sqrt(ss + rr);
    } else if (c > 0 && coupling * sqrt(ss) > tol) {
        add = 1;
        beta = sqrt(ss);
    }
    const ptrdiff_t mp = m + add, nb1 = nb + append;
    *mp_out = mp;
    *nb_out = nb1;
    if (mp == 0)
        return OPF_OK; /* x = 0 on an untouched learner: nothing changes */
    memcpy(w->dsm, cs->mu, (size_t)m * sizeof(double));
    memcpy(w->xs, w->z, (size_t)m * sizeof(double));
    if (add) {
        w->dsm[m] = cs->clus[0];
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
            double *brow = cs->b + nb * n;
            for (i = 0; i < n; i++)
                brow[i] = w->rb[i] / rn;
            memset(cs->r + nb * cap, 0, (size_t)m * sizeof(double));
            cs->r[nb * cap + m] = rn / beta;
        }
        for (i = 0; i < nb; i++)
            cs->r[i * cap + m] = w->sv[i] / beta;
    }
    {
        int imp = (int)mp, inb1 = (int)nb1, ld = (int)cap;
        double one = 1.0, zero = 0.0;
        char nt = 'N';
        /* column-major: rnew (mp x nb1) = U^T R^T, i.e. rnew = R U row-major */
        s->fns->dgemm(&nt, &nt, &imp, &inb1, &imp, &one, w->qsm, &imp, cs->r,
                      &ld, &zero, w->rnew, &ld);
        for (i = 0; i < nb1; i++)
            memcpy(cs->r + i * cap, w->rnew + i * cap,
                   (size_t)mp * sizeof(double));
    }
    memcpy(cs->mu, w->dsm, (size_t)mp * sizeof(double));
    return OPF_OK;
}

/* Explicit entries that ended within a few ulps of the cluster's value
 * merge into it (they are the top ones): the new m.  The ulps are those of
 * max(1, |mu_c|) for log-weights (unit scale), of |mu_c| for Follow the
 * Leader (leader: A = -C^t in the data's units, mu_c = 0: only an entry
 * that rounded onto the cluster merges, at every scale of the data; with
 * the floor 1 every direction of rows below ~1e-8 merged, issue 35 item 2). */
static ptrdiff_t merge_into_cluster(const double *mu, ptrdiff_t m,
                                    double mu_c, int leader)
{
    const double tolm = 4.0 * DBL_EPSILON
                        * (leader ? fabs(mu_c) : fmax(1.0, fabs(mu_c)));
    while (m > 0 && mu[m - 1] >= mu_c - tolm)
        m--;
    return m;
}


/* ---- the state operations (state.h) --------------------------------------- */

static int clustered_begin(const opf_learner *s, void *self, opf_ws *w)
{
    const opf_clustered *cs = self;
    w->m = cs->dims[0];
    w->nb = cs->dims[1];
    return make_room(s, cs, w, w->m, &w->nb);
}

static void clustered_coords(const opf_learner *s, void *self, opf_ws *w,
                             const double *x, opf_coords *c)
{
    const opf_clustered *cs = self;
    coordinates(s, cs, w, w->m, w->nb, x, &c->xx, &c->rr, &c->ss);
    c->size = c->xx;
}

/* W = cap(exp(A)) as groups: to w->cw, w->lc, w->wc */
static int clustered_cap(const opf_learner *s, void *self, opf_ws *w)
{
    const opf_clustered *cs = self;
    return opf_cl_capped_weights(s->n, s->d, w->m, cs->mu, cs->clus[0], w->cw,
                                 &w->lc, &w->wc, w->dsm);
}

/* 2. losses and the draw */
static int clustered_draw(const opf_learner *s, void *self, opf_ws *w, double u,
                          int capped, const opf_coords *c, double *el,
                          double *rl)
{
    const opf_clustered *cs = self;
    const ptrdiff_t m = w->m;
    const double beta2 = c->ss + c->rr;
    const double *om = capped ? w->cw : cs->omega;
    const double lc = capped ? w->lc : cs->clus[0];
    const double wc = capped ? w->wc : cs->clus[1];
    double e = 0.0;
    ptrdiff_t i;
    int st;
    for (i = 0; i < m; i++)
        e += om[i] * w->z[i] * w->z[i];
    if (s->n - m > 0)
        e += wc * beta2;
    if ((st = opf_cl_draw(s, cs, w, u, m, beta2, om, lc, wc, rl)) != OPF_OK)
        return st;
    *el = e * (double)s->d;
    return OPF_OK;
}

static double clustered_leader_loss(const opf_learner *s, void *self, opf_ws *w,
                                    const double *x, const opf_coords *c)
{
    const opf_clustered *cs = self;
    return opf_cl_leader_loss(s, cs, w, w->m, w->nb, c->ss + c->rr, x);
}

/* 3. the rank-one update on [Q, r/beta] */
static int clustered_update(const opf_learner *s, void *self, opf_ws *w, double rho,
                            const double *x, const opf_coords *c)
{
    const opf_clustered *cs = self;
    ptrdiff_t m, nb;
    int st;
    (void)x;
    if ((st = update(s, cs, w, w->m, w->nb, rho, c->xx, c->rr, c->ss, &m, &nb))
        != OPF_OK)
        return st;
    w->m = m;
    w->nb = nb;
    return OPF_OK;
}

/* the cumulative state merges at once (MEG: after capping, in finish) */
static void clustered_merge(const opf_learner *s, void *self, opf_ws *w, int data_units)
{
    const opf_clustered *cs = self;
    if (w->m < s->n)
        w->m = merge_into_cluster(cs->mu, w->m, cs->clus[0], data_units);
}

/* the log-partition of the updated groups (learner.c: the rate's exact gap) */
static double clustered_log_partition(const opf_learner *s, const void *self, const opf_ws *w)
{
    const opf_clustered *cs = self;
    const ptrdiff_t n = s->n, m = w->m;
    ptrdiff_t i;
    if (m == 0)
        return NAN;
    const double top = m < n ? cs->clus[0] : cs->mu[m - 1];
    double sum = (double)(n - m) * exp(cs->clus[0] - top);
    for (i = 0; i < m; i++)
        sum += exp(cs->mu[i] - top);
    return top + log(sum);
}

/* 4. mixing and capping on the groups, merging, 5. keep finite */
static int clustered_finish(const opf_learner *s, void *self, opf_ws *w,
                                ptrdiff_t t, double gamma)
{
    const opf_clustered *cs = self;
    const ptrdiff_t n = s->n, d = s->d;
    const double capv = -log((double)d);
    ptrdiff_t m = w->m, i;
    (void)t;
    if (m == 0)
        return OPF_OK; /* x = 0 on an untouched learner: nothing changes */
    double mu_c = cs->clus[0];
    ptrdiff_t cc = n - m;
    if (gamma != 1.0) {
        for (i = 0; i < m; i++)
            cs->mu[i] *= gamma;
        mu_c *= gamma;
    }
    if (s->share == OPF_SHARE_FIXED && s->alpha > 0.0) {
        /* YL: v is a distribution before (11b) */
        const double top = cc > 0 ? mu_c : cs->mu[m - 1];
        const double lse = opf_log_total(cs->mu, m, top, (double)cc, mu_c);
        for (i = 0; i < m; i++)
            cs->mu[i] -= lse;
        if (cc > 0) /* without a cluster mu_c is unused: shifted every
                     * trial it drifted up to +inf (W's cluster weight) */
            mu_c -= lse;
        mix(cs->mu, m, &mu_c, n, s->alpha);
    }
    /* groups, descending: the cluster, then the explicit entries */
    ptrdiff_t g = 0;
    if (cc > 0) {
        w->dsm[g] = mu_c;
        w->mult[g++] = (double)cc;
    }
    for (i = m - 1; i >= 0; i--) {
        w->dsm[g] = cs->mu[i];
        w->mult[g++] = 1.0;
    }
    if (opf_cap_groups(w->dsm, w->mult, g, d, w->xs) < 0)
        return OPF_EINVAL; /* not reached: d < n */
    g = 0;
    if (cc > 0)
        mu_c = w->xs[g++];
    for (i = m - 1; i >= 0; i--)
        cs->mu[i] = w->xs[g++];
    if (s->share == OPF_SHARE_UNIFORM && s->alpha > 0.0)
        mix(cs->mu, m, &mu_c, n, s->alpha);

    /* merge the entries that reached the cluster */
    if (cc > 0) {
        m = merge_into_cluster(cs->mu, m, mu_c, 0);
    } else if (cs->mu[m - 1] == capv) {
        while (m > 0 && cs->mu[m - 1] == capv)
            m--;
        mu_c = capv;
    }
    cc = n - m;

    /* 5. keep finite */
    opf_floor_ascending(cs->mu, m, cc > 0 ? mu_c : cs->mu[m - 1],
                        OPF_EIGEN_FLOOR);
    for (i = 0; i < m; i++)
        cs->omega[i] = exp(cs->mu[i]);
    cs->clus[0] = mu_c;
    cs->clus[1] = exp(mu_c);
    cs->dims[0] = m;
    cs->dims[1] = w->nb;
    return OPF_OK;
}

/* A *= gamma (eta = "auto", as the dense state) */
static void clustered_scale(const opf_learner *s, void *self, opf_ws *w, double gamma)
{
    const opf_clustered *cs = self;
    ptrdiff_t i;
    if (gamma != 1.0) {
        for (i = 0; i < w->m; i++)
            cs->mu[i] *= gamma;
        cs->clus[0] *= gamma;
    }
}

/* keep finite: A's level is not normalised (as the dense state) */
static void clustered_settle(const opf_learner *s, void *self, opf_ws *w, double span)
{
    const opf_clustered *cs = self;
    const ptrdiff_t m = w->m;
    double top = m < s->n ? cs->clus[0] : cs->mu[m - 1];
    top = opf_lift_level(cs->mu, m, &cs->clus[0], top);
    opf_floor_ascending(cs->mu, m, top, span);
    cs->clus[1] = exp(cs->clus[0]);
    cs->dims[0] = m;
    cs->dims[1] = w->nb;
}

static int clustered_switch_due(const opf_learner *s, const void *self)
{
    const opf_clustered *cs = self;
    return s->m_stop > 0 && cs->dims[0] >= s->m_stop;
}

/* MEG (share none, fixed or uniform) and the cumulative learners
 * (uncentered or centered, not Follow the Leader's MEG), vector instances,
 * 1 <= d < n, B of 1..n rows, and the LAPACK table it calls */
static int clustered_valid(const opf_learner *s, const void *self)
{
    const opf_clustered *cs = self;
    return (s->kind == OPF_KIND_MEG || s->kind == OPF_KIND_CUMULATIVE)
           && !s->matrix_input
           && (s->share == OPF_SHARE_NONE || s->share == OPF_SHARE_FIXED
               || s->share == OPF_SHARE_UNIFORM)
           && s->n >= 2 && s->d >= 1 && s->d < s->n && cs->cap >= 1
           && cs->cap <= s->n
           && !(s->kind == OPF_KIND_CUMULATIVE
                && (s->share != OPF_SHARE_NONE || !s->mean))
           && !(s->kind == OPF_KIND_MEG && s->sampler == OPF_SAMPLER_LEADER)
           && opf_lapack_ok(s->fns);
}

const opf_state_ops opf_clustered_state = {
    .split = clustered_split,
    .valid = clustered_valid,
    .begin = clustered_begin,
    .coords = clustered_coords,
    .cap = clustered_cap,
    .draw = clustered_draw,
    .leader_loss = clustered_leader_loss,
    .update = clustered_update,
    .merge = clustered_merge,
    .log_partition = clustered_log_partition,
    .finish = clustered_finish,
    .scale = clustered_scale,
    .settle = clustered_settle,
    .switch_due = clustered_switch_due,
    .poll_site = OPF_POLL_CLUSTERED_TRIAL,
};
