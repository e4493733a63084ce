"""NumPy oracle of ``eta="auto"`` (the AdaHedge rate of ``src/adaptive_rate.c``).

Written from the formulas of ``docs/adaptive_rates.rst``, with the matrices
formed explicitly and ``numpy.linalg.eigh`` every trial, independently of
the compiled rank-one updates.  Each function runs a whole stream and
returns ``(expected_losses, Delta, eta)``: the expected loss of every trial
(the draws do not change the updates), the cumulative mixability gap and
the rate of the next trial.

Rate: ``eta_t = D / Delta_{t-1}`` (``inf`` while ``Delta = 0``), ``D = d
log(n/d)`` (``d = n - k``; ``log n`` for Hedge and the simplex learner),
``Delta_t = sum_s delta_s``:

* mirror-descent matrix learners (OnlinePCA, OnlineAdaptivePCA,
  VarianceMinimizer with vectors): the exact gap ``h + (d/eta) log tr
  exp(log W - eta x x^T)``; the update ``log W <- gamma (log W - eta_t x
  x^T)``, ``gamma = eta_{t+1} / eta_t``, then mixing and capping as the
  fixed-rate learner;
* matrix instances C (VarianceMinimizer) and WK Alg. 6 (CenteredOnlinePCA,
  A kept at the rate in use, ``A <- gamma (A - eta_t f y y^T)``): the
  two-point bound ``h + (d/eta) log(1 - p + p exp(-eta s))``, ``p = h /
  (d s)``, ``s = tr C``;
* experts and the simplex learner (linearised loss ``C y``): the exact gap
  ``d (w.l + log(sum w exp(-eta l)) / eta)``, ``lw <- gamma (lw - eta_t l)``.

``alpha="auto"``: ``alpha_t = 1/(t+1)**2`` at trial ``t``.

OnlinePCA and OnlineAdaptivePCA (``auto_pca``): a master AdaHedge (``D =
log 2``) over the learner above (with ``D = d log(n / (d alpha))`` when it
mixes at a constant alpha) and the limit eta -> infinity of the capped
update (``limit_meg``: ``M`` formed, eigh every trial); a gap or a lead
within 1e-12 of the losses counts as none.

While the rate is infinite the gap is that of Follow the Leader (``h -
d min l``; two-point: ``h``) and the first step is taken with the new rate.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from ._kernels import cap_log

__all__ = ["two_point_gap", "Master", "MasterK", "auto_meg", "auto_pca", "limit_meg",
           "leader_variance", "auto_variance",
           "auto_cumulative", "auto_experts", "auto_simplex", "master_losses", "sketch_leader",
           "auto_centered", "centered_instances", "leader_ell", "leader_capacity", "LEADER_LAG"]


def _sym_eigh(M):
    return np.linalg.eigh((M + M.T) / 2)


def _mix(lam, alpha):
    lam = lam - logsumexp(lam)
    return np.logaddexp(np.log(alpha / lam.size), np.log1p(-alpha) + lam)


def two_point_gap(h, s, d, eta):
    """Upper bound on the mixability gap of an instance with 0 <= S <= s I."""
    if not (s > 0 and h > 0):
        return 0.0
    p = min(1.0, h / (d * s))
    if np.isinf(eta):
        return h if p < 1 else 0.0
    inner = -eta * s if p == 1 else np.logaddexp(np.log1p(-p), np.log(p) - eta * s)
    return max(0.0, h + d * inner / eta)


def _alpha(alpha, t):
    """alpha="auto": alpha_t = 1/(t+1)**2 at trial t >= 1."""
    return 1.0 / (t + 1) ** 2 if alpha == "auto" else alpha


def _next(Delta, delta, D):
    Delta = Delta + delta
    return Delta, (D / Delta if Delta > 0 else np.inf)


def auto_meg(X, k, share=None, alpha=0.0, adaptive=False):
    """The AdaHedge learner of OnlinePCA / OnlineAdaptivePCA (share="fixed")
    / VarianceMinimizer (k = n - 1; rows, or n x n matrices) with
    eta="auto".  `adaptive`: D = d log(n / (d alpha)) when mixing at a
    constant alpha > 0 (the master's rate learner)."""
    X = np.asarray(X, dtype=float)
    n = X.shape[1]
    d = n - k
    mixing = share in ("fixed", "uniform") and alpha != "auto" and alpha > 0
    D = d * np.log(n / (d * alpha) if adaptive and mixing else n / d)
    L = np.eye(n) * -np.log(n)  # log W
    Delta, eta, out = 0.0, np.inf, []
    for t, x in enumerate(X, start=1):
        a = _alpha(alpha, t)
        S = np.outer(x, x) if x.ndim == 1 else x
        lam, Q = _sym_eigh(L)
        W = (Q * np.exp(lam)) @ Q.T
        h = d * np.sum(W * S)
        out.append(h)
        s = np.trace(S)
        matrix = x.ndim == 2
        if np.isfinite(eta):
            M = L - eta * S
            delta = (two_point_gap(h, s, d, eta) if matrix else
                     max(0.0, h + d * logsumexp(np.linalg.eigvalsh(M)) / eta))
            Delta, nxt = _next(Delta, delta, D)
            M = (nxt / eta) * M
        else:
            delta = two_point_gap(h, s, d, eta)
            Delta, nxt = _next(Delta, delta, D)
            M = L - nxt * S if np.isfinite(nxt) else L
        eta = nxt
        lam, Q = _sym_eigh(M)
        if share == "fixed" and a > 0:
            lam = _mix(lam, a)
        lam = cap_log(lam, d)
        if share == "uniform" and a > 0:
            lam = _mix(lam, a)
        L = (Q * lam) @ Q.T
    return np.array(out), Delta, eta


def _cap_inf(v, d):
    """cap at zero temperature of ascending eigenvalues v: (the d-th
    largest b, the weights: 1/d strictly above b, the rest shared equally by
    the entries tied with b, 0 below)."""
    b = v[v.size - d]
    tol = 1e-12 * max(np.abs(v).max(), 1e-300)
    above, tie = v > b + tol, np.abs(v - b) <= tol
    w = np.where(above, 1.0 / d, 0.0)
    w[tie] = (d - above.sum()) / (d * tie.sum())
    return b, w


def _stream(X, k, weights):
    """X as floats, n, d = n - k, and the rows' weights (1 if None)."""
    X = np.asarray(X, dtype=float)
    n = X.shape[1]
    return X, n, n - k, (np.ones(X.shape[0]) if weights is None else weights)


def limit_meg(X, k, state=False, weights=None):
    """The limit eta -> infinity of OnlinePCA's capped update, in loss units:
    ``W = cap_inf(M)`` of the state before flattening puts 1/d on the
    eigenvalues of M strictly above its d-th largest and shares what is
    left equally among those tied with it; ``M <- flat_d(M) - x x^T`` (the d
    largest set to the d-th).  (The fixed-rate learners' O(1/eta) offsets,
    which can make a tie group share unequally after it was capped, are not
    kept: docs/adaptive_rates.md, *Ties*.)  Returns the expected losses ``d
    tr(W x x^T)`` (and, with `state`, the final M).  `weights`: the update
    is ``flat_d(M) - w_t x x^T`` (CenteredOnlinePCA: eq. (16)'s factor)."""
    X, n, d, ws = _stream(X, k, weights)
    M, out = np.zeros((n, n)), []
    for x, wt in zip(X, ws):
        v, Q = _sym_eigh(M)
        b, w = _cap_inf(v, d)
        z = Q.T @ x
        out.append(d * w @ (z * z))
        M = (Q * np.minimum(v, b)) @ Q.T - wt * np.outer(x, x)
    return (np.array(out), M) if state else np.array(out)


def leader_ell(n, k):
    """The size of F's sketch: min(n, max(4k, 24)) (``opf_leader_ell``)."""
    return min(n, max(4 * k, 24))


#: F's refresh: its buffer holds min(ell, ceil(t_0 / LEADER_LAG)) rows (at
#: least 1) before its sketch absorbs them (``OPF_LEADER_LAG``).
LEADER_LAG = 4


def leader_capacity(absorbed, ell):
    """The rows F's buffer holds before a refresh, after `absorbed` rows."""
    return int(min(ell, max(1, -(-absorbed // LEADER_LAG))))


def sketch_leader(X, k, ell, weights=None, state=False, lagged=True):
    """Follow the Leader on a Frequent Directions sketch of `ell` >= k
    directions (Liberty 2013; Ghashami, Liberty, Phillips & Woodruff 2016),
    refreshed in batches: the sketch S starts at 0; a trial predicts with
    cap_inf(-S) (the k largest eigenvalues of S, a tie at the k-th sharing
    as in ``limit_meg``), then ``w_t x x^T`` joins a buffer P; when the
    buffer holds ``leader_capacity(t_0, ell)`` rows (t_0 the rows S
    absorbed: ceil(t_0 / 4), at least 1, at most ell), S <- S + P with every
    eigenvalue dropped by the (ell+1)-th largest (values within 1e-12 of the
    energy absorbed, trace P, plus 64 eps of the largest, of that level are
    dropped), and P <- 0.  FD's bound holds for S
    and for S + P at every trial, 0 <= C^t - S_t <= (||C^t - [C^t]_k||_F^2 /
    (ell - k)) I (C^t = sum w x x^T); F follows the leader of S, which
    misses at most min(ell, t/5) rows.  ``lagged=False``: a refresh every
    trial (``ell = k`` is then ``limit_meg``, ``ell >= n`` exact Follow the
    Leader).  eigh every refresh; returns the expected losses (and, with
    `state`, S and P)."""
    X, n, d, ws = _stream(X, k, weights)
    S, P = np.zeros((n, n)), np.zeros((n, n))
    nbuf = absorbed = 0
    out = []
    v, Q = _sym_eigh(-S)  # ascending in -S: the largest of S first
    w = _cap_inf(v, d)[1]
    for x, wt in zip(X, ws):
        z = Q.T @ x
        out.append(d * w @ (z * z))
        if wt == 0.0:
            continue
        P += wt * np.outer(x, x)
        nbuf += 1
        if lagged and nbuf < leader_capacity(absorbed, ell):
            continue
        lam, U = _sym_eigh(S + P)  # ascending in S
        shrink = max(lam[n - ell - 1], 0.0) if ell < n else 0.0
        sigma = lam - shrink
        energy = float(np.trace(P))  # the rows absorbed (w |x|^2 each)
        keep = sigma > 1e-12 * energy + 64 * np.finfo(float).eps * lam[-1]
        S = (U[:, keep] * sigma[keep]) @ U[:, keep].T
        P = np.zeros((n, n))
        absorbed, nbuf = min(absorbed + nbuf, LEADER_LAG * ell), 0
        v, Q = _sym_eigh(-S)
        w = _cap_inf(v, d)[1]
    return (np.array(out), S, P) if state else np.array(out)


class Master:
    """AdaHedge (D = log 2) over two learners A and B on their expected
    losses: ``weight`` of A for the next trial, ``step(h_a, h_b)`` returns
    the expected loss.  The weights are kept as the logit ``eta (L_B -
    L_A)`` (so that a weight rounding to 1 keeps its complement); a
    difference within 1e-12 of the losses is none."""

    def __init__(self):
        self.ca = self.cb = self.gap = self.scale = 0.0
        self.weight = 0.5

    def _logit(self):
        lead = self.cb - self.ca
        if abs(lead) <= 1e-12 * self.scale:
            return 0.0
        if self.gap > 0:
            with np.errstate(over="ignore"):
                return np.log(2.0) * (lead / self.gap)
        return np.inf if lead > 0 else -np.inf

    def step(self, a, b):
        z = self._logit()
        lp, lq = -np.logaddexp(0.0, -z), -np.logaddexp(0.0, z)
        h = np.exp(lp) * a + np.exp(lq) * b
        with np.errstate(over="ignore", divide="ignore"):
            e = np.log(2.0) / self.gap if self.gap > 0 else np.inf
        if np.isfinite(e):
            mix = a - np.logaddexp(lp, lq - e * (b - a)) / e
        else:
            mix = min(self.ca + a, self.cb + b) - min(self.ca, self.cb)
        tie = not abs(b - a) > 1e-12 * max(a, b)
        self.gap += 0.0 if tie else max(0.0, h - mix)
        self.ca, self.cb = self.ca + a, self.cb + (a if tie else b)
        self.scale += max(a, b)
        self.weight = float(np.exp(-np.logaddexp(0.0, -self._logit())))
        return h


class MasterK:
    """AdaHedge (D = log K) over K learners on their expected losses (the
    master over the rate learner, its limit and Follow the Leader on a
    sketch): ``weights`` for the next trial, ``step(h)`` returns the
    expected loss ``p . h``.  Weights ``p_i ∝ exp(-eta (L_i - min L))``,
    ``eta = log K / Delta``, kept as logarithms (a weight that underflows
    still counts in the mix loss of a trial where its learner is far
    ahead); while Delta = 0 the leaders share.  The gap of a trial is ``p .
    h - mix``, ``mix = -(1/eta) log sum p_i exp(-eta h_i)`` (at eta = inf
    the leader's increase).  A loss within 1e-12 of the trial's largest of
    the smallest counts as equal to it (the learners start equal), a lead
    within 1e-12 of the sum of the trials' largest losses as none."""

    def __init__(self, K):
        self.L = np.zeros(K)
        self.gap = self.scale = 0.0
        self.logw = np.full(K, -np.log(K))

    @property
    def weights(self):
        return np.exp(self.logw)

    def _logw(self):
        lead = self.L - self.L.min()
        lead[lead <= 1e-12 * self.scale] = 0.0
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            if self.gap > 0:
                z = np.where(lead == 0.0, 0.0, -np.log(self.L.size) * (lead / self.gap))
            else:
                z = np.where(lead == 0.0, 0.0, -np.inf)
        return z - logsumexp(z)

    def step(self, h):
        h = np.asarray(h, dtype=float)
        h = np.where(np.abs(h - h.min()) <= 1e-12 * h.max(), h.min(), h)
        loss = float(self.weights @ h)
        with np.errstate(divide="ignore", over="ignore"):
            eta = np.log(self.L.size) / self.gap if self.gap > 0 else np.inf
        if np.isfinite(eta):
            mix = h.min() - logsumexp(self.logw - eta * (h - h.min())) / eta
        else:
            mix = (self.L + h).min() - self.L.min()
        self.gap += max(0.0, loss - mix)
        self.L = self.L + h
        self.scale += h.max()
        self.logw = self._logw()
        return loss


def master_losses(*losses):
    """The expected losses of MasterK over the learners' per-trial expected
    losses (arrays of one length), and its final weights."""
    H = np.column_stack(losses)
    m = MasterK(H.shape[1])
    return np.array([m.step(h) for h in H]), m.weights



def leader_variance(X):
    """Follow the Leader of VarianceMinimizer (the eta -> infinity limit of
    its update without mixing): at trial t the eigenvectors of the smallest
    eigenvalue of ``C^{t-1}`` (the sum of the past instances, ``x x^T`` or
    matrices), those within 1e-9 of the spread of the eigenvalues of it
    (or 1e-12 of tr C, the rounding of C and its eigh: a multiple of I
    ties whole) sharing equally; returns the expected
    losses, the mean of ``q^T C_t q`` over the group (eigh every trial)."""
    X = np.asarray(X, dtype=float)
    n = X.shape[1]
    C, out = np.zeros((n, n)), []
    for x in X:
        S = np.outer(x, x) if x.ndim == 1 else x
        lam, Q = _sym_eigh(C)
        group = lam <= lam[0] + max(1e-9 * (lam[-1] - lam[0]), 1e-12 * np.trace(C))
        energies = np.einsum("ij,ik,kj->j", Q, S, Q)  # q_j^T S q_j
        out.append(float(energies[group].mean()))
        C = C + S
    return np.array(out)


def auto_variance(X):
    """VarianceMinimizer with eta="auto" and no mixing: the master
    (``Master``, AdaHedge with D = log 2) over the AdaHedge learner
    (``auto_meg`` with k = n - 1) and its Follow the Leader
    (``leader_variance``).  Returns the expected losses, the learner's
    Delta and rate, and the master."""
    X = np.asarray(X, dtype=float)
    ha, Delta, eta = auto_meg(X, X.shape[1] - 1)
    master = Master()
    out = [master.step(a, b) for a, b in zip(ha, leader_variance(X))]
    return np.array(out), Delta, eta, master


def auto_pca(X, k, share=None, alpha=0.0):
    """OnlinePCA / OnlineAdaptivePCA with eta="auto": the master (MasterK, K =
    3) over ``auto_meg(adaptive=True)`` (A), ``limit_meg`` (B) and
    ``sketch_leader`` with ``ell = leader_ell(n, k)`` (F).  Returns
    ``(expected_losses, Delta_A, eta_A, weight of B after the stream)``
    (``master_weights`` gives all three)."""
    X = np.asarray(X, dtype=float)
    ha, Delta, eta = auto_meg(X, k, share, alpha, adaptive=True)
    hb = limit_meg(X, k)
    hf = sketch_leader(X, k, leader_ell(X.shape[1], k))
    out, weights = master_losses(ha, hb, hf)
    auto_pca.master_weights = weights
    return out, Delta, eta, float(weights[1])


def auto_cumulative(X, k, centered=True, center_lr_inv=0.0, mean_init=None):
    """CenteredOnlinePCA (WK Alg. 6, and centered=False) with eta="auto";
    centered with mean_init None starts the center at the first row."""
    X = np.asarray(X, dtype=float)
    n = X.shape[1]
    d = n - k
    D = d * np.log(n / d)
    A = np.eye(n) * -np.log(n)  # eta_t (log W0 - C^t) + const
    m = np.zeros(n) if mean_init is None else np.array(mean_init, dtype=float)
    c = center_lr_inv
    Delta, eta, out = 0.0, np.inf, []
    for t, x in enumerate(X, start=1):
        if t == 1 and centered and mean_init is None:
            m = x.copy()  # y_1 = 0: no loss, no gap
        y = x - m
        lam, Q = _sym_eigh(A)
        W = (Q * np.exp(cap_log(lam, d))) @ Q.T
        h = d * y @ W @ y
        out.append(h)
        delta = two_point_gap(h, y @ y, d, eta)
        f = (c + t - 1) / (c + t) if centered else 1.0
        Delta, nxt = _next(Delta, delta, D)
        if np.isfinite(eta):
            A = (nxt / eta) * (A - eta * f * np.outer(y, y))
        elif np.isfinite(nxt):
            A = A - nxt * f * np.outer(y, y)
        eta = nxt
        if centered:
            m = m - (m - x) / (c + t)
    return np.array(out), Delta, eta


def centered_instances(X, centered=True, center_lr_inv=0.0, mean_init=None):
    """CenteredOnlinePCA's instances y_t = x_t - m^{t-1} and eq. (16)'s
    factors f_t (1 uncentered); centered without mean_init, m^0 = x_1 (y_1
    = 0, f_1 = 0)."""
    X = np.asarray(X, dtype=float)
    T, n = X.shape
    m = np.zeros(n) if mean_init is None else np.array(mean_init, dtype=float)
    Y, f = np.empty_like(X), np.ones(T)
    c = center_lr_inv
    for t, x in enumerate(X, start=1):
        if t == 1 and centered and mean_init is None:
            m = x.copy()
        Y[t - 1] = x - m
        if centered:
            f[t - 1] = 0.0 if t == 1 and mean_init is None else (c + t - 1) / (c + t)
            m = m - (m - x) / (c + t)
    return Y, f


def auto_centered(X, k, centered=True, center_lr_inv=0.0, mean_init=None):
    """CenteredOnlinePCA with eta="auto": the master (MasterK, K = 3) over
    ``auto_cumulative`` (A) and, on its instances y_t with eq. (16)'s
    factors, ``limit_meg`` (B) and ``sketch_leader`` with ``ell =
    leader_ell(n, k)`` (F, centered Follow the Leader on a sketch).  Returns
    ``(expected_losses, Delta_A, eta_A, weight of B)``."""
    X = np.asarray(X, dtype=float)
    ha, Delta, eta = auto_cumulative(X, k, centered, center_lr_inv, mean_init)
    Y, f = centered_instances(X, centered, center_lr_inv, mean_init)
    hb = limit_meg(Y, k, weights=f)
    hf = sketch_leader(Y, k, leader_ell(X.shape[1], k), weights=f)
    out, weights = master_losses(ha, hb, hf)
    auto_centered.master_weights = weights
    return out, Delta, eta, float(weights[1])


def auto_experts(Lv, k, share=None, alpha=0.0):
    """CappedHedge (Hedge: k = n - 1) with eta="auto", loss vectors in [0, 1]^n."""
    Lv = np.asarray(Lv, dtype=float)
    n = Lv.shape[1]
    d = n - k
    D = d * np.log(n / d)
    lw = np.full(n, -np.log(n))
    Delta, eta, out = 0.0, np.inf, []
    for t, loss in enumerate(Lv, start=1):
        a = _alpha(alpha, t)
        w = np.exp(lw)
        h = d * (w @ loss)
        out.append(h)
        if np.isfinite(eta):
            delta = max(0.0, h + d * logsumexp(lw - eta * loss) / eta)
            Delta, nxt = _next(Delta, delta, D)
            lw = (nxt / eta) * (lw - eta * loss)
        else:
            delta = max(0.0, h - d * loss.min())
            Delta, nxt = _next(Delta, delta, D)
            lw = lw - (nxt if np.isfinite(nxt) else 0.0) * loss
        eta = nxt
        if share == "fixed" and a > 0:
            lw = _mix(lw, a)
        lw = cap_log(lw, d)
        if share == "uniform" and a > 0:
            lw = _mix(lw, a)
    return np.array(out), Delta, eta


def auto_simplex(X, alpha=0.0):
    """SimplexVarianceMinimizer with eta="auto": AdaHedge on g = C y (an
    entry within n eps (|C| y)_i, the rounding of its sum, is 0)."""
    X = np.asarray(X, dtype=float)
    n = X.shape[1]
    D = np.log(n)
    lw = np.full(n, -np.log(n))
    Delta, eta, out = 0.0, np.inf, []
    for t, x in enumerate(X, start=1):
        a = _alpha(alpha, t)
        C = np.outer(x, x) if x.ndim == 1 else x
        y = np.exp(lw)
        g = C @ y
        g[np.abs(g) <= n * np.finfo(float).eps * (np.abs(C) @ y)] = 0.0
        h = y @ g
        out.append(h)
        if np.isfinite(eta):
            delta = max(0.0, h + logsumexp(lw - eta * g) / eta)
            Delta, nxt = _next(Delta, delta, D)
            lw = (nxt / eta) * (lw - eta * g)
        else:
            delta = max(0.0, h - g.min())
            Delta, nxt = _next(Delta, delta, D)
            lw = lw - (nxt if np.isfinite(nxt) else 0.0) * g
        eta = nxt
        lw = lw - logsumexp(lw)
        if a > 0:
            lw = _mix(lw, a)
    return np.array(out), Delta, eta
