"""Atomic file writes: a reader sees the old file or the new one, never half.

    with atomic_path("runs/x/checkpoint.zip") as tmp:
        model.save(tmp)        # anything that writes a file at ``tmp``

The temporary file lies in the target's directory (same file system) and
keeps the target's extension (some writers add one otherwise). On success
it is fsynced, given the old file's permissions (0o644 for a new file) and
renamed over the target, and the directory is fsynced so that the rename
survives a crash. On any failure it is removed and the target is untouched.

Temporary files are named ``.<name>.<pid>.<random>.tmp<ext>`` after the
writing process. A process killed mid-write cannot remove its own, so every
write first sweeps the directory of such files whose process is gone
(:func:`sweep_stale`): leftovers never pile up.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Iterator

# .<name>.<pid>.<random>.tmp<ext>: a temporary file of atomic_path
_TEMP_NAME = re.compile(r"^\..+\.(\d+)\.[A-Za-z0-9_]+\.tmp(\.[^./]+)?$")


def _alive(pid: int) -> bool:
    """Whether a process with this id exists (on this machine)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # exists (another user's) or cannot tell: keep its files
    return True


def sweep_stale(directory: str | os.PathLike[str]) -> list[str]:
    """Remove this module's temporary files in ``directory`` whose writer process is gone; their paths."""
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        match = _TEMP_NAME.match(name)
        if match is None or _alive(int(match.group(1))):
            continue
        path = os.path.join(directory, name)
        with contextlib.suppress(OSError):
            os.unlink(path)
            removed.append(path)
    return removed


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[str]:
    """A temporary path to write, renamed over ``path`` when the block succeeds."""
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    base, ext = os.path.splitext(os.path.basename(target))
    sweep_stale(directory)
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.{os.getpid()}.", suffix=f".tmp{ext}", dir=directory)
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


def atomic_copy(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Copy ``source`` to ``target`` atomically (a reader sees the old target or the whole copy)."""
    import shutil

    with atomic_path(target) as tmp:
        shutil.copyfile(source, tmp)
