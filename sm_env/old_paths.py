"""Import paths from before the sub-packages keep working.

Until version 0.1 every module sat flat in its package (``sm_env.game``,
``sm_env.vector``, ``agents.pimc``, ``training.evaluate``, ...). Each package
keeps a table from those names to the modules' new homes and installs it
with :func:`keep_old_paths`, so that ``import sm_env.vector`` (documented
before), a pickle or a checkpoint that records an old module path, and a
user's script still load. The old name is the *same module object* as the
new one, not a copy. New code imports the new paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Mapping
from types import ModuleType


class _OldPathFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old module name and loads it as the module at its new path."""

    def __init__(self, table: Mapping[str, str]) -> None:
        self.table = dict(table)
        self.own_specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(self, name: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if name not in self.table:
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.table[spec.name])
        self.own_specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run (the module at the new path has run already); the import system has just set the
        module's ``__spec__`` to the old name's, so put its own back."""
        module.__spec__ = self.own_specs.pop(module.__spec__.name)


def keep_old_paths(table: Mapping[str, str], eager: tuple[str, ...] = ()) -> None:
    """Make every old name of ``table`` import as its new module.

    ``eager`` names are put in ``sys.modules`` now: an old module name that is
    also an attribute of its package (``sm_env.env`` is the function ``env``)
    must be, or importing it would replace that attribute with the module.
    """
    for old in eager:
        sys.modules.setdefault(old, importlib.import_module(table[old]))
    if not any(isinstance(f, _OldPathFinder) and f.table == dict(table) for f in sys.meta_path):
        sys.meta_path.append(_OldPathFinder(table))
