/*
 * interrupt.c -- the SIGINT flag the trial loops poll (see interrupt.h).
 *
 * The handler chains to the one it replaced, with that handler's calling
 * convention, so Python still sees every signal; arming and disarming
 * happen in the main thread with the GIL held, around one compiled chunk,
 * and no Python code can change the SIGINT disposition in between (only
 * the main thread may, and it is in the chunk).
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* sigaction under -std=c99 */
#endif
#include "interrupt.h"

#include <signal.h>
#include <stddef.h>

#if defined(__GNUC__) || defined(__clang__)
#define OPF_LOAD(p) __atomic_load_n(p, __ATOMIC_RELAXED)
#define OPF_STORE(p, v) __atomic_store_n(p, v, __ATOMIC_RELAXED)
#else
#define OPF_LOAD(p) (*(p))
#define OPF_STORE(p, v) (*(p) = (v))
#endif

static volatile sig_atomic_t tripped;
static long countdown; /* testing; touched by the polling thread only */
static int test_site = -1;

#if defined(SIGINT) && defined(SA_SIGINFO) && !defined(_WIN32)

static struct sigaction previous;
static int depth;

static void on_sigint(int sig, siginfo_t *info, void *ctx)
{
    OPF_STORE(&tripped, 1);
    if (previous.sa_flags & SA_SIGINFO)
        previous.sa_sigaction(sig, info, ctx);
    else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN)
        previous.sa_handler(sig);
}

int opf_interrupt_arm(void)
{
    struct sigaction now, ours;
    if (depth > 0) { /* already armed (cannot happen today; harmless) */
        depth++;
        return 1;
    }
    if (sigaction(SIGINT, NULL, &now) != 0)
        return 0;
    if (!(now.sa_flags & SA_SIGINFO)
        && (now.sa_handler == SIG_DFL || now.sa_handler == SIG_IGN))
        return 0; /* nothing would see the signal, or it ends the process */
    if (now.sa_flags & SA_RESETHAND)
        return 0; /* a one-shot handler: leave it alone */
    previous = now;
    ours = now;
    ours.sa_flags |= SA_SIGINFO;
    ours.sa_sigaction = on_sigint;
    OPF_STORE(&tripped, 0);
    if (sigaction(SIGINT, &ours, NULL) != 0)
        return 0;
    depth = 1;
    return 1;
}

void opf_interrupt_disarm(void)
{
    if (depth > 0 && --depth == 0)
        sigaction(SIGINT, &previous, NULL);
}

#else

int opf_interrupt_arm(void)
{
    return 0;
}

void opf_interrupt_disarm(void)
{
}

#endif

int opf_interrupt_poll(int armed, int site)
{
    if (!armed)
        return 0;
    if (countdown > 0 && --countdown == 0) {
        test_site = site;
        raise(SIGINT);
    }
    return OPF_LOAD(&tripped) != 0;
}

void opf_interrupt_stop(int *flag)
{
    OPF_STORE(flag, 1);
}

int opf_interrupt_stopped(const int *flag)
{
    return flag != NULL && OPF_LOAD(flag) != 0;
}

void opf_interrupt_test_countdown(long k)
{
    countdown = k > 0 ? k : 0;
    test_site = -1;
}

int opf_interrupt_test_site(void)
{
    return test_site;
}
