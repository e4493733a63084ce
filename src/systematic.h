#ifndef OPF_SYSTEMATIC_H
#define OPF_SYSTEMATIC_H

#include <stddef.h>

#include "common.h"

/*
 * Systematic (Madow) sampling of a d-subset of {0..n-1} with inclusion
 * probabilities exactly pi_i = d * w_i / sum(w), given w >= 0 with
 * max(w) <= sum(w)/d and one uniform number u in [0, 1).
 *
 * With C_i = pi_0 + ... + pi_i (summed in the order systematic.c gives,
 * and forced to d at the last positive weight), index i is drawn when one
 * of the points u, u+1, ..., u+d-1 lies in (C_{i-1}, C_i].  Each interval is at most 1 long, so no index is drawn
 * twice; zero weights are never drawn.  The d indices are written to
 * chosen in increasing order.
 *
 * Cost: O(n); work is unused (may be NULL).  Returns 0, or OPF_EINVAL
 * (common.h).
 */
int opf_sample_systematic(const double *w, ptrdiff_t n, ptrdiff_t d,
                          double u, ptrdiff_t *chosen, double *work);

/*
 * The same draw, but only the sum of v over the drawn indices (what a
 * learner's realized loss needs), without writing the list, and (wv not
 * NULL) sum_i w_i v_i, the expected loss, from the same pass.  scratch: d
 * indices, used only when rounding forces the draw with the list.
 */
int opf_sample_systematic_sum(const double *w, ptrdiff_t n, ptrdiff_t d,
                              double u, const double *v, double *vsum,
                              double *wv, ptrdiff_t *scratch);

#endif
