"""The keys every run config starts with (the SB3, batched, RLlib and distillation configs), and the folder a new
run goes to (:func:`fresh_run_dir`, also ``sergeant-major eval``'s)."""

from __future__ import annotations

from pydantic import field_validator

from training.common.yaml_config import Section, Text, Whole, setting

CONFIG_KINDS = {
    "sb3": "sergeant-major train --config FILE (MaskablePPO, Stable-Baselines3)",
    "vector": "sergeant-major train --config FILE (batched self-play PPO)",
    "dmc": "sergeant-major train --config FILE (batched deep Monte-Carlo)",
    "rllib": "sergeant-major train --config FILE (RLlib PPO on Ray)",
    "distill": "sergeant-major distill --config FILE",
    "exploit": "sergeant-major exploit --config FILE",
    "playouts": "sergeant-major improve --config FILE",
    "eval": "sergeant-major train --evaluate POLICY --eval-config FILE",
    "leaderboard": "sergeant-major leaderboard --config FILE",
}
"""Every kind of config file in configs/, and the command that runs it (``kind:`` at the top of a file)."""


class RunSection(Section):
    """The keys every run config starts with: what kind of run it is, its name, where its run folder goes, its
    seed. Each trainer's config derives from it with its own kind, default name and the wording of what its
    seed seeds (``class X(RunSection, defaults={"kind": ..., "name": ...}, descriptions={"seed": ...})``); a
    file of another kind is refused in one line naming the command that runs it."""

    kind: Text = setting("sb3", "what runs this file: " + ", ".join(CONFIG_KINDS))
    name: Text = setting("run", "run name: the run folder is <output_dir>/<name>")
    output_dir: Text = setting("runs", "folder of run folders (relative to the working directory)")
    seed: Whole = setting(0, "seed of the run")

    @field_validator("kind")
    @classmethod
    def _own_kind(cls, value: str) -> str:
        return check_kind(value, cls.model_fields["kind"].default)


def check_kind(value: str, expected: str) -> str:
    """``value`` if it is ``expected``; a ValueError naming the command that runs a file of kind ``value``."""
    if value == expected:
        return value
    if value in CONFIG_KINDS:
        raise ValueError(f"this is a {value!r} config, not {expected!r}: run it with {CONFIG_KINDS[value]}")
    raise ValueError(f"unknown kind {value!r}; the kinds are {', '.join(CONFIG_KINDS)}")
