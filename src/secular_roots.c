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
 * loewner_factor multiplies root i's factors into what (started at 1), so
 * that each column delta_i = dlam - lambda_i is used while it is in cache.
 */
OPF_MULTIVERSION
static void loewner_factor(int m, int i, const double *dlam,
                           const double *delta, double *what)
{
    const double li = dlam[i];
    for (int k = 0; k < i; k++)
        what[k] *= delta[k] / (dlam[k] - li);
    what[i] *= delta[i];
    for (int k = i + 1; k < m; k++)
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

/* Overwrite the columns delta_i of s with the unit eigenvectors
 * what_k / (dlam_k - lambda_i), what signed as w; if reverse, then reverse
 * the whole array (s[t] <-> s[m^2 - 1 - t]: rows and columns in the
 * opposite order), each pair of columns i, m - 1 - i while it is in cache
 * rather than in a pass of its own over m^2 doubles (~10 ms at m = 4000).
 * Returns 1 on success. */
static int loewner_vectors(int m, const double *w, double *s, double *what,
                           int reverse)
{
    for (int k = 0; k < m; k++) {
        if (!(what[k] <= 0.0))
            return 0;
        what[k] = copysign(sqrt(-what[k]), w[k]);
    }
    if (!reverse) {
        for (int i = 0; i < m; i++)
            if (!loewner_column(m, what, s + (ptrdiff_t)i * m))
                return 0;
        return 1;
    }
    for (int i = 0, j = m - 1; i <= j; i++, j--) {
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

int opf_sec_solve(int m, const double *dlam, const double *w, double rho,
                  opf_sec_ws *ws, double *s, const opf_lapack *fns,
                  int flags, int reverse, ptrdiff_t *n_dlaed4_failures,
                  ptrdiff_t *n_bisection)
{
    double *lam = ws->lam;
    /* For m == 2 dlaed4 (via dlaed5) returns the unit eigenvector in delta
     * rather than the differences. */
    const int vecmode = m == 2 && !(flags & OPF_FORCE_BISECTION);

    for (int k = 0; k < m; k++)
        ws->what[k] = 1.0;
    for (int l = 0; l < m; l++) {
        double *delta = s + (ptrdiff_t)l * m;
        int ok = 0;
        if (!(flags & OPF_FORCE_BISECTION) && !vecmode
            && m >= fns->tune.min_order && l < m - 1)
            ok = fixed_weight_root(m, l, dlam, w, rho, delta, &lam[l]);
        if (!ok && !(flags & OPF_FORCE_BISECTION)) {
            int mi = m, li = l + 1, inf = 0;
            double r = rho;
            fns->dlaed4(&mi, &li, (double *)dlam, (double *)w, delta, &r,
                        &lam[l], &inf);
            if (vecmode)
                ok = inf == 0 && isfinite(lam[l]) && isfinite(delta[0]) &&
                     isfinite(delta[1]);
            else
                ok = inf == 0 && root_ok(m, l, delta, lam[l]);
            if (!ok)
                (*n_dlaed4_failures)++;
        }
        if (!ok && !vecmode) {
            ok = bisect_root(m, l, dlam, w, rho, delta, &lam[l], ws->dd);
            if (ok)
                (*n_bisection)++;
        }
        if (!ok)
            return 0;
        if (!vecmode)
            loewner_factor(m, l, dlam, delta, ws->what);
    }
    if (vecmode) {
        if (reverse)
            opf_reverse(s, 4);
        return 1;
    }
    return loewner_vectors(m, w, s, ws->what, reverse);
}
