#ifndef OPF_STATE_DENSE_H
#define OPF_STATE_DENSE_H

/*
 * state_dense.h -- the arrays of the dense state (state_dense.c), which the
 * binding points at the learner's and passes to the trial loop as its
 * opaque state (opf_learner.state, with opf_dense_state).  The experts and
 * the simplex learner keep their weights in it without a basis.
 */
#include <stddef.h>

typedef struct {
    double *lam;   /* n: log-eigenvalues (ascending), or log-weights */
    double *omega; /* n: exp(lam), kept with it (MEG, EXPERTS, SIMPLEX_VAR)
                      so a trial needs one exp pass */
    double *q;     /* n x n row-major, columns = eigenvectors (MEG and
                      CUMULATIVE only) */
    double *wsum;  /* share="past": n x n (n for EXPERTS), sum of past W */
} opf_dense;

#endif
