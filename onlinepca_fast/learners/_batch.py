"""The batch runner every compiled learner shares.

A batch runs in chunks of about :data:`~onlinepca_fast._guard.CHUNK_SECONDS`
(:class:`~onlinepca_fast._guard.Pacer`), so that Ctrl-C is seen between them
-- and, in the main thread, between trials and inside a costly one, which
the compiled loop undoes.  Each chunk is one *mutation* of the learner's
guard (:mod:`onlinepca_fast._guard`): it ends with the learner exactly the
learner of the rows done, so that a reader in another thread (a copy, a
pickle, an attribute) admitted between two chunks sees a consistent state.
Whatever stops a chunk (Ctrl-C, a failing trial, anything), the learner is
*settled* -- made exactly the learner of the rows its engine completed --
before the exception leaves: a second Ctrl-C during the settling restarts
it (:func:`~onlinepca_fast._guard.settled`).

A compiled trial that fails raises :class:`~onlinepca_fast._kernels.TrialError`
with ``trials_done``; the runner reports it as a ``RuntimeError`` naming the
trial, the rows before it processed.  Everything specific to a learner is in
the callables it passes: ``step(done, size)`` (run at most `size` rows from
row `done` and leave the learner consistent; return ``(rows, paced)``: how
many rows are done, and whether the time taken was the compiled run's
alone, which paces the next chunk and is reported to a progress callback)
and ``settle()`` (idempotent, after an exception inside ``step``; returns
the rows of the batch done).
"""

from __future__ import annotations

from .. import _kernels
from .._guard import Pacer, guard_of, settled


def run_batch(learner, T, step, settle):
    """Run the `T` rows of a batch through `step`; return the rows done.

    The chunk size starts where the learner's last batch left it (one
    trial for a new learner: a trial may cost a second) and is kept in
    ``learner._pace`` for the next batch.
    """
    guard = guard_of(learner)
    pacer = Pacer(learner.__dict__.get("_pace", 1))
    done = 0
    try:
        while done < T:
            guard.begin_mutation()
            try:
                pacer.start()
                ran, paced = step(done, pacer.size)
            except BaseException:
                # settled: a second Ctrl-C landing while this one is handled
                # restarts the (idempotent) settling instead of cutting it short
                done = settled(settle)
                raise
            finally:
                settled(guard.end_mutation)
            done += ran
            if paced:
                pacer.done(ran)  # may report progress (and a callback may raise)
    except BaseException as exc:
        learner._pace = pacer.size
        if isinstance(exc, _kernels.TrialError):
            raise RuntimeError(f"trial {done} of the batch failed in the compiled "
                               f"kernel ({exc}); the {done} rows before it "
                               f"were processed") from exc
        raise
    learner._pace = pacer.size
    return done
