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
#include "state_clustered.h"

static inline double opf_cl_dot(const double *a, const double *b, ptrdiff_t n)
{
    double acc = 0.0;
    for (ptrdiff_t i = 0; i < n; i++)
        acc += a[i] * b[i];
    return acc;
}

/* y <- alpha op(B^T) x + beta y with B^T column-major (n x nb, ld n):
 * op 'T' y (nb) from x (n), op 'N' y (n) from x (nb) */
static inline void gemv_with_b(const opf_learner *s, const opf_clustered *cs,
                               char op, int nb, double alpha, const double *x,
                               double beta, double *y)
{
    int n = (int)s->n, inc = 1;
    s->fns->dgemv(&op, &n, &nb, &alpha, cs->b, &n, (double *)x, &inc, &beta,
                  y, &inc);
}

/* y[0..nb) = alpha * B x + beta * y  (B: nb rows of length n) */
static inline void gemv_b(const opf_learner *s, const opf_clustered *cs,
                          int nb, double alpha, const double *x, double beta,
                          double *y)
{
    gemv_with_b(s, cs, 'T', nb, alpha, x, beta, y);
}

/* x[0..n) += alpha * B^T y */
static inline void gemv_bt(const opf_learner *s, const opf_clustered *cs,
                           int nb, double alpha, const double *y, double *x)
{
    gemv_with_b(s, cs, 'N', nb, alpha, y, 1.0, x);
}

/* z[0..m) = R^T y (y: nb) */
static inline void gemv_rt(const opf_learner *s, const opf_clustered *cs, int nb, int m,
                           const double *y, double *z)
{
    int ld = (int)cs->cap, inc = 1;
    double one = 1.0, zero = 0.0;
    char nt = 'N';
    if (m == 0)
        return;
    if (nb == 0) {
        memset(z, 0, (size_t)m * sizeof(double));
        return;
    }
    s->fns->dgemv(&nt, &m, &nb, &one, cs->r, &ld, (double *)y, &inc, &zero, z,
                  &inc);
}

/* y[0..nb) += alpha * R z (z: m) */
static inline void gemv_r(const opf_learner *s, const opf_clustered *cs, int nb, int m, double alpha,
                          const double *z, double *y)
{
    int ld = (int)cs->cap, inc = 1;
    double one = 1.0;
    char tr = 'T';
    if (m == 0 || nb == 0)
        return;
    s->fns->dgemv(&tr, &m, &nb, &alpha, cs->r, &ld, (double *)z, &inc, &one, y,
                  &inc);
}

#endif
