#ifndef OPF_STATE_CLUSTERED_H
#define OPF_STATE_CLUSTERED_H

/*
 * state_clustered.h -- the arrays of the clustered state (state_clustered.c),
 * which the binding points at the learner's and passes to the trial loop as
 * its opaque state (opf_learner.state, with opf_clustered_state).
 *
 * log W = Q diag(mu) Q^T + mu_c (I - Q Q^T), Q (n x m) = B^T R.
 */
#include <stddef.h>

typedef struct {
    ptrdiff_t cap;  /* rows of b */
    double *b;      /* cap x n, nb orthonormal rows used */
    double *r;      /* cap x cap (nb x m used) */
    double *mu;     /* cap: the m explicit log-eigenvalues, ascending */
    double *omega;  /* cap: exp(mu) */
    double *clus;   /* 2: mu_c, exp(mu_c) */
    ptrdiff_t *dims; /* 2: m, nb */
} opf_clustered;

#endif
