#ifndef OPF_DECOMPOSE_H
#define OPF_DECOMPOSE_H

#include <stddef.h>

#include "common.h"

/*
 * Mixture decomposition (Warmuth & Kuzmin 2008, Algorithm 2) of a vector
 * w >= 0 with max(w) <= sum(w)/d into at most n d-corners:
 * w = sum_j coef_j * corner_j / d, sum_j coef_j = sum(w).
 *
 * Two modes:
 *  - corners != NULL: every corner is written, corner j as d indices at
 *    corners[j*d .. j*d+d), its coefficient at coef[j]; coef and corners
 *    hold `capacity` entries (capacity*d indices).  Returns m, the number
 *    of corners (m <= n), or OPF_ENOSPACE if m would exceed capacity.
 *  - corners == NULL: stop at the first corner j whose cumulative
 *    coefficient exceeds select * sum(w) (select in [0, 1)), write its d
 *    indices to chosen and return j.  This draws a corner with probability
 *    coef_j / sum(w) from one uniform number without storing the mixture.
 * Indices within a corner are in no particular order.
 *
 * work: n doubles; iwork: 3n indices.  Returns OPF_ENOTCAPPED (common.h) when
 * the input has more than d entries at the cap, fewer than d positive
 * entries, or a zero sum, OPF_EINVAL on bad sizes.
 */
ptrdiff_t opf_decompose(const double *w, ptrdiff_t n, ptrdiff_t d,
                        double select, ptrdiff_t capacity,
                        double *coef, ptrdiff_t *corners,
                        ptrdiff_t *chosen, double *work, ptrdiff_t *iwork);

#endif
