"""numba's on-disk cache keyed by all the code a compiled function is built from, computed at import.

numba keys the cache of a ``cache=True`` function by the stamp (modification time and size) of the function's own
file, yet the machine code it caches holds the code of every compiled function it calls, from other files too (the
kernels of :mod:`sm_env.compiled.kernels`, the heuristic's rules, the rollouts), and their layout constants. So a
module that calls the kernels would load a cache compiled against an older kernels.py: wrong play, or a crash on
the old layout. :func:`key_cache_to_sources`, called at the end of such a module, gives the cache of each of its
functions a stamp computed from the contents of every file its code comes from (:func:`compiled_sources`); a
change in any of them compiles the module again, and an unchanged file that was only touched does not.

Constants that numba freezes into the code from plain Python modules (``sm_env.compiled.codes``, the phase numbers
of ``sm_env.core.game``) are not followed: after changing one, touch the module that uses it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from numba.core.caching import NullCache
from numba.core.dispatcher import Dispatcher

PACKAGES = ("sm_env", "agents")  # the packages with compiled code: only their modules are followed
_digests: dict[Path, str] = {}  # file -> sha-256 of its contents, read once per process


def _file_digest(path: Path) -> str:
    if path not in _digests:
        _digests[path] = hashlib.sha256(path.read_bytes()).hexdigest()
    return _digests[path]


def _ours(module_name: object) -> bool:
    return isinstance(module_name, str) and module_name.split(".")[0] in PACKAGES


def compiled_sources(namespace: Mapping[str, Any]) -> list[Path]:
    """The files the compiled code of ``namespace`` (a module's globals) comes from: its own, and those of every
    compiled function of :data:`PACKAGES` it names, directly or through a module it names (not a package: what
    one holds depends on what was imported), and so on."""
    files: set[Path] = set()
    seen: set[int] = set()
    todo = [namespace]
    while todo:
        names = todo.pop()
        if id(names) in seen:
            continue
        seen.add(id(names))
        if _ours(names.get("__name__")) and names.get("__file__"):
            files.add(Path(names["__file__"]).resolve())
        for value in names.values():
            if isinstance(value, Dispatcher) and _ours(value.py_func.__module__):
                files.add(Path(value.py_func.__code__.co_filename).resolve())
                todo.append(value.py_func.__globals__)
            elif isinstance(value, ModuleType) and _ours(value.__name__) and not hasattr(value, "__path__"):
                todo.append(vars(value))
    return sorted(files)


def sources_stamp(namespace: Mapping[str, Any]) -> str:
    """The stamp of ``namespace``'s compiled code: a sha-256 prefix of the names and contents of
    :func:`compiled_sources`."""
    digest = hashlib.sha256()
    for path in compiled_sources(namespace):
        digest.update(f"{path.name}:{_file_digest(path)}\n".encode())
    return digest.hexdigest()[:16]


def key_cache_to_sources(namespace: dict[str, Any]) -> str:
    """Key the cache of every compiled function of ``namespace`` (those whose globals it is) to
    :func:`sources_stamp`, before any of them is compiled or loaded; returns the stamp. Where numba's cache has
    another layout, those functions are not cached at all (they compile in each process) rather than risk a
    stale cache."""
    stamp = sources_stamp(namespace)
    for name, value in namespace.items():
        if isinstance(value, Dispatcher) and value.py_func.__globals__ is namespace:
            if value.overloads:
                raise RuntimeError(f"{name} was compiled or loaded before its cache was keyed: key it first")
            cache_file = getattr(value._cache, "_cache_file", None)
            if cache_file is not None and hasattr(cache_file, "_source_stamp"):
                cache_file._source_stamp = ("sources", stamp)  # compared with the index's stamp on load and save
            elif not isinstance(value._cache, NullCache):
                value._cache = NullCache()
    return stamp
