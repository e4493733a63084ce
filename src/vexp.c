/*
 * vexp.c -- out_i = exp(x_i - shift) for x_i <= shift, over an array, in a
 * form the compiler vectorises.
 *
 * The capping kernel needs the linear weights exp(mu_i - max mu) of every
 * entry on every call, and a scalar libm exp per element is the largest
 * cost of a trial of the experts learners at n = 10^5 (~3 ns per element
 * here, against ~0.1 ns for a pass that only reads and writes).  The
 * arguments are never positive, which makes a branch-free vector exp short:
 *
 *   t = max(x - shift, -745)             (-inf -> -745)
 *   k = round(t / ln 2),  r = t - k ln2  (Cody-Waite: ln2_hi has 21 trailing
 *                                          zero bits, so k ln2_hi is exact)
 *   exp(r) = p(r), |r| <= ln2/2 + tiny,  p of degree 11: the Chebyshev fit
 *            (mpmath.chebyfit, 50 digits) has relative error 4.2e-18;
 *   exp(t) = p(r) 2^k, and 0 when k <= -1023 (t < -1022.5 ln 2 = -708.74).
 *
 * So results below 2^-1022.5 are flushed to 0 (those in [2^-1022.5,
 * 2^-1022) come out subnormal and rounded): a weight that far below the
 * largest one is 0 for every purpose of the kernels, and subnormal
 * arithmetic costs a microcode assist (~150 cycles) per element on x86,
 * which made a long stream of the experts learners several times slower.  Error: within 1 ulp of the exact value for the normal results
 * (rounding of r, of Horner's rule and of the scaling; tests/test_cap.py
 * checks against numpy.exp).  k is taken from the bits of
 * t/ln2 + 1.5 * 2^52 (round to nearest) and 2^k built from them, so the loop
 * has no branch, no table and no conversion that SSE2 lacks.
 *
 * The loop is compiled for the baseline instruction set and, on x86 with
 * GCC or Clang, for AVX2 + FMA and for AVX-512 + FMA (the CPU's features
 * detected once by __builtin_cpu_supports, opf_cpu_level; the caller may
 * ask for a lower version, opf_cpu_use).  They differ by at most the
 * rounding of the fused multiply-adds.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "simd.h"
#include "vexp.h"

/* One version of the loop: its attributes, its name, its MULADD. */
#define OPF_EXP_SHIFTED(ATTR, NAME, MULADD)                                  \
    ATTR static void NAME(const double *x, ptrdiff_t n, double shift,        \
                          double *out)                                       \
    {                                                                        \
        ptrdiff_t i;                                                         \
        OPF_SIMD                                                             \
        for (i = 0; i < n; i++)                                              \
            OPF_EXP_CORE(x[i] - shift, out[i], MULADD);                      \
    }

OPF_EXP_SHIFTED(, exp_shifted_generic, OPF_PLAIN_MULADD)
#ifdef OPF_FMA_DISPATCH
OPF_EXP_SHIFTED(OPF_TARGET_AVX2_FMA, exp_shifted_avx2, __builtin_fma)
OPF_EXP_SHIFTED(OPF_TARGET_AVX512, exp_shifted_avx512, __builtin_fma)
#endif

/* -1: not detected yet.  The one process-wide variable here: a cache of
 * what the CPU has, written (with the same value) by whichever thread
 * detects it first. */
static volatile int detected_level = -1;

static int detect_level(void)
{
#ifdef OPF_FMA_DISPATCH
    if (detected_level < 0) {
        int l = 0;
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
            l = 1;
            if (__builtin_cpu_supports("avx512f")
                && __builtin_cpu_supports("avx512dq")
                && __builtin_cpu_supports("avx512vl"))
                l = 2;
        }
        detected_level = l;
    }
    return detected_level;
#else
    return 0;
#endif
}

int opf_cpu_level(void) { return detect_level(); }

int opf_cpu_use(int level)
{
    const int top = detect_level();
    return level < 0 || level > top ? top : level;
}

void opf_exp_shifted(const double *x, ptrdiff_t n, double shift, double *out,
                     int level)
{
#ifdef OPF_FMA_DISPATCH
    switch (opf_cpu_use(level)) {
    case 2:
        exp_shifted_avx512(x, n, shift, out);
        return;
    case 1:
        exp_shifted_avx2(x, n, shift, out);
        return;
    }
#else
    (void)level;
#endif
    exp_shifted_generic(x, n, shift, out);
}
