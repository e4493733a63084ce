"""``state="auto"`` chooses the representation by m (issue 22 item 2, issue
23): dense once m >= hi, clustered again once capping collapses m to <= lo,
at every n, and the change lands after a trial fixed by the data alone.

Oracles: the same learner fitted another way (one batch, batches of 7,
learn_one per row, a pickle round trip every 7 rows, compiled chunks of one
trial, an interrupted and resumed fit) must give bit-identical losses and
state; the NumPy reference (eigh every trial) gives the trajectory to 1e-9;
the switch points are checked against ``explicit_count`` / ``auto_bounds``
evaluated on the state.
"""

import pickle

import numpy as np
import pytest
from learner_cases import unit_ball
from numpy.testing import assert_allclose, assert_array_equal

import onlinepca_fast as opf
from onlinepca_fast import _guard, reference
from onlinepca_fast.learners import _state, _trial_loop
from onlinepca_fast.learners._state import auto_bounds

N = 120


def two_phase_stream(n=N, seed=0):
    """Isotropic rows at a small eta (m grows to n: the state turns dense),
    then rows of rank 8 at a large eta (capping collapses m to 5 <= lo: the
    state turns clustered again)."""
    rng = np.random.default_rng(seed)
    Y = unit_ball(rng.standard_normal((200, n)))
    Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    B = np.linalg.qr(rng.standard_normal((n, 8)))[0]
    L = rng.standard_normal((160, 8)) @ B.T
    L /= np.linalg.norm(L, axis=1, keepdims=True)
    return Y, L


class Switches:
    """Records (kind, trials done, m) at each representation change."""

    def __init__(self, monkeypatch):
        self.log = []
        switch = _trial_loop.TrialLoopLearner._switch_if_due

        def logged(learner, plan):
            before = learner._state
            switch(learner, plan)
            if learner._state is not before:
                kind = "clustered" if learner._state.clustered else "dense"
                self.log.append((kind, int(learner._t[0]), before.explicit))

        monkeypatch.setattr(_trial_loop.TrialLoopLearner, "_switch_if_due", logged)


PLAIN_WAYS = ["one batch", "batches of 7", "learn_one", "pickle every 7"]


def feed(learner, X, how):
    """Feeds X to the learner one of the ``PLAIN_WAYS``; returns the learner
    (another object after a pickle round trip)."""
    if how == "one batch":
        learner.partial_fit(X)
    elif how == "learn_one":
        for x in X:
            learner.learn_one(x)
    else:
        for i in range(0, len(X), 7):
            if how == "pickle every 7":
                learner = pickle.loads(pickle.dumps(learner))
            learner.partial_fit(X[i:i + 7])
    return learner


def fit_two_phase(how, Y, L, make, interrupt_at=None, monkeypatch=None):
    learner = make()
    rows = [(Y, 0.01), (L, 300.0)]
    for part, eta in rows:
        learner.set_params(eta=eta)
        if how in PLAIN_WAYS:
            learner = feed(learner, part, how)
        elif how == "chunks of one trial":
            monkeypatch.setattr(_guard, "CHUNK_SECONDS", 0.0)
            learner.partial_fit(part)
        elif how == "interrupted":
            start = int(learner._t[0]) if "_t" in learner.__dict__ else 0
            calls = [0]
            original = type(learner)._engine_for

            def interrupting(self, plan):
                calls[0] += 1
                if calls[0] == interrupt_at:
                    raise KeyboardInterrupt
                return original(self, plan)

            monkeypatch.setattr(_guard, "CHUNK_SECONDS", 0.0)
            monkeypatch.setattr(type(learner), "_engine_for", interrupting)
            with pytest.raises(KeyboardInterrupt):
                learner.partial_fit(part)
            monkeypatch.setattr(type(learner), "_engine_for", original)
            monkeypatch.setattr(_guard, "CHUNK_SECONDS", 0.02)
            done = learner.n_trials_ - start
            assert 0 < done < len(part)
            learner.partial_fit(part[done:])  # resume where it stopped
    return learner


WAYS = ["batches of 7", "learn_one", "pickle every 7", "chunks of one trial", "interrupted"]


def same(a, b):
    assert a.n_trials_ == b.n_trials_
    assert_array_equal(a.expected_losses_, b.expected_losses_)
    assert_array_equal(a.realized_losses_, b.realized_losses_)
    assert a._state.clustered == b._state.clustered
    assert_array_equal(a.eigenvalues_, b.eigenvalues_)
    assert_array_equal(a.eigenvectors_, b.eigenvectors_)


@pytest.mark.parametrize("how", WAYS)
def test_online_pca_switches_both_ways_at_the_same_trial_however_it_is_fed(how, monkeypatch):
    Y, L = two_phase_stream()
    switches = Switches(monkeypatch)
    make = lambda: opf.OnlinePCA(5, eta=0.01, random_state=0)  # noqa: E731
    base = fit_two_phase("one batch", Y, L, make)
    lo, hi = auto_bounds(N)
    assert switches.log == [("dense", hi, hi), ("clustered", switches.log[1][1], 5)]
    assert len(Y) < switches.log[1][1] < len(Y) + len(L) and 5 <= lo
    first = list(switches.log)
    switches.log.clear()
    other = fit_two_phase(how, Y, L, make, interrupt_at=4, monkeypatch=monkeypatch)
    assert switches.log == first
    same(other, base)
    assert base._state.clustered and base.cluster_multiplicity_ >= N - hi


@pytest.mark.parametrize("how", ["batches of 7", "learn_one", "pickle every 7",
                                 "pickled where the change is due"])
def test_centered_pca_turns_dense_at_the_same_trial_however_it_is_fed(how, monkeypatch):
    """The issue's case (CenteredOnlinePCA fitted twice differed from trial
    247 on), at n = 120: clustered until m = hi, dense from there."""
    rng = np.random.default_rng(1)
    X = unit_ball(rng.standard_normal((auto_bounds(N)[1] + 30, N)) * np.arange(1, N + 1) ** -0.7)
    switches = Switches(monkeypatch)
    make = lambda: opf.CenteredOnlinePCA(10, eta=1.0, random_state=0)  # noqa: E731
    base = make().fit(X)
    lo, hi = auto_bounds(N)
    # m = t - 1 while rows are generic (the first trial only sets the center)
    assert switches.log == [("dense", hi + 1, hi)]
    switches.log.clear()
    other = make()
    if how in PLAIN_WAYS:
        other = feed(other, X, how)
    else:
        other.partial_fit(X[:hi + 1])  # ends on the trial that makes dense due
        assert not other._state.clustered  # changed before the call returned
        other = pickle.loads(pickle.dumps(other))
        other.partial_fit(X[hi + 1:])
    assert switches.log == [("dense", hi + 1, hi)]
    same(other, base)
    assert_array_equal(other.mean_, base.mean_)


def test_auto_trajectory_matches_the_reference_through_both_switches():
    Y, L = two_phase_stream()
    fast = opf.OnlinePCA(5, eta=0.01, random_state=0)
    slow = reference.OnlinePCA(5, eta=0.01, random_state=0)
    for part, eta in [(Y, 0.01), (L, 300.0)]:
        fast.set_params(eta=eta)
        slow.eta = eta
        fast.partial_fit(part)
        slow.partial_fit(part)
    assert fast._state.clustered
    assert_allclose(fast.expected_losses_, slow.expected_losses_, rtol=0, atol=1e-9)
    values = fast.full_eigensystem()[0]
    assert_allclose(np.sort(values), slow.eigenvalues_, rtol=0, atol=1e-9)


@pytest.mark.parametrize("n", [50, 100, 200, 1000])
def test_auto_chooses_by_m_at_every_n(n):
    """Clustered from the start wherever it is at least as fast at small m
    (every n from 80 on), dense below; lo < hi (hysteresis)."""
    lo, hi = auto_bounds(n)
    assert lo < hi
    rng = np.random.default_rng(0)
    learner = opf.OnlinePCA(2, eta=1.0, random_state=0).fit(unit_ball(rng.standard_normal((2, n))))
    assert learner._state.clustered == (n >= _state.AUTO_DENSE_BELOW)
    assert learner._state.clustered == (hi > 0)
    past = opf.OnlinePCA(2, share="past", alpha=0.1).fit(unit_ball(rng.standard_normal((1, n))))
    assert not past._state.clustered  # share="past" keeps the dense state


def test_auto_never_forms_a_dense_state_for_a_large_n():
    lo, hi = auto_bounds(_state.MAX_DENSE + 1)
    assert hi > _state.MAX_DENSE + 1  # never dense
