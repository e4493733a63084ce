/*
 * secular.c -- the pieces of a Gu-Eisenstat eigen-update that the rank-one
 * update (rank_one_update.c) and the bordered update (bordered_update.c)
 * share: workspace layout, deflation, the dsyevr fallback of the secular
 * solve, the merge into ascending order and the eigenvector GEMM.
 * One implementation of each; see secular.h for the contracts.  No
 * allocation: all workspace is the caller's.
 *
 * Deflation is LAPACK dlaed2/dlaed8's: components of the coupling vector
 * below the tolerance are dropped (their eigenpairs are kept), each pair of
 * nearly equal eigenvalues is merged by a Givens rotation that moves the
 * weight onto the second of them, and a run of c exactly equal eigenvalues
 * (the common case: capped learners) at once by one Householder reflector,
 * O(n c) with no dependency chain, where c - 1 chained rotations would be
 * latency bound.  Both are applied to Q row by row.
 *
 * The secular solve (roots and Loewner eigenvectors, opf_sec_solve) is in
 * secular_roots.c.
 */

#include "secular.h"

#include <math.h>
#include <string.h>

size_t opf_sec_work_len(ptrdiff_t n)
{
    size_t u = n > 0 ? (size_t)n : 0;
    return 2 * u * u + 40 * u + 26 + opf_hodlr_work_len(n + 1, n + 1);
}

size_t opf_sec_iwork_len(ptrdiff_t n)
{
    size_t u = n > 0 ? (size_t)n : 0;
    return 23 * u + 10;
}

void opf_sec_layout(ptrdiff_t n, double *work, int *iwork, opf_sec_ws *s)
{
    s->zq = work;
    s->u = s->zq + n;
    s->dw = s->u + n;
    s->dlam = s->dw + n;
    s->w = s->dlam + n;
    s->lam = s->w + n;
    s->what = s->lam + n;
    s->dd = s->what + n;
    s->tmp = s->dd + n;
    s->defval = s->tmp + n;
    s->rc = s->defval + n;
    s->rs = s->rc + n;
    s->hv = s->rs + n;
    s->hbeta = s->hv + n;
    s->syw = s->hbeta + n;
    s->big = s->syw + 26 * n + 1;
    s->nbig = 2 * (size_t)n * (size_t)n;
    s->hw = s->big + s->nbig;
    s->hier = -1;
    s->n_product_fallbacks = 0;
    s->n_structured = 0;
    s->nd = iwork;
    s->df = s->nd + n;
    s->rp = s->df + n;
    s->rj = s->rp + n;
    s->onew = s->rj + n;
    s->odf = s->onew + n;
    s->mark = s->odf + n;
    s->list = s->mark + n;
    s->hidx = s->list + n;
    s->hoff = s->hidx + n;
    s->hfirst = s->hoff + n + 1;
    s->isuppz = s->hfirst + n;
    s->syiw = s->isuppz + 2 * n;
}

/* ---- deflation ---------------------------------------------------------- */

void opf_sec_deflate(int n, double zs, double tol, opf_sec_ws *ws,
                     opf_sec_defl *out)
{
    double *u = ws->u, *dw = ws->dw;

    /* 1. Each run of exactly equal eigenvalues with c >= 2 components
     * above the tolerance: one reflector H = I - beta v v^T with
     * H u_C = -sign(u_last) |u_C| e_last.  The other c - 1 components
     * become 0 and deflate in 2 with their eigenvalues untouched. */
    int nh = 0, nhv = 0;
    ws->hoff[0] = 0;
    for (int a = 0, b; a < n; a = b) {
        int c = 0;
        double ss = 0.0;
        for (b = a; b < n && dw[b] == dw[a]; b++)
            if (zs * fabs(u[b]) > tol) {
                ws->hidx[nhv + c++] = b;
                ss += u[b] * u[b];
            }
        if (c < 2)
            continue;
        const int last = ws->hidx[nhv + c - 1];
        const double tau = copysign(sqrt(ss), u[last]);
        for (int j = 0; j < c; j++)
            ws->hv[nhv + j] = u[ws->hidx[nhv + j]];
        ws->hv[nhv + c - 1] += tau;
        /* v^T v = ss + 2 tau u_last + tau^2 = 2 tau (tau + u_last) */
        ws->hbeta[nh] = 1.0 / (tau * ws->hv[nhv + c - 1]);
        for (int j = 0; j < c - 1; j++)
            u[ws->hidx[nhv + j]] = 0.0;
        u[last] = -tau;
        ws->hfirst[nh] = last - ws->hidx[nhv] == c - 1 ? ws->hidx[nhv] : -1;
        nhv += c;
        ws->hoff[++nh] = nhv;
    }

    /* 2. Small components and nearly equal pairs. */
    int k = 0, ndf = 0, nrot = 0, prev = -1;
    for (int j = 0; j < n; j++) {
        if (zs * fabs(u[j]) <= tol) {
            ws->df[ndf] = j;
            ws->defval[ndf++] = dw[j];
            continue;
        }
        if (prev < 0) {
            prev = j;
            continue;
        }
        const double tau = hypot(u[j], u[prev]);
        const double c = u[j] / tau, s = -u[prev] / tau;
        const double t = dw[j] - dw[prev]; /* >= 0 */
        if (fabs(t * c * s) <= tol) {
            /* Rotate (prev, j) so that the weight sits on j.  The rotated
             * diagonal is d_prev + t s^2, d_j - t s^2 (exact when t = 0, so
             * an exact cluster keeps its value bit for bit); the discarded
             * off-diagonal t c s is below tol. */
            const double ts2 = t * s * s;
            u[j] = tau;
            u[prev] = 0.0;
            ws->rp[nrot] = prev;
            ws->rj[nrot] = j;
            ws->rc[nrot] = c;
            ws->rs[nrot++] = s;
            ws->df[ndf] = prev;
            ws->defval[ndf++] = dw[prev] + ts2;
            dw[j] -= ts2;
        } else {
            ws->nd[k++] = prev;
        }
        prev = j;
    }
    if (prev >= 0)
        ws->nd[k++] = prev;

    /* Deflated eigenvalues ascending.  Rotations move a value within
     * [d_prev, d_j], so the list is nearly sorted: insertion sort. */
    for (int j = 1; j < ndf; j++) {
        const double v = ws->defval[j];
        const int idx = ws->df[j];
        int i = j - 1;
        for (; i >= 0 && ws->defval[i] > v; i--) {
            ws->defval[i + 1] = ws->defval[i];
            ws->df[i + 1] = ws->df[i];
        }
        ws->defval[i + 1] = v;
        ws->df[i + 1] = idx;
    }
    out->k = k;
    out->ndf = ndf;
    out->nh = nh;
    out->nhv = nhv;
    out->nrot = nrot;
}

void opf_reverse(double *a, size_t len)
{
    for (size_t i = 0, j = len > 0 ? len - 1 : 0; i < j; i++, j--) {
        const double t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

int opf_sec_syevr(int m, double *a, double *lam, double *s,
                  const opf_sec_ws *ws, const opf_lapack *fns)
{
    char jobz = 'V', range = 'A', uplo = 'L';
    double vl = 0.0, vu = 0.0, abstol = 0.0;
    int il = 1, iu = m, found = 0, info = 0, ld = m;
    int lwork = 26 * m > 1 ? 26 * m : 1, liwork = 10 * m > 1 ? 10 * m : 1;

    fns->dsyevr(&jobz, &range, &uplo, &ld, a, &ld, &vl, &vu, &il, &iu,
                &abstol, &found, lam, s, &ld, ws->isuppz, ws->syw, &lwork,
                ws->syiw, &liwork, &info);
    if (info != 0 || found != m)
        return 0;
    for (ptrdiff_t k = 0; k < (ptrdiff_t)m * m; k++)
        if (!isfinite(s[k]))
            return 0;
    for (int k = 0; k < m; k++)
        if (!isfinite(lam[k]))
            return 0;
    return 1;
}

/* ---- merge and eigenvectors ---------------------------------------------- */

void opf_sec_merge(int K, const double *lam, int ndf, int sg, double *d,
                   opf_sec_ws *ws)
{
    const int nout = K + ndf;
    int a = 0, b = 0;
    for (int p = 0; p < nout; p++) {
        const int oc = sg > 0 ? p : nout - 1 - p;
        if (b == ndf || (a < K && lam[a] < ws->defval[b])) {
            ws->onew[a] = oc;
            d[oc] = sg * lam[a++];
        } else {
            ws->odf[b] = oc;
            d[oc] = sg * ws->defval[b++];
        }
    }
}

/* t[k] = row[column of working index k] for the nl indices in list
 * (all n when list is NULL). */
static void load_row(double *t, const double *row, const int *list, int nl,
                     int n, int sg)
{
    if (list == NULL || nl == n) {
        if (sg > 0)
            memcpy(t, row, (size_t)n * sizeof *t);
        else
            for (int k = 0; k < n; k++)
                t[k] = row[n - 1 - k];
    } else if (sg > 0) {
        for (int j = 0; j < nl; j++)
            t[list[j]] = row[list[j]];
    } else {
        for (int j = 0; j < nl; j++)
            t[list[j]] = row[n - 1 - list[j]];
    }
}

/* Apply the deflating transformations, reflectors first, to one row t of Q
 * (in working order): t <- t H_1 ... H_nh G_1 ... G_nrot. */
static void apply_deflation(double *t, const opf_sec_ws *ws, int nh, int nrot)
{
    const int *hidx = ws->hidx, *rp = ws->rp, *rj = ws->rj;
    const double *rc = ws->rc, *rs = ws->rs;
    for (int h = 0; h < nh; h++) {
        const int a = ws->hoff[h], c = ws->hoff[h + 1] - a;
        const double *v = ws->hv + a;
        double dot = 0.0;
        if (ws->hfirst[h] >= 0) { /* the usual case: contiguous */
            double *tc = t + ws->hfirst[h];
            double d1 = 0.0, d2 = 0.0, d3 = 0.0;
            int j = 0;
            for (; j + 4 <= c; j += 4) { /* four independent sums */
                dot += tc[j] * v[j];
                d1 += tc[j + 1] * v[j + 1];
                d2 += tc[j + 2] * v[j + 2];
                d3 += tc[j + 3] * v[j + 3];
            }
            for (; j < c; j++)
                dot += tc[j] * v[j];
            dot = ((dot + d1) + (d2 + d3)) * ws->hbeta[h];
            for (j = 0; j < c; j++)
                tc[j] -= dot * v[j];
        } else {
            const int *idx = hidx + a;
            for (int j = 0; j < c; j++)
                dot += t[idx[j]] * v[j];
            dot *= ws->hbeta[h];
            for (int j = 0; j < c; j++)
                t[idx[j]] -= dot * v[j];
        }
    }
    for (int r = 0; r < nrot; r++) {
        const double a = t[rp[r]], b = t[rj[r]];
        t[rp[r]] = rc[r] * a + rs[r] * b;
        t[rj[r]] = rc[r] * b - rs[r] * a;
    }
}

/* out (nr x K, row-major, ldo) = G (nr x ks, row-major) S: the
 * hierarchical product (hodlr.c) where the caller's settings say so
 * (opf_structured_product), one GEMM otherwise or when it declines
 * (counted). */
static void sec_product(int nr, int ks, int K, const double *S, int lds,
                        const double *G, double *out, int ldo, opf_sec_ws *ws,
                        const opf_lapack *fns)
{
    if (ws->hier >= 0 ? ws->hier : opf_structured_product(ks, &fns->tune)) {
        if (opf_hodlr_product(nr, ks, K, S, lds, G, ks, out, ldo, ws->hw,
                              fns)) {
            ws->n_structured++;
            return;
        }
        ws->n_product_fallbacks++;
    }
    char trT = 'T', trN = 'N';
    double one = 1.0, zero = 0.0;
    int Ki = K, nri = nr, ksi = ks, ldsi = lds;
    fns->dgemm(&trT, &trN, &Ki, &nri, &ksi, &one, (double *)S, &ldsi,
               (double *)G, &ksi, &zero, out, &ldo);
}

/*
 * In column-major terms the GEMM's output block (K x nr) is S^T G^T, with
 * G (nr x ks, row-major) the gathered non-deflated columns.  Three ways to
 * place it, by what fits in ws->big after S:
 *   - nothing deflated: straight into q;
 *   - few survivors: into R (nr x K), and only the columns that change are
 *     read and written (deflated columns that neither rotate nor move stay
 *     where they are);
 *   - many survivors: the deflated columns (after deflation) saved in D,
 *     the GEMM overwrites q[:, :K], then every column is placed.
 */
void opf_sec_vectors(int nr, int ks, int K, const double *S, int lds,
                     int sg, const opf_sec_defl *df, double *q, int ldq,
                     opf_sec_ws *ws, size_t big_used,
                     const opf_lapack *fns)
{
    const int ndf = df->ndf, nh = df->nh, nrot = df->nrot;
    const size_t nks = (size_t)nr * ks, nK = (size_t)nr * K;
    const size_t avail = ws->nbig - big_used;
    double *G = ws->big + big_used;

    if (ndf == 0) {
        /* Q in working order is G: read in place by the hierarchical
         * product when the order is Q's own (sg > 0, or S reversed by the
         * caller), which saves a copy of Q (hodlr.h); copied for the GEMM */
        if (sg > 0 && K == ks
            && (ws->hier >= 0 ? ws->hier
                              : opf_structured_product(ks, &fns->tune))) {
            if (opf_hodlr_product(nr, ks, K, S, lds, q, ldq, q, ldq, ws->hw,
                                  fns)) {
                ws->n_structured++;
                return;
            }
            ws->n_product_fallbacks++;
            ws->hier = 0; /* declined: the GEMM below */
        }
        for (int i = 0; i < nr; i++)
            load_row(G + (size_t)i * ks, q + (size_t)i * ldq, NULL, 0, nr,
                     sg);
        sec_product(nr, ks, K, S, lds, G, q, ldq, ws, fns);
    } else if (nks + nK <= avail) {
        /* mark: 1 rotated or reflected, 2 non-deflated, 4 deflated and to
         * be written. */
        double *R = G + nks;
        int *mark = ws->mark, *list = ws->list, *moved = ws->isuppz;
        int nl = 0, nmv = 0;
        memset(mark, 0, (size_t)nr * sizeof *mark);
        for (int t = 0; t < nrot; t++)
            mark[ws->rp[t]] = mark[ws->rj[t]] = 1;
        for (int t = 0; t < df->nhv; t++)
            mark[ws->hidx[t]] = 1;
        for (int l = 0; l < ks; l++)
            mark[ws->nd[l]] |= 2;
        for (int k = 0; k < nr; k++)
            if (mark[k])
                list[nl++] = k;
        for (int i = 0; i < nr; i++) {
            const double *row = q + (size_t)i * ldq;
            double *g = G + (size_t)i * ks;
            load_row(ws->tmp, row, list, nl, nr, sg);
            apply_deflation(ws->tmp, ws, nh, nrot);
            for (int l = 0; l < ks; l++)
                g[l] = ws->tmp[ws->nd[l]];
        }
        sec_product(nr, ks, K, S, lds, G, R, K, ws, fns);

        for (int j = 0; j < ndf; j++) {
            const int k = ws->df[j];
            const int col = sg > 0 ? k : nr - 1 - k;
            if (ws->odf[j] != col || (mark[k] & 1)) {
                moved[nmv++] = j;
                mark[k] |= 4;
            }
        }
        nl = 0;
        for (int k = 0; k < nr; k++)
            if (mark[k] & 5)
                list[nl++] = k;
        for (int i = 0; i < nr; i++) {
            double *row = q + (size_t)i * ldq;
            const double *rr = R + (size_t)i * K;
            load_row(ws->tmp, row, list, nl, nr, sg);
            apply_deflation(ws->tmp, ws, nh, nrot);
            for (int t = 0; t < nmv; t++)
                row[ws->odf[moved[t]]] = ws->tmp[ws->df[moved[t]]];
            for (int c = 0; c < K; c++)
                row[ws->onew[c]] = rr[c];
        }
    } else {
        double *D = G + nks;
        for (int i = 0; i < nr; i++) {
            const double *row = q + (size_t)i * ldq;
            double *g = G + (size_t)i * ks, *dv = D + (size_t)i * ndf;
            load_row(ws->tmp, row, NULL, 0, nr, sg);
            apply_deflation(ws->tmp, ws, nh, nrot);
            for (int l = 0; l < ks; l++)
                g[l] = ws->tmp[ws->nd[l]];
            for (int j = 0; j < ndf; j++)
                dv[j] = ws->tmp[ws->df[j]];
        }
        sec_product(nr, ks, K, S, lds, G, q, ldq, ws, fns);
        for (int i = 0; i < nr; i++) {
            double *row = q + (size_t)i * ldq;
            const double *dv = D + (size_t)i * ndf;
            memcpy(ws->tmp, row, (size_t)K * sizeof *row);
            for (int c = 0; c < K; c++)
                row[ws->onew[c]] = ws->tmp[c];
            for (int j = 0; j < ndf; j++)
                row[ws->odf[j]] = dv[j];
        }
    }
}
