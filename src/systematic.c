/*
 * systematic.c -- Madow's systematic sampling of a d-subset with inclusion
 * probabilities exactly pi_i = d w_i / |w|.
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
                          double u, ptrdiff_t *chosen)
{
    double total = 0.0, scale, C = 0.0, t = u;
    ptrdiff_t i, cnt = 0, last = -1;

    if (n < 1 || d < 1 || d > n || !(u >= 0.0 && u < 1.0))
        return OPF_EINVAL;
    for (i = 0; i < n; i++) {
        total += w[i];
        if (w[i] > 0.0)
            last = i;
    }
    if (!(total > 0.0))
        return OPF_EINVAL;
    scale = (double)d / total;

    /* The boundary after the last positive weight is d by definition, so
     * u + d - 1 < d is always hit however the partial sums round, and zero
     * weights (empty intervals) are never hit.  Branch-free: the hits are
     * as unpredictable as the draw. */
    for (i = 0; i < last && cnt < d; i++) {
        int hit;
        C += w[i] * scale;
        hit = (t < C) & (w[i] > 0.0);
        chosen[cnt] = i;
        cnt += hit;
        t += (double)hit;
    }
    if (cnt < d && last >= 0) {
        chosen[cnt] = last;  /* C = d > t: the last interval is hit */
        cnt++;
    }
    if (cnt < d) {
        /* Only reachable if rounding made some pi_i exceed 1 and two
         * points fell into one interval: complete the subset with the
         * largest weights not yet drawn, so the result is always valid. */
        while (cnt < d) {
            ptrdiff_t best = -1, k = 0, j;
            for (j = 0; j < n; j++) {
                while (k < cnt && chosen[k] < j)
                    k++;
                if (k < cnt && chosen[k] == j)
                    continue;
                if (best < 0 || w[j] > w[best])
                    best = j;
            }
            /* keep chosen sorted */
            for (k = cnt; k > 0 && chosen[k - 1] > best; k--)
                chosen[k] = chosen[k - 1];
            chosen[k] = best;
            cnt++;
        }
    }
    return OPF_OK;
}
