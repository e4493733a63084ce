#ifndef OPF_HODLR_H
#define OPF_HODLR_H

/*
 * The eigenvector product of a Gu-Eisenstat update in O(n m r log m)
 * instead of O(n m^2) (hodlr.c): OUT = G S, where S (ks x K) holds the
 * secular eigenvectors w_k / (d_k - lambda_c), normalised.  For
 * interlacing poles and roots each off-diagonal block of S (poles of one
 * half, roots of the other) has a numerical rank r that grows like
 * log m (~25 to 1e-16 at m = 1000), so S is applied as a hierarchical
 * off-diagonal low-rank (HODLR) matrix whose blocks are compressed from
 * S's entries by adaptive cross approximation: O(m r^2 log m) entries
 * read, never a dense SVD.
 *
 * Not a public API; secular.c calls it for the non-deflated block and
 * falls back to one GEMM when it declines (the block is small, or a
 * compression misses its tolerance or its check).  Whether it is called at
 * all is the caller's settings' (opf_structured_product).
 */

#include <stddef.h>

#include "common.h"

/* Leaves of the hierarchy (dense blocks) have at most this many rows
 * (opf_tuning.leaf may lower it to OPF_HODLR_LEAF_MIN; the workspace is
 * sized for both). */
#define OPF_HODLR_LEAF 96
#define OPF_HODLR_LEAF_MIN 16
/* The largest rank a block may take; beyond it the product falls back. */
#define OPF_HODLR_RMAX 96
/* The default crossover (opf_tuning.min_order): from this order on the
 * hierarchical product is used.  Below it one GEMM takes less time, the
 * compression and the small GEMMs of the hierarchy costing more than the
 * flops they save.  The break-even was measured between 256 and 320 on two
 * machines with OpenBLAS, and a faster GEMM moves it by little
 * (docs/performance/structured_product.md), so it is a constant rather
 * than a run-time calibration. */
#define OPF_HODLR_MIN 320

/* The most threads of a pool (fns->pool) a product uses: the workspace
 * holds the compression's scratch of each. */
#define OPF_HODLR_THREADS 8

/* Doubles of workspace for a product with nr rows of G and K columns. */
size_t opf_hodlr_work_len(ptrdiff_t nr, ptrdiff_t K);

/*
 * out[i * ldo + c] = sum_l g[i * ldg + l] * s[c * lds + l] for i < nr,
 * c < K, l < ks (G row-major nr x ks, S column-major ks x K with
 * K - ks in {0, 1}, out row-major), by the hierarchical product.  out may
 * be g itself when K == ks and ldo == ldg (in place).  Returns 1 if it was
 * done, 0 if the caller must do the dense product (out, and g, are then
 * untouched): a block's approximation did not reach the tolerance within
 * OPF_HODLR_RMAX terms or failed its check on sampled rows.  With a pool
 * in fns the work is split over its threads (at most OPF_HODLR_THREADS);
 * the numbers do not depend on them.  work: opf_hodlr_work_len(nr, K)
 * doubles.
 */
int opf_hodlr_product(int nr, int ks, int K, const double *s, int lds,
                      const double *g, int ldg, double *out, int ldo,
                      double *work, const opf_lapack *fns);

/* What a product did (opf_hodlr_profile): its off-diagonal blocks, their
 * ranks, and the flops of its two kinds of GEMM. */
typedef struct {
    int n_blocks;       /* off-diagonal (low-rank) blocks */
    int levels;         /* levels of the hierarchy */
    double rank_sum;    /* sum of the blocks' ranks */
    double rank_max;    /* the largest rank */
    double leaf_flops;  /* 2 nr p q over the dense leaves */
    double lowrank_flops; /* 2 nr r (p + q) over the low-rank blocks */
} opf_hodlr_stats;

/* Benchmarks and tests: opf_hodlr_product with its phases split -- with
 * apply == 0 only the compression is done (out untouched) -- and what it
 * did in *st.  Same arguments and return value otherwise. */
int opf_hodlr_profile(int nr, int ks, int K, const double *s, int lds,
                      const double *g, int ldg, double *out, int ldo,
                      double *work, const opf_lapack *fns, int apply,
                      opf_hodlr_stats *st);

/* Whether a product with ks rows of S takes the hierarchical path under
 * the settings t (common.h): never with OPF_PRODUCT_DENSE, from two leaves
 * on with OPF_PRODUCT_STRUCTURED, from the crossover t->min_order on
 * otherwise.  The product reads its leaf size and the testing switch
 * `decline` from the table it is handed (fns->tune) and counts itself in
 * fns->n_structured. */
int opf_structured_product(ptrdiff_t ks, const opf_tuning *t);

#endif
