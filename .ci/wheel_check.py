"""Check an installed (not editable) sergeant-major-rl against the checkout it was built from.

    python .ci/wheel_check.py CHECKOUT      (run by the installed interpreter, outside the checkout)

Every module and data file of the checkout's packages (agents/policies, sm_web/static) must be installed, the
installed packages must be the ones imported, and the commands must work from there.
"""

from __future__ import annotations

import os
import subprocess
import sys

PACKAGES = ("sm_env", "agents", "training", "sm_cli", "sm_web")


def files(root: str) -> set[str]:
    """The files of a package folder, relative to it, without caches."""
    out = set()
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        out |= {os.path.relpath(os.path.join(folder, n), root) for n in names if not n.endswith((".pyc", ".pyo"))}
    return out


def main() -> int:
    checkout = os.path.abspath(sys.argv[1])
    problems = []
    for name in PACKAGES:
        module = __import__(name)
        installed = os.path.dirname(os.path.abspath(module.__file__))
        if installed == os.path.join(checkout, name):
            problems.append(f"{name} was imported from the checkout ({installed}), not from the installed wheel")
            continue
        missing = sorted(files(os.path.join(checkout, name)) - files(installed))
        if missing:
            problems.append(f"{name}: not installed: {', '.join(missing)}")
    import agents

    if not os.path.isfile(agents.TRAINED_POLICY):
        problems.append(f"the shipped policy {agents.TRAINED_POLICY} is missing")
    for command in (["rules"], ["eval", "--agents", "heuristic", "random", "--deals", "2", "--workers", "1"]):
        exe = os.path.join(os.path.dirname(sys.executable), "sergeant-major")
        run = subprocess.run([exe, *command], capture_output=True, text=True)
        if run.returncode:
            problems.append(f"sergeant-major {' '.join(command)}: exit {run.returncode}: {run.stderr.strip()[-300:]}")
    for problem in problems:
        print("wheel check:", problem, file=sys.stderr)
    if not problems:
        print("wheel check: every module and data file is installed; sergeant-major rules and eval run")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
