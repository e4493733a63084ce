"""Deprecated: moved to :mod:`onlinepca_fast.app.sweep` (0.2.0; this alias goes in 0.3.0)."""

from ._moved import alias

__getattr__, __dir__ = alias(__name__, "onlinepca_fast.app.sweep")
