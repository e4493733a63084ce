/*
 * systematic.c -- Madow's systematic sampling of a d-subset with inclusion
 * probabilities exactly pi_i = d w_i / |w|.
 *
 * (Intervals are taken half-open on the left, (C_{i-1}, C_i]; the reference
 * uses [C_{i-1}, C_i).  The two differ only when a point u + j falls exactly
 * on a boundary, an event of probability zero.)
 *
 * The capped learners only need a random corner whose expected value is
 * the parameter w (their losses are linear), i.e. inclusion probabilities
 * d w_i; the mixture of Algorithm 2 is one way to get them, this is an
 * O(n) one.  Lay the intervals [C_{i-1}, C_i) of lengths pi_i end to end on
 * [0, d) and take the indices hit by u, u+1, ..., u+d-1: each interval is
 * at most 1 long (w is capped), so each index is hit at most once and
 * exactly d are hit.
 *
 * Cost: two passes over w (the totals of its quarters, then the sweep);
 * the workspace argument is unused.
 */
#include "cap.h"
#include "systematic.h"
#include "simd.h"

/*
 * The sequential sweep: C_i as one running sum from the start; index i is
 * hit when a point u + j lies in (C_{i-1}, C_i]: the count of points <= C,
 * floor(C - u) + 1, exceeds the largest count so far (C - u + 1 > 0, so the
 * conversion truncates like floor).  Zero weights are never hit.  No
 * branch on the (unpredictable) hits.  Returns the number of hits.
 */
static ptrdiff_t sweep(const double *w, ptrdiff_t last, ptrdiff_t d,
                       double u, double scale, ptrdiff_t *chosen)
{
    double c_run = 0.0;
    ptrdiff_t i, cnt = 0, prev = 0;
    for (i = 0; i <= last && cnt < d; i++) {
        ptrdiff_t c;
        int hit;
        c_run += w[i] * scale;
        c = (ptrdiff_t)((i == last ? (double)d : c_run) - u + 1.0);
        hit = (c > prev) & (w[i] > 0.0);
        chosen[cnt] = i;
        cnt += hit;
        prev = c > prev ? c : prev;
    }
    return cnt;
}

/* The sample (chosen != NULL), or only the sum of v over it. */
OPF_MULTIVERSION
static int systematic(const double *w, ptrdiff_t n, ptrdiff_t d, double u,
                      ptrdiff_t *chosen, const double *v, double *vsum)
{
    double total, scale, part[4], off[4], vs[4] = {0.0, 0.0, 0.0, 0.0};
    ptrdiff_t i, k, cnt = 0, last = -1, q, len3;
    ptrdiff_t start[5], prev[4], pos[4];
    int ok = 1;

    if (n < 1 || d < 1 || d > n || !(u >= 0.0 && u < 1.0))
        return OPF_EINVAL;

    /* The sweep is split into four quarters of w that run interleaved
     * (one add chain would cost its latency per entry).  Quarters 0..2 have
     * q = floor(n/4) entries, quarter 3 the other n - 3q.  Their offsets
     * come from their totals; the hits of quarter k go to chosen from
     * position start[k] = (number of points <= its offset).  If rounding
     * made the running sum of a quarter end on the other side of a point
     * than the next quarter's offset, the counts disagree with the
     * positions, and the whole sample is redone by the sequential sweep
     * (the same intervals, computed as one sum). */
    q = n / 4;
    len3 = n - 3 * q;
    for (k = 0; k < 4; k++) {
        const double *wk = w + k * q;
        const ptrdiff_t len = k < 3 ? q : len3;
        double sum = 0.0;
        OPF_SIMD_WITH(reduction(+:sum))
        for (i = 0; i < len; i++)
            sum += wk[i];
        part[k] = sum;
    }
    total = (part[0] + part[1]) + (part[2] + part[3]);
    if (!(total > 0.0))
        return OPF_EINVAL;
    scale = (double)d / total;
    for (i = n - 1; i >= 0; i--)
        if (w[i] > 0.0) {
            last = i;
            break;
        }
    /* The boundary after the last positive weight is d by definition, so
     * u + d - 1 < d is always hit however the sums round. */
    off[0] = 0.0;
    for (k = 1; k < 4; k++)
        off[k] = off[k - 1] + part[k - 1];
    start[0] = 0;
    for (k = 0; k < 4; k++) {
        off[k] *= scale;
        if (k > 0) {
            const ptrdiff_t c = (ptrdiff_t)(off[k] - u + 1.0);
            start[k] = c < 0 ? 0 : (c > d ? d : c);
        }
        prev[k] = start[k];
        pos[k] = start[k];
    }
    start[4] = d;
    for (k = 0; k < 4; k++)
        ok &= start[k] <= start[k + 1];
    if (ok) {
        /* Every step stores (no branch on the hits); a quarter whose slots
         * are full stores to `spill` instead, so it never writes into the
         * next quarter's (a rounding surplus is caught below). */
        ptrdiff_t spill;
        /* one quarter's step at index idx: the hit goes to the list or
         * its v to the sum (multiplied, not selected: a select on a load
         * would become a branch) */
#define OPF_SYS_STEP(k, idx, RECORD)                                         \
    do {                                                                     \
        ptrdiff_t c_;                                                        \
        int hit_;                                                            \
        off[k] += w[idx] * scale;                                            \
        c_ = (ptrdiff_t)(((idx) == last ? (double)d : off[k]) - u + 1.0);    \
        hit_ = (c_ > prev[k]) & (w[idx] > 0.0);                              \
        RECORD(k, idx, hit_);                                                \
        pos[k] += hit_;                                                      \
        prev[k] = c_ > prev[k] ? c_ : prev[k];                               \
    } while (0)
#define OPF_SYS_LIST(k, idx, hit)                                            \
    *(pos[k] < start[k + 1] ? chosen + pos[k] : &spill) = (idx)
#define OPF_SYS_SUM(k, idx, hit) vs[k] += (double)(hit) * v[idx]
        if (chosen) {
            for (i = 0; i < q; i++)
                for (k = 0; k < 4; k++)
                    OPF_SYS_STEP(k, k * q + i, OPF_SYS_LIST);
            for (i = 4 * q; i < n; i++)
                OPF_SYS_STEP(3, i, OPF_SYS_LIST);
        } else {
            for (i = 0; i < q; i++)
                for (k = 0; k < 4; k++)
                    OPF_SYS_STEP(k, k * q + i, OPF_SYS_SUM);
            for (i = 4 * q; i < n; i++)
                OPF_SYS_STEP(3, i, OPF_SYS_SUM);
        }
#undef OPF_SYS_STEP
#undef OPF_SYS_LIST
#undef OPF_SYS_SUM
        for (k = 0; k < 4; k++)
            ok &= pos[k] == start[k + 1];
        cnt = d;
        if (!chosen)
            *vsum = (vs[0] + vs[1]) + (vs[2] + vs[3]);
    }
    if (!chosen)
        return ok ? OPF_OK : OPF_ENOTCAPPED; /* caller redoes it with a list */
    if (!ok)
        cnt = sweep(w, last, d, u, scale, chosen);
    if (cnt < d) {
        /* Only reachable through rounding (two points in one interval of
         * length ~1, or u = 0 on an empty first interval): complete the
         * subset with the largest weights not yet drawn, so the result is
         * always a valid d-subset. */
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
    }
    return OPF_OK;
}

int opf_sample_systematic(const double *w, ptrdiff_t n, ptrdiff_t d,
                          double u, ptrdiff_t *chosen, double *work)
{
    (void)work; /* no longer needed; kept for the interface */
    return systematic(w, n, d, u, chosen, NULL, NULL);
}

int opf_sample_systematic_sum(const double *w, ptrdiff_t n, ptrdiff_t d,
                              double u, const double *v, double *vsum,
                              ptrdiff_t *scratch)
{
    ptrdiff_t i;
    double sum = 0.0;
    int st = systematic(w, n, d, u, NULL, v, vsum);
    if (st != OPF_ENOTCAPPED)
        return st;
    /* rounding moved a point across a quarter's end: the sample as a list
     * (the sequential sweep, completed if need be), then the sum */
    st = systematic(w, n, d, u, scratch, NULL, NULL);
    if (st != OPF_OK)
        return st;
    for (i = 0; i < d; i++)
        sum += v[scratch[i]];
    *vsum = sum;
    return OPF_OK;
}
