"""The estimator every learner shares, and the glue to the compiled engine.

:class:`OnlineLearner` is the scikit-learn side: hyper-parameters declared as
a table of constraints (``_constraints``) and checked once per call,
whole-batch input validation (nothing changes unless every row passes),
feature names, per-trial loss records, the guard, pickling and copies.  The
trial itself is the family's: :class:`TrialLoopLearner` runs the shared
compiled loop of ``src/learner.c`` on the learner's state object
(:mod:`._state`: dense or clustered, behind one interface), and
:class:`~onlinepca_fast.OnlineKernelPCA` its own.  Families override small
hooks; nothing here switches on a family or on a kind of state.

Conventions shared by all learners
----------------------------------
- The initial parameter is uniform: ``W^0 = I/n`` (weights ``1/n``).
- ``random_state`` (None, int or ``numpy.random.Generator``) seeds the
  learner's generator at every reset (``fit``, or the first
  ``partial_fit``/``learn_one``).  Each trial draws exactly one uniform
  number, before its update, to pick the hypothesis.
- Each trial records the expected loss of the parameter (e.g.
  ``(n-k) tr(W x x^T)``) and the realized loss of the drawn hypothesis, in
  ``expected_losses_`` and ``realized_losses_``.
- A batch is validated as a whole before any state changes: a bad row
  anywhere (even the last of a million) rejects the whole batch with a
  ``ValueError``/``TypeError`` naming the argument, and the learner is left
  exactly as it was (its pickle is byte for byte the same).  Bad
  hyper-parameters are reported the same way, at the first call that needs
  them.  Should the compiled loop itself fail on a trial (not observed; it
  would mean a non-finite eigensystem), a ``RuntimeError`` says so; the
  rows before that trial have been processed, that trial changed nothing,
  and the generator has consumed exactly one number per processed row.
- Learners pickle (and ``copy.deepcopy``) with their generator and continue
  bit for bit as if never interrupted.  The pickle holds the package
  version and its layout is tied to it: loading a pickle from another
  version warns.  ``copy.copy`` gives an independent learner too (its
  state arrays and generator copied; hyper-parameters shared).
- A batch runs on a private copy of the validated rows (another thread
  writing into the caller's array meanwhile changes nothing), in compiled
  chunks of about 20 ms (the first of a learner is one trial, whatever a
  trial costs), after a validation that copies and checks the batch in
  steps of 8 MB.  After each chunk the learner is exactly the learner of
  the rows done -- losses recorded, one uniform consumed per trial,
  re-orthogonalised where due -- as if the batch had been those rows.
  Ctrl-C (``KeyboardInterrupt``) is honoured at the next step or chunk
  boundary -- in the main thread also between trials and inside an O(n^3)
  trial (share="past", matrix instances, kernel PCA's eigen-update), which
  is then undone (``src/interrupt.h``) -- and leaves the learner so, also if
  a second Ctrl-C lands while the first is being handled; then propagates.
- Threads (:mod:`onlinepca_fast._guard`): two threads must not *write* one
  learner at once -- the second writer (``fit``, ``partial_fit``,
  ``learn_one``, ``set_params`` or setting a hyper-parameter) raises
  ``RuntimeError`` at once and changes nothing.  Reads (``transform``,
  copies, pickles, every fitted attribute) are never refused and never
  torn: a read during another thread's batch waits for the chunk in flight
  and sees the learner of the rows done so far; a write waits for the reads
  in flight.  ``learn_one`` and ``partial_fit`` use the hyper-parameters
  set last.  Independent learners run in parallel threads (the compiled
  loop releases the GIL).
- A ``fit`` that fails before its first trial completes (a ``MemoryError``
  building the state of a much wider batch, Ctrl-C at once) leaves the
  learner exactly as before the call.
"""

from __future__ import annotations

import copy
import functools
import math
import warnings
from typing import Any, TypeVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import validate_data

from .. import _kernels
from .._docs import fill_doc
from .._guard import guard_of, reads_state, settled
from .._typing import ArrayLike, FloatArray
from .._validation import (
    ALPHA,
    ETA,
    N_COMPONENTS,
    SAMPLER,
    Boolean,
    Constraint,
    Options,
    RandomState,
    as_real_array,
    check_params,
    private_copy,
)
from . import _aliases
from ._sparse import is_sparse, learn_sparse

_Self = TypeVar("_Self", bound="OnlineLearner")

__all__ = ["OnlineLearner", "LossRecords", "NotFittedError", "reads_state", "SAMPLERS",
           "SHARES", "CAPPED_MIXING"]

SAMPLERS = {"decomposition": _kernels.SAMPLER_DECOMPOSITION,
            "systematic": _kernels.SAMPLER_SYSTEMATIC}
SHARES = {None: _kernels.SHARE_NONE, "fixed": _kernels.SHARE_FIXED,
          "uniform": _kernels.SHARE_UNIFORM, "past": _kernels.SHARE_PAST}

#: The hyper-parameters of the learners that draw a capped corner and mix
#: (CappedHedge, OnlinePCA): one table, extended by each.
CAPPED_MIXING: dict[str, Constraint] = {
    "n_components": N_COMPONENTS,
    "eta": ETA,
    "share": Options(None, *list(SHARES)[1:]),
    "alpha": ALPHA,
    "sampler": SAMPLER,
    "random_state": RandomState(),
    "record_losses": Boolean(),
}


class LossRecords:
    """The per-trial losses since the last reset: ``buf[0]`` expected,
    ``buf[1]`` realized, the first ``count`` columns used (grown
    geometrically; zeros beyond, so that equal learners pickle equally)."""

    __slots__ = ("buf", "count")

    def __init__(self):
        self.buf = np.empty((2, 0))
        self.count = 0

    def __getstate__(self):
        return (self.buf, self.count)

    def __setstate__(self, state):
        self.buf, self.count = state

    def room(self, need):
        """The buffer, grown (geometrically) to hold `need` trials."""
        old = self.buf
        if need > old.shape[1]:
            grown = np.zeros((2, max(need, 2 * old.shape[1], 16)))
            grown[:, :self.count] = old[:, :self.count]
            self.buf = old = grown
        return old

    def append(self, losses):
        n_old = self.count
        need = n_old + losses.shape[1]
        self.room(need)[:, n_old:need] = losses
        self.count = need

    def view(self, row):
        view = self.buf[row, :self.count]
        view.flags.writeable = False
        return view



@functools.lru_cache(maxsize=None)
def _param_names(cls):
    """``get_params(deep=False)``'s names for a learner class: its
    ``__init__``'s signature, read once per class (scikit-learn reads it
    on every call; every batch checks the parameters)."""
    return tuple(cls._get_param_names())

@fill_doc
class OnlineLearner(BaseEstimator):
    """Shared machinery: parameters, validation, loss records, the guard,
    pickling and copies.

    Subclasses declare ``_constraints`` (argument -> constraint, see
    :mod:`onlinepca_fast._validation`) and implement the hooks
    :meth:`_plan` (everything about a batch that can fail, before any state
    changes), :meth:`_reset` and :meth:`_run`.
    """

    #: argument -> Constraint; checked by :meth:`_params`
    _constraints: dict[str, Constraint] = {}
    #: dimensions of X a batch may have: 2 (vectors) or also 3 (matrices)
    _batch_ndims: tuple[int, ...] = (2,)
    #: whether trials draw from the generator
    _randomized = True
    #: attributes that are rebuilt, never pickled or copied
    _TRANSIENT = ("_engine", "_row_path", "_guard", "_pace")

    # -- scikit-learn protocol ---------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = True  # densified a chunk of rows at a time
        tags.non_deterministic = False
        return tags

    def _params(self, n):
        """The hyper-parameters, checked and converted (one table, one pass)."""
        values = {name: getattr(self, name) for name in _param_names(type(self))}
        return check_params(self._constraints, values, {"n": n})

    # -- hyper-parameter writes: writes of the guard ------------------------
    def __setattr__(self, name, value):
        # a hyper-parameter set (set_params, or directly) is a write: it
        # fails while another thread runs a batch; and learn_one's short
        # path, built from the checked values, is stale
        if name in type(self)._constraints:
            guard = guard_of(self)
            level = guard.enter_write(self, f"set {name}")
            try:
                self.__dict__.pop("_row_path", None)
                object.__setattr__(self, name, value)
            finally:
                settled(guard.exit_write, level)
            return
        object.__setattr__(self, name, value)

    def set_params(self: _Self, **params: Any) -> _Self:
        """Set hyper-parameters (scikit-learn's ``set_params``).

        A write, as ``partial_fit``: while another thread writes the learner
        it raises ``RuntimeError`` and changes nothing.  The new values take
        effect at the next trial (``partial_fit`` or ``learn_one``).

        Parameters
        ----------
        **params : dict
            Hyper-parameter name -> value.

        Returns
        -------
        %(returns_self)s
        """
        guard = guard_of(self)
        level = guard.enter_write(self, "set_params")
        try:
            return super().set_params(**params)
        finally:
            settled(guard.exit_write, level)

    # -- pickling and copies: reads of the guard, never torn -----------------
    def _state_dict(self):
        """Hook: the attributes a pickle holds (not copied; the caller copies
        them under the guard)."""
        return {k: v for k, v in self.__dict__.items() if k not in self._TRANSIENT}

    def _snapshot(self, memo):
        """A deep copy of :meth:`_state_dict`, taken as a reader (complete
        when this returns: a later trial cannot change what a pickler
        serialises afterwards)."""
        from .._version import __version__
        with guard_of(self).reading():
            state = copy.deepcopy(self._state_dict(), memo)
        state["_onlinepca_fast_version"] = __version__
        return state

    def __getstate__(self):
        return self._snapshot({})

    def __deepcopy__(self, memo):
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        new.__setstate__(self._snapshot(memo))
        return new

    def __setstate__(self, state):
        from .._version import __version__
        state = dict(state)
        saved = state.pop("_onlinepca_fast_version", None)
        if saved != __version__:
            warnings.warn(f"unpickling a {type(self).__name__} saved by onlinepca_fast "
                          f"{saved}, this is {__version__}: the state may not be valid",
                          UserWarning, stacklevel=2)
        self.__dict__.update(state)

    def __copy__(self):
        """An independent learner: the fitted state (arrays, generator) is
        copied deeply, the hyper-parameters are shared as by a shallow copy."""
        new = type(self).__new__(type(self))
        with guard_of(self).reading():
            params = self.get_params(deep=False)
            for key, value in self.__dict__.items():
                if key not in self._TRANSIENT:
                    new.__dict__[key] = value if key in params else copy.deepcopy(value)
        return new

    def _restore(self, before):
        """Make the attribute dict `before` again (idempotent)."""
        state = self.__dict__
        for key in [key for key in state if key not in before]:
            del state[key]
        state.update(before)

    # -- validation ----------------------------------------------------------
    def _fitted(self):
        return "n_features_in_" in self.__dict__

    def _validated(self, X, name, single, reset):
        """(rows as C-contiguous float64, matrices?, max |entry|), or
        ValueError/TypeError naming `name`; changes nothing."""
        arr = as_real_array(X, name, convert=False)  # converted in steps below
        ok = tuple(d - 1 for d in self._batch_ndims) if single else self._batch_ndims
        if arr.ndim not in ok:
            hint = (" Reshape your data, e.g. with X.reshape(1, -1) for a single "
                    "row, or call learn_one(x)" if arr.ndim == 1 and not single else "")
            unit = "dimension" if ok == (1,) else "dimensions"
            raise ValueError(f"{name} must have {' or '.join(map(str, ok))} {unit}, "
                             f"got an array of shape {arr.shape}.{hint}")
        matrix = arr.ndim == ok[-1] and len(ok) == 2
        if single:
            arr = arr[np.newaxis]
        if arr.shape[0] == 0:
            raise ValueError(f"{name} has 0 sample(s) (shape={arr.shape}) while a minimum "
                             "of 1 is required.")
        width = arr.shape[1]
        if width == 0:
            raise ValueError(f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum "
                             "of 1 is required.")
        if matrix and arr.shape[2] != width:
            raise ValueError(f"{name} must hold square n x n matrices, got shape {arr.shape}")
        if not reset and self._fitted() and width != self.n_features_in_:
            raise ValueError(f"{name} has {width} features, but {type(self).__name__} "
                             f"is expecting {self.n_features_in_} features as input.")
        if not reset and not single and not matrix:
            # feature names (scikit-learn's rules); raises, changes nothing
            validate_data(self, X, reset=False, skip_check_array=True)
        # a private copy: the caller's memory may change while the batch runs
        # (another thread); what is checked is what is processed.  Copied,
        # converted and range-checked in steps (Ctrl-C is seen between them).
        arr, lo, hi = private_copy(arr, owned=arr is not X and arr.flags.owndata)
        amax = max(hi, -lo)
        if not math.isfinite(amax):
            raise ValueError(f"{name} contains NaN or infinity")
        self._check_values(arr, name, matrix, lo, hi)
        return arr, matrix, amax

    def _check_values(self, X, name, matrix, lo, hi):
        """Hook for algorithm-specific domains (loss vectors in [0, 1] ...).

        lo and hi are the smallest and largest entry of X (finite).
        """

    def _commit_features(self, X, matrix, single, n):
        """Record the input's width and feature names (at a reset)."""
        if single or matrix:
            self.n_features_in_ = n
            self.__dict__.pop("feature_names_in_", None)
        else:
            validate_data(self, X, reset=True, skip_check_array=True)

    def _check_fitted(self):
        if not self._fitted():
            raise NotFittedError(f"This {type(self).__name__} instance has seen no data "
                                 "yet; call fit, partial_fit or learn_one first")

    def _validate_for_transform(self, X):
        """X for transform: the fitted width and feature names, finite."""
        self._check_fitted()
        arr = as_real_array(X, "X")
        if arr.ndim != 2:
            raise ValueError(f"X must have 2 dimensions, got an array of shape {arr.shape}. "
                             "Reshape your data, e.g. with X.reshape(1, -1) for a single "
                             "row")
        if arr.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {arr.shape[1]} features, but {type(self).__name__} "
                             f"is expecting {self.n_features_in_} features as input.")
        validate_data(self, X, reset=False, skip_check_array=True)
        if arr.size and not np.isfinite(arr).all():
            raise ValueError("X contains NaN or infinity")
        return np.ascontiguousarray(arr)

    # -- the trial protocol -----------------------------------------------------
    def _learn(self, X, name, *, single, reset, what=None):
        """Validate, plan, reset if asked, run: nothing changes before every
        check (the input's, the hyper-parameters', the family's) passed."""
        guard = guard_of(self)
        level = guard.enter_write(self, what or ("fit" if reset else "partial_fit"))
        try:
            if is_sparse(X):  # densified chunk by chunk (see _sparse)
                learn_sparse(self, X, name, single, reset, self._learn_rows)
            else:
                self._learn_rows(X, name, single, reset)
            if single:
                self._learned_one()
        finally:
            settled(guard.exit_write, level)  # even if a Ctrl-C lands in here
        return self

    def _learn_rows(self, X, name, single, reset):
        rows, matrix, amax = self._validated(X, name, single, reset)
        plan = self._plan(rows, matrix, amax, name, reset)
        if reset:
            self._refit(X, rows, matrix, single, plan)
        else:
            self._run(rows, plan)

    def _refit(self, X, rows, matrix, single, plan):
        """Reset and run the batch; if that fails before a trial completes
        (a MemoryError building the state of a much wider batch, Ctrl-C at
        once ...) the learner is left exactly as before the call.

        The resets replace the state's attributes (never write into the old
        arrays), so the previous attribute dict is the previous learner.
        """
        before = self.__dict__.copy()
        guard = guard_of(self)
        try:
            with guard.mutation():
                self._reset(rows.shape[1], plan)
                self._commit_features(X, matrix, single, rows.shape[1])
            self._run(rows, plan)
        except BaseException:
            if not self._has_trials(before):
                with guard.mutation():
                    settled(self._restore, before)
            raise

    def _learned_one(self):
        """Hook, inside learn_one's write, after its validated trial."""

    def _has_trials(self, before):
        """Whether the learner (reset since `before`) ran a trial."""
        t = self.__dict__.get("_t")
        return not (t is None or t is before.get("_t") or int(t[0]) == 0)

    def _plan(self, X, matrix, amax, name, reset):  # pragma: no cover - abstract
        """Check everything else about the batch; return what _run needs."""
        raise NotImplementedError

    def _reset(self, n, plan):  # pragma: no cover - abstract
        raise NotImplementedError

    def _run(self, X, plan):  # pragma: no cover - abstract
        raise NotImplementedError

    def partial_fit(self: _Self, X: ArrayLike, y: None = None) -> _Self:
        """Run one trial per row of X, in order.

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n_trials, n_features)
            The instances.  The whole batch is validated first: on error
            nothing changes.  Any real dtype is converted to float64
            (float32 exactly); sparse input is densified in chunks of rows
            (memory of one chunk, ~8 MiB), with the numbers of the dense
            array bit for bit.
        %(y)s

        Returns
        -------
        %(returns_self)s
        """
        return self._learn(X, "X", single=False, reset=not self._fitted())

    def fit(self: _Self, X: ArrayLike, y: None = None) -> _Self:
        """Reset the learner, then :meth:`partial_fit` on X.

        X is validated as for an unfitted learner (it may change the number
        of features); if it is rejected the learner keeps its state.

        Parameters
        ----------
        X : array_like or scipy.sparse matrix of shape (n_trials, n_features)
            The instances (as for :meth:`partial_fit`).
        %(y)s

        Returns
        -------
        %(returns_self)s
        """
        return self._learn(X, "X", single=False, reset=True)

    def learn_one(self: _Self, x: ArrayLike) -> _Self:
        """Run one trial on the single instance x.

        Parameters
        ----------
        x : array_like of shape (n_features,), or sparse of shape (1, n_features)
            One row, its values in the order of the features seen so far.

        Returns
        -------
        %(returns_self)s
        """
        return self._learn(x, "x", single=True, reset=not self._fitted(), what="learn_one")

    # -- loss records --------------------------------------------------------------
    def _start_records(self):
        self._records = LossRecords()

    def _record(self, losses):
        if self.record_losses and losses.shape[1]:
            self._records.append(losses)

    @property
    @reads_state
    def n_trials_(self) -> int:
        """Number of trials since the last reset."""
        self._check_fitted()
        return int(self._t[0])

    n_samples_seen_ = _aliases.n_samples_seen_

    @property
    @reads_state
    def expected_losses_(self) -> FloatArray:
        """Expected loss of each trial since the last reset (read-only view)."""
        self._check_fitted()
        return self._records.view(0)

    @property
    @reads_state
    def realized_losses_(self) -> FloatArray:
        """Realized loss of each trial since the last reset (read-only view)."""
        self._check_fitted()
        return self._records.view(1)


