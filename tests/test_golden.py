"""Every learner and kernel still computes the recorded golden outputs.

``tests/data/golden.npz`` was recorded by ``tools/golden.py record`` before
the learner layer was redesigned; the redesign was checked bit for bit with
``python tools/golden.py compare tests/data/golden.npz --exact`` on the
machine that recorded it.  Here, on any machine, the same outputs must agree
to ``rtol = atol = 1e-9`` (eigenvectors compared through the projectors onto
their eigenspaces, components through their subspace): another CPU takes
other instruction-set versions of the kernels and rounds differently, but no
number may change beyond rounding.
"""

import importlib.util
import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "golden.npz"


def _golden_module():
    spec = importlib.util.spec_from_file_location("_golden", ROOT / "tools" / "golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def outputs():
    golden = _golden_module()
    with np.load(GOLDEN) as f:
        saved = {k: f[k] for k in f.files}
    return golden, saved, golden.compute()


def test_every_golden_output_is_reproduced(outputs):
    golden, saved, new = outputs
    problems = golden.compare(saved, new, exact=False)
    assert problems == []


def test_the_comparison_can_fail(outputs):
    # a perturbation of one loss by 1e-8 relative is reported
    golden, saved, new = outputs
    key = "OnlinePCA-None-decomposition/expected_losses_"
    changed = dict(new)
    changed[key] = new[key] * (1 + 1e-8) + 1e-8
    assert [k for k, _ in golden.compare(saved, changed, exact=False)] == [key]
    rotated = dict(new)
    key = "CenteredOnlinePCA-True-decomposition/eigenvectors_"
    Q = new[key].copy()
    Q[:, [0, 1]] = Q[:, [1, 0]]  # two eigenvectors of different eigenvalues swapped
    rotated[key] = Q
    assert [k for k, _ in golden.compare(saved, rotated, exact=False)] == [key]
    # transform and inverse_transform follow the sign of each component
    # (an eigenvector): a flipped component is no difference, a changed
    # output is
    name = "OnlinePCA-past-decomposition"
    flipped = dict(new)
    C = new[f"{name}/components_"]
    flipped[f"{name}/components_"] = C * np.array([[1.0], [-1.0]])
    flipped[f"{name}/transform"] = new[f"{name}/transform"] * np.array([1.0, -1.0])
    Z = golden._inverse_input(2)  # inverse = Z C + mean
    flipped[f"{name}/inverse"] = new[f"{name}/inverse"] - 2 * np.outer(Z[:, 1], C[1])
    assert golden.compare(saved, flipped, exact=False) == []
    moved = dict(new)
    moved[f"{name}/transform"] = new[f"{name}/transform"] + 1e-6
    assert [k for k, _ in golden.compare(saved, moved, exact=False)] == [f"{name}/transform"]
