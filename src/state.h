#ifndef OPF_STATE_H
#define OPF_STATE_H

/*
 * state.h -- the eigen-learners' state interface (internal to learner.c,
 * state_dense.c and state_clustered.c).
 *
 * The trial of MEG (WK Alg. 5, YL Alg. 4 and 5) and of the cumulative
 * learners (WK Alg. 6, Follow the Leader) is written once, in learner.c:
 * coordinates of the instance, expected and realized loss of a corner
 * drawn from the state's weights, the rate's step, a rank-one update,
 * mixing and capping, the floor that keeps it finite.  Each step is an
 * operation of the state, which has two representations:
 *
 *   dense      lam, Q: all n eigenpairs of log W (state_dense.c);
 *   clustered  m explicit eigenpairs, Q = B^T R, and one cluster, the
 *              complement of their span, with one log-eigenvalue mu_c of
 *              multiplicity n - m (state_clustered.c): O(n m) per trial.
 *
 * Each representation keeps the arithmetic it had when the two were
 * separate loops, so that no number changed (tools/golden.py, both sets,
 * bit for bit).  The capping and mixing work on groups of equal
 * eigenvalues (n groups of one in the dense state, m + 1 in the clustered
 * one) through the shared helpers of logweights.h and cap.h.
 */
#include <stddef.h>

#include "learner.h"
#include "state_dense.h"

/* The workspace of one call of opf_learner_trials, split from s->work by
 * the state's split (each uses the fields its representation needs). */
typedef struct {
    /* dense: the capping hint (three doubles, must start zeroed; see
     * state_dense.c), capped weights of A, z, y, squared coordinates, the
     * copies share="past" keeps, cap and decompose scratch, dsyevr and the
     * rank-one update's work, the n x n matrices (NULL without them) */
    double *hint, *omega, *lam2, *lamsave, *omegasave, *capw, *evw;
    double *m1, *m2, *m3, *wprev, *qsave;
    /* clustered: coordinates in B and R, the small update's matrices and
     * vectors, r_B, the Haar scratch, the compression block */
    double *y2, *sv, *dsm, *xs, *tmp, *mult, *cw, *qsm, *rnew, *rb, *wexp,
        *haar, *blk;
    /* both */
    double *z, *y, *yc, *r1w, *decw;
    ptrdiff_t *corner, *deciw;
    ptrdiff_t m, nb; /* clustered: the trial's m and B's rows so far */
    double lc, wc;   /* clustered cap: the cluster's capped log-weight, weight */
} opf_ws;

/* The instance in the state's coordinates (coords): the rate's instance
 * size (an upper bound on x x^T's top eigenvalue: dense sum z_i^2,
 * clustered |x|^2) and, clustered, |x|^2 and its energies outside B's rows
 * (rr) and outside Q within them (ss). */
typedef struct {
    double size, xx, rr, ss;
} opf_coords;

/* The operations of one representation, in the order a trial takes them.
 * Only what the representation does is here: what the learner's kind
 * decides (which weights to draw from, which floor, when to merge) is
 * learner.c's, passed as an argument.  A slot left NULL has nothing to do
 * in that representation. */
struct opf_state_ops {
    /* self: the representation's arrays (state_dense.h, state_clustered.h),
     * opaque to the loop.  The workspace of one call, split from s->work */
    opf_ws (*split)(const opf_learner *s, const void *self);
    /* whether the learner's parameters are within the representation's
     * contract (opf_learner_trials returns OPF_EINVAL otherwise) */
    int (*valid)(const opf_learner *s, const void *self);
    /* before a trial: dense share="past" keeps W^{t-1} and the state aside
     * (OPF_EINTR: nothing changed); clustered: room for a row of B
     * (OPF_ECAPACITY) */
    int (*begin)(const opf_learner *s, void *self, opf_ws *w);
    /* z = Q^T x and its energies (x: the instance, or y = x - m^{t-1}) */
    void (*coords)(const opf_learner *s, void *self, opf_ws *w, const double *x,
                   opf_coords *c);
    /* cap(exp(log-weights)) into the workspace: W of the cumulative law
     * (WK Alg. 6), accurate at any level */
    int (*cap)(const opf_learner *s, void *self, opf_ws *w);
    /* the expected loss of W and the realized loss of a corner drawn from
     * it with u: W's weights are the state's own (capped 0) or those cap
     * left in the workspace (capped 1) */
    int (*draw)(const opf_learner *s, void *self, opf_ws *w, double u, int capped,
                const opf_coords *c, double *el, double *rl);
    /* the energy of x (coords) outside the k leading directions of the
     * ascending log-weights (Follow the Leader's loss) */
    double (*leader_loss)(const opf_learner *s, void *self, opf_ws *w, const double *x,
                          const opf_coords *c);
    /* log-weights - rho x x^T; on failure nothing changed */
    int (*update)(const opf_learner *s, void *self, opf_ws *w, double rho,
                  const double *x, const opf_coords *c);
    /* explicit entries that reached the cluster merge into it (ulps of
     * max(1, |mu_c|), or of |mu_c| with data_units: state_clustered.c) */
    void (*merge)(const opf_learner *s, void *self, opf_ws *w, int data_units);
    /* log tr exp of the updated log-weights (the rate's exact gap); NaN:
     * no weight to take it of (the clustered state before any direction) */
    double (*log_partition)(const opf_learner *s, const void *self,
                            const opf_ws *w);
    /* after the update, the state's own weights: log W *= gamma (the
     * rate's stabilised step), mixing, capping, the floor, the exponentials */
    int (*finish)(const opf_learner *s, void *self, opf_ws *w, ptrdiff_t t,
                  double gamma);
    /* log-weights *= gamma */
    void (*scale)(const opf_learner *s, void *self, opf_ws *w, double gamma);
    /* unnormalised log-weights (A): lift the level, floor `span` below the
     * top (logweights.h) */
    void (*settle)(const opf_learner *s, void *self, opf_ws *w, double span);
    /* MEG with an n x n matrix instance C (NULL: valid refuses matrix
     * instances): the corner drawn with u, the losses, the rate's step and
     * the eigensystem of log W - eta C */
    int (*matrix_update)(const opf_learner *s, void *self, opf_ws *w,
                         const double *x, double u, double *el, double *rl,
                         double *gamma, double *delta);
    /* state="auto": the trial left the state at its m_stop */
    int (*switch_due)(const opf_learner *s, const void *self);
    int poll_site; /* the before-a-trial poll site (interrupt.h) */
};

/* The dense state's finish, which the experts' trial shares (their
 * weights are the dense state's diagonal without a basis), and the
 * helpers on its arrays. */
int opf_dense_finish(const opf_learner *s, const opf_dense *ds, opf_ws *w,
                     ptrdiff_t t, double xmax, const double *step,
                     double *ymin);
void opf_keep_finite(double *lam, ptrdiff_t n, int ascending, int shift);
void opf_normalize_log(double *lam, ptrdiff_t n);

#endif
