#ifndef OPF_VEXP_H
#define OPF_VEXP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * out[i] = exp(x[i] - shift) for i < n, where every x[i] <= shift (or
 * -inf).  Vectorised, within 1 ulp (see vexp.c).  out may alias x.  level:
 * the version to run, as opf_cpu_use takes it (-1: the best the CPU has).
 */
void opf_exp_shifted(const double *x, ptrdiff_t n, double shift, double *out,
                     int level);

/*
 * The exp itself, for kernels that fuse it into a pass of their own:
 * OPF_EXP_CORE(t, out, MULADD) sets the double lvalue out to exp(t) for
 * t <= 0 (slightly positive t is fine), written so that a loop around it
 * vectorises; MULADD(a, b, c) = a * b + c, OPF_PLAIN_MULADD or, inside a
 * function marked OPF_TARGET_AVX2_FMA or OPF_TARGET_AVX512, __builtin_fma.
 * Such kernels come in those versions (where OPF_FMA_DISPATCH is defined)
 * and call the one opf_cpu_use(level) says for the level their caller
 * passes.  Levels: 2 for AVX-512 (F, DQ, VL) with FMA, 1 for AVX2 with FMA,
 * 0 for the baseline; opf_cpu_level() is the CPU's (detected once).  The
 * versions differ only by the rounding of the fused multiply-adds.  See
 * vexp.c for the method and its accuracy.
 */
int opf_cpu_level(void);

/* The version a kernel runs when its caller asks for `level`
 * (opf_tuning.cpu_level, common.h): the CPU's for -1, else the lower of the
 * two (tests run every version the CPU has by asking for each). */
int opf_cpu_use(int level);

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define OPF_FMA_DISPATCH 1
#define OPF_TARGET_AVX2_FMA __attribute__((target("avx2,fma")))
#ifdef __clang__
#define OPF_TARGET_AVX512                                                    \
    __attribute__((target("avx512f,avx512dq,avx512vl,avx2,fma")))
#else /* GCC would otherwise keep to 256-bit vectors */
#define OPF_TARGET_AVX512                                                    \
    __attribute__((target("avx512f,avx512dq,avx512vl,avx2,fma,"             \
                          "prefer-vector-width=512")))
#endif
#endif

static inline uint64_t opf_bits_of(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static inline double opf_from_bits(uint64_t u)
{
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

#define OPF_EXP_SHIFTER 0x1.8p52            /* 1.5 * 2^52 */
#define OPF_EXP_INV_LN2 0x1.71547652b82fep0
#define OPF_EXP_LN2_HI 0x1.62e42fee00000p-1
#define OPF_EXP_LN2_LO 0x1.a39ef35793c76p-33
#define OPF_PLAIN_MULADD(a, b, c) ((a) * (b) + (c))

/* The two clamps are written as maxima, which the compilers vectorise
 * (with SSE2 too); 2^k with k = -1023 has all-zero bits, i.e. is 0. */
#define OPF_EXP_CORE(t_in, out, MULADD)                                      \
    do {                                                                     \
        double t_ = (t_in), kd_, kc_, r_, p_;                                \
        t_ = t_ > -745.0 ? t_ : -745.0;                                      \
        kd_ = MULADD(t_, OPF_EXP_INV_LN2, OPF_EXP_SHIFTER) - OPF_EXP_SHIFTER; \
        kc_ = kd_ > -1023.0 ? kd_ : -1023.0;                                 \
        r_ = MULADD(-kd_, OPF_EXP_LN2_HI, t_);                               \
        r_ = MULADD(-kd_, OPF_EXP_LN2_LO, r_);                               \
        p_ = 0x1.af632a0f7e2cep-26;                                          \
        p_ = MULADD(p_, r_, 0x1.28b4101c77212p-22);                          \
        p_ = MULADD(p_, r_, 0x1.71ddf56d8deb5p-19);                          \
        p_ = MULADD(p_, r_, 0x1.a01991a10d9aep-16);                          \
        p_ = MULADD(p_, r_, 0x1.a01a01b1461c5p-13);                          \
        p_ = MULADD(p_, r_, 0x1.6c16c1880029fp-10);                          \
        p_ = MULADD(p_, r_, 0x1.111111110f21ep-7);                           \
        p_ = MULADD(p_, r_, 0x1.555555554f0bap-5);                           \
        p_ = MULADD(p_, r_, 0x1.555555555555ap-3);                           \
        p_ = MULADD(p_, r_, 0x1.0000000000011p-1);                           \
        p_ = MULADD(p_, r_, 1.0);                                            \
        p_ = MULADD(p_, r_, 1.0);                                            \
        (out) = p_ * opf_from_bits(                                          \
                         ((opf_bits_of(kc_ + OPF_EXP_SHIFTER)                \
                           - opf_bits_of(OPF_EXP_SHIFTER)) + 1023u) << 52);  \
    } while (0)

#endif
