"""Tests of ``learners/_experts.py`` (Hedge, CappedHedge; WK Sec. 3-4):
Hedge is CappedHedge with k = n - 1, the regret bound of WK Thm. 3, and
large n in every version of the exp kernels.
"""


import numpy as np
import pytest
from learner_cases import SAMPLERS, loss_stream
from numpy.testing import assert_allclose

import onlinepca_fast as opf
from onlinepca_fast import _kernels, metrics
from onlinepca_fast import reference as ref


@pytest.mark.parametrize("share", [None, "fixed", "uniform", "past"])
@pytest.mark.parametrize("sampler", SAMPLERS)
def test_hedge_is_capped_hedge_with_k_n_minus_1(share, sampler):
    L = loss_stream(500, 15, seed=15)
    kw = dict(share=share, alpha=1e-2, sampler=sampler, random_state=16)
    h = opf.Hedge(**kw).fit(L)
    c = opf.CappedHedge(14, **kw).fit(L)
    for a, b in zip((h.expected_losses_, h.realized_losses_),
                    (c.expected_losses_, c.realized_losses_)):
        assert_allclose(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("eta", [0.2, 1.0, 4.0])
@pytest.mark.parametrize("k", [1, 4, 7])
def test_regret_bound_thm3_capped_hedge(k, eta):
    n, T = 8, 600
    rng = np.random.default_rng(22)
    sequences = [loss_stream(T, n, seed=23), (rng.random((T, n)) < 0.5).astype(float)]
    for L in sequences:
        learner = opf.CappedHedge(k, eta=eta, random_state=24).fit(L)
        bound = metrics.regret_bound(metrics.expert_best_subset_loss(L, k), n, k, eta)
        assert learner.expected_losses_.sum() <= bound * (1 + 1e-12)


@pytest.mark.parametrize("eta, share", [(1.0, None), (1.0, "uniform"), (600.0, None)],
                         ids=["fused", "fused-then-mixed", "eta-600-level-shift"])
def test_capped_hedge_large_n_in_every_instruction_set(eta, share):
    """CappedHedge at n = 1000, k = 500 with the systematic sampler -- the
    fused loss update + exp + bracket pass of the capping (eta = 1, also
    followed by mixing), or the separate passes when eta is so large that
    capping shifts the level first (eta = 600) -- matches the reference's
    expected losses to 1e-9 and draws the same corners, in every version of
    the exp kernels the CPU runs (baseline, AVX2, AVX-512)."""
    n, k, T = 1000, 500, 150
    X = loss_stream(T, n, seed=77)
    kw = dict(eta=eta, sampler="systematic", random_state=5)
    if share:
        kw.update(share=share, alpha=1e-3)
    slow = ref.CappedHedge(n_components=k, **kw).fit(X)
    top = _kernels.cpu_level()
    for level in range(top + 1):
        with _kernels.tuning(cpu_level=level):  # the engine built here keeps it
            fast = opf.CappedHedge(n_components=k, **kw).fit(X)
        assert fast._engine[2].context.cpu_level == level
        assert_allclose(fast.expected_losses_, slow.expected_losses_, rtol=1e-9, atol=0)
        assert_allclose(fast.realized_losses_, slow.realized_losses_, rtol=1e-12, atol=0)
        assert_allclose(fast.weights_, slow.weights_, rtol=1e-9, atol=1e-300)
