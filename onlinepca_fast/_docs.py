"""Docstring fragments shared by several public objects, and :func:`fill_doc`.

A parameter (or a block of a section) that reads the same in several
docstrings is written once, in :data:`docdict`; a docstring names it by a
line holding only ``%(key)s``, and :func:`fill_doc`, applied where the
object is defined, puts the fragment there, indented as that line.  So
``__doc__`` is complete from import on: ``help()``, numpydoc's validation
(the docs build), Sphinx and the river wrappers (which parse the learners'
docstrings) all read the whole text.  MNE-Python's ``fill_doc`` is the
model.

A module whose fragments serve only its own docstrings (the application's)
keeps them beside them and decorates with ``doc_filler(fragments)``.

A key that is not in :data:`docdict` raises ``KeyError`` when the module
defining the docstring is imported, so a typo cannot reach a reader.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TypeVar

__all__ = ["docdict", "doc_filler", "fill_doc", "fill_text"]

_T = TypeVar("_T")

#: The shared fragments: numpydoc entries, unindented (their description
#: lines indented by four spaces, as in a docstring).
docdict: dict[str, str] = {}

# -- fit, partial_fit, learn_one -----------------------------------------------------
docdict["y"] = """\
y : None
    Ignored."""

docdict["returns_self"] = """\
self : object
    The learner."""

docdict["reference_batch"] = """\
Parameters
----------
X : array_like of shape (T, n), or (T, n, n) for the learners of matrix instances
    The instances (one trial per row).

Returns
-------
""" + docdict["returns_self"]

docdict["decomposition"] = """\
d : int
    Corner size, ``1 <= d <= n``.

Returns
-------
p : ndarray of shape (m,)
    Non-negative coefficients, ``m <= n``, summing to ``sum(w)``.
corners : ndarray of shape (m, d), dtype intp
    Row ``j`` holds the sorted indices of corner ``j``; then
    ``w = sum_j p_j * indicator(corners[j]) / d``."""

docdict["subset_draw"] = """\
w : array_like of shape (n,)
    A capped vector, as for :func:`decompose`.
d : int
    Subset size, ``1 <= d <= n``."""

# -- the learners' parameters -------------------------------------------------------
docdict["eta_adahedge"] = """\
eta : "auto", "adahedge" or float, default="auto"
    Learning rate.  ``"auto"``: AdaHedge (de Rooij et al., JMLR 2014):
    ``eta_t = D / Delta_{t-1}``, ``D = d log(n/d)``, with the exact
    mixability gap and the stabilised step ``lw <- (eta_{t+1}/eta_t)(lw
    - eta_t l)`` (uncapped: exactly AdaHedge).  Regret against every
    ``d``-subset ``R_T <= 2 Delta_T <= 2 sqrt(log(n/d) T d^2 / 4) +
    (4/3 log(n/d) + 2) d`` (``Delta_T = mixability_gap_``; with mixing
    see :class:`~onlinepca_fast.OnlinePCA`).  ``"adahedge"``: the same
    learner, bit for bit (this learner has no master).  A number: the fixed
    rate (> 0)."""

docdict["alpha_mixing"] = """\
alpha : float or "auto", default=0.0
    Mixing rate, ``0 <= alpha < 1``; ``"auto"``: ``1/(t+1)^2`` at trial t."""

docdict["sampler"] = """\
sampler : {"decomposition", "systematic"}, default="decomposition"
    How a trial's corner (the directions, or experts, left out) is drawn,
    see :func:`onlinepca_fast.kernels.sample_corner`."""

docdict["random_state"] = """\
random_state : None, int or numpy.random.Generator, default=None
    Seeds the draws."""

docdict["record_losses"] = """\
record_losses : bool, default=True
    Keep the per-trial losses (``expected_losses_``,
    ``realized_losses_``); turn off for unbounded streams (then memory
    does not grow with the number of trials)."""

docdict["reorthogonalize_every"] = """\
reorthogonalize_every : int or None, default=10000
    Every this many trials (counted since the reset, so independently
    of how the stream is split into batches) the eigenvectors are
    re-orthogonalised by one Newton-Schulz step, O(n^3) (clustered
    state: O(n m^2)).  Rounding in the rank-one updates makes
    ``||Q^T Q - I||`` grow by ~1e-18 to 1e-16 per trial; the default
    keeps it below ~1e-12.  None never re-orthogonalises."""

docdict["state_log_w"] = """\
state : {"auto", "dense", "clustered"}, default="auto"
    How ``log W`` is kept.  ``"dense"``: all n eigenpairs (n x n).
    ``"clustered"``: m explicit eigenpairs plus one cluster, their
    orthogonal complement, with one eigenvalue (``cluster_value_``):
    capped and never-seen directions, so memory and time per trial are
    O(n m), m ~ 2k in steady state.  Expected losses agree with the
    dense state to rounding, draws too while the cluster is at the cap
    (before, a corner's left-out cluster directions are drawn uniformly
    in the complement).  ``"auto"``: chosen by the number m of
    explicit directions, whichever is faster (measured,
    asv ``bench_learners.StateCrossover``): clustered while m < n / 2
    (dense at every m below 40 features),
    dense from there (n <= 10,000), clustered again once capping
    collapses m to half that; decided after each trial by the state
    alone, so a fit is the same however it is split, timed, pickled
    or interrupted.  ``share="past"`` needs the dense state."""

#: the last parameters of the randomized learners, in their signatures' order
docdict["draws_and_records"] = "\n".join(
    docdict[key] for key in ("sampler", "random_state", "record_losses"))

# -- the draws of a fitted learner ---------------------------------------------------
docdict["draw_parameters"] = """\
Parameters
----------
random_state : None, int or Generator, default=None
    None uses (and advances) the learner's own generator."""

_KEY = re.compile(r"^([ \t]*)%\((\w+)\)s[ \t]*$", re.MULTILINE)


def fill_text(doc: str, fragments: Mapping[str, str] = docdict) -> str:
    """`doc` with each line ``%(key)s`` replaced by ``fragments[key]``,
    indented as that line."""
    def fragment(match: re.Match[str]) -> str:
        indent, key = match.groups()
        return "\n".join(indent + line if line else line
                         for line in fragments[key].splitlines())
    return _KEY.sub(fragment, doc)


def _fill(obj: object, fragments: Mapping[str, str]) -> None:
    """Fill the docstring of a function (and of the functions it wraps)."""
    while obj is not None:
        doc = getattr(obj, "__doc__", None)
        if doc and "%(" in doc:
            obj.__doc__ = fill_text(doc, fragments)
        obj = getattr(obj, "__wrapped__", None)


def doc_filler(fragments: Mapping[str, str] = docdict) -> Callable[[_T], _T]:
    """A decorator like :func:`fill_doc` that knows `fragments` as well as
    :data:`docdict` (a module's own fragments win)."""
    known = {**docdict, **fragments}

    def fill(obj: _T) -> _T:
        _fill(obj, known)
        if isinstance(obj, type):
            for value in vars(obj).values():
                if isinstance(value, property):
                    _fill(value, known)
                    _fill(value.fget, known)
                elif isinstance(value, (staticmethod, classmethod)):
                    _fill(value.__func__, known)
                elif callable(value):
                    _fill(value, known)
        return obj

    return fill


def fill_doc(obj: _T) -> _T:
    """Decorator: fill the docstring of a function or a class, and for a
    class those of the methods and properties its body defines."""
    return doc_filler()(obj)
