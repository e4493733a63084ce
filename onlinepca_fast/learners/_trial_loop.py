"""The learners whose trials run in the shared compiled loop
(``src/learner.c``): :class:`TrialLoopLearner` over its state object
(:mod:`._state`), the engine's :class:`EngineConfig`, the :class:`Plan` of a
batch, and the chunks a batch runs in (see :mod:`._batch`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple, TypeVar

import numpy as np

from .. import _kernels
from .._guard import guard_of, reads_state
from .._typing import ArrayLike
from .._validation import as_generator
from ._base import OnlineLearner
from ._batch import run_batch
from ._rates import Mixing, Rate, RatesMixin
from ._state import as_rng, auto_bounds, initial_state

_Self = TypeVar("_Self", bound="TrialLoopLearner")

__all__ = ["TrialLoopLearner", "EngineConfig", "Plan"]

#: Bit generators whose advance(-1) undoes the one draw of a trial.
_REWINDABLE = (np.random.PCG64, np.random.PCG64DXSM)


def _same(a, b):
    """Whether two snapshots (arrays, or tuples of arrays) are equal."""
    if isinstance(a, tuple):
        return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
    return np.array_equal(a, b)


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
    mean_first: bool = False  # centered: m^0 = the first row (y_1 = 0)
    matrix_input: bool = False
    auto_rate: bool = False  # eta="auto": the rate is state (``_rate``)
    alpha_auto: bool = False  # alpha="auto": alpha_t = 1/(t+1)**2
    # the PCA learners' AdaHedge rate ("auto" or "adahedge"): D = d log(n/(d alpha))
    # when mixing at a constant alpha (src/learner.c, rate_n)
    adaptive_d: bool = False


class Plan(NamedTuple):
    """What a batch was checked for: the engine's config, the checked
    hyper-parameters, the rate, the re-orthogonalisation period, and the
    (lo, hi) bounds of ``state="auto"`` (None: the representation is fixed)."""

    config: EngineConfig
    p: dict
    rate: Rate
    every: int
    switch: tuple[int, int] | None


class TrialLoopLearner(OnlineLearner):
    """A learner whose trials run in the shared compiled loop over its state
    object (``_state``, :mod:`._state`).

    The learner's arrays besides the state: ``_t`` (trials), ``_rate``
    (eta="auto": [Delta, eta_t, tr C^t]), ``_limit`` (eta="auto"'s master,
    or None), ``_mean`` (the center), ``_wsum`` (share="past"), the loss
    records and the generator.

    Hooks: :meth:`_engine_options` (the family's part of the
    :class:`EngineConfig`), :attr:`_law` and :meth:`_representation` (its
    state), :meth:`_initial_mean`, :meth:`_check_steps`,
    :meth:`_short_path_region`, :meth:`_reorthogonalize_every`,
    :meth:`_limit_len` (optional).
    """

    #: the state's law (:mod:`._state`): "meg", "cumulative" or "leader"
    _law = "meg"
    #: whether the state keeps eigenvectors (False: the experts' weights)
    _basis = True

    def _engine_options(self, p, n):  # pragma: no cover - abstract
        """The family's fields of the EngineConfig, from the checked
        hyper-parameters p, as a dict."""
        raise NotImplementedError

    def _representation(self, p, n):
        """The state's representation at reset: "dense" (hook)."""
        return "dense"

    def _switches(self, p):
        """Whether ``state="auto"`` may change the representation mid-stream
        (hook)."""
        return False

    def _initial_mean(self, p, n):
        """The center at reset (hook; the steps are checked against it)."""
        return np.zeros(n)

    def _check_steps(self, X, amax, name, matrix, config, mean, rate):
        """Hook: reject instances whose step could overflow (PCA learners)."""

    def _reorthogonalize_every(self, p):
        """Hook: the re-orthogonalisation period (0: never)."""
        return 0

    def _limit_len(self, p, n):
        """Hook: the length of eta="auto"'s master state (0: none)."""
        return 0

    def _past_size(self, config):
        """Entries of the running sum of past parameters: W (n x n) for the
        eigen-learners, w (n) for the experts, with share="past"."""
        if config.share != _kernels.SHARE_PAST:
            return 1
        return config.n if config.kind == _kernels.KIND_EXPERTS else config.n * config.n

    # -- the plan: everything checked before any state changes --------------------
    def _plan(self, X, matrix, amax, name, reset):
        n = X.shape[1]
        p = self._params(n)
        rate = Rate(p.get("eta"))
        config = EngineConfig(n=n, matrix_input=bool(matrix), **self._engine_options(p, n))
        mean = self._initial_mean(p, n) if reset else self._mean
        self._check_steps(X, amax, name, matrix, config, mean, rate)
        if (not reset and config.share == _kernels.SHARE_PAST
                and self._wsum.size != self._past_size(config)):
            raise ValueError("share='past' averages every parameter since the "
                             "last reset; set it before fit, not mid-stream")
        if not reset:
            self._check_representation(p)
        if reset and self._randomized:
            as_generator(self.random_state)  # checked before the reset uses it
        switch = auto_bounds(n) if self._switches(p) else None
        return Plan(config, p, rate, self._reorthogonalize_every(p), switch)

    def _check_representation(self, p):
        """Hook: refuse a representation parameter changed mid-stream."""

    # -- reset --------------------------------------------------------------------
    def _reset(self, n, plan):
        p = plan.p
        rng = as_generator(self.random_state) if self._randomized else None
        self._state = self._initial_state(p, n)
        self._mean = self._initial_mean(p, n)
        self._wsum = np.zeros(self._past_size(plan.config))  # sum of past parameters
        # eta="auto" (src/adaptive_rate.h): [cumulative mixability gap, rate, tr C^t]
        self._rate = np.array([0.0, np.inf, 0.0])
        self._limit = self._limit_state(p, n)
        self._t = np.zeros(1, dtype=np.intp)
        self._start_records()
        self._rng = rng
        for key in ("_engine", "_row_path", "_pace"):
            self.__dict__.pop(key, None)

    def _initial_state(self, p, n):
        return initial_state(self._law, n, self._representation(p, n), self._basis)

    def _limit_state(self, p, n):
        """The initial state of eta="auto"'s master over the learner and its
        eta -> infinity limit (``src/limit.h``; OnlinePCA), or None."""
        if not self._limit_len(p, n):
            return None
        return _kernels.limit_state(n, p["n_components"])

    def _sync_limit(self, plan):
        """Before a batch: the master's state that the rate calls for.  None
        while the rate is a number; a fresh one when the learner has none or
        one of another shape -- the rate became "auto", or n_components
        changed, mid-stream (the master and its limit then restart, the
        learner's own state continues)."""
        lim = self.__dict__.get("_limit")
        need = self._limit_len(plan.p, plan.config.n) if plan.rate.auto else 0
        if need == (0 if lim is None else lim.size):
            return
        self._limit = self._limit_state(plan.p, plan.config.n) if need else None
        self.__dict__.pop("_engine", None)

    # -- the engine ----------------------------------------------------------------
    def _switch_if_due(self, plan):
        """``state="auto"``: the representation the state calls for (a rule
        of the state alone, :func:`~._state.auto_bounds`, so the change
        lands after the same trial whatever the batch split, timing,
        pickling or interruption)."""
        if plan.switch is not None:
            new = self._state.switched(*plan.switch)
            if new is not None:
                self._state = new  # one attribute: one state or the other

    def _engine_for(self, plan):
        """The compiled engine for the next trials: the representation due
        first, then the engine bound to the state (kept while state and
        config are the same), its ``m_stop`` set so that its loop stops
        after the trial that makes the other representation due."""
        self._switch_if_due(plan)
        held = self.__dict__.get("_engine")
        if held is None or held[0] is not self._state or held[1] != plan.config:
            shared = (self._t, self._rate if plan.rate.auto else None,
                      self._limit if plan.rate.auto else None, self._mean, self._wsum)
            engine = self._state.engine(plan.config, shared)
            self.__dict__.pop("_row_path", None)
            self._engine = held = (self._state, plan.config, engine)
        if plan.switch is not None:
            held[2].m_stop = self._state.m_stop(*plan.switch)
        return held[2]

    # -- a batch ------------------------------------------------------------------
    def _run(self, X, plan):
        T = X.shape[0]
        self._sync_limit(plan)
        chunks = _Chunks(self, X.reshape(T, -1), plan)
        run_batch(self, T, chunks.step, chunks.settle)
        return self

    def _reorthogonalize_at(self, every, fixed):
        """Re-orthogonalise if the trial count is a multiple of `every` not
        yet done; `fixed` = [count done, (count, snapshot before)] makes it
        safe to call again after an interruption anywhere in here."""
        t = int(self._t[0])
        if every and t % every == 0 and fixed[0] != t:
            before = fixed[1]
            if before is None or before[0] != t:
                fixed[1] = before = (t, self._state.snapshot())
                self._state.reorthogonalize()
            elif _same(before[1], self._state.snapshot()):
                self._state.reorthogonalize()  # not (or not visibly) applied yet
            fixed[0] = t

    # -- learn_one ----------------------------------------------------------------
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
        A float64 ndarray row of the fitted width whose values lie where
        every check of the learner is known to pass (finite; losses in [0,
        1], norms at most 1, steps far below overflow, as the learner
        requires) takes a short compiled path once the learner has run a
        validated ``learn_one``: it is copied, checked and run in one call,
        with the uniform drawn from the learner's generator (PCG64 or
        PCG64DXSM; other bit generators take the validating path).  The
        numbers are those of ``partial_fit`` on the same rows.  Any other
        row is validated in full, as by ``partial_fit``.
        """
        path = self.__dict__.get("_row_path")
        if path is not None and path.learn(x):
            return self
        return super().learn_one(x)

    def _learned_one(self):
        """learn_one's short path, bound to the current engine (dropped
        whenever the engine changes or a hyper-parameter is set), built by
        the first validated learn_one (inside its write)."""
        held = self.__dict__.get("_engine")
        if held is None or self.__dict__.get("_row_path") is not None:
            return
        state, config, engine = held
        if state is not self._state or config.matrix_input or (
                self._randomized and type(self._rng.bit_generator) not in _REWINDABLE):
            return
        p = self._params(config.n)
        if EngineConfig(n=config.n, matrix_input=False,
                        **self._engine_options(p, config.n)) != config:
            return  # hyper-parameters changed since: the next batch rebinds
        every = self._reorthogonalize_every(p)
        lo, hi, amax, norm2 = self._short_path_region(config, Rate(p.get("eta")))
        self._row_path = _kernels.RowPath(
            engine, guard_of(self), self._rng if self._randomized else None, every,
            state.reorthogonalize if every else None,
            self._records if p["record_losses"] else None, lo, hi, amax, norm2,
            self._short_path_norm2_min(config))

    def _short_path_norm2_min(self, config):
        """Hook: the short path takes a row x != 0 only if |x|^2 is at least
        this (the scale-free learners' NORM_MIN, ``_scale``); other rows
        take the validating path, which decides."""
        return 0.0

    def _short_path_region(self, config, rate):
        """Hook: (lo, hi, amax, norm2) such that every row with entries in
        [lo, hi], max |x_i| <= amax and |x|^2 <= norm2 passes the family's
        checks (:meth:`_check_values`, :meth:`_check_steps`) now and after
        any sequence of trials on such rows.  Conservative is fine: other
        rows take the validating path, which decides."""
        return -math.inf, math.inf, math.inf, math.inf

    # -- what every trial-loop learner reports -----------------------------------
    def _draw_rng(self, random_state):
        return as_rng(self._rng, random_state)

    eta_ = RatesMixin.eta_
    mixability_gap_ = RatesMixin.mixability_gap_

    @property
    @reads_state
    def alpha_(self) -> float:
        """The mixing rate of the next trial: ``alpha`` if it is a number;
        with ``alpha="auto"``, ``1/(t+2)**2`` after t trials."""
        self._check_fitted()
        return Mixing(getattr(self, "alpha", 0.0)).current(int(self._t[0]))


class _Chunks:
    """The chunks of one batch of a :class:`TrialLoopLearner` (see
    :func:`~._batch.run_batch`): each draws its uniforms, runs the compiled
    loop and leaves the learner exactly the learner of the rows done."""

    __slots__ = ("learner", "X", "plan", "losses", "t0", "start", "n0", "drawn",
                 "saved", "fixed", "zeros")

    def __init__(self, learner, X, plan):
        self.learner, self.X, self.plan = learner, X, plan
        T = X.shape[0]
        self.losses = np.empty((2, T))
        self.t0 = self.start = int(learner._t[0])
        self.n0 = learner._records.count
        self.drawn = 0
        self.saved = None
        # the last trial count re-orthogonalised; the state before it
        self.fixed = [self.t0, None]
        self.zeros = None

    def step(self, done, size):
        L, plan = self.learner, self.plan
        self.drawn, self.saved = 0, None
        self.start, self.n0 = int(L._t[0]), L._records.count
        engine = L._engine_for(plan)
        T = self.X.shape[0]
        stop = min(T, done + size)
        every = plan.every
        if every:  # re-orthogonalisation after the same trials however split
            stop = min(stop, done + every - self.start % every)
        count = stop - done
        if L._randomized:
            # saved and drawn are set before the draw: an interrupt landing
            # right after it (before the next statement) is then rewound
            self.saved, self.drawn = L._rng.bit_generator.state, count
            u = L._rng.random(count)
        else:
            if self.zeros is None or self.zeros.shape[0] < count:
                self.zeros = np.zeros(max(count, 16))
            u = self.zeros[:count]
        ran, status = engine.run(self.X[done:stop], u, self.losses[0, done:stop],
                                 self.losses[1, done:stop])
        self.settle()
        if status == _kernels.STATUS_ECAPACITY:
            L._state = L._state.grown()  # the next chunk binds to it
        elif status == _kernels.STATUS_SWITCH:
            L._switch_if_due(plan)  # before the call returns (and readers look)
        return ran, True

    def settle(self):
        """Make the learner that of the rows the engine processed (its trial
        counter says how many): their losses recorded, one uniform each
        consumed, the re-orthogonalisation due at that count done.  Safe to
        repeat (interruptions); returns the rows of the batch processed."""
        L = self.learner
        done = int(L._t[0]) - self.start
        L._reorthogonalize_at(self.plan.every, self.fixed)
        if L.record_losses:
            have = L._records.count - self.n0
            if have < done:
                first = self.start - self.t0
                L._record(self.losses[:, first + have:first + done])
        if self.saved is not None and done < self.drawn:  # one uniform per trial done
            L._rng.bit_generator.state = self.saved
            L._rng.random(done)
            self.drawn = done
        return int(L._t[0]) - self.t0
