#ifndef OPF_CLUSTERED_H
#define OPF_CLUSTERED_H

#include <stddef.h>

#include "common.h"

/*
 * OnlinePCA (WK Alg. 5, YL Alg. 4) on the capped structure (clustered.c).
 *
 * log W = Q diag(mu) Q^T + mu_c (I - Q Q^T): m explicit eigenpairs plus one
 * implicit cluster, the orthogonal complement of Q, with the single
 * log-eigenvalue mu_c and multiplicity c = n - m (c = 0: no cluster).  The
 * cluster is always the top of the spectrum (the explicit values are
 * strictly below mu_c: a negative rank-one update keeps every new value at
 * or below the old largest, and entries that reach mu_c merge back).
 *
 * Q (n x m) is kept as B^T R: B (nb x n, row-major, orthonormal rows) and R
 * (nb x m, row-major with leading dimension cap, orthonormal columns),
 * m <= nb <= cap.  A trial appends at most one row to B and changes R by a
 * small (m+1) x (m+1) eigenvector matrix; B is compressed to R^T B (and R
 * to I) when it has no room left or nb >= 3m/2 + 16, so that a trial costs
 * O(n nb) + O(nb m^2), amortised O(n m).
 *
 * The caller owns every array (the Python learner pickles them).  When B
 * has no room left (or so little that it would be compressed every few
 * trials) the trial returns OPF_ECAPACITY having changed nothing but B's
 * compression: the caller grows the arrays and calls again.
 */
/*
 * cumulative = 1: the learners of WK Algorithm 6 and Follow the Leader
 * (sampler OPF_SAMPLER_LEADER), whose state is A = log W^0 - eta C^t, on
 * the same structure: mu_c stays at log W^0's value (C^t is 0 on every
 * direction no instance has reached), W = cap(exp(A)) is formed per trial
 * from the m + 1 groups, the update is -eta f y y^T with y = x - m^{t-1}
 * (f by eq. 16), the center follows eq. 15, and nothing is capped or
 * mixed in the state.  omega is unused; share must be OPF_SHARE_NONE.
 */
typedef struct {
    ptrdiff_t n, d, cap;     /* dimension, corner size n - k, rows of b */
    int sampler, share;      /* OPF_SAMPLER_*, OPF_SHARE_NONE/FIXED/UNIFORM */
    int cumulative;          /* mu, mu_c are A's (WK Alg. 6, FTL): below */
    int centered;            /* cumulative: learn the center (eq. 15) */
    double eta, alpha;
    double center_lr_inv;    /* cumulative: eta~^{-1} >= 0 of WK Alg. 6 */
    double *rate;            /* NULL: the fixed eta; else eta = "auto"
                                (adaptive_rate.h), as learner.h */
    int alpha_auto;          /* alpha = "auto", as learner.h */
    double *mean;            /* cumulative: n, the center m^t */
    double *b;               /* cap x n */
    double *r;               /* cap x cap (nb x m used) */
    double *mu;              /* cap: ascending explicit log-eigenvalues */
    double *omega;           /* cap: exp(mu) */
    double *clus;            /* 2: mu_c, exp(mu_c) */
    ptrdiff_t *dims;         /* 2: m, nb */
    ptrdiff_t *t;            /* trials so far */
    double *work;            /* opf_clustered_work_len */
    ptrdiff_t *iwork;        /* opf_clustered_iwork_len */
    int *r1iwork;            /* opf_r1_iwork_len(cap + 1) */
    const opf_lapack *fns;
    /* state="auto": > 0, stop after the trial that leaves at least m_stop
     * explicit directions, with status OPF_SWITCH; 0: never. */
    ptrdiff_t m_stop;
    /* nonzero: poll the SIGINT flag (interrupt.h) before each trial and
     * stop with OPF_EINTR (a clustered trial is cheap: O(n m)) */
    int poll;
} opf_clustered;

size_t opf_clustered_work_len(ptrdiff_t n, ptrdiff_t cap, ptrdiff_t k);
size_t opf_clustered_iwork_len(ptrdiff_t n);

/* As opf_learner_trials (learner.h): T trials on the rows of X with the
 * uniforms u; returns the number done, *status says why if fewer. */
ptrdiff_t opf_clustered_trials(const opf_clustered *s, const double *X,
                               ptrdiff_t T, const double *u,
                               double *exp_loss, double *real_loss,
                               int *status);

/*
 * Normalised capped log-weights of a vector given as groups: values v[0..g)
 * with multiplicities mult[0..g) (> 0), sorted descending.  Writes the new
 * values to out (capped groups exactly -log d) and returns the number of
 * capped groups, or OPF_EINVAL (d out of range, more than d entries would
 * be capped).  O(g) per capped group.
 */
ptrdiff_t opf_cap_groups(const double *v, const double *mult, ptrdiff_t g,
                         ptrdiff_t d, double *out);

#endif
