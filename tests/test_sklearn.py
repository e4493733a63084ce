"""The learners are scikit-learn estimators: its own checks, pipelines,
``set_output``, feature names, ``clone``, its ``NotFittedError``.

Every learner runs through ``parametrize_with_checks``.  The PCA learners
and ``OnlineKernelPCA`` pass every check.  The expert and variance learners
declare their input domain where scikit-learn has a tag for it
(``positive_only`` for loss vectors); the checks that feed them data outside
their domain -- losses above 1, vectors longer than 1 -- are expected to
fail, each listed below with its reason.
"""

import functools
import os
import subprocess
import sys
import tempfile
import textwrap
import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import estimator_checks_generator

import onlinepca_fast as opf
from onlinepca_fast.learners import ALL_LEARNERS

# k = 1: the checks' data sets have as few as 2 features (k < n is required)
ESTIMATORS = [opf.Hedge(random_state=0), opf.CappedHedge(1, random_state=0),
              opf.OnlinePCA(1, random_state=0), opf.OnlineAdaptivePCA(1, random_state=0),
              opf.CenteredOnlinePCA(1, random_state=0), opf.FollowTheLeader(1),
              opf.VarianceMinimizer(random_state=0), opf.SimplexVarianceMinimizer(),
              opf.OnlineKernelPCA(1, random_state=0)]

_LOSSES = ("the check fits on data outside [0, 1]; Hedge and CappedHedge learn from "
           "loss vectors in [0, 1] (WK Alg. 1 and 3) and reject the batch")
_UNIT = ("the check fits on vectors of norm > 1; YL Alg. 5 and 6 need 0 <= C <= I "
         "(C = x x^T: |x| <= 1) and reject the batch")
# the checks that fit on data which scikit-learn cannot be told to keep in
# the learners' domain (the positive_only tag only shifts it to >= 0)
_DOMAIN_CHECKS = (
    "check_estimators_overwrite_params", "check_dont_overwrite_parameters",
    "check_estimators_fit_returns_self", "check_readonly_memmap_input",
    "check_n_features_in_after_fitting", "check_estimators_dtypes",
    "check_pipeline_consistency", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_methods_sample_order_invariance",
    "check_methods_subset_invariance", "check_fit2d_1sample", "check_fit2d_1feature",
    "check_dict_unchanged", "check_fit_idempotent", "check_fit_check_is_fitted",
    "check_n_features_in", "check_fit2d_predict1d")
_VARIANCE_ONLY = ("check_fit_score_takes_y", "check_dtype_object", "check_estimators_nan_inf",
                  "check_positive_only_tag_during_fit", "check_estimator_sparse_tag",
                  "check_estimator_sparse_array", "check_estimator_sparse_matrix")


def _expected_failed_checks(estimator):
    if isinstance(estimator, (opf.Hedge, opf.CappedHedge)):
        return dict.fromkeys(_DOMAIN_CHECKS, _LOSSES)
    if isinstance(estimator, (opf.VarianceMinimizer, opf.SimplexVarianceMinimizer)):
        return dict.fromkeys(_DOMAIN_CHECKS + _VARIANCE_ONLY, _UNIT)
    return {}  # the PCA learners and OnlineKernelPCA: none


def test_every_learner_is_checked():
    assert [type(e) for e in ESTIMATORS] == list(ALL_LEARNERS)


def _check_name(item):
    """The name of the check of an (estimator, check) pair or pytest.param."""
    check = getattr(item, "values", item)[1]
    while isinstance(check, functools.partial):
        check = check.func
    return check.__name__


def _all_checks():
    """scikit-learn's checks of every learner, those expected to fail marked
    xfail (strict).  ``check_array_api_input`` is left to
    :func:`test_array_api_dispatch_with_numpy_inputs`: it needs SciPy's
    array-API mode, which must be chosen before SciPy is imported."""
    for est in ESTIMATORS:
        for item in estimator_checks_generator(
                est, expected_failed_checks=_expected_failed_checks(est), mark="xfail"):
            # (strict: xfail_strict = true in pyproject.toml)
            if _check_name(item) != "check_array_api_input":
                yield item


_CHECKS = list(_all_checks())


@pytest.mark.parametrize("estimator, check", _CHECKS,
                         ids=[f"{type(getattr(c, 'values', c)[0]).__name__}-{_check_name(c)}"
                              for c in _CHECKS])
def test_sklearn_checks(estimator, check):
    check(estimator)


def test_array_api_dispatch_with_numpy_inputs():
    """scikit-learn's check_array_api_input (NumPy inputs with array-API
    dispatch on: the results must not change), run where SCIPY_ARRAY_API=1
    is set before SciPy is imported.  The expert and variance learners are
    left out: the check fits them on data outside their domain."""
    code = textwrap.dedent("""
        import inspect
        import onlinepca_fast as opf
        from sklearn.utils.estimator_checks import check_array_api_input
        # (scikit-learn >= 1.8 also checks that outputs are arrays unless told)
        extra = ({"expect_only_array_outputs": False} if "expect_only_array_outputs"
                 in inspect.signature(check_array_api_input).parameters else {})
        for est in [opf.OnlinePCA(1, random_state=0), opf.OnlineAdaptivePCA(1, random_state=0),
                    opf.CenteredOnlinePCA(1, random_state=0), opf.FollowTheLeader(1),
                    opf.OnlineKernelPCA(1, random_state=0)]:
            check_array_api_input(type(est).__name__, est, array_namespace="numpy", **extra)
        print("checked")
    """)
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=tempfile.gettempdir(), timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "checked"


@pytest.mark.parametrize("cls", ALL_LEARNERS)
def test_inherits_base_estimator_and_clones(cls):
    assert issubclass(cls, sklearn.base.BaseEstimator)
    est = ESTIMATORS[ALL_LEARNERS.index(cls)]
    copy = clone(est)
    assert copy is not est and copy.get_params() == est.get_params()
    assert "<" in est._repr_html_()  # the HTML repr comes with BaseEstimator
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # scikit-learn warns about non-estimators here
        tags = sklearn.utils.get_tags(est)
    assert tags.input_tags.allow_nan is False
    assert (tags.transformer_tags is not None) == hasattr(cls, "transform")


def _frame(n_rows=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 4)) @ np.diag([3.0, 1.0, 0.3, 0.1])
    return pd.DataFrame(X, columns=["a", "b", "c", "d"])


@pytest.mark.parametrize("make", [lambda: opf.OnlinePCA(2, random_state=0),
                                  lambda: opf.CenteredOnlinePCA(2, random_state=0),
                                  lambda: opf.FollowTheLeader(2),
                                  lambda: opf.OnlineKernelPCA(2, kernel="linear",
                                                              random_state=0)])
def test_pipeline_with_pandas_output(make):
    X = _frame()
    pipe = make_pipeline(StandardScaler(), make()).set_output(transform="pandas")
    Z = pipe.fit_transform(X)
    names = pipe.get_feature_names_out()
    prefix = type(pipe[-1]).__name__.lower()
    assert list(names) == [f"{prefix}0", f"{prefix}1"]
    assert isinstance(Z, pd.DataFrame) and list(Z.columns) == list(names)
    # the same numbers as the steps run by hand on arrays
    Xs = StandardScaler().fit_transform(X.to_numpy())
    expected = make().fit(Xs).transform(Xs)
    np.testing.assert_array_equal(Z.to_numpy(), expected)
    np.testing.assert_array_equal(pipe[-1].feature_names_in_, ["a", "b", "c", "d"])


def test_feature_names_in_and_reordered_columns():
    X = _frame()
    pca = opf.OnlinePCA(2, random_state=0).fit(X)
    np.testing.assert_array_equal(pca.feature_names_in_, ["a", "b", "c", "d"])
    state = pca.eigenvectors_.copy()
    with pytest.raises(ValueError, match="feature names should match"):
        pca.partial_fit(X[["b", "a", "c", "d"]])
    with pytest.raises(ValueError, match="feature names should match"):
        pca.transform(X[["b", "a", "c", "d"]])
    np.testing.assert_array_equal(pca.eigenvectors_, state)  # nothing changed
    assert pca.n_trials_ == 60
    # fitting on an array forgets the names
    assert not hasattr(opf.OnlinePCA(2).fit(X).fit(X.to_numpy()), "feature_names_in_")


@pytest.mark.parametrize("cls", [opf.OnlinePCA, opf.OnlineKernelPCA])
def test_nullable_float_frame_and_object_arrays_are_converted(cls):
    X = _frame()
    plain = cls(2, random_state=0).fit(X.to_numpy())
    nullable = cls(2, random_state=0).fit(X.astype("Float64"))
    obj = cls(2, random_state=0).fit(X.to_numpy().astype(object))
    for other in (nullable, obj):
        np.testing.assert_array_equal(other.expected_losses_, plain.expected_losses_)
    with_na = X.astype("Float64")
    with_na.iloc[3, 1] = pd.NA
    with pytest.raises(ValueError, match="X contains NaN or missing values"):
        cls(2).fit(with_na)


@pytest.mark.parametrize("bad", [np.array([["a", "b"], ["c", "d"]]),
                                 np.array([[1.0, "2"], [3.0, 4.0]], dtype=object),
                                 pd.DataFrame({"a": ["x", "y"], "b": [1.0, 2.0]})])
def test_strings_are_a_type_error_naming_x(bad):
    pca = opf.OnlinePCA(1)
    with pytest.raises(TypeError, match=r"\bX\b"):
        pca.fit(bad)
    assert not hasattr(pca, "n_features_in_")


def test_not_fitted_error_is_scikit_learns():
    for est in ESTIMATORS:
        with pytest.raises(NotFittedError):
            est.n_trials_
        if hasattr(est, "transform"):
            with pytest.raises(NotFittedError):
                est.transform(np.zeros((1, 3)))
        sklearn.utils.validation.check_is_fitted(clone(est).fit(_valid_data(est)))


def _valid_data(est):
    rng = np.random.default_rng(0)
    X = rng.random((10, 3))
    if isinstance(est, (opf.VarianceMinimizer, opf.SimplexVarianceMinimizer)):
        X /= 2 * np.linalg.norm(X, axis=1, keepdims=True)
    return X
