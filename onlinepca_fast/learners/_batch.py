"""The batch runner every compiled learner shares (issue 23).

A batch runs in chunks of about :data:`~onlinepca_fast._guard.CHUNK_SECONDS`
(:class:`~onlinepca_fast._guard.Pacer`), so that Ctrl-C is seen between them
-- and, in the main thread, between trials and inside a costly one, which
the compiled loop undoes.  Whatever stops the batch (Ctrl-C, a failing
trial, anything), the learner is *settled* -- made exactly the learner of
the rows its engine completed -- before the exception leaves: a second
Ctrl-C during the settling restarts it (:func:`~onlinepca_fast._guard.settled`).

A compiled trial that fails raises :class:`~onlinepca_fast._kernels.TrialError`
with ``trials_done``; the runner reports it as a ``RuntimeError`` naming the
trial, the rows before it processed.  Everything specific to a learner is in
the callables it passes: ``begin()`` (inside the protected region, before
the first chunk), ``chunk(done, size)`` (run at most `size` rows from row
`done`; return ``(rows, paced)``: how many rows are done, and whether the
time taken was the compiled run's alone, which paces the next chunk and is
reported to a progress callback), ``after()`` (after each chunk is counted:
work between chunks, e.g. re-orthogonalisation) and ``settle()``
(idempotent; returns the rows done).
"""

from __future__ import annotations

from .. import _kernels
from .._guard import Pacer, settled


def run_batch(learner, T, chunk, settle, begin=None, after=None):
    """Run the `T` rows of a batch through `chunk`; return the rows done.

    The chunk size starts where the learner's last batch left it (one
    trial for a new learner: a trial may cost a second) and is kept in
    ``learner._pace`` for the next batch.
    """
    pacer = Pacer(learner.__dict__.get("_pace", 1))
    try:
        if begin is not None:
            begin()
        done = 0
        while done < T:
            pacer.start()
            ran, paced = chunk(done, pacer.size)
            if paced:
                pacer.done(ran)
            done += ran
            if after is not None:
                after()
        # inside the try: an interrupt landing in here settles again
        done = settle()
    except BaseException as exc:  # KeyboardInterrupt (or anything) between chunks
        # settled: a second Ctrl-C landing while this one is handled
        # restarts the (idempotent) settling instead of cutting it short
        done = settled(settle)
        learner._pace = pacer.size
        if isinstance(exc, _kernels.TrialError):
            raise RuntimeError(f"trial {done} of the batch failed in the compiled "
                               f"kernel ({exc}); the {done} rows before it "
                               f"were processed") from exc
        raise
    learner._pace = pacer.size
    return done
