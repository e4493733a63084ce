"""Where the command line writes: the output folder checked before a run."""

from __future__ import annotations

import os

_PROG = "onlinepca-fast"


def check_output(directory: str, files: tuple[str, ...] | list[str] = ()) -> str | None:
    """None if `files` can be written into `directory`, else why not.

    Nothing is created: the directory, or the nearest of its parents that
    exists, must take a file (a probe file is written and removed), so that
    a run that ends up writing nothing leaves nothing behind; each of the
    `files` that already exists there must be a writable regular file (not
    a directory), so that writing cannot fail after the computation.
    """
    where = os.path.abspath(directory)
    while not os.path.lexists(where):
        where = os.path.dirname(where)
    try:
        if not os.path.isdir(where):
            raise NotADirectoryError(f"{where} is not a directory")
        probe = os.path.join(where, f".{_PROG}-write-test-{os.getpid()}")
        with open(probe, "w"):
            pass
        os.remove(probe)
    except OSError as exc:
        return (f"--output {directory!r} is not a writable directory "
                f"({exc.strerror or exc})")
    for name in files:
        path = os.path.join(directory, name)
        if not os.path.lexists(path):
            continue
        if not os.path.isfile(path):
            return (f"--output {directory!r} holds {name!r}, which is not a file: it "
                    f"cannot be replaced by the output file of that name")
        if not os.access(path, os.W_OK):
            return f"--output {directory!r}: the existing file {name!r} is not writable"
    return None
