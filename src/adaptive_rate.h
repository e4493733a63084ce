#ifndef OPF_ADAPTIVE_RATE_H
#define OPF_ADAPTIVE_RATE_H

/*
 * eta = "auto": the AdaHedge learning rate (de Rooij, van Erven, Grunwald
 * and Koolen, JMLR 15, 2014) for every learner of the family, O(1) per
 * trial on top of quantities the trial already has (adaptive_rate.c).
 *
 * State (caller-owned, OPF_RATE_LEN doubles, pickled with the learner):
 *   rate[0] = Delta, the cumulative mixability gap in the learner's loss
 *             scale (sum of delta_t >= 0);
 *   rate[1] = the rate in use, D / Delta (INFINITY while Delta = 0:
 *             Follow the Leader, whose parameter is still W^0);
 *   rate[2] = tr C^t for the cumulative learners (the state keeps
 *             A = eta_t (K - C^t) with an unknown level K, which the trace
 *             fixes: explained_variance_) and VarianceMinimizer with
 *             its master (tr C^{t-1} sets its leader's tie tolerance,
 *             learner.c leader_start), 0 for the others.
 * D = d log(n / d) (log n for the uncapped learners, d = 1) is the largest
 * relative entropy from W^0 = I/n of a capped comparator, times d (the
 * learner's losses are d times those of the update's scale).
 */
#include <stddef.h>

#define OPF_RATE_LEN 3

/* D = d log(n / d). */
double opf_rate_scale(double n, double d);

/*
 * The two-point bound on the mixability gap of a matrix learner (any PSD
 * instance S with 0 <= S <= s I): delta = h + (d / eta) log(1 - p + p
 * exp(-eta s)), p = h / (d s) = tr(W S) / s.  It is >= the exact gap
 * h + (d / eta) log tr exp(log W - eta S) (Golden-Thompson, then the
 * convexity of exp(-eta c) on [0, s]), so the regret bound of the rate
 * holds with it.  eta = INFINITY gives the Follow-the-Leader limit h
 * (or 0 if p = 1).  Scale-free: (h, s, eta) -> (c h, c s, eta / c) gives
 * c delta.
 */
double opf_rate_gap_two_point(double h, double s, double d, double eta);

/*
 * The exact gap of a vector learner: h = d sum w_i l_i and
 * lse = log sum_i w_i exp(-eta l_i) (w normalised), lmin = min_i l_i (the
 * eta = INFINITY limit).  Clamped at 0 (rounding).
 */
double opf_rate_gap_exact(double h, double lse, double lmin, double d,
                          double eta);

/* The rate after a trial with gap delta (not stored: see commit). */
double opf_rate_next(const double *rate, double scale, double delta);

/* Store Delta + delta and the next rate (after the trial succeeded). */
void opf_rate_commit(double *rate, double scale, double delta);

/*
 * The step actually taken with rate eta on an instance of size s: eta,
 * unless eta s exceeds 2^1000 (a stream whose |x|^2 spans more than ~1e300
 * would overflow a log-weight otherwise), then 2^1000 / s.
 */
double opf_rate_step(double eta, double s);

/*
 * One trial of a matrix learner (expected loss h, instance size sz >= the
 * instance's top eigenvalue, n and d = n - k): the gap delta, the step to
 * take and the factor gamma on the log-weights after it (stabilised
 * mirror descent).  While the rate is infinite (Follow the Leader: every
 * gap so far 0, so W is still W^0 and its log-weights a constant) the
 * first step is taken with the new rate itself, gamma = 1: the same as
 * scaling by gamma = 0 first.  Returns 0 when nothing is to be learnt
 * (both rates infinite).  Nothing is stored: see opf_rate_commit.
 */
int opf_rate_trial(const double *rate, double n, double d, double h,
                   double sz, double *step, double *gamma, double *delta);

/*
 * After a step taken with the rate in use (finite, not clamped): the exact
 * gap from lse = log tr exp(log W - eta S) (the log-partition of the
 * updated, not yet normalised log-weights; W was normalised), replacing the
 * two-point bound of opf_rate_trial (it is at most that), and the new
 * gamma.  Returns the gap.
 */
double opf_rate_exact(const double *rate, double n, double d, double h,
                      double lse, double *gamma);

/*
 * The step of a vector learner (experts; the simplex learner on its
 * linearised loss): the exact gap from sum_i w_i exp(-eta_t l_i) (w the
 * normalised weights exp(lam)), then lam <- gamma (lam - eta_t l) with
 * gamma = eta_{t+1} / eta_t (AdaHedge exactly when nothing is capped or
 * mixed); while the rate is infinite, lam <- lam - eta_{t+1} l (lam is
 * still a constant).  e: sum_i w_i l_i; top, low: the range of the new
 * lam.  Returns the gap (d times, the learner's scale); commit it after
 * the trial.  level: the exps' instruction-set version (opf_exp_shifted).
 */
double opf_rate_vector_step(const double *rate, ptrdiff_t n, double d,
                            double *lam, const double *l, const double *w,
                            double *e, double *top, double *low, int level);

/* log sum_i exp(lam_i) of n ascending log-weights (the top is the last). */
double opf_rate_log_partition(const double *lam, ptrdiff_t n);

/* lam *= gamma (the stabilised step; nothing to do at gamma = 1). */
void opf_rate_scale_log(double *lam, ptrdiff_t n, double gamma);

/* alpha = "auto": the mixing rate of trial t >= 1, 1 / (t + 1)^2 (a
 * decreasing switching rate whose total sum log 1/(1 - alpha_t) < log 2;
 * its adaptive-regret bound is in docs/adaptive_rates.md). */
double opf_rate_alpha(ptrdiff_t t);

#endif
