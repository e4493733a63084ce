/*
 * adaptive_rate.c -- the AdaHedge rate of eta = "auto" (adaptive_rate.h).
 *
 * Each learner calls these from its trial with the expected loss h_t of its
 * parameter and either the size s of the instance (matrix learners: the
 * two-point bound on the mixability gap) or the log-mixture of the weights
 * (vector learners: the exact gap), then takes its step with the rate in
 * use and (mirror-descent learners) scales its log-weights by
 * gamma = eta_{t+1} / eta_t, the "stabilised" step of Fang, Harvey,
 * Portella and Friedlander (ICML 2020).  Derivation and bound:
 * docs/adaptive_rates.rst.  O(1), no allocation.
 */
#include "adaptive_rate.h"

#include <float.h>
#include <math.h>

#include "simd.h"
#include "vexp.h"

double opf_rate_scale(double n, double d)
{
    return d * log(n / d);
}

double opf_rate_gap_two_point(double h, double s, double d, double eta)
{
    double p, a, l;
    if (!(s > 0.0) || !(h > 0.0))
        return 0.0;
    p = h / (d * s);
    p = p > 1.0 ? 1.0 : p;
    if (!isfinite(eta))
        return p < 1.0 ? h : 0.0;
    a = eta * s;
    /* log(1 - p + p e^{-a}) without cancellation at any p, a */
    if (p >= 1.0) {
        l = -a;
    } else {
        const double u = log1p(-p), v = log(p) - a;
        const double m = u > v ? u : v;
        l = m + log1p(exp(-fabs(u - v)));
    }
    l = h + d * l / eta;
    return l > 0.0 ? l : 0.0;
}

double opf_rate_gap_exact(double h, double lse, double lmin, double d,
                          double eta)
{
    double g = isfinite(eta) ? h + d * lse / eta : h - d * lmin;
    return g > 0.0 ? g : 0.0;
}

double opf_rate_next(const double *rate, double scale, double delta)
{
    double total = rate[0] + delta;
    if (!(total > 0.0))
        return INFINITY;
    if (total > DBL_MAX)
        total = DBL_MAX; /* a stream of losses near DBL_MAX: stays finite */
    return scale / total;
}

void opf_rate_commit(double *rate, double scale, double delta)
{
    double total = rate[0] + delta;
    rate[0] = total > DBL_MAX ? DBL_MAX : total;
    rate[1] = opf_rate_next(rate, scale, 0.0);
}

double opf_rate_step(double eta, double s)
{
    const double top = 0x1p1000;
    return eta * s > top ? top / s : eta;
}

int opf_rate_trial(const double *rate, double n, double d, double h,
                   double sz, double *step, double *gamma, double *delta)
{
    const double eta = rate[1];
    double next;
    *delta = opf_rate_gap_two_point(h, sz, d, eta);
    next = opf_rate_next(rate, opf_rate_scale(n, d), *delta);
    *gamma = 1.0;
    if (isfinite(eta)) {
        *step = opf_rate_step(eta, sz);
        *gamma = next / eta;
        return 1;
    }
    *step = opf_rate_step(next, sz);
    return isfinite(next);
}

double opf_rate_exact(const double *rate, double n, double d, double h,
                      double lse, double *gamma)
{
    const double eta = rate[1],
                 delta = opf_rate_gap_exact(h, lse, 0.0, d, eta);
    *gamma = opf_rate_next(rate, opf_rate_scale(n, d), delta) / eta;
    return delta;
}

double opf_rate_alpha(ptrdiff_t t)
{
    return 1.0 / (((double)t + 1.0) * ((double)t + 1.0));
}

/*
 * Four O(n) passes, each vectorised (OPF_SIMD_WITH reductions; the exps by
 * opf_exp_shifted, in blocks of a stack buffer): the expected loss and the
 * range of l; lam <- lam - eta_t l in place with its maximum; the sum of
 * exp(lam - max); lam <- gamma lam with its range.  The same values as one
 * scalar pass each, up to the order of the sums and the last bit of the
 * exps (vexp.c: within 1 ulp).
 */
#define OPF_RATE_EXP_BLOCK 256

OPF_MULTIVERSION
double opf_rate_vector_step(const double *rate, ptrdiff_t n, double d,
                            double *lam, const double *l, const double *w,
                            double *e, double *top, double *low, int level)
{
    const double eta = rate[1];
    double lmin = INFINITY, lmax = -INFINITY, lse = 0.0, next, step, gamma,
           delta, ev = 0.0, hi = -INFINITY, lo = INFINITY;
    ptrdiff_t i;
    OPF_SIMD_WITH(reduction(+:ev) reduction(min:lmin) reduction(max:lmax))
    for (i = 0; i < n; i++) {
        const double li = l[i];
        ev += w[i] * li;
        OPF_MIN_INTO(lmin, li);
        OPF_MAX_INTO(lmax, li);
    }
    *e = ev;
    if (isfinite(eta)) { /* log sum w e^{-eta l}, shifted by its top term */
        double m = -INFINITY, sum = 0.0;
        step = opf_rate_step(eta, fmax(fabs(lmin), fabs(lmax)));
        OPF_SIMD_WITH(reduction(max:m))
        for (i = 0; i < n; i++) {
            const double v = lam[i] - step * l[i];
            lam[i] = v;
            OPF_MAX_INTO(m, v);
        }
        for (i = 0; i < n; i += OPF_RATE_EXP_BLOCK) {
            double buf[OPF_RATE_EXP_BLOCK];
            const ptrdiff_t len = n - i < OPF_RATE_EXP_BLOCK
                                      ? n - i : OPF_RATE_EXP_BLOCK;
            ptrdiff_t j;
            opf_exp_shifted(lam + i, len, m, buf, level);
            OPF_SIMD_WITH(reduction(+:sum))
            for (j = 0; j < len; j++)
                sum += buf[j];
        }
        lse = m + log(sum);
        delta = opf_rate_gap_exact(d * ev, lse, lmin, d, step);
        next = opf_rate_next(rate, opf_rate_scale((double)n, d), delta);
        gamma = next / eta;
        OPF_SIMD_WITH(reduction(max:hi) reduction(min:lo))
        for (i = 0; i < n; i++) {
            const double v = gamma * lam[i];
            lam[i] = v;
            OPF_MAX_INTO(hi, v);
            OPF_MIN_INTO(lo, v);
        }
    } else {
        delta = opf_rate_gap_exact(d * ev, lse, lmin, d, eta);
        next = opf_rate_next(rate, opf_rate_scale((double)n, d), delta);
        step = opf_rate_step(isfinite(next) ? next : 0.0,
                             fmax(fabs(lmin), fabs(lmax)));
        OPF_SIMD_WITH(reduction(max:hi) reduction(min:lo))
        for (i = 0; i < n; i++) {
            const double v = lam[i] - step * l[i];
            lam[i] = v;
            OPF_MAX_INTO(hi, v);
            OPF_MIN_INTO(lo, v);
        }
    }
    *top = hi;
    *low = lo;
    return delta;
}

double opf_rate_log_partition(const double *lam, ptrdiff_t n)
{
    const double m = lam[n - 1];
    double sum = 0.0;
    ptrdiff_t i;
    for (i = 0; i < n; i++)
        sum += exp(lam[i] - m);
    return m + log(sum);
}

void opf_rate_scale_log(double *lam, ptrdiff_t n, double gamma)
{
    ptrdiff_t i;
    if (gamma != 1.0)
        for (i = 0; i < n; i++)
            lam[i] *= gamma;
}
