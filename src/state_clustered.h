#ifndef OPF_STATE_CLUSTERED_H
#define OPF_STATE_CLUSTERED_H

/*
 * state_clustered.h -- internal to the clustered state: the products with
 * B and R that every part of it takes (state_clustered.c, the trial;
 * state_clustered_draw.c, the draw), and the draw.
 */
#include <stddef.h>
#include <string.h>

#include "state.h"

static inline double opf_cl_dot(const double *a, const double *b, ptrdiff_t n)
{
    double acc = 0.0;
    for (ptrdiff_t i = 0; i < n; i++)
        acc += a[i] * b[i];
    return acc;
}

/* y[0..nb) = alpha * B x + beta * y  (B: nb rows of length n) */
static inline void gemv_b(const opf_learner *s, int nb, double alpha,
                          const double *x, double beta, double *y)
{
    int n = (int)s->n, inc = 1;
    char tr = 'T';
    s->fns->dgemv(&tr, &n, &nb, &alpha, s->b, &n, (double *)x, &inc, &beta, y,
                  &inc);
}

/* x[0..n) += alpha * B^T y */
static inline void gemv_bt(const opf_learner *s, int nb, double alpha,
                           const double *y, double *x)
{
    int n = (int)s->n, inc = 1;
    double one = 1.0;
    char nt = 'N';
    s->fns->dgemv(&nt, &n, &nb, &alpha, s->b, &n, (double *)y, &inc, &one, x,
                  &inc);
}

/* z[0..m) = R^T y (y: nb) */
static inline void gemv_rt(const opf_learner *s, int nb, int m,
                           const double *y, double *z)
{
    int ld = (int)s->cap, inc = 1;
    double one = 1.0, zero = 0.0;
    char nt = 'N';
    if (m == 0)
        return;
    if (nb == 0) {
        memset(z, 0, (size_t)m * sizeof(double));
        return;
    }
    s->fns->dgemv(&nt, &m, &nb, &one, s->r, &ld, (double *)y, &inc, &zero, z,
                  &inc);
}

/* y[0..nb) += alpha * R z (z: m) */
static inline void gemv_r(const opf_learner *s, int nb, int m, double alpha,
                          const double *z, double *y)
{
    int ld = (int)s->cap, inc = 1;
    double one = 1.0;
    char tr = 'T';
    if (m == 0 || nb == 0)
        return;
    s->fns->dgemv(&tr, &m, &nb, &alpha, s->r, &ld, (double *)z, &inc, &one, y,
                  &inc);
}

/* The realized loss of the corner drawn with u from the explicit weights
 * om[0..m) and the cluster's (capped log-weight lc, weight wc), x's energy
 * in the complement beta2, its coordinates z in w->z. */
int opf_cl_draw(const opf_learner *s, opf_ws *w, double u, ptrdiff_t m,
                ptrdiff_t nb, double beta2, const double *x, const double *om,
                double lc, double wc, double *rl);

/* Follow the Leader's loss of y (state_clustered_draw.c). */
double opf_cl_leader_loss(const opf_learner *s, opf_ws *w, ptrdiff_t m,
                          ptrdiff_t nb, double beta2, const double *y);

#endif
