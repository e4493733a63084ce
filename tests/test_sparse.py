"""scipy.sparse input: the numbers of the dense array bit for bit, memory of one chunk.

The oracle is the same learner fed ``X.toarray()``: every persisted state
array, the generator and the loss records must be equal bit for bit
(``assert_same_state``), and ``transform`` too.  Chunking is exercised with a
small chunk (monkeypatched), so that a few hundred rows make several chunks.
"""

import pickle
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from learner_cases import LEARNERS, assert_same_state, make_data
from numpy.testing import assert_array_equal

import onlinepca_fast as opf
from onlinepca_fast.learners import _sparse

FORMATS = {
    "csr_matrix": sp.csr_matrix, "csc_matrix": sp.csc_matrix, "coo_matrix": sp.coo_matrix,
    "csr_array": sp.csr_array, "coo_array": sp.coo_array, "lil_matrix": sp.lil_matrix,
}


def _sparsify(X, seed=0, density=0.4):
    """X with most entries set to 0 (the rows stay valid instances)."""
    rng = np.random.default_rng(seed)
    return np.where(rng.random(X.shape) < density, X, 0.0)


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 7 rows at n = 6: a 100-row batch runs in 15 chunks."""
    monkeypatch.setattr(_sparse, "CHUNK_ENTRIES", 42)
    assert _sparse.chunk_rows(6) == 7


# every learner whose instances are rows (matrix instances, 3-D batches, have
# no sparse form)
ROW_CASES = [case for case in LEARNERS if case[2] != "matrix"]


@pytest.mark.parametrize("chunked", [False, True], ids=["one-chunk", "chunks"])
@pytest.mark.parametrize("case", ROW_CASES, ids=[case[0] for case in ROW_CASES])
def test_fit_partial_fit_learn_one_equal_dense_bit_for_bit(case, chunked, monkeypatch):
    if chunked:
        monkeypatch.setattr(_sparse, "CHUNK_ENTRIES", 42)
    _, make, kind = case
    X = _sparsify(make_data(kind, 100, 0))
    dense, sparse = make(), make()
    dense.fit(X[:60]).partial_fit(X[60:95])
    sparse.fit(sp.csr_matrix(X[:60])).partial_fit(sp.csc_matrix(X[60:95]))
    for row in X[95:]:
        dense.learn_one(row)
        sparse.learn_one(sp.coo_matrix(row[np.newaxis]))
    assert_same_state(dense, sparse)
    if not chunked:  # (chunks grow the loss buffer in other steps: same used part)
        assert pickle.dumps(dense) == pickle.dumps(sparse)
    if hasattr(dense, "transform"):
        assert_array_equal(dense.transform(X), sparse.transform(sp.csr_array(X)),
                           strict=True)


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_every_format_and_dtype_is_converted_as_the_dense_array(fmt, dtype, small_chunks):
    """float32 and int data are converted to float64 exactly, as the dense
    path converts them; the result is that of the dense float64 array."""
    rng = np.random.default_rng(1)
    X = _sparsify(np.round(rng.standard_normal((50, 6)) * 4) / 8).astype(dtype)
    dense = opf.CenteredOnlinePCA(2, eta=0.5, random_state=0).fit(X.astype(np.float64))
    sparse = opf.CenteredOnlinePCA(2, eta=0.5, random_state=0).fit(FORMATS[fmt](X))
    assert_same_state(dense, sparse)
    assert_array_equal(dense.transform(X.astype(np.float64)),
                       sparse.transform(FORMATS[fmt](X)), strict=True)


def test_coo_duplicates_add_up_as_toarray_does():
    rows, cols, vals = [0, 0, 1, 2, 2], [1, 1, 0, 3, 3], [0.25, 0.5, -1.0, 0.125, 0.125]
    coo = sp.coo_matrix((vals, (rows, cols)), shape=(3, 4))
    a = opf.FollowTheLeader(1).fit(coo)
    b = opf.FollowTheLeader(1).fit(coo.toarray())
    assert_same_state(a, b)


def test_dense_and_sparse_transform_use_the_same_chunks(small_chunks):
    rng = np.random.default_rng(2)
    X = _sparsify(rng.standard_normal((100, 6)))
    pca = opf.FollowTheLeader(2, centered=True).fit(X)
    Z = pca.transform(X)
    # each chunk's rows as the one-chunk computation gives them
    for a, b in _sparse.row_chunks(100, 6):
        assert_array_equal(Z[a:b], (X[a:b] - pca.mean_) @ pca.components_.T)
    assert_array_equal(Z, pca.transform(sp.csr_matrix(X)))
    assert_array_equal(pca.fit_transform(sp.csr_matrix(X)), pca.fit_transform(X))
    assert pca.transform(sp.csr_matrix((0, 6))).shape == (0, 2)


@pytest.mark.parametrize("bad, exc, match", [
    (lambda X: X.multiply(np.nan), ValueError, "X contains NaN or infinity"),
    (lambda X: sp.csr_matrix(X.multiply(np.inf)), ValueError, "X contains NaN or infinity"),
    (lambda X: X.astype(complex), ValueError, "Complex data not supported: X"),
    (lambda X: X.astype(bool), TypeError, "X must be a real numeric sparse matrix"),
    (lambda X: sp.csr_matrix(X.toarray()[:, :5]), ValueError, "X has 5 features"),
])
def test_bad_sparse_input_is_rejected_and_changes_nothing(bad, exc, match):
    X = sp.csr_matrix(_sparsify(make_data("vector", 40, 3)))
    learner = opf.OnlinePCA(2, random_state=0).partial_fit(X)
    before = pickle.dumps(learner)
    with pytest.raises(exc, match=match):
        learner.partial_fit(bad(X))
    with pytest.raises(exc, match=match):
        learner.fit(bad(X)) if "features" not in match else learner.transform(bad(X))
    if "features" not in match:
        with pytest.raises(exc, match=match):
            learner.transform(bad(X))
    assert pickle.dumps(learner) == before


def test_a_bad_row_in_a_late_chunk_rolls_everything_back(small_chunks):
    """Rows whose step would overflow (|x|^2 eta > 2**1020) are found when
    their chunk is checked, after earlier chunks ran: the learner, its loss
    records and the caller's generator are rolled back in place."""
    rng = np.random.default_rng(4)
    X = _sparsify(rng.standard_normal((100, 6)))
    X[93, 2] = 1e300
    gen = np.random.default_rng(5)
    learner = opf.CenteredOnlinePCA(2, eta=1.0, random_state=gen).partial_fit(X[:10])
    before = pickle.dumps(learner)
    gen_state = gen.bit_generator.state
    with pytest.raises(ValueError, match="in rows 91 to 97 of the sparse X; nothing was "
                                         "changed"):
        learner.partial_fit(sp.csr_matrix(X))
    assert pickle.dumps(learner) == before
    assert learner._rng is gen and learner.random_state is gen
    assert gen.bit_generator.state == gen_state
    # and it goes on as one never interrupted
    X[93, 2] = 0.0
    oracle = opf.CenteredOnlinePCA(2, eta=1.0, random_state=np.random.default_rng(5))
    oracle.partial_fit(X[:10]).partial_fit(X)
    learner.partial_fit(sp.csr_matrix(X))
    assert_same_state(learner, oracle)


def test_a_rejected_fit_keeps_the_previous_fit(small_chunks):
    rng = np.random.default_rng(6)
    X = _sparsify(rng.random((60, 6)))
    learner = opf.Hedge(eta=1.0, random_state=0).fit(X)
    before = pickle.dumps(learner)
    bad = X.copy()
    bad[50, 1] = 1.5  # Hedge's losses must lie in [0, 1]
    with pytest.raises(ValueError, match="in rows 49 to 55"):
        learner.fit(sp.csr_matrix(bad))
    assert pickle.dumps(learner) == before


def test_learn_one_takes_one_sparse_row_only():
    learner = opf.OnlinePCA(1, random_state=0)
    with pytest.raises(ValueError, match="x must be one row"):
        learner.learn_one(sp.csr_matrix(np.eye(3)))
    assert "n_features_in_" not in learner.__dict__
    learner.learn_one(sp.csr_matrix([[0.5, 0.0, 0.0]]))
    assert learner.n_trials_ == 1


def test_memory_is_one_chunk_not_the_dense_matrix():
    """40,000 x 1,000 (320 MB dense) with 0.1% nonzeros: the peak stays
    near the CSR copy and one 8 MiB chunk."""
    rng = np.random.default_rng(7)
    X = sp.random(40_000, 1_000, density=0.001, format="csr", random_state=rng)
    learner = opf.Hedge(eta=0.5, random_state=0, record_losses=False)
    tracemalloc.start()
    try:
        learner.fit(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert learner.n_trials_ == 40_000
    dense_bytes = 40_000 * 1_000 * 8
    assert dense_bytes > 7 * 40 * 2 ** 20
    assert peak < 40 * 2 ** 20, peak
