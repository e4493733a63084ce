/*
 * learner.c -- the trial loop shared by every learner of the family, on
 * either representation of the eigen-learners' state (state.h).
 *
 * A trial: (1) the weights of the current parameter (eigenvalues of the
 * density matrix W, or expert weights), (2) a corner drawn from them with
 * one uniform number, (3) the expected loss of the parameter and the
 * realized loss of the drawn corner, (4) the update.  The matrix learners
 * never form W or take a matrix exp/log: they keep the eigensystem of log W
 * (WK Alg. 5) or of log W0 - eta C (WK Alg. 6) -- all of it (dense) or its
 * explicit part and one cluster (clustered) -- and change it by one
 * rank-one update per vector instance (rank_one_update.c).  trial_meg and
 * trial_cumulative below are the whole algorithm; each step is an
 * operation of the state (state_dense.c, state_clustered.c).
 *
 * A trial either completes or changes nothing (so a failing trial leaves the
 * learner as it was).  No allocation: the caller provides the workspace.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "adaptive_rate.h"
#include "interrupt.h"
#include "learner.h"
#include "limit.h"
#include "logweights.h"
#include "simd.h"
#include "state.h"
#include "state_dense.h"
#include "systematic.h"

/* The realized loss of the corner drawn from omega with u, and the expected
 * loss d * sum omega_i v_i, when the corner is drawn systematically: both
 * come from the draw's one pass (have_e set). */
static int draw_experts(const opf_learner *s, opf_ws *w,
                        const double *x, double u, double *r, double *e,
                        int *have_e)
{
    const opf_dense *ds = s->state;
    ptrdiff_t i;
    int st;
    *r = *e = 0.0;
    *have_e = s->sampler == OPF_SAMPLER_SYSTEMATIC;
    if (*have_e)
        return opf_sample_systematic_sum(ds->omega, s->n, s->d, u, x, r, e,
                                         w->corner);
    if ((st = opf_draw_corner(s->sampler, ds->omega, s->n, s->d, u, w->corner,
                              w->decw, w->deciw)) != OPF_OK)
        return st;
    for (i = 0; i < s->d; i++)
        *r += x[w->corner[i]];
    return OPF_OK;
}

/* Experts (WK Alg. 1 and 3, YL Alg. 1): x is the loss vector.  The loss
 * update lam - eta x is done within the capping's first pass (with the exps
 * and the bracket's statistics), unless the weights are mixed before
 * capping (fixed share) or eta is so large that capping must first shift
 * the level (see cap_log_at_any_level, state_dense.c).  Then lam <= -log d
 * (the capped weights are at most 1/d, and so are mixtures of them) and
 * x >= 0 (loss vectors are in [0, 1]) bound lam - eta x by -log d. */
OPF_MULTIVERSION
static int trial_experts(const opf_learner *s, opf_ws *w,
                         const double *x, double u, double *el, double *rl)
{
    const opf_dense *ds = s->state;
    const ptrdiff_t n = s->n, t = *s->t + 1;
    const int fused = !(s->share == OPF_SHARE_FIXED && s->alpha > 0.0)
                      && s->eta + 2.0 * log((double)n) <= OPF_CAP_SHIFT_AT
                      && !s->rate;
    double e = 0.0, r = 0.0, top = -INFINITY, low = INFINITY;
    const double eta = s->eta;
    double *lam = ds->lam;
    const double *omega = ds->omega;
    ptrdiff_t i;
    int have_e, st;
    if ((st = draw_experts(s, w, x, u, &r, &e, &have_e)) != OPF_OK)
        return st;
    if (s->share == OPF_SHARE_PAST)
        for (i = 0; i < n; i++)
            ds->wsum[i] += omega[i];
    if (s->rate) {
        double e2 = 0.0, delta = 0.0;
        delta = opf_rate_vector_step(s->rate, n, (double)s->d, ds->lam, x,
                                     ds->omega, &e2, &top, &low,
                                     s->fns->tune.cpu_level);
        *el = (have_e ? e : e2) * (double)s->d;
        *rl = r;
        if ((st = opf_dense_finish(s, ds, w, t, top, NULL, NULL)) != OPF_OK)
            return st;
        opf_keep_finite(lam, n, 0, 0);
        opf_rate_commit(s->rate, opf_rate_scale((double)n, (double)s->d),
                        delta);
        return OPF_OK;
    } else if (fused) {
        if (!have_e) {
            OPF_SIMD_WITH(reduction(+:e))
            for (i = 0; i < n; i++)
                e += omega[i] * x[i];
        }
        *el = e * (double)s->d;
        *rl = r;
        st = opf_dense_finish(s, ds, w, t, -log((double)s->d), x, &low);
    } else {
        /* one pass: expected loss, the loss update and the new maximum
         * (which capping then need not look for) */
        double e2 = 0.0;
        OPF_SIMD_WITH(reduction(+:e2) reduction(max:top) reduction(min:low))
        for (i = 0; i < n; i++) {
            const double xi = x[i], l = lam[i] - eta * xi;
            e2 += omega[i] * xi;
            lam[i] = l;
            OPF_MAX_INTO(top, l);
            OPF_MIN_INTO(low, l);
        }
        *el = (have_e ? e : e2) * (double)s->d;
        *rl = r;
        st = opf_dense_finish(s, ds, w, t, top, NULL, NULL);
    }
    if (st != OPF_OK)
        return st;
    /* keep_finite has nothing to do if capping left the smallest
     * log-weight (low + shift, or the cap) above its floor */
    if (!(s->alpha <= 0.0 && w->hint[0] != 0.0
          && low + w->hint[1] >= -OPF_LOG_SPAN))
        opf_keep_finite(lam, n, 0, 0);
    return OPF_OK;
}

/* Variance minimisation on the simplex (YL Alg. 6): deterministic, loss
 * y^T C y, exponentiated gradient (29a) and fixed share (29b).  With eta =
 * "auto" an entry of the gradient g = C y within the rounding bound of its
 * sum, n eps sum_j |C_ij| y_j, is 0: it carries no sign, and the first such
 * residue would be the first gap delta and set eta = log n / delta, turning
 * rounding into a full step (rows orthogonal to the uniform portfolio, e.g.
 * demeaned across assets: loss 0.05 where every fixed eta keeps 1e-32, and
 * a different one for c X).  A numeric eta takes g as computed (its step
 * of a rounding residue is rounding). */
OPF_MULTIVERSION
static int trial_simplex(const opf_learner *s, opf_ws *w,
                         const double *x, double u, double *el, double *rl)
{
    const opf_dense *ds = s->state;
    const ptrdiff_t n = s->n;
    const double *y = ds->omega, ulp = (double)n * DBL_EPSILON;
    double loss = 0.0;
    ptrdiff_t i, j;
    (void)u;
    if (s->matrix_input) {
        int nn = (int)n, inc = 1;
        double one = 1.0, zero = 0.0;
        char nt = 'N';
        s->fns->dgemv(&nt, &nn, &nn, &one, (double *)x, &nn, (double *)y,
                      &inc, &zero, w->y, &inc);
        for (i = 0; s->rate && i < n; i++) { /* C symmetric: row i is column i */
            const double *c = x + i * n;
            double a = 0.0;
            for (j = 0; j < n; j++)
                a += fabs(c[j]) * y[j];
            if (fabs(w->y[i]) <= ulp * a)
                w->y[i] = 0.0;
        }
    } else {
        double xy = 0.0, a = 0.0;
        for (i = 0; i < n; i++) {
            xy += x[i] * y[i];
            a += fabs(x[i]) * y[i];
        }
        if (s->rate && fabs(xy) <= ulp * a)
            xy = 0.0;
        for (i = 0; i < n; i++)
            w->y[i] = x[i] * xy;
    }
    for (i = 0; i < n; i++)
        loss += y[i] * w->y[i];
    *el = *rl = loss;
    if (s->rate) { /* AdaHedge on the linearised loss (C y)_i */
        double e, top, low;
        const double delta = opf_rate_vector_step(s->rate, n, 1.0, ds->lam,
                                                  w->y, y, &e, &top, &low,
                                                  s->fns->tune.cpu_level);
        opf_rate_commit(s->rate, opf_rate_scale((double)n, 1.0), delta);
    } else {
        for (i = 0; i < n; i++)
            ds->lam[i] -= s->eta * w->y[i]; /* (29a) */
    }
    opf_normalize_log(ds->lam, n);
    if (s->share == OPF_SHARE_FIXED && s->alpha > 0.0)
        opf_mix_uniform_log(ds->lam, n, n, s->alpha); /* (29b) */
    for (i = 0; i < n; i++)
        ds->omega[i] = exp(ds->lam[i]);
    opf_keep_finite(ds->lam, n, 0, 0);
    return OPF_OK;
}


/* eta = "auto": the n of D = d log(n / d).  For the PCA learners
 * (adaptive_d: eta "auto" under the master, limit.h, or "adahedge" alone)
 * mixing at a constant alpha > 0 (share fixed or uniform), n / alpha: every
 * eigenvalue of W is then at least alpha / n, so D = d log(n / (d alpha))
 * bounds d Delta(U, W) for every capped comparator U at every trial, the
 * constant of the adaptive-regret bound (docs/adaptive_rates.md). */
static double rate_n(const opf_learner *s)
{
    if (s->adaptive_d && !s->alpha_auto && s->alpha > 0.0
        && (s->share == OPF_SHARE_FIXED || s->share == OPF_SHARE_UNIFORM))
        return (double)s->n / s->alpha;
    return (double)s->n;
}

/* Matrix exponentiated gradient on the eigensystem of log W (WK Alg. 5, YL
 * Alg. 4 and 5): one rank-one update log W - eta x x^T per vector instance
 * (eta = "auto": the rate's step, then log W scaled by gamma), then mixing
 * and capping. */
static int trial_meg(const opf_learner *s, const opf_state_ops *ops,
                     opf_ws *w, const double *x, double u, double *el,
                     double *rl)
{
    const ptrdiff_t t = *s->t + 1;
    const double n = rate_n(s);
    double step = s->eta, gamma = 1.0, delta = 0.0;
    opf_coords c;
    int st;
    if ((st = ops->begin(s, s->state, w)) != OPF_OK)
        return st;
    if (s->matrix_input) { /* dense only (valid) */
        if ((st = ops->matrix_update(s, s->state, w, x, u, el, rl, &gamma,
                                     &delta))
            != OPF_OK)
            return st;
    } else {
        ops->coords(s, s->state, w, x, &c);
        if ((st = ops->draw(s, s->state, w, u, 0, &c, el, rl)) != OPF_OK)
            return st;
        if (!s->rate || opf_rate_trial(s->rate, n, (double)s->d,
                                       *el, c.size, &step, &gamma, &delta)) {
            if ((st = ops->update(s, s->state, w, step, x, &c)) != OPF_OK)
                return st;
            /* the exact gap from the updated eigenvalues, O(n) */
            if (s->rate && isfinite(s->rate[1]) && step == s->rate[1]) {
                const double lse = ops->log_partition(s, s->state, w);
                if (!isnan(lse))
                    delta = opf_rate_exact(s->rate, n, (double)s->d,
                                           *el, lse, &gamma);
            }
        }
    }
    if ((st = ops->finish(s, s->state, w, t, gamma)) != OPF_OK)
        return st;
    if (s->rate)
        opf_rate_commit(s->rate, opf_rate_scale(n, (double)s->d),
                        delta);
    return OPF_OK;
}

static int trial_cumulative(const opf_learner *s, const opf_state_ops *ops,
                            opf_ws *w, const double *x, double u, double *el,
                            double *rl);

/* CenteredOnlinePCA: B and F see the learner's instance y = x - m^{t-1}
 * (0 at the first trial without mean_init) and add f y y^T, f eq. (16)'s
 * factor, as the learner's C^t does. */
static double *master_instance(const opf_learner *s, const double *x,
                               double *y, double *g)
{
    const ptrdiff_t t = *s->t + 1;
    ptrdiff_t i;
    *g = 1.0;
    if (s->kind == OPF_KIND_MEG)
        return (double *)x;
    if (s->centered && s->mean_first && t == 1) {
        for (i = 0; i < s->n; i++)
            y[i] = 0.0;
        *g = 0.0;
        return y;
    }
    for (i = 0; i < s->n; i++)
        y[i] = x[i] - s->mean[i];
    if (s->centered)
        *g = sqrt(opf_center_factor(s->center_lr_inv, t));
    return y;
}

/* eta = "auto" with the master (limit.h): the trial's uniform plays the
 * learner (A) with the master's weight p_A, its eta -> infinity limit (B)
 * with p_B, Follow the Leader on its sketch (F) otherwise, and is rescaled
 * to a uniform for the drawn one's own draw.  B's and F's trials are
 * computed first and committed only after A's succeeded, so that a failing
 * or interrupted trial changes nothing. */
static int trial_master(const opf_learner *s, const opf_state_ops *ops,
                        opf_ws *w, const double *x, double u, double *el,
                        double *rl)
{
    const ptrdiff_t k = s->n - s->d;
    const double pa = opf_master3_weight(s->lim, 0),
                 pb = opf_master3_weight(s->lim, 1),
                 pf = opf_master3_weight(s->lim, 2);
    const int play = u < pa ? 0 : (u < pa + pb || !(pf > 0.0) ? 1 : 2);
    const double top = nextafter(1.0, 0.0);
    const double ua = play == 0 ? u / pa : u;
    const double ub = play == 1 ? fmin((u - pa) / pb, top) : u;
    const double uf = play == 2 ? fmin((u - pa - pb) / pf, top) : u;
    double h[3], r[3], hl[2], rlim[2], g;
    const double *y = master_instance(s, x, opf_limit_instance(s->limw, s->n,
                                                               k), &g);
    int st;
    if ((st = opf_limit_prepare(s->lim, s->n, k, y, g, ub, uf, s->limw,
                                s->limiw, s->fns, hl, rlim)) != OPF_OK)
        return st;
    if ((st = (s->kind == OPF_KIND_MEG ? trial_meg : trial_cumulative)(
             s, ops, w, x, ua, h, r)) != OPF_OK)
        return st;
    h[1] = hl[0];
    h[2] = hl[1];
    r[1] = rlim[0];
    r[2] = rlim[1];
    *el = opf_limit_commit(s->lim, s->n, k, s->limw, s->fns, h);
    *rl = r[play];
    return OPF_OK;
}

/* The leader's group [lo, n) of the ascending log-weights lam = -eta_t
 * C^{t-1} + const: the top one and those within 1e-9 of their spread of
 * it, or within the state's rounding: 1e-12 eta_t tr C^{t-1} (rate[1]
 * rate[2]; the updates' rounding accumulates in units of eta_t |x|^2) and
 * 1e-12 of the largest |log-weight| (the normalisation's).  Where C^{t-1}
 * is a multiple of I (one-hot rows that visited every axis equally) the
 * log-weights tie only to that rounding, and the spread alone split them
 * by it: 5-21% of the largest loss off the oracle and between X and c X,
 * the more rows the larger the rounding. */
static ptrdiff_t leader_start(const double *lam, ptrdiff_t n,
                              const double *rate)
{
    const double top = lam[n - 1], scale = rate[1] * rate[2],
                 tol = fmax(fmax(1e-9 * (top - lam[0]),
                                 1e-12 * fmax(fabs(top), fabs(lam[0]))),
                            isfinite(scale) ? 1e-12 * scale : 0.0);
    ptrdiff_t lo = n - 1;
    while (lo > 0 && lam[lo - 1] >= top - tol)
        lo--;
    return lo;
}

/* Follow the Leader of a learner whose state is log W = -eta_t C^{t-1} up
 * to a constant (VarianceMinimizer without mixing: stabilised MEG is then
 * follow the regularised leader): the eigenvectors of the top log-weight,
 * its group [lo, n) (leader_start) sharing (so that the directions no
 * instance touched, all at the top, share, as W^0 does), e the instance's
 * energy along each of them.  Returns the expected loss (the group's mean
 * energy); *rl the energy along the member drawn with u in [0, 1). */
static double leader_of_state(const double *e, ptrdiff_t lo, ptrdiff_t n,
                              double u, double *rl)
{
    const ptrdiff_t m = n - lo;
    ptrdiff_t pick;
    double h = 0.0;
    for (pick = lo; pick < n; pick++)
        h += e[pick];
    pick = lo + (ptrdiff_t)(u * (double)m);
    *rl = e[pick < n ? pick : n - 1];
    return h / (double)m;
}

/* The energies of an instance along the eigenvectors lo..n-1 of the dense
 * state (row-major q, columns the eigenvectors), into e[lo..n): (q_j^T
 * x)^2 for a vector, O(n (n - lo)); q_j^T C q_j for a matrix, by one GEMM
 * H = Q_group^T C into the workspace h (n x n) and a dot per member. */
static void group_energies(const opf_learner *s, const double *q,
                           const double *x, ptrdiff_t lo, double *h,
                           double *e)
{
    const ptrdiff_t n = s->n, m = n - lo;
    ptrdiff_t i, j;
    for (j = lo; j < n; j++)
        e[j] = 0.0;
    if (!s->matrix_input) {
        for (i = 0; i < n; i++) {
            const double xi = x[i];
            const double *qi = q + i * n;
            for (j = lo; j < n; j++)
                e[j] += qi[j] * xi;
        }
        for (j = lo; j < n; j++)
            e[j] *= e[j];
        return;
    }
    {
        /* column-major, q's memory is Q^T: its rows lo.. are the group */
        int mm = (int)m, nn = (int)n;
        double one = 1.0, zero = 0.0;
        char nt = 'N';
        s->fns->dgemm(&nt, &nt, &mm, &nn, &nn, &one, (double *)q + lo, &nn,
                      (double *)x, &nn, &zero, h, &mm);
        for (i = 0; i < n; i++)
            for (j = lo; j < n; j++)
                e[j] += h[i * m + (j - lo)] * q[i * n + j];
    }
}

/* eta = "auto" of VarianceMinimizer (s->lead): the trial's uniform plays
 * the learner (A) with the master's weight p_A and Follow the Leader of
 * its state otherwise (rescaled to a uniform for the drawn one's own draw);
 * the leader's loss is taken from the state before A's update, the master
 * committed after it succeeded (a failing or interrupted trial changes
 * nothing). */
static int trial_led(const opf_learner *s, const opf_state_ops *ops,
                     opf_ws *w, const double *x, double u, double *el,
                     double *rl)
{
    const opf_dense *ds = s->state;
    const ptrdiff_t n = s->n;
    const double pa = opf_master_weight(s->lead);
    const int play_a = u < pa;
    const double uf = play_a ? 0.0 : fmin((u - pa) / (1.0 - pa),
                                          nextafter(1.0, 0.0));
    const ptrdiff_t lo = leader_start(ds->lam, n, s->rate);
    double hf, rf, ha, ra;
    int st;
    /* the group's energies into the workspace's y (n), the matrix product
     * into m1 (n x n; the trial uses both only after this) */
    group_energies(s, ds->q, x, lo, w->m1, w->y);
    hf = leader_of_state(w->y, lo, n, uf, &rf);
    if ((st = trial_meg(s, ops, w, x, play_a ? u / pa : u, &ha, &ra))
        != OPF_OK)
        return st;
    *el = opf_master_commit(s->lead, ha, hf);
    *rl = play_a ? ra : rf;
    { /* tr C^t into rate[2] (the leader's tie tolerance) */
        double tr = 0.0;
        ptrdiff_t i;
        for (i = 0; i < n; i++)
            tr += s->matrix_input ? x[i * n + i] : x[i] * x[i];
        s->rate[2] += tr;
    }
    return OPF_OK;
}

/* WK Alg. 6 and Follow the Leader: the eigensystem of A = log W0 - eta C^t,
 * W = cap(exp(A)); center by (15), C by (16); eta = "auto": A = eta_t
 * (log W0 - C^t), rescaled each trial. */
static int trial_cumulative(const opf_learner *s, const opf_state_ops *ops,
                            opf_ws *w, const double *x, double u, double *el,
                            double *rl)
{
    const ptrdiff_t n = s->n, t = *s->t + 1;
    double f = 1.0, step = s->eta, gamma = 1.0, delta = 0.0;
    /* the first trial of a centered learner without mean_init: m^0 = x_1,
     * so y_1 = 0 (an uncentered first instance would set the rate's first
     * gap; docs/adaptive_rates.md) */
    const int first = s->centered && s->mean_first && t == 1;
    const int leader = s->sampler == OPF_SAMPLER_LEADER;
    ptrdiff_t i;
    opf_coords c;
    int st, learn;
    if ((st = ops->begin(s, s->state, w)) != OPF_OK)
        return st;
    for (i = 0; i < n; i++)
        w->yc[i] = first ? 0.0 : x[i] - s->mean[i];
    ops->coords(s, s->state, w, w->yc, &c);
    if (leader) {
        *el = *rl = ops->leader_loss(s, s->state, w, w->yc, &c);
    } else {
        /* W = cap(exp(A)) */
        if ((st = ops->cap(s, s->state, w)) != OPF_OK
            || (st = ops->draw(s, s->state, w, u, 1, &c, el, rl)) != OPF_OK)
            return st;
    }
    if (s->centered)
        f = opf_center_factor(s->center_lr_inv, t); /* eq. (16) */
    learn = !s->rate || opf_rate_trial(s->rate, (double)n, (double)s->d,
                                       *el, c.size, &step, &gamma, &delta);
    if (f > 0.0 && learn && !first) {
        if ((st = ops->update(s, s->state, w, step * f, w->yc, &c)) != OPF_OK)
            return st;
        if (ops->merge) /* A's entries that reached the cluster, at once */
            ops->merge(s, s->state, w, leader);
    }
    if (s->rate) {
        ops->scale(s, s->state, w, gamma);
        opf_rate_commit(s->rate, opf_rate_scale((double)n, (double)s->d),
                        delta);
        s->rate[2] += f * c.size; /* tr C^t: explained_variance_ at any rate */
    }
    if (first) /* eq. (15) from m^0 = x_1 */
        memcpy(s->mean, x, sizeof(double) * (size_t)n);
    else if (s->centered) /* eq. (15) */
        opf_center_update(s->mean, x, n, s->center_lr_inv, t);
    ops->settle(s, s->state, w, opf_cumulative_floor(leader));
    return OPF_OK;
}

ptrdiff_t opf_learner_trials(const opf_learner *s, const double *X,
                             ptrdiff_t T, const double *u, double *exp_loss,
                             double *real_loss, int *status)
{
    const int basis = s->kind == OPF_KIND_MEG
                      || s->kind == OPF_KIND_CUMULATIVE;
    const opf_state_ops *ops = s->ops;
    const ptrdiff_t stride = s->matrix_input ? s->n * s->n : s->n;
    opf_ws w;
    ptrdiff_t i;
    *status = OPF_OK;
    if (s->kind < OPF_KIND_MEG || s->kind > OPF_KIND_SIMPLEX_VAR || !ops
        || !s->state
        || !ops->valid(s, s->state)
        || (s->lim && ((s->kind != OPF_KIND_MEG
                        && s->kind != OPF_KIND_CUMULATIVE)
                       || s->sampler == OPF_SAMPLER_LEADER
                       || s->matrix_input || !s->rate
                       || !s->limw || !s->limiw))
        || (s->lead && (s->kind != OPF_KIND_MEG || s->lim || s->d != 1
                        || s->share != OPF_SHARE_NONE || !s->rate
                        || ops != &opf_dense_state))) {
        *status = OPF_EINVAL;
        return 0;
    }
    w = ops->split(s, s->state);
    for (i = 0; i < T; i++) {
        opf_learner at = *s; /* alpha = "auto": this trial's alpha_t */
        const double *xi = X + i * stride;
        int st;
        if (opf_interrupt_poll(s->poll, ops->poll_site)
            || opf_interrupt_stopped(s->stop)) {
            *status = OPF_EINTR;
            return i;
        }
        if (s->alpha_auto)
            at.alpha = opf_rate_alpha(*s->t + 1);
        switch (s->kind) {
        case OPF_KIND_EXPERTS:
            st = trial_experts(&at, &w, xi, u[i], exp_loss + i, real_loss + i);
            break;
        case OPF_KIND_SIMPLEX_VAR:
            st = trial_simplex(&at, &w, xi, u[i], exp_loss + i, real_loss + i);
            break;
        case OPF_KIND_MEG:
            st = s->lim    ? trial_master(&at, ops, &w, xi, u[i],
                                          exp_loss + i, real_loss + i)
                 : s->lead ? trial_led(&at, ops, &w, xi, u[i], exp_loss + i,
                                       real_loss + i)
                           : trial_meg(&at, ops, &w, xi, u[i], exp_loss + i,
                                       real_loss + i);
            break;
        default:
            st = s->lim ? trial_master(&at, ops, &w, xi, u[i], exp_loss + i,
                                       real_loss + i)
                        : trial_cumulative(&at, ops, &w, xi, u[i],
                                           exp_loss + i, real_loss + i);
        }
        if (st != OPF_OK) {
            *status = st;
            return i;
        }
        (*s->t)++;
        if (basis && ops->switch_due(s, s->state)) {
            *status = OPF_SWITCH;
            return i + 1;
        }
    }
    return i;
}

int opf_learner_switch_due(const opf_learner *s)
{
    if ((s->kind != OPF_KIND_MEG && s->kind != OPF_KIND_CUMULATIVE) || !s->ops)
        return 0;
    return s->ops->switch_due(s, s->state);
}

OPF_MULTIVERSION
void opf_range(const double *x, ptrdiff_t n, double *lo, double *hi)
{
    double mn = INFINITY, mx = -INFINITY, nan = 0.0;
    ptrdiff_t i;
    OPF_SIMD_WITH(reduction(min:mn) reduction(max:mx) reduction(+:nan))
    for (i = 0; i < n; i++) {
        const double v = x[i];
        OPF_MIN_INTO(mn, v);
        OPF_MAX_INTO(mx, v);
        nan += v != v ? 1.0 : 0.0;
    }
    *lo = nan > 0.0 ? NAN : mn;
    *hi = nan > 0.0 ? NAN : mx;
}
