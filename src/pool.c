/*
 * pool.c -- the worker threads of the kernels that split their work (see
 * pool.h): POSIX threads waiting on a condition variable between calls; a
 * call hands out its tasks by an atomic counter.  Cost per call: a
 * broadcast and a wait, a few microseconds, against the milliseconds of a
 * split product.
 */
#define _POSIX_C_SOURCE 200809L /* pthread_sigmask under -std=c99 */

#include "pool.h"

#include <stdlib.h>

#ifdef OPF_POOL_THREADS

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

typedef struct {
    opf_pool *pool;
    int t; /* the worker's thread index, 1 .. size - 1 */
} worker_arg;

struct opf_pool {
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    int size;                /* threads of a call, the caller included */
    pid_t pid;               /* the process whose threads these are */
    unsigned long generation; /* calls started */
    int stop;
    /* the call in progress (written under mu before it starts) */
    opf_task_fn task;
    void *arg;
    int n_tasks, max_threads;
    int next;                /* the next task, taken atomically */
    int busy;                /* workers not yet done with the call */
    pthread_t *threads;      /* size - 1 */
    worker_arg *args;
};

static void run_tasks(opf_pool *p, int t)
{
    for (;;) {
        const int i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (i >= p->n_tasks)
            return;
        p->task(p->arg, i, t);
    }
}

static void *worker(void *a)
{
    const worker_arg *wa = a;
    opf_pool *p = wa->pool;
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->generation == seen && !p->stop)
            pthread_cond_wait(&p->start, &p->mu);
        if (p->stop)
            break;
        seen = p->generation;
        if (wa->t < p->max_threads) {
            pthread_mutex_unlock(&p->mu);
            run_tasks(p, wa->t);
            pthread_mutex_lock(&p->mu);
        }
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

opf_pool *opf_pool_create(int n_threads)
{
    if (n_threads < 2)
        return NULL;
    opf_pool *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->threads = calloc((size_t)n_threads - 1, sizeof *p->threads);
    p->args = calloc((size_t)n_threads - 1, sizeof *p->args);
    if (p->threads == NULL || p->args == NULL
        || pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p->threads);
        free(p->args);
        free(p);
        return NULL;
    }
    pthread_cond_init(&p->start, NULL);
    pthread_cond_init(&p->done, NULL);
    p->pid = getpid();
    /* The workers block every signal (they inherit the mask): SIGINT goes
     * to the threads that poll for it (interrupt.h). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int made = 0;
    for (; made < n_threads - 1; made++) {
        p->args[made].pool = p;
        p->args[made].t = made + 1;
        if (pthread_create(&p->threads[made], NULL, worker, &p->args[made])
            != 0)
            break;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    p->size = made + 1;
    if (made == 0) {
        opf_pool_destroy(p);
        return NULL;
    }
    return p;
}

void opf_pool_destroy(opf_pool *p)
{
    if (p == NULL)
        return;
    if (p->pid == getpid()) { /* a forked child has none of the threads */
        pthread_mutex_lock(&p->mu);
        p->stop = 1;
        pthread_cond_broadcast(&p->start);
        pthread_mutex_unlock(&p->mu);
        for (int i = 0; i < p->size - 1; i++)
            pthread_join(p->threads[i], NULL);
        pthread_cond_destroy(&p->start);
        pthread_cond_destroy(&p->done);
        pthread_mutex_destroy(&p->mu);
    }
    free(p->threads);
    free(p->args);
    free(p);
}

int opf_pool_size(const opf_pool *p) { return p == NULL ? 1 : p->size; }

void opf_pool_run(opf_pool *p, int n_tasks, int max_threads,
                  opf_task_fn task, void *arg)
{
    if (p == NULL || max_threads < 2 || n_tasks < 2 || p->pid != getpid()) {
        for (int i = 0; i < n_tasks; i++)
            task(arg, i, 0);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->task = task;
    p->arg = arg;
    p->n_tasks = n_tasks;
    p->max_threads = max_threads < p->size ? max_threads : p->size;
    p->next = 0;
    p->busy = p->size - 1;
    p->generation++;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    run_tasks(p, 0);
    pthread_mutex_lock(&p->mu);
    while (p->busy > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

#else /* no POSIX threads: every task on the caller */

opf_pool *opf_pool_create(int n_threads)
{
    (void)n_threads;
    return NULL;
}

void opf_pool_destroy(opf_pool *p) { (void)p; }

int opf_pool_size(const opf_pool *p)
{
    (void)p;
    return 1;
}

void opf_pool_run(opf_pool *p, int n_tasks, int max_threads,
                  opf_task_fn task, void *arg)
{
    (void)p;
    (void)max_threads;
    for (int i = 0; i < n_tasks; i++)
        task(arg, i, 0);
}

#endif
