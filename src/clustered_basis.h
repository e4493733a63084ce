#ifndef OPF_CLUSTERED_BASIS_H
#define OPF_CLUSTERED_BASIS_H

/*
 * clustered_basis.h -- the products with B and R that every part of the
 * clustered state takes (state_clustered.c, state_clustered_draw.c):
 * Q = B^T R, B (nb x n, row-major, orthonormal rows), R (nb x m, leading
 * dimension cap).
 */
#include <stddef.h>
#include <string.h>

#include "learner.h"

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

#endif
