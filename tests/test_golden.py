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
