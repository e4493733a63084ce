#ifndef OPF_SECULAR_H
#define OPF_SECULAR_H

/*
 * Internal: the pieces of a Gu-Eisenstat eigen-update shared by
 * rank_one_update.c (Q diag(d) Q^T + rho x x^T) and bordered_update.c
 * ([[A, y], [y^T, kappa]]).  Not a public API; see secular.c and
 * secular_roots.c.
 *
 *   opf_sec_layout    the caller's workspace cut into named arrays
 *   opf_sec_deflate   dlaed2/dlaed8 deflation (reflectors, rotations,
 *                     small components) of a diagonal-plus-vector system
 *   opf_sec_solve     roots and Loewner eigenvectors of a rank-one secular
 *                     equation (dlaed4, bisection fallback)
 *   opf_sec_syevr     dsyevr of an explicitly formed block (last resort)
 *   opf_sec_merge     new and deflated eigenvalues into ascending order
 *   opf_sec_vectors   one GEMM of the non-deflated columns, and the
 *                     deflated columns put in place
 *
 * "Working order": index k of the working arrays is column COL(k) of q,
 * COL(k) = k for sg > 0 and nr - 1 - k for sg < 0 (a rank-one update with
 * rho < 0 works on the negated, reversed eigenvalues).
 */

#include <stddef.h>

#include "common.h"
#include "hodlr.h"

/* Pointers into the caller's workspace (n = the largest order). */
typedef struct {
    double *zq;     /* n: Q^T x (or Q^T y), original order */
    double *u;      /* n: unit vector in working order, deflation-altered */
    double *dw;     /* n: eigenvalues in working order, rotation-altered */
    double *dlam;   /* n: poles of the secular equation, scaled */
    double *w;      /* n: its unit weight vector */
    double *lam;    /* n: its roots, then the new eigenvalues */
    double *what;   /* n: Loewner weights */
    double *dd;     /* n: poles shifted to the bisection origin */
    double *tmp;    /* n: one row of Q in working order */
    double *defval; /* n: deflated eigenvalues, sorted */
    double *rc;     /* n: rotation cosines */
    double *rs;     /* n: rotation sines */
    double *hv;     /* n: Householder vectors, packed */
    double *hbeta;  /* n: their 2 / (v^T v) */
    double *syw;    /* 26 n + 1: dsyevr work */
    double *big;    /* 2 n^2: secular eigenvectors S, then gathers */
    size_t nbig;    /* 2 n^2 */
    int *nd;        /* n: working index of each non-deflated pair */
    int *df;        /* n: working index of each deflated pair, sorted */
    int *rp, *rj;   /* rotations act on working columns (rp, rj) */
    int *hidx;      /* n: working columns of each reflector, packed */
    int *hoff;      /* n + 1: reflector h spans hidx[hoff[h] .. hoff[h+1]) */
    int *hfirst;    /* n: its first column if its columns are contiguous */
    int *onew;      /* n: output column of each new eigenvector */
    int *odf;       /* n: output column of each deflated eigenvector */
    int *mark;      /* n: flags per working index */
    int *list;      /* n: working indices a row pass loads */
    int *isuppz;    /* 2 n: dsyevr; later the deflated columns to move */
    int *syiw;      /* 10 n: dsyevr iwork */
    double *hw;     /* opf_hodlr_work_len(n + 1, n + 1): hodlr.c */
    int hier;       /* the product's path, decided once by the caller:
                       1 hierarchical, 0 GEMM, -1 (the layout's) ask
                       opf_structured_product(fns->tune) when it runs */
    ptrdiff_t n_structured;        /* products done by hodlr.c */
    ptrdiff_t n_product_fallbacks; /* products it declined (then GEMM) */
} opf_sec_ws;

/* Workspace for orders up to n: doubles 2 n^2 + 40 n + 26 +
 * opf_hodlr_work_len(n + 1, n + 1), ints 23 n + 10. */
size_t opf_sec_work_len(ptrdiff_t n);
size_t opf_sec_iwork_len(ptrdiff_t n);
void opf_sec_layout(ptrdiff_t n, double *work, int *iwork, opf_sec_ws *s);

/* What a deflation produced. */
typedef struct {
    int k;    /* non-deflated pairs: ws->nd[0..k), ascending */
    int ndf;  /* deflated pairs: ws->df / ws->defval[0..ndf), sorted */
    int nh;   /* Householder reflectors (exact ties) */
    int nhv;  /* their total length */
    int nrot; /* Givens rotations (near ties) */
} opf_sec_defl;

/*
 * Deflate the system diag(dw) + coupling through zs * u (dw ascending in
 * working order, u of unit norm, zs > 0 its scale): a component with
 * zs |u_k| <= tol leaves (dw_k, column k) as an eigenpair; each run of
 * exactly equal dw with c >= 2 components above tol is merged by one
 * Householder reflector; a nearly equal pair (prev, k) by a Givens rotation
 * when the off-diagonal entry it discards, |(dw_k - dw_prev) c s|, is
 * <= tol.  Overwrites ws->u and ws->dw accordingly.
 */
void opf_sec_deflate(int n, double zs, double tol, opf_sec_ws *ws,
                     opf_sec_defl *df);

/*
 * Eigenpairs of diag(dlam) + rho w w^T (m >= 2, dlam strictly ascending,
 * rho > 0, |w| = 1) by dlaed4 per root (bisection on the root's interval
 * when dlaed4 fails its checks, or always with OPF_FORCE_BISECTION),
 * eigenvectors by the Loewner formula: roots ascending in ws->lam, unit
 * eigenvectors in the columns of s (m x m, column-major).  Counts dlaed4
 * failures and bisection roots.  If reverse, s is written as the whole
 * array reversed (opf_reverse(s, m * m), fused into the Loewner pass).
 * Returns 1 on success, 0 if a root or the Loewner weights could not be
 * found (s then holds no result, possibly partly reversed; the caller
 * uses opf_sec_syevr).
 */
int opf_sec_solve(int m, const double *dlam, const double *w, double rho,
                  opf_sec_ws *ws, double *s, const opf_lapack *fns,
                  int flags, int reverse, ptrdiff_t *n_dlaed4_failures,
                  ptrdiff_t *n_bisection);

/* a[t] <-> a[len - 1 - t]: with len = m^2, an m x m array's rows and
 * columns in the opposite order (the rank-one update's rho < 0 for the
 * hierarchical product, which opf_sec_solve does when told to reverse). */
void opf_reverse(double *a, size_t len);

/*
 * dsyevr of the symmetric m x m matrix whose lower triangle is in a
 * (column-major, destroyed): eigenvalues ascending in lam, unit
 * eigenvectors in the columns of s.  Returns 1 on success.
 */
int opf_sec_syevr(int m, double *a, double *lam, double *s,
                  const opf_sec_ws *ws, const opf_lapack *fns);

/*
 * Merge K new eigenvalues lam (ascending) with the ndf deflated ones
 * (ws->defval, ascending) into d[0..K+ndf): the p-th smallest (deflated
 * first on ties) goes to d[COL(p)] as sg * value.  Records the output
 * column of new vector c in ws->onew[c] and of deflated pair j in
 * ws->odf[j].
 */
void opf_sec_merge(int K, const double *lam, int ndf, int sg, double *d,
                   opf_sec_ws *ws);

/*
 * Write the eigenvectors into rows 0..nr-1 of q (row-major, ldq; the old
 * Q is nr x nr there, in working order through COL).  New vector c
 * (c < K) = sum_l S[c lds + l] * (working column nd[l] after deflation),
 * l < ks, goes to column onew[c]; deflated pair j (working column df[j]
 * after deflation) to column odf[j].  One GEMM.  The output has K + ndf
 * columns (nr for a rank-one update, nr + 1 for a bordered one, whose
 * last row the caller writes).  If nothing was deflated (ndf == 0) the
 * caller guarantees onew[c] == c, nd[l] == l and ks == nr.  S lies in the
 * first big_used doubles of ws->big, which are kept; the rest of ws->big
 * is scratch for the gathered columns (and the GEMM's output).
 */
void opf_sec_vectors(int nr, int ks, int K, const double *S, int lds,
                     int sg, const opf_sec_defl *df, double *q, int ldq,
                     opf_sec_ws *ws, size_t big_used,
                     const opf_lapack *fns);

#endif
