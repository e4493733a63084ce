"""The rows on which the scale-free learners are exact (issue 35, item 5).

``eta="auto"`` (OnlinePCA, OnlineAdaptivePCA, CenteredOnlinePCA) and Follow
the Leader are scale-free: ``c X`` gives ``c**2`` times the losses of ``X``
and the same ``W``.  They compute in float64, whose squares lose precision
below ``2**-1022`` and overflow near ``2**1024``, and keep sums in the
data's units (the rate's mixability gap, the master's losses, the limit
learner's values, ``C^t``).  So they accept a row if it is 0 or if

    2**-480 <= |x| <= 2**480   (about 3e-145 to 3e144).

Below, ``|x|^2`` comes within ``2**-60`` of the subnormal range, where the
products of the losses with ``eps`` and the small differences the rate and
the master take of them lose their precision (main at ``c = 1e-155``:
OnlinePCA's losses off by 2.6e-2 of the largest, CenteredOnlinePCA's by 1.4;
exact to ~``2**-490``).  Above, the sums reach ``2**1000``, where the limit
learner keeps its values, within ``2**40`` rows (main at ``c = 1e150``: off
by 0.62); on any stream of fewer than ``2**40`` rows in the range they stay
below it, and ``C^t`` below Follow the Leader's finiteness floor 2**1020.
Within the range ``c X`` gives the losses of ``X`` times ``c**2`` to
rounding (bit for bit on the tests' streams when ``c`` is a power of two,
which scales every float64 operation exactly); a row outside is refused,
with its batch, before any trial (``ValueError`` naming ``X``, the row and
the range; nothing changed).  A numeric eta is not scale-free and keeps its
own bound, ``max(1, eta) |x|^2 <= 2**1020``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["NORM_MIN", "NORM_MAX", "check_norm_range", "norm_box", "short_path_norm2_min"]

NORM_MIN = 2.0 ** -480
NORM_MAX = 2.0 ** 480


def norm_box(n):
    """A bound on max |x_i| under which |x| <= NORM_MAX (learn_one's short
    path; a margin for the rounding of its test)."""
    return NORM_MAX / np.sqrt(n) * (1 - 1e-12)


def short_path_norm2_min(scale_free):
    """The smallest |x|^2 of a row x != 0 learn_one's short path takes (its
    sum of squares, a margin for its rounding; other rows are decided by the
    validating path)."""
    return 2.0 * NORM_MIN ** 2 if scale_free else 0.0


def _norms(X):
    """Euclidean norms of the rows of X, without underflow or overflow."""
    s = np.abs(X).max(axis=1)
    safe = np.where(s > 0, s, 1.0)[:, np.newaxis]
    return s * np.sqrt(np.einsum("ij,ij->i", X / safe, X / safe))


def check_norm_range(X, amax, name, owner):
    """Refuse a batch (rows of X, ``amax = max |x_i|``) with a row ``x != 0``
    of norm outside ``[NORM_MIN, NORM_MAX]``, naming the first such row.

    One pass over X (the sums of squares; exact norms only for the rows
    they leave in doubt).
    """
    with np.errstate(under="ignore", over="ignore"):
        sq = np.einsum("ij,ij->i", X, X)  # 0 for a tiny row whose squares underflow
    doubt = np.flatnonzero(sq < 2.0 * NORM_MIN ** 2)
    if amax * np.sqrt(X.shape[1]) > NORM_MAX:
        doubt = np.union1d(doubt, np.flatnonzero(~(sq <= 0.5 * NORM_MAX ** 2)))
    if not doubt.size:
        return
    norms = _norms(X[doubt])
    bad = doubt[(norms > NORM_MAX) | ((norms > 0) & (norms < NORM_MIN))]
    if not bad.size:
        return
    i = int(bad[0])
    norm = float(_norms(X[i:i + 1])[0])
    raise ValueError(
        f"{name} row {i} has norm |x| = {norm:.3g}, outside the range on which {owner} "
        "is exact and scale-free in float64: rows must be 0 or have 2**-480 <= |x| <= "
        "2**480 (about 3e-145 to 3e144); rescale the data (nothing was changed)")
