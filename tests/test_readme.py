"""The README's Python example runs as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_readme_python_example_runs(tmp_path):
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "the README has a Python example"
    done = subprocess.run(
        [sys.executable, "-c", blocks[0]], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "Game over:" in done.stdout
    assert (tmp_path / "game.json").exists()


def test_readme_test_command_is_the_one_ci_runs():
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    ci = open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8").read()
    """The README's test commands (the suite, then the cluster tier) are CI's, in the same order."""
    blocks = [block for block in re.findall(r"```bash\n(.*?)```", readme, flags=re.S) if "pytest" in block]
    assert len(blocks) == 1
    commands = [line.strip() for line in blocks[0].splitlines() if line.strip()]
    assert commands == ["python -m pytest", "python -m pytest -m cluster -n 0"]
    assert [line for line in ci.splitlines() if "pytest" in line and not line.startswith("#")] == commands


def test_readme_paths_after_the_quickstart_are_those_the_quickstart_makes():
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert "runs/full/" not in readme  # a newcomer has no such run
    assert "training.train --evaluate" not in readme  # the one command is sergeant-major
    for path in re.findall(r"runs/quickstart/[\w./]+", readme):
        assert path.split("/", 2)[2].rstrip(".") in ("final_model.zip", "tb", "final_eval.json", "eval.jsonl"), path


def test_preset_table_names_every_preset_in_order():
    from sm_env.core.rules import PRESETS

    page = open(os.path.join(ROOT, "docs", "environment.md"), encoding="utf-8").read()
    table = page.split("| preset | options |\n| --- | --- |\n", 1)[1].split("\n\n", 1)[0]
    names = [name for row in table.splitlines() for name in re.findall(r"`([^`]+)`", row.split(" | ")[0])]
    assert names == list(PRESETS), "docs/environment.md's preset table must list sm_env.core.rules.PRESETS in order"


def test_readme_stays_short_and_lists_every_command():
    """The README is the first page a user reads: at most 12,000 bytes, and its command table names every
    sergeant-major command."""
    from sm_cli.cli import build_parser

    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert len(readme.encode()) <= 12_000
    parser = build_parser()
    (commands,) = [a for a in parser._subparsers._group_actions if hasattr(a, "choices")]
    table = readme.split("| command | what it does |", 1)[1].split("\n\n", 1)[0]
    listed = {row.split("`")[1].split()[0] for row in table.splitlines()[2:]}
    assert set(commands.choices) - listed == set()


def test_files_the_readme_commands_write_here_are_ignored_by_git():
    """A file a README command writes into the working directory (``--save F``, ``--out F``, ``save_record(.., F)``)
    is in .gitignore, so that following the README leaves ``git status`` clean."""
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    ignored = open(os.path.join(ROOT, ".gitignore"), encoding="utf-8").read().splitlines()
    written = set(re.findall(r"(?:--save|--out) ([\w.-]+\.\w+)\b", readme))
    written |= set(re.findall(r"save_record\([^,]+, \"([\w.-]+)\"\)", readme))
    assert {"game.json", "analysis.json"} <= written  # what the commands write today (the pattern still finds them)
    assert sorted(name for name in written if name not in ignored) == []
