"""Output paths: the one check of a path a command is to write (a file or a folder), made before any work.

    check_output_path(args.out, "--out")                   # a file: a record, a policy, a JSON report
    check_output_path(args.run_dir, "--run-dir", folder=True)

Refused, in one :class:`OutputPathError` naming the option (or config key), the path and why:

- a path under a regular file (``FILE/sub``: the folder cannot be made);
- a path in a kernel file system (:data:`KERNEL_FOLDERS`: ``/proc``, ``/sys``, ``/dev`` but ``/dev/shm``), which
  holds no files of ours (and ``/dev/null`` must not be replaced by an atomic write);
- a folder where a file goes, or a file where a folder goes;
- a path whose nearest existing folder cannot be written (permissions, a read-only file system).

A missing folder on the way is fine: the command makes it (or says it is missing when it writes).
"""

from __future__ import annotations

import os

KERNEL_FOLDERS = ("/proc", "/sys", "/dev")
"""Kernel file systems: no output goes there (``/dev/shm``, a memory file system, is allowed)."""


class OutputPathError(ValueError):
    """An output path that cannot be written (one line naming the option, the path and the reason)."""


def _kernel_folder(path: str) -> str | None:
    """The kernel folder ``path`` lies in (:data:`KERNEL_FOLDERS`), or None."""
    for root in KERNEL_FOLDERS:
        if path == root or path.startswith(root + "/"):
            return None if path == "/dev/shm" or path.startswith("/dev/shm/") else root
    return None


def check_output_path(path: str | os.PathLike[str], what: str, folder: bool = False) -> str:
    """``path`` (as a string) if a command can write it, a file (or with ``folder`` a folder); an
    :class:`OutputPathError` ``"<what> <path> ..."`` otherwise (the module docstring's rules)."""
    text = os.fspath(path)
    kind = "folder" if folder else "file"
    if not text:
        raise OutputPathError(f"{what} is empty: name a {kind}")
    full = os.path.abspath(text)
    root = _kernel_folder(full) or _kernel_folder(os.path.realpath(full))
    if root is not None:
        raise OutputPathError(f"{what} {text} lies in {root}, a kernel file system: name a {kind} on disk")
    nearest = full
    while not os.path.lexists(nearest) and os.path.dirname(nearest) != nearest:
        nearest = os.path.dirname(nearest)
    if nearest == full:
        if folder and not os.path.isdir(full):
            raise OutputPathError(f"{what} {text} is a file, not a folder: name a folder (it is made if missing)")
        if not folder and os.path.isdir(full):
            raise OutputPathError(f"{what} {text} is a folder, not a file: name a file in it")
        if not folder:
            nearest = os.path.dirname(full)
    elif not os.path.isdir(nearest):
        raise OutputPathError(f"{what} {text} cannot be made: {nearest} is a file, not a folder")
    if not os.access(nearest, os.W_OK | os.X_OK):
        raise OutputPathError(f"{what} {text} cannot be written: the folder {nearest} is not writable")
    return text
