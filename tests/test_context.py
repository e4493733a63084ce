"""The settings of the compiled kernels travel with the call (issue 40 item 3).

The eigenvector product of the updates ("auto", "dense", "structured"), the
structured product's crossover and leaf size and the exp kernels'
instruction-set version live in a context that each updater, learner engine
and kernel call takes when it is made, never in a variable of the C code:
one thread's settings cannot change another's.  Oracles: the counters of
the updates (which path each took) and, for the numbers, the same update
made with the setting passed explicitly.
"""

import pathlib
import re
import threading
import zlib

import numpy as np
import pytest
from test_rank_one_update import (  # noqa: F401 (an autouse fixture)
    random_orthogonal,
    single_threaded_blas,
)

import onlinepca_fast as opf
from onlinepca_fast import _kernels
from onlinepca_fast.kernels import (
    STRUCTURED_PRODUCT_MIN,
    RankOneUpdater,
    bordered_update,
    dense_eigenvector_product,
    rank_one_update,
)

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"


def problem(n, seed):
    rng = np.random.default_rng(seed)
    return np.sort(rng.standard_normal(n)), random_orthogonal(n, rng), rng.standard_normal(n)


@pytest.mark.parametrize("product, n, structured", [
    ("auto", STRUCTURED_PRODUCT_MIN, True), ("auto", STRUCTURED_PRODUCT_MIN - 1, False),
    ("dense", 2 * STRUCTURED_PRODUCT_MIN, False),
    ("structured", 200, True),  # two leaves of 96 and more: below the crossover
    ("structured", 150, False),  # below two leaves: one GEMM, not a fallback
])
def test_product_parameter_chooses_the_path(product, n, structured):
    evals, evecs, x = problem(n, n)
    new, vec, info = rank_one_update(evals, evecs, 0.8, x, product=product, _return_info=True)
    assert info["m"] == n
    assert info["n_structured"] == structured and info["n_product_fallbacks"] == 0
    upd = RankOneUpdater(n, product=product)
    assert upd.product == product
    d, q = evals.copy(), evecs.copy()
    upd.update(d, q, 0.8, x)
    assert upd.n_structured_products == structured
    np.testing.assert_array_equal(d, new)
    np.testing.assert_array_equal(q, vec)
    # the bordered update of the same order takes the same path
    _, _, binfo = bordered_update(evals, evecs, x, 0.3, product=product, _return_info=True)
    assert binfo["n_structured"] == structured


def test_product_is_validated_before_anything_runs():
    evals, evecs, x = problem(20, 1)
    before = evecs.copy()
    for bad in ("gemm", None, 1):
        with pytest.raises(ValueError, match="product must be one of"):
            rank_one_update(evals, evecs, 1.0, x, product=bad, overwrite=True)
        with pytest.raises(ValueError, match="product must be one of"):
            bordered_update(evals, evecs, x, 1.0, product=bad)
        with pytest.raises(ValueError, match="product must be one of"):
            RankOneUpdater(20, product=bad)
    np.testing.assert_array_equal(evecs, before)
    upd = RankOneUpdater(20)
    with pytest.raises(ValueError, match="product must be one of"):
        upd.product = "gemm"
    assert upd.product == "auto"


def test_an_updaters_product_is_its_own_and_survives_pickling():
    import pickle
    n = STRUCTURED_PRODUCT_MIN + 40
    evals, evecs, x = problem(n, 2)
    upd = RankOneUpdater(n)
    upd.product = "dense"
    other = RankOneUpdater(n)  # made after: unaffected
    assert other.product == "auto"
    clone = pickle.loads(pickle.dumps(upd))
    assert clone.product == "dense"
    for u in (upd, clone):
        d, q = evals.copy(), evecs.copy()
        u.update(d, q, 0.5, x)
        assert u.last_info["n_structured"] == 0
    d, q = evals.copy(), evecs.copy()
    other.update(d, q, 0.5, x)
    assert other.last_info["n_structured"] == 1
    upd.product = "auto"
    d, q = evals.copy(), evecs.copy()
    upd.update(d, q, 0.5, x)
    assert upd.last_info["n_structured"] == 1


def test_one_threads_setting_does_not_reach_another_thread():
    """A thread inside ``dense_eigenvector_product()`` (the deprecated
    switch: on main it flipped a C global, every thread's updates went
    dense) while another thread updates: the other keeps the structured
    product; the first one's calls are dense."""
    n = STRUCTURED_PRODUCT_MIN + 30
    evals, evecs, x = problem(n, 3)
    inside, done = threading.Event(), threading.Event()
    seen = {}

    def dense_thread():
        with pytest.warns(DeprecationWarning, match="product='dense'"):
            with dense_eigenvector_product():
                inside.set()
                done.wait(60)
                seen["dense"] = rank_one_update(evals, evecs, 0.5, x, _return_info=True)[2]

    t = threading.Thread(target=dense_thread)
    t.start()
    try:
        assert inside.wait(60)
        seen["other"] = rank_one_update(evals, evecs, 0.5, x, _return_info=True)[2]
        with _kernels.tuning(product="dense"):  # this thread's block, the other's kept
            seen["mine"] = rank_one_update(evals, evecs, 0.5, x, _return_info=True)[2]
    finally:
        done.set()
        t.join(60)
    assert seen["other"]["n_structured"] == 1
    assert seen["dense"]["n_structured"] == 0
    assert seen["mine"]["n_structured"] == 0
    assert _kernels.current_context().product == "auto"


def test_deprecated_dense_switch_warns_nests_and_restores():
    n = STRUCTURED_PRODUCT_MIN + 10
    evals, evecs, x = problem(n, 4)
    with pytest.warns(DeprecationWarning, match="deprecated since 0.2.0"):
        with dense_eigenvector_product():
            with pytest.warns(DeprecationWarning):
                with dense_eigenvector_product():
                    assert _kernels.current_context().product == "dense"
            made_inside = RankOneUpdater(n)
            info = rank_one_update(evals, evecs, 0.5, x, _return_info=True)[2]
            assert _kernels.current_context().product == "dense"
    assert info["n_structured"] == 0
    assert _kernels.current_context().product == "auto"
    assert made_inside.product == "dense"  # kept after the block
    assert RankOneUpdater(n).product == "auto"
    with pytest.raises(RuntimeError), pytest.warns(DeprecationWarning):
        with dense_eigenvector_product():
            raise RuntimeError("inside")
    assert _kernels.current_context().product == "auto"


def test_a_learner_engine_keeps_the_context_it_was_built_in():
    """A learner fitted inside a tuning block: its engine runs with those
    settings (and counts its structured products there), also when it goes
    on learning after the block; a learner fitted outside does not."""
    rng = np.random.default_rng(5)
    n = 70
    X = rng.standard_normal((150, n)) * np.linspace(1.0, 0.1, n)
    with _kernels.tuning(min_order=64, leaf=16) as ctx:
        tuned = opf.CenteredOnlinePCA(3, eta=1.0, random_state=0, state="dense").fit(X[:100])
    after_block = ctx.n_structured
    assert after_block > 0
    tuned.partial_fit(X[100:])
    assert ctx.n_structured > after_block
    plain = opf.CenteredOnlinePCA(3, eta=1.0, random_state=0, state="dense").fit(X)
    assert plain._engine[2].context is _kernels.current_context()
    np.testing.assert_allclose(tuned.expected_losses_, plain.expected_losses_, rtol=0,
                               atol=1e-9)


def test_contexts_are_immutable_and_validated():
    ctx = _kernels.current_context()
    assert (ctx.product, ctx.min_order, ctx.decline) == ("auto", STRUCTURED_PRODUCT_MIN, False)
    assert ctx.leaf == _kernels.STRUCTURED_LEAF_RANGE[1]
    with pytest.raises(AttributeError):
        ctx.product = "dense"
    for bad in (dict(min_order=-1), dict(min_order=2.5), dict(cpu_level=3),
                dict(leaf=_kernels.STRUCTURED_LEAF_RANGE[0] - 1), dict(product="fast")):
        with pytest.raises(ValueError):
            ctx.replace(**bad)
    derived = ctx.replace(product="structured", cpu_level=0)
    assert derived.product == "structured" and derived.cpu_level == 0
    assert ctx.product == "auto" and derived.n_structured == 0


def file_scope_variables(text):
    """The names of the variables a C file defines at file scope that are
    not const (a declaration parser sufficient for our sources: comments,
    strings and preprocessor lines dropped, function bodies and
    initialisers skipped by their braces)."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    text = re.sub(r"'(?:\\.|[^'\\])*'", "''", text)
    text = re.sub(r"^\s*#.*?(?<!\\)$", " ", text, flags=re.M | re.S)
    names, stmt, depth, body = [], "", 0, False
    for ch in text:
        if ch == "{":
            if depth == 0:
                body = stmt.rstrip().endswith(")")  # a function's, not a struct's
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0 and body:
                stmt = ""
        elif depth == 0 and ch == ";":
            # after a macro call's or a prototype's last ')'
            decl = re.sub(r"=[^,]*", "", stmt).rsplit(")", 1)[-1]
            words = re.findall(r"[A-Za-z_]\w*", decl)
            tag_only = len(words) == 2 and words[0] in ("struct", "union", "enum")
            if len(words) >= 2 and words[0] not in ("typedef", "extern") \
                    and "const" not in words and not tag_only:
                for part in decl.split(","):
                    ids = re.findall(r"[A-Za-z_]\w*", re.sub(r"\[[^\]]*\]", "", part))
                    if ids and ids[-1] not in ("enum", "struct", "union"):
                        names.append(ids[-1])
            stmt = ""
        elif depth == 0:
            stmt += ch
    return names


def test_no_process_wide_mutable_variable_in_src():
    """Every file-scope variable of the C kernels that is not const is the
    SIGINT machinery's (interrupt.c) or a cache of the CPU's features
    (vexp.c, cpu_model.c); settings travel with the call (common.h's
    opf_tuning).  On main: hodlr.c's params, hodlr_done and dense_flag and
    vexp.c's forced_level besides."""
    allowed = {("interrupt.c", "tripped"), ("interrupt.c", "countdown"),
               ("interrupt.c", "test_site"), ("interrupt.c", "previous"),
               ("interrupt.c", "depth"), ("vexp.c", "detected_level"),
               ("cpu_model.c", "__cpu_model"), ("cpu_model.c", "__cpu_features2")}
    found = {(path.name, name) for path in sorted(SRC.glob("*.c"))
             for name in file_scope_variables(path.read_text(encoding="utf-8"))}
    assert found - allowed == set()
    assert ("vexp.c", "detected_level") in found  # the parser sees the cache
    sample = ("static volatile int a = -1, b = -1;\nstatic const double c = 1.0;\n"
              "MACRO(x, y)\nstatic struct { int u; } d;\nint f(int z);\n"
              "struct tag { int v; };\nstatic int g(void) { static int e; return e; }\n")
    assert file_scope_variables(sample) == ["a", "b", "d"]


@pytest.mark.parametrize("n", [3, 257])
def test_cpu_level_setting_reaches_the_exp_kernels(n):
    """exp_shifted and cap at each instruction-set level the CPU runs, asked
    for through the context: within an ulp of each other (the versions
    differ by the fused multiply-adds only)."""
    rng = np.random.default_rng(zlib.crc32(str(n).encode()))
    x = -rng.random(n) * 700
    outs = []
    for level in range(_kernels.detected_cpu_level() + 1):
        with _kernels.tuning(cpu_level=level):
            out = np.empty(n)
            _kernels.exp_shifted(x, 0.0, out)
            outs.append(out)
    for out in outs[1:]:
        np.testing.assert_allclose(out, outs[0], rtol=4e-16, atol=0)
