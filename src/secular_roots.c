/*
 * secular_roots.c -- the roots of a rank-one secular equation and the
 * Loewner eigenvectors (opf_sec_solve, secular.h), split from secular.c,
 * which keeps the workspace, deflation, the merge and the eigenvector
 * product.  The secular equation 1 + rho sum w_j^2 / (d_j - lambda) = 0 is
 * solved root by root by LAPACK dlaed4 (from the structured product's
 * crossover on the interior roots by the fixed weight iteration below),
 * which also returns d_j - lambda accurately; a root dlaed4 fails on is
 * found by bisection on its interlacing interval.  The weights are then
 * recomputed by the Loewner formula (dlaed3/dlaed9), so that the
 * eigenvectors w_j / (d_j - lambda_i) are orthogonal to working precision.
 * No allocation: all workspace is the caller's.
 */

#include "secular.h"

#include <float.h>
#include <math.h>
#include <stddef.h>

#include "simd.h"

/* ---- the secular equation --------------------------------------------- */

/* Interior roots by fixed_weight_root from the structured product's
 * crossover on (fns->tune.min_order, common.h), by dlaed4 below it, where
 * every result stays dlaed4's bit for bit. */

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
 * dlaed4's differences for root l are those of the poles:
 *     |(delta_k - delta_l) - (dlam_k - dlam_l)| <= 8 eps (|delta_k| + |delta_l|)
 * for every k.  dlaed4 forms delta_k = (dlam_k - dlam_org) - tau from an
 * origin pole; from the pole nearer the root that holds (each term is
 * within eps of |delta_k| + |delta_l|).  From the far pole of the interval
 * the differences of poles closer together than eps times the interval's
 * length are lost, and dlaed4 can take that origin where the learners keep
 * such poles (their deflation tolerance, rank_one_update.h): a root of 6.8e4
 * among poles 0, 4.9 and 19 beside one of 1.3e17 came back 7e-6 off with
 * differences quantised by 2^-54 of the interval, and the Loewner vectors
 * lost orthogonality to 2.6e-7.  Such a root is bisected (bisect_root
 * works from the nearer pole).
 */
OPF_MULTIVERSION
static int deltas_consistent(int m, int l, const double *dlam,
                             const double *delta)
{
    const double dl = delta[l], pl = dlam[l], tol = 8.0 * DBL_EPSILON;
    double worst = 0.0; /* max_k err_k - tol (|delta_k| + |delta_l|), or 0 */
    OPF_SIMD_WITH(reduction(max:worst))
    for (int k = 0; k < m; k++) {
        const double over = fabs((delta[k] - dl) - (dlam[k] - pl))
                            - tol * (fabs(delta[k]) + fabs(dl));
        worst = over > worst ? over : worst;
    }
    return worst <= 0.0;
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
 * Interior root l (0 <= l < m - 1) by Li's fixed weight iteration, as
 * LAPACK dlaed4 takes it for its interior roots (the origin at the nearer
 * pole, decided by the sign of f at the midpoint; differences
 * delta_k = (dlam_k - dlam_org) - tau; the step from the rational model
 * with the two poles of the interval and the derivatives of the rest; a
 * Newton step if that points the wrong way; half the bracket if it leaves
 * it; dlaed4's stopping test |f| <= eps (8 (phi - psi) + 8 / rho +
 * |tau| f')).  The difference from dlaed4 is the sums: one pass each,
 * written for vectorisation (dlaed4's scalar loops are ~30% of a dense
 * update at m = 1000).  Returns 1 on convergence (delta and *lam written),
 * 0 after 40 iterations or a non-finite value (the caller uses dlaed4).
 */
OPF_MULTIVERSION
static int fixed_weight_root(int m, int l, const double *dlam,
                             const double *w, double rho, double *delta,
                             double *lam)
{
    const double rhoinv = 1.0 / rho, eps = 0.5 * DBL_EPSILON;
    const double gap = dlam[l + 1] - dlam[l], mid = 0.5 * gap;
    const double dl = dlam[l];
    double fm = rhoinv;
    OPF_SIMD_WITH(reduction(+:fm))
    for (int k = 0; k < m; k++)
        fm += w[k] * w[k] / ((dlam[k] - dl) - mid);
    if (!isfinite(fm))
        return 0;
    const int org = fm >= 0.0 ? l : l + 1;
    const double dorg = dlam[org];
    double lo = org == l ? 0.0 : mid - gap, hi = org == l ? mid : 0.0;
    double tau = 0.5 * (lo + hi);
    for (int it = 0; it < 40; it++) {
        double psi = 0.0, dpsi = 0.0, phi = 0.0, dphi = 0.0;
        OPF_SIMD_WITH(reduction(+:psi) reduction(+:dpsi))
        for (int k = 0; k <= l; k++) {
            const double dk = (dlam[k] - dorg) - tau;
            const double t = w[k] / dk;
            delta[k] = dk;
            psi += w[k] * t;
            dpsi += t * t;
        }
        OPF_SIMD_WITH(reduction(+:phi) reduction(+:dphi))
        for (int k = l + 1; k < m; k++) {
            const double dk = (dlam[k] - dorg) - tau;
            const double t = w[k] / dk;
            delta[k] = dk;
            phi += w[k] * t;
            dphi += t * t;
        }
        const double f = rhoinv + psi + phi, dw = dpsi + dphi;
        if (!isfinite(f) || !isfinite(dw))
            return 0;
        const double erretm = 8.0 * (phi - psi) + 8.0 * rhoinv
                              + fabs(tau) * dw;
        if (fabs(f) <= eps * erretm) {
            *lam = dorg + tau;
            return root_ok(m, l, delta, *lam);
        }
        if (f > 0.0)
            hi = tau;
        else
            lo = tau;
        const double di = delta[l], di1 = delta[l + 1];
        double c, a = (di + di1) * f - di * di1 * dw, eta;
        const double b = di * di1 * f;
        if (org == l) {
            const double t = w[l] / di;
            c = f - di1 * dw - (dlam[l] - dlam[l + 1]) * t * t;
        } else {
            const double t = w[l + 1] / di1;
            c = f - di * dw - (dlam[l + 1] - dlam[l]) * t * t;
        }
        if (c == 0.0) {
            if (a == 0.0)
                a = org == l ? w[l] * w[l] + di1 * di1 * dw
                             : w[l + 1] * w[l + 1] + di * di * dw;
            eta = b / a;
        } else if (a <= 0.0) {
            eta = (a - sqrt(fabs(a * a - 4.0 * b * c))) / (2.0 * c);
        } else {
            eta = 2.0 * b / (a + sqrt(fabs(a * a - 4.0 * b * c)));
        }
        if (!(f * eta < 0.0))
            eta = -f / dw; /* a Newton step, towards the root */
        const double next = tau + eta;
        if (!(next > lo && next < hi))
            eta = f < 0.0 ? 0.5 * (hi - tau) : 0.5 * (lo - tau);
        const double moved = tau + eta;
        if (moved == tau) /* the bracket is exhausted: as converged */
            break;
        tau = moved;
    }
    return 0;
}

/*
 * Loewner (dlaed3/dlaed9): the weights what_k for which the computed
 * lambdas are the exact eigenvalues are
 *     what_k^2 = -prod_i (dlam_k - lambda_i) / prod_{i != k} (dlam_k - dlam_i).
 * loewner_factor multiplies root i's factors into what[k0..k1) (started at
 * 1), so that each column delta_i = dlam - lambda_i is used while it is in
 * cache; each what_k takes its factors in the order of i, whichever rows
 * a call covers.
 */
OPF_MULTIVERSION
static void loewner_factor(int k0, int k1, int i, const double *dlam,
                           const double *delta, double *what)
{
    const double li = dlam[i];
    const int mid = i < k0 ? k0 : (i > k1 ? k1 : i);
    for (int k = k0; k < mid; k++)
        what[k] *= delta[k] / (dlam[k] - li);
    if (i >= k0 && i < k1)
        what[i] *= delta[i];
    for (int k = i + 1 > k0 ? i + 1 : k0; k < k1; k++)
        what[k] *= delta[k] / (dlam[k] - li);
}

/* Column v (delta_i on entry) <- the unit eigenvector what_k / v_k.
 * Returns 1 on success. */
OPF_MULTIVERSION
static int loewner_column(int m, const double *what, double *v)
{
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
    double sum = (s0 + s1) + (s2 + s3), inv;
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
        inv = 1.0 / (vmax * sqrt(sum));
    } else {
        inv = 1.0 / sqrt(sum);
    }
    for (int k = 0; k < m; k++)
        v[k] *= inv;
    return 1;
}

/* what_k <- the signed square root of the Loewner product (as w_k's
 * sign).  Returns 1 on success. */
static int loewner_signs(int m, const double *w, double *what)
{
    for (int k = 0; k < m; k++) {
        if (!(what[k] <= 0.0))
            return 0;
        what[k] = copysign(sqrt(-what[k]), w[k]);
    }
    return 1;
}

/* Columns c0..c1 of s (delta_i on entry) <- the unit eigenvectors
 * what_k / (dlam_k - lambda_i); if reverse, the pairs of columns (i, m - 1
 * - i) for i in c0..c1 (i <= m - 1 - i), swapped and reversed (s[t] <->
 * s[m^2 - 1 - t] over the whole array: rows and columns in the opposite
 * order) while both are in cache rather than in a pass of its own over m^2
 * doubles (~10 ms at m = 4000).  Returns 1 on success. */
static int loewner_vectors(int m, const double *what, double *s, int reverse,
                           int c0, int c1)
{
    if (!reverse) {
        for (int i = c0; i < c1; i++)
            if (!loewner_column(m, what, s + (ptrdiff_t)i * m))
                return 0;
        return 1;
    }
    for (int i = c0; i < c1 && i <= m - 1 - i; i++) {
        const int j = m - 1 - i;
        double *a = s + (ptrdiff_t)i * m, *b = s + (ptrdiff_t)j * m;
        if (!loewner_column(m, what, a))
            return 0;
        if (i == j) {
            opf_reverse(a, m);
            break;
        }
        if (!loewner_column(m, what, b))
            return 0;
        for (int k = 0; k < m; k++) {
            const double t = a[k];
            a[k] = b[m - 1 - k];
            b[m - 1 - k] = t;
        }
    }
    return 1;
}

/* The columns loewner_vectors takes for all of s: m, or (m + 1) / 2 pairs. */
static int vector_count(int m, int reverse)
{
    return reverse ? (m + 1) / 2 : m;
}

/* Root l by the fixed weight iteration (interior roots from the crossover
 * on) or, failing that, by dlaed4 -- neither with OPF_FORCE_BISECTION.
 * Returns 1 if found (delta, *lam written); *failed: dlaed4 was tried and
 * failed (or returned a root outside its interval). */
static int root_fast(int m, int l, const double *dlam, const double *w,
                     double rho, double *delta, double *lam,
                     const opf_lapack *fns, int flags, int vecmode,
                     int *failed)
{
    int ok = 0;
    *failed = 0;
    if (flags & OPF_FORCE_BISECTION)
        return 0;
    if (!vecmode && m >= fns->tune.min_order && l < m - 1)
        ok = fixed_weight_root(m, l, dlam, w, rho, delta, lam);
    if (!ok) {
        int mi = m, li = l + 1, inf = 0;
        double r = rho;
        fns->dlaed4(&mi, &li, (double *)dlam, (double *)w, delta, &r, lam,
                    &inf);
        if (vecmode) {
            /* dlaed5's vector, normalised by a plain sqrt of squares: 0
             * when they overflow (rho w_k^2 ~ 1e-160 of the gap: the
             * learners' reduced deflation tolerance, rank_one_update.h) */
            const double nrm2 = delta[0] * delta[0] + delta[1] * delta[1];
            ok = inf == 0 && isfinite(*lam) && nrm2 > 0.5 && nrm2 < 2.0;
        } else
            ok = inf == 0 && root_ok(m, l, delta, *lam)
                 && deltas_consistent(m, l, dlam, delta);
        *failed = !ok;
    }
    return ok;
}

/* ---- the solve split over a pool's threads ----------------------------- */

/* Orders from which the solve is split (smaller ones take less time than
 * handing out the tasks), and the roots, weights and columns of a task. */
#define OPF_SPLIT_MIN 256
#define OPF_SPLIT_ROOTS 32
#define OPF_SPLIT_WEIGHTS 512
#define OPF_SPLIT_COLUMNS 32

typedef struct {
    int m, flags, reverse;
    const double *dlam, *w;
    double rho;
    double *s, *lam, *what;
    int *status; /* per root: 0 found, 1 dlaed4 failed, 2 not tried */
    int failed;  /* a column whose Loewner vector failed */
    const opf_lapack *fns;
} split_job;

static void roots_task(void *arg, int b, int t)
{
    split_job *j = arg;
    const int l1 = j->m < (b + 1) * OPF_SPLIT_ROOTS ? j->m
                                                     : (b + 1) * OPF_SPLIT_ROOTS;
    (void)t;
    for (int l = b * OPF_SPLIT_ROOTS; l < l1; l++) {
        int failed;
        const int ok = root_fast(j->m, l, j->dlam, j->w, j->rho,
                                 j->s + (ptrdiff_t)l * j->m, &j->lam[l],
                                 j->fns, j->flags, 0, &failed);
        j->status[l] = ok ? 0 : (failed ? 1 : 2);
    }
}

static void weights_task(void *arg, int b, int t)
{
    split_job *j = arg;
    const int m = j->m, k0 = b * OPF_SPLIT_WEIGHTS;
    const int k1 = m < k0 + OPF_SPLIT_WEIGHTS ? m : k0 + OPF_SPLIT_WEIGHTS;
    (void)t;
    for (int k = k0; k < k1; k++)
        j->what[k] = 1.0;
    for (int i = 0; i < m; i++)
        loewner_factor(k0, k1, i, j->dlam, j->s + (ptrdiff_t)i * m, j->what);
}

static void vectors_task(void *arg, int b, int t)
{
    split_job *j = arg;
    const int n = vector_count(j->m, j->reverse), c0 = b * OPF_SPLIT_COLUMNS;
    const int c1 = n < c0 + OPF_SPLIT_COLUMNS ? n : c0 + OPF_SPLIT_COLUMNS;
    (void)t;
    if (!loewner_vectors(j->m, j->what, j->s, j->reverse, c0, c1))
        j->failed = 1; /* any thread writes the same 1; read after the run */
}

/* opf_sec_solve on the pool's threads: the roots by blocks of columns of s,
 * then the Loewner weights by blocks of rows (each what_k takes its factors
 * in the order of the roots, as in the fused pass), then the vectors by
 * blocks of columns.  Every entry is computed as the single-thread solve
 * computes it; a root that the iteration and dlaed4 miss is bisected on
 * the caller, in order, as there. */
static int solve_split(int m, const double *dlam, const double *w, double rho,
                       opf_sec_ws *ws, double *s, const opf_lapack *fns,
                       int flags, int reverse, ptrdiff_t *n_dlaed4_failures,
                       ptrdiff_t *n_bisection)
{
    const int threads = opf_pool_size(fns->pool);
    split_job job = {m, flags, reverse, dlam, w, rho, s, ws->lam, ws->what,
                     ws->mark, 0, fns};
    opf_pool_run(fns->pool, (m + OPF_SPLIT_ROOTS - 1) / OPF_SPLIT_ROOTS,
                 threads, roots_task, &job);
    for (int l = 0; l < m; l++) {
        if (ws->mark[l] == 0)
            continue;
        if (ws->mark[l] == 1)
            (*n_dlaed4_failures)++;
        if (!bisect_root(m, l, dlam, w, rho, s + (ptrdiff_t)l * m, &ws->lam[l],
                         ws->dd))
            return 0;
        (*n_bisection)++;
    }
    opf_pool_run(fns->pool, (m + OPF_SPLIT_WEIGHTS - 1) / OPF_SPLIT_WEIGHTS,
                 threads, weights_task, &job);
    if (!loewner_signs(m, w, ws->what))
        return 0;
    const int n = vector_count(m, reverse);
    opf_pool_run(fns->pool, (n + OPF_SPLIT_COLUMNS - 1) / OPF_SPLIT_COLUMNS,
                 threads, vectors_task, &job);
    return !job.failed;
}

int opf_sec_solve(int m, const double *dlam, const double *w, double rho,
                  opf_sec_ws *ws, double *s, const opf_lapack *fns,
                  int flags, int reverse, ptrdiff_t *n_dlaed4_failures,
                  ptrdiff_t *n_bisection)
{
    double *lam = ws->lam;
    /* For m == 2 dlaed4 (via dlaed5) returns the unit eigenvector in delta
     * rather than the differences. */
    int vecmode = m == 2 && !(flags & OPF_FORCE_BISECTION);

    if (opf_pool_size(fns->pool) > 1 && m >= OPF_SPLIT_MIN)
        return solve_split(m, dlam, w, rho, ws, s, fns, flags, reverse,
                           n_dlaed4_failures, n_bisection);
    for (int k = 0; k < m; k++)
        ws->what[k] = 1.0;
    for (int l = 0; l < m; l++) {
        double *delta = s + (ptrdiff_t)l * m;
        int failed;
        int ok = root_fast(m, l, dlam, w, rho, delta, &lam[l], fns, flags,
                           vecmode, &failed);
        if (failed)
            (*n_dlaed4_failures)++;
        if (!ok && vecmode) {
            /* both roots again by bisection, then the Loewner vectors
             * (a root's delta in vector mode is not the differences) */
            vecmode = 0;
            flags |= OPF_FORCE_BISECTION;
            l = -1;
            continue;
        }
        if (!ok && !vecmode) {
            ok = bisect_root(m, l, dlam, w, rho, delta, &lam[l], ws->dd);
            if (ok)
                (*n_bisection)++;
        }
        if (!ok)
            return 0;
        if (!vecmode)
            loewner_factor(0, m, l, dlam, delta, ws->what);
    }
    if (vecmode) {
        if (reverse)
            opf_reverse(s, 4);
        return 1;
    }
    return loewner_signs(m, w, ws->what)
           && loewner_vectors(m, ws->what, s, reverse, 0,
                              vector_count(m, reverse));
}
