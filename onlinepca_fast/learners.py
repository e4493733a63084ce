"""The online learners of Warmuth & Kuzmin and Yuan & Lamperski.

Every learner is a thin Python class over one compiled trial loop
(``src/learner.c``): ``partial_fit(X)`` runs one trial per row of ``X`` in
compiled code with the GIL released.  Hyper-parameters are set in
``__init__`` only and validated when data arrives (scikit-learn rules);
learned state lives in attributes ending in ``_``.

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
- Any finite input that passes validation keeps the state finite.  The
  PCA learners need ``max(1, eta) * |y|^2 <= MAX_STEP = 2**1020`` for each
  instance, ``y = x - mean`` (for a learned center, the bound
  ``|x| + max(|mean|, |x_j| of the rows before)`` is checked); the other
  learners' instances are at most 1 and ``eta <= 2**1020``.  Larger
  instances are rejected like any bad input.  Log-weights are kept exactly,
  except that those more than 2**1020 below the largest are raised to that
  distance (their weight, ``exp(-2**1020)``, is zero either way) and that
  :class:`CenteredOnlinePCA`/:class:`FollowTheLeader` shift their
  eigenvalues by a constant once all of them are below -2**1020 (W is
  unchanged); see ``src/learner.c``.
- Known limitation: the eigen-update's deflation tolerance is relative to
  the largest eigenvalue in magnitude, so one step ~10^15 times larger
  than the ordinary ones (e.g. a single outlier with ``eta |x|^2 = 1e16``
  among steps of 1) makes every later ordinary update negligible: the
  learner stays valid but stops adapting.  Clip or rescale outliers first.
- Learners pickle (and ``copy.deepcopy``) with their generator and continue
  bit for bit as if never interrupted.  The pickle holds the package
  version and its layout is tied to it: loading a pickle from another
  version warns.  Independent learners may run in parallel threads: the
  trial loop releases the GIL.  One learner must not be used by two
  threads at once.

References
----------
.. [WK] M. K. Warmuth and D. Kuzmin, "Randomized online PCA algorithms with
   regret bounds that are logarithmic in the dimension", JMLR 9, 2008.
.. [YL] J. Yuan and A. Lamperski, "Online adaptive principal component
   analysis and its extensions", preprint (ICML 2019).
"""

import inspect
import math
import numbers

import numpy as np

from . import _kernels
from ._validation import as_generator, as_int

__all__ = [
    "Hedge",
    "CappedHedge",
    "OnlinePCA",
    "OnlineAdaptivePCA",
    "CenteredOnlinePCA",
    "FollowTheLeader",
    "VarianceMinimizer",
    "SimplexVarianceMinimizer",
]

_SAMPLERS = {"decomposition": _kernels.SAMPLER_DECOMPOSITION,
             "systematic": _kernels.SAMPLER_SYSTEMATIC}
_SHARES = {None: _kernels.SHARE_NONE, "fixed": _kernels.SHARE_FIXED,
           "uniform": _kernels.SHARE_UNIFORM, "past": _kernels.SHARE_PAST}


#: The largest step a trial may subtract from a log-weight: ``eta * |x|^2``
#: (and ``|x|^2``, the loss) for the PCA learners, ``eta`` for the others,
#: whose instances are at most 1.  The compiled loop keeps log-weights within
#: this distance of the largest (see ``src/learner.c``); with steps bounded
#: too, nothing can overflow.  2**1020 ~ 1.1e307.
MAX_STEP = 2.0 ** 1020


def _real(value, name):
    """`value` as a float, or TypeError naming `name` (bools and complex too)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:  # an int beyond the float range
        raise ValueError(f"{name} must be a finite number, got an int of "
                         f"{int(value).bit_length()} bits") from None


def _check_eta(eta):
    value = _real(eta, "eta")
    if not (np.isfinite(value) and 0 < value <= MAX_STEP):
        raise ValueError(f"eta must be a finite number > 0 (at most 2**1020), got {eta!r}")
    return value


def _check_alpha(alpha):
    value = _real(alpha, "alpha")
    if not 0.0 <= value < 1.0:
        raise ValueError(f"alpha must satisfy 0 <= alpha < 1, got {alpha!r}")
    return value


def _check_bool(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def _row_norms(Y):
    """Euclidean norms of the rows of Y without overflow (inf if they overflow)."""
    with np.errstate(over="ignore", invalid="ignore"):
        s = np.abs(Y).max(axis=1)
        safe = np.where(s > 0, s, 1.0)[:, np.newaxis]
        norms = s * np.sqrt(np.einsum("ij,ij->i", Y / safe, Y / safe))
    return np.where(np.isnan(norms), np.inf, norms)


def _check_choice(value, name, choices):
    if not any(value is c or (isinstance(value, str) and value == c) for c in choices):
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


class _Learner:
    """Shared machinery: parameters, validation, the engine, loss records."""

    # set by subclasses
    _kind = None
    _instance = "vector"      # "vector", "loss" (in [0, 1]) or "vector_or_matrix"
    _randomized = True

    # -- scikit-learn parameter protocol ---------------------------------
    @classmethod
    def _get_param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind != p.VAR_KEYWORD)

    def get_params(self, deep=True):
        """Get the hyper-parameters of this learner (scikit-learn protocol)."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Set hyper-parameters; they take effect at the next trial."""
        valid = self._get_param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}; "
                                 f"valid parameters are {valid}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = {p.name: p.default for p in
                    inspect.signature(type(self).__init__).parameters.values()}
        args = [f"{k}={v!r}" for k, v in self.get_params().items()
                if not (v is defaults.get(k) or
                        (isinstance(v, (int, float, str)) and v == defaults.get(k)))]
        return f"{type(self).__name__}({', '.join(args)})"

    def __sklearn_tags__(self):
        from sklearn.utils import Tags, TargetTags, TransformerTags, InputTags
        return Tags(estimator_type=None,
                    target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags() if hasattr(self, "transform") else None,
                    input_tags=InputTags(allow_nan=False),
                    non_deterministic=False)

    # -- pickling: the engine holds raw pointers and is rebuilt ------------
    # The pickle holds the learner's arrays and generator.  Its layout is
    # tied to the package version: loading a pickle made by another version
    # warns, since the state may not mean the same thing.
    def __getstate__(self):
        from . import __version__
        state = self.__dict__.copy()
        state.pop("_engine", None)
        state.pop("_engine_key", None)
        state["_onlinepca_fast_version"] = __version__
        return state

    def __setstate__(self, state):
        import warnings

        from . import __version__
        state = dict(state)
        saved = state.pop("_onlinepca_fast_version", None)
        if saved != __version__:
            warnings.warn(f"unpickling a {type(self).__name__} saved by onlinepca_fast "
                          f"{saved}, this is {__version__}: the state may not be valid",
                          UserWarning, stacklevel=2)
        self.__dict__.update(state)

    # -- hyper-parameters as the engine wants them -------------------------
    def _config(self, n):
        """Validated engine configuration for dimension n (dict)."""
        raise NotImplementedError

    def _checked_config(self, n):
        """:meth:`_config` and the options every learner shares, all
        validated before any state changes: (engine configuration,
        re-orthogonalisation period or 0)."""
        cfg = self._config(n)
        _check_bool(getattr(self, "record_losses", True), "record_losses")
        every = getattr(self, "reorthogonalize_every", None)
        if every is None or self._kind not in (_kernels.KIND_MEG, _kernels.KIND_CUMULATIVE):
            return cfg, 0
        return cfg, as_int(every, "reorthogonalize_every", 1, 2 ** 62)

    def _initial_state(self, n, cfg):
        """(lam, q, mean) at reset: W^0 = I/n."""
        lam = np.full(n, -np.log(n))
        basis = self._kind in (_kernels.KIND_MEG, _kernels.KIND_CUMULATIVE)
        q = np.eye(n) if basis else np.zeros((1, 1))  # experts need no basis
        return lam, q, np.zeros(n)

    # -- validation --------------------------------------------------------
    def _validate_rows(self, X, name, single):
        """(rows as C-contiguous float64, whether they are matrices)."""
        return self._validated(X, name, single)[:2]

    def _validate_rows_fresh(self, X):
        """:meth:`_validate_rows` as if unfitted (fit may change the number
        of features), without touching the state."""
        return self._validated(X, "X", single=False, fresh=True)[:2]

    def _validated(self, X, name, single, fresh=False):
        """(rows, matrices?, max |entry|), or ValueError/TypeError naming `name`."""
        # Messages follow scikit-learn's wording where it has one, so that
        # code and tests written against scikit-learn estimators recognise them.
        if hasattr(X, "toarray") or hasattr(X, "tocsr"):
            raise TypeError(f"{name} is a sparse matrix; the learners need dense "
                            "input (use X.toarray())")
        try:
            arr = np.asarray(X)
        except ValueError as exc:  # ragged nested sequences
            raise ValueError(f"{name} must be a rectangular numeric array: {exc}") from None
        kind = arr.dtype.kind
        if kind not in "iuf":
            if kind == "c":
                raise ValueError(f"Complex data not supported: {name} must be real, "
                                 f"got dtype {arr.dtype}")
            raise TypeError(f"{name} must be a real numeric array (int or float), "
                            f"got dtype {arr.dtype}")
        n = None if fresh else getattr(self, "n_features_in_", None)
        if self._instance == "vector_or_matrix":
            ok_ndim = (1, 2) if single else (2, 3)
        else:
            ok_ndim = (1,) if single else (2,)
        if arr.ndim not in ok_ndim:
            hint = (" Reshape your data, e.g. with X.reshape(1, -1) for a single "
                    "row, or call learn_one(x)" if arr.ndim == 1 else "")
            raise ValueError(f"{name} must have {' or '.join(map(str, ok_ndim))} dimensions, "
                             f"got an array of shape {arr.shape}.{hint}")
        matrix = arr.ndim == ok_ndim[-1] and len(ok_ndim) == 2
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
        if n is not None and width != n:
            raise ValueError(f"{name} has {width} features, but {type(self).__name__} "
                             f"is expecting {n} features as input.")
        if arr.dtype == np.float64:
            arr = np.ascontiguousarray(arr)
        else:  # float128 beyond the float64 range becomes inf, caught below
            with np.errstate(over="ignore"):
                arr = np.ascontiguousarray(arr, dtype=np.float64)
        lo, hi = _kernels.value_range(arr)  # one pass; NaN and inf propagate
        amax = max(hi, -lo)
        if not math.isfinite(amax):
            raise ValueError(f"{name} contains NaN or infinity")
        self._check_values(arr, name, matrix, lo, hi)
        return arr, matrix, amax

    def _check_values(self, X, name, matrix, lo, hi):
        """Hook for algorithm-specific domains (loss vectors in [0, 1] ...).

        lo and hi are the smallest and largest entry of X (finite).
        """

    def _check_steps(self, X, amax, name, matrix, cfg, mean):
        """Reject a batch with an instance whose step would overflow.

        The PCA learners subtract ``eta f |y|^2`` (``y = x - m``, ``f <= 1``)
        from a log-weight and record losses up to ``|y|^2``; both must be at
        most :data:`MAX_STEP`.  For the learned center, ``m`` stays in the
        convex hull of the current center and the batch's rows (eq. 15 with
        ``c >= 0``), so the bound ``|y| <= |x| + max(|m|, max |x_j|)`` is what is
        checked, with the ``x_j`` before ``x``.  The other learners'
        instances are at most 1 and ``eta <= MAX_STEP`` is checked with the
        hyper-parameters.
        """
        if matrix or cfg["kind"] not in (_kernels.KIND_MEG, _kernels.KIND_CUMULATIVE):
            return
        limit = 2.0 ** 510 / math.sqrt(max(1.0, cfg["eta"]))  # |y| <= limit
        root_n = math.sqrt(X.shape[1])
        ax = amax
        if cfg["kind"] == _kernels.KIND_MEG:
            if root_n * ax <= limit:  # |x| <= sqrt(n) max|x_i|: the cheap test
                return
            bound, what = _row_norms(X), "|x|"
        else:
            am = float(np.abs(mean).max())
            if cfg["centered"]:
                if root_n * (ax + max(am, ax)) <= limit:
                    return
                norms = _row_norms(X)
                # |m^{t-1}| <= max(|m|, |x_1|, ..., |x_{t-1}|)
                reach = np.maximum.accumulate(np.concatenate([_row_norms(mean[np.newaxis]),
                                                              norms[:-1]]))
                bound, what = norms + reach, "(|x| + |mean|)"
            else:
                if root_n * (ax + am) <= limit:
                    return
                with np.errstate(over="ignore"):
                    bound, what = _row_norms(X - mean), "|x - mean|"
        bad = np.flatnonzero(~(bound <= limit))
        if bad.size:
            i = int(bad[0])
            with np.errstate(over="ignore"):
                step = max(1.0, cfg["eta"]) * np.float64(bound[i]) ** 2
            raise ValueError(
                f"{name} row {i} is too large for eta = {cfg['eta']!r}: max(1, eta) * "
                f"{what}^2 = {step:.3g} exceeds 2**1020, the largest step a log-weight "
                "can take; rescale the data or eta (nothing was changed)")

    # -- state ------------------------------------------------------------
    def _reset(self, n):
        # everything that can raise comes before the first assignment
        cfg = self._config(n)
        rng = as_generator(self.random_state) if self._randomized else None
        lam, q, mean = self._initial_state(n, cfg)
        self.n_features_in_ = n
        self._lam = lam
        self._omega = np.exp(lam)
        self._q = q
        self._mean = mean
        # running sum of past parameters, only for share="past"
        if getattr(self, "share", None) != "past":
            wsum_shape = (1,)
        elif self._kind == _kernels.KIND_EXPERTS:
            wsum_shape = (n,)
        else:
            wsum_shape = (n, n)
        self._wsum = np.zeros(wsum_shape)
        self._t = np.zeros(1, dtype=np.intp)
        self._losses = np.empty((2, 0))
        self._n_recorded = 0
        self._rng = rng
        self._engine = None
        self._engine_key = None

    def _get_engine(self, matrix, cfg):
        n = self.n_features_in_
        cfg = dict(cfg, matrix_input=bool(matrix))
        if cfg["share"] == _kernels.SHARE_PAST:
            need = n if self._kind == _kernels.KIND_EXPERTS else n * n
            if self._wsum.size != need:
                raise ValueError("share='past' averages every parameter since the "
                                 "last reset; set it before fit, not mid-stream")
        key = tuple(sorted(cfg.items()))
        if getattr(self, "_engine", None) is None or self._engine_key != key:
            self._engine = _kernels.Engine(
                lam=self._lam, omega=self._omega, q=self._q, mean=self._mean,
                wsum=self._wsum.reshape(-1), t=self._t, **cfg)
            self._engine_key = key
        return self._engine

    def _start(self, X, matrix, amax, name, fresh):
        """Check everything about the batch, then reset if fresh, then run.

        Nothing is changed until every check has passed.
        """
        n = X.shape[1]
        cfg, every = self._checked_config(n)
        mean = self._initial_state(n, cfg)[2] if fresh else self._mean
        self._check_steps(X, amax, name, matrix, cfg, mean)
        if fresh:
            self._reset(n)
        return self._run(X, matrix, cfg, every)

    def _run(self, X, matrix, cfg, every):
        T = X.shape[0]
        engine = self._get_engine(matrix, cfg)
        if self._randomized:
            saved = self._rng.bit_generator.state
            u = self._rng.random(T)
        else:
            u = np.zeros(T)
        losses = np.empty((2, T))
        X = X.reshape(T, -1)
        # The batch runs in pieces that end where the trial count reaches a
        # multiple of `every`, so that re-orthogonalisation happens after the
        # same trials however the stream is split into batches.
        to_next = every - int(self._t[0]) % every if every else T + 1
        done = 0
        try:
            while done < T:
                stop = min(T, done + to_next)
                engine.run(X[done:stop], u[done:stop], losses[0, done:stop],
                           losses[1, done:stop])
                done = stop
                if every and int(self._t[0]) % every == 0:
                    self._reorthogonalize()
                to_next = every
        except ValueError as exc:
            if getattr(exc, "trials_done", None) is None:
                raise
            done += exc.trials_done
            self._record(losses[:, :done])
            if self._randomized:  # consume exactly one uniform per trial done
                self._rng.bit_generator.state = saved
                self._rng.random(done)
            raise RuntimeError(f"trial {done} of the batch failed in the compiled "
                               f"kernel ({exc}); the {done} rows before it "
                               f"were processed") from exc
        self._record(losses[:, :done])
        return self

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

    def _record(self, losses):
        if not getattr(self, "record_losses", True) or losses.shape[1] == 0:
            return
        old = self._losses
        n_old = self._n_recorded
        need = n_old + losses.shape[1]
        if need > old.shape[1]:
            # zeros, not empty: the buffer is pickled whole, and uninitialised
            # memory would make equal learners pickle differently
            grown = np.zeros((2, max(need, 2 * old.shape[1], 16)))
            grown[:, :n_old] = old[:, :n_old]
            self._losses = old = grown
        old[:, n_old:need] = losses
        self._n_recorded = need

    # -- public API -------------------------------------------------------
    def partial_fit(self, X, y=None):
        """Run one trial per row of X, in order.

        Parameters
        ----------
        X : array_like of shape (n_trials, n_features)
            The instances.  The whole batch is validated first: on error
            nothing changes.
        y : ignored

        Returns
        -------
        self
        """
        X, matrix, amax = self._validated(X, "X", single=False)
        return self._start(X, matrix, amax, "X", fresh=not hasattr(self, "n_features_in_"))

    def fit(self, X, y=None):
        """Reset the learner, then :meth:`partial_fit` on X.

        X is validated as for an unfitted learner (it may change the number
        of features); if it is rejected the learner keeps its state.
        """
        X, matrix, amax = self._validated(X, "X", single=False, fresh=True)
        return self._start(X, matrix, amax, "X", fresh=True)

    def learn_one(self, x):
        """Run one trial on the single instance x (a 1-D row)."""
        X, matrix, amax = self._validated(x, "x", single=True)
        return self._start(X, matrix, amax, "x", fresh=not hasattr(self, "n_features_in_"))

    def _check_fitted(self):
        if not hasattr(self, "n_features_in_"):
            from ._validation import NotFittedError
            raise NotFittedError(f"This {type(self).__name__} instance has seen no data "
                                 "yet; call fit, partial_fit or learn_one first")

    @property
    def n_trials_(self):
        """Number of trials since the last reset."""
        self._check_fitted()
        return int(self._t[0])

    def _loss_view(self, row):
        self._check_fitted()
        n = self._n_recorded
        view = self._losses[row, :n]
        view.flags.writeable = False
        return view

    @property
    def expected_losses_(self):
        """Expected loss of each trial since the last reset (read-only view)."""
        return self._loss_view(0)

    @property
    def realized_losses_(self):
        """Realized loss of each trial since the last reset (read-only view)."""
        return self._loss_view(1)


class _CappedMixin:
    """Weights, drawing and mixing shared by the capped learners."""

    def _d(self, n):
        raise NotImplementedError

    def _weights(self):
        """The probability weights omega of the current parameter."""
        return self._omega.copy()

    def _draw(self, random_state):
        rng = self._rng if random_state is None else as_generator(random_state)
        d = self._d(self.n_features_in_)
        from .kernels import sample_corner
        return sample_corner(self._weights(), d, rng, method=self.sampler)


class _MixingLearner:
    """Hyper-parameters and configuration of the trial-to-trial learners
    with mixing (OnlinePCA and CappedHedge): one definition for both."""

    _allowed_shares = (None, "fixed", "uniform", "past")

    def __init__(self, n_components, *, eta=1.0, share=None, alpha=0.0,
                 sampler="decomposition", random_state=None, record_losses=True):
        self.n_components = n_components
        self.eta = eta
        self.share = share
        self.alpha = alpha
        self.sampler = sampler
        self.random_state = random_state
        self.record_losses = record_losses

    def _config(self, n):
        k = self._k(n)
        share = _check_choice(self.share, "share", self._allowed_shares)
        return dict(kind=self._kind, n=n, d=n - k, eta=_check_eta(self.eta),
                    alpha=_check_alpha(self.alpha), share=_SHARES[share],
                    sampler=_SAMPLERS[_check_choice(self.sampler, "sampler", _SAMPLERS)],
                    centered=False, center_lr_inv=0.0)


class _PCALearner(_CappedMixin, _Learner):
    """Projection API shared by the PCA learners."""

    def _d(self, n):
        return n - self.n_components

    def _k(self, n):
        if n < 2:
            raise ValueError(f"online PCA needs at least 2 features, got {n} feature(s)")
        return as_int(self.n_components, "n_components", 1, n - 1)

    @property
    def components_(self):
        """The k leading directions (rows): top-k of E[P] = I - (n-k) W."""
        self._check_fitted()
        return self._q[:, :self.n_components].T.copy()

    @property
    def mean_(self):
        """The center subtracted before projecting (zeros when uncentered)."""
        self._check_fitted()
        return self._mean.copy()

    @property
    def eigenvalues_(self):
        """Ascending eigenvalues of the maintained matrix (see the class doc)."""
        self._check_fitted()
        return self._lam.copy()

    @property
    def eigenvectors_(self):
        """Orthonormal eigenvectors (columns) matching ``eigenvalues_``."""
        self._check_fitted()
        return self._q.copy()

    @property
    def density_(self):
        """The density matrix W of the current parameter, formed on request."""
        self._check_fitted()
        return (self._q * self._weights()) @ self._q.T

    def fit_transform(self, X, y=None):
        """:meth:`fit` on X, then :meth:`transform` X with the final components."""
        return self.fit(X).transform(X)

    def transform(self, X):
        """Project X on ``components_`` (after subtracting ``mean_``)."""
        self._check_fitted()
        X, _ = self._validate_rows(X, "X", single=False)
        return (X - self._mean) @ self._q[:, :self.n_components]

    def inverse_transform(self, Y):
        """Map coordinates back: ``Y @ components_ + mean_``."""
        self._check_fitted()
        try:
            Y = np.asarray(Y)
        except ValueError as exc:  # ragged nested sequences
            raise ValueError(f"Y must be a rectangular numeric array: {exc}") from None
        if Y.dtype.kind not in "iuf":  # no silent casts of complex, str, object
            raise TypeError(f"Y must be a real numeric array, got dtype {Y.dtype}")
        with np.errstate(over="ignore"):  # float128 beyond range -> inf, caught below
            Y = Y.astype(np.float64, copy=False)
        if Y.ndim != 2 or Y.shape[1] != self.n_components:
            raise ValueError(f"Y must have shape (n_samples, {self.n_components}), "
                             f"got {Y.shape}")
        if not np.isfinite(Y).all():
            raise ValueError("Y contains NaN or infinity")
        return Y @ self._q[:, :self.n_components].T + self._mean

    def sample_projection(self, random_state=None):
        """Draw a rank-k projection matrix P from the current parameter.

        P = I - (n-k) R for a matrix corner R drawn so that E[R] = W (WK
        Alg. 5), i.e. ``P = Q_k Q_k^T`` over the directions outside the
        drawn corner.

        Parameters
        ----------
        random_state : None, int or Generator, default=None
            None uses (and advances) the learner's own generator.

        Returns
        -------
        P : ndarray of shape (n, n)
        """
        self._check_fitted()
        corner = self._draw(random_state)
        keep = np.setdiff1d(np.arange(self.n_features_in_), corner)
        V = self._q[:, keep]
        return V @ V.T


class OnlinePCA(_MixingLearner, _PCALearner):
    """Uncentered randomized online PCA (WK Algorithm 5).

    At each trial a rank-k projection ``P`` is drawn with ``E[P] = I -
    (n-k) W``, the instance ``x`` costs ``||x - P x||^2``, and the density
    matrix is updated by the matrix exponentiated gradient step followed by
    capping::

        W <- cap_{n-k}( exp(log W - eta x x^T) / tr(...) )

    The eigensystem of ``log W`` is maintained by one rank-one update per
    trial (Gu & Eisenstat), with log-eigenvalues kept exactly (no weight
    ever underflows to 0), and capped with :func:`~onlinepca_fast.kernels.cap_log`.

    Parameters
    ----------
    n_components : int
        Rank k of the projection, ``1 <= k < n_features``.
    eta : float, default=1.0
        Learning rate (> 0).  The tuned value of WK eq. (3) is
        :func:`onlinepca_fast.metrics.tuned_learning_rate`.
    share : {None, "fixed", "uniform", "past"}, default=None
        Mixing step for shifting data:

        - ``"fixed"``: fixed share of YL Algorithm 4, eq. (11b), applied
          *before* capping: ``w <- alpha/n + (1-alpha) w`` on the
          normalised eigenvalues.
        - ``"uniform"``: WK Section 8, *after* capping, at the end of the
          trial: ``W <- (1-alpha) W + alpha I/n``.
        - ``"past"``: WK eq. (20), after capping: ``W <- (1-alpha) W +
          alpha (W^0 + ... + W^{t-1})/t`` ("long-term memory").  This
          changes the eigenbasis, so each trial costs a full O(n^3)
          eigendecomposition.
    alpha : float, default=0.0
        Mixing rate, ``0 <= alpha < 1``; 0 disables mixing.
    sampler : {"decomposition", "systematic"}, default="decomposition"
        How the projection is drawn, see
        :func:`onlinepca_fast.kernels.sample_corner`.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the draws.
    record_losses : bool, default=True
        Keep the per-trial losses; turn off for unbounded streams (then
        memory does not grow with the number of trials).
    reorthogonalize_every : int or None, default=10000
        Every this many trials (counted since the reset, so independently
        of how the stream is split into batches) the eigenvectors are
        re-orthogonalised by one Newton-Schulz step, O(n^3).  Rounding in
        the rank-one updates makes ``||Q^T Q - I||`` grow by ~1e-18 to
        1e-16 per trial; the default keeps it below ~1e-12.  None never
        re-orthogonalises.

    Attributes
    ----------
    components_ : ndarray of shape (k, n)
        Orthonormal rows: the k eigenvectors of W with the smallest
        eigenvalues, i.e. the top-k directions of ``E[P]``.
    eigenvalues_ : ndarray of shape (n,)
        Ascending eigenvalues of ``log W`` (normalised and capped: the
        capped ones are exactly ``-log(n-k)``).
    eigenvectors_ : ndarray of shape (n, n)
        Orthonormal columns matching ``eigenvalues_``.
    density_ : ndarray of shape (n, n)
        The density matrix W (formed on request).
    mean_ : ndarray of shape (n,)
        Zeros (uncentered).
    expected_losses_, realized_losses_ : ndarray of shape (n_trials,)
        ``(n-k) tr(W^{t-1} x x^T)`` and ``||x - P x||^2`` per trial.
    n_features_in_ : int
    n_trials_ : int

    Notes
    -----
    The mathematics is exact: after a few hundred trials along one subspace
    its weight in W is like ``exp(-250)``; it is kept as such (a linear-
    domain implementation rounds it to 0 or clamps it, which silently acts
    as a fixed share).  Faster recovery after a shift is what ``share`` and
    ``alpha`` are for.

    References
    ----------
    WK Algorithm 5, Theorem 6; Section 8 and eq. (20) for mixing; YL
    Algorithm 4 for ``share="fixed"``.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import OnlinePCA
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2)) @ rng.normal(size=(2, 10)) / 10
    >>> pca = OnlinePCA(n_components=2, eta=1.0, random_state=0).fit(X)
    >>> pca.components_.shape
    (2, 10)
    >>> bool(pca.expected_losses_[-100:].mean() < pca.expected_losses_[:100].mean())
    True
    """

    _kind = _kernels.KIND_MEG

    def __init__(self, n_components, *, eta=1.0, share=None, alpha=0.0,
                 sampler="decomposition", random_state=None, record_losses=True,
                 reorthogonalize_every=10_000):
        super().__init__(n_components, eta=eta, share=share, alpha=alpha,
                         sampler=sampler, random_state=random_state,
                         record_losses=record_losses)
        self.reorthogonalize_every = reorthogonalize_every


class OnlineAdaptivePCA(OnlinePCA):
    """Online adaptive PCA (YL Algorithm 4): :class:`OnlinePCA` with fixed share.

    The fixed-share step ``w <- alpha/n + (1-alpha) w`` on the eigenvalues of
    W, applied before capping (YL eq. 11b), bounds the regret on every
    interval (adaptive regret, YL eq. 3 and Theorem 3).

    Parameters
    ----------
    n_components : int
        Rank k, ``1 <= k < n_features``.
    eta : float, default=1.0
        Learning rate; YL Theorem 3 tunes it with
        :func:`onlinepca_fast.metrics.adaptive_parameters`.
    alpha : float, default=1e-5
        Fixed-share rate, ``0 <= alpha < 1`` (YL Sec. 6.1 uses 1e-5).
    sampler, random_state, record_losses, reorthogonalize_every
        As for :class:`OnlinePCA`.

    Attributes
    ----------
    See :class:`OnlinePCA`.

    References
    ----------
    YL Algorithm 4, eq. (11a-c), Theorem 3.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import OnlineAdaptivePCA
    >>> X = np.random.default_rng(0).normal(size=(200, 8)) / 4
    >>> OnlineAdaptivePCA(n_components=2, random_state=0).fit(X).n_trials_
    200
    """

    def __init__(self, n_components, *, eta=1.0, alpha=1e-5,
                 sampler="decomposition", random_state=None, record_losses=True,
                 reorthogonalize_every=10_000):
        self.n_components = n_components
        self.eta = eta
        self.alpha = alpha
        self.sampler = sampler
        self.random_state = random_state
        self.record_losses = record_losses
        self.reorthogonalize_every = reorthogonalize_every

    share = "fixed"


class CenteredOnlinePCA(_PCALearner):
    """Centered randomized online PCA (WK Algorithm 6).

    Learns a center ``m`` and a density matrix ``W`` together.  With
    ``y = x - m^{t-1}`` the trial costs ``||y - P y||^2``, then::

        m^t = m^{t-1} - (m^{t-1} - x) / (c + t)                       (15)
        C^t = C^{t-1} + (c + t - 1)/(c + t) y y^T                     (16)
        W^t = cap_{n-k}( exp(log W^0 - eta C^t) / tr(...) )           (14)

    with ``c = center_lr_inv``.  The eigensystem of ``log W^0 - eta C^t``
    is kept by one rank-one update per trial; capping is applied to its
    eigenvalues each trial (W is never stored).

    Parameters
    ----------
    n_components : int
        Rank k, ``1 <= k < n_features``.
    eta : float, default=1.0
        Learning rate (> 0).
    center_lr_inv : float, default=0.0
        ``eta~^{-1} >= 0``, the inverse learning rate of the center; 0 makes
        ``m^t`` the empirical mean of ``x^1..x^t`` (WK Corollary 9).
    mean_init : array_like of shape (n,) or None, default=None
        The initial center ``m^0`` (zeros if None).
    centered : bool, default=True
        False gives "the uncentered version of Algorithm 6" (WK Sec. 6.2,
        Fig. 4): step (15) is skipped, the center stays ``mean_init``
        (zeros by default) and (16) uses factor 1: ``C^t = sum y y^T``.
    sampler, random_state, record_losses, reorthogonalize_every
        As for :class:`OnlinePCA`.

    Notes
    -----
    There is no ``share`` option: Algorithm 6 recomputes ``W^t`` from
    ``W^0`` and ``C^t`` every trial, so anything mixed into ``W^t`` would
    not carry over to the next trial; WK Sec. 8 and YL define mixing for
    the trial-to-trial update of Algorithm 5 (:class:`OnlinePCA`).

    Attributes
    ----------
    mean_ : ndarray of shape (n,)
        The center ``m^t``.
    eigenvalues_, eigenvectors_ : ndarray
        Eigensystem of ``log W^0 - eta C^t = -log(n) I - eta C^t``
        (ascending; not capped).  Exactly so unless its eigenvalues
        leave the float64 range: then it is shifted by a constant and
        floored 2**1020 below its largest eigenvalue (see the module doc).
    components_, density_, expected_losses_, realized_losses_, n_trials_
        As for :class:`OnlinePCA` (W is ``cap(exp(eigenvalues_))``).

    References
    ----------
    WK Algorithm 6, eqs. (14)-(16), Theorem 8, Corollary 9.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import CenteredOnlinePCA
    >>> rng = np.random.default_rng(0)
    >>> X = 5.0 + rng.normal(size=(300, 1)) @ rng.normal(size=(1, 6)) / 6
    >>> pca = CenteredOnlinePCA(n_components=1, random_state=0).fit(X)
    >>> bool(np.allclose(pca.mean_, X.mean(axis=0)))
    True
    """

    _kind = _kernels.KIND_CUMULATIVE

    def __init__(self, n_components, *, eta=1.0, center_lr_inv=0.0, mean_init=None,
                 centered=True, sampler="decomposition", random_state=None,
                 record_losses=True, reorthogonalize_every=10_000):
        self.n_components = n_components
        self.eta = eta
        self.center_lr_inv = center_lr_inv
        self.mean_init = mean_init
        self.centered = centered
        self.sampler = sampler
        self.random_state = random_state
        self.record_losses = record_losses
        self.reorthogonalize_every = reorthogonalize_every

    def _config(self, n):
        k = self._k(n)
        c = _real(self.center_lr_inv, "center_lr_inv")
        if not (np.isfinite(c) and c >= 0):
            raise ValueError(f"center_lr_inv must be finite and >= 0, got {self.center_lr_inv!r}")
        if not isinstance(self.centered, (bool, np.bool_)):
            raise TypeError(f"centered must be a bool, got {type(self.centered).__name__}")
        self._mean_init(n)
        return dict(kind=self._kind, n=n, d=n - k, eta=_check_eta(self.eta), alpha=0.0,
                    share=_kernels.SHARE_NONE,
                    sampler=_SAMPLERS[_check_choice(self.sampler, "sampler", _SAMPLERS)],
                    centered=bool(self.centered), center_lr_inv=c)

    def _mean_init(self, n):
        if self.mean_init is None:
            return np.zeros(n)
        from ._validation import as_float_vector
        m0 = as_float_vector(self.mean_init, "mean_init")
        if m0.shape[0] != n:
            raise ValueError(f"mean_init must have {n} entries, got {m0.shape[0]}")
        return m0.copy()

    def _initial_state(self, n, cfg):
        return np.full(n, -np.log(n)), np.eye(n), self._mean_init(n)

    def _weights(self):
        from .kernels import cap_log  # accurate at any level of lam
        return np.exp(cap_log(self._lam, self.n_features_in_ - self.n_components))


class FollowTheLeader(_PCALearner):
    """Follow the Leader: the top-k subspace of the covariance so far (WK Sec. 7).

    Deterministic baseline: at trial t it projects onto the k leading
    eigenvectors of ``C^{t-1}`` (``sum x x^T``, or the scatter around the
    running mean when ``centered``), ties broken by the order of the
    maintained eigensystem.  It is the limit ``eta -> inf`` of WK
    Algorithm 6 and uses the same rank-one machinery.  Expected and
    realized losses are equal.

    Parameters
    ----------
    n_components : int
        Rank k, ``1 <= k < n_features``.
    centered : bool, default=False
        Center by the running mean (``m^0 = 0``; WK eq. 15 with
        ``center_lr_inv = 0``).
    record_losses : bool, default=True
    reorthogonalize_every : int or None, default=10000
        As for :class:`OnlinePCA`.

    Attributes
    ----------
    eigenvalues_, eigenvectors_ : ndarray
        Eigensystem of ``-C^t`` (ascending, so the leading directions of
        ``C^t`` come first), shifted and floored as for
        :class:`CenteredOnlinePCA` should it leave the float64 range.
    components_, mean_, expected_losses_, realized_losses_, n_trials_
        As for :class:`OnlinePCA`.

    References
    ----------
    WK Section 7 (lower bounds for FL) and Section 8, Fig. 4.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import FollowTheLeader
    >>> X = np.random.default_rng(0).normal(size=(100, 3)) * [3.0, 1.0, 0.1]
    >>> ftl = FollowTheLeader(n_components=1).fit(X)
    >>> np.round(np.abs(ftl.components_), 1)
    array([[1., 0., 0.]])
    """

    _kind = _kernels.KIND_CUMULATIVE
    _randomized = False

    def __init__(self, n_components, *, centered=False, record_losses=True,
                 reorthogonalize_every=10_000):
        self.n_components = n_components
        self.centered = centered
        self.record_losses = record_losses
        self.reorthogonalize_every = reorthogonalize_every

    random_state = None  # deterministic
    sampler = "leader"

    def _config(self, n):
        k = self._k(n)
        if not isinstance(self.centered, (bool, np.bool_)):
            raise TypeError(f"centered must be a bool, got {type(self.centered).__name__}")
        return dict(kind=self._kind, n=n, d=n - k, eta=1.0, alpha=0.0,
                    share=_kernels.SHARE_NONE, sampler=_kernels.SAMPLER_LEADER,
                    centered=bool(self.centered), center_lr_inv=0.0)

    def _initial_state(self, n, cfg):
        return np.zeros(n), np.eye(n), np.zeros(n)

    def _weights(self):
        n, k = self.n_features_in_, self.n_components
        w = np.zeros(n)
        w[k:] = 1.0 / (n - k)
        return w

    def sample_projection(self, random_state=None):
        """The projection onto ``components_`` (deterministic)."""
        self._check_fitted()
        V = self._q[:, :self.n_components]
        return V @ V.T


class CappedHedge(_MixingLearner, _CappedMixin, _Learner):
    """Capped Hedge: learning as well as the best subset of experts (WK Alg. 3).

    Keeps a weight vector ``w`` in the capped simplex (entries at most
    ``1/(n-k)``).  Each trial draws a corner: a set of ``d = n - k`` experts
    whose losses are incurred (equivalently, the k experts outside it are
    "compressed"), with inclusion probabilities ``d w_i``; then::

        w <- cap_{n-k}( w * exp(-eta l) / sum_j w_j exp(-eta l_j) )

    (WK and YL print the normaliser as ``sum_j exp(-eta l_j)``; that is a
    typo -- it must make the result a distribution, as the text says.)

    Parameters
    ----------
    n_components : int
        k, the number of experts left out of the corner, ``1 <= k < n``;
        the learner competes with the best set of ``n - k`` experts.
    eta : float, default=1.0
        Learning rate (> 0).
    share : {None, "fixed", "uniform", "past"}, default=None
        ``"fixed"``: YL Algorithm 1, eq. (4b), before capping;
        ``"uniform"`` / ``"past"``: WK Section 8 mixing of the uniform vector
        / the average of past weight vectors, after capping.
    alpha : float, default=0.0
        Mixing rate, ``0 <= alpha < 1``.
    sampler : {"decomposition", "systematic"}, default="decomposition"
    random_state : None, int or numpy.random.Generator, default=None
    record_losses : bool, default=True

    Attributes
    ----------
    weights_ : ndarray of shape (n,)
        The capped weight vector.
    expected_losses_, realized_losses_ : ndarray of shape (n_trials,)
        ``(n-k) w.l`` and the summed loss of the drawn corner.
    n_features_in_, n_trials_ : int

    References
    ----------
    WK Algorithm 3, Theorem 3; YL Algorithm 1 and Theorem 1.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import CappedHedge
    >>> L = np.tile([0.9, 0.1, 0.5, 0.2], (200, 1))
    >>> h = CappedHedge(n_components=2, random_state=0).fit(L)
    >>> np.round(h.weights_, 3)
    array([0. , 0.5, 0. , 0.5])
    """

    _kind = _kernels.KIND_EXPERTS
    _instance = "loss"

    def _d(self, n):
        return n - self.n_components

    def _k(self, n):
        if n < 2:
            raise ValueError(f"CappedHedge needs at least 2 experts, got {n}")
        return as_int(self.n_components, "n_components", 1, n - 1)

    def _check_values(self, X, name, matrix, lo, hi):
        if lo < 0 or hi > 1:
            raise ValueError(f"{name} must hold loss vectors in [0, 1], got values in "
                             f"[{lo!r}, {hi!r}]")

    @property
    def weights_(self):
        """The current weight vector (sums to one, capped at 1/(n-k))."""
        self._check_fitted()
        return self._weights()

    def sample_corner(self, random_state=None):
        """Draw the set of ``n - k`` experts of a trial (sorted indices).

        None uses (and advances) the learner's generator.
        """
        self._check_fitted()
        return self._draw(random_state)


class Hedge(CappedHedge):
    """Hedge: the randomized weighted majority over n experts (WK Algorithm 1).

    :class:`CappedHedge` with ``k = n - 1``: one expert is drawn with
    probability ``w_i`` and ``w <- w exp(-eta l) / normaliser``.

    Parameters
    ----------
    eta : float, default=1.0
    share : {None, "fixed", "uniform", "past"}, default=None
        ``"fixed"`` is the fixed-share algorithm (Herbster & Warmuth; YL
        Alg. 1 with k = n - 1).
    alpha : float, default=0.0
    sampler : {"decomposition", "systematic"}, default="decomposition"
    random_state : None, int or numpy.random.Generator, default=None
    record_losses : bool, default=True

    Attributes
    ----------
    weights_, expected_losses_, realized_losses_, n_features_in_, n_trials_

    References
    ----------
    WK Algorithm 1, Theorem 1.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import Hedge
    >>> L = np.tile([0.9, 0.1, 0.5], (50, 1))
    >>> int(np.argmax(Hedge(random_state=0).fit(L).weights_))
    1
    """

    def __init__(self, *, eta=1.0, share=None, alpha=0.0, sampler="decomposition",
                 random_state=None, record_losses=True):
        self.eta = eta
        self.share = share
        self.alpha = alpha
        self.sampler = sampler
        self.random_state = random_state
        self.record_losses = record_losses

    @property
    def n_components(self):
        n = getattr(self, "n_features_in_", None)
        return None if n is None else n - 1

    def _d(self, n):
        return 1

    def _k(self, n):
        if n < 1:
            raise ValueError("Hedge needs at least one expert")
        return n - 1


class VarianceMinimizer(_CappedMixin, _Learner):
    """Online variance minimisation over the unit sphere (YL Alg. 5, WK 2006).

    Keeps a density matrix Y; each trial draws an eigenvector ``y`` of Y
    with probability its eigenvalue, receives a covariance matrix ``C``
    (``0 <= C <= I``; a vector ``x`` means ``C = x x^T`` with ``||x|| <= 1``)
    and incurs ``y^T C y`` (expected ``tr(Y C)``); then::

        Y <- exp(log Y - eta C) / tr(...)        (YL eq. 22a)

    optionally followed by the fixed share ``sigma <- alpha/n + (1-alpha)
    sigma`` on its eigenvalues (22b).  This is the k = n - 1 case of
    :class:`OnlinePCA` without capping.  Vectors cost one rank-one update;
    a matrix ``C`` costs an O(n^3) eigendecomposition.

    Parameters
    ----------
    eta : float, default=1.0
    share : {None, "fixed"}, default=None
    alpha : float, default=0.0
    random_state : None, int or numpy.random.Generator, default=None
    record_losses : bool, default=True
    reorthogonalize_every : int or None, default=10000
        As for :class:`OnlinePCA` (vector instances; matrix instances
        recompute the eigenvectors every trial).

    Attributes
    ----------
    eigenvalues_, eigenvectors_ : ndarray
        Eigensystem of ``log Y`` (ascending).
    density_ : ndarray of shape (n, n)
    expected_losses_, realized_losses_, n_features_in_, n_trials_

    References
    ----------
    YL Algorithm 5, Theorems 4 and 5; M. K. Warmuth and D. Kuzmin, "Online
    variance minimization", COLT 2006.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import VarianceMinimizer
    >>> X = np.random.default_rng(0).normal(size=(300, 3)) * [0.5, 0.3, 0.01]
    >>> X /= np.linalg.norm(X, axis=1).max()          # C = x x^T <= I
    >>> vm = VarianceMinimizer(random_state=0).fit(X)
    >>> int(np.argmax(np.abs(vm.eigenvectors_[:, -1])))
    2
    """

    _kind = _kernels.KIND_MEG
    _instance = "vector_or_matrix"

    def __init__(self, *, eta=1.0, share=None, alpha=0.0, random_state=None,
                 record_losses=True, reorthogonalize_every=10_000):
        self.eta = eta
        self.share = share
        self.alpha = alpha
        self.random_state = random_state
        self.record_losses = record_losses
        self.reorthogonalize_every = reorthogonalize_every

    sampler = "decomposition"

    def _d(self, n):
        return 1

    def _config(self, n):
        share = _check_choice(self.share, "share", (None, "fixed"))
        return dict(kind=self._kind, n=n, d=1, eta=_check_eta(self.eta),
                    alpha=_check_alpha(self.alpha), share=_SHARES[share],
                    sampler=_kernels.SAMPLER_DECOMPOSITION, centered=False,
                    center_lr_inv=0.0)

    def _check_values(self, X, name, matrix, lo, hi):
        _check_covariances(X, name, matrix)

    eigenvalues_ = _PCALearner.eigenvalues_
    eigenvectors_ = _PCALearner.eigenvectors_
    density_ = _PCALearner.density_

    def sample_direction(self, random_state=None):
        """Draw a unit vector: eigenvector i of Y with probability sigma_i."""
        self._check_fitted()
        (i,) = self._draw(random_state)
        return self._q[:, i].copy()


def _check_covariances(X, name, matrix, tol=1e-10):
    """Instances with 0 <= C <= I (vectors: ||x|| <= 1)."""
    if matrix:
        if not np.allclose(X, np.swapaxes(X, 1, 2), rtol=0, atol=tol):
            raise ValueError(f"{name} must hold symmetric matrices")
        ev = np.linalg.eigvalsh(X)
        if ev.min() < -tol or ev.max() > 1 + tol:
            raise ValueError(f"{name} must hold matrices with eigenvalues in [0, 1] "
                             f"(0 <= C <= I), got eigenvalues in [{ev.min():.3g}, "
                             f"{ev.max():.3g}]")
    else:
        norms = np.einsum("ij,ij->i", X, X)
        if norms.max() > 1 + tol:
            raise ValueError(f"{name} must hold vectors of norm at most 1 (C = x x^T "
                             f"<= I), got a norm of {np.sqrt(norms.max()):.6g}")


class SimplexVarianceMinimizer(_Learner):
    """Online variance minimisation over the simplex (YL Algorithm 6).

    Deterministic: keeps a probability vector ``y`` (a portfolio), incurs
    ``y^T C y`` for the revealed ``C`` (``0 <= C <= I``; a vector ``x``
    means ``C = x x^T``), and updates by exponentiated gradient plus fixed
    share::

        v_i = y_i exp(-eta (C y)_i) / sum_j y_j exp(-eta (C y)_j)   (29a)
        y_i = alpha/n + (1-alpha) v_i                               (29b)

    Parameters
    ----------
    eta : float, default=1.0
    alpha : float, default=0.0
    record_losses : bool, default=True

    Attributes
    ----------
    weights_ : ndarray of shape (n,)
        The current ``y``.
    expected_losses_, realized_losses_ : ndarray
        Both ``y^T C y`` (no randomisation).
    n_features_in_, n_trials_ : int

    References
    ----------
    YL Algorithm 6, Theorem 6.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import SimplexVarianceMinimizer
    >>> X = np.random.default_rng(0).normal(size=(500, 3)) * [0.5, 0.5, 0.05]
    >>> X /= np.linalg.norm(X, axis=1).max()          # C = x x^T <= I
    >>> y = SimplexVarianceMinimizer(eta=2.0).fit(X).weights_
    >>> int(np.argmax(y))
    2
    """

    _kind = _kernels.KIND_SIMPLEX_VAR
    _instance = "vector_or_matrix"
    _randomized = False

    def __init__(self, *, eta=1.0, alpha=0.0, record_losses=True):
        self.eta = eta
        self.alpha = alpha
        self.record_losses = record_losses

    random_state = None

    def _config(self, n):
        return dict(kind=self._kind, n=n, d=1, eta=_check_eta(self.eta),
                    alpha=_check_alpha(self.alpha), share=_kernels.SHARE_FIXED,
                    sampler=_kernels.SAMPLER_DECOMPOSITION, centered=False,
                    center_lr_inv=0.0)

    def _check_values(self, X, name, matrix, lo, hi):
        _check_covariances(X, name, matrix)

    @property
    def weights_(self):
        """The current probability vector y."""
        self._check_fitted()
        return self._omega.copy()
