#ifndef OPF_PHASED_EIG_H
#define OPF_PHASED_EIG_H

#include "common.h"

/*
 * dsyevr (jobz 'V', range 'A', uplo 'L', abstol 0) of the symmetric n x n
 * column-major matrix a, as its three phases -- dsytrd, dstemr, dormtr --
 * called exactly as LAPACK's dsyevr calls them (same arguments, same
 * workspace offsets and lengths), so the eigenvalues w and eigenvectors z
 * are bit for bit dsyevr's, with the SIGINT flag (interrupt.h) polled
 * between the phases: share="past" mixing at n = 700 spends ~0.1-0.5 s in
 * dsyevr, which was one uninterruptible step (issue 22, item 6).
 *
 * Taken only where dsyevr itself takes that path: n >= 2, the largest
 * |a_ij| inside [2^-400, 2^200] (dsyevr scales the matrix outside
 * [2^-485, 2^255.5]), and the three routines available; otherwise, and if
 * dstemr fails (dsyevr then falls back to dstebz + dstein), one dsyevr call
 * on the matrix as given (the phased attempt works on a copy in `save`).
 *
 * work: 26 n doubles, iwork: 10 n ints, isuppz: 2 n ints, save: n x n
 * doubles (a copy of a, used only on the phased path).  Returns OPF_OK,
 * OPF_EEIG (dsyevr failed, or fewer than n eigenpairs) or OPF_EINTR
 * (interrupted between two phases; w and z are then scratch).
 */
int opf_eig_phased(int n, double *a, double *w, double *z, double *work,
                   int *iwork, int *isuppz, double *save,
                   const opf_lapack *fns, int poll);

#endif
