"""The old paths of the modules that moved into :mod:`onlinepca_fast.app`.

``onlinepca_fast.experiments``, ``.sweep``, ``.plotting`` and ``.bench``
moved in 0.2.0; each old module is an alias that forwards every name to the
new one with a ``DeprecationWarning`` (removed in 0.3.0).  Nothing imports
the aliases, so ``import onlinepca_fast`` still loads no module of the
application.
"""

import importlib
import warnings


def alias(old, new):
    """The module ``__getattr__`` and ``__dir__`` of the deprecated module `old`,
    which forward to the module `new`."""

    def __getattr__(name):
        if name.startswith("__") and name != "__all__":  # e.g. __wrapped__, __path__
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        try:
            value = getattr(importlib.import_module(new), name)
        except AttributeError:
            raise AttributeError(f"module {old!r} has no attribute {name!r}") from None
        warnings.warn(f"{old} moved to {new} in 0.2.0 and the old path will be removed in "
                      f"0.3.0: import {name} from {new}", DeprecationWarning, stacklevel=2)
        return value

    def __dir__():
        return sorted(getattr(importlib.import_module(new), "__all__", ()))

    return __getattr__, __dir__
