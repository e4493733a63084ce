#ifndef OPF_SIMD_H
#define OPF_SIMD_H

/*
 * Vectorisation hints for the O(n) passes of the kernels.
 *
 * A C compiler may not reorder floating-point sums, maxima or selects on
 * its own, so a plain loop that accumulates a sum or a maximum stays
 * scalar.  An OpenMP "simd" pragma allows exactly that reordering for the
 * loop it precedes, and nothing else: with -fopenmp-simd (GCC, Clang) it
 * needs no OpenMP runtime and starts no threads.  The build defines
 * OPF_OMP_SIMD when the compiler takes the flag; otherwise the pragmas
 * vanish and the loops run as written (same results up to the order of the
 * sums).
 *
 *   OPF_SIMD                  the iterations are independent
 *   OPF_SIMD_WITH(clauses)    ... except for the listed reductions, e.g.
 *                             OPF_SIMD_WITH(reduction(+:s) reduction(max:m))
 */
#define OPF_STR_(...) #__VA_ARGS__

/*
 * OPF_MULTIVERSION before a hot function compiles it twice, for the
 * baseline instruction set and for x86-64-v3 (AVX2, 4 doubles per vector),
 * and picks one when the library is loaded (GCC's target_clones; the build
 * defines OPF_TARGET_CLONES where the compiler and the C library support
 * it).  The clones compute the same values except for the order of the
 * vectorised sums (more lanes, other partial sums).
 */
#ifdef OPF_TARGET_CLONES
#define OPF_MULTIVERSION __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define OPF_MULTIVERSION
#endif
#ifdef OPF_OMP_SIMD
#define OPF_SIMD _Pragma("omp simd")
#define OPF_SIMD_WITH(...) _Pragma(OPF_STR_(omp simd __VA_ARGS__))
#else
#define OPF_SIMD
#define OPF_SIMD_WITH(...)
#endif

/*
 * OPF_MAX_INTO(m, v), OPF_MIN_INTO(m, v): m = max(m, v), resp. min, as the
 * update of a max/min reduction in an OPF_SIMD_WITH loop (m never NaN).
 * GCC vectorises the plain `m = v > m ? v : m` (maxpd computes exactly
 * that).  Clang, without -ffast-math, leaves such a loop scalar, exp and
 * all: a CappedHedge trial at n = 1e5 took 1.7x the time of a GCC build
 * (with these macros 0.9x).  It vectorises the IEEE maximumNumber /
 * minimumNumber builtins (Clang >= 20) in every loop, fmax/fmin in loops
 * without stores.  They differ from the plain form only in the sign of a
 * zero result (all ignore a NaN v).  GCC builds are unchanged.
 */
#if defined(__clang__) && defined(__has_builtin)
#if __has_builtin(__builtin_elementwise_maximumnum) \
    && __has_builtin(__builtin_elementwise_minimumnum)
#define OPF_MAX_INTO(m, v) ((m) = __builtin_elementwise_maximumnum((m), (v)))
#define OPF_MIN_INTO(m, v) ((m) = __builtin_elementwise_minimumnum((m), (v)))
#else
#define OPF_MAX_INTO(m, v) ((m) = __builtin_fmax((m), (v)))
#define OPF_MIN_INTO(m, v) ((m) = __builtin_fmin((m), (v)))
#endif
#else
#define OPF_MAX_INTO(m, v) ((m) = (v) > (m) ? (v) : (m))
#define OPF_MIN_INTO(m, v) ((m) = (v) < (m) ? (v) : (m))
#endif

/*
 * OPF_PREFETCH(p, from, to): ask for the cache lines of p[from..to) (the
 * next chunk of a pass).  The hardware prefetchers of some machines fall
 * far behind a streaming pass over arrays of ~1 MB; this halved the time
 * of such passes there.  A no-op where the builtin is missing.
 */
#if defined(__GNUC__)
#define OPF_PREFETCH(p, from, to)                                            \
    do {                                                                     \
        ptrdiff_t pf_;                                                       \
        for (pf_ = (from); pf_ < (to); pf_ += 8)                             \
            __builtin_prefetch((p) + pf_);                                   \
    } while (0)
#else
#define OPF_PREFETCH(p, from, to) ((void)0)
#endif

/* The chunk length of the prefetching passes (4 KB of doubles). */
#define OPF_CHUNK 512

/*
 * Explicit vectors of four doubles (GCC >= 12 and Clang vector extensions),
 * for the few passes that need what a compiler will not derive from a
 * scalar loop: an in-register prefix sum, or a rarely taken branch per
 * block of four.  Elementwise IEEE operations on vectors give exactly the
 * values the same operations give on scalars.  Without the extensions
 * (OPF_VECTOR undefined) those passes use their scalar form.
 */
#if defined(__GNUC__) && (defined(__clang__) || __GNUC__ >= 12) \
    && !defined(OPF_NO_VECTOR) /* (a switch to build and test without) */
#define OPF_VECTOR 1
typedef double opf_v4d __attribute__((vector_size(32)));
typedef long long opf_v4l __attribute__((vector_size(32)));
typedef int opf_v4i __attribute__((vector_size(16)));
#endif

#endif
