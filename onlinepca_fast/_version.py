"""The installed package's version (from its metadata)."""

from importlib.metadata import version

__version__ = version("onlinepca_fast")
