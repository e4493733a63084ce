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
 * The log domain searches on the linear weights exp(mu - max), computed
 * in one vectorised pass (vexp.c).  Repeated projections of a slowly
 * changing vector (the experts learners' weights) can pass a bracket for
 * the threshold (opf_cap_ex): the pivots of the first step are then the
 * bracket's ends, one vectorised pass counts and sums the three groups, and
 * only the entries inside the bracket are left to search -- a few hundred
 * of 10^5 on the benchmark stream instead of ~2.75 partition passes over
 * all of them.  The answer does not depend on the bracket: the test below
 * is exact at any pivot, and the outputs are computed from the capped set
 * with sums in a fixed order.
 *
 * Cost: O(n) expected.  Workspace: 3n doubles.  No allocation.
 */
#include <math.h>
#include <stdint.h>

#include "cap.h"
#include "simd.h"
#include "vexp.h"


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
 * The search state: the unresolved window src[0..len) (all of positive
 * weight), dst a free area of at least len doubles not overlapping it, the
 * number of entries already known to be capped, and the entries already
 * known to be uncapped summarised as (reference value, their weights' sum
 * divided by the reference's weight).
 */
typedef struct {
    double *src, *dst;
    ptrdiff_t len, ncap;
    double tref, tsum;
} search_state;

/*
 * Resolve the window: partition it around a pivot p into G (> p), E (== p)
 * and L (< p), out of place with a branch-free loop, ping-ponging between
 * src and dst; evaluate the test at p; keep G or L.  The domain says how to
 * weigh v against a reference r >= v: v / r (linear) or exp(v - r) (log).
 * On return the uncapped entries are exactly those <= st->tref (0 entries
 * uncapped: tref = 0), and st->ncap are capped.
 *
 * The test is exact for ANY pivot p >= 0, not only for entries: the
 * projection caps exactly the entries above the threshold tau* at which
 * phi(tau) = sum_i min(v_i, tau) - d tau changes sign (phi > 0 below tau*,
 * < 0 above), and phi(p) >= 0  <=>  sum_{v <= p} v / p >= d - #{v > p},
 * which is what sigma >= d - k below says.  So p <= tau* (everything <= p is
 * uncapped) or p > tau* (everything >= p is capped); the hinted first step
 * of opf_cap_ex relies on this.
 */
/* A search over all len entries of buf (nothing resolved yet). */
static void fresh_search(search_state *st, double *buf, ptrdiff_t len,
                         double *dst)
{
    st->src = buf;
    st->dst = dst;
    st->len = len;
    st->ncap = 0;
    st->tref = 0.0;
    st->tsum = 0.0;
}

OPF_MULTIVERSION
static void search(search_state *st, ptrdiff_t d, int log_domain)
{
    double *src = st->src, *dst = st->dst, *tmp;
    ptrdiff_t len = st->len, ncap = st->ncap, j;
    uint64_t seed = 0x9E3779B97F4A7C15ULL ^ (uint64_t)len;
    double tref = st->tref, tsum = st->tsum;

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
            /* the test holds at p: everything <= p is uncapped; the rank
             * is in G. */
            tref = p;
            tsum = sigma;
            len = ng;
            tmp = src;
            src = dst;
            dst = tmp;
        } else {
            /* it fails at p: G and the entries equal to p are capped; the
             * rank is among the entries < p. */
            ncap = k + ne;
            tmp = src;
            src = dst + (len - nl);
            dst = tmp;
            len = nl;
        }
    }
    st->ncap = ncap;
    st->tref = tref;
    st->tsum = tsum;
}

/*
 * The first step of the linear-domain search with two pivots lo <= hi (a
 * bracket for the threshold, e.g. from the previous projection of a slowly
 * changing vector) over the n weights e[0..n), zero weights left out:
 * G (> hi), M (lo < v <= hi) and L (v <= lo); the test at hi and at lo.
 * When the bracket holds the threshold, only M -- the entries between the
 * pivots -- is copied to buf and left to search; otherwise the window is G
 * or L.  One vectorised pass for the sums and counts, one cheap pass (its
 * branch is rarely taken) to copy the window.  buf: 2n doubles.  Returns 1
 * if the bracket held.
 */
OPF_MULTIVERSION
static int hinted_first_step(const double *e, ptrdiff_t n, ptrdiff_t d,
                             double lo, double hi, double *buf,
                             search_state *st)
{
    double s_l = 0.0, s_m = 0.0, c_g = 0.0, c_m = 0.0, sigma, a, b;
    ptrdiff_t ng, nm, i, len = 0;
    /* (the counts are summed as doubles -- exact below 2^53 -- which
     * vectorise better than integer counts of double comparisons) */
    OPF_SIMD_WITH(reduction(+:s_l, s_m, c_g, c_m))
    for (i = 0; i < n; i++) {
        const double v = e[i];
        const int in_g = v > hi, in_l = v <= lo, in_m = !in_g & !in_l;
        c_g += in_g ? 1.0 : 0.0;
        c_m += in_m ? 1.0 : 0.0;
        s_l += in_l ? v : 0.0; /* zero weights add nothing */
        s_m += in_m ? v : 0.0;
    }
    ng = (ptrdiff_t)c_g;
    nm = (ptrdiff_t)c_m;
    st->dst = buf + n;
    st->src = buf;
    sigma = (s_l + s_m) / hi;
    if (sigma >= (double)(d - ng)) {
        /* hi <= tau*: M and L are uncapped, the rank is in G */
        a = hi;
        b = INFINITY;
        st->ncap = 0;
        st->tref = hi;
        st->tsum = sigma;
    } else if (!(lo > 0.0) || s_l / lo >= (double)(d - ng - nm)) {
        /* lo <= tau* < hi: G is capped, L uncapped, the rank is in M (if
         * lo underflowed to 0, nothing is known to be uncapped) */
        a = lo;
        b = hi;
        st->ncap = ng;
        st->tref = lo > 0.0 ? lo : 0.0;
        st->tsum = lo > 0.0 ? s_l / lo : 0.0;
    } else {
        /* tau* < lo: G and M are capped, the rank is in L */
        a = 0.0;
        b = lo;
        st->ncap = ng + nm;
        st->tref = 0.0;
        st->tsum = 0.0;
    }
    /* the window: the positive entries in (a, b] (branch-free: whether an
     * entry is above a is as good as random, and a branch on it would be
     * mispredicted half of the time) */
    for (i = 0; i < n; i++) {
        const double v = e[i];
        buf[len] = v;
        len += (v > a) & (v <= b);
    }
    st->len = len;
    return a == lo && b == hi;
}

/* Fewer than d positive entries: cap every positive entry and raise the
 * first d - nf zero entries, by index, to the cap. */
static ptrdiff_t cap_all(const double *x, ptrdiff_t n, ptrdiff_t d, ptrdiff_t nf,
                         int log_domain, double *out, double *out_lin,
                         ptrdiff_t *n_raised)
{
    ptrdiff_t to_raise = d - nf, i;
    const double cap_lin = 1.0 / (double)d;
    const double cap_value = log_domain ? -log((double)d) : cap_lin;
    const double zero = log_domain ? -INFINITY : 0.0;
    for (i = 0; i < n; i++) {
        const int positive = x[i] > zero;
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

ptrdiff_t opf_cap(const double *x, ptrdiff_t n, ptrdiff_t d, int log_domain,
                  double *out, double *out_lin, double *work,
                  ptrdiff_t *n_raised)
{
    return opf_cap_ex(x, n, d, log_domain, out, out_lin, work, n_raised, NULL);
}

OPF_MULTIVERSION
ptrdiff_t opf_cap_ex(const double *x, ptrdiff_t n, ptrdiff_t d, int log_domain,
                     double *out, double *out_lin, double *work,
                     ptrdiff_t *n_raised, opf_cap_hint *hint)
{
    ptrdiff_t i, j, nf = 0;
    const double cap_lin = 1.0 / (double)d;
    const double cap_log = -log((double)d);
    const double zero = log_domain ? -INFINITY : 0.0;
    double top;
    double *buf = work, *ew = work + 2 * n;
    search_state st;

    *n_raised = 0;
    if (n < 1 || d < 1 || d > n)
        return OPF_EINVAL;
    if (hint)
        hint->bracketed = 0;

    /* Entries of positive weight take part in the search; zero weights
     * (0, resp. -inf) are never capped unless there are too few others. */
    if (hint && log_domain && isfinite(hint->xmax)) {
        /* the caller knows the maximum, and that no entry is -inf */
        nf = n;
        top = hint->xmax;
    } else {
        double m = -INFINITY, c = 0.0;
        OPF_SIMD_WITH(reduction(max:m) reduction(+:c))
        for (i = 0; i < n; i++) {
            const double v = x[i];
            c += v > zero ? 1.0 : 0.0; /* exact below 2^53 */
            m = v > m ? v : m;
        }
        nf = (ptrdiff_t)c;
        top = m;
    }
    if (nf < d)
        return cap_all(x, n, d, nf, log_domain, out, out_lin, n_raised);

    if (log_domain) {
        /* Search on the linear weights e_i = exp(mu_i - max), computed once
         * (kept in ew, or out_lin, for the output).  Those that underflow
         * to 0 are left out, and those below exp(-SAFE_RANGE) may have lost
         * precision; both only shrink sums taken relative to pivots that
         * small, which can only move the answer below them.  So the result
         * is exact if the largest uncapped weight is above that range;
         * otherwise search again on mu with exps relative to each pivot. */
        const double SAFE_RANGE = 600.0;
        if (out_lin)
            ew = out_lin;
        opf_exp_shifted(x, n, top, ew); /* exp(-inf) = 0 */
        if (hint && hint->lo <= hint->hi && isfinite(hint->lo)
            && isfinite(hint->hi)) {
            if (hinted_first_step(ew, n, d, exp(hint->lo - top),
                                  exp(hint->hi - top), buf, &st))
                hint->bracketed = 1;
        } else {
            j = 0;
            for (i = 0; i < n; i++) {
                buf[j] = ew[i]; /* branch-free: kept if positive */
                j += ew[i] > 0.0;
            }
            fresh_search(&st, buf, j, buf + n);
        }
        search(&st, d, 0);
        {
            /* Uncapped: e_i <= tref.  The largest uncapped weight and its
             * mu, and the sum of the uncapped weights in a fixed order (so
             * that the output does not depend on the pivots). */
            const double tref = st.tref;
            double umu = -INFINITY, emax = 0.0, sum = 0.0;
            OPF_SIMD_WITH(reduction(max:umu, emax) reduction(+:sum))
            for (i = 0; i < n; i++) {
                const double e = ew[i], v = x[i];
                const int u = e <= tref;
                const double vu = u ? v : -INFINITY, eu = u ? e : 0.0;
                umu = vu > umu ? vu : umu;
                emax = eu > emax ? eu : emax;
                sum += eu;
            }
            if (emax > exp(-SAFE_RANGE)) {
                /* The log-weights use the mu of the largest uncapped entry
                 * (not top + log(emax), which would cost an ulp of top);
                 * the linear ones scale e_i so that the uncapped mass is
                 * (d - ncap)/d. */
                const ptrdiff_t ncap = st.ncap;
                const double frac = (double)(d - ncap) / (double)d;
                const double c = log(frac) - umu - log(sum / emax);
                const double scale = frac / sum;
                if (out_lin) {
                    OPF_SIMD
                    for (i = 0; i < n; i++) {
                        const double e = ew[i];
                        const double v = dmin(x[i] + c, cap_log);
                        const double el = dmin(e * scale, cap_lin);
                        const int capped = e > tref;
                        out[i] = capped ? cap_log : v;
                        out_lin[i] = capped ? cap_lin : el;
                    }
                } else {
                    OPF_SIMD
                    for (i = 0; i < n; i++) {
                        const double v = dmin(x[i] + c, cap_log);
                        out[i] = ew[i] > tref ? cap_log : v;
                    }
                }
                if (hint)
                    hint->shift = c;
                return ncap;
            }
        }
        /* The uncapped weights lie below exp(-SAFE_RANGE) of the largest:
         * search on mu itself (no hint). */
        if (hint)
            hint->bracketed = 0;
        j = 0;
        for (i = 0; i < n; i++)
            if (x[i] > -INFINITY)
                buf[j++] = x[i];
        fresh_search(&st, buf, nf, buf + nf);
        search(&st, d, 1);
        {
            const double c = log((double)(d - st.ncap)) - log((double)d)
                             - st.tref - log(st.tsum);
            for (i = 0; i < n; i++) {
                double v = x[i];
                out[i] = (v > st.tref) ? cap_log : dmin(v + c, cap_log);
                if (out_lin)
                    out_lin[i] = exp(out[i]);
            }
            if (hint)
                hint->shift = c;
        }
        return st.ncap;
    }

    {
        double c;
        j = 0;
        for (i = 0; i < n; i++)
            if (x[i] > 0.0)
                buf[j++] = x[i];
        fresh_search(&st, buf, nf, buf + nf);
        search(&st, d, 0);
        c = ((double)(d - st.ncap) / (double)d) / st.tsum;
        if (isfinite(c / st.tref)) {
            const double tref = st.tref;
            c /= tref;
            OPF_SIMD
            for (i = 0; i < n; i++) {
                const double v = x[i], w = dmin(v * c, cap_lin);
                out[i] = v > tref ? cap_lin : w;
            }
        } else {
            /* tref so small that 1/tref overflows */
            const double tref = st.tref;
            OPF_SIMD
            for (i = 0; i < n; i++) {
                const double v = x[i], w = dmin((v / tref) * c, cap_lin);
                out[i] = v > tref ? cap_lin : w;
            }
        }
        if (out_lin && out_lin != out)
            for (i = 0; i < n; i++)
                out_lin[i] = out[i];
        if (hint)
            hint->shift = c;
    }
    return st.ncap;
}
