#ifndef OPF_LOGWEIGHTS_H
#define OPF_LOGWEIGHTS_H

/*
 * logweights.h -- the log-domain steps that both representations of the
 * learners' state take (state_dense.c: dense, state_clustered.c: m
 * explicit entries plus one cluster), written once: the span constants, logaddexp, the
 * uniform mixing of WK Sec. 8 / YL eq. (4b), the normaliser of the fixed
 * share, the floors that keep the state finite, the level shift of capping
 * and the center update of WK Alg. 6, eqs. (15)-(16).
 *
 * Groups: the clustered state holds an entry v_c with a multiplicity c
 * (the cluster); the helpers take it as (vc, c) with c = 0 for "none", and
 * give bit for bit the dense result when c = 0.
 */

#include <math.h>
#include <stddef.h>

/* Entries more than OPF_LOG_SPAN below the largest are raised to that
 * distance (a weight exp(-2^1020) is 0 in every practical sense); the
 * eigen-learners floor at OPF_EIGEN_FLOOR, where the secular equation's
 * products cannot overflow, and take the rank-one update's deflation
 * tolerance relative to the entries within OPF_EIGEN_SPAN of the largest
 * (issue 22, item 1: no closer floor, which tied leading directions). */
#define OPF_LOG_SPAN 0x1p1020
#define OPF_EIGEN_FLOOR 0x1p60
#define OPF_EIGEN_SPAN 0x1p20

/* The floor of the cumulative learners' A = log W0 - eta C^t below its
 * largest entry.  WK Alg. 6 weighs the directions by exp(A): an entry
 * 2^60 below the top has weight 0 in float64 either way.  Follow the
 * Leader (sampler OPF_SAMPLER_LEADER, A = -C^t) has no exponentials: its
 * leading directions are the *lowest* entries, which a floor ties, and it
 * is scale-free, so only the finiteness floor OPF_LOG_SPAN applies
 * (issue 35, item 2: rows ~1e9 over a few hundred trials spread C past
 * 2^60 and tied its top variances).  The accepted rows keep C below
 * 2^1020 on any stream of fewer than 2^40 of them (the learners' input
 * check), where that floor is never reached. */
static inline double opf_cumulative_floor(int leader)
{
    return leader ? OPF_LOG_SPAN : OPF_EIGEN_FLOOR;
}

/* The scale of the rank-one update's deflation tolerance for a spectrum
 * whose largest entry is top (opf_rank_one_update_scaled). */
static inline double opf_r1_scale(double top)
{
    return fabs(top - OPF_EIGEN_SPAN);
}

/* Capping shifts the level by v_d (the d-th largest entry) once |v_d| is
 * beyond this, so that its normalisation does not cancel (state_dense.c,
 * cap_log_at_any_level). */
#define OPF_CAP_SHIFT_AT 512.0

/* The level capping subtracts: v_d beyond +-OPF_CAP_SHIFT_AT, else 0. */
static inline double opf_cap_level(double vd)
{
    return fabs(vd) > OPF_CAP_SHIFT_AT && isfinite(vd) ? vd : 0.0;
}

/* log(e^a + e^b), -inf when both are. */
static inline double opf_logaddexp(double a, double b)
{
    const double hi = a > b ? a : b;
    if (hi == -INFINITY)
        return -INFINITY;
    return hi + log1p(exp(-fabs(a - b)));
}

/* w <- alpha/n + (1 - alpha) w in the log domain, for len entries of a
 * distribution over n directions (order preserving). */
static inline void opf_mix_uniform_log(double *v, ptrdiff_t len, ptrdiff_t n,
                                       double alpha)
{
    const double la = log(alpha / (double)n), l1a = log1p(-alpha);
    for (ptrdiff_t i = 0; i < len; i++)
        v[i] = opf_logaddexp(la, l1a + v[i]);
}

/* log(sum_i e^{v_i} + c e^{vc}) for top >= every entry (c = 0: no
 * cluster): the normaliser of the fixed share (YL: v is a distribution
 * before eq. 11b). */
static inline double opf_log_total(const double *v, ptrdiff_t len,
                                   double top, double c, double vc)
{
    double sum = 0.0;
    for (ptrdiff_t i = 0; i < len; i++)
        sum += exp(v[i] - top);
    if (c > 0.0)
        sum += c * exp(vc - top);
    return top + log(sum);
}

/* Raise the ascending prefix of v[0..len) below top - span to that floor. */
static inline void opf_floor_ascending(double *v, ptrdiff_t len, double top,
                                       double span)
{
    const double floor = top - span;
    for (ptrdiff_t i = 0; i < len && v[i] < floor; i++)
        v[i] = floor;
}

/* A's level is not normalised (WK Alg. 6): once its largest entry top is
 * below -OPF_LOG_SPAN, subtract top from v[0..len) (and *vc if not NULL),
 * which leaves W = cap(exp(A)) unchanged.  Returns the new top. */
static inline double opf_lift_level(double *v, ptrdiff_t len, double *vc,
                                    double top)
{
    if (!(top < -OPF_LOG_SPAN))
        return top;
    for (ptrdiff_t i = 0; i < len; i++)
        v[i] -= top;
    if (vc)
        *vc -= top;
    return 0.0;
}

/* WK Alg. 6 at trial t (1-based) with eta~^{-1} = c: the factor of the
 * covariance update, eq. (16), and the center update, eq. (15). */
static inline double opf_center_factor(double c, ptrdiff_t t)
{
    return (c + (double)(t - 1)) / (c + (double)t);
}

static inline void opf_center_update(double *mean, const double *x,
                                     ptrdiff_t n, double c, ptrdiff_t t)
{
    const double g = 1.0 / (c + (double)t);
    for (ptrdiff_t i = 0; i < n; i++)
        mean[i] -= g * (mean[i] - x[i]);
}

#endif
