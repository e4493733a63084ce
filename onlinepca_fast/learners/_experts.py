"""Learning from expert advice: Hedge (WK Algorithm 1) and capped Hedge (WK
Algorithm 3, YL Algorithm 1 with fixed share).

The papers (WK, YL) are cited in full in the README's references.
"""

from __future__ import annotations

import math

from .. import _kernels
from .._docs import fill_doc
from .._typing import FloatArray, IndexArray, Sampler, SeedLike, Share
from .._validation import store_params
from ._base import CAPPED_MIXING, SAMPLERS, SHARES, reads_state
from ._trial_loop import TrialLoopLearner
from ._rates import Mixing, Rate

__all__ = ["Hedge", "CappedHedge"]


@fill_doc
class _Experts(TrialLoopLearner):
    """Weights over n experts, capped at 1/d; loss vectors in [0, 1]^n (the
    dense state's weights without a basis)."""

    _constraints = CAPPED_MIXING
    _basis = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True  # loss vectors in [0, 1]
        return tags

    def _engine_options(self, p, n):
        return dict(kind=_kernels.KIND_EXPERTS, d=self._corner_size(n), **Rate(p["eta"]).fields(),
                    **Mixing(p["alpha"]).fields(), share=SHARES[p["share"]],
                    sampler=SAMPLERS[p["sampler"]])

    def _short_path_region(self, config, rate):
        return 0.0, 1.0, math.inf, math.inf

    def _check_values(self, X, name, matrix, lo, hi):
        if lo < 0:  # scikit-learn's wording for the positive_only tag
            raise ValueError(f"Negative values in data passed to {name}: {name} must hold "
                             f"loss vectors in [0, 1], got values in [{lo!r}, {hi!r}]")
        if hi > 1:
            raise ValueError(f"{name} must hold loss vectors in [0, 1], got values in "
                             f"[{lo!r}, {hi!r}]")

    @property
    @reads_state
    def weights_(self) -> FloatArray:
        """The current weight vector (sums to one, capped at 1/(n-k))."""
        self._check_fitted()
        return self._state.weights(self._corner_size(self.n_features_in_))

    @reads_state
    def sample_corner(self, random_state: SeedLike = None) -> IndexArray:
        """Draw the set of ``n - k`` experts of a trial (sorted indices).

        %(draw_parameters)s

        Returns
        -------
        corner : ndarray of shape (n - k,), dtype intp
            The drawn experts, sorted.
        """
        self._check_fitted()
        return self._state.corner(self._corner_size(self.n_features_in_),
                                  self._draw_rng(random_state), self.sampler)


@fill_doc
class CappedHedge(_Experts):
    """Capped Hedge: learning as well as the best subset of experts (WK Alg. 3).

    Keeps a weight vector ``w`` in the capped simplex (entries at most
    ``1/(n-k)``).  Each trial draws a corner: a set of ``d = n - k`` experts
    whose losses are incurred (equivalently, the k experts outside it are
    "compressed"), with inclusion probabilities ``d w_i``; then::

        w <- cap_{n-k}( w * exp(-eta l) / sum_j w_j exp(-eta l_j) )

    (WK and YL print the normaliser as ``sum_j exp(-eta l_j)``; that is a
    typo -- it must make the result a distribution, as the text says.)

    Parameters
    ----------
    n_components : int
        The number k of experts left out of the corner, ``1 <= k < n``;
        the learner competes with the best set of ``n - k`` experts.
    %(eta_adahedge)s
    share : {None, "fixed", "uniform", "past"}, default=None
        ``"fixed"``: YL Algorithm 1, eq. (4b), before capping;
        ``"uniform"`` / ``"past"``: WK Section 8 mixing of the uniform vector
        / the average of past weight vectors, after capping.
    %(alpha_mixing)s
    %(draws_and_records)s

    Attributes
    ----------
    weights_ : ndarray of shape (n,)
        The capped weight vector.
    expected_losses_, realized_losses_ : ndarray of shape (n_trials,)
        ``(n-k) w.l`` and the summed loss of the drawn corner.
    n_features_in_, n_trials_, n_samples_seen_ : int

    References
    ----------
    WK Algorithm 3, Theorem 3; YL Algorithm 1 and Theorem 1.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import CappedHedge
    >>> L = np.tile([0.9, 0.1, 0.5, 0.2], (200, 1))
    >>> h = CappedHedge(n_components=2, random_state=0).fit(L)
    >>> np.round(h.weights_, 3)
    array([0. , 0.5, 0. , 0.5])
    """

    def __init__(self, n_components: int, *, eta: float | str = "auto", share: Share = None,
                 alpha: float | str = 0.0, sampler: Sampler = "decomposition",
                 random_state: SeedLike = None, record_losses: bool = True) -> None:
        store_params(self, locals())

    def _params(self, n):
        if n < 2:
            raise ValueError(f"CappedHedge needs at least 2 experts, got {n}")
        return super()._params(n)

    def _corner_size(self, n):
        return n - self.n_components


@fill_doc
class Hedge(_Experts):
    """Hedge: the randomized weighted majority over n experts (WK Algorithm 1).

    :class:`CappedHedge` with ``k = n - 1``: one expert is drawn with
    probability ``w_i`` and ``w <- w exp(-eta l) / normaliser``.

    Parameters
    ----------
    %(eta_adahedge)s
    share : {None, "fixed", "uniform", "past"}, default=None
        ``"fixed"`` is the fixed-share algorithm (Herbster & Warmuth; YL
        Alg. 1 with k = n - 1).
    %(alpha_mixing)s
    %(draws_and_records)s

    Attributes
    ----------
    weights_, expected_losses_, realized_losses_, n_features_in_, n_trials_

    References
    ----------
    WK Algorithm 1, Theorem 1.

    Examples
    --------
    >>> import numpy as np
    >>> from onlinepca_fast import Hedge
    >>> L = np.tile([0.9, 0.1, 0.5], (50, 1))
    >>> int(np.argmax(Hedge(random_state=0).fit(L).weights_))
    1
    """

    _constraints = {k: v for k, v in _Experts._constraints.items() if k != "n_components"}

    def __init__(self, *, eta: float | str = "auto", share: Share = None, alpha: float | str = 0.0,
                 sampler: Sampler = "decomposition", random_state: SeedLike = None,
                 record_losses: bool = True) -> None:
        store_params(self, locals())

    def _corner_size(self, n):
        return 1
