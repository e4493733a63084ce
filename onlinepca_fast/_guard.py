"""Concurrency guard and interruption pacing of the stateful objects.

A learner (like NumPy's generators or scikit-learn's estimators) is not
thread-safe: its compiled loop updates the state arrays in place with the
GIL released.  Instead of documenting "must not" and corrupting the state
when a program does it anyway, every learner holds one :class:`Guard`:

- a *writer* (``fit``, ``partial_fit``, ``learn_one``, ``set_params``) is
  admitted at once, or refused with ``RuntimeError`` (nothing changed) while
  another thread writes: two writers on one learner are a bug of the program;
- a *reader* (``transform``, ``copy.copy``, ``copy.deepcopy``, pickling, every
  fitted attribute) is never refused and never sees a state torn mid-trial.
  Reads are short; a batch is many short *mutations* (its compiled chunks of
  ~:data:`CHUNK_SECONDS`, each ending with the learner exactly that of the
  rows done).  A reader waits for the mutation in flight, if any, and reads
  the state between two chunks; a writer waits for the reads in flight
  before its next mutation.  So a thread that pickles a learner for a
  checkpoint while another fits it gets a consistent learner -- the learner
  of the rows done so far -- without retries.

The same thread may nest (``fit_transform``; a read inside its own write).
The guard is a ``threading.Lock`` plus a condition and counters, so it
also holds on free-threaded Python.  :func:`settled` runs the idempotent
steps that must complete (settling an interrupted batch, leaving the guard)
even if a second Ctrl-C lands in them.

:class:`Pacer` sizes the chunks in which a batch runs so that the
interpreter regains control (and sees Ctrl-C) every ~:data:`CHUNK_SECONDS`;
inside a :func:`reporting` block it also tells a callback how many trials
each chunk ran (the command line's progress bars).
"""

import contextlib
import functools
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

__all__ = ["Guard", "Pacer", "CHUNK_SECONDS", "guard_of", "reads_state", "reporting",
           "settled"]

_F = TypeVar("_F", bound=Callable[..., Any])  # a method reads_state wraps

#: Target duration of one compiled chunk of a batch: Ctrl-C is seen, and a
#: reader admitted, within about this long.
CHUNK_SECONDS = 0.02

_ident = threading.get_ident


class Guard:
    """Writer slot plus reader/mutation exclusion of one object (see the
    module doc).

    ``_writer`` is the thread that holds the writer slot (``_depth`` its
    nesting); ``_mutating`` is set while the writer changes the state (a
    compiled chunk and its bookkeeping); ``_readers`` counts the reads in
    flight and ``_waiting`` the readers waiting for a mutation to end (they
    go first at the next chunk boundary, so a long batch cannot starve them).
    """

    __slots__ = ("_lock", "_cond", "_writer", "_depth", "_readers", "_waiting",
                 "_mutating")

    def __init__(self):
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._writer = None
        self._depth = 0
        self._readers = 0
        self._waiting = 0
        self._mutating = False

    @staticmethod
    def busy_error(owner, what):
        """The one message of a refused writer."""
        return RuntimeError(
            f"{type(owner).__name__}.{what}: the learner is being changed by another "
            "thread; two threads must not write one learner at once (its state is "
            "updated in place): use one learner per thread or serialize the writes "
            "(nothing was changed)")

    # -- writers ----------------------------------------------------------------
    def enter_write(self, owner, what):
        """Take the writer slot (or nest); returns the nesting level to hand
        to :meth:`exit_write`.  Raises ``RuntimeError`` at once, changing
        nothing, while another thread holds it."""
        me = _ident()
        with self._lock:
            if self._writer == me:  # a nested call of the same thread
                self._depth += 1
                return self._depth
            if self._writer is not None:
                raise self.busy_error(owner, what)
            self._writer = me
            self._depth = 1
            return 1

    def exit_write(self, level=None):
        """Leave the write entered at nesting `level`.  With the level the
        call is idempotent: repeating it (a Ctrl-C landed in the first
        attempt, see :func:`settled`) releases nothing twice."""
        with self._lock:
            if level is not None and self._depth != level:
                return  # already left
            self._depth -= 1
            if self._depth == 0:
                self._writer = None
                self._mutating = False
                self._cond.notify_all()

    def begin_mutation(self):
        """The writer is about to change the state: wait for the reads in
        flight (and let waiting readers in first)."""
        with self._lock:
            while self._readers or self._waiting:
                self._cond.wait()
            self._mutating = True

    def end_mutation(self):
        """The state is consistent again (idempotent)."""
        with self._lock:
            if self._mutating:
                self._mutating = False
                if self._waiting:
                    self._cond.notify_all()

    @contextlib.contextmanager
    def mutation(self):
        """``with guard.mutation():`` around one change of the state, by the
        thread that holds the writer slot."""
        self.begin_mutation()
        try:
            yield
        finally:
            settled(self.end_mutation)

    def try_fast_write(self):
        """Writer slot and mutation in one step, without waiting: True if
        taken (leave with :meth:`exit_fast_write`); False if any thread
        (this one included) writes, or a reader reads or waits.  learn_one's
        compiled path uses it and lets the validating path (which waits
        where it may, and names what is busy) handle the rest."""
        if not self._lock.acquire(False):
            return False
        try:
            if self._writer is not None or self._readers or self._waiting:
                return False
            self._writer = _ident()
            self._depth = 1
            self._mutating = True
            return True
        finally:
            self._lock.release()

    def exit_fast_write(self):
        with self._lock:
            self._writer = None
            self._depth = 0
            self._mutating = False
            if self._waiting:
                self._cond.notify_all()

    # -- readers ----------------------------------------------------------------
    def enter_read(self):
        """Wait for the mutation in flight, then register as a reader.
        Returns whether it registered (False inside this thread's own write,
        which is between two mutations when it runs Python code)."""
        me = _ident()
        with self._lock:
            if self._writer == me:
                return False
            if self._mutating:
                self._waiting += 1
                try:
                    while self._mutating:
                        self._cond.wait()
                finally:
                    self._waiting -= 1
            self._readers += 1
            return True

    def exit_read(self, entered=True):
        if not entered:
            return
        with self._lock:
            self._readers -= 1
            if not self._readers:
                self._cond.notify_all()

    @contextlib.contextmanager
    def reading(self):
        """``with guard.reading():`` around one read of the state."""
        entered = self.enter_read()
        try:
            yield
        finally:
            settled(self.exit_read, entered)


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
        try:
            raise pending
        finally:
            pending = None  # the frame must not hold its own exception (a cycle)
    return result


def guard_of(obj):
    """The object's guard, made on first use (atomically: dict.setdefault)."""
    guard = obj.__dict__.get("_guard")
    if guard is None:
        guard = obj.__dict__.setdefault("_guard", Guard())
    return guard


def reads_state(method: _F) -> _F:
    """Decorator of a method (or property getter) of a guarded object that
    reads its state: a read of its guard, so that it never sees a state torn
    by another thread's batch (it waits for the chunk in flight)."""
    @functools.wraps(method)
    def wrapped(*args, **kwargs):
        guard = guard_of(args[0])
        entered = guard.enter_read()
        try:
            return method(*args, **kwargs)
        finally:
            settled(guard.exit_read, entered)
    return cast(_F, wrapped)  # the method's own signature, for type checkers


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
