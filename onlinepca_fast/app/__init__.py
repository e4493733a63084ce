"""The application: the command line and the papers' experiments, built on the library.

``import onlinepca_fast`` loads none of these modules, and nothing in the
library imports them.

Submodules
----------
cli
    The command line, ``onlinepca-fast`` / ``python -m onlinepca_fast``.
experiments
    The papers' experiments as functions returning a result dict.
results
    A result as the command line's table, CSV and JSON files.
plotting
    Cumulative loss and regret curves (needs matplotlib).
sweep
    Learners x parameters x seeds x data sets, one table.
bench
    Per-trial times against the reference, and the benchmarks' workloads
    and timers.
selfcheck
    The compiled code against the NumPy reference, for ``onlinepca-fast
    selfcheck``.
"""
