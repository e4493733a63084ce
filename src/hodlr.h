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
 * falls back to one GEMM when it declines (the block is small, a
 * compression misses its tolerance or its check, or the dense product is
 * forced).
 */

#include <stddef.h>

#include "common.h"

/* Leaves of the hierarchy (dense blocks) have at most this many rows
 * (a tuning may lower it to OPF_HODLR_LEAF_MIN; the workspace is sized
 * for both). */
#define OPF_HODLR_LEAF 96
#define OPF_HODLR_LEAF_MIN 16
/* The largest rank a block may take; beyond it the product falls back. */
#define OPF_HODLR_RMAX 96
/* The structured product is used from this block size on.  Tuned on the
 * development machine (one thread, dense z, structured / GEMM time of the
 * whole update): 1.21 at 200, 1.05 at 256, 0.90 at 320, 0.82 at 384, 0.73
 * at 512, 0.59 at 640 (benchmarks/ratios_rank_one.py --crossover).
 * Re-measured on OpenBLAS's best kernel of another machine (Haswell kernel
 * on an AMD EPYC, no OPENBLAS_CORETYPE; interleaved runs, min / median):
 * 1.00 / 1.00 at 320, 0.93 / 0.95 at 448, 0.95 / 0.99 at 512, 0.77 / 0.79
 * at 576, 0.74 / 0.75 at 640, 0.60 / 0.61 at 896 -- break-even at 320, so
 * the crossover stays (a faster GEMM moves it up, but within +-5% up to
 * 512; no run-time calibration needed).  Re-measured for issue 25 (same
 * machine and kernel, min of 9): before the compression went to GEMVs
 * 1.43 at 200, 1.01 at 256, 0.99 at 320, 0.84 at 384, 0.83 at 512, 0.68
 * at 640; after it 1.30, 1.07, 0.92, 0.91, 0.86, 0.70 -- break-even
 * between 256 and 320 either way, so 320 stays. */
#define OPF_HODLR_MIN 320

/* Doubles of workspace for a product with nr rows of G and K columns. */
size_t opf_hodlr_work_len(ptrdiff_t nr, ptrdiff_t K);

/*
 * out[i * ldo + c] = sum_l g[i * ldg + l] * s[c * lds + l] for i < nr,
 * c < K, l < ks (G row-major nr x ks, S column-major ks x K with
 * K - ks in {0, 1}, out row-major), by the hierarchical product.  Returns
 * 1 if it was done, 0 if the caller must do the dense product (out is
 * then garbage in its first K columns): a block's approximation did not
 * reach the tolerance within OPF_HODLR_RMAX terms or failed its check on
 * sampled rows.  work: opf_hodlr_work_len(nr, K) doubles.
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

/* Whether a product with ks rows of S takes the hierarchical path: ks at
 * least the crossover and the dense product not forced. */
int opf_structured_product(ptrdiff_t ks);
/* The crossover order (OPF_HODLR_MIN unless tuned); secular_roots.c also
 * solves the interior roots by its vectorised iteration from it on. */
int opf_hodlr_min(void);

/*
 * Tests: set the crossover order, the leaf size (OPF_HODLR_LEAF_MIN to
 * OPF_HODLR_LEAF: the workspace holds leaves of at most that size) and
 * a switch that makes every product decline (to exercise the GEMM
 * fallback); a negative argument keeps the current value.  Process-wide,
 * not synchronised: call it with no update running.
 */
void opf_hodlr_tune(int min_order, int leaf, int decline);
void opf_hodlr_tuning(int *min_order, int *leaf, int *decline);
/* Structured products done so far in this process (tests). */
long long opf_hodlr_count(void);

/*
 * Process-wide switch for tests and benchmarks: nonzero forces the dense
 * GEMM everywhere (opf_hodlr_product is then not called).  Read once per
 * update; default 0.
 */
void opf_set_dense_product(int on);
int opf_dense_product(void);

#endif
