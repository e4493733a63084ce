"""Shared pytest configuration.

Hypothesis runs derandomized everywhere (as SciPy does in CI): the examples
are a deterministic function of the test, so a property test cannot flake
and a failure reproduces on every machine.  The "ci" profile is loaded when
the environment variable ``CI`` is set, otherwise "dev" (fewer examples);
``HYPOTHESIS_PROFILE`` overrides both.
"""

import os

import pytest
from hypothesis import HealthCheck, settings

_COMMON = dict(
    derandomize=True,
    deadline=None,  # timings of compiled code on shared CI machines vary
    database=None,  # derandomized: nothing worth storing, no .hypothesis/
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("ci", max_examples=60, **_COMMON)
settings.register_profile("dev", max_examples=30, **_COMMON)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

# NumPy and SciPy each bundle an OpenBLAS with its own thread pool; on a
# 2-core machine the idle workers of one spin while the other computes and
# slow small eigh/GEMM calls down 5-10x.  One BLAS thread for the whole
# session keeps the suite's run time steady (threadpoolctl comes with
# scikit-learn, a test dependency).
try:
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover - scikit-learn missing
    threadpool_limits = None
if threadpool_limits is not None:
    _BLAS_LIMIT = threadpool_limits(limits=1, user_api="blas")


@pytest.fixture
def one_blas_thread():
    """One BLAS thread around a test, the libraries loaded since the
    session's limit above included (a module that needs it sets
    ``pytestmark = pytest.mark.usefixtures("one_blas_thread")``): on a
    loaded machine a multi-threaded eigh of order 1000 was 50x slower."""
    if threadpool_limits is None:  # pragma: no cover
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def pytest_generate_tests(metafunc):
    """A test that takes ``learner_case`` runs once per entry of the one
    shared list of learners (``learner_cases.LEARNERS``: every learner and
    every code path of the trial loop that keeps different state)."""
    if "learner_case" in metafunc.fixturenames:
        from learner_cases import IDS, LEARNERS
        metafunc.parametrize("learner_case", LEARNERS, ids=IDS)
