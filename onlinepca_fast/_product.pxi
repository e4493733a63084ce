# The hierarchical eigenvector product (included by _kernels.pyx):
# src/hodlr.h.  Its settings travel in a Context (_context.pxi).

#: Orders from which the eigenvector product is hierarchical (src/hodlr.h).
STRUCTURED_PRODUCT_MIN = OPF_HODLR_MIN
#: The range of the leaf size a context may set (src/hodlr.h).
STRUCTURED_LEAF_RANGE = (OPF_HODLR_LEAF_MIN, OPF_HODLR_LEAF)


_product_scratch = threading.local()


def _hierarchical_product(s, g, bint apply=True, out=None):
    """Benchmarks and tests: ``G @ S`` by the hierarchical product alone
    (src/hodlr.c), S the secular eigenvector matrix of an update (ks x K,
    K - ks in {0, 1}, at least twice the leaf size), G (nr x ks), with the
    current context's leaf size.

    Returns ``(out, stats)``: out is None when ``apply`` is False (only the
    compression is done, so that it can be timed apart) and stats holds the
    blocks' count, levels and ranks and the flops of the dense leaves and
    of the low-rank applications.  Raises RuntimeError when the product
    declines (the update would then do one GEMM).  ``out``: an nr x K
    C-contiguous float64 array to write into (so that a timing does not
    include its allocation).  The GIL is released."""
    cdef double[::1, :] sv = np.asfortranarray(s, dtype=np.float64)
    cdef double[:, ::1] gv = np.ascontiguousarray(g, dtype=np.float64)
    cdef int ks = sv.shape[0], K = sv.shape[1], nr = gv.shape[0]
    if gv.shape[1] != ks:
        raise ValueError(f"g must have {ks} columns (the rows of s), got {gv.shape[1]}")
    if K - ks not in (0, 1) or nr < 1:
        raise ValueError(f"s must be ks x ks or ks x (ks + 1) and g non-empty, "
                         f"got s {sv.shape[0]} x {K}, g {nr} x {gv.shape[1]}")
    if out is None:
        out = np.empty((nr, K))
    elif out.shape != (nr, K):
        raise ValueError(f"out must be {nr} x {K}, got {out.shape}")
    cdef double[:, ::1] ov = out
    # the workspace is kept per thread, so that a timing does not include
    # the page faults of a fresh allocation (tens of MB at n = 4000)
    cdef size_t wlen = opf_hodlr_work_len(nr, K)
    buf = getattr(_product_scratch, "work", None)
    if buf is None or buf.shape[0] < wlen:
        buf = _product_scratch.work = np.empty(wlen)
    cdef double[::1] work = buf
    cdef opf_hodlr_stats st
    cdef Context ctx = _current.get()
    cdef opf_lapack fns = ctx.fns
    cdef int done
    with nogil:
        done = opf_hodlr_profile(nr, ks, K, &sv[0, 0], ks, &gv[0, 0], ks,
                                 &ov[0, 0], K, &work[0], &fns, apply, &st)
    if not done:
        raise RuntimeError("the hierarchical product declined (too small, "
                           "or a block missed its tolerance or its check)")
    return (out if apply else None,
            {"n_blocks": st.n_blocks, "levels": st.levels,
             "mean_rank": st.rank_sum / max(st.n_blocks, 1),
             "max_rank": int(st.rank_max), "leaf_flops": st.leaf_flops,
             "lowrank_flops": st.lowrank_flops})
