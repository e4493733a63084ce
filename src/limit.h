#ifndef OPF_LIMIT_H
#define OPF_LIMIT_H

/*
 * limit.h -- eta = "auto" of OnlinePCA / OnlineAdaptivePCA /
 * CenteredOnlinePCA: a master
 * AdaHedge over three learners (limit.c, docs/adaptive_rates.md):
 *
 *   A  the learner itself at its AdaHedge rate (the trial of learner.c);
 *   B  the limit eta -> infinity of the capped update, W = cap_inf(M) of
 *      its state M (loss units), M <- flat_d(M) - x x^T: k explicit
 *      directions below one flat level;
 *   F  Follow the Leader on a lagged Frequent Directions sketch S of ell
 *      = min(n, max(4k, 24)) directions (opf_leader_ell): W = cap_inf(-S),
 *      then g^2 x x^T joins a buffer; when the buffer holds min(ell,
 *      ceil(t_0 / OPF_LEADER_LAG)) rows (t_0 the rows S absorbed, at least
 *      1), S <- S + the buffered rows, shrunk by its (ell+1)-th eigenvalue
 *      (B is that sketch with ell = k refreshed every trial; ell = n and a
 *      refresh every trial is exact Follow the Leader).
 *
 * Each trial plays A, B or F with the master's weights (the trial's one
 * uniform decides, then is rescaled for the drawn learner's own draw); the
 * expected loss is sum p_i h_i and the regret against each learner is at
 * most 2 Delta^M, the master's cumulative mixability gap (AdaHedge with
 * log 3 in place of D).
 *
 * The two-learner master (OPF_MASTER_LEN doubles, OnlineKernelPCA's over
 * its learner and Follow the Leader, kernel_pca.c):
 *   m[0]  L_B - L_A, the difference of the learners' cumulative expected
 *         losses (summed as differences);
 *   m[1]  the sum of max(h_A, h_B) (the scale of a tie);
 *   m[2]  Delta^M, its cumulative mixability gap;
 *   m[3]  its weight of A for the next trial.
 *
 * The state of eta = "auto" (caller-owned, pickled with the learner),
 * OPF_LIMIT_LEN(n, k) doubles:
 *   [0, 8)          the master over A, B, F: the scale (sum of max_i h_i),
 *                   Delta^M, L_i - L_A (i = A, B, F), the weights of A, B,
 *                   F for the next trial;
 *   then B's sketch, OPF_SKETCH_LEN(n, k) doubles:
 *     [0]           c, the size of B's tie group when it is stored (0: the
 *                   tie group is the whole flat space);
 *     [1]           r <= k, its explicit directions below the flat level
 *                   (the level is 0: values are kept relative to it);
 *     [2]           nb <= cap = OPF_SKETCH_CAP(k), the basis rows in use;
 *     [3, 3+k+1)    the r values (ascending, all below the level);
 *     then          R, (k + 1) x cap: row j holds direction j's
 *                   coordinates in the basis (the r directions, then the c
 *                   of the tie group);
 *     then          the basis, cap x n, orthonormal rows (direction j is
 *                   R[j, :nb] Bb[:nb]);
 *   then F's, OPF_LEADER_LEN(n, ell) doubles:
 *     [0]           0 (no stored tie group);
 *     [1]           r <= ell, the directions of S;
 *     [2]           nbuf < ell, the rows in the buffer;
 *     [3]           t_0, the rows S absorbed (at most OPF_LEADER_LAG ell);
 *     [4, 4+ell)    -sigma_j, S's eigenvalues negated (ascending);
 *     then          U, ell x n: row j the direction of sigma_j (r rows,
 *                   orthonormal);
 *     then          the buffer, ell x n: g x of the trials since S's last
 *                   refresh (nbuf rows).
 *
 * B's parameter at a trial is cap_inf(M) of its state M before flattening
 * (docs/adaptive_rates.md): 1/d on the a directions strictly above the
 * d-th largest eigenvalue of M, the remaining (d - a) / d shared equally
 * by the tie group at it.  Its state keeps flat_d(M), the r below
 * directions; when the d-th eigenvalue of M was tied by c >= 2 of the
 * directions of the last update (a = d - 1 above them), those c rows are
 * kept for the trial that follows (the next update sees them at the
 * level, as flat_d does).  F's parameter is cap_inf(-S) of its sketch
 * at its last refresh (its d-th largest is an explicit value once r > k).
 */
#include <stddef.h>

#include "common.h"

#define OPF_MASTER_LEN 4
#define OPF_MASTER3_LEN 8
#define OPF_SKETCH_CAP(ell) (2 * ((ell) + 1))
#define OPF_SKETCH_LEN(n, ell)                                               \
    (3 + ((ell) + 1) * (1 + OPF_SKETCH_CAP(ell)) + OPF_SKETCH_CAP(ell) * (n))
#define OPF_LEADER_LAG 4
#define OPF_LEADER_LEN(n, ell) (4 + (ell) + 2 * (ell) * (n))
#define OPF_LIMIT_LEN(n, k)                                                  \
    (OPF_MASTER3_LEN + OPF_SKETCH_LEN(n, k)                                  \
     + OPF_LEADER_LEN(n, opf_leader_ell(n, k)))

/* F's sketch size: min(n, max(4k, 24)). */
ptrdiff_t opf_leader_ell(ptrdiff_t n, ptrdiff_t k);

/* The two-learner master's initial state: both losses 0, weight 1/2. */
void opf_master_init(double *m);

/* The two-learner master's weight of A for the coming trial. */
double opf_master_weight(const double *m);

/* The two-learner master's step after a trial with expected losses h_a,
 * h_b; returns its expected loss p h_a + (1 - p) h_b. */
double opf_master_commit(double *m, double h_a, double h_b);

/* The master over A, B, F: initial state (weights 1/3), the weight of
 * learner i (0: A, 1: B, 2: F) for the coming trial, and its step after a
 * trial with expected losses h[3]; returns sum p_i h_i. */
void opf_master3_init(double *mk);
double opf_master3_weight(const double *mk, int i);
double opf_master3_commit(double *mk, const double *h);

/* The initial state of eta = "auto" (no direction in either sketch, the
 * master's initial). */
void opf_limit_init(double *lim, ptrdiff_t n, ptrdiff_t k);

/* 1 if the counts of the state lim (OPF_LIMIT_LEN(n, k) doubles) are
 * within their ranges (a state read back from a pickle), else 0. */
int opf_limit_state_ok(const double *lim, ptrdiff_t n, ptrdiff_t k);

/* Workspace of a trial: doubles and ints; n of those doubles hold the
 * sketches' instance (opf_limit_instance: the learner's y = x - m^{t-1}
 * for CenteredOnlinePCA). */
size_t opf_limit_work_len(ptrdiff_t n, ptrdiff_t k);
size_t opf_limit_iwork_len(ptrdiff_t n, ptrdiff_t k);
double *opf_limit_instance(double *work, ptrdiff_t n, ptrdiff_t k);

/*
 * B's and F's trials on the instance x, computed into the workspace (the
 * state is unchanged): their expected losses h[0] (B), h[1] (F) and the
 * realized losses of their draws with the uniforms ub, uf; their sketches
 * then add g^2 x x^T (g = 1; CenteredOnlinePCA: the square root of eq.
 * (16)'s factor, g = 0: no update).  Returns OPF_OK or a LAPACK failure.
 */
int opf_limit_prepare(const double *lim, ptrdiff_t n, ptrdiff_t k,
                      const double *x, double g, double ub, double uf,
                      double *work, int *iwork, const opf_lapack *fns,
                      double *h, double *real);

/* Commit what opf_limit_prepare computed, and the master's step with the
 * expected losses h[3] of A, B, F; returns the master's expected loss. */
double opf_limit_commit(double *lim, ptrdiff_t n, ptrdiff_t k, double *work,
                        const opf_lapack *fns, const double *h);

#endif
