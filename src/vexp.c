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
 * The loop is compiled twice: for the baseline instruction set and, on x86
 * with GCC or Clang, for AVX2 + FMA (chosen once at run time by
 * __builtin_cpu_supports).  The two differ by at most the rounding of the
 * fused multiply-adds.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "simd.h"
#include "vexp.h"

static inline uint64_t bits_of(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static inline double from_bits(uint64_t u)
{
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

#define OPF_EXP_SHIFTER 0x1.8p52            /* 1.5 * 2^52 */
#define OPF_EXP_INV_LN2 0x1.71547652b82fep0
#define OPF_EXP_LN2_HI 0x1.62e42fee00000p-1
#define OPF_EXP_LN2_LO 0x1.a39ef35793c76p-33

/* The loop body; MULADD(a, b, c) = a * b + c (fused or not).  The two
 * clamps are written as maxima, which the compilers vectorise (with SSE2
 * too); 2^k with k = -1023 has all-zero bits, i.e. is 0. */
#define OPF_EXP_LOOP(MULADD)                                                 \
    do {                                                                     \
        ptrdiff_t i_;                                                        \
        const uint64_t sbits_ = bits_of(OPF_EXP_SHIFTER);                    \
        OPF_SIMD                                                             \
        for (i_ = 0; i_ < n; i_++) {                                         \
            double t = x[i_] - shift, kd, kc, r, p;                          \
            t = t > -745.0 ? t : -745.0;                                     \
            kd = MULADD(t, OPF_EXP_INV_LN2, OPF_EXP_SHIFTER) - OPF_EXP_SHIFTER; \
            kc = kd > -1023.0 ? kd : -1023.0;                                \
            r = MULADD(-kd, OPF_EXP_LN2_HI, t);                              \
            r = MULADD(-kd, OPF_EXP_LN2_LO, r);                              \
            p = 0x1.af632a0f7e2cep-26;                                       \
            p = MULADD(p, r, 0x1.28b4101c77212p-22);                         \
            p = MULADD(p, r, 0x1.71ddf56d8deb5p-19);                         \
            p = MULADD(p, r, 0x1.a01991a10d9aep-16);                         \
            p = MULADD(p, r, 0x1.a01a01b1461c5p-13);                         \
            p = MULADD(p, r, 0x1.6c16c1880029fp-10);                         \
            p = MULADD(p, r, 0x1.111111110f21ep-7);                          \
            p = MULADD(p, r, 0x1.555555554f0bap-5);                          \
            p = MULADD(p, r, 0x1.555555555555ap-3);                          \
            p = MULADD(p, r, 0x1.0000000000011p-1);                          \
            p = MULADD(p, r, 1.0);                                           \
            p = MULADD(p, r, 1.0);                                           \
            {                                                                \
                const uint64_t k = bits_of(kc + OPF_EXP_SHIFTER) - sbits_;   \
                out[i_] = p * from_bits((k + 1023u) << 52);                  \
            }                                                                \
        }                                                                    \
    } while (0)

#define OPF_PLAIN_MULADD(a, b, c) ((a) * (b) + (c))

static void exp_shifted_generic(const double *x, ptrdiff_t n, double shift,
                                double *out)
{
    OPF_EXP_LOOP(OPF_PLAIN_MULADD);
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define OPF_EXP_DISPATCH 1
__attribute__((target("avx2,fma")))
static void exp_shifted_avx2(const double *x, ptrdiff_t n, double shift,
                             double *out)
{
    OPF_EXP_LOOP(__builtin_fma);
}
#endif

void opf_exp_shifted(const double *x, ptrdiff_t n, double shift, double *out)
{
#ifdef OPF_EXP_DISPATCH
    /* Written once with the same value by any thread that gets here. */
    static volatile int have_avx2 = -1;
    if (have_avx2 < 0) {
        __builtin_cpu_init();
        have_avx2 = __builtin_cpu_supports("avx2")
                    && __builtin_cpu_supports("fma");
    }
    if (have_avx2) {
        exp_shifted_avx2(x, n, shift, out);
        return;
    }
#endif
    exp_shifted_generic(x, n, shift, out);
}
