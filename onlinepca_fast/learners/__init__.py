"""The online learners of Warmuth & Kuzmin, Kuzmin & Warmuth and Yuan &
Lamperski, as scikit-learn estimators.

One module per family: ``_experts`` (Hedge, CappedHedge), ``_pca``
(OnlinePCA, OnlineAdaptivePCA, and the projection API of every PCA
learner), ``_cumulative`` (CenteredOnlinePCA, FollowTheLeader),
``_variance`` (VarianceMinimizer, SimplexVarianceMinimizer),
``_kernel_pca`` (OnlineKernelPCA), over the shared estimator and engine
glue of ``_base`` and ``_trial_loop``; each learner holds a state object of ``_state`` (dense
or clustered) and a rate of ``_rates``.  :data:`ALL_LEARNERS` lists every
class.
"""

from .._validation import MAX_STEP
from ._base import NotFittedError, OnlineLearner
from ._experts import CappedHedge, Hedge
from ._kernel_pca import OnlineKernelPCA
from ._cumulative import CenteredOnlinePCA, FollowTheLeader
from ._pca import OnlineAdaptivePCA, OnlinePCA
from ._variance import SimplexVarianceMinimizer, VarianceMinimizer

#: Every learner class, in the order of the README's table.
ALL_LEARNERS = (Hedge, CappedHedge, OnlinePCA, OnlineAdaptivePCA, CenteredOnlinePCA,
                FollowTheLeader, VarianceMinimizer, SimplexVarianceMinimizer,
                OnlineKernelPCA)

__all__ = [cls.__name__ for cls in ALL_LEARNERS] + [
    "ALL_LEARNERS", "OnlineLearner", "NotFittedError", "MAX_STEP"]
