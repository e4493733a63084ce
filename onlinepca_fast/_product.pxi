# The hierarchical eigenvector product's switches (included by _kernels.pyx):
# src/hodlr.h

#: Orders from which the eigenvector product is hierarchical (src/hodlr.h).
STRUCTURED_PRODUCT_MIN = OPF_HODLR_MIN


def set_dense_product(bint on):
    """Process-wide: force (True) or stop forcing (False) the dense GEMM for
    the eigenvector product of every rank-one and bordered update."""
    opf_set_dense_product(on)


def dense_product():
    """Whether the dense eigenvector product is forced (set_dense_product)."""
    return bool(opf_dense_product())


def _structured_product_count():
    """Tests only: structured eigenvector products done so far in this
    process (every update, learners included)."""
    return opf_hodlr_count()


def _structured_product_tuning(int min_order=-1, int leaf=-1, int decline=-1):
    """Tests only: set the hierarchical product's crossover order, leaf
    size and a switch that makes it always decline (-1 keeps a value);
    returns the previous (min_order, leaf, decline).  Process-wide: call
    it with no update running."""
    cdef int m0, l0, d0
    opf_hodlr_tuning(&m0, &l0, &d0)
    if leaf != -1 and leaf < 16:
        raise ValueError(f"leaf must be >= 16, got {leaf}")
    opf_hodlr_tune(min_order, leaf, decline)
    return m0, l0, d0
