"""Simple online PCA baselines, run as a user would run them.

Each baseline sees the rows one at a time and, before it sees a row,
predicts a rank-k projection ``P``; its online loss on that row is ``||y -
P y||^2``, with ``y = x`` (uncentered, the comparison of OnlinePCA and
OnlineAdaptivePCA) or ``y = x - m`` with ``m`` the running mean of the rows
before it (centered, the comparison of CenteredOnlinePCA; ``m`` starts at the
first row, as CenteredOnlinePCA's default, so that ``y_1 = 0``).  Each
baseline learns from the same ``y`` it is charged on (the centered ones
estimate the scatter around the running mean).

- ``ftl``: Follow the Leader on the running covariance (the package's exact
  :class:`onlinepca_fast.FollowTheLeader`): the top-k eigenvectors of ``sum
  y y^T`` (centered: the scatter around the running mean).
- ``ccipca``: candid covariance-free incremental PCA (Weng, Zhang & Hwang,
  IEEE TPAMI 25(8), 2003), amnesic parameter 2, on ``y``; ``P`` from its k
  vectors (orthonormalised).
- ``oja``: Oja's subspace rule with step ``1/t``: ``V <- orth(V + y (y^T
  V) / t)``, started from a seeded random orthonormal ``V``.
- ``fd``: Frequent Directions (Liberty, KDD 2013; Ghashami et al., SIAM J.
  Comput. 2016) with a sketch of ``2k`` rows; ``P`` onto the top-k right
  singular vectors of the sketch.
- ``ipca``: scikit-learn's ``IncrementalPCA`` fed batches of 100 rows;
  ``P`` onto its ``components_`` (none before the first batch: ``P = 0``).
  scikit-learn's estimator always centers by its mean; for the uncentered
  comparison it is fed each batch as ``(y, -y)`` (mean 0, so its scatter is
  ``sum y y^T``).

``online_losses(X, k, centered)`` returns every baseline's per-row losses.
"""

from __future__ import annotations

import numpy as np

import onlinepca_fast as opf

__all__ = ["BASELINES", "centered_rows", "online_losses", "ftl", "ccipca", "oja",
           "frequent_directions", "incremental_pca"]


def centered_rows(X, centered):
    """``y_t``: ``x_t``, or ``x_t`` minus the mean of the rows before it
    (the first row's own value for ``t = 1``: ``y_1 = 0``)."""
    X = np.asarray(X, dtype=float)
    if not centered:
        return X
    csum = np.cumsum(X, axis=0)
    prev = np.vstack([X[:1], csum[:-1] / np.arange(1, X.shape[0])[:, None]])
    return X - prev


def _loss(y, V):
    """||y - V V^T y||^2 for orthonormal columns V (n x k)."""
    z = V.T @ y
    return max(0.0, float(y @ y - z @ z))


def ftl(X, k, centered=False):
    """Follow the Leader (exact, the package's FollowTheLeader)."""
    X = np.asarray(X, dtype=float)
    losses = opf.FollowTheLeader(k, centered=centered).fit(X).expected_losses_.copy()
    if centered:
        losses[0] = 0.0  # y_1 = 0 (the package's FollowTheLeader starts m at 0)
    return losses


def ccipca(X, k, centered=False, amnesic=2.0):
    """CCIPCA (Weng et al. 2003): v_i estimates lambda_i e_i."""
    Y = centered_rows(X, centered)
    T, n = Y.shape
    v = np.zeros((k, n))
    out = np.empty(T)
    for t, y in enumerate(Y, start=1):
        norms = np.linalg.norm(v, axis=1)
        live = norms > 0
        if live.any():
            V = np.linalg.qr(v[live].T)[0]
            out[t - 1] = _loss(y, V)
        else:
            out[t - 1] = float(y @ y)
        u = y.copy()
        for i in range(min(k, t)):
            if i == t - 1 or norms[i] == 0.0:
                v[i] = u
            else:
                lw = (t - 1 - amnesic) / t if t > 1 + amnesic else 0.0
                v[i] = lw * v[i] + (1 - lw) * u * (u @ v[i]) / norms[i]
            ni = np.linalg.norm(v[i])
            if ni > 0:
                e = v[i] / ni
                u = u - (u @ e) * e
            norms[i] = ni
    return out


def oja(X, k, centered=False, seed=0):
    """Oja's subspace rule, step 1/t."""
    Y = centered_rows(X, centered)
    T, n = Y.shape
    V = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, k)))[0]
    out = np.empty(T)
    for t, y in enumerate(Y, start=1):
        out[t - 1] = _loss(y, V)
        V = np.linalg.qr(V + np.outer(y, y @ V) / t)[0]
    return out


def frequent_directions(X, k, centered=False, ell=None):
    """Frequent Directions with a sketch of ell = 2k rows."""
    Y = centered_rows(X, centered)
    T, n = Y.shape
    ell = min(n, 2 * k if ell is None else ell)
    B = np.zeros((ell, n))
    filled = 0
    out = np.empty(T)
    V = np.zeros((n, 0))
    for t, y in enumerate(Y):
        out[t] = _loss(y, V)
        if filled == ell:  # shrink by the smallest squared singular value
            _, s, Vt = np.linalg.svd(B, full_matrices=False)
            s2 = np.maximum(s * s - s[-1] ** 2, 0.0)
            B = np.sqrt(s2)[:, None] * Vt
            filled = min(int(np.count_nonzero(s2)), ell - 1)  # the last is 0
            B[filled:] = 0.0
        B[filled] = y
        filled += 1
        _, s, Vt = np.linalg.svd(B[:filled], full_matrices=False)
        r = min(k, int(np.count_nonzero(s > 0)))
        V = Vt[:r].T
    return out


def incremental_pca(X, k, centered=False, batch=100):
    """scikit-learn's IncrementalPCA, fed batches of `batch` rows."""
    from sklearn.decomposition import IncrementalPCA

    Y = centered_rows(X, centered)
    X = np.asarray(X, dtype=float)
    T, n = Y.shape
    ipca = IncrementalPCA(n_components=k)
    out = np.empty(T)
    V = np.zeros((n, 0))
    for s in range(0, T, batch):
        for t in range(s, min(T, s + batch)):
            out[t] = _loss(Y[t], V)
        rows = X[s:s + batch] if centered else np.vstack([Y[s:s + batch], -Y[s:s + batch]])
        if rows.shape[0] >= k:
            ipca.partial_fit(rows)
            V = ipca.components_.T
    return out


BASELINES = {
    "ftl": ftl,
    "ccipca": ccipca,
    "oja": oja,
    "fd": frequent_directions,
    "ipca": incremental_pca,
}


def online_losses(X, k, centered=False, names=None):
    """{name: per-row online losses} of the baselines (all by default)."""
    return {name: BASELINES[name](X, k, centered) for name in (names or BASELINES)}
