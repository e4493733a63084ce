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
 * The master (OPF_MASTER_LEN doubles, also used by OnlineKernelPCA over its
 * learner and Follow the Leader, kernel_pca.c):
 *   m[0]  L_B - L_A, the difference of the learners' cumulative expected
 *         losses (summed as differences);
 *   m[1]  the sum of max(h_A, h_B) (the scale of a tie);
 *   m[2]  Delta^M, its cumulative mixability gap;
 *   m[3]  its weight of A for the next trial.
 *
 * The limit's state (caller-owned, pickled with the learner),
 * OPF_LIMIT_LEN(n, k): the master in lim[0..4), then
 *   lim[4]          c, the size of B's tie group when it is stored (0:
 *                   the tie group is the whole flat space);
 *   lim[5]          r <= k, the explicit directions of B below its flat
 *                   level (the level is 0: values are kept relative to
 *                   it);
 *   lim[6..6+k+1)   their values (ascending, all below the level);
 *   lim[6+k+1..)    their directions, r rows of length n, then the c rows
 *                   of the tie group ((k + 1) x n reserved).
 *
 * B's parameter at a trial is cap_inf(M) of its state M before flattening
 * (docs/adaptive_rates.md): 1/d on the a directions strictly above the
 * d-th largest eigenvalue of M, the remaining (d - a) / d shared equally
 * by the tie group at it.  Its state keeps flat_d(M), the r below
 * directions; when the d-th eigenvalue of M was tied by c >= 2 of the
 * directions of the last update (a = d - 1 above them), those c rows are
 * kept for the trial that follows (the next update sees them at the
 * level, as flat_d does).
 */
#include <stddef.h>

#include "common.h"

#define OPF_MASTER_LEN 4
#define OPF_LIMIT_HEAD 6
#define OPF_LIMIT_LEN(n, k) (OPF_LIMIT_HEAD + ((k) + 1) * (1 + (n)))

/* The master's initial state: both losses 0, weight 1/2. */
void opf_master_init(double *m);

/* The master's weight of A for the coming trial. */
double opf_master_weight(const double *m);

/* The master's step after a trial with expected losses h_a, h_b; returns
 * its expected loss p h_a + (1 - p) h_b. */
double opf_master_commit(double *m, double h_a, double h_b);

/* The limit's initial state (no direction, no tie group, the master's
 * initial). */
void opf_limit_init(double *lim, ptrdiff_t n, ptrdiff_t k);

/* Workspace of a trial: doubles and ints. */
size_t opf_limit_work_len(ptrdiff_t n, ptrdiff_t k);
size_t opf_limit_iwork_len(ptrdiff_t k);

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
