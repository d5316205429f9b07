"""pyproject.toml ships the whole project: every sub-package and every data file the code reads.

(.ci/run builds the wheel, installs it in a fresh virtual environment and checks it there: .ci/wheel_check.py.)
"""

from __future__ import annotations

import fnmatch
import os

import pytest

tomllib = pytest.importorskip("tomllib")
setuptools = pytest.importorskip("setuptools")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(ROOT, "pyproject.toml"), "rb") as _handle:
    PYPROJECT = tomllib.load(_handle)
TOOL = PYPROJECT["tool"]["setuptools"]
ROOTS = sorted({pattern.rstrip("*") for pattern in TOOL["packages"]["find"]["include"]})


def walk(top: str):
    for folder, dirs, names in os.walk(os.path.join(ROOT, top)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.endswith(".egg-info"))
        yield os.path.relpath(folder, ROOT), names


def test_every_folder_with_modules_is_a_package_the_wheel_finds():
    found = set(setuptools.find_packages(ROOT, include=TOOL["packages"]["find"]["include"]))
    for folder, names in (item for top in ROOTS for item in walk(top)):
        if any(n.endswith(".py") for n in names):
            package = folder.replace(os.sep, ".")
            assert "__init__.py" in names, f"{folder} holds modules but no __init__.py: the wheel would leave it out"
            assert package in found, f"{package} is not matched by tool.setuptools.packages.find.include"


def test_every_data_file_in_a_package_is_package_data():
    data = TOOL["package-data"]
    for folder, names in (item for top in ROOTS for item in walk(top)):
        package, _, rest = folder.partition(os.sep)
        for name in names:
            if name.endswith((".py", ".pyc")):
                continue
            relative = os.path.join(rest, name) if rest else name
            globs = data.get(package, [])
            assert any(fnmatch.fnmatch(relative, g) for g in globs), (
                f"{folder}/{name} would not be installed: add it to [tool.setuptools.package-data] {package}"
            )
