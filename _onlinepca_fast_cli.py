"""The ``onlinepca-fast`` console script: :func:`onlinepca_fast.app.cli.main`,
reached from outside the package.

Importing ``onlinepca_fast`` loads NumPy, SciPy, scikit-learn and the
compiled core, a second or two in which a Ctrl-C used to print a traceback
from deep inside those imports: a console script's module is imported
before any of its code runs, and any module of the package imports the
package first.  This module imports nothing but ``sys``, so it can catch that
Ctrl-C: one line, exit status 130.  (``python -m onlinepca_fast`` loads the
package before its ``__main__`` runs: there the catch begins once the
package is loaded.)
"""

import sys


def main() -> int:
    """Run the command line; a Ctrl-C while it loads is one line, status 130."""
    try:
        from onlinepca_fast.app.cli import main as run
    except KeyboardInterrupt:
        print("onlinepca-fast: interrupted while starting; nothing was run or written",
              file=sys.stderr)
        return 130
    return run()
