/*
 * state_dense.c -- the dense representation of the eigen-learners' state
 * (state.h): all n eigenpairs (lam, Q) of log W (WK Alg. 5, YL Alg. 4 and
 * 5) or of A = log W0 - eta C^t (WK Alg. 6, Follow the Leader).  A trial
 * costs O(n^2) plus the GEMM of the rank-one update's non-deflated block;
 * matrix instances and mixing in the past average (WK eq. 20), which
 * change the eigenbasis, O(n^3).  Also the experts' capping and mixing,
 * which are the dense state's without a basis.
 *
 * Everything is in the log domain: weights are exp(lam) with lam kept
 * exactly, so a direction suppressed for thousands of trials keeps its
 * (tiny) weight instead of underflowing to 0, and capping is cap_log.
 * The one exception keeps lam finite on any stream (opf_keep_finite
 * below): entries more than OPF_LOG_SPAN = 2^1020 (the eigen-learners:
 * OPF_EIGEN_FLOOR = 2^60, Follow the Leader: 2^1020, logweights.h) below
 * the largest are raised to that distance, and the eigenvalues of A
 * (CUMULATIVE, never normalised) are shifted by a constant, which leaves
 * W unchanged, once the largest falls below -2^1020.  The Python layer
 * bounds each trial's step (eta |x|^2 <= 2^1020) so that nothing in
 * between can overflow.
 */
#include <math.h>
#include <string.h>

#include "adaptive_rate.h"
#include "cap.h"
#include "interrupt.h"
#include "logweights.h"
#include "phased_eig.h"
#include "rank_one_update.h"
#include "state.h"
#include "systematic.h"

/* Workspace (doubles): the capping hint (three doubles, must start zeroed,
 * and one of padding so that the arrays after it keep 32-byte alignment:
 * vectorised reductions peel by alignment, which changes their rounding),
 * omega, z, y, lam2, lamsave, omegasave (n each), cap 3n, decompose n, and
 * for the eigen-learners dsyevr 26n and the rank-one update's own, and five
 * n x n matrices only when the eigenbasis is recomputed (matrix instances
 * or mixing in the past average). */
#define OPF_HINT_LEN 4

size_t opf_learner_work_len(ptrdiff_t n, int kind, int with_matrices)
{
    size_t nn = (size_t)n;
    int basis = kind == OPF_KIND_MEG || kind == OPF_KIND_CUMULATIVE;
    return OPF_HINT_LEN + 10 * nn
           + (basis ? 26 * nn + opf_r1_work_len(n)
                          + (with_matrices ? 5 * nn * nn : 0) : 0);
}

/* Workspace (indices): corner n, decompose 3n. */
size_t opf_learner_iwork_len(ptrdiff_t n)
{
    return 4 * (size_t)n;
}


static opf_ws dense_split(const opf_learner *s, const void *self)
{
    opf_ws w;
    const ptrdiff_t n = s->n;
    (void)self;
    memset(&w, 0, sizeof w);
    double **const vectors[] = {&w.omega, &w.z, &w.y, &w.lam2, &w.lamsave,
                                &w.omegasave};
    w.hint = s->work;
    w.capw = opf_carve(s->work + OPF_HINT_LEN, (size_t)n, vectors, 6);
    w.decw = w.capw + 3 * n;
    w.yc = w.y; /* y = x - m^{t-1} of the cumulative learners */
    if (s->kind == OPF_KIND_MEG || s->kind == OPF_KIND_CUMULATIVE) {
        w.evw = w.decw + n;
        w.r1w = w.evw + 26 * n;
    }
    if (s->with_matrices
        && (s->kind == OPF_KIND_MEG || s->kind == OPF_KIND_CUMULATIVE)) {
        /* only the eigen-learners have evw and r1w (and matrices) */
        w.m1 = w.r1w + opf_r1_work_len(n);
        w.m2 = w.m1 + n * n;
        w.m3 = w.m2 + n * n;
        w.wprev = w.m3 + n * n;
        w.qsave = w.wprev + n * n;
    }
    w.corner = s->iwork;
    w.deciw = w.corner + n;
    return w;
}

/* lam -= logsumexp(lam) */
void opf_normalize_log(double *lam, ptrdiff_t n)
{
    double m = -INFINITY, c;
    ptrdiff_t i;
    for (i = 0; i < n; i++)
        m = lam[i] > m ? lam[i] : m;
    c = opf_log_total(lam, n, m, 0.0, 0.0);
    for (i = 0; i < n; i++)
        lam[i] -= c;
}

/*
 * Keep lam finite whatever the stream (see the header comment).  A weight
 * exp(-2^1020) relative to the largest is 0 in every practical sense; the
 * floor only matters once the top weights have since lost another 2^1020
 * (e.g. 10^15 trials at eta |x|^2 = 10^292), so unlike a fixed share
 * (weights >= alpha/n, recovery within log(n/alpha)/eta of loss) it cannot
 * bring back a direction on any stream of representable length and scale.
 * Without it, eta |x|^2 = 1e306 (eta = 1e6, |x| = 1e150) reaches -inf in
 * ~180 trials, which the rank-one update rejects.  Both steps preserve the
 * order of lam (ascending for the eigen-learners).  shift: also move the
 * whole spectrum up when its largest entry is below -OPF_LOG_SPAN (only
 * for A, whose level is not normalised; W = cap(exp(A)) is unchanged).
 * Bounds: entering a trial lam lies in [-2^1021, 0], a step subtracts at
 * most 2^1020, so everything stays below 2^1022 in magnitude, where the
 * rank-one update's power-of-two scaling cannot overflow.  (The spans:
 * logweights.h.)
 */

/* The eigen-learners keep lam exact (floored only at OPF_LOG_SPAN, for
 * finiteness): the smallest entries are the leading directions (components_
 * of OnlinePCA, the top of C for Alg. 6 and Follow the Leader), and a floor
 * closer to the top tied them (issue 22, item 1).  What made a floor
 * necessary is the rank-one update's deflation tolerance, relative to
 * max|lam|: a spike eta |x|^2 = S put one log-weight at -S and froze the
 * learner (every later update < ~eps S negligible) for S >= 1e15.  The
 * tolerance is now taken relative to the entries within OPF_EIGEN_SPAN of
 * the largest (r1_scale), which is what it was when the state was floored
 * there; nothing below is changed. */

static inline double r1_scale(const double *lam, ptrdiff_t n)
{
    return opf_r1_scale(lam[n - 1]);
}

void opf_keep_finite(double *lam, ptrdiff_t n, int ascending, int shift)
{
    /* Normalised expert log-weights have their largest entry in [-log n, 0],
     * and top - 2^1020 rounds to -2^1020 for any such top: no need to find
     * it.  The eigen-learners' lam is ascending: top is lam[n - 1]. */
    double top = ascending ? lam[n - 1] : 0.0, floor;
    ptrdiff_t i;
    if (shift) /* CUMULATIVE, never normalised */
        top = opf_lift_level(lam, n, NULL, top);
    if (ascending) { /* only a prefix can be below the floor */
        opf_floor_ascending(lam, n, top, OPF_EIGEN_FLOOR);
    } else {
        floor = top - OPF_LOG_SPAN;
        for (i = 0; i < n; i++)
            lam[i] = lam[i] < floor ? floor : lam[i];
    }
}

/*
 * cap_log of lam (n log-weights, ascending if `ascending`) into out and its
 * exponentials into out_lin, accurate at any level of lam.  opf_cap returns
 * an uncapped entry as mu_i + c with c ~ -(largest uncapped mu); when that
 * is large the sum cancels, and the weights carry a common relative error
 * of ulp(|c|): 4e-11 at 1e6, and at 1e300 every uncapped weight rounds up
 * to the cap (the weights then sum to more than 1).  The largest uncapped
 * entry lies within log(n) above the d-th largest entry v_d (fewer than d
 * are capped, and the uncapped ones must carry d - ncap times the weight
 * of the largest), so capping lam - v_d instead -- the same projection --
 * keeps c of the order of log(n).  Only done when |v_d| > 512, where the
 * error could exceed ulp(512) = 1.1e-13 (the weights must sum to one within
 * 1e-12), so that ordinary trajectories are unchanged bit for bit.  v_d is
 * lam[n - d] when lam is ascending; the experts' lam is not, but it is the
 * previous weights (a capped distribution, whose d-th largest is at least
 * 1/(d(n-d+1))) minus at most eta, so |v_d| <= 2 log(n) + eta, and only
 * eta > 512 - 2 log(n) makes it worth finding (a count, then a selection
 * if it is outside [-512, 512]).  scratch: n doubles, may not alias lam or
 * out.  (OPF_CAP_SHIFT_AT, opf_cap_level: logweights.h.)
 */

static int cap_log_at_any_level(const opf_learner *s, opf_ws *w,
                                double *lam, int ascending, double *out,
                                double *out_lin, double *scratch, double xmax,
                                const double *step, double *ymin)
{
    const ptrdiff_t n = s->n, d = s->d;
    const double *src = lam;
    ptrdiff_t i, n_raised;
    double vd;
    opf_cap_hint hint, *hp = NULL;
    hint.xmax = xmax; /* NaN: unknown */
    hint.step = step; /* the experts' loss update, fused (see trial) */
    hint.eta = s->eta;
    if (step) {
        vd = 0.0; /* the caller made sure: see trial */
    } else if (ascending) {
        vd = lam[n - d];
    } else if (s->eta + 2.0 * log((double)n) <= OPF_CAP_SHIFT_AT) {
        vd = 0.0;
    } else {
        /* |v_d| <= 512 iff at least d entries are >= -512 and fewer than d
         * are > 512: count (cheap) and select v_d only if it is outside */
        ptrdiff_t n_above_lo = 0, n_above_hi = 0;
        for (i = 0; i < n; i++) {
            n_above_lo += lam[i] >= -OPF_CAP_SHIFT_AT;
            n_above_hi += lam[i] > OPF_CAP_SHIFT_AT;
        }
        vd = 0.0;
        if (n_above_lo < d || n_above_hi >= d) {
            memcpy(scratch, lam, (size_t)n * sizeof(double));
            vd = opf_kth_largest(scratch, n, d);
        }
    }
    if (opf_cap_level(vd) != 0.0) {
        for (i = 0; i < n; i++)
            scratch[i] = lam[i] - vd;
        src = scratch;
        w->hint[0] = 0.0; /* no shift known in lam's coordinates */
    } else if (s->kind == OPF_KIND_EXPERTS && w->hint[0] != 0.0) {
        /* The experts' weights change little from trial to trial, and so
         * does the shift c that capping adds to the uncapped log-weights
         * (the threshold is -log d - c).  Bracket the threshold around the
         * last one by four times the mean change of c, so that the search
         * (see opf_cap_ex) only has to resolve the few entries in between.
         * A wrong bracket costs time, never accuracy. */
        const double centre = -log((double)d) - w->hint[1];
        const double half = 4.0 * w->hint[2] + 0x1p-30 * (1.0 + fabs(centre));
        hint.lo = centre - half;
        hint.hi = centre + half;
        hp = &hint;
    } else if (s->kind == OPF_KIND_EXPERTS) {
        hint.lo = 1.0; /* no bracket yet (lo > hi): only report the shift */
        hint.hi = 0.0;
        hp = &hint;
    }
    if (opf_cap_ex(src, n, d, 1, out, out_lin, w->capw, &n_raised, hp,
                   s->fns->tune.cpu_level) < 0)
        return OPF_EINVAL;
    if (hp) {
        if (w->hint[0] != 0.0)
            w->hint[2] = 0.5 * w->hint[2] + 0.5 * fabs(hint.shift - w->hint[1]);
        w->hint[0] = isfinite(hint.shift) ? 1.0 : 0.0;
        w->hint[1] = hint.shift;
    }
    if (step)
        *ymin = hint.ymin;
    return OPF_OK;
}

/* Mix the normalised log-weights with the uniform distribution:
 * w <- alpha/n + (1 - alpha) w, in the log domain (order preserving). */
static void mix_uniform_log(double *lam, ptrdiff_t n, double alpha)
{
    opf_mix_uniform_log(lam, n, n, alpha);
}

/* Expected loss d * sum omega_i v_i and realized loss sum_{corner} v_i,
 * where v_i is the loss of direction (or expert) i. */
static void losses(const opf_learner *s, opf_ws *w,
                   const double *omega, const double *v, int use_omega,
                   double *el, double *rl)
{
    double e = 0.0, r = 0.0;
    ptrdiff_t i;
    if (use_omega) {
        for (i = 0; i < s->n; i++)
            e += omega[i] * v[i];
        e *= (double)s->d;
    }
    for (i = 0; i < s->d; i++)
        r += v[w->corner[i]];
    *el = use_omega ? e : r;
    *rl = r;
}

/* out <- Q diag(v) Q^T (n x n, symmetric) via m3 = Q diag(v). */
static void form(const opf_learner *s, const opf_dense *ds, opf_ws *w, const double *v,
                 double *out)
{
    const int n = (int)s->n;
    ptrdiff_t i, j;
    for (i = 0; i < s->n; i++)
        for (j = 0; j < s->n; j++)
            w->m3[i * s->n + j] = ds->q[i * s->n + j] * v[j];
    opf_gemm_abt(s->fns, n, n, n, ds->q, n, w->m3, n, out, n);
}

/* Eigensystem of the symmetric matrix in m1 (destroyed): eigenvalues to
 * lam2, eigenvectors to m2 in our row-major layout, by dsyevr in its three
 * phases, polling Ctrl-C between them (phased_eig.h; m2 holds the copy the
 * phases need).  Returns 0, OPF_EEIG or OPF_EINTR. */
static int eig(const opf_learner *s, opf_ws *w)
{
    ptrdiff_t i, j;
    int *isuppz = s->r1iwork, *iw = s->r1iwork + 2 * s->n;
    /* Z comes column-major into m3, then transposed into m2 */
    int st = opf_eig_phased((int)s->n, w->m1, w->lam2, w->m3, w->evw, iw,
                            isuppz, w->m2, s->fns, s->poll);
    if (st != OPF_OK)
        return st;
    for (i = 0; i < s->n; i++)
        for (j = 0; j < s->n; j++)
            w->m2[i * s->n + j] = w->m3[j * s->n + i];
    return OPF_OK;
}

/* The poll points (interrupt.h) of the trial loop: before a trial, and
 * within the O(n^3) ones (share="past" mixing, matrix instances) after
 * each GEMM or eigendecomposition (and between its phases: phased_eig.h),
 * before anything is committed. */
enum {
    POLL_TRIAL = 1,   /* before each trial */
    POLL_WPREV = 2,   /* share="past": W^{t-1} formed */
    POLL_MIXED = 3,   /* share="past": the mixture formed */
    POLL_MIX_EIG = 4, /* share="past": its eigensystem found */
    POLL_MATRIX = 5,  /* matrix instance: log W - eta C formed */
    POLL_MAT_EIG = 6  /* matrix instance: its eigensystem found */
};

/* share="past" (eigen-learners): put back the state kept aside at the start
 * of the trial (dense_begin) and return st. */
static int undo_trial(const opf_learner *s, const opf_dense *ds, opf_ws *w, int st)
{
    const ptrdiff_t n = s->n;
    memcpy(ds->lam, w->lamsave, (size_t)n * sizeof(double));
    memcpy(ds->q, w->qsave, (size_t)(n * n) * sizeof(double));
    memcpy(ds->omega, w->omegasave, (size_t)n * sizeof(double));
    return st;
}

/* The mixing and capping that follow the loss update of MEG and EXPERTS:
 * lam holds the updated, unnormalised log-weights (or, with step, the
 * experts' loss update lam - eta step is still to be done, within the
 * capping; ymin receives its minimum).  Leaves the new weights in lam and
 * their exponentials in omega. */
int opf_dense_finish(const opf_learner *s, const opf_dense *ds, opf_ws *w,
                     ptrdiff_t t,
                      double xmax, const double *step, double *ymin)
{
    const ptrdiff_t n = s->n;
    ptrdiff_t i;
    int st;
    if (s->share == OPF_SHARE_FIXED && s->alpha > 0.0) {
        opf_normalize_log(ds->lam, n); /* YL: v is a distribution before (11b) */
        mix_uniform_log(ds->lam, n, s->alpha);
        xmax = NAN;
    }
    /* lam is ascending for the eigen-learners (rank-one update, eig and
     * the monotone mixing keep it so); w->y is free at this point */
    if (cap_log_at_any_level(s, w, ds->lam, s->kind == OPF_KIND_MEG, ds->lam,
                             ds->omega, w->y, xmax, step, ymin) != OPF_OK)
        return OPF_EINVAL;
    if (s->alpha <= 0.0)
        return OPF_OK;
    if (s->share == OPF_SHARE_UNIFORM) {
        mix_uniform_log(ds->lam, n, s->alpha);
        for (i = 0; i < n; i++)
            ds->omega[i] = exp(ds->lam[i]);
    } else if (s->share == OPF_SHARE_PAST) {
        /* W <- (1-a) W + a (W^0 + ... + W^{t-1}) / t */
        const double la = log1p(-s->alpha);
        if (s->kind == OPF_KIND_EXPERTS) {
            /* wsum already holds w^{t-1} */
            for (i = 0; i < n; i++)
                ds->lam[i] = opf_logaddexp(la + ds->lam[i],
                                      log(s->alpha * ds->wsum[i] / (double)t));
        } else {
            /* wprev = W^{t-1}; it joins wsum only if this succeeds */
            const double a = s->alpha / (double)t;
            for (i = 0; i < n; i++)
                w->lam2[i] = (1.0 - s->alpha) * ds->omega[i];
            form(s, ds, w, w->lam2, w->m1);
            for (i = 0; i < n * n; i++)
                w->m1[i] += a * (ds->wsum[i] + w->wprev[i]);
            if (opf_interrupt_poll(s->poll, POLL_MIXED))
                return undo_trial(s, ds, w, OPF_EINTR);
            st = eig(s, w); /* OPF_EINTR too: interrupted inside */
            if (st != OPF_OK)
                return undo_trial(s, ds, w, st);
            if (opf_interrupt_poll(s->poll, POLL_MIX_EIG))
                return undo_trial(s, ds, w, OPF_EINTR);
            for (i = 0; i < n * n; i++)
                ds->wsum[i] += w->wprev[i];
            /* the mixture's eigenvalues are >= a/n > 0; clamp only rounding */
            for (i = 0; i < n; i++)
                ds->lam[i] = log(w->lam2[i] > 1e-300 ? w->lam2[i] : 1e-300);
            memcpy(ds->q, w->m2, (size_t)(n * n) * sizeof(double));
        }
        for (i = 0; i < n; i++)
            ds->omega[i] = exp(ds->lam[i]);
    }
    return OPF_OK;
}


/* MEG with a matrix instance C (VarianceMinimizer): the corner drawn with
 * u, the losses v_i = q_i^T C q_i, then the eigensystem of Q diag(lam) Q^T - eta C by dsyevr. */
static int dense_matrix_update(const opf_learner *s, void *self, opf_ws *w,
                               const double *x, double u, double *el,
                               double *rl, double *gamma, double *delta)
{
    const opf_dense *ds = self;
    const ptrdiff_t n = s->n;
    int nn = (int)n, st;
    double one = 1.0, zero = 0.0, step = s->eta;
    char nt = 'N';
    ptrdiff_t i;
    if ((st = opf_draw_corner(s->sampler, ds->omega, n, s->d, u,
                              w->corner, w->decw, w->deciw)) != OPF_OK)
        return st;
    s->fns->dgemm(&nt, &nt, &nn, &nn, &nn, &one, ds->q, &nn, (double *)x, &nn,
                  &zero, w->m2, &nn);
    for (i = 0; i < n; i++)
        w->z[i] = 0.0;
    for (i = 0; i < n * n; i++)
        w->z[i % n] += ds->q[i] * w->m2[i];
    losses(s, w, ds->omega, w->z, 1, el, rl);
    if (s->rate) { /* C is PSD: tr C bounds its top eigenvalue */
        double tr = 0.0;
        for (i = 0; i < n; i++)
            tr += x[i * n + i];
        if (!opf_rate_trial(s->rate, (double)n, (double)s->d, *el, tr, &step,
                            gamma, delta))
            return OPF_OK;
    }
    form(s, ds, w, ds->lam, w->m1);
    for (i = 0; i < n * n; i++)
        w->m1[i] -= step * x[i];
    if (opf_interrupt_poll(s->poll, POLL_MATRIX))
        return OPF_EINTR; /* nothing written yet */
    if ((st = eig(s, w)) != OPF_OK)
        return st;
    if (opf_interrupt_poll(s->poll, POLL_MAT_EIG))
        return OPF_EINTR;
    memcpy(ds->lam, w->lam2, (size_t)n * sizeof(double));
    memcpy(ds->q, w->m2, (size_t)(n * n) * sizeof(double));
    return OPF_OK;
}


/* ---- the state operations (state.h) --------------------------------------- */

/* share="past": keep W^{t-1} and the state aside until the trial succeeds */
static int dense_begin(const opf_learner *s, void *self, opf_ws *w)
{
    const opf_dense *ds = self;
    const ptrdiff_t n = s->n;
    if (s->kind == OPF_KIND_MEG && s->share == OPF_SHARE_PAST
        && s->alpha > 0.0) {
        form(s, ds, w, ds->omega, w->wprev);
        memcpy(w->lamsave, ds->lam, (size_t)n * sizeof(double));
        memcpy(w->omegasave, ds->omega, (size_t)n * sizeof(double));
        memcpy(w->qsave, ds->q, (size_t)(n * n) * sizeof(double));
        if (opf_interrupt_poll(s->poll, POLL_WPREV))
            return OPF_EINTR; /* nothing changed yet */
    }
    return OPF_OK;
}

/* z = Q^T x, lam2 = z^2; the instance size is sum z_i^2 = |x|^2. */
static void dense_coords(const opf_learner *s, void *self, opf_ws *w, const double *x,
                         opf_coords *c)
{
    const opf_dense *ds = self;
    const ptrdiff_t n = s->n;
    ptrdiff_t i;
    double sz = 0.0;
    opf_gemv_qt(s->fns, (int)n, (int)n, ds->q, (int)n, x, w->z);
    for (i = 0; i < n; i++)
        w->lam2[i] = w->z[i] * w->z[i];
    if (s->rate)
        for (i = 0; i < n; i++)
            sz += w->lam2[i];
    c->size = sz;
    c->xx = c->rr = c->ss = 0.0;
}

/* W = cap(exp(A)): capped log-weights to lamsave, weights to w->omega */
static int dense_cap(const opf_learner *s, void *self, opf_ws *w)
{
    const opf_dense *ds = self;
    if (cap_log_at_any_level(s, w, ds->lam, 1, w->lamsave, w->omega, w->z,
                             NAN, NULL, NULL) != OPF_OK) /* z is spent */
        return OPF_EINVAL;
    return OPF_OK;
}

static int dense_draw(const opf_learner *s, void *self, opf_ws *w, double u, int capped,
                      const opf_coords *c, double *el, double *rl)
{
    const opf_dense *ds = self;
    const double *omega = capped ? w->omega : ds->omega;
    int st;
    (void)c;
    if ((st = opf_draw_corner(s->sampler, omega, s->n, s->d, u, w->corner,
                              w->decw, w->deciw)) != OPF_OK)
        return st;
    losses(s, w, omega, w->lam2, 1, el, rl);
    return OPF_OK;
}

/* the top d of the ascending log-weights: the corner left out of the k
 * leading directions */
static double dense_leader_loss(const opf_learner *s, void *self, opf_ws *w,
                                const double *x, const opf_coords *c)
{
    double r = 0.0;
    ptrdiff_t i;
    (void)self;
    (void)x;
    (void)c;
    for (i = s->n - s->d; i < s->n; i++)
        r += w->lam2[i];
    return r;
}

static int dense_update(const opf_learner *s, void *self, opf_ws *w, double rho,
                        const double *x, const opf_coords *c)
{
    const opf_dense *ds = self;
    opf_r1_info info;
    (void)c;
    return opf_rank_one_update_scaled(s->n, ds->lam, ds->q, s->n, -rho, x,
                                      w->r1w, s->r1iwork, s->fns, 0,
                                      r1_scale(ds->lam, s->n), &info);
}

static double dense_log_partition(const opf_learner *s, const void *self, const opf_ws *w)
{
    const opf_dense *ds = self;
    (void)w;
    return opf_rate_log_partition(ds->lam, s->n);
}

static int dense_finish(const opf_learner *s, void *self, opf_ws *w, ptrdiff_t t,
                            double gamma)
{
    const opf_dense *ds = self;
    int st;
    if (s->rate) /* stabilised OMD: log W <- gamma (log W - eta_t S) */
        opf_rate_scale_log(ds->lam, s->n, gamma);
    if ((st = opf_dense_finish(s, ds, w, t, NAN, NULL, NULL)) != OPF_OK)
        return st;
    opf_keep_finite(ds->lam, s->n, 1, 0);
    return OPF_OK;
}

static void dense_scale(const opf_learner *s, void *self, opf_ws *w, double gamma)
{
    const opf_dense *ds = self;
    (void)w;
    opf_rate_scale_log(ds->lam, s->n, gamma);
}

static void dense_settle(const opf_learner *s, void *self, opf_ws *w, double span)
{
    const opf_dense *ds = self;
    const ptrdiff_t n = s->n;
    (void)w;
    opf_floor_ascending(ds->lam, n,
                        opf_lift_level(ds->lam, n, NULL, ds->lam[n - 1]), span);
}

static int dense_switch_due(const opf_learner *s, const void *self)
{
    const opf_dense *ds = self;
    return s->m_stop >= 0 && opf_explicit_count(ds->lam, s->n) <= s->m_stop;
}

/* any learner: the experts and the simplex learner use its weights and
 * workspace without a basis */
static int dense_valid(const opf_learner *s, const void *self)
{
    const opf_dense *ds = self;
    return ds->lam && ds->omega;
}

const opf_state_ops opf_dense_state = {
    .split = dense_split,
    .valid = dense_valid,
    .begin = dense_begin,
    .coords = dense_coords,
    .cap = dense_cap,
    .draw = dense_draw,
    .leader_loss = dense_leader_loss,
    .update = dense_update,
    .log_partition = dense_log_partition,
    .finish = dense_finish,
    .scale = dense_scale,
    .settle = dense_settle,
    .matrix_update = dense_matrix_update,
    .switch_due = dense_switch_due,
    .poll_site = POLL_TRIAL,
};
