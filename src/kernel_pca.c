/*
 * kernel_pca.c -- the trial loop of online kernel PCA (Kuzmin & Warmuth,
 * ICML 2007, Algorithm 6).
 *
 * Trial t sees m = t - 1 stored instances, the eigensystem
 * K = U diag(lambda) U^T of their kernel matrix (ascending lambda), the
 * kernel vector y = (k(x_i, x))_i of the new instance x and kappa = k(x, x).
 * With z = U^T y and D = m - r (r = n_components):
 *
 *   numerical null space: |lambda_i| <= tol = m eps max|lambda| counts as
 *     lambda_i = 0.  In exact arithmetic y lies in the range of K, so
 *     z_i = 0 there and the terms z_i^2 / lambda_i below are 0/0 = 0: they
 *     are dropped (computed, they would be rounding noise divided by
 *     rounding noise).
 *   p_i = z_i^2 / lambda_i   (the squared coordinate of phi(x) along the
 *     i-th feature-space eigenvector X u_i / sqrt(lambda_i); KW Lemma 1)
 *   D >= 1: softmin and capping in the log domain,
 *     nu = cap_log(-eta lambda, D), lambdabar = exp(nu)   (KW Alg. 6)
 *     a corner of size D drawn from lambdabar with the uniform u;
 *     expected error  kappa - sum_i (1 - D lambdabar_i) p_i
 *                   = kappa - tr(W~ y y^T),  W~ = U (I - D diag(lambdabar)) Lambda^-1 U^T
 *     realized error  kappa - sum_{i not in corner} p_i
 *                   = kappa - tr(P~ y y^T),  P~ = U_r Lambda_r^-1 U_r^T.
 *     1 - D lambdabar_i is computed as -expm1(nu_i + log D), which is exactly
 *     0 for capped entries (nu_i = -log D exactly), so the capped
 *     directions -- among them every null direction -- contribute exactly 0.
 *   D <= 0 (t - 1 <= r; KW start at t = r + 1, where D = 0): the
 *     hypothesis is the projection onto the span of all m stored instances
 *     (rank <= r, no draw): error kappa - sum_i p_i, expected = realized.
 *     m = 0: error kappa.
 * Then the eigensystem grows by the bordered update (bordered_update.c):
 * one arrowhead eigenproblem -- deflation, one secular equation, one GEMM.
 *
 * eta = "auto" (s->rate != NULL; docs/adaptive_rates.md, "OnlineKernelPCA"):
 * the softmin uses the AdaHedge rate eta_t = r / Delta_{t-1} of rate[1]
 * (limited so that eta_t max|lambda| <= 2^1000, opf_rate_step).  The
 * learner is follow-the-regularised-leader (KW update (2)): the state is the
 * eigensystem of K, not a log-weight, so a changed rate needs no rescaling.
 * The gap of a trial is opf_kpca_gap (D >= 1) or its whole loss (D <= 0,
 * the deterministic span projection: the Follow-the-Leader gap), committed
 * once the trial is done (also when its bordered update fails: the caller
 * completes that trial by eigh).  With the master (s->master != NULL) the
 * trial plays that learner or Follow the Leader, the eta -> infinity limit:
 * the r leading eigenvectors of K, loss kappa - sum of their p_i (the
 * learner's own hypothesis while D <= 0); the master's step is committed
 * with the rate's.
 *
 * Cost per trial: two GEMVs-worth O(m^2) (z here, and inside the update),
 * O(m) capping, O(m^2) worst-case decomposition (usually far less), and the
 * bordered update: O(m^2) + one GEMM, m x k x (k + 1) for its k
 * non-deflated eigenpairs (k <= rank + 1 of a low-rank kernel matrix, up
 * to m for a full-rank one).
 *
 * The feature form (opf_kpca_feature_trials, the learner's bounded mode):
 * the same trial (play(), below) in a fixed feature space of dimension m,
 * with p_i = (Q^T phi)_i^2 and kappa = |phi|^2, the state the eigensystem
 * of C = sum phi phi^T updated by opf_rank_one_update; O(m^2) + a GEMM of
 * at most m x m x m a trial, whatever the number of trials.
 * No allocation: the caller provides the workspace.
 */

#include "kernel_pca.h"

#include <float.h>
#include <math.h>

#include "adaptive_rate.h"
#include "cap.h"
#include "interrupt.h"
#include "limit.h"
#include "state_clustered_draw.h"

/* Workspace (doubles): z, p, mu, nu, omega, decompose (n each), cap 3n,
 * and the bordered update's own. */
size_t opf_kpca_work_len(ptrdiff_t capacity)
{
    size_t n = capacity > 0 ? (size_t)capacity : 0;
    return 9 * n + opf_bu_work_len(capacity);
}

/* Workspace (indices): corner n, decompose 3n, marks n. */
size_t opf_kpca_iwork_len(ptrdiff_t capacity)
{
    size_t n = capacity > 0 ? (size_t)capacity : 0;
    return 5 * n + 1;
}

double opf_kpca_null_tol(ptrdiff_t m, const double *evals)
{
    double a, b;
    if (m <= 0)
        return 0.0;
    a = fabs(evals[0]);
    b = fabs(evals[m - 1]);
    return (double)m * DBL_EPSILON * (a > b ? a : b);
}

double opf_kpca_gap(double h, double kappa, double eta)
{
    double x, g;
    if (!(h > 0.0) || !(kappa > 0.0))
        return 0.0;
    if (!isfinite(eta))
        return h;
    x = eta * kappa;
    if (!(x < INFINITY))
        return h;
    if (x < 0.5) { /* g = sum_{j>=1} (-x)^(j-1) x / (j+1)!, no cancellation */
        double term = x / 2.0;
        int j;
        g = term;
        for (j = 2; j < 18; j++) {
            term *= -x / (double)(j + 1);
            g += term;
        }
    } else {
        g = (expm1(-x) + x) / x;
    }
    g = g < 1.0 ? g : 1.0;
    return h * g;
}

typedef struct {
    double *z, *p, *mu, *nu, *omega, *decw, *capw, *buw;
    ptrdiff_t *corner, *deciw, *mark;
} kpca_ws;

static kpca_ws split(const opf_kpca *s)
{
    kpca_ws w;
    const ptrdiff_t n = s->capacity;
    double **const vectors[] = {&w.z, &w.p, &w.mu, &w.nu, &w.omega, &w.decw};
    w.capw = opf_carve(s->work, (size_t)n, vectors, 6);
    w.buw = w.capw + 3 * n;
    w.corner = s->iwork;
    w.deciw = w.corner + n;
    w.mark = w.deciw + 3 * n;
    return w;
}

/* The losses of a trial once w->p holds the squared coordinates p_i of
 * phi(x) along the m eigenvectors of the state (eigenvalues s->evals,
 * ascending; p_i = 0 on the null space |lambda_i| <= tol) and kappa =
 * |phi(x)|^2 (see the header comment): the same in both forms. */
/* Follow the Leader's losses with p (squared coordinates along the m
 * eigenvectors, eigenvalues lam ascending): the r leading eigenvectors, or,
 * when the r-th largest eigenvalue ties with others (within 1e-9 of the
 * largest |lambda|: K's eigenvalues carry that rounding, and one-hot rows
 * tie them exactly), the a = m - hi above the tie group [lo, hi) and the
 * r - a remaining shared equally by its c = hi - lo members (the uniform
 * mixture over the ways to complete the leading a; without the rule
 * rounding chose the members, up to 0.9 k(x, x) of a loss apart between
 * X and c X).  The realized loss keeps r - a directions drawn uniformly
 * (Haar) in the tie group's span with u, as OnlinePCA's sketch leader
 * (limit.c): its expectation is the shared one, and it does not depend on
 * the basis rounding chose in the tie group. */
static double leader_losses(const double *lam, const double *p, ptrdiff_t m,
                            ptrdiff_t r, double kappa, double u, double *real)
{
    const ptrdiff_t kth = m - r;
    const double b = lam[kth],
                 tol = 1e-9 * fmax(fabs(lam[0]), fabs(lam[m - 1]));
    ptrdiff_t lo = kth, hi = kth + 1, i, c, take;
    double sum = 0.0, tied = 0.0;
    while (lo > 0 && lam[lo - 1] >= b - tol)
        lo--;
    while (hi < m && lam[hi] <= b + tol)
        hi++;
    if (hi - lo == 1) { /* no tie: the r leading */
        for (i = kth; i < m; i++)
            sum += p[i];
        *real = kappa - sum;
        return *real;
    }
    for (i = hi; i < m; i++)
        sum += p[i];
    for (i = lo; i < hi; i++)
        tied += p[i];
    c = hi - lo;
    take = r - (m - hi); /* 1 <= take <= c */
    *real = fmax(0.0, kappa - sum - opf_haar_energy(take, c, u, tied));
    return fmax(0.0, kappa - sum - (double)take / (double)c * tied);
}

static int play(const opf_kpca *s, const kpca_ws *w, ptrdiff_t m, double tol,
                double kappa, double u, double *el, double *rl,
                double *delta, double *lead, double *lead_real)
{
    const double *lam = s->evals;
    const ptrdiff_t D = m - s->r;
    double sum, e, eta = s->eta;
    ptrdiff_t i, n_raised;
    int st;

    if (m == 0) {
        *el = *rl = *lead = *lead_real = kappa;
        *delta = kappa > 0.0 ? kappa : 0.0;
        return OPF_OK;
    }
    if (D <= 0) {
        sum = 0.0;
        for (i = 0; i < m; i++)
            sum += w->p[i];
        *el = *rl = *lead = *lead_real = kappa - sum;
        *delta = *el > 0.0 ? *el : 0.0;
        return OPF_OK;
    }
    /* Follow the Leader: the r leading eigenvectors (null ones have p = 0) */
    *lead = leader_losses(lam, w->p, m, s->r, kappa, u, lead_real);

    if (s->rate != NULL) {
        const double a = fabs(lam[0]), b = fabs(lam[m - 1]);
        eta = opf_rate_step(s->rate[1], a > b ? a : b);
    }
    for (i = 0; i < m; i++)
        w->mu[i] = fabs(lam[i]) > tol ? -eta * lam[i] : 0.0;
    if (opf_cap_ex(w->mu, m, D, 1, w->nu, w->omega, w->capw, &n_raised, NULL,
                   s->fns->tune.cpu_level) < 0)
        return OPF_EINVAL;
    st = opf_draw_corner(s->sampler, w->omega, m, D, u, w->corner, w->decw,
                         w->deciw);
    if (st != OPF_OK)
        return st;

    {   /* expected: kappa - sum (1 - D lambdabar_i) p_i */
        const double logd = log((double)D);
        sum = 0.0;
        for (i = 0; i < m; i++)
            if (w->p[i] != 0.0)
                sum += -expm1(w->nu[i] + logd) * w->p[i];
        *el = kappa - sum;
    }
    /* realized: kappa - sum over the r directions outside the corner */
    for (i = 0; i < m; i++)
        w->mark[i] = 0;
    for (i = 0; i < D; i++)
        w->mark[w->corner[i]] = 1;
    e = 0.0;
    for (i = 0; i < m; i++)
        if (!w->mark[i])
            e += w->p[i];
    *rl = kappa - e;
    *delta = s->rate != NULL ? opf_kpca_gap(*el, kappa, eta) : 0.0;
    return OPF_OK;
}

/* The trial's uniform u rescaled for the learner the master draws with it:
 * u / p_A for the rate learner (u < p_A), (u - p_A) / (1 - p_A) for Follow
 * the Leader. */
static double drawn_uniform(double u, double pa, int play_a)
{
    return play_a ? u / pa
                  : fmin((u - pa) / (1.0 - pa), nextafter(1.0, 0.0));
}

/* Losses of one trial with m stored instances (kernel form): p_i =
 * z_i^2 / lambda_i with z = U^T y. */
static int losses(const opf_kpca *s, const kpca_ws *w, ptrdiff_t m,
                  const double *y, double kappa, double u, double *el,
                  double *rl, double *delta, double *lead, double *lead_real)
{
    const double *lam = s->evals;
    double tol = 0.0;
    ptrdiff_t i;

    if (m > 0) {
        opf_gemv_qt(s->fns, (int)m, (int)m, s->q, (int)s->capacity, y, w->z);
        tol = opf_kpca_null_tol(m, lam);
        for (i = 0; i < m; i++)
            w->p[i] = fabs(lam[i]) > tol ? w->z[i] * w->z[i] / lam[i] : 0.0;
    }
    return play(s, w, m, tol, kappa, u, el, rl, delta, lead, lead_real);
}

ptrdiff_t opf_kpca_trials(const opf_kpca *s, const double *G, ptrdiff_t ldg,
                          ptrdiff_t T, const double *u, double *exp_loss,
                          double *real_loss, int *status,
                          opf_kpca_stats *stats)
{
    kpca_ws w = split(s);
    ptrdiff_t j;
    opf_bu_info info;

    *status = OPF_OK;
    if (*s->m + T > s->capacity || ldg < *s->m + T) {
        *status = OPF_ECAPACITY;
        return 0;
    }
    for (j = 0; j < T; j++) {
        const ptrdiff_t m = *s->m;
        const double *row = G + j * ldg;
        const double pa = s->master ? opf_master_weight(s->master) : 1.0;
        const int play_a = u[j] < pa;
        double delta = 0.0, el, rl, lead, lead_real;
        int st;
        if (opf_interrupt_poll(s->poll, OPF_POLL_KPCA_TRIAL)
            || opf_interrupt_stopped(s->stop)) {
            *status = OPF_EINTR;
            return j;
        }
        st = losses(s, &w, m, row, row[m], drawn_uniform(u[j], pa, play_a),
                    &el, &rl, &delta, &lead, &lead_real);
        if (st != OPF_OK) {
            *status = st;
            return j;
        }
        exp_loss[j] = el;
        real_loss[j] = play_a ? rl : lead_real;
        st = opf_bordered_update(m, s->evals, s->q, s->capacity, row, row[m],
                                 w.buw, s->buiwork, s->fns,
                                 s->poll ? OPF_POLL_INTERRUPT : 0, &info);
        if (s->rate != NULL && (st == OPF_OK || st == OPF_EFAILED)) {
            opf_rate_commit(s->rate, (double)s->r, delta); /* trial done */
            if (s->master)
                exp_loss[j] = opf_master_commit(s->master, el, lead);
        }
        if (st != OPF_OK) {
            *status = st;
            return j;
        }
        if (stats != NULL) {
            stats->n_updates++;
            stats->secular_sum += info.order;
            stats->n_fallbacks += info.n_fallbacks;
        }
        (*s->m)++;
    }
    return T;
}

/* Workspace (doubles) of the feature form: as the kernel form's, with the
 * rank-one update's in place of the bordered update's (at least 2 n^2, which
 * the re-orthogonalisation uses between trials). */
size_t opf_kpca_feature_work_len(ptrdiff_t order)
{
    size_t n = order > 0 ? (size_t)order : 0;
    return 9 * n + opf_r1_work_len(order);
}

/*
 * One Newton-Schulz step towards the nearest orthogonal matrix, in place:
 * Q <- Q + Q (I - Q^T Q) / 2 (q row-major, columns = eigenvectors; BLAS
 * sees its memory as A = Q^T, and the step is A <- A + E A / 2 with E = I -
 * A A^T symmetric).  An error e in Q^T Q becomes ~e^2; each column moves by
 * O(e), the error it already carries, and keeps its place, so the
 * eigenvalues and the draws are unaffected.  work: 2 n^2 doubles.
 */
static void reorthogonalize(const opf_lapack *fns, ptrdiff_t n, double *q,
                            ptrdiff_t ldq, double *work)
{
    double *E = work, *A = work + n * n, one = 1.0, zero = 0.0, half = 0.5;
    int ni = (int)n, ld = (int)ldq;
    char nn = 'N', tt = 'T';
    ptrdiff_t i, j;
    fns->dgemm(&nn, &tt, &ni, &ni, &ni, &one, q, &ld, q, &ld, &zero, E, &ni);
    for (j = 0; j < n; j++)
        for (i = 0; i < n; i++)
            E[j * n + i] = (i == j ? 1.0 : 0.0) - E[j * n + i];
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            A[i * n + j] = q[i * ldq + j];
    fns->dgemm(&nn, &nn, &ni, &ni, &ni, &half, E, &ni, A, &ni, &one, q, &ld);
}

void opf_kpca_map(const opf_lapack *fns, ptrdiff_t nl, ptrdiff_t dim,
                  const double *M, const double *K, ptrdiff_t ldk, ptrdiff_t T,
                  double *Phi, double *khat)
{
    ptrdiff_t j, i;
    for (j = 0; j < T; j++) {
        double *phi = Phi + j * dim, sum = 0.0;
        if (nl > 0 && dim > 0)
            opf_gemv_qt(fns, (int)nl, (int)dim, M, (int)dim, K + j * ldk, phi);
        else
            for (i = 0; i < dim; i++)
                phi[i] = 0.0;
        if (khat != NULL) {
            for (i = 0; i < dim; i++)
                sum += phi[i] * phi[i];
            khat[j] = sum;
        }
    }
}

/*
 * The feature form (see kernel_pca.h): the trial of the kernel form on the
 * coordinates of phi in the eigenbasis of C, then C += phi phi^T.  Cost
 * per trial: one GEMV and the rank-one update of an order x order
 * eigensystem (O(order^2) + a GEMM of its non-deflated block), whatever the
 * number of trials.
 */
ptrdiff_t opf_kpca_feature_trials(const opf_kpca *s, const double *Phi,
                                  ptrdiff_t T, const double *kappa,
                                  const double *u, double *exp_loss,
                                  double *real_loss, int *status,
                                  opf_kpca_stats *stats)
{
    kpca_ws w = split(s);
    const ptrdiff_t m = *s->m;
    ptrdiff_t j, i;
    opf_r1_info info;

    *status = OPF_OK;
    if (m > s->capacity || s->t == NULL || s->residual == NULL) {
        *status = OPF_EINVAL;
        return 0;
    }
    for (j = 0; j < T; j++) {
        const double *phi = Phi + j * m;
        const double pa = s->master ? opf_master_weight(s->master) : 1.0;
        const int play_a = u[j] < pa;
        double delta = 0.0, el, rl, lead, lead_real, khat = 0.0, tol = 0.0,
               res;
        int st;
        if (opf_interrupt_poll(s->poll, OPF_POLL_KPCA_TRIAL)) {
            *status = OPF_EINTR;
            return j;
        }
        for (i = 0; i < m; i++)
            khat += phi[i] * phi[i];
        if (m > 0) {
            opf_gemv_qt(s->fns, (int)m, (int)m, s->q, (int)s->capacity, phi,
                        w.z);
            tol = opf_kpca_null_tol(m, s->evals);
            for (i = 0; i < m; i++)
                w.p[i] = fabs(s->evals[i]) > tol ? w.z[i] * w.z[i] : 0.0;
        }
        st = play(s, &w, m, tol, khat, drawn_uniform(u[j], pa, play_a), &el,
                  &rl, &delta, &lead, &lead_real);
        if (st != OPF_OK) {
            *status = st;
            return j;
        }
        res = kappa[j] - khat;
        exp_loss[j] = el;
        real_loss[j] = (play_a ? rl : lead_real) + res;
        st = m > 0 ? opf_rank_one_update(m, s->evals, s->q, s->capacity, 1.0,
                                         phi, w.buw, s->buiwork, s->fns, 0,
                                         &info)
                   : OPF_OK;
        if (st == OPF_OK || st == OPF_EFAILED) { /* the trial is done */
            if (s->rate != NULL) {
                opf_rate_commit(s->rate, (double)s->r, delta);
                if (s->master)
                    exp_loss[j] = opf_master_commit(s->master, el, lead);
            }
            exp_loss[j] += res;
            s->residual[0] += res;
        }
        if (st != OPF_OK) {
            *status = st;
            return j;
        }
        if (stats != NULL && m > 0) {
            stats->n_updates++;
            stats->secular_sum += info.m;
            stats->n_fallbacks += info.n_bisection + info.n_eig;
        }
        (*s->t)++;
        /* part of the trial (no poll in between): at fixed counts, so the
         * same trials are followed by it however the stream is split */
        if (m > 0 && *s->t % OPF_KPCA_REORTHOGONALIZE_EVERY == 0)
            reorthogonalize(s->fns, m, s->q, s->capacity, w.buw);
    }
    return T;
}
