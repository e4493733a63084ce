"""Type hints of the public API (issue 16): every public function, method
and property of the documented API is annotated, and mypy --strict accepts
a program that uses it as the README does and rejects misuses.

(mypy on the package's own bodies is a development check, not a test: the
bodies are checked against numpy's stubs, which change with every numpy
release -- numpy 2.2, 2.4 and 2.5 each flag different lines.)
"""

import inspect
import os
import textwrap

import pytest

import onlinepca_fast as opf
from onlinepca_fast import datasets, kernels, metrics, parallel, reference
from onlinepca_fast.app import bench, experiments, plotting, sweep

MODULES = [opf, kernels, metrics, datasets, experiments, parallel, sweep, plotting, reference,
           bench]
#: the compiled extension type re-exported by kernels; its signature is
#: documented, not annotated (Cython def methods carry no annotations)
UNANNOTATED = {"RankOneUpdater"}


def _public_callables():
    seen = set()
    for module in MODULES:
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.ismodule(obj) or name in UNANNOTATED or id(obj) in seen:
                continue
            seen.add(id(obj))
            if inspect.isfunction(obj):
                yield f"{module.__name__}.{name}", obj
            elif inspect.isclass(obj):
                if inspect.isfunction(obj.__init__):  # not object's, not a namedtuple's
                    yield f"{module.__name__}.{name}.__init__", obj.__init__
                for attr, value in inspect.getmembers(obj):
                    if attr.startswith("_"):
                        continue
                    owner = next((c for c in obj.__mro__ if attr in vars(c)), None)
                    if owner is None:
                        continue
                    raw = vars(owner)[attr]
                    raw = raw.fget if isinstance(raw, property) else raw
                    if not inspect.isfunction(raw):
                        continue
                    # scikit-learn wraps transform for set_output: judge the original
                    if not inspect.unwrap(raw).__module__.startswith("onlinepca_fast"):
                        continue  # scikit-learn's, river's, Python's
                    yield f"{module.__name__}.{name}.{attr}", raw


def _missing(func):
    sig = inspect.signature(func)
    missing = [p for p, v in sig.parameters.items()
               if p not in ("self", "cls") and v.annotation is inspect.Parameter.empty]
    if sig.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


def test_every_public_callable_is_annotated():
    unannotated = {name: _missing(f) for name, f in _public_callables() if _missing(f)}
    assert unannotated == {}


# --- mypy ---------------------------------------------------------------------------

mypy_api = pytest.importorskip("mypy.api", reason="mypy is in the test extra")

#: A program using the public API as the README does, checked with --strict:
#: the hints must be precise enough for a user's own strict code.
USAGE = '''
import numpy as np
from numpy.typing import NDArray

import onlinepca_fast as opf
from onlinepca_fast import kernels, metrics
from onlinepca_fast.app import experiments
from onlinepca_fast.datasets import noisy_cone, shifting_subspaces

X, segment = shifting_subspaces(n_features=20, rank=2, segment_lengths=(50, 50),
                                random_state=0)
pca: opf.OnlinePCA = opf.OnlinePCA(n_components=2, eta=1.0, random_state=0).fit(X)
pca = pca.partial_fit(X[:10]).learn_one(X[0])
Z: NDArray[np.float64] = pca.transform(X)
P: NDArray[np.float64] = pca.sample_projection()
expected: NDArray[np.float64] = pca.expected_losses_
trials: int = pca.n_trials_
ada = opf.OnlineAdaptivePCA(n_components=2, alpha=1e-5, random_state=0).fit(X)
centered = opf.CenteredOnlinePCA(2, center_lr_inv=2.0, mean_init=None).fit(X)
mean: NDArray[np.float64] = centered.mean_
hedge = opf.CappedHedge(2, share="fixed", alpha=1e-3, sampler="systematic")
corner: NDArray[np.intp] = hedge.fit(np.full((3, 5), 0.5)).sample_corner()
kpca = opf.OnlineKernelPCA(2, kernel="poly", degree=2, coef0=0.0).fit(noisy_cone(30))
w: NDArray[np.float64] = kernels.cap(np.ones(5), 2)
coef, corners = kernels.decompose(w, 2)
best: float = metrics.best_subspace_loss(X, 2)
bound: float = metrics.regret_bound(best, 20, 2, 1.0)
result = experiments.wk_fig4(segment_length=20, seeds=1, progress=lambda done, total: None)
table: str = experiments.format_table(result)
'''

#: What the hints must reject (one error each).
MISUSE = [
    "opf.OnlinePCA(n_components='2')",
    "opf.OnlinePCA(2, share='sometimes')",
    "opf.OnlinePCA(2).fit(X).transform(X).upper()",
    "kernels.cap(np.ones(5), 2.5)",
    "experiments.wk_fig4(progress=len)",
]


def _mypy(tmp_path, source, *flags):
    """Run mypy on `source` and on the installed package; (report, status)."""
    package = os.path.dirname(opf.__file__)
    env_path = os.path.dirname(package)
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent(source))
    args = ["--cache-dir", str(tmp_path / "cache"), "--python-version", "3.10",
            "--ignore-missing-imports", "--follow-imports", "silent", "--no-error-summary",
            *flags, str(program)]
    old = os.environ.get("MYPYPATH")
    # an editable install imports from the source tree: show mypy where it is
    # (a wheel is found in site-packages, which MYPYPATH must not name)
    if "site-packages" not in package:
        os.environ["MYPYPATH"] = env_path
    try:
        report, errors, status = mypy_api.run(args)
    finally:
        if old is None:
            os.environ.pop("MYPYPATH", None)
        else:
            os.environ["MYPYPATH"] = old
    return report + errors, status


@pytest.mark.slow
def test_mypy_strict_accepts_the_readme_usage_and_rejects_misuse(tmp_path):
    report, status = _mypy(tmp_path, USAGE, "--strict")
    assert status == 0, report
    misuse = USAGE + "\n" + "\n".join(MISUSE) + "\n"
    report, status = _mypy(tmp_path, misuse, "--strict")
    assert status == 1
    errors = [ln for ln in report.splitlines() if ": error:" in ln]
    first = len(textwrap.dedent(USAGE).splitlines()) + 1
    lines = sorted({int(ln.split(":")[1]) for ln in errors})
    assert lines == list(range(first + 1, first + 1 + len(MISUSE))), report
