#ifndef OPF_STATE_CLUSTERED_DRAW_H
#define OPF_STATE_CLUSTERED_DRAW_H

/*
 * state_clustered_draw.h -- the clustered state's draw
 * (state_clustered_draw.c), called by its trial (state_clustered.c).
 */
#include <stddef.h>

#include "state.h"

/* The realized loss of the corner drawn with u from the explicit weights
 * om[0..m) and the cluster's (capped log-weight lc, weight wc), x's energy
 * in the complement beta2, its coordinates z in w->z. */
int opf_cl_draw(const opf_learner *s, opf_ws *w, double u, ptrdiff_t m,
                ptrdiff_t nb, double beta2, const double *x, const double *om,
                double lc, double wc, double *rl);

/* The energy of x in e directions drawn uniformly (Haar) in a c-dimensional
 * subspace where x has energy beta2, from the bits of u (limit.c too). */
double opf_haar_energy(ptrdiff_t e, ptrdiff_t c, double u, double beta2);

/* Follow the Leader's loss of y (state_clustered_draw.c). */
double opf_cl_leader_loss(const opf_learner *s, opf_ws *w, ptrdiff_t m,
                          ptrdiff_t nb, double beta2, const double *y);

#endif
