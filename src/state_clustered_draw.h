#ifndef OPF_STATE_CLUSTERED_DRAW_H
#define OPF_STATE_CLUSTERED_DRAW_H

/*
 * state_clustered_draw.h -- the clustered state's draw
 * (state_clustered_draw.c), called by its trial (state_clustered.c).
 */
#include <stddef.h>

#include "state.h"
#include "state_clustered.h"

/* W = cap(exp(A)) of the cumulative law as groups: the explicit weights
 * to cw[0..m), the cluster's capped log-weight and weight to *lc, *wc;
 * work: 3 (m + 1) doubles.  What the trial draws from and what the Python
 * state reports (the binding's cluster_capped_weights). */
int opf_cl_capped_weights(ptrdiff_t n, ptrdiff_t d, ptrdiff_t m,
                          const double *mu, double mu_c, double *cw,
                          double *lc, double *wc, double *work);

/* A corner of W from the explicit weights om[0..m) and the cluster's
 * (capped log-weight lc, weight wc): the sampler draws `size` of the `len`
 * weights v (none if size is 0); entries >= m are cluster slots, each
 * putting back one of the `left_out` cluster directions the corner would
 * otherwise leave out.  wexp: n doubles (v may point into it). */
typedef struct {
    const double *v;
    ptrdiff_t len, size, left_out;
} opf_cl_plan;

opf_cl_plan opf_cl_corner_plan(ptrdiff_t n, ptrdiff_t d, ptrdiff_t m,
                               const double *om, double lc, double wc,
                               double *wexp);

/* The drawn corner[0..p->size): its explicit entries moved to the front
 * (in the order drawn; returns their number), the cluster directions it
 * leaves out to *left_out (drawn uniformly in the complement). */
ptrdiff_t opf_cl_corner_take(const opf_cl_plan *p, ptrdiff_t m,
                             ptrdiff_t *corner, ptrdiff_t *left_out);

/* The realized loss of the corner drawn with u (opf_cl_corner_plan) from
 * x's coordinates z in w->z and its energy beta2 in the complement. */
int opf_cl_draw(const opf_learner *s, const opf_clustered *cs, opf_ws *w, double u, ptrdiff_t m,
                double beta2, const double *om, double lc, double wc,
                double *rl);

/* The energy of x in e directions drawn uniformly (Haar) in a c-dimensional
 * subspace where x has energy beta2, from the bits of u (limit.c too). */
double opf_haar_energy(ptrdiff_t e, ptrdiff_t c, double u, double beta2);

/* Follow the Leader's loss of y (state_clustered_draw.c). */
double opf_cl_leader_loss(const opf_learner *s, const opf_clustered *cs, opf_ws *w, ptrdiff_t m,
                          ptrdiff_t nb, double beta2, const double *y);

#endif
