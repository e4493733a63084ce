"""The guarded side of a learner's attributes: hyper-parameter writes,
copies and pickles (mixed into :class:`~onlinepca_fast.learners._base.OnlineLearner`).

A hyper-parameter set is a *write* of the learner's guard (see
:mod:`onlinepca_fast._guard`): it fails while another thread runs a batch.
A copy or pickle is a *read*: it fails while another thread writes, and is
complete (a deep copy) before the guard is left, so that no later trial
can tear it.
"""

import copy
import warnings
from typing import TYPE_CHECKING, Any, TypeVar

from .._guard import guard_of, settled

_Self = TypeVar("_Self", bound="GuardedState")

__all__ = ["GuardedState"]


class GuardedState:
    """Mixin: guarded hyper-parameter writes, copies and pickling.

    The class declares ``_constraints`` (the hyper-parameters) and
    ``get_params`` (scikit-learn's).
    """

    _constraints: dict[str, Any]

    if TYPE_CHECKING:  # scikit-learn's BaseEstimator, next in the learners' MRO
        def get_params(self, deep: bool = True) -> dict[str, Any]: ...

    def __setattr__(self, name, value):
        # a hyper-parameter set (set_params, or directly) is a write: it
        # fails while another thread runs a batch (which would rebuild
        # learn_one's short path from the old values when it ends); and the
        # short path, built from the checked values, is stale
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

        A write, as ``partial_fit``: while another thread uses the learner
        it raises ``RuntimeError`` and changes nothing.  The new values take
        effect at the next trial (``partial_fit`` or ``learn_one``).

        Parameters
        ----------
        **params : dict
            Hyper-parameter name -> value.

        Returns
        -------
        self : object
            The learner.
        """
        guard = guard_of(self)
        level = guard.enter_write(self, "set_params")
        try:
            return super().set_params(**params)  # type: ignore[misc]
        finally:
            settled(guard.exit_write, level)

    # -- pickling: the engine holds raw pointers and is rebuilt ----------------
    def _state_dict(self):
        """Hook: the attributes a pickle holds (not copied; the caller copies
        them under the guard)."""
        state = self.__dict__.copy()
        for key in self._transient():
            state.pop(key, None)
        return state

    def _snapshot(self, memo, what):
        """A deep copy of :meth:`_state_dict`, taken as a reader: never torn.

        While another thread runs a batch the copy raises ``RuntimeError``
        (as ``transform`` does) instead of returning a state in the middle
        of a trial; a batch started meanwhile by another thread fails the
        same way.  The copy is complete when this returns, so the pickler,
        which serialises the state afterwards, sees no later change.
        """
        from .._version import __version__
        guard = guard_of(self)
        guard.enter_read(self, what)
        try:
            state = copy.deepcopy(self._state_dict(), memo)
        finally:
            guard.exit_read()
        state["_onlinepca_fast_version"] = __version__
        return state

    def __getstate__(self):
        return self._snapshot({}, "pickle")

    def __deepcopy__(self, memo):
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        new.__setstate__(self._snapshot(memo, "deepcopy"))
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

    @staticmethod
    def _transient():
        """Attributes that are rebuilt, never pickled."""
        return ("_engine", "_engine_key", "_row_path", "_guard", "_pace")

    def __copy__(self):
        """An independent learner: the fitted state (arrays, generator) is
        copied deeply, the hyper-parameters are shared as by a shallow copy."""
        new = type(self).__new__(type(self))
        guard = guard_of(self)
        guard.enter_read(self, "copy")  # never a torn state (see _snapshot)
        try:
            params = self.get_params(deep=False)
            skip = self._transient()
            for key, value in self.__dict__.items():
                if key not in skip:
                    new.__dict__[key] = value if key in params else copy.deepcopy(value)
        finally:
            guard.exit_read()
        return new

    def _restore(self, before):
        """Make the attribute dict `before` again (idempotent)."""
        state = self.__dict__
        for key in [key for key in state if key not in before]:
            del state[key]
        state.update(before)
