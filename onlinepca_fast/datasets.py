"""Synthetic data streams of the papers' experiments.

- :func:`shifting_subspaces`: WK Section 8 / Fig. 3 and YL Section 6.1 --
  segments of points from zero-mean Gaussians with random low-rank
  covariance, norms capped at one.
- :func:`noisy_cone`: KW Section 5 -- points near a cone in R^n, whose
  structure a degree-2 polynomial kernel captures and linear PCA does not.
"""

import numpy as np

from ._validation import as_generator, as_int

__all__ = ["shifting_subspaces", "noisy_cone"]


def shifting_subspaces(n_features=20, rank=2, segment_lengths=(500, 500, 500),
                       random_state=None, subspaces=None):
    """Stream of points switching between random low-rank Gaussians.

    Within segment ``j`` the points are drawn i.i.d. from a zero-mean
    Gaussian on ``R^n`` with a random covariance of rank ``rank``
    (``A_j A_j^T`` with ``A_j`` of shape ``(n, rank)`` and standard normal
    entries); points of norm above one are scaled to norm one (WK Sec. 8).

    Parameters
    ----------
    n_features : int, default=20
    rank : int, default=2
        Rank of each segment's covariance, ``1 <= rank <= n_features``.
    segment_lengths : sequence of int, default=(500, 500, 500)
        Length of each segment (WK Fig. 4: three segments of 500; YL Fig. 1:
        three of 200).
    random_state : None, int or numpy.random.Generator, default=None
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


def noisy_cone(n_samples=500, n_features=20, noise=0.05, random_state=None):
    """Points near the cone ``x_1^2 = x_2^2 + ... + x_n^2`` (KW Section 5).

    A point is ``(t, t u) + noise`` with ``u`` uniform on the unit sphere of
    ``R^{n-1}`` and ``t`` uniform in ``[-1, 1]``, scaled so the noiseless
    points have norm at most one.  The cone is a quadric: it spans all of
    ``R^n`` linearly, but its points satisfy one quadratic equation, so a
    degree-2 polynomial kernel compresses it where linear PCA cannot.

    Parameters
    ----------
    n_samples : int, default=500
    n_features : int, default=20
        Dimension n >= 2.
    noise : float, default=0.05
        Standard deviation of the isotropic Gaussian noise.
    random_state : None, int or numpy.random.Generator, default=None

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)

    Examples
    --------
    >>> from onlinepca_fast.datasets import noisy_cone
    >>> noisy_cone(100, 5, random_state=0).shape
    (100, 5)
    """
    m = as_int(n_samples, "n_samples", 0, 10**9)
    n = as_int(n_features, "n_features", 2, 10**7)
    noise = float(noise)
    if not (np.isfinite(noise) and noise >= 0):
        raise ValueError(f"noise must be finite and >= 0, got {noise!r}")
    rng = as_generator(random_state)
    u = rng.standard_normal((m, n - 1))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    t = rng.uniform(-1.0, 1.0, size=(m, 1))
    X = np.hstack([t, t * u]) / np.sqrt(2.0)
    return X + noise * rng.standard_normal((m, n))
