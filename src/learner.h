#ifndef OPF_LEARNER_H
#define OPF_LEARNER_H

#include <stddef.h>

#include "common.h"

/*
 * One trial loop for the whole family of learners, and for the eigen-learners
 * on either representation of their state (see learner.c, state.h).  The
 * state lives in caller-owned arrays (so that the Python learners can pickle
 * it); this struct only points at them.  Variants are parameters:
 *
 * kind   OPF_KIND_MEG         lam = log-eigenvalues of W, Q its eigenvectors;
 *                             W <- cap(exp(log W - eta S))  (WK Alg. 5,
 *                             YL Alg. 4 and 5).
 *        OPF_KIND_CUMULATIVE  lam, Q = eigensystem of A = log W0 - eta C^t;
 *                             W = cap(exp(A))  (WK Alg. 6, and Follow the
 *                             Leader with sampler OPF_SAMPLER_LEADER).
 *        OPF_KIND_EXPERTS     lam = log-weights of n experts, no basis
 *                             (WK Alg. 1 and 3, YL Alg. 1).
 *        OPF_KIND_SIMPLEX_VAR lam = log y on the simplex, exponentiated
 *                             gradient on y^T C y (YL Alg. 6).
 */
enum {
    OPF_KIND_MEG = 0,
    OPF_KIND_CUMULATIVE = 1,
    OPF_KIND_EXPERTS = 2,
    OPF_KIND_SIMPLEX_VAR = 3
};

/* Samplers: OPF_SAMPLER_* (common.h). */

enum {
    OPF_SHARE_NONE = 0,
    OPF_SHARE_FIXED = 1,   /* YL eq. (4b)/(11b)/(22b)/(29b): before capping */
    OPF_SHARE_UNIFORM = 2, /* WK Sec. 8: (1-a) W + a I/n after capping */
    OPF_SHARE_PAST = 3     /* WK eq. (20): (1-a) W + a mean(W^0..W^{t-1}) */
};

/* The representations of an eigen-learner's log W (or A), as the binding
 * names them (the table is `ops` below): */
enum {
    OPF_STATE_DENSE = 0,    /* lam, Q: all n eigenpairs (n x n) */
    OPF_STATE_CLUSTERED = 1 /* m explicit eigenpairs and one cluster:
                               below, and state_clustered.c */
};

/* The operations of the state's representation (state.h): opf_dense_state
 * or opf_clustered_state, chosen by the caller with the arrays below. */
typedef struct opf_state_ops opf_state_ops;
extern const opf_state_ops opf_dense_state;
extern const opf_state_ops opf_clustered_state;

typedef struct {
    /* parameters */
    ptrdiff_t n, d;          /* dimension, corner size d = n - k */
    int kind, sampler, share;
    const opf_state_ops *ops; /* the representation: opf_dense_state, or
                                opf_clustered_state for MEG (share NONE,
                                FIXED or UNIFORM, vector instances) and
                                CUMULATIVE only */
    int centered;            /* CUMULATIVE: learn the center (eq. 15) */
    int mean_first;          /* centered: the first trial's center m^0 is
                                its own row (y_1 = 0: no loss, no gap),
                                not the mean array's value */
    int matrix_input;        /* instances are n x n matrices, not vectors */
    int with_matrices;       /* workspace has the n x n matrices: required
                                for matrix_input and OPF_SHARE_PAST (MEG) */
    double eta, alpha;
    double center_lr_inv;    /* eta~^{-1} >= 0 of WK Alg. 6 */
    double *rate;            /* NULL: the fixed eta; else eta = "auto",
                                OPF_RATE_LEN doubles (adaptive_rate.h) */
    int alpha_auto;          /* alpha = "auto": alpha_t = 1 / (t + 1)^2 at
                                trial t (opf_rate_alpha) */
    int adaptive_d;          /* eta = "auto" of the PCA learners (OnlinePCA,
                                OnlineAdaptivePCA), with or without the
                                master: D = d log(n / (d alpha)) when mixing
                                at a constant alpha (rate_n, learner.c) */
    double *lim;             /* NULL, or (MEG, vector instances, eta =
                                "auto") the master over the learner and its
                                eta -> infinity limit: OPF_LIMIT_LEN(n, k)
                                doubles (limit.h) */
    double *limw;            /* its workspace: opf_limit_work_len(n, k) */
    int *limiw;              /* opf_limit_iwork_len(k) ints */
    double *lead;            /* NULL, or (MEG, d = 1, share none, dense,
                                eta = "auto", lim NULL: VarianceMinimizer)
                                the master over the learner and Follow the
                                Leader read off its state (log W = -eta_t
                                C^{t-1} up to a constant): 4 doubles,
                                opf_master_init (limit.h) */
    /* state (caller-owned) */
    void *state;             /* the representation's arrays, opaque here:
                                an opf_dense (state_dense.h; the experts'
                                and the simplex learner's weights too) or
                                an opf_clustered (state_clustered.h) */
    double *mean;            /* n: center m^t (CUMULATIVE) */
    ptrdiff_t *t;            /* trials so far */
    /* workspace: opf_learner_work_len / opf_clustered_work_len and
     * opf_learner_iwork_len */
    double *work;
    ptrdiff_t *iwork;
    int *r1iwork;            /* opf_r1_iwork_len(n) ints (clustered:
                                opf_r1_iwork_len(cap + 1)) */
    const opf_lapack *fns;
    /* state="auto" (MEG and CUMULATIVE), the switch to the other state:
     * dense: >= 0, stop after the trial that leaves at most m_stop explicit
     * directions (opf_explicit_count); clustered: > 0, stop after the trial
     * that leaves at least m_stop; with status OPF_SWITCH.  -1 (dense) or 0
     * (clustered): never. */
    ptrdiff_t m_stop;
    /* nonzero: poll the SIGINT flag (interrupt.h) between trials and
     * between the phases of an O(n^3) trial, and stop with OPF_EINTR, the
     * interrupted trial undone; the binding layer sets it around a chunk
     * it armed */
    int poll;
    /* a stop flag (interrupt.h) polled before each trial, or NULL: stop
     * with OPF_EINTR as for poll; set by the binding layer around a chunk
     * run by a thread that watches one (a worker of run_many's pool) */
    const int *stop;
} opf_learner;

size_t opf_learner_work_len(ptrdiff_t n, int kind, int with_matrices);
size_t opf_learner_iwork_len(ptrdiff_t n);
/* the clustered state's workspace for b of `cap` rows, k = n - d */
size_t opf_clustered_work_len(ptrdiff_t n, ptrdiff_t cap, ptrdiff_t k);

/*
 * Run T trials on the instances X (T x n row-major vectors, or T x n x n
 * matrices), with the uniforms u[0..T) for the draws.  Writes the expected
 * and realized loss of each trial.  Returns the number of trials done; if it
 * is less than T, or *status is OPF_SWITCH (see m_stop), *status says why
 * and the state is that after the trials done (a failing or interrupted
 * trial changes nothing; OPF_EINTR: see poll).  The clustered state returns
 * OPF_ECAPACITY when b has no room left (or so little that it would be
 * compressed every few trials), having changed nothing but b's compression:
 * the caller grows the arrays and calls again.
 */
ptrdiff_t opf_learner_trials(const opf_learner *s, const double *X,
                             ptrdiff_t T, const double *u, double *exp_loss,
                             double *real_loss, int *status);

/*
 * Whether the state is at its m_stop (the next trial is the other
 * representation's): what a caller checks before a trial it runs alone
 * (learn_one's short path), as opf_learner_trials checks it after each.
 */
int opf_learner_switch_due(const opf_learner *s);

/*
 * The smallest and largest of x[0..n) in one pass (the learners' input
 * check: the batches are the largest arrays they read).  Both NaN if an
 * entry is NaN; infinities are returned as they are.
 */
void opf_range(const double *x, ptrdiff_t n, double *lo, double *hi);

#endif
