# The settings of the compiled kernels that travel with a call (included by
# _kernels.pyx after _LAPACK): src/common.h's opf_tuning, inside the
# opf_lapack table every kernel is handed.  Nothing in src/ holds a setting
# of its own, so two threads, updaters or learners never see each other's.
#
# A Context owns one table.  New objects (RankOneUpdater, the learners'
# engines) and calls take the current one -- the default unless a
# ``with tuning(...)`` block of this thread (contextvars: each thread and
# task has its own) says otherwise -- and keep it for their lifetime.

import contextlib
import contextvars

_PRODUCTS = {"auto": OPF_PRODUCT_AUTO, "dense": OPF_PRODUCT_DENSE,
             "structured": OPF_PRODUCT_STRUCTURED}
_PRODUCT_NAMES = {code: name for name, code in _PRODUCTS.items()}


cdef class Context:
    """The BLAS/LAPACK table and the settings one caller's kernels run with.

    Immutable (:meth:`replace` makes a new one), except for a counter of
    the hierarchical eigenvector products done with it
    (:attr:`n_structured`; only contexts made by :meth:`replace` count).
    """
    cdef opf_lapack fns
    cdef long long count

    def __cinit__(self):
        self.fns = _LAPACK
        self.fns.n_structured = NULL

    def replace(self, *, product=None, min_order=None, leaf=None, decline=None,
                cpu_level=None):
        """A new context with the given settings changed (None keeps one).

        ``product``: "auto" (the hierarchical eigenvector product from
        ``min_order`` non-deflated eigenvalues on), "dense" (always one
        GEMM) or "structured" (hierarchical wherever it applies);
        ``min_order`` (>= 0) and ``leaf`` (``OPF_HODLR_LEAF_MIN`` to
        ``OPF_HODLR_LEAF``): the crossover and the leaf size of
        ``src/hodlr.c``; ``decline``: testing, every hierarchical product
        declines; ``cpu_level``: the highest instruction-set version of the
        exp kernels (-1: the CPU's best)."""
        cdef Context out = Context.__new__(Context)
        out.fns = self.fns
        out.count = 0
        out.fns.n_structured = &out.count
        if product is not None:
            out.fns.tune.product = _product_code(product)
        if min_order is not None:
            if not isinstance(min_order, int) or min_order < 0:
                raise ValueError(f"min_order must be an int >= 0, got {min_order!r}")
            out.fns.tune.min_order = min_order
        if leaf is not None:
            if not isinstance(leaf, int) or not OPF_HODLR_LEAF_MIN <= leaf <= OPF_HODLR_LEAF:
                raise ValueError(f"leaf must be in [{OPF_HODLR_LEAF_MIN}, "
                                 f"{OPF_HODLR_LEAF}], got {leaf!r}")
            out.fns.tune.leaf = leaf
        if decline is not None:
            out.fns.tune.decline = bool(decline)
        if cpu_level is not None:
            if cpu_level not in (-1, 0, 1, 2):
                raise ValueError(f"cpu_level must be -1, 0, 1 or 2, got {cpu_level!r}")
            out.fns.tune.cpu_level = cpu_level
        return out

    @property
    def product(self):
        """"auto", "dense" or "structured"."""
        return _PRODUCT_NAMES[self.fns.tune.product]

    @property
    def min_order(self):
        """The hierarchical product's crossover order."""
        return self.fns.tune.min_order

    @property
    def leaf(self):
        """The hierarchy's largest leaf."""
        return self.fns.tune.leaf

    @property
    def decline(self):
        """Testing: whether every hierarchical product declines."""
        return bool(self.fns.tune.decline)

    @property
    def cpu_level(self):
        """The instruction-set version the exp kernels run under this
        context (the CPU's best unless a lower one was asked for)."""
        return opf_cpu_use(self.fns.tune.cpu_level)

    @property
    def n_structured(self):
        """Hierarchical eigenvector products done with this context."""
        return self.count


cdef int _product_code(object product) except -1:
    if not isinstance(product, str) or product not in _PRODUCTS:
        raise ValueError(f"product must be one of {sorted(_PRODUCTS)}, got {product!r}")
    return _PRODUCTS[product]


_DEFAULT_CONTEXT = Context()
_current = contextvars.ContextVar("onlinepca_fast_kernel_context",
                                  default=_DEFAULT_CONTEXT)


def current_context():
    """The context new objects and calls of this thread take."""
    return _current.get()


cdef Context _context_for(object product):
    """The current context, with `product` unless that is "auto" (the
    current context's product, itself "auto" unless a tuning block of this
    thread changed it)."""
    cdef Context ctx = _current.get()
    if product == "auto":
        return ctx
    _product_code(product)
    return ctx.replace(product=product)


@contextlib.contextmanager
def tuning(**changes):
    """Within the block, new objects and calls of this thread take the
    current context with `changes` (:meth:`Context.replace`); yields that
    context (its ``n_structured`` counts their hierarchical products).
    For tests, benchmarks and the deprecated
    ``kernels.dense_eigenvector_product``."""
    ctx = _current.get().replace(**changes)
    token = _current.set(ctx)
    try:
        yield ctx
    finally:
        _current.reset(token)


def cpu_level():
    """The instruction set the exp kernels use in this thread's context: 2
    AVX-512 + FMA, 1 AVX2 + FMA, 0 the baseline (src/vexp.h)."""
    return (<Context>_current.get()).cpu_level


def detected_cpu_level():
    """The CPU's best instruction-set level (src/vexp.h)."""
    return opf_cpu_level()
