#ifndef OPF_LIMIT_H
#define OPF_LIMIT_H

/*
 * limit.h -- eta = "auto" of OnlinePCA / OnlineAdaptivePCA: a master
 * AdaHedge over two learners (limit.c, docs/adaptive_rates.md):
 *
 *   A  the learner itself at its AdaHedge rate (the trial of learner.c);
 *   B  the limit eta -> infinity of the capped update, W = P / d with P the
 *      projection onto the top-d eigenspace of the state M (loss units),
 *      M <- flat_d(M) - x x^T: k explicit directions below one flat level.
 *
 * Each trial plays A with the master's weight p and B otherwise (the
 * trial's one uniform decides, then is rescaled for the drawn learner's own
 * draw); the expected loss is p h_A + (1 - p) h_B and the regret against
 * either learner is at most 2 Delta^M, the master's cumulative mixability
 * gap (AdaHedge with log 2 in place of D).
 *
 * State (caller-owned, pickled with the learner), OPF_LIMIT_LEN(n, k):
 *   lim[0]          L_B - L_A, the difference of the learners'
 *                   cumulative expected losses (summed as differences);
 *   lim[1]          the sum of max(h_A, h_B) (the scale of a tie);
 *   lim[2]          Delta^M;
 *   lim[3]          the flat level b of B (0: the values are kept relative
 *                   to it);
 *   lim[4]          r <= k, the explicit directions of B;
 *   lim[5]          the master's weight of A for the next trial;
 *   lim[6..6+k)     their values (ascending, all below b);
 *   lim[6+k..)      their directions, r rows of length n (k x n reserved).
 */
#include <stddef.h>

#include "common.h"

#define OPF_LIMIT_HEAD 6
#define OPF_LIMIT_LEN(n, k) (OPF_LIMIT_HEAD + (k) + (k) * (n))

/* The initial state (no direction, b = 0, both losses 0, weight 1/2). */
void opf_limit_init(double *lim, ptrdiff_t n, ptrdiff_t k);

/* Workspace of a trial: doubles and ints. */
size_t opf_limit_work_len(ptrdiff_t n, ptrdiff_t k);
size_t opf_limit_iwork_len(ptrdiff_t k);

/* The master's weight of A (the rate learner) for the coming trial. */
double opf_limit_weight(const double *lim);

/*
 * B's trial on x, computed into the workspace (the state is unchanged):
 * its expected loss h_B and the realized loss of its draw with uniform u.
 * Returns OPF_OK or a LAPACK failure.
 */
int opf_limit_prepare(const double *lim, ptrdiff_t n, ptrdiff_t k,
                      const double *x, double u, double *work, int *iwork,
                      const opf_lapack *fns, double *h, double *real);

/* Commit what opf_limit_prepare computed, and the master's step with the
 * expected losses h_a, h_b of the trial; returns the master's expected
 * loss p h_a + (1 - p) h_b. */
double opf_limit_commit(double *lim, ptrdiff_t n, ptrdiff_t k,
                        const double *work, double h_a, double h_b);

#endif
