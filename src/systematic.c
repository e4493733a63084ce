/*
 * systematic.c -- Madow's systematic sampling of a d-subset with inclusion
 * probabilities exactly pi_i = d w_i / |w|.
 *
 * The capped learners only need a random corner whose expected value is
 * the parameter w (their losses are linear), i.e. inclusion probabilities
 * d w_i; the mixture of Algorithm 2 is one way to get them, this is an
 * O(n) one.  Lay the intervals (C_{i-1}, C_i] of lengths pi_i end to end on
 * (0, d] and take the indices hit by the points u, u+1, ..., u+d-1: each
 * interval is at most 1 long (w is capped), so each index is hit at most
 * once and exactly d are hit.  (The reference takes the intervals closed
 * on the left; the two differ only when a point falls exactly on a
 * boundary, an event of probability zero.)
 *
 * The running sum, exactly: with a_i = w_i * (d / |w|), blocks of four from
 * index 0 (the last one padded with zeros), and within a block the
 * Brent-Kung partial sums
 *
 *     p0 = a0,  p1 = a0 + a1,  p2 = p1 + a2,  p3 = p1 + (a2 + a3),
 *
 * C = c + p_j, where c is the total of the blocks before (c <- c + p3).
 * This order of the additions is part of the definition: the scalar and
 * the vector code below compute the same C to the bit, so they draw the
 * same sample.  It also keeps C monotone (rounding is monotone, and p2 <= p3
 * because a2 <= a2 + a3), and a zero weight adds exactly nothing, so zero
 * weights are never drawn.  F(C) = floor(C - u + 1) counts the points
 * u + j <= C; index i is drawn when F rises at i, counted from F(0) (for
 * u = 0 the point 0 lies at C = 0, in no interval, and the point d at the
 * end of the last one: the same as u = 1).  C is set to d at the last
 * positive weight, so that exactly d points fall in (0, d] however the sum
 * rounds.
 *
 * Cost: one pass for |w|, one sweep.  The list-free variant (the sum of v
 * over the sample, and sum w_i v_i on the way) runs four entries at a time
 * with the prefix sums in registers (OPF_VECTOR); it does not force C at
 * the end but checks that F rose exactly d times by one: otherwise (a
 * point within rounding of C's end or of a boundary) it redoes the draw
 * with the list.
 */
#include <math.h>
#include <string.h>

#include "cap.h"
#include "simd.h"
#include "systematic.h"

/* |w| in a fixed order (the same for every caller in the process). */
OPF_MULTIVERSION
static double total_of(const double *w, ptrdiff_t n)
{
    double sum = 0.0;
    ptrdiff_t i;
    OPF_SIMD_WITH(reduction(+:sum))
    for (i = 0; i < n; i++)
        sum += w[i];
    return sum;
}

/* Checks the arguments; the scale d / |w| and u - 1. */
static int setup(const double *w, ptrdiff_t n, ptrdiff_t d, double u,
                 double *scale, double *um1)
{
    double total;
    if (n < 1 || d < 1 || d > n || !(u >= 0.0 && u < 1.0))
        return OPF_EINVAL;
    total = total_of(w, n);
    if (!(total > 0.0 && total < INFINITY))
        return OPF_EINVAL;
    *scale = (double)d / total;
    *um1 = u - 1.0;
    return OPF_OK;
}

/* The sweep with the list: index i is drawn when F(C_i) exceeds the
 * largest F so far (C is forced to d at `last`).  Returns the number drawn
 * (d unless rounding put two points in one interval). */
static ptrdiff_t sweep(const double *w, ptrdiff_t n, ptrdiff_t last,
                       ptrdiff_t d, double scale, double um1,
                       ptrdiff_t *chosen)
{
    double c = 0.0;
    ptrdiff_t i, j, cnt = 0, prev = (ptrdiff_t)(0.0 - um1);
    for (i = 0; i <= last && cnt < d; i += 4) {
        double a[4] = {0.0, 0.0, 0.0, 0.0}, p[4];
        const ptrdiff_t m = n - i < 4 ? n - i : 4;
        for (j = 0; j < m; j++)
            a[j] = w[i + j] * scale;
        p[0] = a[0];
        p[1] = a[0] + a[1];
        p[2] = p[1] + a[2];
        p[3] = p[1] + (a[2] + a[3]);
        /* (not beyond last: after it C would fall back from the forced d
         * to the sum, which may lie above d) */
        for (j = 0; j < m && i + j <= last && cnt < d; j++) {
            const double C = i + j == last ? (double)d : c + p[j];
            const ptrdiff_t f = (ptrdiff_t)(C - um1); /* C - um1 > 0 */
            chosen[cnt] = i + j; /* kept if it is a hit */
            cnt += f > prev;
            prev = f > prev ? f : prev;
        }
        c = c + p[3];
    }
    return cnt;
}

int opf_sample_systematic(const double *w, ptrdiff_t n, ptrdiff_t d,
                          double u, ptrdiff_t *chosen, double *work)
{
    double scale, um1;
    ptrdiff_t i, cnt, last = -1;
    int st = setup(w, n, d, u, &scale, &um1);
    (void)work; /* no longer needed; kept for the interface */
    if (st != OPF_OK)
        return st;
    for (i = n - 1; i >= 0; i--)
        if (w[i] > 0.0) {
            last = i;
            break;
        }
    cnt = sweep(w, n, last, d, scale, um1, chosen);
    /* Only through rounding (two points in one interval of length ~1):
     * complete the subset with the largest weights not yet drawn, so the
     * result is always a valid d-subset. */
    while (cnt < d) {
        ptrdiff_t best = -1, j, q = 0;
        for (j = 0; j < n; j++) {
            while (q < cnt && chosen[q] < j)
                q++;
            if (q < cnt && chosen[q] == j)
                continue;
            if (best < 0 || w[j] > w[best])
                best = j;
        }
        for (q = cnt; q > 0 && chosen[q - 1] > best; q--)
            chosen[q] = chosen[q - 1];
        chosen[q] = best;
        cnt++;
    }
    return OPF_OK;
}

#ifdef OPF_VECTOR
/*
 * The sum of v over the sample and sum w_i v_i, four entries at a time.
 * Returns 1 if F rose exactly d times by one (then the sample is the one
 * the list would give), 0 if the list is needed.  F as 32-bit integers:
 * the caller ensures d < 2^30.
 */
#define OPF_SYS_BLOCK(wi, vi)                                                \
    do {                                                                     \
        const opf_v4d a_ = (wi) * scale;                                     \
        const opf_v4d b_ = a_ + __builtin_shufflevector(a_, zero, 4, 0, 4, 2); \
        const opf_v4d p_ = b_ + __builtin_shufflevector(b_, zero, 4, 4, 1, 1); \
        const opf_v4d C_ = carry + p_;                                       \
        const opf_v4i f_ = __builtin_convertvector(C_ - um1, opf_v4i);       \
        const opf_v4i rise_ = f_ != __builtin_shufflevector(fprev, f_, 3, 4, 5, 6); \
        const opf_v4l m_ = __builtin_convertvector(rise_, opf_v4l);          \
        carry = carry + __builtin_shufflevector(p_, p_, 3, 3, 3, 3);         \
        fprev = f_;                                                          \
        rises -= m_;                                                         \
        acc_v += (opf_v4d)((opf_v4l)(vi) & m_);                              \
        acc_wv += (wi) * (vi);                                               \
    } while (0)

/* how far ahead to ask for v: the hardware prefetchers of some machines
 * fall far behind this pass (measured: 233 -> 122 us at n = 1e5 with the
 * rows of v arriving from memory) */
#define OPF_SYS_AHEAD 1024
OPF_MULTIVERSION
static int sweep_sum(const double *w, ptrdiff_t n, ptrdiff_t d,
                     double scale_s, double um1_s, const double *v,
                     double *vsum, double *wv)
{
    const opf_v4d zero = {0.0, 0.0, 0.0, 0.0};
    const opf_v4d scale = zero + scale_s, um1 = zero + um1_s;
    const int f0 = (int)(0.0 - um1_s);
    opf_v4d carry = zero, acc_v = zero, acc_wv = zero;
    opf_v4l rises = {0, 0, 0, 0};
    opf_v4i fprev = {f0, f0, f0, f0};
    ptrdiff_t i;
    for (i = 0; i + 4 <= n; i += 4) {
        opf_v4d wi, vi;
        __builtin_prefetch(v + i + OPF_SYS_AHEAD);
        memcpy(&wi, w + i, sizeof wi);
        memcpy(&vi, v + i, sizeof vi);
        OPF_SYS_BLOCK(wi, vi);
    }
    if (i < n) { /* the last block, padded with zeros */
        opf_v4d wi = zero, vi = zero;
        memcpy(&wi, w + i, (size_t)(n - i) * sizeof(double));
        memcpy(&vi, v + i, (size_t)(n - i) * sizeof(double));
        OPF_SYS_BLOCK(wi, vi);
    }
    *vsum = (acc_v[0] + acc_v[1]) + (acc_v[2] + acc_v[3]);
    if (wv)
        *wv = (acc_wv[0] + acc_wv[1]) + (acc_wv[2] + acc_wv[3]);
    return (rises[0] + rises[1]) + (rises[2] + rises[3]) == d
           && (ptrdiff_t)fprev[3] - f0 == d;
}
#undef OPF_SYS_BLOCK
#endif

int opf_sample_systematic_sum(const double *w, ptrdiff_t n, ptrdiff_t d,
                              double u, const double *v, double *vsum,
                              double *wv, ptrdiff_t *scratch)
{
    ptrdiff_t i;
    double sum = 0.0, scale, um1;
    int st = setup(w, n, d, u, &scale, &um1);
    if (st != OPF_OK)
        return st;
#ifdef OPF_VECTOR
    if (d < ((ptrdiff_t)1 << 30)
        && sweep_sum(w, n, d, scale, um1, v, vsum, wv))
        return OPF_OK;
#endif
    /* the sample as a list (completed if need be), then the sums */
    st = opf_sample_systematic(w, n, d, u, scratch, NULL);
    if (st != OPF_OK)
        return st;
    for (i = 0; i < d; i++)
        sum += v[scratch[i]];
    *vsum = sum;
    if (wv) {
        sum = 0.0;
        for (i = 0; i < n; i++)
            sum += w[i] * v[i];
        *wv = sum;
    }
    return OPF_OK;
}
