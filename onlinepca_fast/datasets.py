"""Synthetic data streams of the papers' experiments.

- :func:`shifting_subspaces`: WK Section 8 / Fig. 3 and YL Section 6.1 --
  segments of points from zero-mean Gaussians with random low-rank
  covariance, norms capped at one.
- :func:`noisy_cone`: KW Section 5 -- points near a cone (a quadric: one
  linear equation for the degree-2 features), either spanning R^n or, as
  in KW, a 3-d cone padded with zeros (``embedding="padded"``).
- :func:`digits_stream`: real data, scikit-learn's handwritten digits
  streamed class by class (needs scikit-learn, which ships the images).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from ._typing import FloatArray, IndexArray, SeedLike
from ._validation import as_generator, as_int

__all__ = ["shifting_subspaces", "noisy_cone", "digits_stream"]


def shifting_subspaces(
        n_features: int = 20, rank: int = 2, segment_lengths: Sequence[int] = (500, 500, 500),
        random_state: SeedLike = None, subspaces: Sequence[int] | None = None,
) -> tuple[FloatArray, IndexArray]:
    """Stream of points switching between random low-rank Gaussians.

    Within segment ``j`` the points are drawn i.i.d. from a zero-mean
    Gaussian on ``R^n`` with a random covariance of rank ``rank``
    (``A_j A_j^T`` with ``A_j`` of shape ``(n, rank)`` and standard normal
    entries); points of norm above one are scaled to norm one (WK Sec. 8).

    Parameters
    ----------
    n_features : int, default=20
        Dimension n.
    rank : int, default=2
        Rank of each segment's covariance, ``1 <= rank <= n_features``.
    segment_lengths : sequence of int, default=(500, 500, 500)
        Length of each segment (WK Fig. 4: three segments of 500; YL Fig. 1:
        three of 200).
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the subspaces and the points.
    subspaces : sequence of int or None, default=None
        Which covariance each segment uses, e.g. ``(0, 1, 0, 2, 1)`` to
        revisit earlier subspaces (long-term memory, WK Fig. 6); by default
        a new covariance per segment.

    Returns
    -------
    X : ndarray of shape (sum(segment_lengths), n_features)
    labels : ndarray of shape (sum(segment_lengths),), dtype int
        The covariance index of each point.

    Examples
    --------
    >>> from onlinepca_fast.datasets import shifting_subspaces
    >>> X, labels = shifting_subspaces(random_state=0)
    >>> X.shape, labels[[0, 500, 1000]].tolist()
    ((1500, 20), [0, 1, 2])
    >>> bool((np.linalg.norm(X, axis=1) <= 1 + 1e-12).all())
    True
    """
    n = as_int(n_features, "n_features", 1, 10**7)
    r = as_int(rank, "rank", 1, n)
    lengths = [as_int(m, "segment_lengths", 0, 10**9) for m in segment_lengths]
    if not lengths:
        raise ValueError("segment_lengths must not be empty")
    if subspaces is None:
        subspaces = list(range(len(lengths)))
    subspaces = [as_int(s, "subspaces", 0, 10**6) for s in subspaces]
    if len(subspaces) != len(lengths):
        raise ValueError(f"subspaces must have one entry per segment ({len(lengths)}), "
                         f"got {len(subspaces)}")
    rng = as_generator(random_state)
    factors = [rng.standard_normal((n, r)) for _ in range(max(subspaces) + 1)]
    parts, labels = [], []
    for m, s in zip(lengths, subspaces):
        parts.append(rng.standard_normal((m, r)) @ factors[s].T)
        labels.append(np.full(m, s))
    X = np.concatenate(parts) if parts else np.empty((0, n))
    norms = np.linalg.norm(X, axis=1)
    big = norms > 1.0
    X[big] /= norms[big, np.newaxis]
    return X, np.concatenate(labels)


def noisy_cone(
        n_samples: int = 500, n_features: int = 20, noise: float = 0.05,
        random_state: SeedLike = None, *, embedding: Literal["full", "padded"] = "full",
) -> FloatArray:
    """Points near a cone, the data of KW Section 5.

    Two constructions:

    - ``embedding="full"`` (default; the behaviour of earlier versions): the
      cone ``x_1^2 = x_2^2 + ... + x_n^2`` spanning all of ``R^n``.  A point
      is ``(t, t u) / sqrt(2)`` with ``u`` uniform on the unit sphere of
      ``R^{n-1}`` and ``t`` uniform in ``[-1, 1]``, so the noiseless points
      have norm at most one.
    - ``embedding="padded"``: KW's construction.  The cone
      ``x^2 + y^2 - z^2 = 0`` in the first three coordinates, padded with
      zeros to ``R^n``: ``(z cos(theta), z sin(theta), z, 0, ..., 0)`` with
      ``z`` uniform in ``[-0.6, 0.6]`` (KW: "the value of z was constrained
      to the range [-0.6 : 0.6]") and ``theta`` uniform in ``[0, 2 pi)``.
      The noiseless points have ``|x|^2 = 2 z^2 <= 0.72``, so the degree-2
      kernel ``(x . y)^2`` has ``k(x, x) = |x|^4 <= 0.52``: feature norms
      bounded by one, as KW's bound assumes.  (KW say "a point was picked at
      random on a cone" without the distribution; uniform ``z`` and
      ``theta`` is the reading of their text used here, not uniform
      surface area.)

    Then isotropic Gaussian noise of standard deviation `noise` is added to
    every coordinate.  A cone is a quadric: its points satisfy one quadratic
    equation, which is a linear equation for the degree-2 features
    ``x x^T``.

    Parameters
    ----------
    n_samples : int, default=500
        Number of points.
    n_features : int, default=20
        Dimension n (>= 2; >= 3 for ``embedding="padded"``).  KW use 20.
    noise : float, default=0.05
        Standard deviation of the Gaussian noise (KW do not state theirs).
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the points and the noise.
    embedding : {"full", "padded"}, default="full"

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast.datasets import noisy_cone
    >>> noisy_cone(100, 5, random_state=0).shape
    (100, 5)
    >>> X = noisy_cone(100, embedding="padded", noise=0.0, random_state=0)
    >>> bool(np.allclose(X[:, 0]**2 + X[:, 1]**2, X[:, 2]**2)), bool((X[:, 3:] == 0).all())
    (True, True)
    """
    if embedding not in ("full", "padded"):
        raise ValueError(f"embedding must be 'full' or 'padded', got {embedding!r}")
    m = as_int(n_samples, "n_samples", 0, 10**9)
    n = as_int(n_features, "n_features", 2 if embedding == "full" else 3, 10**7)
    noise = float(noise)
    if not (np.isfinite(noise) and noise >= 0):
        raise ValueError(f"noise must be finite and >= 0, got {noise!r}")
    rng = as_generator(random_state)
    if embedding == "padded":
        z = rng.uniform(-0.6, 0.6, size=m)
        theta = rng.uniform(0.0, 2.0 * np.pi, size=m)
        X = np.zeros((m, n))
        X[:, 0] = z * np.cos(theta)
        X[:, 1] = z * np.sin(theta)
        X[:, 2] = z
    else:
        u = rng.standard_normal((m, n - 1))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        t = rng.uniform(-1.0, 1.0, size=(m, 1))
        X = np.hstack([t, t * u]) / np.sqrt(2.0)
    return X + noise * rng.standard_normal((m, n))


def digits_stream(
        segment_length: int | None = None, random_state: SeedLike = 0,
) -> tuple[FloatArray, IndexArray]:
    """Handwritten digits of scikit-learn, class by class: a shifting stream of real data.

    The 1797 8x8 images of ``sklearn.datasets.load_digits`` (bundled with
    scikit-learn, no download), 64 features, presented class by class, 0 to
    9, each class shuffled by `random_state`, and scaled by one common factor
    so that the largest norm is one: ten segments, the role the face images
    play in WK Fig. 6 and YL Fig. 2.  This is the stream of
    :func:`onlinepca_fast.app.experiments.digits`.

    Parameters
    ----------
    segment_length : int or None, default=None
        Use at most this many images per class (all by default).
    random_state : None, int or numpy.random.Generator, default=0
        Shuffles each class.

    Returns
    -------
    X : ndarray of shape (n_images, 64)
    labels : ndarray of shape (n_images,), dtype int
        The digit of each image (non-decreasing).

    Raises
    ------
    ImportError
        If scikit-learn is not installed.

    Examples
    --------
    >>> from onlinepca_fast.datasets import digits_stream
    >>> X, labels = digits_stream(segment_length=30)
    >>> X.shape, labels[[0, 30, 299]].tolist()
    ((300, 64), [0, 1, 9])
    """
    try:
        from sklearn.datasets import load_digits
    except ImportError as exc:
        raise ImportError(
            "the digits stream needs scikit-learn, which ships the images (no "
            "download): pip install scikit-learn, or pip install \"onlinepca_fast[test]\""
        ) from exc
    m = None if segment_length is None else as_int(segment_length, "segment_length", 1, 10**7)
    rng = as_generator(random_state)
    data = load_digits()
    X_all = np.asarray(data.data, dtype=np.float64)
    y_all = np.asarray(data.target)
    order = np.concatenate([rng.permutation(np.flatnonzero(y_all == c))[:m]
                            for c in np.unique(y_all)])
    X = X_all[order]
    return X / np.linalg.norm(X, axis=1).max(), y_all[order]
