"""The keys every run config starts with (the SB3, batched, RLlib and distillation configs)."""

from __future__ import annotations

from training.common.yaml_config import Section, Text, Whole, setting


class RunSection(Section):
    """The keys every run config starts with: its name, where its run folder goes, its seed. Each trainer's
    config derives from it with its own default name and the wording of what its seed seeds
    (``class X(RunSection, defaults={"name": ...}, descriptions={"seed": ...})``)."""

    name: Text = setting("run", "run name: the run folder is <output_dir>/<name>")
    output_dir: Text = setting("runs", "folder of run folders (relative to the working directory)")
    seed: Whole = setting(0, "seed of the run")
