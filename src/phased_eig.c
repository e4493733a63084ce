/*
 * phased_eig.c -- dsyevr in three interruptible phases (see phased_eig.h).
 *
 * The phases and their arguments follow LAPACK's dsyevr (3.x) for
 * jobz = 'V', range = 'A', abstol = 0 when dstemr succeeds: workspace
 * offsets tau 0, d n, e 2n, dd 3n, ee 4n, wk 5n; dsytrd gets lwork - 5n,
 * dstemr the full lwork (as dsyevr passes it) with tryrac = 1
 * (abstol <= 2 n eps), dormtr the workspace from e on, lwork - 2n.  The
 * workspace lengths decide the block sizes of dsytrd and dormtr, so they
 * are what keeps the numbers dsyevr's.  Cost: dsyevr's plus one n x n copy.
 */
#include "phased_eig.h"

#include <math.h>
#include <string.h>

#include "interrupt.h"

/* the poll sites (interrupt.h) */
enum { POLL_TRIDIAGONAL = 31, POLL_TRIDIAGONAL_EIG = 32 };

static int whole(int n, double *a, double *w, double *z, double *work,
                 int *iwork, int *isuppz, const opf_lapack *fns)
{
    int il = 0, iu = 0, m = 0, lwork = 26 * n, liwork = 10 * n, info = 0;
    double vl = 0.0, vu = 0.0, abstol = 0.0;
    char jobz = 'V', range = 'A', uplo = 'L';
    fns->dsyevr(&jobz, &range, &uplo, &n, a, &n, &vl, &vu, &il, &iu, &abstol,
                &m, w, z, &n, isuppz, work, &lwork, iwork, &liwork, &info);
    return info != 0 || m != n ? OPF_EEIG : OPF_OK;
}

/* the largest |a_ij| of the lower triangle (dlansy 'M', exact) */
static double max_abs_lower(int n, const double *a)
{
    double big = 0.0;
    for (int j = 0; j < n; j++)
        for (int i = j; i < n; i++) {
            const double v = fabs(a[(size_t)j * n + i]);
            big = v > big || v != v ? v : big;
        }
    return big;
}

int opf_eig_phased(int n, double *a, double *w, double *z, double *work,
                   int *iwork, int *isuppz, double *save,
                   const opf_lapack *fns, int poll)
{
    const double big = n >= 2 ? max_abs_lower(n, a) : 0.0;
    int lwork = 26 * n, liwork = 10 * n, llwork = lwork - 5 * n,
        llwrkn = lwork - 2 * n, il = 0, iu = 0, m = 0, nzc = n, tryrac = 1,
        info = 0;
    double vl = 0.0, vu = 0.0;
    double *tau = work, *d = work + n, *e = work + 2 * n, *dd = work + 3 * n,
           *ee = work + 4 * n, *wk = work + 5 * n;
    char jobz = 'V', range = 'A', uplo = 'L', side = 'L', trans = 'N';
    if (n < 2 || !(big >= 0x1p-400 && big <= 0x1p200) || !fns->dsytrd
        || !fns->dstemr || !fns->dormtr)
        return whole(n, a, w, z, work, iwork, isuppz, fns);
    memcpy(save, a, (size_t)n * n * sizeof *a);
    fns->dsytrd(&uplo, &n, a, &n, d, e, tau, wk, &llwork, &info);
    if (opf_interrupt_poll(poll, POLL_TRIDIAGONAL))
        return OPF_EINTR;
    memcpy(ee, e, (size_t)(n - 1) * sizeof *e);
    memcpy(dd, d, (size_t)n * sizeof *d);
    fns->dstemr(&jobz, &range, &n, dd, ee, &vl, &vu, &il, &iu, &m, w, z, &n,
                &nzc, isuppz, &tryrac, wk, &lwork, iwork, &liwork, &info);
    if (info != 0) { /* dsyevr's own fallback, from the matrix as given */
        memcpy(a, save, (size_t)n * n * sizeof *a);
        return whole(n, a, w, z, work, iwork, isuppz, fns);
    }
    if (opf_interrupt_poll(poll, POLL_TRIDIAGONAL_EIG))
        return OPF_EINTR;
    fns->dormtr(&side, &uplo, &trans, &n, &n, a, &n, tau, z, &n, e, &llwrkn,
                &info);
    return info != 0 || m != n ? OPF_EEIG : OPF_OK;
}
