/*
 * cap.c -- relative-entropy projection onto the capped simplex, in the
 * linear and in the log domain (one algorithm, the domain is a flag).
 *
 * Sort the weights descending: v_1 >= v_2 >= ... >= v_n.  Capping the i
 * largest at 1/d and rescaling the rest is the projection for the smallest
 * i with
 *
 *     f(i):   sum_{j > i} v_j / v_{i+1}  >=  d - i        (linear domain)
 *             sum_{j > i} exp(v_j - v_{i+1})  >=  d - i   (log domain)
 *
 * (Warmuth & Kuzmin 2008, Alg. 4, written relative to the largest uncapped
 * weight so that nothing overflows or underflows and no large logs are
 * added).  f is monotone in i and constant on a block of tied values, so
 * ties are never split.  f(d-1) always holds, hence fewer than d entries
 * are capped.
 *
 * Instead of sorting we search the rank i like quickselect (Herbster &
 * Warmuth 2001, Fig. 3, turned to upper caps as WK footnote 3 suggests):
 * partition the unresolved window around a pivot p into G (> p), E (== p)
 * and L (< p), evaluate f at the rank just above E, and keep G or L.  The
 * sums over the part already known to be uncapped are carried as a pair
 * (reference value, scaled sum).  Pivots are drawn by a private xorshift
 * generator with a fixed seed: O(n) expected time for every input, and
 * the output is a deterministic function of the input.
 *
 * Cost: O(n) expected, one exp (log domain) per element per level.
 * Workspace: 3n doubles.  No allocation.
 */
#include <math.h>
#include <stdint.h>

#include "cap.h"


/* min/max without a libm call (no NaN reaches the kernels). */
static inline double dmin(double a, double b) { return a < b ? a : b; }
static inline double dmax(double a, double b) { return a > b ? a : b; }

static inline uint64_t xorshift64(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

/* Sum of v[0..n) with four accumulators (breaks the add latency chain). */
static double sum4(const double *v, ptrdiff_t n)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    ptrdiff_t j = 0;
    for (; j + 4 <= n; j += 4) {
        s0 += v[j];
        s1 += v[j + 1];
        s2 += v[j + 2];
        s3 += v[j + 3];
    }
    for (; j < n; j++)
        s0 += v[j];
    return (s0 + s1) + (s2 + s3);
}

/*
 * Find the number of capped entries among the nf weights in buf[0..nf)
 * (all of positive weight).  buf holds 2 nf doubles: the window is
 * partitioned out of place, ping-ponging between the two halves, with a
 * branch-free loop.  The domain says how to weigh v against a reference
 * r >= v: v / r (linear) or exp(v - r) (log).  On return the uncapped
 * entries are exactly those <= *tail_ref, and their weights sum to
 * *tail_sum times the weight of *tail_ref.
 */
static ptrdiff_t search(double *buf, ptrdiff_t nf, ptrdiff_t d,
                        int log_domain, double *tail_ref, double *tail_sum)
{
    double *src = buf, *dst = buf + nf, *tmp;
    ptrdiff_t len = nf, ncap = 0, j;
    uint64_t seed = 0x9E3779B97F4A7C15ULL ^ (uint64_t)nf;
    double tref = 0.0, tsum = 0.0;

    while (len > 0) {
        double p, sigma, s;
        ptrdiff_t ng = 0, nl = 0, ne, k;
        double *last = dst + len - 1;
        {
            /* median of three random entries of the window */
            double x0 = src[(ptrdiff_t)(xorshift64(&seed) % (uint64_t)len)];
            double x1 = src[(ptrdiff_t)(xorshift64(&seed) % (uint64_t)len)];
            double x2 = src[(ptrdiff_t)(xorshift64(&seed) % (uint64_t)len)];
            p = dmax(dmin(x0, x1), dmin(dmax(x0, x1), x2));
        }
        /* G (> p) to dst[0..ng), L (< p) to dst[len-nl..len); the entries
         * equal to p are only counted.  Stray stores land in the gap. */
        for (j = 0; j < len; j++) {
            double v = src[j];
            dst[ng] = v;
            last[-nl] = v;
            ng += (v > p);
            nl += (v < p);
        }
        ne = len - ng - nl;
        /* Weight of the entries <= p relative to p, plus the tail already
         * known to be uncapped. */
        if (log_domain) {
            s = 0.0;
            for (j = len - nl; j < len; j++)
                s += exp(dst[j] - p);
            sigma = s + (double)ne + (tsum > 0.0 ? tsum * exp(tref - p) : 0.0);
        } else {
            s = sum4(dst + len - nl, nl);
            sigma = s / p + (double)ne + (tsum > 0.0 ? tsum * (tref / p) : 0.0);
        }

        k = ncap + ng;  /* ranks above p */
        if (sigma >= (double)(d - k)) {
            /* f(k) holds: everything <= p is uncapped; the rank is in G. */
            tref = p;
            tsum = sigma;
            len = ng;
            tmp = src;
            src = dst;
            dst = tmp;
        } else {
            /* f fails on the whole block of entries equal to p: G and that
             * block are capped; the rank is among the entries < p. */
            ncap = k + ne;
            tmp = src;
            src = dst + (len - nl);
            dst = tmp;
            len = nl;
        }
    }
    *tail_ref = tref;
    *tail_sum = tsum;
    return ncap;
}

ptrdiff_t opf_cap(const double *x, ptrdiff_t n, ptrdiff_t d, int log_domain,
                  double *out, double *out_lin, double *work,
                  ptrdiff_t *n_raised)
{
    ptrdiff_t i, j, nf = 0, ncap;
    const double cap_lin = 1.0 / (double)d;
    const double cap_log = -log((double)d);
    double tail_ref, tail_sum, top = -INFINITY;
    double *buf = work, *ew = work + 2 * n;

    *n_raised = 0;
    if (n < 1 || d < 1 || d > n)
        return OPF_EINVAL;

    /* Entries of positive weight take part in the search; zero weights
     * (0, resp. -inf) are never capped unless there are too few others.
     * (Four running maxima: one would wait on its own latency.) */
    {
        const double zero = log_domain ? -INFINITY : 0.0;
        double m[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
        for (i = 0; i + 4 <= n; i += 4)
            for (j = 0; j < 4; j++) {
                nf += x[i + j] > zero;
                m[j] = dmax(m[j], x[i + j]);
            }
        for (; i < n; i++) {
            nf += x[i] > zero;
            m[0] = dmax(m[0], x[i]);
        }
        top = dmax(dmax(m[0], m[1]), dmax(m[2], m[3]));
    }

    if (nf < d) {
        /* The projection does not exist: the remaining mass has nowhere to
         * go (e.g. exp underflowed).  Cap every positive entry and raise
         * the first d - nf zero entries, by index, to the cap. */
        ptrdiff_t to_raise = d - nf;
        const double cap_value = log_domain ? cap_log : cap_lin;
        const double zero = log_domain ? -INFINITY : 0.0;
        for (i = 0; i < n; i++) {
            double v = x[i];
            int positive = log_domain ? (v > -INFINITY) : (v > 0.0);
            if (positive || to_raise > 0) {
                if (!positive) {
                    to_raise--;
                    (*n_raised)++;
                }
                out[i] = cap_value;
                if (out_lin)
                    out_lin[i] = cap_lin;
            } else {
                out[i] = zero;
                if (out_lin)
                    out_lin[i] = 0.0;
            }
        }
        return d;
    }

    if (log_domain) {
        /* Search on the linear weights e_i = exp(mu_i - max), computed once
         * (kept unpermuted in ew for the output).  Those that underflow to 0
         * are left out, and those below exp(-SAFE_RANGE) may have lost
         * precision; both only shrink sums taken relative to pivots that
         * small, which can only move the answer below them.  So the result
         * is exact if the largest uncapped weight is above that range;
         * otherwise search again on mu with exps relative to each pivot. */
        const double SAFE_RANGE = 600.0;
        ptrdiff_t ne = 0;
        if (out_lin)
            ew = out_lin;
        for (i = 0; i < n; i++) {
            double e = exp(x[i] - top);  /* exp(-inf) = 0 */
            ew[i] = e;
            if (e > 0.0)
                buf[ne++] = e;
        }
        if (ne >= d) {
            ncap = search(buf, ne, d, 0, &tail_ref, &tail_sum);
            if (tail_ref > exp(-SAFE_RANGE)) {
                /* uncapped: e_i <= tail_ref.  The log-weights use the mu of
                 * the largest uncapped entry (not top + log(tail_ref),
                 * which would cost an ulp of top), the linear ones scale
                 * e_i so the remaining mass is (d - ncap)/d. */
                double um[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
                double umu, c, scale;
                for (i = 0; i + 4 <= n; i += 4)
                    for (j = 0; j < 4; j++)
                        um[j] = dmax(um[j], ew[i + j] <= tail_ref ? x[i + j]
                                                                  : -INFINITY);
                for (; i < n; i++)
                    um[0] = dmax(um[0], ew[i] <= tail_ref ? x[i] : -INFINITY);
                umu = dmax(dmax(um[0], um[1]), dmax(um[2], um[3]));
                c = log((double)(d - ncap)) - log((double)d) - umu
                    - log(tail_sum);
                scale = ((double)(d - ncap) / (double)d) / tail_sum / tail_ref;
                for (i = 0; i < n; i++) {
                    int capped = ew[i] > tail_ref;
                    out[i] = capped ? cap_log : dmin(x[i] + c, cap_log);
                    if (out_lin)
                        out_lin[i] = capped ? cap_lin : dmin(ew[i] * scale, cap_lin);
                }
                return ncap;
            }
        }
        j = 0;
        for (i = 0; i < n; i++)
            if (x[i] > -INFINITY)
                buf[j++] = x[i];
        ncap = search(buf, nf, d, 1, &tail_ref, &tail_sum);
        {
            const double c = log((double)(d - ncap)) - log((double)d)
                             - tail_ref - log(tail_sum);
            for (i = 0; i < n; i++) {
                double v = x[i];
                out[i] = (v > tail_ref) ? cap_log : dmin(v + c, cap_log);
                if (out_lin)
                    out_lin[i] = exp(out[i]);
            }
        }
        return ncap;
    }

    {
        double c;
        j = 0;
        for (i = 0; i < n; i++)
            if (x[i] > 0.0)
                buf[j++] = x[i];
        ncap = search(buf, nf, d, 0, &tail_ref, &tail_sum);
        c = ((double)(d - ncap) / (double)d) / tail_sum;
        if (isfinite(c / tail_ref)) {
            c /= tail_ref;
            for (i = 0; i < n; i++) {
                double v = x[i];
                out[i] = (v > tail_ref) ? cap_lin : dmin(v * c, cap_lin);
            }
        } else {
            /* tail_ref so small that 1/tail_ref overflows */
            for (i = 0; i < n; i++) {
                double v = x[i];
                out[i] = (v > tail_ref) ? cap_lin : dmin((v / tail_ref) * c, cap_lin);
            }
        }
        if (out_lin && out_lin != out)
            for (i = 0; i < n; i++)
                out_lin[i] = out[i];
    }
    return ncap;
}
