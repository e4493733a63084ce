"""The online PCA learners as river transformers: dicts in, dicts out.

river (https://riverml.xyz) learns from one sample at a time, each a
``dict`` of feature name to number.  This module wraps the array learners
of :mod:`onlinepca_fast` as river ``base.Transformer`` s:

=======================  ==============================================
``OnlinePCA``            WK Algorithm 5 (:class:`onlinepca_fast.OnlinePCA`)
``OnlineAdaptivePCA``    YL Algorithm 4 (:class:`onlinepca_fast.OnlineAdaptivePCA`)
``CenteredOnlinePCA``    WK Algorithm 6 (:class:`onlinepca_fast.CenteredOnlinePCA`)
``FollowTheLeader``      WK Sec. 7 baseline (:class:`onlinepca_fast.FollowTheLeader`)
``OnlineKernelPCA``      KW Algorithm 6 (:class:`onlinepca_fast.OnlineKernelPCA`;
                         memory grows with the events, see its docstring)
=======================  ==============================================

Each takes exactly the hyper-parameters of its array learner (its
signature and the Parameters of its docstring are derived from the
learner's) and runs it on the rows the dicts make, so its numbers --
losses, eigensystem, ``transform`` -- are bit for bit those of the array
learner fed the same rows.  It needs river, an optional dependency::

    pip install "onlinepca_fast[river]"

Contract of every transformer here
----------------------------------
- The first dict passed to ``learn_one`` (or the first DataFrame passed to
  ``learn_many``: its columns) fixes the features: its keys, in iteration
  order, are the columns of the rows handed to the array learner.  Later
  dicts may list them in any order.  As river reads dicts -- sparsely: an
  absent key is a 0, as in its linear models -- a feature missing from a
  later dict (or column missing from a DataFrame) counts as 0, and a key
  that was not in the first dict is ignored: a PCA's feature space is fixed
  when it starts (``W`` is ``n x n``), so a new feature has no coordinate
  (it is dropped as ``compose.Select`` would drop it).  So the first dict
  should hold every feature; put ``compose.Select(...)`` in front to pin
  them explicitly.
- ``learn_many(X)`` / ``transform_many(X)`` (river's mini-batch API, on
  pandas DataFrames) give the numbers of ``learn_one`` / ``transform_one``
  on each row's dict, bit for bit (``learn_many`` runs the rows as one
  ``partial_fit``; ``transform_many`` projects each row by itself, as
  ``transform_one`` does).
- Loss records are off by default here (``record_losses=False``; the
  array learners default to True): ``learner.expected_losses_`` would
  otherwise keep one entry per event, unbounded memory on an endless
  stream.  With them off, the transformer's memory is constant after the
  first event (``state="clustered"`` grows with the number of directions
  reached, at most ``n``).
- Values must be real numbers (int, float, NumPy scalars); anything else
  (bools and masked values included), NaN or infinity is rejected with a ``ValueError``/``TypeError`` naming
  the key, and the learner is left as it was.
- ``transform_one(x)`` returns ``{"<name>0": z_0, ..., "<name>{k-1}":
  z_{k-1}}``, the coordinates of ``x`` on ``components_`` (after
  subtracting ``mean_``), named as scikit-learn's
  ``ClassNamePrefixFeaturesOutMixin`` names the outputs of a transformer:
  the lower-cased class name and the index (``onlinepca0``,
  ``onlinepca1``, ...).  The numbers are those of
  ``learner.transform(row[None])[0]``.
- Before the first ``learn_one`` there are no components (``W^0 = I/n``
  prefers no direction), so ``transform_one`` returns the same keys with
  value ``0.0`` -- river's convention is that inference works from the
  first event -- and does not look at ``x`` or fix the features.
- Randomness: ``random_state`` (None, an int or a ``numpy.random.Generator``)
  as in the array learners, where river would say ``seed``.  Only the
  drawn projections, i.e. the realized losses, depend on it; ``W``,
  ``components_`` and ``transform_one`` do not.
- The array learner is ``learner`` (built from the hyper-parameters when
  the transformer is made): ``learner.expected_losses_``,
  ``learner.eigenvalues_`` ...; ``components_`` is also the
  transformer's own (its columns are ``feature_names_in_``).  Change
  hyper-parameters with river's ``clone(new_params)``.
- One transformer must not be used by two threads at once (it converts
  each dict into one preallocated row).  Pickling and ``clone`` work; a
  pickled transformer continues bit for bit.

:class:`OnlineKernelPCA` keeps its first ``budget`` instances (1000 by
default) exactly, with the eigensystem of their kernel matrix, then
continues on a Nyström feature map of ``map_size`` dimensions (64), so its
memory is bounded on an unbounded stream; with ``budget=None`` it keeps
every instance (memory ``24 t^2`` bytes, a trial ``O(t^2)`` to ``O(t^3)``
after ``t`` events).  Hedge, CappedHedge and the variance minimisers are not
transformers (their instances are loss vectors or covariances, they have
no ``transform``).

References
----------
WK: M. K. Warmuth and D. Kuzmin, "Randomized online PCA algorithms with
regret bounds that are logarithmic in the dimension", JMLR 9 (2008).
YL: J. Yuan and A. Lamperski, "Online adaptive principal component
analysis and its extensions", ICML 2019.

Examples
--------
>>> from river import compose, preprocessing
>>> from onlinepca_fast.river import OnlinePCA
>>> from onlinepca_fast.datasets import shifting_subspaces
>>> X, _ = shifting_subspaces(n_features=4, rank=1, segment_lengths=(50,), random_state=0)
>>> stream = [{f"x{j}": float(v) for j, v in enumerate(row)} for row in X]
>>> model = compose.Select("x0", "x1", "x2", "x3") | OnlinePCA(n_components=2, random_state=0)
>>> for x in stream:
...     model.learn_one(x)
>>> sorted(model.transform_one(stream[0]))
['onlinepca0', 'onlinepca1']
>>> model["OnlinePCA"].learner.n_trials_
50

From a DataFrame, river's ``stream.iter_frame`` gives the dicts (river
0.23 and later; river 0.22, the last for Python 3.10, calls it
``stream.iter_pandas``):

>>> import pandas as pd
>>> from river import stream
>>> iter_frame = getattr(stream, "iter_frame", None) or stream.iter_pandas
>>> frame = pd.DataFrame(X, columns=["x0", "x1", "x2", "x3"])
>>> pca = OnlinePCA(n_components=2, random_state=0)
>>> for x, _ in iter_frame(frame):
...     pca.learn_one(x)
>>> pca.components_.shape
(2, 4)
"""

import inspect
import operator
import struct
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

try:
    from river import base as _river_base
except ImportError as exc:  # pragma: no cover - exercised without river installed
    raise ImportError(
        "onlinepca_fast.river needs the river package: "
        'pip install "onlinepca_fast[river]"') from exc

from . import learners as _learners
from ._river_values import SUSPECT, check_kinds, frame_rows, value_error
from ._validation import as_int

__all__ = ["OnlinePCA", "OnlineAdaptivePCA", "CenteredOnlinePCA", "FollowTheLeader",
           "OnlineKernelPCA"]


# --- the wrappers derived from the learners (issue 40, item 6) ----------------------
#
# A wrapper's __init__ takes exactly its learner's parameters, with the same
# defaults but record_losses=False (river's _get_params and clone read them
# from the signature), and its docstring's Parameters and References are
# the learner's: nothing is mirrored by hand, so nothing can drift.

#: How record_losses reads here (off by default, unlike the array learners).
_RECORD_LOSSES = (
    "record_losses : bool, default=False",
    "    Whether ``learner.expected_losses_`` and ``realized_losses_`` keep\n"
    "    one entry per trial.  Off here (on in the array learner): on an\n"
    "    endless stream they would grow without bound.")


def _signature(learner_class):
    """``__init__``'s signature: the learner's, record_losses off, no annotations."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for p in inspect.signature(learner_class).parameters.values():
        params.append(p.replace(annotation=p.empty,
                                default=False if p.name == "record_losses" else p.default))
    return inspect.Signature(params)


def _sections(doc):
    """A numpydoc docstring (dedented) as {section title: its lines}; the
    text before the first section under ""."""
    lines = doc.splitlines()
    out, title, i = {"": []}, "", 0
    while i < len(lines):
        underline = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if lines[i].strip() and underline == "-" * len(lines[i].strip()):
            title = lines[i].strip()
            out[title] = []
            i += 2
            continue
        out[title].append(lines[i])
        i += 1
    return out


def _parameter_entries(lines):
    """{name: the entry's lines (``name : type`` then the indented description)}."""
    entries, name = {}, None
    for line in lines:
        if line and not line.startswith(" "):
            name = line.split(":")[0].strip()
            entries[name] = [line]
        elif name is not None:
            entries[name].append(line)
    return {k: "\n".join(v).rstrip() for k, v in entries.items()}


def _document(cls):
    """The wrapper's docstring: its own summary and Examples around the
    learner's Parameters (record_losses as here, notes of the wrapper
    added), the Attributes of a wrapper and the learner's References."""
    learner = cls._learner_class
    own = _sections(inspect.cleandoc(cls.__doc__ or f"{learner.__name__} on dicts."))
    theirs = _sections(inspect.getdoc(learner))
    entries = _parameter_entries(theirs["Parameters"])
    entries["record_losses"] = "\n".join(_RECORD_LOSSES)
    for name, note in cls._parameter_notes.items():
        entries[name] += "\n    " + note
    name = f"onlinepca_fast.{learner.__name__}"
    attributes = [f"learner : {name}",
                  "    The array learner (``expected_losses_``, ``eigenvalues_``, ...).",
                  "feature_names_in_ : tuple or None",
                  "    The features, in the order of the first dict learned from."]
    if hasattr(learner, "components_"):
        attributes += ["components_ : ndarray of shape (n_components, n_features)",
                       "    ``learner.components_``: its columns are ``feature_names_in_``."]
    intro = "\n".join(own[""]).rstrip()
    parts = [intro + f"\n\nThe parameters are those of :class:`{name}`\n"
             "(its page has the Notes they refer to).",
             "Parameters\n----------\n" + "\n".join(entries.values()),
             "Attributes\n----------\n" + "\n".join(attributes),
             "References\n----------\n" + "\n".join(theirs["References"]).strip()]
    if "Examples" in own:
        parts.append("Examples\n--------\n" + "\n".join(own["Examples"]).strip())
    return "\n\n".join(parts) + "\n"


def _derive(cls):
    """Give the wrapper class `cls` its learner's signature and documentation."""
    signature = _signature(cls._learner_class)

    def __init__(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        del bound.arguments["self"]
        for name, value in bound.arguments.items():
            setattr(self, name, value)
        self._make_learner()

    __init__.__signature__ = signature  # type: ignore[attr-defined]
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__module__ = cls.__module__
    cls.__init__ = __init__
    cls.__doc__ = _document(cls)


class _DictTransformer(_river_base.MiniBatchTransformer):
    """Shared machinery: dict -> row, the array learner, dict output.

    Subclasses set ``_learner_class`` (and may set ``_parameter_notes``,
    text added to a parameter's description); their ``__init__`` and
    documentation are derived from it (:func:`_derive`).
    """

    _learner_class: type[Any]
    _parameter_notes: dict[str, str] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_learner_class" in cls.__dict__:  # (a subclass of a wrapper inherits)
            _derive(cls)

    # -- construction ------------------------------------------------------
    def _make_learner(self):
        self.learner = self._learner_class(**self._get_params())
        self._clear_layout()

    @property
    def components_(self):
        """The learner's ``components_``: its columns are ``feature_names_in_``."""
        return self.learner.components_

    def _clear_layout(self):
        # The layout of the rows, fixed by the first dict learned from:
        # the keys in order, a function picking their values out of a dict
        # as a tuple, and the row those values are packed into.
        self._keys = None
        self._getter = None
        self._row = None
        self._pack = None

    def _set_layout(self, keys):
        n = len(keys)
        if n == 1:  # itemgetter with one key returns the value, not a 1-tuple
            key = keys[0]
            getter = lambda x: (x[key],)  # noqa: E731
        else:
            getter = operator.itemgetter(*keys)
        self._keys = keys
        self._getter = getter
        self._row = np.zeros(n)
        # struct packs n Python numbers into the row's buffer in one C call,
        # converting each as float(v) does (PyFloat_AsDouble): about half
        # the cost of numpy's generic sequence assignment row[:] = values.
        self._pack = struct.Struct(f"={n}d").pack_into

    # pickles and deep copies hold the keys; the getter and the buffer are
    # rebuilt (a buffer shared by two copies would let one overwrite the
    # other's row)
    def __getstate__(self):
        state = self.__dict__.copy()
        for name in ("_getter", "_row", "_pack"):
            state[name] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self._keys is not None:
            self._set_layout(self._keys)

    @classmethod
    def _unit_test_params(cls):
        yield {"n_components": 2}

    def _unit_test_skips(self):
        # river's check that does not apply (tests/test_river.py tests the
        # behaviour documented instead): shuffled features -- a copy fed the
        # same dicts with the keys in another order from the first on has
        # permuted columns; its eigen-directions agree only up to sign and,
        # while eigenvalues are tied (the first trials: W^0 = I/n prefers no
        # direction), up to a rotation within the tie, which the column
        # order decides.
        return {"check_shuffle_features_no_impact"}

    # -- dict -> row ---------------------------------------------------------
    @property
    def feature_names_in_(self):
        """The features (keys of the first dict learned from), in column order;
        None before the first ``learn_one``."""
        return None if self._keys is None else tuple(self._keys)

    def _output_names(self):
        k = as_int(self.n_components, "n_components", 1, sys.maxsize)
        prefix = type(self).__name__.lower()
        return [f"{prefix}{i}" for i in range(k)]

    def _to_row(self, x):
        """x as the learner's row (the preallocated buffer), or ValueError/TypeError:
        a missing feature is 0, a feature not in the layout is ignored."""
        try:
            values = self._getter(x)
        except KeyError:  # a feature missing: 0, as in river's sparse dicts
            get = x.get
            values = [get(key, 0.0) for key in self._keys]
        except TypeError:
            if not isinstance(x, Mapping):
                raise TypeError(f"x must be a dict of feature name to number, got "
                                f"{type(x).__name__}") from None
            raise
        if not SUSPECT.isdisjoint(map(type, values)):
            check_kinds(x, self._keys)
        try:
            self._pack(self._row, 0, *values)
        except (struct.error, TypeError, OverflowError):
            raise self._value_error(x) from None
        return self._row

    def _value_error(self, x):
        return value_error(x, self._keys)

    def _frame_rows(self, X):
        return frame_rows(X, self._keys)

    def _project(self, rows):
        """``learner.transform`` of each row alone (the numbers of
        ``learner.transform(row[np.newaxis])``, whatever the batch)."""
        if rows.shape[0] == 0:
            return self.learner.transform(rows)
        return np.concatenate([self.learner.transform(rows[i:i + 1])
                               for i in range(rows.shape[0])])

    def _check_finite(self, row):
        """After the learner rejected a row: a ValueError naming the first
        non-finite value's key, if there is one (else the learner's own
        error stands)."""
        bad = np.flatnonzero(~np.isfinite(row))
        if bad.size:
            key = self._keys[int(bad[0])]
            raise ValueError(f"x[{key!r}] is {float(row[bad[0]])!r}: the values must be finite")

    def _apply(self, x, call):
        """``call(row)`` on x as the learner's row; a ValueError from it is
        named by the first non-finite value's key, if there is one."""
        row = self._to_row(x)
        try:
            return call(row)
        except ValueError:
            self._check_finite(row)
            raise

    # -- river API -----------------------------------------------------------
    def learn_one(self, x):
        """One trial of the learner on the values of x (a dict of numbers).

        The first dict fixes the features and their order.  On error
        nothing changes.

        Parameters
        ----------
        x : dict
            Feature name -> real number.

        Returns
        -------
        None
            River's convention: the transformer is updated in place.
        """
        if self._getter is None:
            return self._learn_first(x)
        # an ordinary row takes the learner's compiled learn_one path;
        # anything else is validated there, and named by _apply
        self._apply(x, self.learner.learn_one)

    def _learn_first(self, x):
        if not isinstance(x, Mapping):
            raise TypeError(f"x must be a dict of feature name to number, got "
                            f"{type(x).__name__}")
        if not x:
            raise ValueError("x has no features: the first dict fixes the features")
        self._set_layout(list(x))
        try:
            self._apply(x, self.learner.learn_one)
        except BaseException:
            self._clear_layout()  # the features are fixed only by a dict learned from
            raise

    def transform_one(self, x):
        """Coordinates of x on the learner's components, as a dict.

        Parameters
        ----------
        x : dict
            Feature name -> real number: the features of the first dict
            learned from (a missing one counts as 0, others are ignored).

        Returns
        -------
        dict
            ``{"<lower-cased class name><i>": z_i}`` for ``i < n_components``;
            zeros before the first ``learn_one``.
        """
        names = self._output_names()
        if self._getter is None:
            return dict.fromkeys(names, 0.0)
        z = self._apply(x, lambda row: self._project(row[np.newaxis])[0])
        return dict(zip(names, z.tolist()))

    # -- river's mini-batch API ----------------------------------------------
    def learn_many(self, X):
        """One trial per row of the DataFrame X, in order: the numbers of
        ``learn_one`` on each row's dict, bit for bit.

        The first DataFrame (or dict) learned from fixes the features: its
        columns, in order.  Later, a missing column is 0 and a column not
        among the features is ignored, as for ``learn_one``.  Columns hold
        real numbers (int, float, bool, or objects that ``float()`` takes);
        NaN or infinity is rejected naming the column.  On error nothing
        changes.

        Parameters
        ----------
        X : pandas.DataFrame
            One row per event.

        Returns
        -------
        None
        """
        first = self._getter is None
        if first:
            if not (hasattr(X, "columns") and hasattr(X, "index")):
                raise TypeError(f"X must be a pandas DataFrame, got {type(X).__name__}")
            if len(X) == 0:
                return  # nothing learned: the features are not fixed
            if len(X.columns) == 0:
                raise ValueError("X has no columns: the first DataFrame fixes the features")
            if not X.columns.is_unique:
                raise ValueError("X has duplicate column names")
            self._set_layout(list(X.columns))
        try:
            rows = self._frame_rows(X)
            if rows.shape[0]:
                self.learner.partial_fit(rows)
        except BaseException:
            if first:
                self._clear_layout()
            raise

    def transform_many(self, X):
        """``transform_one`` of every row of the DataFrame X, as a DataFrame
        (the same numbers bit for bit; index of X; zeros before anything is
        learned).

        Parameters
        ----------
        X : pandas.DataFrame
            One row per event; missing and unknown columns as in
            :meth:`learn_many`.

        Returns
        -------
        pandas.DataFrame
            Columns ``"<lower-cased class name><i>"``, ``i < n_components``.
        """
        import pandas as pd

        names = self._output_names()
        if not (hasattr(X, "columns") and hasattr(X, "index")):
            raise TypeError(f"X must be a pandas DataFrame, got {type(X).__name__}")
        if self._getter is None:
            return pd.DataFrame(np.zeros((len(X), len(names))), index=X.index,
                                columns=names)
        Z = self._project(self._frame_rows(X))
        return pd.DataFrame(Z, index=X.index, columns=names)


class OnlinePCA(_DictTransformer):
    """Uncentered randomized online PCA (WK Algorithm 5) on dicts.

    :class:`onlinepca_fast.OnlinePCA` as a river transformer; see the module
    docstring for the dict contract.

    Examples
    --------
    >>> from onlinepca_fast.river import OnlinePCA
    >>> pca = OnlinePCA(n_components=1, random_state=0)
    >>> pca.transform_one({"a": 1.0, "b": 0.0})      # nothing learned yet
    {'onlinepca0': 0.0}
    >>> for _ in range(20):
    ...     pca.learn_one({"a": 0.5, "b": 0.0})
    >>> round(abs(pca.transform_one({"b": 0.0, "a": 1.0})["onlinepca0"]), 6)
    1.0
    >>> pca.components_.round(6).tolist()    # columns: feature_names_in_
    [[1.0, 0.0]]
    """

    _learner_class = _learners.OnlinePCA


class OnlineAdaptivePCA(_DictTransformer):
    """Online adaptive PCA (YL Algorithm 4) on dicts.

    :class:`onlinepca_fast.OnlineAdaptivePCA` as a river transformer: online
    PCA with fixed share before capping (YL eq. 11b), for drifting streams.

    Examples
    --------
    >>> from onlinepca_fast.river import OnlineAdaptivePCA
    >>> pca = OnlineAdaptivePCA(n_components=1, random_state=0)
    >>> pca.learn_one({"a": 0.3, "b": 0.4})
    >>> list(pca.transform_one({"a": 0.3, "b": 0.4}))
    ['onlineadaptivepca0']
    """

    _learner_class = _learners.OnlineAdaptivePCA


class CenteredOnlinePCA(_DictTransformer):
    """Centered randomized online PCA (WK Algorithm 6) on dicts.

    :class:`onlinepca_fast.CenteredOnlinePCA` as a river transformer: it
    learns the center too, so no scaler is needed in front of it.

    Examples
    --------
    >>> from onlinepca_fast.river import CenteredOnlinePCA
    >>> pca = CenteredOnlinePCA(n_components=1, random_state=0)
    >>> for t in range(10):
    ...     pca.learn_one({"a": 5.0 + t, "b": 5.0 + t})
    >>> pca.learner.mean_.tolist()
    [9.5, 9.5]
    """

    _learner_class = _learners.CenteredOnlinePCA
    _parameter_notes = {"mean_init": "Here in the column order of the first dict."}


class FollowTheLeader(_DictTransformer):
    """Follow the Leader (WK Sec. 7): the top-k subspace of the covariance so far, on dicts.

    :class:`onlinepca_fast.FollowTheLeader` as a river transformer: a
    deterministic incremental PCA (uncentered, or centered by the running
    mean), kept by one rank-one eigen-update per dict.

    Examples
    --------
    >>> from onlinepca_fast.river import FollowTheLeader
    >>> ftl = FollowTheLeader(n_components=1)
    >>> for t in range(1, 6):
    ...     ftl.learn_one({"a": float(t), "b": 0.0})   # all along "a"
    >>> {k: abs(v) for k, v in ftl.transform_one({"a": 2.0, "b": 5.0}).items()}
    {'followtheleader0': 2.0}
    """

    _learner_class = _learners.FollowTheLeader


class OnlineKernelPCA(_DictTransformer):
    """Online kernel PCA (KW Algorithm 6) on dicts.

    :class:`onlinepca_fast.OnlineKernelPCA` as a river transformer.  Its
    memory is bounded by default: the learner keeps its first ``budget``
    (1000) instances exactly, then continues on a Nyström feature map of
    ``map_size`` (64) dimensions; ``budget=None`` keeps every instance,
    about ``24 t^2`` bytes after ``t`` events (2.4 GB at ``t = 10,000``),
    a trial then costing ``O(t^2)`` to ``O(t^3)``.  ``gamma="scale"`` is
    fixed from the first event (or the first ``learn_many`` frame): pass a
    number for a kernel that does not depend on it.
    ``transform_one`` gives the coordinates on the r leading feature-space
    directions (``learner.transform``); there is no ``components_`` (the
    directions are combinations of the instances seen, ``learner.X_fit_``
    and ``learner.eigenvectors_``).

    Examples
    --------
    >>> from onlinepca_fast.river import OnlineKernelPCA
    >>> kpca = OnlineKernelPCA(n_components=1, kernel="linear", random_state=0)
    >>> for t in range(1, 6):
    ...     kpca.learn_one({"a": float(t), "b": 0.0})
    >>> {k: abs(round(v, 6)) for k, v in kpca.transform_one({"a": 2.0, "b": 5.0}).items()}
    {'onlinekernelpca0': 2.0}
    """

    _learner_class = _learners.OnlineKernelPCA
