"""``onlinepca-fast selfcheck``: the compiled code against the NumPy reference.

A user's quick check that the installed build computes what the tests
check: the kernels (capping, the mixture decomposition, systematic
sampling, the rank-one and bordered eigen-updates) and a few trials of
every learner, each against :mod:`onlinepca_fast.reference` (which forms
every matrix and calls ``numpy.linalg.eigh``), with explicit tolerances.
"""

import sys

import numpy as np

#: (name, constructor arguments, kind of instances) of every learner checked
_LEARNERS = [
    ("Hedge", {}, "loss"),
    ("CappedHedge", dict(n_components=3, share="fixed", alpha=1e-2), "loss"),
    ("OnlinePCA", dict(n_components=3), "vector"),
    ("OnlineAdaptivePCA", dict(n_components=3, alpha=1e-2), "vector"),
    ("CenteredOnlinePCA", dict(n_components=3), "vector"),
    ("FollowTheLeader", dict(n_components=3, centered=True), "vector"),
    ("VarianceMinimizer", dict(share="fixed", alpha=1e-2), "vector"),
    ("SimplexVarianceMinimizer", dict(alpha=1e-2), "vector"),
    ("OnlineKernelPCA", dict(n_components=3, kernel="rbf", gamma=0.5), "vector"),
]
_TRIALS = 3


def _kernel_checks(rng, n, d):
    from .. import kernels, reference

    mu = rng.normal(scale=50.0, size=n)
    yield "cap_log vs sort-based reference", np.max(np.abs(
        kernels.cap_log(mu, d) - reference.cap_log(mu, d))), 1e-12

    x = rng.exponential(size=n) ** 4
    w = kernels.cap(x, d)
    yield "cap vs sort-based reference", np.max(np.abs(w - reference.cap(x, d)) / w), 1e-14

    p, corners = kernels.decompose(w, d)
    recon = np.zeros(n)
    for pj, cj in zip(p, corners):
        recon[cj] += pj / d
    yield "decompose reconstructs w", np.max(np.abs(recon - w)), 1e-12

    draws = np.zeros(n)
    for _ in range(200):
        draws[kernels.sample_corner(w, d, rng, method="systematic")] += 1
    yield "systematic draws are d-subsets", abs(draws.sum() - 200 * d), 0.5

    m = 200
    evals = np.sort(rng.standard_normal(m))
    evecs = np.linalg.qr(rng.standard_normal((m, m)))[0]
    v = rng.standard_normal(m)
    lam, q = kernels.rank_one_update(evals, evecs, 0.7, v)
    lam_ref, _ = reference.rank_one_update(evals, evecs, 0.7, v)
    a = (evecs * evals) @ evecs.T + 0.7 * np.outer(v, v)
    scale = np.max(np.abs(lam_ref))
    yield (f"rank_one_update (n={m}) eigenvalues vs eigh",
           np.max(np.abs(lam - lam_ref)) / scale, 1e-13)
    yield (f"rank_one_update (n={m}) |A Q - Q diag(lam)| / |A|",
           np.max(np.abs(a @ q - q * lam)) / scale, 1e-12)

    y, kappa = rng.standard_normal(m), 1.5
    lam, q = kernels.bordered_update(evals, evecs, y, kappa)
    lam_ref, _ = reference.bordered_update(evals, evecs, y, kappa)
    b = np.block([[(evecs * evals) @ evecs.T, y[:, None]], [y[None, :], np.full((1, 1), kappa)]])
    scale = np.max(np.abs(lam_ref))
    yield (f"bordered_update (m={m}) eigenvalues vs eigh",
           np.max(np.abs(lam - lam_ref)) / scale, 1e-13)
    yield (f"bordered_update (m={m}) |B Q - Q diag(lam)| / |B|",
           np.max(np.abs(b @ q - q * lam)) / scale, 1e-12)


def _learner_checks(rng, n):
    import onlinepca_fast as opf

    from .. import reference

    losses = rng.random((2 * n, n))
    vectors = rng.standard_normal((2 * n, n))
    vectors /= 1.5 * np.linalg.norm(vectors, axis=1, keepdims=True)  # |x| < 1
    for name, kw, kind in _LEARNERS:
        X = (losses if kind == "loss" else vectors)[:_TRIALS]
        if name == "FollowTheLeader":
            # its projection is the top-k eigenvectors of the data so far,
            # arbitrary among tied eigenvalues (rank < k): compared once
            # the data have full rank
            X = vectors
        else:
            kw = dict(kw, random_state=0) if name != "SimplexVarianceMinimizer" else kw
            kw = dict(kw, eta=kw.get("eta", 1.0))  # the reference's fixed rate
        fast = getattr(opf, name)(**kw).fit(X)
        ref = getattr(reference, name)(**kw).fit(X)
        if name == "FollowTheLeader":
            err, what = 0.0, f"{X.shape[0]} trials (final projection)"
        else:
            err = np.max(np.abs(np.asarray(fast.expected_losses_) - ref.expected_losses_))
            what = f"{X.shape[0]} trials (expected losses, parameter)"
        for attr in ("weights_", "density_"):
            if hasattr(type(fast), attr) and hasattr(type(ref), attr):
                err = max(err, np.max(np.abs(getattr(fast, attr) - getattr(ref, attr))))
                break
        yield f"{name}: {what}", err, 1e-12


def selfcheck(n=1000, d=100, seed=0, out=sys.stdout):
    """Compare the compiled code with the reference; print one line per
    check; return True if all agree within their tolerances."""
    rng = np.random.default_rng(seed)
    ok = True
    for group in (_kernel_checks(rng, n, d), _learner_checks(rng, 12)):
        for name, err, tol in group:
            good = bool(err <= tol)
            ok &= good
            print(f"  {'ok  ' if good else 'FAIL'} {name}: error {err:.2e} "
                  f"(tolerance {tol:.0e})", file=out)
    return ok
