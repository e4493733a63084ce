"""Per-call cost of learn_one (array row and river dict) against the per-row cost of partial_fit.

Usage: ``python benchmarks/ratios_learn_one.py [--n 20] [--rows 2000] [--repeats 7]``.

For OnlinePCA, OnlineAdaptivePCA and CenteredOnlinePCA at n = 20, k = 2 on
the WK Sec. 8 stream, from the same warmed-up state and over the same rows:

- ``batch``: seconds per row inside one ``partial_fit`` of all the rows;
- ``learn_one``: seconds per call of the array learner's ``learn_one(row)``;
- ``river``: seconds per call of ``onlinepca_fast.river``'s
  ``learn_one(dict)``;

and the ratios to ``batch``.  Target (issue 17): both ratios at most 2.
Both calls take the learner's short compiled path (``_kernels.RowPath``:
the row or the dict's values copied, checked and run in one call).
One run, one BLAS thread, best of ``--repeats``.
"""

import argparse
import copy
import time

import numpy as np
from threadpoolctl import threadpool_limits

import onlinepca_fast as opf
from onlinepca_fast.datasets import shifting_subspaces

LEARNERS = ("OnlinePCA", "OnlineAdaptivePCA", "CenteredOnlinePCA")
WARMUP = 50


def best_of(repeats, cases):
    """Smallest time of each ``run(setup())`` of ``cases`` over `repeats` rounds.

    The cases take turns within each round, so that a slow spell of the
    shared machine hits all of them alike.
    """
    best = [float("inf")] * len(cases)
    for _ in range(repeats):
        for i, (setup, run) in enumerate(cases):
            state = setup()
            start = time.perf_counter()
            run(state)
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def measure(name, X, repeats):
    """(batch s/row, array learn_one s/call, river learn_one s/call) (the
    last None without river)."""
    try:
        from onlinepca_fast import river as opr
    except ImportError:
        opr = None
    head, rows = X[:WARMUP], X[WARMUP:]
    T, n = rows.shape
    warm = getattr(opf, name)(n_components=2, random_state=0).partial_fit(head)
    row_list = [np.array(r) for r in rows]   # own 1-D arrays, as a stream delivers them

    def batch(learner):
        learner.partial_fit(rows)

    def one_by_one(learner):
        learn_one = learner.learn_one
        for r in row_list:
            learn_one(r)

    cases = [(lambda: copy.deepcopy(warm), batch), (lambda: copy.deepcopy(warm), one_by_one)]
    if opr is not None:
        keys = [f"x{j}" for j in range(n)]
        model = getattr(opr, name)(n_components=2, random_state=0)
        for r in head:
            model.learn_one(dict(zip(keys, r.tolist())))
        dicts = [dict(zip(keys, r.tolist())) for r in rows]

        def dict_by_dict(m):
            learn_one = m.learn_one
            for x in dicts:
                learn_one(x)

        cases.append((lambda: copy.deepcopy(model), dict_by_dict))
        # the river transformer runs the same trials as the array learner
        check = copy.deepcopy(model)
        dict_by_dict(check)
        ref = copy.deepcopy(warm).partial_fit(rows)
        if not np.array_equal(check.learner.expected_losses_, ref.expected_losses_):
            raise AssertionError(f"{name}: river and array learner disagree")
    times = [t / T for t in best_of(repeats, cases)]
    return tuple(times) if opr is not None else (times[0], times[1], None)


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Prints microseconds per row/call and the ratios to the batch cost.")
    parser.add_argument("--n", type=int, default=20, help="dimension n (default 20), k = 2")
    parser.add_argument("--rows", type=int, default=2000,
                        help="rows timed per measurement (default 2000)")
    parser.add_argument("--repeats", type=int, default=7,
                        help="measurements per figure, the best is kept (default 7)")
    args = parser.parse_args(argv)
    if args.n < 3 or args.rows < 1 or args.repeats < 1:
        parser.error("need --n >= 3, --rows >= 1, --repeats >= 1")

    X, _ = shifting_subspaces(args.n, 2, (args.rows + WARMUP,), random_state=0)
    print(f"n = {args.n}, k = 2, {args.rows} rows, best of {args.repeats}, one BLAS thread")
    print(f"{'learner':<20} {'batch us/row':>13} {'learn_one us':>13} {'river us':>10} "
          f"{'learn_one/batch':>16} {'river/batch':>12}")
    with threadpool_limits(limits=1, user_api="blas"):
        for name in LEARNERS:
            t_batch, t_one, t_dict = measure(name, X, args.repeats)
            river = (f"{t_dict * 1e6:>10.2f}", f"{t_dict / t_batch:>11.1f}x") \
                if t_dict is not None else (f"{'-':>10}", f"{'(no river)':>12}")
            print(f"{name:<20} {t_batch * 1e6:>13.2f} {t_one * 1e6:>13.2f} {river[0]} "
                  f"{t_one / t_batch:>15.1f}x {river[1]}")
    print("target: learn_one/batch and river/batch at most 2x")


if __name__ == "__main__":
    main()
