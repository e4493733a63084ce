"""Candidate rates beyond AdaHedge for ``eta="auto"``, prototyped in NumPy (issue 24).

The question: can a parameter-free, scale-free rate with a regret guarantee
reach the best fixed eta in hindsight on the digits stream (where it is
far above AdaHedge's) while keeping the image patches?  Each candidate is
written here from its formulas, ``numpy.linalg.eigh`` every trial, in
*loss units*: the state of the mirror-descent learners (OnlinePCA,
OnlineAdaptivePCA) is ``M`` with ``log W = eta_t M`` up to a constant, so
the stabilised step of ``eta="auto"`` (``log W <- gamma (log W - eta_t S)``,
``gamma = eta_{t+1}/eta_t``) keeps ``M`` and only changes the temperature
at which the next trial caps it.  Policies:

- ``auto``: AdaHedge, ``eta_t = D / Delta_{t-1}`` (the package's
  ``eta="auto"``; ``tests/test_auto_rate.py`` checks this prototype
  reproduces its expected losses);
- ``inf``: the limit eta -> infinity of the capped update, the "Follow the
  Leader" of a learner that caps after every trial: ``W = P/d`` with ``P``
  the projection onto the top d eigenvectors of M (ties at the boundary
  share the remaining mass), and ``M <- flat_d(M - x x^T)``, which sets
  the d largest eigenvalues to the d-th (the cap at zero temperature).
  Scale-free, O(n k) on a state of k explicit directions plus a flat
  cluster;
- ``flip``: FlipFlop (de Rooij, van Erven, Grunwald and Koolen, JMLR 15,
  2014, Sec. 3): regimes ``inf`` and AdaHedge on the gaps of the AdaHedge
  regimes only, switching when ``Delta_ftl > (phi/alpha) Delta_ah``
  (to AdaHedge) or ``Delta_ah > alpha Delta_ftl`` (to FTL), phi = 2.37,
  alpha = 1.243; the mixability gap of an ``inf`` trial is
  ``h - d (lmax(M^c) - lmax(M^c - x x^T))``;
- ``master``: AdaHedge over the expected losses of sub-learners (each a
  full learner), regret ``<= 2 Delta_master`` against the best of them;
- ``master(auto, auto restart)`` (OnlineAdaptivePCA): two AdaHedge
  learners with fixed share, one with ``D = d log(n/d)`` (static regret),
  one with ``D = d log(n/(d alpha))`` (the relative entropy a fixed-share
  step leaves to any capped comparator: adaptive regret on every interval);
- ``FTL`` and ``flipFTRL``: the cumulative learner (WK Alg. 6,
  ``centered=False`` or ``True``) at eta = infinity (true Follow the
  Leader: the d smallest eigenvalues of C^t) and FlipFlop on it (FTRL
  form, where the paper's analysis carries over with ``ln K -> log(n/d)``).

The asv benchmark ``bench_auto_rate.AutoRateCandidates`` measures each
candidate on the streams of ``bench_auto_rate.AutoRate`` (loss / loss of
the best fixed rank-k subspace in hindsight; a few minutes: every trial is
an eigh of every sub-learner); ``tests/test_auto_rate_candidates.py``
checks the prototypes against the package.  Nothing here is named like an
asv benchmark.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

PHI, ALPHA = 2.37, 1.243  # FlipFlop's constants (de Rooij et al. 2014, Sec. 3)


def hardcap(v, d):
    """The eta -> infinity limit of ``cap(exp(eta v))`` (v ascending): 1/d on
    the top d entries, a tie at the boundary shares what is left equally."""
    n = v.size
    w = np.zeros(n)
    b = v[n - d]
    tol = 1e-12 * max(1.0, float(np.abs(v).max()))
    above = v > b + tol
    tie = np.abs(v - b) <= tol
    w[above] = 1.0 / d
    w[tie] = (d - above.sum()) / (d * tie.sum())
    return w


def _softcap_log(v, eta, d, alpha):
    from onlinepca_fast.reference._kernels import cap_log
    mu = eta * v
    if alpha > 0:  # YL fixed share (eq. 11b), before capping
        mu = mu - logsumexp(mu)
        mu = np.logaddexp(np.log(alpha / mu.size), np.log1p(-alpha) + mu)
    return cap_log(mu, d)


def two_point_gap(h, s, d, eta):
    from onlinepca_fast.reference._auto_rate import two_point_gap as g
    return g(h, s, d, eta)


class _Regimes:
    """AdaHedge / FlipFlop bookkeeping: ``Delta_ah``, ``Delta_ftl``, regime."""

    def __init__(self, policy, D):
        self.policy, self.D = policy, D
        self.dah = self.dftl = 0.0
        self.ftl = policy in ("flip", "inf")

    def rate(self):
        if self.ftl:
            return np.inf
        if self.policy in ("auto", "flip"):
            return self.D / self.dah if self.dah > 0 else np.inf
        return float(self.policy)

    def commit(self, delta):
        if self.policy == "flip" and self.ftl:
            self.dftl += delta
            self.ftl = not self.dftl > PHI / ALPHA * self.dah
        else:
            self.dah += delta
            if self.policy == "flip":
                self.ftl = self.dah > ALPHA * self.dftl


class MEG:
    """OnlinePCA (``alpha > 0``: OnlineAdaptivePCA's fixed share) in loss
    units under a rate policy (``"auto"``, ``"inf"``, ``"flip"``, a number,
    or ``("grid", c)``: eta = c / max_s |x_s|^2, scale-free)."""

    def __init__(self, n, k, policy, alpha=0.0, restart=False):
        self.n, self.d, self.alpha = n, n - k, alpha
        self.M = np.zeros((n, n))
        self.grid = policy[1] if isinstance(policy, tuple) else None
        self.smax = 0.0
        # restart: D = d log(n / (d alpha)), the largest Delta(U, W) after a
        # fixed-share step (every eigenvalue >= alpha / n), for the
        # adaptive-regret bound instead of the static one
        D = self.d * np.log(n / (self.d * alpha) if restart else n / self.d)
        self.reg = _Regimes("grid" if self.grid else policy, D)

    def trial(self, x):
        d, n = self.d, self.n
        self.smax = max(self.smax, float(x @ x))
        eta = self.grid / self.smax if self.grid else self.reg.rate()
        v, Q = np.linalg.eigh((self.M + self.M.T) / 2)
        z = Q.T @ x
        if np.isfinite(eta):
            lw = _softcap_log(v, eta, d, self.alpha)
            h = d * np.exp(lw) @ (z * z)
            self.M = (Q * (lw / eta)) @ Q.T - np.outer(x, x)
            delta = max(0.0, h + d * logsumexp(eta * np.linalg.eigvalsh(self.M)) / eta)
        else:  # the cap at zero temperature; fixed share has no such limit
            h = d * hardcap(v, d) @ (z * z)
            self.M = (Q * np.minimum(v, v[n - d])) @ Q.T - np.outer(x, x)
            delta = max(0.0, h - d * (v[n - d] - np.linalg.eigvalsh(self.M)[-1]))
        if not self.grid:
            self.reg.commit(delta)
        return h


class Tracker:
    """The ``"inf"`` policy of :class:`MEG` (no mixing) at O(n k) per trial:
    the state is r <= k explicit directions U with values ``lam`` below a
    flat level b (every other direction).  A trial: ``z = U^T x``, ``rho =
    |x - U z|``; W spreads 1/d over the flat cluster (``1/(n - r)`` each
    while ``r < k``), so ``h = d rho^2 / (n - r)``; then ``M - x x^T`` on
    span(U, x) is ``diag(lam, b) - v v^T``, ``v = (z, rho)``, an (r+1) x (r+1)
    eigenproblem; at ``r = k`` its largest eigenvalue becomes the new flat
    level (the cap at zero temperature), else every value below b stays."""

    def __init__(self, n, k):
        self.n, self.k, self.d = n, k, n - k
        self.U = np.zeros((n, 0))
        self.lam = np.zeros(0)
        self.b = 0.0

    def trial(self, x):
        n, r = self.n, self.lam.size
        z = self.U.T @ x
        res = x - self.U @ z
        rho = float(np.linalg.norm(res))
        h = self.d * rho ** 2 / (n - r)
        if rho > 1e-12 * np.linalg.norm(x):
            V = np.column_stack([self.U, res / rho])
            vals, v = np.append(self.lam, self.b), np.append(z, rho)
        else:
            V, vals, v = self.U, self.lam, z
        mu, E = np.linalg.eigh(np.diag(vals) - np.outer(v, v))
        V = V @ E
        if mu.size > self.k:  # the cap at zero temperature: a new flat level
            self.b, mu, V = mu[-1], mu[:-1], V[:, :-1]
        keep = mu < self.b - 1e-12 * max(1.0, abs(self.b))
        self.U, self.lam = V[:, keep], mu[keep]
        return h


class Cumulative:
    """WK Alg. 6 (``centered=True``) or its uncentered version, FTRL on
    C^t: ``W = cap(exp(-eta C^t))``; policy ``"auto"`` (two-point gap, as
    the package), ``"inf"`` (Follow the Leader) or ``"flip"``.  The gap of
    an ``inf`` trial is exact: h minus the increase of the sum of the d
    smallest eigenvalues of C (the leader's loss)."""

    def __init__(self, n, k, policy, centered=True):
        self.n, self.d, self.centered = n, n - k, centered
        self.C = np.zeros((n, n))
        self.m = np.zeros(n)
        self.t = 0
        self.lead = 0.0
        self.reg = _Regimes(policy, self.d * np.log(n / self.d))

    def trial(self, x):
        d = self.d
        self.t += 1
        y = x - self.m if self.centered else x
        eta = self.reg.rate()
        v, Q = np.linalg.eigh(self.C)
        z = Q.T @ y
        if np.isfinite(eta):
            from onlinepca_fast.reference._kernels import cap_log
            w = np.exp(cap_log(-eta * v, d))
        else:
            w = hardcap(-v[::-1], d)[::-1]
        h = d * w @ (z * z)
        f = (self.t - 1) / self.t if self.centered else 1.0
        self.C = self.C + f * np.outer(y, y)
        if self.centered:
            self.m = self.m + (x - self.m) / self.t
        lead = np.linalg.eigvalsh(self.C)[:d].sum()
        if np.isfinite(eta):
            delta = two_point_gap(h, float(y @ y), d, eta)
        else:
            delta = max(0.0, h - (lead - self.lead))
        self.lead = lead
        self.reg.commit(delta)
        return h


def master(subs, X, full=False):
    """AdaHedge over the sub-learners' expected losses: the total expected
    loss (``full``: also the master's cumulative mixability gap and each
    sub-learner's total loss)."""
    m = len(subs)
    cum = np.zeros(m)
    gap = total = 0.0
    for x in X:
        hs = np.array([s.trial(x) for s in subs])
        eta = np.log(m) / gap if gap > 0 else np.inf
        if np.isfinite(eta):
            lw = -eta * (cum - cum.min())
            lw -= logsumexp(lw)
            hm = np.exp(lw) @ hs
            mix = -logsumexp(lw - eta * hs) / eta
        else:
            lead = cum == cum.min()
            hm = (lead @ hs) / lead.sum()
            mix = (cum + hs).min() - cum.min()
        gap += max(0.0, hm - mix)
        total += hm
        cum += hs
    return (total, gap, cum) if full else total


def total_loss(X, make):
    sub = make()
    if isinstance(sub, list):
        return master(sub, X)
    return float(sum(sub.trial(x) for x in X))


def candidates(learner, n, k):
    """name -> factory of the candidates measured for a learner."""
    if learner == "CenteredOnlinePCA":
        return {
            "auto": lambda: Cumulative(n, k, "auto"),
            "FTL": lambda: Cumulative(n, k, "inf"),
            "FlipFlop": lambda: Cumulative(n, k, "flip"),
        }
    a = 1e-5 if learner == "OnlineAdaptivePCA" else 0.0
    out = {
        "auto": lambda: MEG(n, k, "auto", a),
        "inf": lambda: Tracker(n, k),
        "FlipFlop": lambda: MEG(n, k, "flip", a),
        "master(auto,inf)": lambda: [MEG(n, k, "auto", a), Tracker(n, k)],
        "master(auto,inf,4 grid)": lambda: ([MEG(n, k, "auto", a), Tracker(n, k)]
                                            + [MEG(n, k, ("grid", c), a)
                                               for c in (1.0, 10.0, 100.0, 1000.0)]),
    }
    if learner == "OnlineAdaptivePCA":
        out["master(auto,auto restart)"] = lambda: [MEG(n, k, "auto", a),
                                                    MEG(n, k, "auto", a, restart=True)]
    if learner == "OnlinePCA":
        out["FTL(C^t)"] = lambda: Cumulative(n, k, "inf", centered=False)
        out["FlipFlop(C^t)"] = lambda: Cumulative(n, k, "flip", centered=False)
    return out
