"""Atomic file writes: a reader sees the old file or the new one, never half.

    with atomic_path("runs/x/checkpoint.zip") as tmp:
        model.save(tmp)        # anything that writes a file at ``tmp``

The temporary file lies in the target's directory (same file system) and
keeps the target's extension (some writers add one otherwise). On success
it is fsynced, given the old file's permissions (0o644 for a new file) and
renamed over the target, and the directory is fsynced so that the rename
survives a crash. On any failure it is removed and the target is untouched.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[str]:
    """A temporary path to write, renamed over ``path`` when the block succeeds."""
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    base, ext = os.path.splitext(os.path.basename(target))
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=f".tmp{ext}", dir=directory)
    os.close(fd)
    try:
        yield tmp
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except OSError:
            mode = 0o644
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable (POSIX)
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
