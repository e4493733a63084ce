"""The estimator every learner shares, and the glue to the compiled engine.

:class:`OnlineLearner` is the scikit-learn side: hyper-parameters declared as
a table of constraints (``_constraints``) and checked once per call,
whole-batch input validation (nothing changes unless every row passes),
feature names, per-trial loss records, pickling.  The trial itself is the
family's: :class:`TrialLoopLearner` runs the shared compiled loop of
``src/learner.c`` (one typed :class:`EngineConfig`, built in one place),
and :class:`~onlinepca_fast.OnlineKernelPCA` its own.  Families override
small hooks; nothing here switches on a family.

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
  state arrays and generator copied; hyper-parameters shared).  A copy or
  pickle is taken as a reader of the guard: while another thread runs a
  batch it raises ``RuntimeError``, never returns a state torn mid-trial.
- A ``fit`` that fails before its first trial completes (a ``MemoryError``
  building the state of a much wider batch, Ctrl-C at once) leaves the
  learner exactly as before the call.
- A batch runs on a private copy of the validated rows (another thread
  writing into the caller's array meanwhile changes nothing), in compiled
  chunks of about 20 ms (the first of a learner is one trial, whatever a
  trial costs), after a validation that copies and checks the batch in
  steps of 8 MB: Ctrl-C (``KeyboardInterrupt``) is honoured at the next
  step or trial boundary -- in the main thread also inside an O(n^3)
  trial (share="past", matrix instances, kernel PCA's eigen-update), which
  is then undone (``src/interrupt.h``) -- and leaves the learner exactly as
  after the rows it processed -- as if the batch had been those rows:
  losses, counters and generator consistent, also if a second Ctrl-C lands
  while the first is being handled -- then propagates.
- One learner must not be used from two threads at once; if it is, the
  second call raises ``RuntimeError`` at once and changes nothing (see
  :mod:`onlinepca_fast._guard`); ``set_params`` (or setting a
  hyper-parameter) is such a call.  ``learn_one`` and ``partial_fit`` use
  the hyper-parameters set last.  Independent learners run in parallel
  threads (the compiled loop releases the GIL).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import validate_data

from .. import _kernels
from .._guard import guard_of, settled
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
    as_generator,
    as_real_array,
    check_params,
    private_copy,
)
from ..kernels import sample_corner
from ._batch import run_batch
from ._eigensystem import EigensystemMixin
from ._guarded import GuardedState
from ._sparse import is_sparse, learn_sparse
from ._rates import RatesMixin, mixing_options, rate_options

_Self = TypeVar("_Self", bound="OnlineLearner")
_P = ParamSpec("_P")
_R = TypeVar("_R")

__all__ = ["OnlineLearner", "TrialLoopLearner", "EngineConfig", "CappedDraws",
           "EigensystemMixin", "NotFittedError", "rate_options",
           "mixing_options"]

#: Bit generators whose advance(-1) undoes the one draw of a trial.
_REWINDABLE = (np.random.PCG64, np.random.PCG64DXSM)

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


class OnlineLearner(GuardedState, BaseEstimator):
    """Shared machinery: parameters, validation, loss records (pickling,
    copies and hyper-parameter writes: :class:`GuardedState`).

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
        return check_params(self._constraints, self.get_params(deep=False), {"n": n})

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
            raise ValueError(f"{name} must have {' or '.join(map(str, ok))} dimensions, "
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
        guard_of(self).check_read(self, "read")
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
    def _learn(self, X, name, *, single, reset):
        """Validate, plan, reset if asked, run: nothing changes before every
        check (the input's, the hyper-parameters', the family's) passed."""
        guard = guard_of(self)
        level = guard.enter_write(self, "fit" if reset else "partial_fit")
        try:
            if is_sparse(X):  # densified chunk by chunk (see _sparse)
                learn_sparse(self, X, name, single, reset, self._learn_rows)
            else:
                self._learn_rows(X, name, single, reset)
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
        try:
            self._reset(rows.shape[1], plan)
            self._commit_features(X, matrix, single, rows.shape[1])
            self._run(rows, plan)
        except BaseException:
            t = self.__dict__.get("_t")
            if t is None or t is before.get("_t") or int(t[0]) == 0:
                settled(self._restore, before)
            raise

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
        y : None
            Ignored.

        Returns
        -------
        self : object
            The learner.
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
        y : None
            Ignored.

        Returns
        -------
        self : object
            The learner.
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
        self : object
            The learner.
        """
        return self._learn(x, "x", single=True, reset=not self._fitted())

    # -- loss records --------------------------------------------------------------
    def _start_records(self):
        self._losses = np.empty((2, 0))
        self._n_recorded = 0

    def _record_room(self, need):
        """The loss buffer, grown (geometrically) to hold `need` trials."""
        old = self._losses
        if need > old.shape[1]:
            # zeros, not empty: the buffer is pickled whole, and uninitialised
            # memory would make equal learners pickle differently
            grown = np.zeros((2, max(need, 2 * old.shape[1], 16)))
            grown[:, :self._n_recorded] = old[:, :self._n_recorded]
            self._losses = old = grown
        return old

    def _record(self, losses):
        if not self.record_losses or losses.shape[1] == 0:
            return
        n_old = self._n_recorded
        need = n_old + losses.shape[1]
        self._record_room(need)[:, n_old:need] = losses
        self._n_recorded = need

    @property
    def n_trials_(self) -> int:
        """Number of trials since the last reset."""
        self._check_fitted()
        return int(self._t[0])

    def _loss_view(self, row):
        self._check_fitted()
        view = self._losses[row, :self._n_recorded]
        view.flags.writeable = False
        return view

    @property
    def expected_losses_(self) -> FloatArray:
        """Expected loss of each trial since the last reset (read-only view)."""
        return self._loss_view(0)

    @property
    def realized_losses_(self) -> FloatArray:
        """Realized loss of each trial since the last reset (read-only view)."""
        return self._loss_view(1)


def _same(a, b):
    """Whether two snapshots (arrays, or tuples of arrays) are equal."""
    if isinstance(a, tuple):
        return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
    return np.array_equal(a, b)


def reads_state(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Decorator of a method that reads the learner's state for its whole
    duration (transform ...): it fails at once while another thread writes,
    and a writer fails while it runs."""
    @functools.wraps(method)
    def wrapped(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        self = args[0]
        guard = guard_of(self)
        guard.enter_read(self, method.__name__)
        try:
            return method(*args, **kwargs)
        finally:
            guard.exit_read()
    return wrapped


class CappedDraws:
    """Weights and draws of the learners whose hypothesis is a corner of
    capped weights (WK Alg. 2): hook :meth:`_corner_size`."""

    def _corner_size(self, n):  # pragma: no cover - abstract
        raise NotImplementedError

    def _weights(self):
        """The probability weights omega of the current parameter."""
        return self._omega.copy()

    def _draw(self, random_state):
        rng = self._rng if random_state is None else as_generator(random_state)
        return sample_corner(self._weights(), self._corner_size(self.n_features_in_), rng,
                             method=self._sampler_name())

    def _sampler_name(self):
        return self.sampler


@dataclasses.dataclass(frozen=True)
class EngineConfig:
    """What the compiled trial loop is told about a learner (``opf_learner``
    in ``src/learner.h``); two equal configs can share an engine."""

    kind: int
    n: int
    d: int
    eta: float
    alpha: float = 0.0
    share: int = _kernels.SHARE_NONE
    sampler: int = _kernels.SAMPLER_DECOMPOSITION
    centered: bool = False
    center_lr_inv: float = 0.0
    matrix_input: bool = False
    auto_rate: bool = False  # eta="auto": the rate is state (``_rate``)
    alpha_auto: bool = False  # alpha="auto": alpha_t = 1/(t+1)**2


class TrialLoopLearner(RatesMixin, OnlineLearner):
    """A learner whose trials run in the shared compiled loop.

    Hooks: :meth:`_engine_options` (the family's part of the
    :class:`EngineConfig`), :meth:`_initial_state`, :meth:`_check_steps`
    (optional), :meth:`_reorthogonalize_every` (optional).
    """

    # the state (set at reset)
    _lam: FloatArray
    _q: FloatArray

    def _engine_options(self, p, n):  # pragma: no cover - abstract
        """The family's fields of the EngineConfig, from the checked
        hyper-parameters p, as a dict."""
        raise NotImplementedError

    def _initial_state(self, p, n):  # pragma: no cover - abstract
        """(lam, q, mean) at reset: W^0 = I/n."""
        raise NotImplementedError

    def _initial_mean(self, p, n):
        """The center at reset (hook; the steps are checked against it)."""
        return self._initial_state(p, n)[2]

    def _check_steps(self, X, amax, name, matrix, config, mean):
        """Hook: reject instances whose step could overflow (PCA learners)."""

    def _reorthogonalize_every(self, p):
        """Hook: the re-orthogonalisation period (0: never)."""
        return 0

    def _past_size(self, config):
        """Entries of the running sum of past parameters: W (n x n) for the
        eigen-learners, w (n) for the experts, with share="past"."""
        if config.share != _kernels.SHARE_PAST:
            return 1
        return config.n if config.kind == _kernels.KIND_EXPERTS else config.n * config.n

    # -- the engine config, built in one place -----------------------------------
    def _config(self, p, n, matrix):
        return EngineConfig(n=n, matrix_input=bool(matrix), **self._engine_options(p, n))

    def _plan(self, X, matrix, amax, name, reset):
        n = X.shape[1]
        p = self._params(n)
        config = self._config(p, n, matrix)
        mean = self._initial_mean(p, n) if reset else self._mean
        self._check_steps(X, amax, name, matrix, config, mean)
        if (not reset and config.share == _kernels.SHARE_PAST
                and self._wsum.size != self._past_size(config)):
            raise ValueError("share='past' averages every parameter since the "
                             "last reset; set it before fit, not mid-stream")
        if reset and self._randomized:
            as_generator(self.random_state)  # checked before the reset uses it
        return config, self._reorthogonalize_every(p), p

    def _reset(self, n, plan):
        config, _, p = plan
        rng = as_generator(self.random_state) if self._randomized else None
        self._reset_state(p, n)
        self._wsum = np.zeros(self._past_size(config))  # sum of past parameters
        # eta="auto" (src/adaptive_rate.h): [cumulative mixability gap, rate]
        self._rate = np.array([0.0, np.inf, 0.0])  # Delta, eta_t, tr C^t
        self._limit = self._limit_state(p, n)  # eta="auto"'s master, or None
        self._t = np.zeros(1, dtype=np.intp)
        self._start_records()
        self._rng = rng
        self._engine = None
        self._engine_key = None
        self.__dict__.pop("_row_path", None)
        self.__dict__.pop("_pace", None)

    def _reset_state(self, p, n):
        """The parameter at reset (hook): W^0 = I/n from :meth:`_initial_state`."""
        lam, q, mean = self._initial_state(p, n)
        self._lam = lam
        self._omega = np.exp(lam)
        self._q = q
        self._mean = mean

    def _get_engine(self, config):
        if getattr(self, "_engine", None) is None or self._engine_key != config:
            self._engine = _kernels.Engine(
                lam=self._lam, omega=self._omega, q=self._q, mean=self._mean,
                wsum=self._wsum, t=self._t, rate=self._rate,
                limit=self._limit_option(config), **dataclasses.asdict(config))
            self._engine_key = config
        return self._engine

    def _run(self, X, plan):
        config, every, p = plan
        T = X.shape[0]
        self._sync_limit(config, p)
        engine = self._get_engine(config)
        t0 = int(self._t[0])
        n0 = self._n_recorded
        saved = self._rng.bit_generator.state if self._randomized else None
        losses = np.empty((2, T))
        X = X.reshape(T, -1)
        u = np.zeros(T)
        fixed = [t0, None]  # last trial count re-orthogonalised; Q before it

        def begin():
            nonlocal engine
            if self._randomized:
                u[:] = self._rng.random(T)
            # (a representation change due by the state, e.g. restored by
            # pickle right after the trial that made it due, comes first)
            engine = self._next_engine(engine, config, p)

        def chunk(done, size):
            # chunks (run_batch) also end where the trial count reaches a
            # multiple of `every`, so that re-orthogonalisation happens
            # after the same trials however the stream is split
            stop = min(T, done + size)
            if every:
                stop = min(stop, done + every - (t0 + done) % every)
            # fewer than asked when a trial made a representation change
            # due (state="auto"): decided by the state after each trial
            ran = engine.run(X[done:stop], u[done:stop], losses[0, done:stop],
                             losses[1, done:stop])
            return ran, True

        def after():
            nonlocal engine
            self._reorthogonalize_at(every, fixed)
            engine = self._next_engine(engine, config, p)

        run_batch(self, T, chunk,
                  lambda: self._settle(t0, n0, saved, losses, every, fixed, T), begin, after)
        self._row_path = self._build_row_path(engine, config, every, p)
        return self

    def _next_engine(self, engine, config, p):
        """Hook, between chunks of a batch: the engine for the next chunk
        (the same one, unless the learner changed how it keeps its state)."""
        return engine

    def _basis_snapshot(self):
        """Hook: what re-orthogonalisation changes (to tell whether an
        interrupted one was applied)."""
        return self._q.copy()

    def _build_row_path(self, engine, config, every, p):
        """learn_one's short path (see :meth:`learn_one`), or None."""
        if config.matrix_input or (self._randomized and
                                   type(self._rng.bit_generator) not in _REWINDABLE):
            return None
        lo, hi, amax, norm2 = self._short_path_region(config)
        return _kernels.RowPath(self, engine, guard_of(self), self._rng, every,
                                p["record_losses"], lo, hi, amax, norm2,
                                self._short_path_norm2_min(config))

    def _short_path_norm2_min(self, config):
        """Hook: the short path takes a row x != 0 only if |x|^2 is at least
        this (the scale-free learners' NORM_MIN, ``_scale``); other rows
        take the validating path, which decides."""
        return 0.0

    def _short_path_region(self, config):
        """Hook: (lo, hi, amax, norm2) such that every row with entries in
        [lo, hi], max |x_i| <= amax and |x|^2 <= norm2 passes the family's
        checks (:meth:`_check_values`, :meth:`_check_steps`) now and after
        any sequence of trials on such rows.  Conservative is fine: other
        rows take the validating path, which decides."""
        return -math.inf, math.inf, math.inf, math.inf

    def _reorthogonalize_at(self, every, fixed):
        """Re-orthogonalise if the trial count is a multiple of `every` not
        yet done; `fixed` = [count done, (count, Q before)] makes it safe to
        call again after an interruption anywhere in here."""
        t = int(self._t[0])
        if every and t % every == 0 and fixed[0] != t:
            fixed[1] = (t, self._basis_snapshot())
            self._reorthogonalize()
            fixed[0] = t

    def _settle(self, t0, n0, saved, losses, every, fixed, T):
        """Make the state that of the rows the engine processed (its trial
        counter says how many): their losses recorded, one uniform each
        consumed, the re-orthogonalisation due at that count done.  Safe to
        repeat (interruptions); returns the number of rows processed."""
        done = int(self._t[0]) - t0
        t = t0 + done
        if every and t % every == 0 and fixed[0] != t:
            before = fixed[1]
            if before is None or before[0] != t or _same(before[1], self._basis_snapshot()):
                self._reorthogonalize()  # not (or not visibly) applied yet
            fixed[0] = t
        if self.record_losses:
            have = self._n_recorded - n0
            if have < done:
                self._record(losses[:, have:done])
        if saved is not None and done < T:  # one uniform consumed per trial done
            self._rng.bit_generator.state = saved
            self._rng.random(done)
        return done

    def learn_one(self: _Self, x: ArrayLike) -> _Self:
        """Run one trial on the single instance x.

        Parameters
        ----------
        x : array_like of shape (n_features,)
            One row, its values in the order of the features seen so far.

        Returns
        -------
        self : object
            The learner.

        Notes
        -----
        After a first batch or row, a float64 ndarray row of the fitted
        width whose values lie where every check of the learner is known to
        pass (finite; losses in [0, 1], norms at most 1, steps far below
        overflow, as the learner requires) takes a short compiled path: it
        is copied, checked and run in one call, with the uniform drawn from
        the learner's generator (PCG64 or PCG64DXSM; other bit generators
        take the validating path).  The numbers are those of
        ``partial_fit`` on the same rows.  Any other row is validated in
        full, as by ``partial_fit``.
        """
        path = self.__dict__.get("_row_path")
        if path is not None and path.learn(x):
            return self
        return super().learn_one(x)

    def _reorthogonalize(self):
        """One Newton-Schulz step towards the nearest orthogonal matrix.

        Each rank-one update leaves the eigenvectors orthonormal to working
        precision, but the rounding accumulates: ``||Q^T Q - I||`` grows by
        about 1e-18 to 1e-16 per trial (measured at n = 20..200), i.e. past
        1e-10 after 10^6..10^8 trials.  ``Q <- Q (I + (I - Q^T Q)/2)`` takes
        an error e to ~ e^2 (plus rounding, ~1e-15) and moves each column by
        O(e), the size of the error it already carries as an eigenvector; it
        keeps the columns' order, so eigenvalues and draws are unaffected.
        In place: the engine points into ``_q``.
        """
        q = self._q
        q += 0.5 * (q @ (np.eye(q.shape[0]) - q.T @ q))
