/*
 * decompose.c -- Warmuth & Kuzmin 2008, Algorithm 2 (mixture decomposition
 * of a capped vector into d-corners), in a form that does not drift.
 *
 * Algorithm 2 repeatedly takes a corner r of d non-zero components that
 * includes every component equal to |w|/d, subtracts p r with
 * p = min(d s, |w| - d l) (s the smallest chosen, l the largest unchosen
 * component), and each step sends at least one component to 0 or to the
 * cap |w|/d.  Done naively in floating point the cap drifts: a component
 * meant to sit at |w|/d ends a few ulps away, max(w) <= |w|/d fails and the
 * last steps are left with mass on fewer than d components.
 *
 * Here components that reach the cap are moved to a "capped" list and
 * their value is |w|/d by definition (it is never stored or updated), and
 * components that reach 0 leave the free list.  The free components are
 * kept sorted descending (value, then index), so the corner is the capped
 * list plus the largest free components, s and l are read off in O(1), and
 * the order is restored after each step by merging the decreased chosen
 * block with the untouched rest.  Any mass that rounding leaves behind at
 * the end is folded into the last coefficient.
 *
 * Cost: one O(n log n) sort, then O(n) per corner (the merge of a short
 * run into a long one by binary searches and block copies), at most n corners:
 * O(n^2) worst case; stopping at a selected corner is usually much earlier.
 * Workspace: n doubles, 3n indices.  No allocation.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "cap.h"
#include "decompose.h"

/* Total order used for the free list: larger value first, then index. */
static inline int precedes(const double *val, ptrdiff_t i, ptrdiff_t j)
{
    return val[i] > val[j] || (val[i] == val[j] && i < j);
}

/* Merge of a run `small` into a much longer run `big` (both sorted by
 * `precedes`): each element of small is placed by a binary search in the
 * rest of big, the runs of big in between are copied whole.  The order is
 * strict and total (value, then index), so this is the same sequence as
 * the element-by-element merge, in O(ns log nb) comparisons. */
static void merge_into_long(const double *val, const ptrdiff_t *big,
                            ptrdiff_t nb, const ptrdiff_t *small,
                            ptrdiff_t ns, ptrdiff_t *out)
{
    ptrdiff_t i, j = 0, k = 0;
    for (i = 0; i < ns; i++) {
        const ptrdiff_t x = small[i];
        ptrdiff_t lo = j, hi = nb; /* first position of big not before x */
        while (lo < hi) {
            const ptrdiff_t mid = lo + (hi - lo) / 2;
            if (precedes(val, big[mid], x))
                lo = mid + 1;
            else
                hi = mid;
        }
        memcpy(out + k, big + j, (size_t)(lo - j) * sizeof(ptrdiff_t));
        k += lo - j;
        j = lo;
        out[k++] = x;
    }
    memcpy(out + k, big + j, (size_t)(nb - j) * sizeof(ptrdiff_t));
}

static void merge(const double *val, const ptrdiff_t *a, ptrdiff_t na,
                  const ptrdiff_t *b, ptrdiff_t nb, ptrdiff_t *out)
{
    ptrdiff_t i = 0, j = 0, k = 0;
    /* One run much shorter (a decomposition step lowers d - ncap chosen
     * components and leaves the few others, or the reverse): place it. */
    if (na >= 16 * (nb + 1)) {
        merge_into_long(val, a, na, b, nb, out);
        return;
    }
    if (nb >= 16 * (na + 1)) {
        merge_into_long(val, b, nb, a, na, out);
        return;
    }
    while (i < na && j < nb) { /* branch-free: the outcome is data noise */
        const ptrdiff_t x = a[i], y = b[j];
        const double vx = val[x], vy = val[y];
        const int take_b = (vy > vx) | ((vy == vx) & (y < x)); /* precedes */
        out[k++] = take_b ? y : x;
        j += take_b;
        i += !take_b;
    }
    while (i < na)
        out[k++] = a[i++];
    while (j < nb)
        out[k++] = b[j++];
}

/* Bottom-up merge sort of idx[0..n) by `precedes`; buf holds n indices. */
static void sort_indices(const double *val, ptrdiff_t *idx, ptrdiff_t n,
                         ptrdiff_t *buf)
{
    ptrdiff_t width, i, *src = idx, *dst = buf, *tmp;
    for (width = 1; width < n; width *= 2) {
        for (i = 0; i < n; i += 2 * width) {
            ptrdiff_t mid = i + width < n ? i + width : n;
            ptrdiff_t hi = i + 2 * width < n ? i + 2 * width : n;
            merge(val, src + i, mid - i, src + mid, hi - mid, dst + i);
        }
        tmp = src;
        src = dst;
        dst = tmp;
    }
    if (src != idx)
        memcpy(idx, src, (size_t)n * sizeof(ptrdiff_t));
}

ptrdiff_t opf_decompose(const double *w, ptrdiff_t n, ptrdiff_t d,
                        double select, ptrdiff_t capacity,
                        double *coef, ptrdiff_t *corners,
                        ptrdiff_t *chosen, double *work, ptrdiff_t *iwork)
{
    double *val = work;
    ptrdiff_t *order = iwork, *buf = iwork + n, *capped = iwork + 2 * n;
    double total = 0.0, T, cap_tol, target, acc = 0.0;
    ptrdiff_t i, q, nfree = 0, ncap = 0, m = 0;
    const double dd = (double)d;

    if (n < 1 || d < 1 || d > n)
        return OPF_EINVAL;
    for (i = 0; i < n; i++)
        total += w[i];
    if (!(total > 0.0) || !isfinite(total))
        return OPF_ENOTCAPPED;

    /* Components within a few ulps of the cap are taken to be at it. */
    T = total;
    cap_tol = 16.0 * DBL_EPSILON * total / dd;
    for (i = 0; i < n; i++) {
        double v = w[i];
        val[i] = v;
        if (v >= T / dd - cap_tol)
            capped[ncap++] = i;
        else if (v > 0.0)
            order[nfree++] = i;
    }
    if (ncap > d)
        return OPF_ENOTCAPPED;
    sort_indices(val, order, nfree, buf);
    target = select * total;

    for (;;) {
        ptrdiff_t need = d - ncap, nz = 0, nc = 0, na, nb;
        double s = 0.0, l = 0.0, zero_amt, cap_amt, p, pd;

        if (need == 0) {
            /* w is T times a corner: the last step of Alg. 2. */
            p = T;
            zero_amt = cap_amt = -1.0;
        } else if (nfree < need || !(T > 0.0)) {
            /* Rounding left mass on fewer than d components: fold it into
             * the last corner.  Impossible before the first corner for
             * valid input. */
            if (m == 0)
                return OPF_ENOTCAPPED;
            if (corners != NULL)
                coef[m - 1] += T > 0.0 ? T : 0.0;
            return corners != NULL ? m : m - 1;
        } else {
            s = val[order[need - 1]];
            l = nfree > need ? val[order[need]] : 0.0;
            zero_amt = dd * s;
            cap_amt = T - dd * l;
            if (cap_amt <= 0.0) {
                /* l is at the cap up to rounding: move it, no corner. */
                capped[ncap++] = order[need];
                memmove(order + need, order + need + 1,
                        (size_t)(nfree - need - 1) * sizeof(ptrdiff_t));
                nfree--;
                continue;
            }
            p = zero_amt < cap_amt ? zero_amt : cap_amt;
        }

        if (m == n) {
            /* Theorem 2 bounds m by n; guard against rounding anyway. */
            if (corners != NULL)
                coef[m - 1] += T;
            return corners != NULL ? m : m - 1;
        }

        /* Emit corner m: the capped list plus the first `need` free. */
        if (corners != NULL && m == capacity)
            return OPF_ENOSPACE;
        {
            ptrdiff_t *dst = corners != NULL ? corners + m * d : chosen;
            memcpy(dst, capped, (size_t)ncap * sizeof(ptrdiff_t));
            memcpy(dst + ncap, order, (size_t)need * sizeof(ptrdiff_t));
            if (corners != NULL) {
                coef[m] = p;
            } else {
                acc += p;
                if (acc > target)
                    return m;
            }
            m++;
        }
        if (need == 0)
            return corners != NULL ? m : m - 1;

        /* Which components hit a boundary: the chosen ones tied with s go
         * to 0, the unchosen ones tied with l go to the cap. */
        if (zero_amt <= cap_amt) {
            const double tie = s * (1.0 + 4.0 * DBL_EPSILON);
            for (q = need - 1; q >= 0 && val[order[q]] <= tie; q--)
                nz++;
        }
        if (cap_amt <= zero_amt) {
            const double tie = l * (1.0 - 4.0 * DBL_EPSILON);
            for (q = need; q < nfree && val[order[q]] >= tie
                           && ncap + nc < d; q++)
                nc++;
        }

        T -= p;
        /* On a zero event p = d s: subtract s itself, not (d s)/d, which
         * can differ from s in the last bit and reorder tied entries. */
        pd = (need > 0 && zero_amt <= cap_amt) ? s : p / dd;
        for (q = 0; q < need - nz; q++)
            val[order[q]] -= pd;
        for (q = need - nz; q < need; q++)
            val[order[q]] = 0.0;
        for (q = need; q < need + nc; q++)
            capped[ncap++] = order[q];

        /* Restore the order: merge the lowered chosen block with the rest. */
        na = need - nz;
        nb = nfree - need - nc;
        merge(val, order, na, order + need + nc, nb, buf);
        memcpy(order, buf, (size_t)(na + nb) * sizeof(ptrdiff_t));
        nfree = na + nb;
    }
}
