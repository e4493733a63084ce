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
 * GEMM.  All blocks are compressed first (their factors, O(m r log m)
 * doubles, are kept), then applied to chunks of CHUNK rows of G, so that
 * each chunk of OUT stays in cache across all levels (one pass over G and
 * OUT instead of one per level).  Compression is by adaptive cross
 * approximation (Bebendorf 2000) with rook pivoting: the residual's row
 * i*, its largest entry j*, the residual's column j*; while that column
 * has a larger entry, move to its row (and that row's largest entry), so
 * that the pivot is the largest of its row and column, |x| <= 1 and the
 * terms cannot grow and cancel; a rank-one term; the next row is the
 * largest entry of the last column among the rows not pivoted yet.  It
 * stops when two consecutive terms are below OPF_ACA_TOL times the
 * Frobenius norm of the approximation (updated exactly from the terms'
 * inner products).  Cost O((p + q) r^2) per p x q block, reading
 * O((p + q) r) entries of S.
 *
 * The check: ACA's stopping test is a heuristic (pivoting can stop while
 * rows it never visited are not represented), so when it holds the
 * residual is computed exactly on eight rows spread over the block (every
 * row of a block of at most 16) and four columns (O((p + q) r)); an entry
 * above OPF_ACA_CHECK restarts the pivoting from that row (at most
 * OPF_ACA_RESTARTS times), after which the whole product is declined and
 * the caller does the GEMM.  An approximation error e in S perturbs the
 * new eigenvectors by |G| |e|: the tolerances keep that at a few eps, as
 * the GEMM's own rounding (measured: within 5e-16 of the GEMM's
 * eigenvectors; after 10^4 updates the same orthogonality, ~2e-14).
 */
#include "hodlr.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define RMAX OPF_HODLR_RMAX
#define OPF_ACA_TOL (2.0 * DBL_EPSILON)
#define OPF_ACA_CHECK (16.0 * DBL_EPSILON)

/* Test and tuning knobs (opf_hodlr_tune); the defaults are the header's. */
static int hodlr_min = OPF_HODLR_MIN, hodlr_leaf = OPF_HODLR_LEAF;
static int hodlr_decline;

void opf_hodlr_tune(int min_order, int leaf, int decline)
{
    if (min_order >= 0)
        hodlr_min = min_order;
    if (leaf >= OPF_HODLR_LEAF_MIN)
        hodlr_leaf = leaf;
    if (decline >= 0)
        hodlr_decline = decline;
}

static long long hodlr_done; /* structured products, process-wide */

long long opf_hodlr_count(void)
{
#if defined(__GNUC__)
    return __atomic_load_n(&hodlr_done, __ATOMIC_RELAXED);
#else
    return hodlr_done;
#endif
}

void opf_hodlr_tuning(int *min_order, int *leaf, int *decline)
{
    *min_order = hodlr_min;
    *leaf = hodlr_leaf;
    *decline = hodlr_decline;
}

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

/* Rows of G (and OUT) per chunk of the apply phase, at most: the chunk
 * of OUT and the terms T of every block for it stay in cache across the
 * chunk's GEMMs. */
#define CHUNK 256
/* Ancestors a leaf can have (levels of a hierarchy of an int order). */
#define MAXLV 32

typedef struct {
    int ra, p, ca, q, r;
    size_t off;  /* X at f + off (p x r), Y right after it (q x r) */
    size_t toff; /* its r rows in T (nt x nc) */
} blk;

/* A leaf: its diagonal block, and the blocks of every level above it that
 * hold its rows (rowb) and its columns (colb), their terms gathered: X's
 * rows of the leaf side by side in XC (p x rx), Y's in YC (q x ry). */
typedef struct {
    int ra, p, ca, q, depth, rx, ry;
    size_t xoff, yoff;
    int rowb[MAXLV], colb[MAXLV];
} leafrec;

int opf_hodlr_min(void) { return hodlr_min; }

int opf_structured_product(ptrdiff_t ks)
{
    return ks >= hodlr_min && !opf_dense_product();
}

/* Sized for the smallest leaf a tuning may set. */
static int levels_of(ptrdiff_t K)
{
    int lv = 0;
    for (ptrdiff_t p = K; p > OPF_HODLR_LEAF_MIN; p = (p + 1) / 2)
        lv++;
    return lv;
}

static size_t max_blocks(ptrdiff_t K)
{
    return 4 * (size_t)(K / OPF_HODLR_LEAF_MIN + 1) + 16;
}

#define DOUBLES_OF(type) ((sizeof(type) + sizeof(double) - 1) / sizeof(double))

/* The factors' area: each level's blocks cover every row and column once
 * (at most 2 K RMAX doubles a level, + RMAX^2 per block for the rounding
 * of the halves); the gathered copies XC / YC take as much again as the
 * factors actually use (the product declines if they do not fit). */
static size_t factor_cap(ptrdiff_t K)
{
    return (size_t)(levels_of(K) + 1) * 2 * (size_t)K * RMAX
           + max_blocks(K) * RMAX;
}

/* T and one GEMM's scratch for a chunk: CHUNK rows of up to 2 K + 64
 * terms (the chunk is made shorter if the blocks have more). */
static size_t t_cap(ptrdiff_t K) { return (size_t)CHUNK * (2 * (size_t)K + 64); }

size_t opf_hodlr_work_len(ptrdiff_t nr, ptrdiff_t K)
{
    const size_t k = K > 0 ? (size_t)K : 0;
    const size_t nb = max_blocks(K);
    (void)nr;
    /* block and leaf descriptors, factors, T, used flags and a row */
    return nb * DOUBLES_OF(blk) + (nb / 2 + 2) * DOUBLES_OF(leafrec)
           + factor_cap(K) + t_cap(K) + 2 * k + 16;
}

typedef struct {
    const double *s;
    int lds;
    double *x, *y, *used, *row; /* the current block's factors, scratch */
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

/* The check of an approximation: exact residuals on OPF_ACA_ROWS rows
 * and OPF_ACA_COLS columns spread over the block.  Returns -1 if all are
 * within OPF_ACA_CHECK, else a row to continue the approximation from
 * (the failing row, or the largest entry of a failing column). */
#define OPF_ACA_ROWS 8
#define OPF_ACA_COLS 4
static int check(const hctx *h, int ra, int p, int ca, int q, int r)
{
    /* small blocks: every row */
    const int nrows = p <= 2 * OPF_ACA_ROWS ? p : OPF_ACA_ROWS;
    for (int c = 0; c < nrows; c++) {
        const int i = nrows == p ? c
                                 : (int)(((long long)(p - 1) * c) / (OPF_ACA_ROWS - 1));
        resid_row(h, ra, ca, q, p, r, i, h->row);
        for (int j = 0; j < q; j++)
            if (!(fabs(h->row[j]) <= OPF_ACA_CHECK))
                return i;
    }
    for (int c = 0; c < OPF_ACA_COLS; c++) {
        const int j = (int)(((long long)(q - 1) * (2 * c + 1)) / (2 * OPF_ACA_COLS));
        /* h->row has room for max(p, q) doubles */
        resid_col(h, ra, ca, q, p, r, j, h->row);
        int worst = -1;
        double big = OPF_ACA_CHECK;
        for (int k = 0; k < p; k++)
            if (!(fabs(h->row[k]) <= big)) {
                big = fabs(h->row[k]);
                worst = k;
                if (isnan(big))
                    return -2;
            }
        if (worst >= 0)
            return worst;
    }
    return -1;
}

/* ACA of the p x q block at (ra, ca): X (p x r) and Y (q x r), column-major
 * in h->x, h->y.  When the stopping rule holds the approximation is
 * checked (see check); a failing row restarts the pivoting there, up to
 * OPF_ACA_RESTARTS times.  Returns r, or -1 (more than RMAX terms, too
 * many restarts, or a NaN). */
#define OPF_ACA_RESTARTS 8
static int aca(const hctx *h, int ra, int p, int ca, int q, int start)
{
    double fro2 = 0.0;
    int r = 0, i = start, small = 0, zero_rows = 0, restarts = 0;
    for (int k = 0; k < p; k++)
        h->used[k] = 0.0;
    for (;;) {
        if (r == RMAX)
            return -1;
        double *y = h->y + (size_t)r * q, *x = h->x + (size_t)r * p;
        resid_row(h, ra, ca, q, p, r, i, y);
        int js = 0, stop = 0;
        double big = 0.0;
        for (int j = 0; j < q; j++)
            if (fabs(y[j]) > big) {
                big = fabs(y[j]);
                js = j;
            }
        if (!(big > OPF_ACA_CHECK * 1e-3)) {
            /* this row is already represented: try the next unused one */
            h->used[i] = 1.0;
            int next = -1;
            for (int k = 1; k <= p && next < 0; k++) {
                const int c = (i + k) % p;
                if (h->used[c] == 0.0)
                    next = c;
            }
            if (next < 0 || ++zero_rows > 2) {
                stop = 1;
            } else {
                i = next;
                continue;
            }
        } else {
            zero_rows = 0;
            resid_col(h, ra, ca, q, p, r, js, x);
            /* rook pivoting: move to an entry that is the largest of both
             * its row and its column, so that |x| <= 1 and the terms
             * cannot grow and cancel */
            for (int step = 0; step < 8; step++) {
                int is = i;
                double bc = fabs(y[js]);
                for (int k = 0; k < p; k++)
                    if (fabs(x[k]) > bc) {
                        bc = fabs(x[k]);
                        is = k;
                    }
                if (is == i)
                    break;
                i = is;
                resid_row(h, ra, ca, q, p, r, i, y);
                int jn = js;
                double br = fabs(y[js]);
                for (int j = 0; j < q; j++)
                    if (fabs(y[j]) > br) {
                        br = fabs(y[j]);
                        jn = j;
                    }
                if (jn == js)
                    break;
                js = jn;
                resid_col(h, ra, ca, q, p, r, js, x);
            }
            h->used[i] = 1.0; /* the pivot row: its residual is now 0 */
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
            if (nx2 * ny2 <= OPF_ACA_TOL * OPF_ACA_TOL * fro2)
                stop = ++small >= 2;
            else
                small = 0;
            if (!stop) {
                int next = -1;
                double bx = -1.0;
                for (int k = 0; k < p; k++)
                    if (h->used[k] == 0.0 && fabs(x[k]) > bx) {
                        bx = fabs(x[k]);
                        next = k;
                    }
                if (next < 0)
                    stop = 1;
                else
                    i = next;
            }
        }
        if (stop) {
            const int bad = check(h, ra, p, ca, q, r);
            if (bad == -1)
                return r;
            if (bad < -1 || ++restarts > OPF_ACA_RESTARTS)
                return -1;
            i = bad;
            small = zero_rows = 0;
        }
    }
}

/* The hierarchy being built: blocks and leaves, the factors' area. */
typedef struct {
    hctx h;
    blk *blocks;
    leafrec *leaves;
    size_t nb, nbmax, nl, nlmax;
    double *f;
    size_t fused, fcap;
    int rowb[MAXLV], colb[MAXLV]; /* the current path's blocks */
} plan;

/* ACA of one off-diagonal block into the factors' area; its index, or -1
 * if it declined or the capacity is exhausted. */
static int compress(plan *pl, int ra, int p, int ca, int q, int start)
{
    /* the factors go straight to their place: room for RMAX terms */
    if (pl->nb >= pl->nbmax || pl->fused + (size_t)(p + q) * RMAX > pl->fcap)
        return -1;
    pl->h.x = pl->f + pl->fused;
    pl->h.y = pl->h.x + (size_t)p * RMAX;
    const int r = aca(&pl->h, ra, p, ca, q, start);
    if (r < 0)
        return -1;
    /* compact: Y (q x r) right after X (p x r) */
    memmove(pl->h.x + (size_t)p * r, pl->h.y, (size_t)q * r * sizeof(double));
    blk *d = pl->blocks + pl->nb;
    d->ra = ra;
    d->p = p;
    d->ca = ca;
    d->q = q;
    d->r = r;
    d->off = pl->fused;
    pl->fused += (size_t)(p + q) * r;
    return (int)pl->nb++;
}

/* Phase 1: compress the two off-diagonal blocks of the node (rows ra..rb,
 * columns ca..cb) at depth `depth`, recursively, recording each leaf with
 * the blocks above it.  Returns 0 if one declined or the capacity is
 * exhausted. */
static int build(plan *pl, int ra, int rb, int ca, int cb, int depth)
{
    const int p = rb - ra, q = cb - ca;
    if (p <= hodlr_leaf || q <= hodlr_leaf) {
        if (pl->nl >= pl->nlmax)
            return 0;
        leafrec *L = pl->leaves + pl->nl++;
        L->ra = ra;
        L->p = p;
        L->ca = ca;
        L->q = q;
        L->depth = depth;
        memcpy(L->rowb, pl->rowb, (size_t)depth * sizeof(int));
        memcpy(L->colb, pl->colb, (size_t)depth * sizeof(int));
        return 1;
    }
    if (depth >= MAXLV)
        return 0;
    const int rm = ra + p / 2, cm = ca + p / 2;
    /* upper right: poles of the top half, roots of the right half; lower
     * left: the others */
    const int ur = compress(pl, ra, rm - ra, cm, cb - cm, rm - ra - 1);
    const int ll = ur < 0 ? -1 : compress(pl, rm, rb - rm, ca, cm - ca, 0);
    if (ll < 0)
        return 0;
    /* the first child's rows are the upper right block's, its columns the
     * lower left's; the second child's the other way round */
    pl->rowb[depth] = ur;
    pl->colb[depth] = ll;
    if (!build(pl, ra, rm, ca, cm, depth + 1))
        return 0;
    pl->rowb[depth] = ll;
    pl->colb[depth] = ur;
    return build(pl, rm, rb, cm, cb, depth + 1);
}

/* Gather each leaf's rows of the X above it into XC (p x rx) and its
 * columns' rows of the Y into YC (q x ry), after the factors; give each
 * block its rows in T.  Returns the rows of T, or -1 if XC / YC do not
 * fit. */
static long long gather(plan *pl)
{
    size_t nt = 0;
    for (size_t b = 0; b < pl->nb; b++) {
        pl->blocks[b].toff = nt;
        nt += (size_t)pl->blocks[b].r;
    }
    /* XC and YC hold every factor entry once: as much as the factors */
    if (2 * pl->fused > pl->fcap)
        return -1;
    size_t at = pl->fused;
    for (size_t l = 0; l < pl->nl; l++) {
        leafrec *L = pl->leaves + l;
        L->xoff = at;
        L->rx = 0;
        for (int a = 0; a < L->depth; a++) {
            const blk *d = pl->blocks + L->rowb[a];
            const double *x = pl->f + d->off + (L->ra - d->ra);
            for (int t = 0; t < d->r; t++, at += (size_t)L->p)
                memcpy(pl->f + at, x + (size_t)t * d->p,
                       (size_t)L->p * sizeof(double));
            L->rx += d->r;
        }
        L->yoff = at;
        L->ry = 0;
        for (int a = 0; a < L->depth; a++) {
            const blk *d = pl->blocks + L->colb[a];
            const double *y = pl->f + d->off + (size_t)d->p * d->r
                              + (L->ca - d->ca);
            for (int t = 0; t < d->r; t++, at += (size_t)L->q)
                memcpy(pl->f + at, y + (size_t)t * d->q,
                       (size_t)L->q * sizeof(double));
            L->ry += d->r;
        }
    }
    return (long long)nt;
}

/*
 * Phase 2, one chunk of nc rows of G and OUT (column-major: G^T is ks x nc
 * with ld ldg, OUT^T K x nc with ld ldo).  Per leaf, two GEMMs of width
 * the terms of all its levels at once, not one pair per block:
 *   (a) rows: W (rx x nc) = XC^T G^T[leaf rows], added into each block's
 *       rows of T = X^T G^T (nt x nc) -- the leaves of a block in order;
 *   (b) columns: OUT^T[leaf cols] = S[leaf]^T G^T[leaf rows]
 *       + YC (T's rows of the leaf's column blocks, gathered into W).
 */
static void apply_chunk(const plan *pl, const double *s, int lds, int nc,
                        const double *g, int ldg, double *out, int ldo,
                        double *t, int nt, double *w, const opf_lapack *fns)
{
    char nt_ = 'N', tr = 'T';
    double one = 1.0, zero = 0.0;
    int ncc = nc, ldgg = ldg, ldoo = ldo, ldss = lds;
    for (size_t l = 0; l < pl->nl; l++) {
        const leafrec *L = pl->leaves + l;
        int rx = L->rx, p = L->p;
        if (rx == 0)
            continue;
        fns->dgemm(&tr, &nt_, &rx, &ncc, &p, &one, pl->f + L->xoff, &p,
                   (double *)g + L->ra, &ldgg, &zero, w, &rx);
        int o = 0;
        for (int a = 0; a < L->depth; a++) {
            const blk *d = pl->blocks + L->rowb[a];
            const int r = d->r;
            double *tb = t + d->toff;
            const double *wb = w + o;
            if (L->ra == d->ra) /* the block's first leaf */
                for (int j = 0; j < nc; j++)
                    memcpy(tb + (size_t)j * nt, wb + (size_t)j * rx,
                           (size_t)r * sizeof(double));
            else
                for (int j = 0; j < nc; j++) {
                    double *tj = tb + (size_t)j * nt;
                    const double *wj = wb + (size_t)j * rx;
                    for (int k = 0; k < r; k++)
                        tj[k] += wj[k];
                }
            o += r;
        }
    }
    for (size_t l = 0; l < pl->nl; l++) {
        const leafrec *L = pl->leaves + l;
        int p = L->p, q = L->q, ry = L->ry;
        /* OUT^T[ca..] (q x nc) = S[ra.., ca..]^T (q x p) G^T (p x nc) */
        fns->dgemm(&tr, &nt_, &q, &ncc, &p, &one,
                   (double *)s + (size_t)L->ca * lds + L->ra, &ldss,
                   (double *)g + L->ra, &ldgg, &zero, out + L->ca, &ldoo);
        if (ry == 0)
            continue;
        int o = 0;
        for (int a = 0; a < L->depth; a++) {
            const blk *d = pl->blocks + L->colb[a];
            const double *tb = t + d->toff;
            for (int j = 0; j < nc; j++)
                memcpy(w + (size_t)j * ry + o, tb + (size_t)j * nt,
                       (size_t)d->r * sizeof(double));
            o += d->r;
        }
        /* OUT^T[ca..] (q x nc) += YC (q x ry) W (ry x nc) */
        fns->dgemm(&nt_, &nt_, &q, &ncc, &ry, &one, pl->f + L->yoff, &q, w,
                   &ry, &one, out + L->ca, &ldoo);
    }
}

int opf_hodlr_product(int nr, int ks, int K, const double *s, int lds,
                      const double *g, int ldg, double *out, int ldo,
                      double *work, const opf_lapack *fns)
{
    if (K - ks < 0 || K - ks > 1 || ks < 2 * hodlr_leaf || nr < 1
        || hodlr_decline)
        return 0;
    plan pl;
    pl.nbmax = max_blocks(K);
    pl.nlmax = pl.nbmax / 2 + 2;
    pl.blocks = (blk *)work;
    pl.leaves = (leafrec *)(work + pl.nbmax * DOUBLES_OF(blk));
    pl.f = work + pl.nbmax * DOUBLES_OF(blk) + pl.nlmax * DOUBLES_OF(leafrec);
    pl.fcap = factor_cap(K);
    pl.nb = pl.nl = pl.fused = 0;
    double *t = pl.f + pl.fcap;
    const size_t tcap = t_cap(K);
    pl.h.s = s;
    pl.h.lds = lds;
    pl.h.used = t + tcap;
    pl.h.row = pl.h.used + K;
    if (!build(&pl, 0, ks, 0, K, 0))
        return 0;
    const long long nt = gather(&pl);
    if (nt < 0)
        return 0;
    /* the widest GEMM scratch W: a leaf's rx or ry */
    int wmax = 1;
    for (size_t l = 0; l < pl.nl; l++) {
        wmax = pl.leaves[l].rx > wmax ? pl.leaves[l].rx : wmax;
        wmax = pl.leaves[l].ry > wmax ? pl.leaves[l].ry : wmax;
    }
    /* rows per chunk: CHUNK, fewer if T and W need more room */
    size_t chunk = tcap / ((size_t)nt + (size_t)wmax);
    chunk = chunk < CHUNK ? chunk : CHUNK;
    if (chunk < 1)
        return 0;
    double *w = t + (size_t)nt * chunk;
    for (int i0 = 0; i0 < nr; i0 += (int)chunk) {
        const int nc = nr - i0 < (int)chunk ? nr - i0 : (int)chunk;
        apply_chunk(&pl, s, lds, nc, g + (size_t)i0 * ldg, ldg,
                    out + (size_t)i0 * ldo, ldo, t, (int)(nt > 0 ? nt : 1), w,
                    fns);
    }
#if defined(__GNUC__)
    __atomic_add_fetch(&hodlr_done, 1, __ATOMIC_RELAXED);
#else
    hodlr_done++;
#endif
    return 1;
}
