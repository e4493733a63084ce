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
 * Cost: two passes over w, no workspace.
 */
#include "cap.h"
#include "systematic.h"

int opf_sample_systematic(const double *w, ptrdiff_t n, ptrdiff_t d,
                          double u, ptrdiff_t *chosen, double *work)
{
    double total = 0.0, scale, part[4] = {0.0, 0.0, 0.0, 0.0}, off[4];
    double *C = work;
    ptrdiff_t i, k, cnt = 0, last = -1, len, prev;

    if (n < 1 || d < 1 || d > n || !(u >= 0.0 && u < 1.0))
        return OPF_EINVAL;

    /* C_i = d (w_0 + ... + w_i) / |w|, as four interleaved running sums
     * over quarters of w (one add chain would cost its latency per
     * entry); the quarters' offsets come from their totals. */
    len = (n + 3) / 4;
    for (i = 0; i < len; i++)
        for (k = 0; k < 4; k++)
            if (k * len + i < n)
                part[k] += w[k * len + i];
    total = (part[0] + part[1]) + (part[2] + part[3]);
    if (!(total > 0.0))
        return OPF_EINVAL;
    scale = (double)d / total;
    off[0] = 0.0;
    for (k = 1; k < 4; k++)
        off[k] = off[k - 1] + part[k - 1];
    for (k = 0; k < 4; k++)
        off[k] *= scale;
    for (i = 0; i < len; i++)
        for (k = 0; k < 4; k++)
            if (k * len + i < n) {
                off[k] += w[k * len + i] * scale;
                C[k * len + i] = off[k];
            }
    for (i = n - 1; i >= 0; i--)
        if (w[i] > 0.0) {
            last = i;
            break;
        }
    /* The boundary after the last positive weight is d by definition, so
     * u + d - 1 < d is always hit however the sums round. */
    C[last] = (double)d;

    /* Index i is hit when a point u + j lies in (C_{i-1}, C_i]: the count
     * of points <= C, floor(C - u) + 1, goes up (C - u + 1 > 0, so the
     * conversion truncates like floor).  Zero weights are never hit.  No
     * branch on the (unpredictable) hits. */
    prev = 0;
    for (i = 0; i <= last && cnt < d; i++) {
        ptrdiff_t c = (ptrdiff_t)(C[i] - u + 1.0);
        int hit = (c > prev) & (w[i] > 0.0);
        chosen[cnt] = i;
        cnt += hit;
        prev = hit ? c : prev;
    }
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
