"""sm_env.old_paths: the flat module names of 0.1 import as the very same modules at their new homes."""

from __future__ import annotations

import importlib
import pickle
import subprocess
import sys

import pytest

import agents
import sm_env
import training
from sm_env.old_paths import _OldPathFinder


def tables() -> dict[str, str]:
    found: dict[str, str] = {}
    for finder in sys.meta_path:
        if isinstance(finder, _OldPathFinder):
            found.update(finder.table)
    return found


def test_every_package_installs_its_table():
    names = tables()
    assert agents and training  # imported above: each installs its own table
    assert {"sm_env.vector", "sm_env.game", "agents.pimc", "training.evaluate"} <= set(names)


@pytest.mark.parametrize("old", sorted(tables()))
def test_every_old_name_is_the_new_module(old):
    new = tables()[old]
    module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__name__ == new and module.__spec__.name == new  # the module's own identity is untouched


def test_sm_env_env_stays_the_function_after_importing_the_old_module():
    code = (
        "import sm_env; from sm_env.env import raw_env; import sm_env.env; "
        "import sm_env.vector as v; print(callable(sm_env.env), type(sm_env.env).__name__, v.VectorGame.__module__)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "function", "sm_env.compiled.batch"]


def test_a_pickle_that_names_an_old_module_loads():
    rules = sm_env.RuleSet()
    data = pickle.dumps(rules, protocol=2).replace(b"sm_env.core.rules", b"sm_env.rules")
    assert b"sm_env.rules" in data
    assert pickle.loads(data) == rules


def test_an_unknown_old_name_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("sm_env.no_such_module")
