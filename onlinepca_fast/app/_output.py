"""Where the command line writes, and how: never half a file.

Every output file is written to a temporary file beside it (a hidden name
that keeps the extension, from which matplotlib and pyarrow take the
format) and renamed onto its name with :func:`os.replace`, atomic within a
file system: an interrupted run (Ctrl-C) or a failed write (a full disk)
leaves the earlier file as it was and no partial one.  The command line
stages all the files of a run first (:class:`OutputFiles`) and renames them
together at the end, so that a folder never mixes the files of two runs.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Iterator

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


def _temporary(path: str) -> str:
    """A new empty file beside `path`, hidden, with the same extension."""
    folder, name = os.path.split(os.path.abspath(path))
    stem, ext = os.path.splitext(name)
    while True:
        tmp = os.path.join(folder, f".{stem}.{secrets.token_hex(4)}.tmp{ext}")
        try:  # O_EXCL: never another file of that name; 0o666: the umask decides
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return tmp


def _put_in_place(tmp: str, path: str) -> None:
    if os.path.isfile(path):  # as open(path, "w") would: the file keeps its mode
        shutil.copymode(path, tmp)
    os.replace(tmp, path)


def _remove(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[str]:
    """Yield a temporary path beside `path`; once the block has written it,
    rename it onto `path`.  If the block raises (Ctrl-C, a full disk), the
    temporary file is removed and `path` is as it was."""
    path = os.fspath(path)
    tmp = _temporary(path)
    try:
        yield tmp
        _put_in_place(tmp, path)
    except BaseException:
        _remove(tmp)
        raise


class WriteError(Exception):
    """An output file could not be written; the message names it and the cause."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while the files of a run were written; ``written`` lists those in place."""

    def __init__(self, written: list[str]) -> None:
        super().__init__()
        self.written = written


class OutputFiles:
    """The files of one run in one folder, put in place together.

    :meth:`path` gives the temporary file to write each output to;
    :meth:`commit` renames them all onto their names.  Used as a context
    manager: if the block raises, the temporary files and the folders made
    for them are removed, so the folder holds what it held before; an
    ``OSError`` becomes a :class:`WriteError` naming the file, a Ctrl-C an
    :class:`Interrupted` listing the files already in place (none unless it
    came between two renames of :meth:`commit`).
    """

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.written: list[str] = []  # the files in place
        self._staged: list[tuple[str, str]] = []  # (temporary file, its name)
        self._made: list[str] = []  # the folders made, outermost first
        self._current: str | None = None  # the file being written

    def path(self, name: str) -> str:
        """The temporary file to write the output `name` to (the folder is made if missing)."""
        final = os.path.join(self.directory, name)
        self._current = final
        self._make_folder()
        self._staged.append((_temporary(final), final))
        return self._staged[-1][0]

    def _make_folder(self):
        missing, where = [], os.path.abspath(self.directory)
        while not os.path.lexists(where):
            missing.append(where)
            where = os.path.dirname(where)
        for folder in reversed(missing):
            os.mkdir(folder)
            self._made.append(folder)

    def commit(self) -> list[str]:
        """Rename every file written onto its name; return their names."""
        for tmp, final in self._staged:
            self._current = final
            _put_in_place(tmp, final)
            self.written.append(final)
        self._staged = []
        return self.written

    def _discard(self):
        for tmp, _ in self._staged:
            _remove(tmp)
        self._staged = []
        for folder in reversed(self._made):
            with contextlib.suppress(OSError):  # (not empty: a file was put in place)
                os.rmdir(folder)

    def __enter__(self) -> OutputFiles:
        return self

    def __exit__(self, kind, exc, traceback):
        if exc is None:
            return None
        self._discard()
        if isinstance(exc, OSError):
            cause = exc.strerror or str(exc)
            raise WriteError(f"cannot write {self._current}: {cause}"
                             + (f" [Errno {exc.errno}]" if exc.errno else "")
                             + "; " + _outcome(self.written)) from exc
        if isinstance(exc, KeyboardInterrupt) and not isinstance(exc, Interrupted):
            raise Interrupted(list(self.written)) from None
        return None


def _outcome(written):
    if not written:
        return "no files were written (any earlier ones are as they were)"
    return "only " + ", ".join(written) + (" was" if len(written) == 1 else " were") + \
        " replaced"
