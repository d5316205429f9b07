"""numba's cache keyed to the code a compiled function calls (sm_env.compiled.cache_key): a change in a file it
calls compiles it again, in a new process, where numba alone would load the stale cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sm_env.compiled import cache_key

DEP = "from numba import njit\n\n\n@njit(cache=True)\ndef value():\n    return {}\n"
USER = """from numba import njit

from pkg import dep
{keyed}

@njit(cache=True)
def total():
    return dep.value() + 1
{key}
"""
RUN = """from sm_env.compiled import cache_key
cache_key.PACKAGES = ("pkg",)  # follow the modules of this package
from pkg import user
print(user.total())
"""


def run(folder: Path) -> int:
    """``user.total()`` in a new process, with numba's cache in ``folder``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(folder / "cache"), "PYTHONPATH": f"{folder}{os.pathsep}{Path.cwd()}"}
    done = subprocess.run([sys.executable, "-c", RUN], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


@pytest.mark.parametrize("keyed", [True, False])
def test_a_changed_callee_compiles_the_caller_again(tmp_path: Path, keyed: bool) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    key = "\n\nkey_cache_to_sources(globals())\n" if keyed else ""
    imports = "from sm_env.compiled.cache_key import key_cache_to_sources\n" if keyed else ""
    (tmp_path / "pkg" / "user.py").write_text(USER.format(keyed=imports, key=key))
    (tmp_path / "pkg" / "dep.py").write_text(DEP.format(1))
    assert run(tmp_path) == 2  # compiled and cached
    (tmp_path / "pkg" / "dep.py").write_text(DEP.format(10))  # the callee changes, the caller's file does not
    # keyed: compiled again; numba's own key (the caller's file only): the stale cache, which the keying prevents
    assert run(tmp_path) == (11 if keyed else 2)


def test_the_stamp_follows_the_contents_of_the_sources(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(cache_key, "PACKAGES", ("pkg",))
    source = tmp_path / "m.py"
    source.write_text("x = 1\n")
    namespace = {"__name__": "pkg.m", "__file__": str(source)}
    assert cache_key.compiled_sources(namespace) == [source.resolve()]
    before = cache_key.sources_stamp(namespace)
    cache_key._digests.clear()
    source.write_text("x = 2\n")
    assert cache_key.sources_stamp(namespace) != before
    cache_key._digests.clear()
    source.write_text("x = 1\n")  # the same contents again: the same stamp, whatever the file's time
    assert cache_key.sources_stamp(namespace) == before
