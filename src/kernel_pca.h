#ifndef OPF_KERNEL_PCA_H
#define OPF_KERNEL_PCA_H

#include <stddef.h>

#include "bordered_update.h"
#include "common.h"

/*
 * Trial loops of online kernel PCA (Kuzmin & Warmuth 2007, Algorithm 6); see
 * kernel_pca.c.  The state lives in caller-owned arrays (the Python learner
 * pickles them); this struct only points at them.  The kernel is evaluated
 * by the caller.  Two forms of the same trial:
 *  - kernel form (opf_kpca_trials): the eigensystem of the kernel matrix of
 *    all past instances, grown by one bordered update per trial; the loop
 *    receives each instance's kernel values with the earlier ones and itself;
 *  - feature form (opf_kpca_feature_trials): the eigensystem of the
 *    feature-space matrix C = sum phi phi^T of a fixed, finite feature map
 *    (the learner's bounded mode: a Nystrom map, see opf_kpca_map), updated
 *    by one rank-one update per trial; the loop receives each instance's
 *    feature vector phi and its kernel diagonal k(x, x).
 */

typedef struct {
    /* parameters */
    ptrdiff_t r;           /* n_components */
    int sampler;           /* OPF_SAMPLER_DECOMPOSITION or _SYSTEMATIC */
    double eta;
    /* eta = "auto" (NULL: the numeric eta above): the AdaHedge state
     * rate[0..OPF_RATE_LEN) of adaptive_rate.h, caller-owned; the trial uses
     * rate[1] and commits its gap (opf_kpca_gap) */
    double *rate;
    /* eta = "auto" with the master (NULL: none): OPF_MASTER_LEN doubles of
     * limit.h, AdaHedge over the learner and Follow the Leader (the
     * projection onto the r leading eigenvectors of K, its eta -> infinity
     * limit); the trial's uniform plays the learner with the master's
     * weight (rescaled for its draw), Follow the Leader otherwise */
    double *master;
    ptrdiff_t capacity;    /* leading dimension of q; the order never exceeds it */
    /* state (caller-owned) */
    double *evals;         /* capacity: ascending eigenvalues of K (first m) */
    double *q;             /* capacity x capacity row-major, columns = eigenvectors */
    ptrdiff_t *m;          /* order of K = number of instances stored; feature
                              form: the order of C (the map's dimension) */
    /* feature form only (NULL in the kernel form): trials done in it, and
     * residual[0] += k(x, x) - |phi|^2 per trial (the map's error) */
    ptrdiff_t *t;
    double *residual;
    /* workspace: opf_kpca_work_len / opf_kpca_iwork_len / opf_bu_iwork_len
     * (feature form: opf_kpca_feature_work_len, opf_kpca_iwork_len,
     * opf_r1_iwork_len) */
    double *work;
    ptrdiff_t *iwork;
    int *buiwork;
    const opf_lapack *fns;
    /* nonzero: poll the SIGINT flag (interrupt.h) before each trial and
     * inside the bordered update, and stop with OPF_EINTR, the interrupted
     * trial changing nothing; set by the binding layer around a chunk */
    int poll;
    /* a stop flag (interrupt.h) polled before each trial, or NULL (see
     * opf_learner.stop) */
    const int *stop;
} opf_kpca;

/* Running totals of the eigen-updates, for diagnostics and benchmarks. */
typedef struct {
    long long n_updates;     /* bordered updates done */
    long long secular_sum;   /* sum of the orders of their secular equations */
    long long n_fallbacks;   /* roots by bisection + blocks by dsyevr in them */
} opf_kpca_stats;

/*
 * eta = "auto": the mixability gap of a trial in feature space of unbounded
 * dimension, the d -> infinity limit of the two-point bound
 * (opf_rate_gap_two_point), which is at least the gap in any dimension:
 *     delta = h (1 - (1 - exp(-x)) / x),  x = eta kappa,
 * h the expected loss, kappa = k(x, x); eta = INFINITY gives h.
 */
double opf_kpca_gap(double h, double kappa, double eta);

size_t opf_kpca_work_len(ptrdiff_t capacity);  /* doubles */
size_t opf_kpca_iwork_len(ptrdiff_t capacity); /* indices */

/*
 * The numerical null space of K: eigenvalues with |lambda| <= tol, where
 *     tol = m * eps * max_i |lambda_i|
 * (numpy.linalg.matrix_rank's default), are zero for the algorithm.
 */
double opf_kpca_null_tol(ptrdiff_t m, const double *evals);

/*
 * Run T trials.  Row j of G (row stride ldg) holds k(x_j, x) for the m0 + j
 * stored instances x followed by k(x_j, x_j), where m0 = *s->m before the
 * call; u[j] is the uniform of trial j.  Writes the expected and realized
 * approximation errors of each trial.
 *
 * Returns the number of trials completed.  If it is less than T, *status
 * says why, and trial `done` is either
 *  - a bordered-update failure (OPF_EFAILED): its losses are written but
 *    its instance is not counted in *s->m; the eigensystem is that before
 *    the trial, and the caller rebuilds it with the new instance (and then
 *    counts it); or
 *  - any other status (OPF_EINTR, OPF_ECAPACITY, a capping or sampling
 *    error): nothing of trial `done` was written or changed (its losses
 *    may be).
 */
ptrdiff_t opf_kpca_trials(const opf_kpca *s, const double *G, ptrdiff_t ldg,
                          ptrdiff_t T, const double *u, double *exp_loss,
                          double *real_loss, int *status,
                          opf_kpca_stats *stats);

/*
 * The feature form.  Row j of Phi (T x order, row-major) is the feature
 * vector phi_j of instance j in the map's orthonormal coordinates and
 * kappa[j] = k(x_j, x_j); u[j] its uniform.  The trial is that of the kernel
 * form with p_i = (Q^T phi)_i^2 and |phi|^2 in place of z_i^2 / lambda_i and
 * k(x, x) (KW Alg. 6 run in the span of the map: update (2) in a feature
 * space of dimension `order`, cap D = order - r), then C += phi phi^T by
 * opf_rank_one_update.  The rate's gap and the master see the trial in that
 * space; the losses written are those in the kernel's feature space: the
 * master's (or the learner's) plus the residual k(x, x) - |phi|^2 of phi(x)
 * outside the span, which is also added to residual[0].
 *
 * Returns the number of trials completed (each increments *s->t).  If it
 * is less than T, *status says why, and trial `done` is either
 *  - a rank-one-update failure (OPF_EFAILED): its losses are written, its
 *    rate, master and residual steps committed, but *s->t is not
 *    incremented and the eigensystem is that before the trial; the caller
 *    replaces it by the eigensystem of Q diag(evals) Q^T + phi phi^T and
 *    counts the trial; or
 *  - any other status: nothing of trial `done` was changed.
 */
size_t opf_kpca_feature_work_len(ptrdiff_t order); /* doubles */

/* The feature form re-orthogonalises the eigenvectors of C (one
 * Newton-Schulz step) after every trial whose count *s->t is a multiple of
 * this: the rank-one updates' rounding grows |Q^T Q - I| by ~2e-17 a trial
 * (measured), so it stays below ~1e-12 on streams of any length. */
#define OPF_KPCA_REORTHOGONALIZE_EVERY 10000

ptrdiff_t opf_kpca_feature_trials(const opf_kpca *s, const double *Phi,
                                  ptrdiff_t T, const double *kappa,
                                  const double *u, double *exp_loss,
                                  double *real_loss, int *status,
                                  opf_kpca_stats *stats);

/*
 * A Nystrom map: for T rows k_j (row stride ldk) of kernel values with the
 * nl landmarks, Phi[j] = M^T k_j (M: nl x dim, row-major) and, unless khat
 * is NULL, khat[j] = |Phi[j]|^2.  One GEMV per row, so a row's values do
 * not depend on the other rows of the call (batches split anywhere give
 * the same numbers).  With M = L^T (the landmarks as columns) it gives the
 * inner products of the rows with the landmarks, the same way.
 */
void opf_kpca_map(const opf_lapack *fns, ptrdiff_t nl, ptrdiff_t dim,
                  const double *M, const double *K, ptrdiff_t ldk, ptrdiff_t T,
                  double *Phi, double *khat);

#endif
