"""scipy.sparse input for the learners: densified one chunk of rows at a time.

As scikit-learn's ``IncrementalPCA`` does, a sparse ``X`` (CSR, CSC, COO,
... matrix or array, any real dtype) is never densified whole: its stored
values are checked first (dtype, finiteness: O(nnz), no dense copy), then
its rows are densified in chunks of :func:`chunk_rows` rows (about
:data:`CHUNK_ENTRIES` entries, 8 MiB of float64) and each chunk runs as a
dense batch would.  The numbers are those of the dense ``X.toarray()`` bit
for bit: a batch's trials do not depend on how it is split (see
:class:`~onlinepca_fast.learners.TrialLoopLearner`), and ``transform``
computes its dense input in the same chunks.

A bad row is found when its chunk is checked; the learner is then rolled
back to its state before the call (arrays, counters, loss records and the
generator's state, in place), so that, as for dense input, nothing changes
on error.  Only a ``ValueError`` or ``TypeError`` rolls back; an
interruption (Ctrl-C) leaves the learner as after the rows processed, as
for dense input.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from .._guard import guard_of, settled
from .._validation import as_sparse_rows, is_sparse

__all__ = ["CHUNK_ENTRIES", "chunk_rows", "is_sparse", "learn_sparse", "map_sparse", "project_rows",
           "row_chunks"]

#: Entries (rows x features) densified at a time: 8 MiB of float64.
CHUNK_ENTRIES = 2 ** 20


def chunk_rows(n_features: int) -> int:
    """Rows per chunk for `n_features` columns (at least 1)."""
    return max(1, CHUNK_ENTRIES // max(1, n_features))


def row_chunks(n_rows: int, n_features: int):
    """The (start, stop) row ranges of the chunks, in order."""
    step = chunk_rows(n_features)
    return [(i, min(n_rows, i + step)) for i in range(0, n_rows, step)]


def _snapshot(learner):
    """Everything learning may change: the non-hyper-parameter attributes
    (deep-copied together, so shared arrays stay shared) and the state of
    every generator (kept by reference: the caller's Generator, passed as
    ``random_state``, is the learner's own and must be rewound in place)."""
    params = learner.get_params(deep=False)
    skip = set(learner._TRANSIENT) | set(params)
    keep = {k: v for k, v in learner.__dict__.items() if k not in skip}
    gens = {k: v for k, v in keep.items() if isinstance(v, np.random.Generator)}
    rest = copy.deepcopy({k: v for k, v in keep.items() if k not in gens})
    states = {k: copy.deepcopy(g.bit_generator.state) for k, g in gens.items()}
    return list(learner.__dict__), rest, gens, states


def _restore(learner, snap):
    order, rest, gens, states = snap
    now = learner.__dict__
    for k, g in gens.items():
        g.bit_generator.state = states[k]
    saved = {**rest, **gens}
    transient = set(learner._TRANSIENT)
    # the attributes in their old order (pickles are then byte for byte the
    # same), hyper-parameters as they are; the compiled engine and
    # learn_one's short path point into the arrays replaced: dropped, they
    # are rebuilt on the next call
    old = {k: saved[k] if k in saved else now[k] for k in order
           if k not in transient and (k in saved or k in now)}
    if "_guard" in now:
        old["_guard"] = now["_guard"]
    now.clear()
    now.update(old)


def learn_sparse(learner: Any, X: Any, name: str, single: bool, reset: bool,
                 learn_rows: Any) -> None:
    """Run the trials of a sparse `X` through ``learn_rows(rows, name,
    single, reset)`` (the dense path), one chunk of rows at a time, rolling
    back on a ``ValueError``/``TypeError`` (see the module doc)."""
    csr = as_sparse_rows(X, name)
    T, n = csr.shape
    if single:
        if T != 1:
            raise ValueError(f"{name} must be one row: a sparse {name} must have shape "
                             f"(1, n_features), got {csr.shape}")
        learn_rows(csr.toarray()[0], name, True, reset)
        return
    if T == 0 or n == 0:  # the dense path's messages
        learn_rows(np.zeros(csr.shape), name, False, reset)
        return
    chunks = row_chunks(T, n)
    if len(chunks) == 1:
        learn_rows(csr.toarray(), name, False, reset)
        return
    snap = _snapshot(learner)
    try:
        for i, (start, stop) in enumerate(chunks):
            try:
                learn_rows(csr[start:stop].toarray(), name, False, reset and i == 0)
            except (TypeError, ValueError) as exc:
                if i == 0:
                    raise
                raise type(exc)(f"{exc} (in rows {start} to {stop - 1} of the sparse "
                                f"{name}; nothing was changed)") from exc
    except (TypeError, ValueError):
        with guard_of(learner).mutation():
            settled(_restore, learner, snap)
        raise


def map_sparse(X: Any, rows_fn: Any) -> Any:
    """``rows_fn`` (e.g. ``transform``) applied to a sparse `X` chunk by
    chunk (each densified alone), the results stacked."""
    csr = as_sparse_rows(X, "X")
    T, n = csr.shape
    parts = [rows_fn(csr[a:b].toarray()) for a, b in row_chunks(T, n)]
    if not parts:
        return rows_fn(np.zeros((0, n)))
    return np.concatenate(parts, axis=0)


def project_rows(X: Any, mean: Any, basis: Any) -> Any:
    """``(X - mean) @ basis``, computed in the chunks of :func:`row_chunks`
    (so a sparse X, densified in those chunks, gives the same numbers; and
    no temporary larger than a chunk)."""
    T, n = X.shape
    chunks = row_chunks(T, n)
    if len(chunks) <= 1:
        return (X - mean) @ basis
    out = np.empty((T, basis.shape[1]))
    for a, b in chunks:
        out[a:b] = (X[a:b] - mean) @ basis
    return out
