/*
 * hodlr.c -- OUT = G S for the secular eigenvector matrix S, hierarchical.
 *
 * S (ks x K, K - ks in {0, 1}) has entries S(l, c) = what_l / (dlam_l -
 * lambda_c) / norm_c with interlacing poles dlam and roots lambda.  Split
 * rows at rm and columns at cm = rm (same offset): the upper-right block
 * (poles below rm, roots from cm) and the lower-left block are Cauchy
 * matrices of separated point sets, numerically of low rank r ~ log m.
 * Recursively, with leaves of at most tune.leaf rows:
 *
 *     OUT[:, right] += (G[:, top] X) Y^T,   S[top, right] ~ X Y^T
 *     OUT[:, left]  += (G[:, bottom] X') Y'^T
 *
 * so a level costs ~4 n m r flops and the whole product ~4 n m r
 * log2(m / leaf) + 2 n m leaf, against 2 n m^2 for one GEMM.
 *
 * Two phases.  First every off-diagonal block is compressed (its factors,
 * O(m r log m) doubles, are kept in the workspace), so that a block that
 * cannot be compressed declines the whole product before anything is
 * written.  Then the factors are applied to chunks of rows of G, each
 * chunk of OUT staying in the last-level cache while every block is added
 * into it; each row of OUT depends on its own row of G only, so the chunks
 * do not change the numbers, and OUT may be G itself (each leaf's GEMM
 * reads its columns of G before they are written).  A pool's threads
 * (pool.h) share the blocks (compressed in slots, then moved together in
 * a fixed order) and the chunks (the same for any number of threads, each
 * thread with its own T and W): the threads change no bit.
 *
 * The application is one GEMM per leaf and one per block.  The leaf's: its
 * block of S and its rows of the X factors of every block above it,
 * stacked (q + ~levels r columns), times the leaf's rows of G -- the first
 * q rows of the result are the leaf's columns of OUT, the rest are added
 * into each block's T = G[:, rows] X (the leaves partition a block's
 * rows).  The block's: OUT[:, cols] += T Y^T.  Stacking is why: a GEMM only
 * r wide per block and level would pack each row of G for the BLAS once
 * per level, and such narrow shapes run at a fraction of the BLAS's rate;
 * with the leaf's block of S in the same GEMM G is read once and OUT needs
 * no zeroing.
 *
 * Compression is by adaptive cross approximation (Bebendorf 2000) with
 * rook pivoting, which reads O((p + q) r) entries of a p x q block and
 * costs O((p + q) r^2), where an SVD would cost O(p q min(p, q)): the
 * residual's row i*, its largest entry j*, the residual's column j*; while
 * that column has a larger entry, move to its row (and that row's largest
 * entry), so that the pivot is the largest of its row and column, |x| <= 1
 * and the terms cannot grow and cancel; a rank-one term; the next row is
 * the largest entry of the last column among the rows not pivoted yet.  It
 * stops when two consecutive terms are below OPF_ACA_TOL times the
 * Frobenius norm of the approximation (updated exactly from the terms'
 * inner products).  The residual rows and columns and the inner products
 * are GEMVs (several times faster than scalar loops).  The row and the
 * column residuals then round differently, so a rook move can land on a
 * pivot that vanishes at the level of rounding: such a row counts as
 * represented, as one whose largest residual is below OPF_ACA_PIVOT.
 *
 * The check: ACA's stopping test is a heuristic (pivoting can stop while
 * rows it never visited are not represented), so when it holds the
 * residual is computed exactly on eight rows spread over the block (every
 * row of a block of at most 16) and four columns (O((p + q) r)); an entry
 * above OPF_ACA_CHECK restarts the pivoting from that row (at most
 * OPF_ACA_RESTARTS times), after which the whole product is declined and
 * the caller does the GEMM.  An approximation error e in S perturbs the
 * new eigenvectors by |G| |e|: the tolerances keep that at a few eps, as
 * the GEMM's own rounding does.
 *
 * The settings (leaf size, the testing switch that declines every product)
 * come with the call, in fns->tune; nothing here is process-wide.  What
 * the product costs, and the variants measured and not kept, are in
 * docs/performance/structured_product.md.
 */
#include "hodlr.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define RMAX OPF_HODLR_RMAX
#define OPF_ACA_TOL (2.0 * DBL_EPSILON)
#define OPF_ACA_CHECK (16.0 * DBL_EPSILON)
/* A residual row whose largest entry is below this is represented. */
#define OPF_ACA_PIVOT (OPF_ACA_CHECK * 1e-3)
/* ACA's scratch of one thread: used flags and a row (K each, K >= 0), and
 * two inner-product vectors (RMAX each). */
#define SCRATCH(K) (2 * (size_t)((K) > 0 ? (K) : 0) + 2 * RMAX)

/* Rows of G (and OUT) per chunk of the apply phase: the chunk of OUT
 * (CHUNK x K) stays in the last-level cache while every block is applied
 * to it, and the GEMMs are wide enough for a threaded BLAS to split. */
#define CHUNK 512

typedef struct {
    int ra, p, ca, q, r;
    size_t off; /* X at f + off (p x r), Y right after it (q x r) */
    size_t toff; /* its T: rows toff.. of the chunk's stacked T */
} blk;

/* A leaf: rows ra.. and columns ca.. of S; its rows of the X factors of
 * every block above it, stacked (p x R, column-major at f + xoff). */
typedef struct {
    int ra, p, ca, q, R;
    size_t xoff;
} leafrec;

int opf_structured_product(ptrdiff_t ks, const opf_tuning *t)
{
    switch (t->product) {
    case OPF_PRODUCT_DENSE:
        return 0;
    case OPF_PRODUCT_STRUCTURED:
        return ks >= 2 * (ptrdiff_t)t->leaf;
    default:
        return ks >= t->min_order;
    }
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

/* The factors' region: the factors (at most 2 K RMAX per level + RMAX
 * per block: fac_cap), then each leaf's block of S and its stacked X's
 * (the leaves' blocks at most (K + 1)(leaf + 1) doubles; each level's
 * blocks partition the rows: at most K RMAX per level), then T and W for
 * chunks of as many rows as fit -- the last (levels + 1) (K + RMAX)
 * doubles make room for one row at least: T has sum r <= levels K rows (a
 * block's rank is at most its order) and W q + R <= leaf + 1 + levels
 * RMAX. */
static size_t fac_cap(ptrdiff_t K)
{
    const size_t k = K > 0 ? (size_t)K : 0, lv = (size_t)levels_of(K) + 1;
    return lv * 2 * k * RMAX + max_blocks(K) * RMAX;
}

static size_t fcap_of(ptrdiff_t K)
{
    const size_t k = K > 0 ? (size_t)K : 0, lv = (size_t)levels_of(K) + 1;
    return fac_cap(K) + lv * k * RMAX + (k + 1) * (OPF_HODLR_LEAF + 2)
           + lv * (k + RMAX);
}

size_t opf_hodlr_work_len(ptrdiff_t nr, ptrdiff_t K)
{
    (void)nr;
    /* block descriptors, factors (each level's blocks cover every row
     * and column once: at most 2 K RMAX per level, + RMAX^2 per block for
     * rounding of the halves) followed by the stacked X's, T and W (see
     * fcap_of), leaf records, and each thread's scratch for the
     * compression (SCRATCH) */
    const size_t nb = max_blocks(K);
    return nb * (sizeof(blk) / sizeof(double) + 1)
           + nb * (sizeof(leafrec) / sizeof(double) + 1) + fcap_of(K)
           + OPF_HODLR_THREADS * SCRATCH(K) + 16;
}

typedef struct {
    const double *s;
    int lds, leaf; /* S; the leaf size of this product */
    double *x, *y, *used, *row; /* the current block's factors, scratch */
    double *cx; /* 2 RMAX scratch: X^T x and Y^T y of a new term */
    const opf_lapack *fns; /* the residuals and inner products are GEMVs */
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

/* y (n) -= A (n x r, column-major, lda) times the r values at v with
 * stride incv: one GEMV (the residuals of ACA are O(r (p + q)) per term,
 * the bulk of the compression). */
static void sub_gemv(const hctx *h, int n, int r, const double *a, int lda,
                     const double *v, int incv, double *y)
{
    if (r == 0)
        return;
    char nt = 'N';
    double mone = -1.0, one = 1.0;
    int nn = n, rr = r, ld = lda, inc = incv, i1 = 1;
    h->fns->dgemv(&nt, &nn, &rr, &mone, (double *)a, &ld, (double *)v, &inc,
                  &one, y, &i1);
}

/* Residual of row i of the block (rows ra.., cols ca..ca+q) after r terms,
 * into y. */
static void resid_row(const hctx *h, int ra, int ca, int q, int p, int r,
                      int i, double *y)
{
    const double *s = h->s + (size_t)ca * h->lds + ra + i;
    for (int j = 0; j < q; j++)
        y[j] = s[(size_t)j * h->lds];
    sub_gemv(h, q, r, h->y, q, h->x + i, p, y);
}

/* Residual of column j into x. */
static void resid_col(const hctx *h, int ra, int ca, int q, int p, int r,
                      int j, double *x)
{
    memcpy(x, h->s + (size_t)(ca + j) * h->lds + ra, (size_t)p * sizeof *x);
    sub_gemv(h, p, r, h->x, p, h->y + j, q, x);
}

/* c (r) = A^T v for A (n x r, column-major, lda). */
static void tgemv(const hctx *h, int n, int r, const double *a,
                  const double *v, double *c)
{
    char tr = 'T';
    double one = 1.0, zero = 0.0;
    int nn = n, rr = r, ld = n, i1 = 1;
    h->fns->dgemv(&tr, &nn, &rr, &one, (double *)a, &ld, (double *)v, &i1,
                  &zero, c, &i1);
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
        int represented = !(big > OPF_ACA_PIVOT);
        if (!represented) {
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
            /* the row and column residuals are summed in different orders:
             * at the level of rounding the moved-to pivot can vanish */
            represented = !(fabs(y[js]) > OPF_ACA_PIVOT);
        }
        if (represented) {
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
            h->used[i] = 1.0; /* the pivot row: its residual is now 0 */
            const double inv = 1.0 / y[js];
            for (int k = 0; k < p; k++)
                x[k] *= inv;
            const double nx2 = dot(x, x, p), ny2 = dot(y, y, q);
            double cross = 0.0;
            if (r > 0) {
                tgemv(h, p, r, h->x, x, h->cx);
                tgemv(h, q, r, h->y, y, h->cx + RMAX);
                for (int l = 0; l < r; l++)
                    cross += h->cx[l] * h->cx[RMAX + l];
            }
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

/* The off-diagonal blocks, in the order in which the hierarchy splits (a
 * node's two blocks, then its first child's, then its second's), each
 * with room for RMAX terms at f + off (its slot): *slots doubles in all.
 * Returns 0 if there are more than nbmax. */
static int list_blocks(int leaf, int ra, int rb, int ca, int cb, blk *blocks,
                       size_t *nb, size_t nbmax, size_t *slots)
{
    const int p = rb - ra, q = cb - ca;
    if (p <= leaf || q <= leaf)
        return 1;
    const int rm = ra + p / 2, cm = ca + p / 2;
    const int spec[2][4] = {{ra, rm - ra, cm, cb - cm},
                            {rm, rb - rm, ca, cm - ca}};
    for (int b = 0; b < 2; b++) {
        if (*nb >= nbmax)
            return 0;
        blk *d = blocks + (*nb)++;
        d->ra = spec[b][0];
        d->p = spec[b][1];
        d->ca = spec[b][2];
        d->q = spec[b][3];
        d->r = 0;
        d->off = *slots;
        *slots += (size_t)(d->p + d->q) * RMAX;
    }
    return list_blocks(leaf, ra, rm, ca, cm, blocks, nb, nbmax, slots)
           && list_blocks(leaf, rm, rb, cm, cb, blocks, nb, nbmax, slots);
}

/* Phase 1, one task per block (opf_pool_run): ACA of block i in its slot,
 * with thread t's scratch; its rank in d->r, -1 if it declined.  The
 * first block of a node starts from its last row (next to the diagonal),
 * the second from its first. */
typedef struct {
    hctx base; /* S and the table; each thread's scratch replaces its own */
    blk *blocks;
    double *f, *scratch; /* scratch: SCRATCH(K) doubles per thread */
    int K;
} compress_job;

static void compress_task(void *arg, int i, int t)
{
    const compress_job *job = arg;
    blk *d = job->blocks + i;
    hctx h = job->base;
    h.used = job->scratch + (size_t)t * SCRATCH(job->K);
    h.row = h.used + job->K;
    h.cx = h.row + job->K;
    h.x = job->f + d->off;
    h.y = h.x + (size_t)d->p * RMAX;
    const int first = d->ca > d->ra; /* upper-right: the node's first */
    const int r = aca(&h, d->ra, d->p, d->ca, d->q, first ? d->p - 1 : 0);
    if (r >= 0) /* Y (q x r) right after X (p x r) */
        memmove(h.x + (size_t)d->p * r, h.y, (size_t)d->q * r * sizeof(double));
    d->r = r;
}

/* Compress every block (on the table's pool) and move the factors
 * together in the blocks' order.  Returns the doubles they take, or
 * (size_t)-1 if a block declined. */
static size_t compress_all(const hctx *h, blk *blocks, size_t nb, double *f,
                           double *scratch, int K, int threads)
{
    compress_job job = {*h, blocks, f, scratch, K};
    opf_pool_run(h->fns->pool, (int)nb, threads, compress_task, &job);
    size_t fused = 0;
    for (size_t b = 0; b < nb; b++) {
        blk *d = blocks + b;
        if (d->r < 0)
            return (size_t)-1;
        const size_t len = (size_t)(d->p + d->q) * d->r;
        memmove(f + fused, f + d->off, len * sizeof(double));
        d->off = fused;
        fused += len;
    }
    return fused;
}

/* The leaves, in the order in which compress_all splits: rows ra..ra+p
 * and columns ca..ca+q of S each. */
static void list_leaves(int leaf, int ra, int rb, int ca, int cb,
                        leafrec *lf, int *nl)
{
    const int p = rb - ra, q = cb - ca;
    if (p <= leaf || q <= leaf) {
        leafrec *e = lf + (*nl)++;
        e->ra = ra;
        e->p = p;
        e->ca = ca;
        e->q = q;
        e->R = 0;
        e->xoff = 0;
        return;
    }
    const int rm = ra + p / 2, cm = ca + p / 2;
    list_leaves(leaf, ra, rm, ca, cm, lf, nl);
    list_leaves(leaf, rm, rb, cm, cb, lf, nl);
}

/* Whether block d (of nonzero rank) has leaf e among its rows. */
static int above(const blk *d, const leafrec *e)
{
    return d->r > 0 && d->ra <= e->ra && e->ra < d->ra + d->p;
}

/* Leaf e's block of S (p x q) followed by its rows of the X factors of
 * every block above it, in the blocks' order, at dst (p x (q + R),
 * column-major).  Returns R. */
static int stack(const hctx *h, const blk *blocks, size_t nb,
                 const leafrec *e, const double *f, double *dst)
{
    for (int c = 0; c < e->q; c++)
        memcpy(dst + (size_t)c * e->p,
               h->s + (size_t)(e->ca + c) * h->lds + e->ra,
               (size_t)e->p * sizeof(double));
    dst += (size_t)e->q * e->p;
    int R = 0;
    for (size_t b = 0; b < nb; b++) {
        const blk *d = blocks + b;
        if (!above(d, e))
            continue;
        const double *x = f + d->off + (e->ra - d->ra);
        for (int c = 0; c < d->r; c++)
            memcpy(dst + (size_t)(R + c) * e->p, x + (size_t)c * d->p,
                   (size_t)e->p * sizeof(double));
        R += d->r;
    }
    return R;
}

/* The flops of the leaves' GEMMs for nr rows (as list_leaves splits). */
static double leaf_flops(int leaf, int ra, int rb, int ca, int cb, int nr)
{
    const int p = rb - ra, q = cb - ca;
    if (p <= leaf || q <= leaf)
        return 2.0 * nr * p * q;
    const int rm = ra + p / 2, cm = ca + p / 2;
    return leaf_flops(leaf, ra, rm, ca, cm, nr)
           + leaf_flops(leaf, rm, rb, cm, cb, nr);
}

int opf_hodlr_product(int nr, int ks, int K, const double *s, int lds,
                      const double *g, int ldg, double *out, int ldo,
                      double *work, const opf_lapack *fns)
{
    return opf_hodlr_profile(nr, ks, K, s, lds, g, ldg, out, ldo, work, fns,
                             1, NULL);
}

/* Phase 2, one task per chunk of CHUNK rows (or fewer, as the workspace
 * allows: a function of the ranks alone, so the chunks and each row's
 * arithmetic do not depend on the threads): the leaves' GEMMs into W and
 * the T's, then the blocks' GEMMs into OUT, with thread t's T and W. */
typedef struct {
    const blk *blocks;
    const leafrec *lf;
    size_t nb, rsum, region; /* region: T and W of one thread, doubles */
    int nl, nch, nr, ldg, ldo;
    const double *f, *g;
    double *out, *tw;
    const opf_lapack *fns;
} apply_job;

static void apply_task(void *arg, int c, int t)
{
    const apply_job *job = arg;
    const blk *blocks = job->blocks;
    const size_t nb = job->nb;
    const int i0 = c * job->nch;
    int nc = job->nr - i0 < job->nch ? job->nr - i0 : job->nch;
    const double *gc = job->g + (size_t)i0 * job->ldg;
    double *oc = job->out + (size_t)i0 * job->ldo;
    double *tt = job->tw + (size_t)t * job->region;
    double *w = tt + job->rsum * (size_t)job->nch;
    char nt = 'N', tr = 'T';
    double one = 1.0, zero = 0.0;
    int ldgg = job->ldg, ldoo = job->ldo;
    for (int i = 0; i < job->nl; i++) {
        const leafrec *e = job->lf + i;
        int p = e->p, q = e->q, R = e->R, qr = q + R;
        /* W (q + R x nc) = [S_leaf X_stack]^T G[:, ra..]^T: its first q
         * rows are OUT[:, ca..]^T (the leaves' columns partition K), the
         * rest are added into the T's.  OUT may be G: the leaf's columns
         * of G are read by this GEMM alone, before they are written. */
        job->fns->dgemm(&tr, &nt, &qr, &nc, &p, &one,
                        (double *)job->f + e->xoff, &p, (double *)gc + e->ra,
                        &ldgg, &zero, w, &qr);
        for (int j = 0; j < nc; j++)
            memcpy(oc + (size_t)j * job->ldo + e->ca, w + (size_t)j * qr,
                   (size_t)q * sizeof(double));
        int o = q;
        for (size_t b = 0; b < nb; b++) {
            const blk *d = blocks + b;
            if (!above(d, e))
                continue;
            const int r = d->r;
            double *tb = tt + d->toff * (size_t)nc;
            const double *wb = w + o;
            if (e->ra == d->ra) { /* the block's first leaf */
                for (int j = 0; j < nc; j++)
                    memcpy(tb + (size_t)j * r, wb + (size_t)j * qr,
                           (size_t)r * sizeof(double));
            } else {
                for (int j = 0; j < nc; j++)
                    for (int k = 0; k < r; k++)
                        tb[(size_t)j * r + k] += wb[(size_t)j * qr + k];
            }
            o += r;
        }
    }
    for (size_t b = 0; b < nb; b++) {
        const blk *d = blocks + b;
        if (d->r == 0)
            continue;
        int r = d->r, q = d->q;
        const double *y = job->f + d->off + (size_t)d->p * r;
        /* OUT[:, ca..]^T (q x nc) += Y (q x r) T (r x nc) */
        job->fns->dgemm(&nt, &nt, &q, &nc, &r, &one, (double *)y, &q,
                        tt + d->toff * (size_t)nc, &r, &one, oc + d->ca,
                        &ldoo);
    }
}

int opf_hodlr_profile(int nr, int ks, int K, const double *s, int lds,
                      const double *g, int ldg, double *out, int ldo,
                      double *work, const opf_lapack *fns, int apply,
                      opf_hodlr_stats *st)
{
    const int leaf = fns->tune.leaf;
    if (K - ks < 0 || K - ks > 1 || ks < 2 * leaf || nr < 1
        || fns->tune.decline || leaf < OPF_HODLR_LEAF_MIN
        || leaf > OPF_HODLR_LEAF || (g == out && (K != ks || ldg != ldo)))
        return 0;
    const size_t nbmax = max_blocks(K), fcap = fcap_of(K);
    const int threads = opf_pool_size(fns->pool) < OPF_HODLR_THREADS
                            ? opf_pool_size(fns->pool) : OPF_HODLR_THREADS;
    blk *blocks = (blk *)work;
    leafrec *lf = (leafrec *)(work + nbmax * (sizeof(blk) / sizeof(double) + 1));
    double *f = (double *)lf + nbmax * (sizeof(leafrec) / sizeof(double) + 1);
    hctx h;
    h.s = s;
    h.lds = lds;
    h.leaf = leaf;
    h.fns = fns;
    size_t nb = 0, slots = 0;
    if (!list_blocks(leaf, 0, ks, 0, K, blocks, &nb, nbmax, &slots)
        || slots > fac_cap(K))
        return 0;
    const size_t fused = compress_all(&h, blocks, nb, f, f + fcap, K, threads);
    if (fused == (size_t)-1)
        return 0;
    if (st != NULL) {
        st->n_blocks = (int)nb;
        st->levels = 0;
        for (int p = ks; p > leaf; p = (p + 1) / 2)
            st->levels++;
        st->rank_sum = st->rank_max = st->lowrank_flops = 0.0;
        for (size_t b = 0; b < nb; b++) {
            st->rank_sum += blocks[b].r;
            st->rank_max = fmax(st->rank_max, blocks[b].r);
            st->lowrank_flops += 2.0 * nr * blocks[b].r
                                 * (blocks[b].p + blocks[b].q);
        }
        st->leaf_flops = leaf_flops(leaf, 0, ks, 0, K, nr);
    }
    if (!apply)
        return 1;

    /* Each leaf's block of S and its rows of the X factors of the blocks
     * above it, stacked (p x (q + R)), so that the leaf and G X are one
     * GEMM of q + R ~ leaf + levels r columns per leaf rather than a
     * leaf GEMM and one r columns wide per block: each row of G is packed
     * for the BLAS once instead of once per level (see the header).  T:
     * every block's G[:, rows] X (r x nc, column-major), rows toff.. of
     * one array. */
    int nl = 0, rmax = 0;
    list_leaves(leaf, 0, ks, 0, K, lf, &nl);
    size_t pos = fused, rsum = 0;
    for (size_t b = 0; b < nb; b++) {
        blocks[b].toff = rsum;
        rsum += (size_t)blocks[b].r;
    }
    for (int i = 0; i < nl; i++) {
        leafrec *e = lf + i;
        e->xoff = pos;
        e->R = stack(&h, blocks, nb, e, f, f + pos);
        pos += (size_t)(e->q + e->R) * e->p;
        rmax = e->q + e->R > rmax ? e->q + e->R : rmax;
    }
    /* rows per chunk: CHUNK, or as many as T and W leave room for (at
     * least one: see fcap_of) -- a function of the ranks alone; then as
     * many threads as there is room for their T and W */
    const size_t need = rsum + (size_t)rmax;
    const size_t fit = need > 0 ? (fcap - pos) / need : CHUNK;
    const int nch = fit < CHUNK ? (int)fit : CHUNK;
    if (nch < 1) /* ranks beyond the blocks' orders: not seen, but safe */
        return 0;
    const size_t region = need * (size_t)nch;
    const size_t room = region > 0 ? (fcap - pos) / region : (size_t)threads;
    apply_job job = {blocks, lf, nb, rsum, region, nl, nch, nr, ldg, ldo,
                     f, g, out, f + pos, fns};
    opf_pool_run(fns->pool, (nr + nch - 1) / nch,
                 room < (size_t)threads ? (int)room : threads, apply_task,
                 &job);
    if (fns->n_structured != NULL) {
#if defined(__GNUC__)
        __atomic_add_fetch(fns->n_structured, 1, __ATOMIC_RELAXED);
#else
        (*fns->n_structured)++;
#endif
    }
    return 1;
}
