/*
 * common.c -- the status messages, the default settings of a call, the one
 * sampler dispatch shared by the trial loops and two small helpers (see
 * common.h).  O(1) and, for opf_draw_corner, the cost of the sampler: O(n)
 * systematic, O(n) to O(n^2) decomposition.
 */
#include "common.h"

#include "decompose.h"
#include "hodlr.h"
#include "systematic.h"

opf_tuning opf_tuning_default(void)
{
    const opf_tuning t = {.product = OPF_PRODUCT_AUTO,
                          .min_order = OPF_HODLR_MIN,
                          .leaf = OPF_HODLR_LEAF,
                          .decline = 0,
                          .cpu_level = -1};
    return t;
}

const char *opf_strerror(int status)
{
    switch (status) {
    case OPF_OK:
        return "success";
    case OPF_SWITCH:
        return "stopped where state=\"auto\" changes representation";
    case OPF_EINTR:
        return "interrupted (SIGINT) between two trials or inside one; that "
               "trial changed nothing";
    case OPF_EINVAL:
        return "invalid argument (size, leading dimension, pointer or flag)";
    case OPF_ENOTCAPPED:
        return "the vector is not in the capped simplex (more than d entries "
               "at the cap or fewer than d positive entries)";
    case OPF_ENOSPACE:
        return "more corners than the output holds";
    case OPF_EEVALS:
        return "evals must be finite and in ascending order";
    case OPF_ERHO:
        return "rho must be finite";
    case OPF_EX:
        return "x must be finite";
    case OPF_EEVECS:
        return "evecs must be finite (evecs.T @ x is not)";
    case OPF_EOVERFLOW:
        return "rho * |x|^2 overflows float64; scale rho or x";
    case OPF_EFAILED:
        return "the eigen-update failed: its input eigensystem is not finite "
               "and ascending, or dlaed4, bisection and dsyevr all failed on "
               "the secular equation; the arrays are unchanged";
    case OPF_EEIG:
        return "the eigendecomposition (dsyevr) failed";
    case OPF_EY:
        return "y and kappa must be finite (and |y| must not overflow)";
    case OPF_ECAPACITY:
        return "the batch does not fit the workspace's capacity";
    default:
        return "unknown status";
    }
}

int opf_draw_corner(int sampler, const double *w, ptrdiff_t n, ptrdiff_t d,
                    double u, ptrdiff_t *corner, double *work,
                    ptrdiff_t *iwork)
{
    ptrdiff_t i, r;
    switch (sampler) {
    case OPF_SAMPLER_SYSTEMATIC:
        return opf_sample_systematic(w, n, d, u, corner, work);
    case OPF_SAMPLER_LEADER:
        for (i = 0; i < d; i++)
            corner[i] = n - d + i;
        return OPF_OK;
    case OPF_SAMPLER_DECOMPOSITION:
        r = opf_decompose(w, n, d, u, 0, NULL, NULL, corner, work, iwork);
        return r < 0 ? (int)r : OPF_OK;
    default:
        return OPF_EINVAL;
    }
}

/* Blocks of 64 x 64 doubles: a block of a and one of b (64 KB together)
 * stay in the L2 cache while it is transposed. */
#define OPF_TRANSPOSE_BLOCK 64

void opf_transpose(ptrdiff_t m, ptrdiff_t n, const double *a, ptrdiff_t lda,
                   double *b, ptrdiff_t ldb)
{
    for (ptrdiff_t i0 = 0; i0 < m; i0 += OPF_TRANSPOSE_BLOCK) {
        const ptrdiff_t i1 = m - i0 < OPF_TRANSPOSE_BLOCK
                                 ? m : i0 + OPF_TRANSPOSE_BLOCK;
        for (ptrdiff_t j0 = 0; j0 < n; j0 += OPF_TRANSPOSE_BLOCK) {
            const ptrdiff_t j1 = n - j0 < OPF_TRANSPOSE_BLOCK
                                     ? n : j0 + OPF_TRANSPOSE_BLOCK;
            for (ptrdiff_t i = i0; i < i1; i++)
                for (ptrdiff_t j = j0; j < j1; j++)
                    b[j * ldb + i] = a[i * lda + j];
        }
    }
}

/* The k-th largest of v[0..n) (1 <= k <= n), reordering v: Hoare
 * selection with a median-of-three pivot, O(n) expected. */
double opf_kth_largest(double *v, ptrdiff_t n, ptrdiff_t k)
{
    ptrdiff_t lo = 0, hi = n - 1;
    const ptrdiff_t target = k - 1; /* position in descending order */
    while (lo < hi) {
        const double a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi];
        const double p = a > b ? (b > c ? b : (a > c ? c : a))
                               : (a > c ? a : (b > c ? c : b));
        ptrdiff_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] > p)
                i++;
            while (v[j] < p)
                j--;
            if (i <= j) {
                const double t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (target <= j)
            hi = j;
        else if (target >= i)
            lo = i;
        else
            return v[target]; /* between j and i: equal to p */
    }
    return v[target];
}
