"""Run the examples in the docstrings of the public modules."""

import doctest
import importlib

import pytest

MODULES = [
    "onlinepca_fast.kernels",
    "onlinepca_fast.learners._experts",
    "onlinepca_fast.learners._pca",
    "onlinepca_fast.learners._variance",
    "onlinepca_fast.learners._kernel_pca",
    "onlinepca_fast.metrics",
    "onlinepca_fast.datasets",
    "onlinepca_fast.app.experiments",
    "onlinepca_fast.app.plotting",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE
                             | doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_every_learner_has_an_example():
    import onlinepca_fast

    for cls in onlinepca_fast.learners.ALL_LEARNERS:
        name = cls.__name__
        assert ">>>" in (cls.__doc__ or ""), f"{name} has no example in its docstring"
