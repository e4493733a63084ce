"""Writes that fail part way (issue 35, items 8 and 9): a Ctrl-C or a full disk
while the command line writes its files, simulated in this process."""

import builtins
import errno
import os


def disk_full():
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class FailingFile:
    """A text or binary file whose writes raise `error` once `limit`
    characters are written, the part before the limit written and flushed
    (a full disk's truncated file, or Ctrl-C mid-write)."""

    def __init__(self, f, limit, error):
        self._f, self._left, self._error = f, limit, error

    def write(self, data):
        if len(data) > self._left:
            self._f.write(data[:self._left])
            self._f.flush()
            self._left = 0
            raise self._error
        self._left -= len(data)
        return self._f.write(data)

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self._f.close()


def failing_open(limit, error, which=lambda path: True):
    """An ``open`` whose files for writing, those of paths `which` accepts,
    fail after `limit` characters (to monkeypatch into a module)."""

    def open_(path, mode="r", *args, **kwargs):
        f = builtins.open(path, mode, *args, **kwargs)
        return FailingFile(f, limit, error) if "w" in mode and which(path) else f

    return open_


def snapshot(folder):
    """{name: bytes} of the files in `folder` (temporary files included)."""
    return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))}
