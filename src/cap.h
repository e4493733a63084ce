#ifndef OPF_CAP_H
#define OPF_CAP_H

#include <stddef.h>

#include "common.h"

/*
 * Relative-entropy projection onto the capped simplex
 * {q : sum q = 1, 0 <= q_i <= 1/d}  (Warmuth & Kuzmin 2008, Algorithm 4).
 *
 * x          n weights. log_domain == 0: x_i >= 0 finite, need not sum to 1.
 *            log_domain != 0: log-weights, finite or -inf (zero weight).
 * out        n outputs (may alias x). Capped entries are exactly 1/d
 *            (log domain: exactly -log d); the others x_i * c
 *            (log domain: x_i + c), clamped so none exceeds the cap.
 * out_lin    NULL, or n outputs receiving the linear weights exp(out) in
 *            the log domain (computed without a second pass of exps).
 * work       3n doubles of workspace.
 * n_raised   out: how many zero-weight entries were raised to the cap
 *            because fewer than d entries had positive weight (0 normally).
 *
 * Returns the number of entries at the cap (>= 0), or OPF_EINVAL.
 */
ptrdiff_t opf_cap(const double *x, ptrdiff_t n, ptrdiff_t d, int log_domain,
                  double *out, double *out_lin, double *work,
                  ptrdiff_t *n_raised);

/*
 * A bracket for the threshold, for repeated projections of a slowly
 * changing vector (the learners' weights between trials).  It changes how
 * fast the answer is found, never the answer: the capped set is the same
 * (up to ties with the threshold within rounding) and the outputs are
 * computed from it in a fixed order.
 *
 * lo, hi     in: log domain only: a guess lo <= hi such that the entries
 *            capped are those with x_i > t for some t in [lo, hi].  Ignored
 *            unless both are finite and lo <= hi.
 * xmax       in: log domain only: NaN, or an upper bound of the x_i when the
 *            caller knows one and every x_i is finite (saves a pass).  The
 *            search runs on exp(x_i - xmax); a bound far above the maximum
 *            makes more of those underflow, which costs a slower path
 *            (cap.c, SAFE_RANGE), never accuracy.
 * step, eta  in: log domain only, with a finite xmax: NULL, or g: the vector
 *            capped is then x - eta * g (elementwise, not fused), computed in
 *            the first pass and bounded by xmax.  NULL: x itself.
 * shift      out: the c with out_i = x_i + c for the uncapped entries (log
 *            domain; linear domain: the factor, out_i = x_i * c).
 * ymin       out: with step, the smallest entry of x - eta * g.
 * bracketed  out: 1 if the hint was used and the threshold was inside it.
 */
typedef struct {
    double lo, hi;
    double xmax;
    const double *step;
    double eta;
    double shift;
    double ymin;
    int bracketed;
} opf_cap_hint;

/* opf_cap with an optional hint (NULL: none), its exps run in the
 * instruction-set version opf_cpu_use(level) picks (vexp.h; -1: the CPU's
 * best, which opf_cap uses). */
ptrdiff_t opf_cap_ex(const double *x, ptrdiff_t n, ptrdiff_t d, int log_domain,
                     double *out, double *out_lin, double *work,
                     ptrdiff_t *n_raised, opf_cap_hint *hint, int level);

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
