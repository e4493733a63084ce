#ifndef OPF_VEXP_H
#define OPF_VEXP_H

#include <stddef.h>

/*
 * out[i] = exp(x[i] - shift) for i < n, where every x[i] <= shift (or
 * -inf).  Vectorised, within 1 ulp (see vexp.c).  out may alias x.
 */
void opf_exp_shifted(const double *x, ptrdiff_t n, double shift, double *out);

#endif
