#ifndef OPF_POOL_H
#define OPF_POOL_H

/*
 * A pool of worker threads for the kernels that split their work (the
 * hierarchical product, the secular solve: hodlr.c, secular_roots.c).
 *
 * Made once by the object that owns it (an updater) and reached through
 * the opf_lapack table (fns->pool, common.h); a call runs tasks 0 .. n - 1
 * on the pool's threads and the caller, and returns when all are done.
 * The caller must not run two calls on one pool at once (its owner's lock
 * sees to that).  Tasks are taken in order by whichever thread is free:
 * a task's arithmetic must not depend on the thread that runs it (the
 * kernels give each task fixed rows or columns), so that the results do
 * not depend on the number of threads.  No allocation after creation.
 *
 * Without POSIX threads (OPF_POOL_THREADS undefined), or in a process
 * forked after the pool was made, every task runs on the caller.
 */

/* task(arg, i, t): task i, run by thread t (0 the caller, t < size). */
typedef void (*opf_task_fn)(void *arg, int i, int t);

typedef struct opf_pool opf_pool;

/* A pool of n_threads - 1 workers (the caller is the other); NULL if
 * n_threads < 2 or the threads could not be made (then callers run
 * sequentially: opf_pool_size(NULL) is 1). */
opf_pool *opf_pool_create(int n_threads);
void opf_pool_destroy(opf_pool *pool);

/* The threads a call uses, the caller included (1 for NULL). */
int opf_pool_size(const opf_pool *pool);

/* Run task(arg, i, t) for i = 0 .. n_tasks - 1 on at most max_threads
 * threads (the caller and max_threads - 1 workers); NULL pool: on the
 * caller, in order. */
void opf_pool_run(opf_pool *pool, int n_tasks, int max_threads,
                  opf_task_fn task, void *arg);

#endif
