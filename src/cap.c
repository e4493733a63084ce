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
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cap.h"
#include "logweights.h"
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
 * The first pass of a log-domain projection: y = x - eta g (if g; written
 * to y), e_i = exp(y_i - shift) to ew, and, with a bracket lo <= hi on e
 * (the pivots of a first search step, e.g. from the previous projection
 * of a slowly changing vector), the counts and sums of G (e > hi),
 * M (lo < e <= hi) and L (e <= lo), with the entries of M copied to win in
 * index order.  In chunks that stay in the L1 cache: the exps of a chunk,
 * then its statistics.  M is usually a few hundred entries of 10^5, so
 * the AVX versions (with OPF_VECTOR) run the statistics four entries at a
 * time and copy only where a block has one in M (a branch rarely taken);
 * the baseline one uses a vectorised pass plus a branch-free copy.
 */
typedef struct {
    double lo, hi;             /* in: the bracket on e; lo > hi: none */
    double c_g, c_m, s_l, s_m; /* out: counts (exact) and sums */
    ptrdiff_t nwin;            /* out: the entries of M in win[0..nwin) */
    double ymin;               /* out: min y (with g) */
} first_pass_out;

/* The statistics four entries at a time (explicit vectors; for the AVX
 * versions: with SSE2 alone the compilers spill them) ... */
#ifdef OPF_VECTOR
#define OPF_CAP_STATS_BLOCK(v_, base)                                        \
    do {                                                                     \
        const opf_v4l g_ = v_ > hi_, l_ = v_ <= lo_, mid_ = ~(g_ | l_);      \
        cg -= g_;                                                            \
        cm -= mid_;                                                          \
        sl += (opf_v4d)((opf_v4l)v_ & l_);                                   \
        sm += (opf_v4d)((opf_v4l)v_ & mid_);                                 \
        if ((mid_[0] | mid_[1]) | (mid_[2] | mid_[3])) {                     \
            int k_;                                                          \
            for (k_ = 0; k_ < 4; k_++)                                       \
                if (mid_[k_])                                                \
                    win[nwin++] = v_[k_];                                    \
        }                                                                    \
    } while (0)
#define OPF_CAP_STATS_VEC(e, m)                                              \
    do {                                                                     \
        const opf_v4d zero_ = {0.0, 0.0, 0.0, 0.0};                          \
        const opf_v4d lo_ = zero_ + lo, hi_ = zero_ + hi;                    \
        ptrdiff_t j_;                                                        \
        for (j_ = 0; j_ + 4 <= (m); j_ += 4) {                               \
            opf_v4d v_;                                                      \
            memcpy(&v_, (e) + j_, sizeof v_);                                \
            OPF_CAP_STATS_BLOCK(v_, j_);                                     \
        }                                                                    \
        if (j_ < (m)) { /* padded with 0, which is in L and adds nothing */  \
            opf_v4d v_ = zero_;                                              \
            memcpy(&v_, (e) + j_, (size_t)((m) - j_) * sizeof(double));      \
            OPF_CAP_STATS_BLOCK(v_, j_);                                     \
        }                                                                    \
    } while (0)
#define OPF_CAP_STATS_DECL_VEC                                               \
    opf_v4l cg = {0, 0, 0, 0}, cm = {0, 0, 0, 0};                            \
    opf_v4d sl = {0.0, 0.0, 0.0, 0.0}, sm = {0.0, 0.0, 0.0, 0.0}
#define OPF_CAP_STATS_END_VEC                                                \
    do {                                                                     \
        out->c_g = (double)((cg[0] + cg[1]) + (cg[2] + cg[3]));              \
        out->c_m = (double)((cm[0] + cm[1]) + (cm[2] + cm[3]));              \
        out->s_l = (sl[0] + sl[1]) + (sl[2] + sl[3]);                        \
        out->s_m = (sm[0] + sm[1]) + (sm[2] + sm[3]);                        \
    } while (0)
#define OPF_CAP_VEC VEC
#else
#define OPF_CAP_VEC SCALAR
#endif

/* ... or as a vectorised pass plus a branch-free copy of M. */
#define OPF_CAP_STATS_SCALAR(e, m)                                           \
    do {                                                                     \
        ptrdiff_t j_;                                                        \
        OPF_SIMD_WITH(reduction(+:cg, cm, sl, sm))                           \
        for (j_ = 0; j_ < (m); j_++) {                                       \
            const double v_ = (e)[j_];                                       \
            const int in_g_ = v_ > hi, in_l_ = v_ <= lo;                     \
            const int in_m_ = !in_g_ & !in_l_;                               \
            cg += in_g_ ? 1.0 : 0.0; /* exact below 2^53 */                  \
            cm += in_m_ ? 1.0 : 0.0;                                         \
            sl += in_l_ ? v_ : 0.0;                                          \
            sm += in_m_ ? v_ : 0.0;                                          \
        }                                                                    \
        for (j_ = 0; j_ < (m); j_++) { /* branch-free */                     \
            win[nwin] = (e)[j_];                                             \
            nwin += ((e)[j_] > lo) & ((e)[j_] <= hi);                        \
        }                                                                    \
    } while (0)
#define OPF_CAP_STATS_DECL_SCALAR double cg = 0.0, cm = 0.0, sl = 0.0, sm = 0.0
#define OPF_CAP_STATS_END_SCALAR                                             \
    do {                                                                     \
        out->c_g = cg;                                                       \
        out->c_m = cm;                                                       \
        out->s_l = sl;                                                       \
        out->s_m = sm;                                                       \
    } while (0)
#define OPF_CAP_FIRST_PASS_(MULADD, KIND)                                    \
    do {                                                                     \
        const double lo = out->lo, hi = out->hi;                             \
        const int bracket = lo <= hi;                                        \
        double ymin = INFINITY;                                              \
        ptrdiff_t i0, i, nwin = 0;                                           \
        OPF_CAP_STATS_DECL_##KIND;                                           \
        for (i0 = 0; i0 < n; i0 += OPF_CHUNK) {                          \
            const ptrdiff_t i1 = n - i0 > OPF_CHUNK ? i0 + OPF_CHUNK : n; \
            const ptrdiff_t i2 = n - i1 > OPF_CHUNK ? i1 + OPF_CHUNK : n;    \
            OPF_PREFETCH(x, i1, i2);                                         \
            if (g)                                                           \
                OPF_PREFETCH(g, i1, i2);                                     \
            if (g) {                                                         \
                OPF_SIMD_WITH(reduction(min:ymin))                           \
                for (i = i0; i < i1; i++) {                                  \
                    const double v = x[i] - eta * g[i];                      \
                    y[i] = v;                                                \
                    OPF_MIN_INTO(ymin, v);                                   \
                    OPF_EXP_CORE(v - shift, ew[i], MULADD);                  \
                }                                                            \
            } else {                                                         \
                OPF_SIMD                                                     \
                for (i = i0; i < i1; i++)                                    \
                    OPF_EXP_CORE(x[i] - shift, ew[i], MULADD);               \
            }                                                                \
            if (bracket)                                                     \
                OPF_CAP_STATS_##KIND(ew + i0, i1 - i0);                      \
        }                                                                    \
        OPF_CAP_STATS_END_##KIND;                                            \
        out->nwin = nwin;                                                    \
        out->ymin = ymin;                                                    \
    } while (0)

/* (one more level, so that KIND is expanded before it is pasted) */
#define OPF_CAP_FIRST_PASS(MULADD, KIND) OPF_CAP_FIRST_PASS_(MULADD, KIND)

static void first_pass_generic(const double *x, const double *g, double eta,
                               ptrdiff_t n, double shift, double *y,
                               double *ew, double *win, first_pass_out *out)
{
    OPF_CAP_FIRST_PASS(OPF_PLAIN_MULADD, SCALAR);
}

#ifdef OPF_FMA_DISPATCH
OPF_TARGET_AVX2_FMA
static void first_pass_avx2(const double *x, const double *g, double eta,
                            ptrdiff_t n, double shift, double *y, double *ew,
                            double *win, first_pass_out *out)
{
    OPF_CAP_FIRST_PASS(__builtin_fma, OPF_CAP_VEC);
}

OPF_TARGET_AVX512
static void first_pass_avx512(const double *x, const double *g, double eta,
                              ptrdiff_t n, double shift, double *y,
                              double *ew, double *win, first_pass_out *out)
{
    OPF_CAP_FIRST_PASS(__builtin_fma, OPF_CAP_VEC);
}
#endif

static void first_pass(const double *x, const double *g, double eta,
                       ptrdiff_t n, double shift, double *y, double *ew,
                       double *win, first_pass_out *out, int level)
{
#ifdef OPF_FMA_DISPATCH
    switch (opf_cpu_use(level)) {
    case 2:
        first_pass_avx512(x, g, eta, n, shift, y, ew, win, out);
        return;
    case 1:
        first_pass_avx2(x, g, eta, n, shift, y, ew, win, out);
        return;
    }
#else
    (void)level;
#endif
    first_pass_generic(x, g, eta, n, shift, y, ew, win, out);
}

/*
 * The first search step from the bracket's statistics: the test at hi and
 * at lo (exact at any pivot, see search) says whether the threshold is
 * in G, M or L.  The window for M was copied by the first pass; G or L
 * (the bracket missed) is copied here from e.  buf: 2n doubles, the
 * window at its start.  Returns 1 if the bracket held.
 */
static int bracket_step(const double *e, ptrdiff_t n, ptrdiff_t d,
                        const first_pass_out *fp, double *buf,
                        search_state *st)
{
    const double lo = fp->lo, hi = fp->hi;
    const ptrdiff_t ng = (ptrdiff_t)fp->c_g, nm = (ptrdiff_t)fp->c_m;
    const double sigma = (fp->s_l + fp->s_m) / hi;
    double a, b;
    ptrdiff_t i, len = 0;
    st->src = buf;
    st->dst = buf + n;
    if (sigma >= (double)(d - ng)) {
        /* hi <= tau*: M and L are uncapped, the rank is in G */
        a = hi;
        b = INFINITY;
        st->ncap = 0;
        st->tref = hi;
        st->tsum = sigma;
    } else if (!(lo > 0.0) || fp->s_l / lo >= (double)(d - ng - nm)) {
        /* lo <= tau* < hi: G is capped, L uncapped, the rank is in M (if
         * lo underflowed to 0, nothing is known to be uncapped) */
        st->len = fp->nwin;
        st->ncap = ng;
        st->tref = lo > 0.0 ? lo : 0.0;
        st->tsum = lo > 0.0 ? fp->s_l / lo : 0.0;
        return 1;
    } else {
        /* tau* < lo: G and M are capped, the rank is in L */
        a = 0.0;
        b = lo;
        st->ncap = ng + nm;
        st->tref = 0.0;
        st->tsum = 0.0;
    }
    /* the window: the positive entries in (a, b] (branch-free: about half
     * of the entries are in it) */
    for (i = 0; i < n; i++) {
        const double v = e[i];
        buf[len] = v;
        len += (v > a) & (v <= b);
    }
    st->len = len;
    return 0;
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

/*
 * Ties with the threshold, settled one way (opf_cap_ex with a hint).  The
 * search is exact up to the rounding of its sums, so a group of equal
 * weights whose uncapped value would be the cap to within that rounding
 * may come out capped on one search path and uncapped (then clamped at
 * the cap) on another; both are the projection to rounding, but the shift
 * c, and so every other weight, rounds differently.  The experts' weights
 * meet such ties all the time -- entries capped at the last trial that
 * lose nothing stay exactly at the cap -- and their search path depends on
 * the bracket the caller keeps from the last trial (state_dense.c), which a
 * copy of the learner does not carry (issue 35, item 7).  So with a hint
 * the largest uncapped group is capped whenever its uncapped value is
 * within OPF_CAP_TIE_ULPS (n + 1) ulps of the cap -- sum / emax <= (d -
 * ncap)(1 + tol), the search's own test at emax with a margin above its
 * rounding -- on every path, which then ends with the same capped set and
 * the same sums: the answer is a function of the input alone.  The weights
 * move by at most that tolerance (relative).  Returns 1 if the group
 * joined the capped set (st: its new ncap and tref; the caller sums
 * again), 0 if the set stands.
 */
#define OPF_CAP_TIE_ULPS 4.0

static int settle_tie(const double *ew, ptrdiff_t n, ptrdiff_t d,
                      double emax, double sum, search_state *st)
{
    const double tol = OPF_CAP_TIE_ULPS * (double)(n + 1) * DBL_EPSILON;
    double next = 0.0;
    ptrdiff_t i, cnt = 0;
    if (!(sum / emax <= (double)(d - st->ncap) * (1.0 + tol)))
        return 0;
    for (i = 0; i < n; i++) {
        const double e = ew[i];
        cnt += e == emax;
        next = e < emax && e > next ? e : next;
    }
    /* fewer than d capped, and some positive weight left uncapped */
    if (st->ncap + cnt >= d || !(next > 0.0))
        return 0;
    st->ncap += cnt;
    st->tref = next;
    return 1;
}

OPF_MULTIVERSION
ptrdiff_t opf_cap_ex(const double *x, ptrdiff_t n, ptrdiff_t d, int log_domain,
                     double *out, double *out_lin, double *work,
                     ptrdiff_t *n_raised, opf_cap_hint *hint, int level)
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
            OPF_MAX_INTO(m, v);
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
        first_pass_out fp;
        const double *g = hint && isfinite(hint->xmax) ? hint->step : NULL;
        if (out_lin)
            ew = out_lin;
        fp.lo = 1.0; /* no bracket */
        fp.hi = 0.0;
        if (hint && hint->lo <= hint->hi && isfinite(hint->lo)
            && isfinite(hint->hi)) {
            fp.lo = exp(hint->lo - top);
            fp.hi = exp(hint->hi - top);
        }
        /* exp(-inf) = 0; with a step, x is y = x - eta g from here on */
        first_pass(x, g, g ? hint->eta : 0.0, n, top, out, ew, buf, &fp,
                   level);
        if (g) {
            x = out;
            hint->ymin = fp.ymin;
        }
        if (fp.lo <= fp.hi) {
            hint->bracketed = bracket_step(ew, n, d, &fp, buf, &st);
        } else {
            j = 0;
            for (i = 0; i < n; i++) {
                buf[j] = ew[i]; /* branch-free: kept if positive */
                j += ew[i] > 0.0;
            }
            fresh_search(&st, buf, j, buf + n);
        }
        search(&st, d, 0);
        for (;;) {
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
                OPF_MAX_INTO(umu, vu);
                OPF_MAX_INTO(emax, eu);
                sum += eu;
            }
            if (hint && emax > exp(-SAFE_RANGE)
                && settle_tie(ew, n, d, emax, sum, &st))
                continue; /* a tie joined the capped set: sum again */
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
                    double lost = 0.0;
                    OPF_SIMD_WITH(reduction(max:lost))
                    for (i = 0; i < n; i++) {
                        const double e = ew[i];
                        const double v = dmin(x[i] + c, cap_log);
                        const double el = dmin(e * scale, cap_lin);
                        const int capped = e > tref;
                        out[i] = capped ? cap_log : v;
                        out_lin[i] = capped ? cap_lin : el;
                        /* e_i subnormal or 0 (bits lost relative to the
                         * bound) but a normal weight exp(v) */
                        OPF_MAX_INTO(lost, e < 0x1p-1022 && v > -708.0 ? 1.0 : 0.0);
                    }
                    if (lost > 0.0) {
                        /* Only when the uncapped mass is far below the
                         * largest entry (eta of hundreds): take those
                         * weights from their log-weights. */
                        for (i = 0; i < n; i++)
                            if (ew[i] < 0x1p-1022 && out[i] > -708.0)
                                out_lin[i] = exp(out[i]);
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
            break;
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

/* After opf_cap_ex: Clang rejects a call that precedes the definition of a
 * multiversioned (target_clones) function. */
ptrdiff_t opf_cap(const double *x, ptrdiff_t n, ptrdiff_t d, int log_domain,
                  double *out, double *out_lin, double *work,
                  ptrdiff_t *n_raised)
{
    return opf_cap_ex(x, n, d, log_domain, out, out_lin, work, n_raised, NULL,
                      -1);
}

/* Capping with multiplicities: the clustered state's groups (cap.h). */
ptrdiff_t opf_cap_groups(const double *v, const double *mult, ptrdiff_t g,
                         ptrdiff_t d, double *out)
{
    double total = 0.0, ncap = 0.0;
    ptrdiff_t r, i;
    for (i = 0; i < g; i++)
        total += mult[i];
    if (d < 1 || g < 1 || (double)d > total)
        return OPF_EINVAL;
    const double cap = -log((double)d);
    for (r = 0; r < g; r++) {
        /* groups r.. uncapped: shift so that their mass is 1 - ncap/d.
         * Beyond |top| > OPF_CAP_SHIFT_AT the new values are formed
         * relative to top, level = top + shift and v[i] - top: |top| can
         * be 2^60 (the floor, or the shift by v_d of
         * opf_cl_capped_weights), where v[i] + shift carries an error of
         * ulp(top) in the log-weight (at 2^54 a weight off by e^2: W's
         * trace was not 1 and the sampler refused it). */
        const double top = v[r];
        double sum = 0.0;
        for (i = r; i < g; i++)
            sum += mult[i] * exp(v[i] - top);
        const double lmass = log(((double)d - ncap) / (double)d);
        const double shift = lmass - (top + log(sum));
        const int relative = fabs(top) > OPF_CAP_SHIFT_AT;
        const double level = relative ? lmass - log(sum) : top + shift;
        /* (exactly, capping group r is needed only if fewer than d entries
         * are then capped; with rounding it may look needed when it would
         * make d or more: then it is at the cap to rounding, and clamped) */
        if (level <= cap || r == g - 1 || ncap + mult[r] >= (double)d) {
            for (i = 0; i < r; i++)
                out[i] = cap;
            for (i = r; i < g; i++)
                out[i] = fmin(relative ? (v[i] - top) + level : v[i] + shift, cap);
            return r;
        }
        ncap += mult[r];
    }
    return OPF_EINVAL; /* not reached */
}
