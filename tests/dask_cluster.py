"""A Dask client for the tests that run on a cluster (tests/test_parallel.py,
tests/test_sweep.py): two worker processes of one thread each on the
loopback, no dashboard, so that no test needs the network."""

import contextlib
import sys


@contextlib.contextmanager
def local_client(by_value=None):
    """A ``distributed.Client`` of a fresh two-process LocalCluster, closed
    (client, then cluster) on exit.

    ``by_value``: the name of a test module whose functions the workers cannot
    import; cloudpickle ships it by value while the client runs (and stops
    doing so on exit unless it already did on entry).
    """
    import distributed

    registered = True
    if by_value is not None:
        import cloudpickle

        module = sys.modules[by_value]
        registered = module.__name__ in cloudpickle.list_registry_pickle_by_value()
        cloudpickle.register_pickle_by_value(module)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=":0")
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
        if not registered:
            cloudpickle.unregister_pickle_by_value(module)
