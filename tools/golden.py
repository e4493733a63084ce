"""Golden outputs: record what every learner and kernel computes, compare later.

A redesign must change no number.  ``record`` runs every learner (each
variant of share, sampler, centering and input kind) and every kernel of the
public API on a few fixed streams and saves all outputs -- loss trajectories,
final eigensystems, weights, drawn subsets, transforms, metrics -- to one
``.npz`` file, together with a fingerprint of the machine and library
versions.  ``compare`` recomputes them and reports every difference.

    python tools/golden.py record tests/data/golden.npz
    python tools/golden.py compare tests/data/golden.npz --exact

``--exact`` demands bit-for-bit equality (the promise of a pure redesign, on
the machine that recorded the file: another CPU takes other instruction-set
versions of the kernels and other BLAS code paths, which round differently).
Without it, values must agree to ``rtol = atol = 1e-9`` (loss trajectories)
and eigenvectors up to sign; that is what ``tests/test_golden.py`` checks on
any machine.

Only the public API is used, so the script runs unchanged on any version.
"""

import argparse
import platform
import sys

import numpy as np


def _streams():
    rng = np.random.default_rng(20261123)
    from onlinepca_fast.datasets import noisy_cone, shifting_subspaces
    X20, _ = shifting_subspaces(n_features=20, rank=2, segment_lengths=(120, 120, 120),
                                random_state=1)
    X8 = rng.normal(size=(200, 8)) @ rng.normal(size=(8, 8)) / 6.0
    X8 /= max(1.0, np.linalg.norm(X8, axis=1).max())
    Xc = 3.0 + rng.normal(size=(250, 6)) @ np.diag([2.0, 1.0, 0.5, 0.1, 0.1, 0.05])
    L = rng.random((300, 12)) ** 2
    L[:, 3] *= 0.2
    V = rng.normal(size=(150, 5))
    V /= np.linalg.norm(V, axis=1, keepdims=True) * 1.5
    A = rng.normal(size=(60, 4, 4))
    C = A @ np.swapaxes(A, 1, 2)
    C /= np.linalg.eigvalsh(C)[:, -1][:, None, None] * 1.2
    cone = noisy_cone(90, n_features=5, embedding="padded", random_state=3)
    X60 = rng.normal(size=(400, 60)) * (np.arange(1, 61) ** -0.7)
    X60 = X60 @ np.linalg.qr(rng.normal(size=(60, 60)))[0]
    X60 /= np.linalg.norm(X60, axis=1).max()
    return {"X20": X20, "X8": X8, "Xc": Xc, "L": L, "V": V, "C": C, "cone": cone,
            "X60": X60}


def _learners():
    """(name, factory, stream, post) -- post lists extra outputs to keep."""
    import onlinepca_fast as opf

    out = []
    for share, alpha in ((None, 0.0), ("fixed", 1e-3), ("uniform", 1e-2), ("past", 5e-2)):
        for sampler in ("decomposition", "systematic"):
            out.append((f"OnlinePCA-{share}-{sampler}",
                        lambda s=share, a=alpha, sm=sampler: opf.OnlinePCA(
                            2, eta=1.0, share=s, alpha=a, sampler=sm, random_state=5),
                        "X20"))
            out.append((f"CappedHedge-{share}-{sampler}",
                        lambda s=share, a=alpha, sm=sampler: opf.CappedHedge(
                            4, eta=2.0, share=s, alpha=a, sampler=sm, random_state=6),
                        "L"))
    out.append(("OnlinePCA-eta0.3-X8", lambda: opf.OnlinePCA(3, eta=0.3, random_state=1), "X8"))
    out.append(("Hedge", lambda: opf.Hedge(eta=1.5, random_state=2), "L"))
    out.append(("Hedge-fixed", lambda: opf.Hedge(eta=1.5, share="fixed", alpha=0.01,
                                                  random_state=2), "L"))
    out.append(("OnlineAdaptivePCA", lambda: opf.OnlineAdaptivePCA(2, eta=1.0, alpha=1e-4,
                                                                   random_state=3), "X20"))
    for centered in (True, False):
        for sampler in ("decomposition", "systematic"):
            out.append((f"CenteredOnlinePCA-{centered}-{sampler}",
                        lambda c=centered, sm=sampler: opf.CenteredOnlinePCA(
                            2, eta=0.5, centered=c, sampler=sm, random_state=4), "Xc"))
    out.append(("CenteredOnlinePCA-lrinv", lambda: opf.CenteredOnlinePCA(
        1, eta=2.0, center_lr_inv=3.0, mean_init=np.ones(6), random_state=9), "Xc"))
    out.append(("CenteredOnlinePCA-X20", lambda: opf.CenteredOnlinePCA(
        2, eta=1.0, random_state=4), "X20"))
    for centered in (False, True):
        out.append((f"FollowTheLeader-{centered}",
                    lambda c=centered: opf.FollowTheLeader(2, centered=c), "Xc"))
    for share in (None, "fixed"):
        out.append((f"VarianceMinimizer-{share}-vec", lambda s=share: opf.VarianceMinimizer(
            eta=1.0, share=s, alpha=0.01 if s else 0.0, random_state=7), "V"))
        out.append((f"VarianceMinimizer-{share}-mat", lambda s=share: opf.VarianceMinimizer(
            eta=1.0, share=s, alpha=0.01 if s else 0.0, random_state=7), "C"))
    for alpha in (0.0, 0.02):
        out.append((f"SimplexVarianceMinimizer-{alpha}-vec",
                    lambda a=alpha: opf.SimplexVarianceMinimizer(eta=2.0, alpha=a), "V"))
        out.append((f"SimplexVarianceMinimizer-{alpha}-mat",
                    lambda a=alpha: opf.SimplexVarianceMinimizer(eta=2.0, alpha=a), "C"))
    for kernel, kw in (("rbf", dict(gamma=0.5)), ("poly", dict(degree=2, gamma=1.0, coef0=0.0)),
                       ("linear", {})):
        for sampler in ("decomposition", "systematic"):
            out.append((f"OnlineKernelPCA-{kernel}-{sampler}",
                        lambda k=kernel, kw=kw, sm=sampler: opf.OnlineKernelPCA(
                            3, kernel=k, eta=1.0, sampler=sm, random_state=8, **kw), "cone"))
    out.append(("OnlineKernelPCA-callable", lambda: opf.OnlineKernelPCA(
        2, kernel=lambda A, B: (A @ B.T + 1.0) ** 2 / 4.0, eta=1.0, random_state=8), "cone"))
    return out


def _clustered_learners():
    """The eigen-learners on the clustered state (and state="auto" across
    its switch): a redesign of the state layer must change none of these
    numbers either.  ``--set clustered``; not part of tests/data/golden.npz
    (the clustered draw's realized losses depend on its random stream)."""
    import onlinepca_fast as opf

    out = []
    for share, alpha in ((None, 0.0), ("fixed", 1e-3), ("uniform", 1e-2)):
        for sampler in ("decomposition", "systematic"):
            out.append((f"cl/OnlinePCA-{share}-{sampler}",
                        lambda s=share, a=alpha, sm=sampler: opf.OnlinePCA(
                            2, eta=1.0, share=s, alpha=a, sampler=sm, state="clustered",
                            random_state=5), "X20"))
    out.append(("cl/OnlinePCA-auto", lambda: opf.OnlinePCA(
        3, state="clustered", random_state=5), "X60"))
    out.append(("cl/OnlineAdaptivePCA-auto", lambda: opf.OnlineAdaptivePCA(
        3, state="clustered", random_state=5), "X60"))
    out.append(("cl/OnlineAdaptivePCA", lambda: opf.OnlineAdaptivePCA(
        2, eta=1.0, alpha=1e-4, state="clustered", random_state=3), "X20"))
    for centered in (True, False):
        for sampler in ("decomposition", "systematic"):
            out.append((f"cl/CenteredOnlinePCA-{centered}-{sampler}",
                        lambda c=centered, sm=sampler: opf.CenteredOnlinePCA(
                            2, eta=0.5, centered=c, sampler=sm, state="clustered",
                            random_state=4), "X20"))
        out.append((f"cl/FollowTheLeader-{centered}", lambda c=centered: opf.FollowTheLeader(
            2, centered=c, state="clustered"), "X20"))
    out.append(("cl/CenteredOnlinePCA-auto", lambda: opf.CenteredOnlinePCA(
        3, state="clustered", random_state=4), "X60"))
    for eta in (1.0, "auto"):
        out.append((f"auto/OnlinePCA-{eta}", lambda e=eta: opf.OnlinePCA(
            3, eta=e, random_state=5), "X60"))
        out.append((f"auto/CenteredOnlinePCA-{eta}", lambda e=eta: opf.CenteredOnlinePCA(
            3, eta=e, random_state=4), "X60"))
    out.append(("auto/OnlinePCA-eta30", lambda: opf.OnlinePCA(3, eta=30.0, random_state=5), "X60"))
    # dense from trial ~20 to ~80, then clustered again: the switch both ways
    out.append(("auto/OnlinePCA-eta0.3", lambda: opf.OnlinePCA(3, eta=0.3, random_state=5), "X60"))
    return out


def _attrs(est):
    out = {}
    for name in ("expected_losses_", "realized_losses_", "eigenvalues_", "eigenvectors_",
                 "weights_", "mean_", "components_", "density_", "n_trials_"):
        try:
            value = getattr(est, name)
        except AttributeError:
            continue
        if value is None:
            continue
        out[name] = np.asarray(value)
    return out


def _run_learner(res, name, make, X):
    """Fit half of X, learn_one five rows, partial_fit the rest; keep every
    output of the learner."""
    half = X.shape[0] // 2
    est = make().fit(X[:half])
    for i in range(half, half + 5):  # learn_one, then a partial_fit
        est.learn_one(X[i])
    est.partial_fit(X[half + 5:])
    for key, value in _attrs(est).items():
        res[f"{name}/{key}"] = value
    if hasattr(est, "transform"):
        res[f"{name}/transform"] = est.transform(X[:7])
    if hasattr(est, "inverse_transform") and hasattr(est, "components_"):
        res[f"{name}/inverse"] = est.inverse_transform(
            _inverse_input(est.components_.shape[0]))
    for draw in ("sample_projection", "sample_corner", "sample_direction"):
        if hasattr(est, draw):
            res[f"{name}/{draw}"] = np.stack(
                [np.asarray(getattr(est, draw)(random_state=s)) for s in range(4)])


def _reference(res, name, make, X):
    """The same learner again through the NumPy reference (a few of them)."""
    from onlinepca_fast import reference

    if name not in ("OnlinePCA-None-decomposition", "CappedHedge-fixed-systematic",
                    "CenteredOnlinePCA-True-decomposition", "FollowTheLeader-True",
                    "VarianceMinimizer-fixed-vec", "SimplexVarianceMinimizer-0.02-mat",
                    "OnlineKernelPCA-poly-decomposition", "Hedge"):
        return
    est = make()
    ref_cls = getattr(reference, type(est).__name__)
    params = {k: v for k, v in est.get_params().items()
              if k not in ("record_losses", "reorthogonalize_every", "state")}
    if type(est).__name__ == "OnlineAdaptivePCA":
        params.pop("share", None)
    ref = ref_cls(**params).fit(X)
    res[f"reference/{name}/expected_losses_"] = ref.expected_losses_
    res[f"reference/{name}/realized_losses_"] = ref.realized_losses_


def compute(which="main"):
    import onlinepca_fast as opf
    from onlinepca_fast import kernels, metrics, reference

    S = _streams()
    res = {}
    if which == "clustered":
        for name, make, stream in _clustered_learners():
            _run_learner(res, name, make, S[stream])
        return res
    for name, make, stream in _learners():
        _run_learner(res, name, make, S[stream])
        _reference(res, name, make, S[stream])

    rng = np.random.default_rng(7)
    for n, d in ((1, 1), (5, 2), (50, 7), (1000, 300), (4097, 1000)):
        w = rng.standard_exponential(n) ** 3
        mu = np.log(w) * 40
        res[f"cap/{n}/{d}"] = kernels.cap(w, d)
        res[f"cap_log/{n}/{d}"] = kernels.cap_log(mu, d)
        res[f"ref_cap/{n}/{d}"] = reference.cap(w, d)
        res[f"ref_cap_log/{n}/{d}"] = reference.cap_log(mu, d)
        if n <= 50:
            q = kernels.cap(w, d)
            p, corners = kernels.decompose(q, d)
            res[f"decompose/{n}/{d}/p"], res[f"decompose/{n}/{d}/corners"] = p, corners
            for method in ("decomposition", "systematic"):
                res[f"sample_corner/{n}/{d}/{method}"] = np.stack(
                    [kernels.sample_corner(q, d, rng=s, method=method) for s in range(5)])
    for n in (1, 3, 40, 100):
        A = rng.normal(size=(n, n))
        evals, evecs = np.linalg.eigh(A + A.T)
        x = rng.normal(size=n)
        if n > 3:
            x[: n // 3] = 0.0
            evals[n // 2: n // 2 + n // 4] = evals[n // 2]
        for rho in (2.5, -0.7):
            lam, Q = kernels.rank_one_update(evals, evecs, rho, x)
            res[f"rank_one/{n}/{rho}/evals"], res[f"rank_one/{n}/{rho}/evecs"] = lam, Q
        lam, Q, info = kernels.bordered_update(evals, evecs, x, 0.3, _return_info=True)
        res[f"bordered/{n}/evals"], res[f"bordered/{n}/evecs"] = lam, Q
        res[f"bordered/{n}/order"] = np.array(info["order"])
    upd = kernels.RankOneUpdater(30)
    evals, evecs = np.zeros(30), np.eye(30)
    for i in range(200):
        upd.update(evals, evecs, -0.5 if i % 3 else 1.0, rng.normal(size=30) / 3)
    res["updater/evals"], res["updater/evecs"] = evals, evecs
    res["updater/counts"] = np.array([upd.n_updates, upd.n_fallbacks])

    X = S["X20"]
    pca = opf.OnlinePCA(2, eta=1.0, random_state=0).fit(X)
    res["metrics/best"] = np.array([metrics.best_subspace_loss(X, 2),
                                    metrics.best_subspace_loss(X, 2, centered=True)])
    res["metrics/regret"] = np.asarray(metrics.regret(pca.expected_losses_, X, 2))
    res["metrics/partition"] = np.asarray(metrics.partition_regret(
        pca.expected_losses_, X, 2, [120, 240]))
    res["metrics/adaptive"] = np.asarray(metrics.adaptive_regret(
        pca.expected_losses_[:80], X[:80], 2))
    res["metrics/bounds"] = np.array([metrics.regret_bound(10.0, 20, 2, 1.0),
                                      metrics.tuned_regret_bound(10.0, 20, 2),
                                      metrics.tuned_learning_rate(10.0, 5.0)])
    res["metrics/average_density"] = metrics.average_density(opf.OnlinePCA(2, eta=1.0, random_state=0),
                                                             X[:100])
    from onlinepca_fast.app import experiments
    r = experiments.wk_fig4(segment_length=100, seeds=2)
    for label, row in sorted(r["totals"].items()):
        res[f"experiments/wk_fig4/{label}"] = np.array(
            [np.nan if row.get(k) is None else row[k]
             for k in ("expected_mean", "realized_mean")])
    return res


def fingerprint():
    import scipy

    import onlinepca_fast as opf
    from onlinepca_fast import _kernels
    return (f"{platform.machine()} cpu_level={_kernels.cpu_level()} numpy={np.__version__} "
            f"scipy={scipy.__version__} python={platform.python_version()} "
            f"package={opf.__version__}")


def _inverse_input(k):
    """The coordinates the "inverse" outputs are inverse_transform of."""
    return np.arange(2.0 * k).reshape(2, -1) / 10


def _align_component_signs(key, saved, new, b):
    """`b` (a transform or inverse output of `new`) as if `new`'s components_
    had the signs of `saved`'s.  Each component is an eigenvector, defined
    up to its sign, and a change of rounding (another compiler, another
    instruction set) may flip it; transform(X) = (X - mean) C^T and
    inverse_transform(Z) = Z C + mean follow the flip."""
    base = key.rsplit("/", 1)[0]
    ca, cb = saved.get(base + "/components_"), new.get(base + "/components_")
    if ca is None or cb is None or ca.shape != cb.shape:
        return b
    s = np.where(np.sum(ca * cb, axis=1) < 0, -1.0, 1.0)
    if key.endswith("/transform"):
        return b * s
    Z = _inverse_input(cb.shape[0])
    return b + (Z * (s - 1)) @ cb


def _cluster_projectors(lam, Q, rtol=1e-6):
    """sum over clusters c of (c + 1) * Q_c Q_c^T: the same for any basis of
    each eigenspace (clusters: eigenvalues within rtol of the largest).  An
    eigenvector whose eigenvalue is within g of another's moves by ~eps |A| / g
    under rounding (seen: 2e-6 for kernel eigenvalues 1e-8 apart on a scale
    of 72, with numpy 2.4 / scipy 1.17 against the recording build), so
    eigenvalues closer than 1e-6 of the scale count as one eigenspace."""
    tol = rtol * max(1.0, float(np.abs(lam).max()) if lam.size else 1.0)
    out = np.zeros((Q.shape[0], Q.shape[0]))
    start, c = 0, 0
    for j in range(1, lam.size + 1):
        if j == lam.size or lam[j] - lam[j - 1] > tol:
            V = Q[:, start:j]
            out += (c + 1) * (V @ V.T)
            start, c = j, c + 1
    return out


def _basis_dependent(key):
    """Outputs that depend on LAPACK's choice of basis inside an eigenspace."""
    realized = key.endswith("/realized_losses_")
    if key.startswith("reference/"):
        return realized or key.startswith("reference/FollowTheLeader")
    return realized and ("-past-" in key or key.endswith("-mat/realized_losses_"))


def compare(saved, new, exact):
    """A list of (key, message) for every difference."""
    problems = []
    for key in sorted(set(saved) | set(new)):
        if key.startswith("_"):
            continue
        if key not in new:
            problems.append((key, "missing now"))
            continue
        if key not in saved:
            problems.append((key, "new output (not in the golden file)"))
            continue
        a, b = np.asarray(saved[key]), np.asarray(new[key])
        if a.shape != b.shape:
            problems.append((key, f"shape {a.shape} -> {b.shape}"))
            continue
        if exact:
            if a.dtype != b.dtype or a.tobytes() != b.tobytes():
                diff = np.max(np.abs(a.astype(float) - b.astype(float))) if a.size else 0
                problems.append((key, f"not bit-identical (max |diff| {diff:.3g})"))
            continue
        if _basis_dependent(key):
            # drawn among eigenvectors that LAPACK's dsyevr/eigh returns
            # (the reference; share="past" and matrix instances, which
            # re-diagonalise): inside a cluster of equal eigenvalues LAPACK
            # builds pick different bases, so the realized loss of such a
            # trial -- and the reference Follow the Leader's loss, its top-k
            # among tied eigenvalues -- depends on the build (seen: another
            # numpy on CPython 3.13; numpy 2.4 / scipy 1.17).  Expected
            # losses, basis-independent, are compared; bit for bit, all are.
            continue
        if a.dtype.kind in "iub":
            if not np.array_equal(a, b):
                problems.append((key, "integers differ"))
            continue
        if key.endswith(("eigenvectors_", "/evecs")) and a.ndim == 2:
            # eigenvectors are defined up to a basis of each eigenspace:
            # compare the projectors onto the clusters of equal eigenvalues
            lam = saved.get(key.replace("eigenvectors_", "eigenvalues_")
                            .replace("/evecs", "/evals"))
            if lam is not None and lam.shape == (a.shape[1],):
                a, b = _cluster_projectors(lam, a), _cluster_projectors(lam, b)
        elif key.endswith("components_") and a.ndim == 2:
            a, b = a.T @ a, b.T @ b  # the subspace
        elif key.endswith(("/transform", "/inverse")) and a.ndim == 2:
            b = _align_component_signs(key, saved, new, b)
        elif key.endswith("/sample_direction") and a.ndim == 2:
            # a drawn eigenvector: its sign is LAPACK's choice
            b = b * np.where(np.sum(a * b, axis=1) < 0, -1.0, 1.0)[:, np.newaxis]
        if not np.allclose(a, b, rtol=1e-9, atol=1e-9, equal_nan=True):
            diff = np.max(np.abs(a - b))
            problems.append((key, f"max |diff| {diff:.3g}"))
    return problems


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=("record", "compare"))
    p.add_argument("path")
    p.add_argument("--set", default="main", choices=("main", "clustered"),
                   help="main: every learner and kernel (tests/data/golden.npz); "
                        "clustered: the eigen-learners on the clustered state and "
                        "across state='auto''s switch")
    p.add_argument("--exact", action="store_true",
                   help="compare bit for bit (on the machine that recorded the file)")
    args = p.parse_args(argv)
    res = compute(args.set)
    if args.mode == "record":
        np.savez_compressed(args.path, _fingerprint=np.array(fingerprint()), **res)
        print(f"recorded {len(res)} outputs to {args.path} ({fingerprint()})")
        return 0
    with np.load(args.path) as f:
        saved = {k: f[k] for k in f.files}
    print(f"golden file: {saved['_fingerprint']}\nthis run:    {fingerprint()}")
    problems = compare(saved, res, args.exact)
    for key, msg in problems:
        print(f"  {key}: {msg}")
    print(f"{len(res)} outputs, {len(problems)} differences"
          f" ({'bit for bit' if args.exact else 'rtol = atol = 1e-9'})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
