/*
 * hodlr.c -- OUT = G S for the secular eigenvector matrix S, hierarchical.
 *
 * S (ks x K, K - ks in {0, 1}) has entries S(l, c) = what_l / (dlam_l -
 * lambda_c) / norm_c with interlacing poles dlam and roots lambda.  Split
 * rows at rm and columns at cm = rm (same offset): the upper-right block
 * (poles below rm, roots from cm) and the lower-left block are Cauchy
 * matrices of separated point sets, numerically of low rank r ~ log m.
 * Recursively, with leaves of at most OPF_HODLR_LEAF rows:
 *
 *     OUT[:, right] += (G[:, top] X) Y^T,   S[top, right] ~ X Y^T
 *     OUT[:, left]  += (G[:, bottom] X') Y'^T
 *
 * two thin GEMMs per block, so a level costs ~4 n m r flops and the whole
 * product ~4 n m r log2(m / leaf) + 2 n m leaf, against 2 n m^2 for one
 * GEMM.  Each block is compressed as it is applied (only one block's
 * factors are held) by adaptive cross approximation with partial pivoting
 * (Bebendorf 2000): the residual's row i*, its largest entry j*, the
 * residual's column j*, a rank-one term; the next row is the largest
 * entry of that column among the rows not used yet.  It stops when two
 * consecutive terms are below OPF_ACA_TOL times the Frobenius norm of the
 * approximation (updated exactly from the terms' inner products).  Cost
 * O((p + q) r^2) per p x q block, reading (p + q) r entries of S.
 *
 * The check: ACA's stopping test is a heuristic, so the residual of each
 * block is computed exactly on four rows spread over it and two columns
 * (O((p + q) r)); if any entry exceeds OPF_ACA_CHECK the whole product is
 * declined and the caller does the GEMM.  An approximation error e in S
 * perturbs the new eigenvectors by |G| |e|: the tolerances keep that at a
 * few eps, as the GEMM's own rounding.
 */
#include "hodlr.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define RMAX OPF_HODLR_RMAX
#define OPF_ACA_TOL (2.0 * DBL_EPSILON)
#define OPF_ACA_CHECK (64.0 * DBL_EPSILON)

#if defined(__GNUC__)
static int dense_flag;
void opf_set_dense_product(int on)
{
    __atomic_store_n(&dense_flag, on != 0, __ATOMIC_RELAXED);
}
int opf_dense_product(void)
{
    return __atomic_load_n(&dense_flag, __ATOMIC_RELAXED);
}
#else
static volatile int dense_flag;
void opf_set_dense_product(int on) { dense_flag = on != 0; }
int opf_dense_product(void) { return dense_flag; }
#endif

size_t opf_hodlr_work_len(ptrdiff_t nr, ptrdiff_t K)
{
    const size_t n = nr > 0 ? (size_t)nr : 0, k = K > 0 ? (size_t)K : 0;
    /* T (RMAX x nr), X and Y (k x RMAX each), used flags and a row */
    return RMAX * n + 2 * RMAX * k + 2 * k + 16;
}

typedef struct {
    const double *s;
    int lds;
    const double *g;
    int ldg, nr;
    double *out;
    int ldo;
    double *t, *x, *y, *used, *row;
    const opf_lapack *fns;
} hctx;

static double dot(const double *a, const double *b, int n)
{
    double s0 = 0.0, s1 = 0.0;
    int i = 0;
    for (; i + 2 <= n; i += 2) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
    }
    if (i < n)
        s0 += a[i] * b[i];
    return s0 + s1;
}

/* Residual of row i of the block (rows ra.., cols ca..ca+q) after r terms,
 * into y. */
static void resid_row(const hctx *h, int ra, int ca, int q, int p, int r,
                      int i, double *y)
{
    const double *s = h->s + (size_t)ca * h->lds + ra + i;
    for (int j = 0; j < q; j++)
        y[j] = s[(size_t)j * h->lds];
    for (int l = 0; l < r; l++) {
        const double a = h->x[(size_t)l * p + i];
        const double *yl = h->y + (size_t)l * q;
        if (a != 0.0)
            for (int j = 0; j < q; j++)
                y[j] -= a * yl[j];
    }
}

/* Residual of column j into x. */
static void resid_col(const hctx *h, int ra, int ca, int q, int p, int r,
                      int j, double *x)
{
    memcpy(x, h->s + (size_t)(ca + j) * h->lds + ra, (size_t)p * sizeof *x);
    for (int l = 0; l < r; l++) {
        const double b = h->y[(size_t)l * q + j];
        const double *xl = h->x + (size_t)l * p;
        if (b != 0.0)
            for (int i = 0; i < p; i++)
                x[i] -= xl[i] * b;
    }
}

/* ACA of the p x q block at (ra, ca): X (p x r) and Y (q x r), column-major
 * in h->x, h->y.  Returns r, or -1 (no convergence within RMAX terms, or
 * the check failed). */
static int aca(const hctx *h, int ra, int p, int ca, int q, int start)
{
    double fro2 = 0.0;
    int r = 0, i = start, small = 0, zero_rows = 0;
    for (int k = 0; k < p; k++)
        h->used[k] = 0.0;
    for (;;) {
        if (r == RMAX)
            return -1;
        double *y = h->y + (size_t)r * q, *x = h->x + (size_t)r * p;
        resid_row(h, ra, ca, q, p, r, i, y);
        h->used[i] = 1.0;
        int js = 0;
        double big = 0.0;
        for (int j = 0; j < q; j++)
            if (fabs(y[j]) > big) {
                big = fabs(y[j]);
                js = j;
            }
        if (!(big > DBL_MIN) || big * big <= 1e-4 * OPF_ACA_TOL * OPF_ACA_TOL * fro2) {
            /* this row is already represented: try the next unused one */
            int next = -1;
            for (int k = 1; k <= p && next < 0; k++) {
                const int c = (i + k) % p;
                if (h->used[c] == 0.0)
                    next = c;
            }
            if (next < 0 || ++zero_rows > 2)
                break;
            i = next;
            continue;
        }
        zero_rows = 0;
        resid_col(h, ra, ca, q, p, r, js, x);
        const double inv = 1.0 / y[js];
        for (int k = 0; k < p; k++)
            x[k] *= inv;
        const double nx2 = dot(x, x, p), ny2 = dot(y, y, q);
        double cross = 0.0;
        for (int l = 0; l < r; l++)
            cross += dot(h->x + (size_t)l * p, x, p)
                     * dot(h->y + (size_t)l * q, y, q);
        fro2 += 2.0 * cross + nx2 * ny2;
        r++;
        if (nx2 * ny2 <= OPF_ACA_TOL * OPF_ACA_TOL * fro2) {
            if (++small >= 2)
                break;
        } else {
            small = 0;
        }
        int next = -1;
        double bx = -1.0;
        for (int k = 0; k < p; k++)
            if (h->used[k] == 0.0 && fabs(x[k]) > bx) {
                bx = fabs(x[k]);
                next = k;
            }
        if (next < 0)
            break;
        i = next;
    }
    /* the check: exact residuals on four rows and two columns */
    const int rows[4] = {0, p / 3, (2 * p) / 3, p - 1};
    for (int c = 0; c < 4; c++) {
        resid_row(h, ra, ca, q, p, r, rows[c], h->row);
        for (int j = 0; j < q; j++)
            if (!(fabs(h->row[j]) <= OPF_ACA_CHECK))
                return -1;
    }
    const int cols[2] = {q / 4, (3 * q) / 4};
    for (int c = 0; c < 2; c++) {
        /* h->row has room for max(p, q) doubles */
        resid_col(h, ra, ca, q, p, r, cols[c], h->row);
        for (int k = 0; k < p; k++)
            if (!(fabs(h->row[k]) <= OPF_ACA_CHECK))
                return -1;
    }
    return r;
}

/* OUT[:, ca..ca+q) += G[:, ra..ra+p) S[ra.., ca..] by ACA: returns 0 if
 * the block declined. */
static int apply_lowrank(const hctx *h, int ra, int p, int ca, int q,
                         int start)
{
    const int r = aca(h, ra, p, ca, q, start);
    if (r < 0)
        return 0;
    if (r == 0)
        return 1;
    char nt = 'N', tr = 'T';
    double one = 1.0, zero = 0.0;
    int nr = h->nr, ldg = h->ldg, ldo = h->ldo, rr = r;
    /* column-major: T (r x nr) = X^T (r x p) G[:, ra..]^T (p x nr) */
    h->fns->dgemm(&tr, &nt, &rr, &nr, &p, &one, h->x, &p,
                  (double *)h->g + ra, &ldg, &zero, h->t, &rr);
    /* OUT[:, ca..]^T (q x nr) += Y (q x r) T (r x nr) */
    h->fns->dgemm(&nt, &nt, &q, &nr, &rr, &one, h->y, &q, h->t, &rr, &one,
                  h->out + ca, &ldo);
    return 1;
}

static int product(const hctx *h, int ra, int rb, int ca, int cb)
{
    const int p = rb - ra, q = cb - ca;
    if (p <= OPF_HODLR_LEAF || q <= OPF_HODLR_LEAF) {
        char nt = 'N', tr = 'T';
        double one = 1.0;
        int nr = h->nr, ldg = h->ldg, ldo = h->ldo, lds = h->lds;
        /* OUT[:, ca..]^T (q x nr) += S[ra.., ca..]^T (q x p) G^T (p x nr) */
        h->fns->dgemm(&tr, &nt, &q, &nr, &p, &one,
                      (double *)h->s + (size_t)ca * lds + ra, &lds,
                      (double *)h->g + ra, &ldg, &one, h->out + ca, &ldo);
        return 1;
    }
    const int rm = ra + p / 2, cm = ca + p / 2;
    /* poles of the top half against roots of the right half: the largest
     * entries sit next to the diagonal, at the top half's last row */
    return apply_lowrank(h, ra, rm - ra, cm, cb - cm, rm - ra - 1)
           && apply_lowrank(h, rm, rb - rm, ca, cm - ca, 0)
           && product(h, ra, rm, ca, cm) && product(h, rm, rb, cm, cb);
}

int opf_hodlr_product(int nr, int ks, int K, const double *s, int lds,
                      const double *g, int ldg, double *out, int ldo,
                      double *work, const opf_lapack *fns)
{
    if (K - ks < 0 || K - ks > 1 || ks < 2 * OPF_HODLR_LEAF || nr < 1)
        return 0;
    hctx h;
    h.s = s;
    h.lds = lds;
    h.g = g;
    h.ldg = ldg;
    h.nr = nr;
    h.out = out;
    h.ldo = ldo;
    h.fns = fns;
    h.t = work;
    h.x = h.t + (size_t)RMAX * nr;
    h.y = h.x + (size_t)RMAX * K;
    h.used = h.y + (size_t)RMAX * K;
    h.row = h.used + K;
    for (int i = 0; i < nr; i++)
        memset(out + (size_t)i * ldo, 0, (size_t)K * sizeof *out);
    return product(&h, 0, ks, 0, K);
}
