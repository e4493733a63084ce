/*
 * cpu_model.c -- the x86 CPU feature words that __builtin_cpu_supports and
 * target_clones read, for compilers whose runtime library leaves them empty.
 *
 * GCC and Clang compile __builtin_cpu_supports("avx2") and the resolver of
 * a target_clones function into a call of __cpu_indicator_init() and a
 * test of one bit of __cpu_model.__cpu_features[0] (features 0-31) or of
 * __cpu_features2[] (features 32 on); the runtime library (libgcc,
 * compiler-rt) fills them from CPUID.  The layout and the feature numbers
 * are an ABI shared by both compilers and stable across their versions
 * (objects of an old compiler must work with a new runtime).  Zig's
 * compiler-rt (the C compiler the release wheels are built with, because it
 * targets an old glibc) defines these symbols as a stub that reports no
 * feature at all, so every kernel would run its baseline version.  The
 * build links this file only where a test program finds the compiler's
 * runtime broken or missing (meson.build), and the definitions, hidden in
 * the extension module, take precedence over the runtime's.
 *
 * Only the bits the kernels can ask for are set -- the x86-64 levels of
 * the psABI and their component features; every other bit stays 0, which
 * only ever means "use the baseline version".  A bit is set only when the
 * CPU has the feature and the operating system saves its registers (XCR0).
 *
 * Cost: a few CPUID instructions per call.  It is called by the ifunc
 * resolvers while the dynamic loader relocates the module, so it calls
 * nothing and touches no relocated data.  Idempotent: any thread may call
 * it again and writes the same values.
 */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)

#include <cpuid.h>

/* Feature numbers of the ABI (libgcc's enum processor_features; checked
 * against the bits GCC 12 and Zig's Clang test for these names). */
enum {
    F_CMOV = 0, F_MMX = 1, F_POPCNT = 2, F_SSE = 3, F_SSE2 = 4, F_SSE3 = 5,
    F_SSSE3 = 6, F_SSE4_1 = 7, F_SSE4_2 = 8, F_AVX = 9, F_AVX2 = 10,
    F_FMA = 14, F_AVX512F = 15, F_BMI = 16, F_BMI2 = 17, F_AVX512VL = 20,
    F_AVX512BW = 21, F_AVX512DQ = 22, F_AVX512CD = 23,
    F_X86_64_BASELINE = 95, F_X86_64_V2 = 96, F_X86_64_V3 = 97,
    F_X86_64_V4 = 98
};

#define OPF_HIDDEN __attribute__((visibility("hidden")))

OPF_HIDDEN struct {
    unsigned int __cpu_vendor, __cpu_type, __cpu_subtype;
    unsigned int __cpu_features[1];
} __cpu_model;
OPF_HIDDEN unsigned int __cpu_features2[3];

int __cpu_indicator_init(void) OPF_HIDDEN;

static void set_feature(unsigned int words[4], int f)
{
    words[f / 32] |= 1u << (f % 32);
}

int __cpu_indicator_init(void)
{
    unsigned int a, b, c, d, max_leaf, ext_c = 0, l7b = 0;
    unsigned int w[4] = {0, 0, 0, 0};
    unsigned long long xcr0 = 0;
    int ymm_ok, zmm_ok, v2, v3, v4;

    if (!__get_cpuid(0, &max_leaf, &b, &c, &d) || max_leaf < 1)
        return -1;
    __cpuid(1, a, b, c, d);
    if (c & bit_OSXSAVE) {
        unsigned int lo, hi;
        __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        xcr0 = ((unsigned long long)hi << 32) | lo;
    }
    ymm_ok = (xcr0 & 0x6) == 0x6;     /* SSE and AVX state */
    zmm_ok = (xcr0 & 0xe6) == 0xe6;   /* ... and opmask, ZMM0-15 hi, ZMM16-31 */
    if (max_leaf >= 7) {
        unsigned int l7a, l7c, l7d;
        __cpuid_count(7, 0, l7a, l7b, l7c, l7d);
        (void)l7a, (void)l7c, (void)l7d;
    }
    if (__get_cpuid_max(0x80000000u, 0) >= 0x80000001u) {
        unsigned int ea, eb, ed;
        __cpuid(0x80000001u, ea, eb, ext_c, ed);
        (void)ea, (void)eb, (void)ed;
    }

    if (d & bit_CMOV) set_feature(w, F_CMOV);
    if (d & bit_MMX) set_feature(w, F_MMX);
    if (d & bit_SSE) set_feature(w, F_SSE);
    if (d & bit_SSE2) set_feature(w, F_SSE2);
    if (c & bit_SSE3) set_feature(w, F_SSE3);
    if (c & bit_SSSE3) set_feature(w, F_SSSE3);
    if (c & bit_SSE4_1) set_feature(w, F_SSE4_1);
    if (c & bit_SSE4_2) set_feature(w, F_SSE4_2);
    if (c & bit_POPCNT) set_feature(w, F_POPCNT);
    if (l7b & bit_BMI) set_feature(w, F_BMI);
    if (l7b & bit_BMI2) set_feature(w, F_BMI2);
    if (ymm_ok) {
        if (c & bit_AVX) set_feature(w, F_AVX);
        if (l7b & bit_AVX2) set_feature(w, F_AVX2);
        if (c & bit_FMA) set_feature(w, F_FMA);
    }
    if (zmm_ok) {
        if (l7b & bit_AVX512F) set_feature(w, F_AVX512F);
        if (l7b & bit_AVX512VL) set_feature(w, F_AVX512VL);
        if (l7b & bit_AVX512BW) set_feature(w, F_AVX512BW);
        if (l7b & bit_AVX512DQ) set_feature(w, F_AVX512DQ);
        if (l7b & bit_AVX512CD) set_feature(w, F_AVX512CD);
    }

    /* The levels as the x86-64 psABI defines them. */
    v2 = (c & bit_CMPXCHG16B) && (ext_c & bit_LAHF_LM) && (c & bit_POPCNT)
         && (c & bit_SSE3) && (c & bit_SSSE3) && (c & bit_SSE4_1)
         && (c & bit_SSE4_2);
    v3 = v2 && ymm_ok && (c & bit_AVX) && (l7b & bit_AVX2) && (l7b & bit_BMI)
         && (l7b & bit_BMI2) && (c & bit_F16C) && (c & bit_FMA)
         && (ext_c & bit_LZCNT) && (c & bit_MOVBE) && (c & bit_OSXSAVE);
    v4 = v3 && zmm_ok && (l7b & bit_AVX512F) && (l7b & bit_AVX512BW)
         && (l7b & bit_AVX512CD) && (l7b & bit_AVX512DQ)
         && (l7b & bit_AVX512VL);
    if ((d & bit_CMOV) && (d & bit_SSE2))
        set_feature(w, F_X86_64_BASELINE);
    if (v2) set_feature(w, F_X86_64_V2);
    if (v3) set_feature(w, F_X86_64_V3);
    if (v4) set_feature(w, F_X86_64_V4);

    __cpu_model.__cpu_features[0] = w[0];
    __cpu_features2[0] = w[1];
    __cpu_features2[1] = w[2];
    __cpu_features2[2] = w[3];
    return 0;
}

#else
/* Not x86 or not GCC-compatible: nothing to provide (ISO C forbids an
 * empty translation unit). */
typedef int opf_cpu_model_unused;
#endif
