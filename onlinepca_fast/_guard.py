"""Concurrency guard and interruption pacing of the stateful objects.

A learner (like NumPy's generators or scikit-learn's estimators) is not
thread-safe: its compiled loop updates the state arrays in place with the
GIL released.  Instead of documenting "must not" and corrupting the state
when a program does it anyway, every learner holds a :class:`Guard`:

- a *writer* (``fit``, ``partial_fit``, ``learn_one``, ``set_params``) takes it without
  waiting; if another thread holds it (writing or reading) the call raises
  ``RuntimeError`` at once and changes nothing, and the first call finishes
  normally;
- a *reader* (``transform``, ``inverse_transform``, ``sample_projection``,
  ``copy.copy``, ``copy.deepcopy``, pickling)
  registers for its duration and fails the same way while another thread
  writes; readers do not exclude each other;
- attribute reads (``components_``, ``eigenvalues_`` ...) fail while another
  thread writes.

The same thread may nest (``fit_transform``).  The guard is a plain
``threading.Lock`` plus counters, so it also holds on free-threaded Python.
:func:`settled` runs the idempotent steps that must complete (settling an
interrupted batch, leaving the guard) even if a second Ctrl-C lands in them.

:class:`Pacer` sizes the chunks in which a batch runs so that the
interpreter regains control (and sees Ctrl-C) every ~:data:`CHUNK_SECONDS`;
inside a :func:`reporting` block it also tells a callback how many trials
each chunk ran (the command line's progress bars).
"""

import contextlib
import threading
import time

__all__ = ["Guard", "Pacer", "CHUNK_SECONDS", "guard_of", "reporting", "settled"]

#: Target duration of one compiled chunk of a batch: Ctrl-C is seen within
#: about this long (the issue's bound is 50 ms).
CHUNK_SECONDS = 0.02


class Guard:
    """Non-blocking readers-writer guard of one object (see the module doc).

    A writer holds ``_lock`` for its whole call (taken without waiting);
    readers hold it only to change their count.  A writer that finds
    readers lets go at once and fails.
    """

    __slots__ = ("_lock", "_writer", "_depth", "_readers")

    def __init__(self):
        self._lock = threading.Lock()
        self._writer = None
        self._depth = 0
        self._readers = 0

    @staticmethod
    def _busy(owner, what):
        return RuntimeError(
            f"{type(owner).__name__}.{what}: the learner is in use by another thread; "
            "a learner is not thread-safe (its state is updated in place): use one "
            "learner per thread or serialize the calls (nothing was changed)")

    def enter_write(self, owner, what):
        """Take the guard for writing (or nest); returns the nesting level
        to hand to :meth:`exit_write`."""
        me = threading.get_ident()
        if not self._lock.acquire(False):
            if self._writer == me:  # nested call of the same thread
                self._depth += 1
                return self._depth
            raise self._busy(owner, what)
        if self._readers:
            self._lock.release()
            raise self._busy(owner, what)
        self._writer = me
        self._depth = 1
        return 1

    def try_enter_write(self):
        """Take the guard for one non-nested write without waiting or
        raising: True if taken (leave with ``exit_write(1)``); False if any
        thread (this one included) writes or a reader is registered.  The
        compiled ``learn_one`` path uses it and lets its caller's validating
        path name what is busy."""
        if not self._lock.acquire(False):
            return False
        if self._readers:
            self._lock.release()
            return False
        self._writer = threading.get_ident()
        self._depth = 1
        return True

    def exit_write(self, level=None):
        """Leave the write entered at nesting `level`.  With the level the
        call is idempotent: repeating it (a Ctrl-C landed in the first
        attempt, see :func:`settled`) releases nothing twice."""
        if level is not None and self._depth != level:
            return  # already left
        self._depth -= 1
        if self._depth == 0:
            self._writer = None
            self._lock.release()

    def enter_read(self, owner, what):
        if self._writer == threading.get_ident():  # inside the thread's own write
            return
        if not self._lock.acquire(False):
            raise self._busy(owner, what)
        self._readers += 1
        self._lock.release()

    def exit_read(self):
        if self._writer is not None and self._writer == threading.get_ident():
            return
        with self._lock:  # brief: a writer that finds readers lets go at once
            self._readers -= 1

    def check_read(self, owner, what):
        writer = self._writer
        if writer is not None and writer != threading.get_ident():
            raise self._busy(owner, what)


def settled(step, *args):
    """Run ``step(*args)`` to completion even if Ctrl-C lands in it.

    `step` must be idempotent (the settling of an interrupted batch, the
    release of a guard): a ``KeyboardInterrupt`` raised inside it -- a
    second Ctrl-C arriving while the first is being handled -- restarts it,
    and is raised again once the step has completed, so that the object is
    consistent whatever the timing of the interrupts.  Returns what the
    step returns.
    """
    pending = None
    while True:
        try:
            result = step(*args)
            break
        except KeyboardInterrupt as exc:
            exc.__traceback__ = None
            pending = exc
    if pending is not None:
        raise pending
    return result


def guard_of(obj):
    """The object's guard, made on first use (atomically: dict.setdefault)."""
    guard = obj.__dict__.get("_guard")
    if guard is None:
        guard = obj.__dict__.setdefault("_guard", Guard())
    return guard


_local = threading.local()


@contextlib.contextmanager
def reporting(callback):
    """Within the block, ``callback(trials)`` is called after each compiled
    chunk of trials that a batch (``fit``, ``partial_fit``) run by this
    thread completes, about every :data:`CHUNK_SECONDS`."""
    before = getattr(_local, "callback", None)
    _local.callback = callback
    try:
        yield
    finally:
        _local.callback = before


class Pacer:
    """Chunk sizes for a batch so that each compiled call lasts about
    :data:`CHUNK_SECONDS`: starts at `first` (one trial for a learner's
    first batch: a trial may cost a second), then follows the measured time
    per trial (which grows with the state, e.g. kernel PCA's instances),
    at most doubling from chunk to chunk."""

    __slots__ = ("size", "_t0", "_report")

    def __init__(self, first=1):
        self.size = first
        self._t0 = 0.0
        self._report = getattr(_local, "callback", None)

    def start(self):
        self._t0 = time.perf_counter()

    def done(self, trials):
        elapsed = time.perf_counter() - self._t0
        if trials <= 0:
            return
        if self._report is not None:
            self._report(trials)
        per = elapsed / trials
        want = int(CHUNK_SECONDS / per) if per > 0 else 2 * self.size
        self.size = max(1, min(want, 2 * self.size))
