# Ctrl-C and stop flags inside a compiled chunk (included by _kernels.pyx):
# src/interrupt.h.  The main thread's chunks poll the SIGINT flag, other
# threads' a StopFlag they watch.

# --- Ctrl-C inside a compiled chunk (src/interrupt.h) ------------------------------

cdef unsigned long _MAIN_THREAD = threading.main_thread().ident


cdef int _arm() except -1:
    """Before a chunk: in the main thread, arm the SIGINT flag the trial
    loops poll (their ``poll`` field is set to the result) and honour a
    Ctrl-C that came just before (nothing run).  Returns 1 if armed."""
    if PyThread_get_thread_ident() != _MAIN_THREAD or not opf_interrupt_arm():
        return 0
    try:
        PyErr_CheckSignals()
    except BaseException:
        opf_interrupt_disarm()
        raise
    return 1


cdef void _disarm(int armed) noexcept:
    """After an armed chunk, in its ``finally`` (so that an exception in
    between cannot leave the handler installed)."""
    if armed:
        opf_interrupt_disarm()


cdef int _honour(int armed) except -1:
    """After an armed chunk (once its lock is released): run Python's SIGINT
    handler now, so that a Ctrl-C during the chunk raises KeyboardInterrupt
    here with the state that of the trials done."""
    if armed:
        PyErr_CheckSignals()
    return 0


# --- stopping a chunk from another thread (src/interrupt.h's stop flag) --------------

class Stopped(Exception):
    """A batch stopped between two trials by the :class:`StopFlag` its thread
    watches; the learner is settled as after an interrupt (the rows done
    processed, nothing else)."""


cdef class StopFlag:
    """A flag that stops, between two trials, the compiled loops of the
    batches run by the threads watching it (:func:`watching`).

    SIGINT reaches the compiled loops of the main thread only; a pool
    (``onlinepca_fast.parallel.run_many``) gives its threads one of these
    and sets it on Ctrl-C, so that a running chunk stops at its next trial
    (raising :class:`Stopped`) instead of running to its end.
    """
    cdef int value

    def set(self):
        opf_interrupt_stop(&self.value)

    def is_set(self):
        return opf_interrupt_stopped(&self.value) != 0


_watched = threading.local()


class watching:
    """Context manager: the batches this thread runs inside the block poll
    `flag` (a :class:`StopFlag`) between trials."""

    __slots__ = ("flag", "before")

    def __init__(self, StopFlag flag):
        self.flag = flag

    def __enter__(self):
        self.before = getattr(_watched, "flag", None)
        _watched.flag = self.flag
        return self.flag

    def __exit__(self, *exc):
        _watched.flag = self.before
        return False


cdef inline StopFlag _watched_flag():
    """The flag this thread watches, or None (held by the caller while its
    chunk runs)."""
    return getattr(_watched, "flag", None)


cdef inline const int *_stop_pointer(StopFlag flag):
    return &flag.value if flag is not None else NULL


cdef int _honour_stop(StopFlag flag, int status) except -1:
    """After a chunk that the flag stopped: raise :class:`Stopped`."""
    if flag is not None and status == OPF_EINTR and flag.is_set():
        raise Stopped("the batch was stopped by its thread's stop flag")
    return 0


def check_stop():
    """Raise :class:`Stopped` if this thread watches a flag that is set: for
    the Python-side steps before a batch's compiled loop (the private copy
    of a large batch), which change no state."""
    flag = _watched_flag()
    if flag is not None and flag.is_set():
        raise Stopped("the batch was stopped by its thread's stop flag")
