"""The keys every run config starts with (the SB3, batched, RLlib and distillation configs), and the folder a new
run goes to (:func:`fresh_run_dir`, also ``sergeant-major eval``'s)."""

from __future__ import annotations

import os

from training.common.yaml_config import Section, Text, Whole, setting


class RunSection(Section):
    """The keys every run config starts with: its name, where its run folder goes, its seed. Each trainer's
    config derives from it with its own default name and the wording of what its seed seeds
    (``class X(RunSection, defaults={"name": ...}, descriptions={"seed": ...})``)."""

    name: Text = setting("run", "run name: the run folder is <output_dir>/<name>")
    output_dir: Text = setting("runs", "folder of run folders (relative to the working directory)")
    seed: Whole = setting(0, "seed of the run")


def fresh_run_dir(output_dir: str, name: str) -> tuple[str, str]:
    """(run folder, run name) for a new run: ``output_dir/name`` unless it exists and is not
    empty, else the first free ``output_dir/name-N`` (N = 2, 3, ...)."""
    candidate, n = name, 1
    while True:
        path = os.path.join(output_dir, candidate)
        if not os.path.exists(path) or (os.path.isdir(path) and not os.listdir(path)):
            return path, candidate
        n += 1
        candidate = f"{name}-{n}"
