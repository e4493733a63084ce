#ifndef OPF_INTERRUPT_H
#define OPF_INTERRUPT_H

/*
 * interrupt.h -- Ctrl-C inside a compiled chunk (issue 22, item 6).
 *
 * The trial loops run without the GIL, so Python's SIGINT handler (which
 * raises KeyboardInterrupt) only runs once a chunk returns; a trial of
 * share="past" at n = 700 or of kernel PCA at t = 2500 costs most of a
 * second.  While a chunk runs in the main thread the binding layer arms a
 * SIGINT handler that sets one flag and then calls the handler it replaced
 * (Python's, which records the signal as usual).  The loops poll the flag
 * between trials and between the phases of an expensive trial; a trial
 * that sees it abandons its scratch results and returns OPF_EINTR with the
 * state exactly as before that trial, so a trial is still atomic from the
 * outside.  A poll reads one flag: no allocation, no GIL.
 *
 * POSIX only (sigaction); elsewhere opf_interrupt_arm arms nothing and the
 * loops are interrupted between chunks as before.
 */

/* Main thread, GIL held (the binding layer): install the chained handler
 * and clear the flag.  Returns 1 if armed (then call opf_interrupt_disarm
 * after the chunk), 0 if SIGINT has no handler to chain (default or
 * ignored: nothing to poll for) or on platforms without sigaction. */
int opf_interrupt_arm(void);
void opf_interrupt_disarm(void);

/* Poll: nonzero once SIGINT arrived since opf_interrupt_arm.  `armed` is
 * the loop's flag (0: never interrupted, e.g. a chunk in another thread);
 * `site` names the poll point for the testing countdown below. */
int opf_interrupt_poll(int armed, int site);

/* A stop flag (issue 35, item 11): the SIGINT flag above reaches the loops
 * of the main thread only; a loop running in another thread polls a flag
 * that the thread which owns the run sets (run_many's pool, on Ctrl-C or
 * another stream's error), between two trials, and stops with OPF_EINTR as
 * for SIGINT.  The flag is an int owned by the caller (NULL: none); these
 * two are the only accesses to it (relaxed atomics: a stale read delays the
 * stop by one trial, nothing more). */
void opf_interrupt_stop(int *flag);
int opf_interrupt_stopped(const int *flag);

/* Poll sites outside the dense state (state_dense.c numbers its own from
 * 1). */
enum {
    OPF_POLL_KPCA_TRIAL = 11, /* kernel PCA: before each trial */
    OPF_POLL_BORDERED = 12,   /* bordered update: block solved, nothing written */
    OPF_POLL_CLUSTERED_TRIAL = 21 /* clustered state: before each trial */
};

/* Testing: raise(SIGINT) at the k-th armed poll from now (k >= 1; 0: off),
 * so that tests can interrupt a trial at each of its poll points.
 * opf_interrupt_test_site: the site of the poll that raised it (-1: none). */
void opf_interrupt_test_countdown(long k);
int opf_interrupt_test_site(void);

#endif
