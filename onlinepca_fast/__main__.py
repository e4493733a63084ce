"""``python -m onlinepca_fast``: the command line, :func:`onlinepca_fast.app.cli.main`."""

import sys

from .app.cli import main

if __name__ == "__main__":
    sys.exit(main())
