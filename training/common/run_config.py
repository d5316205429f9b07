"""The keys every config file starts with (:class:`KindSection`: its kind), the keys every run config starts with
(:class:`RunSection`: the SB3, batched, RLlib, exploit and distillation configs), and the one place of a run's rule
set, ``env.rules`` (:func:`migrate_rules` moves it there from where an older release kept it)."""

from __future__ import annotations

import copy
from typing import Any

from pydantic import field_validator

from training.common.errors import config_error
from training.common.progress import write_line
from training.common.yaml_config import Section, Text, Whole, setting

CONFIG_KINDS = {
    "sb3": "sergeant-major train --config FILE (MaskablePPO, Stable-Baselines3)",
    "vector": "sergeant-major train --config FILE (batched self-play PPO)",
    "dmc": "sergeant-major train --config FILE (batched deep Monte-Carlo)",
    "rllib": "sergeant-major train --config FILE (RLlib PPO on Ray)",
    "distill": "sergeant-major distill --config FILE",
    "exploit": "sergeant-major exploit --config FILE",
    "playouts": "sergeant-major distill --config FILE (also improve)",
    "eval": "sergeant-major train --evaluate POLICY --eval-config FILE",
    "leaderboard": "sergeant-major leaderboard --config FILE",
}
"""Every kind of config file in configs/, and the command that runs it (``kind:`` at the top of a file)."""

RULES_KEY = "env.rules"
"""Where every run config keeps its rule set (a leaderboard's sections keep one each: ``sections[].rules``)."""

OLD_RULES_KEYS = {"eval": "rules", "distill": "data.rules", "playouts": "rules"}
"""Where an older release kept the rule set, by config kind: :func:`migrate_rules` moves it to :data:`RULES_KEY`."""


class KindSection(Section):
    """The key every config file starts with: what kind of file it is (:data:`CONFIG_KINDS`). Each config derives
    from it, or from :class:`RunSection`, with its own kind (``defaults={"kind": ...}``); a file of another kind
    is refused in one line naming the command that runs it."""

    kind: Text = setting("sb3", "what runs this file: " + ", ".join(CONFIG_KINDS))

    @field_validator("kind")
    @classmethod
    def _own_kind(cls, value: str) -> str:
        return check_kind(value, cls.model_fields["kind"].default)


class RunSection(KindSection):
    """The keys every run config starts with: what kind of run it is, its name, where its run folder goes, its
    seed. Each trainer's config derives from it with its own kind, default name and the wording of what its
    seed seeds (``class X(RunSection, defaults={"kind": ..., "name": ...}, descriptions={"seed": ...})``); its
    rule set is ``env.rules`` (:data:`RULES_KEY`)."""

    name: Text = setting("run", "run name: the run folder is <output_dir>/<name>")
    output_dir: Text = setting("runs", "folder of run folders (relative to the working directory)")
    seed: Whole = setting(0, "seed of the run")


def check_kind(value: str, expected: str) -> str:
    """``value`` if it is ``expected``; a ValueError naming the command that runs a file of kind ``value``."""
    if value == expected:
        return value
    if value in CONFIG_KINDS:
        raise ValueError(f"this is a {value!r} config, not {expected!r}: run it with {CONFIG_KINDS[value]}")
    raise ValueError(f"unknown kind {value!r}; the kinds are {', '.join(CONFIG_KINDS)}")


def migrate_rules(data: dict[str, Any], source: str, kind: str) -> dict[str, Any]:
    """``data`` (a config of ``kind`` as YAML gives it, from ``source``) with the rule set moved from where an older
    release kept it (:data:`OLD_RULES_KEYS`) to ``env.rules``, saying so in one line on stderr; ``data`` itself
    when there is nothing to move. Both keys given (with different values): a ConfigError naming the old one.

    The loaders apply it to a file before its ``--set`` overrides: ``load(check, path, overrides,
    migrate=functools.partial(migrate_rules, kind=KIND))`` (:func:`training.common.yaml_config.load`), so that a
    run folder of an older release still resumes."""
    old = OLD_RULES_KEYS.get(kind)
    if old is None:
        return data
    *parents, leaf = old.split(".")
    holder: Any = data
    for part in parents:
        holder = holder.get(part) if isinstance(holder, dict) else None
    if not isinstance(holder, dict) or leaf not in holder:
        return data
    data = copy.deepcopy(data)
    holder = data
    for part in parents:
        holder = holder[part]
    value = holder.pop(leaf)
    env = data.get("env")
    if env is None:
        env = data["env"] = {}
    if not isinstance(env, dict):
        raise config_error(source, "env", f"env: expected a mapping of keys to values, got {env!r:.60}")
    if "rules" in env and env["rules"] != value:
        raise config_error(
            source, old, f"{old}: the rule set is {RULES_KEY} now, which says {env['rules']!r}; give it once, there"
        )
    env["rules"] = value
    write_line(f"{source or 'the config'}: {old} is read as {RULES_KEY}, the rule set's one key now (move it there)")
    return data
