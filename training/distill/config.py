"""The configuration of a distillation run (``sergeant-major distill --config configs/distill_v2.yaml``).

Sections (every key optional; ``python -m training.distill.config`` lists them with their defaults)::

    name: distill               # run folder <output_dir>/<name>
    output_dir: runs
    seed: 0                     # the fit's seed (round k: seed + k) and the validation split
    workers: 1                  # labelling processes
    nice: 0                     # niceness added to the labelling workers
    hands: 4000                 # hands labelled in round 0 (data/r0)
    dagger_rounds: 0            # further rounds: the fitted policy plays, pimc labels, the network is refitted
    dagger_hands: 1000          # hands per DAgger round
    dagger_rollout: data        # 'previous': round k's rollouts played by round k-1's policy (expert iteration)
    env:        {rules: ...}    # the rule set of every data set, the fit and the evaluation (a preset)
    data:       {...}           # LabelSettings: how hands are played and labelled (training/distill/data.py)
    extra_data: [...]           # ExtraData: more data sets (data/<name>) labelled after data/r0, fitted in every round
    fit:        {...}           # FitSettings: the network and its fit
    eval:       {...}           # the final evaluation of the last policy (training.evaluation; final_deals: 0, none)

Errors are :class:`training.common.yaml_config.ConfigError` naming the key, the value and what is allowed, as for
the trainers' configs, and ``--set KEY=VALUE`` overrides work the same way. A file of an older release, with its
rule set at ``data.rules`` (and ``extra_data[].rules``), is read as ``env.rules`` (:func:`migrate_distill`).
"""

from __future__ import annotations

import copy
import os
import re
import sys
from typing import Any, Literal

from pydantic import model_validator

from sm_env.core.rules import RuleSet
from training.common.device import DEVICE_HELP
from training.common.progress import write_line
from training.common.run_config import RULES_KEY, RunSection, migrate_rules
from training.common.yaml_config import (
    ConfigError,
    Device,
    Flag,
    Number,
    Section,
    Sizes,
    Text,
    Whole,
    config_error,
    describe,
    load,
    setting,
    validate,
)
from training.distill.data import DataSettings, LabelSettings
from training.evaluation.config import EvalConfig, check_eval_rules

FIT_METHODS = ("imitate", "q")


class FitSettings(Section):
    """How the network is fitted to the labels."""

    method: Literal[FIT_METHODS] = setting(
        "imitate",
        "'imitate': cross-entropy to the search's move distribution (the targets below); 'q': a Q-network (init's "
        "hidden layers, a fresh head) regressed on the search's values less its prior, added to init's logits "
        "(prior_weight tricks per unit of logit) in one exact network: the search's own rule, argmax of value "
        "plus prior, without the search (needs init; epochs, learning_rate, suit_augment and seed as below, the rest "
        "unused)",
    )
    prior_weight: Number = setting(
        1.0, "method q: tricks per unit of init's logits in the combined policy (the search's prior: 1)", ge=0
    )
    net_arch: Sizes = setting(lambda: [512, 256], "hidden layer widths (ReLU); ignored with init")
    init: Text = setting("", "start from this policy (a policy file, or 'trained'): its layers and activation")
    play_only: Flag = setting(
        False, "fit only the searched decisions (keeps the start policy's exchange, trump, discards)"
    )
    anchor_margin: Number = setting(
        0.0,
        "> 0 (with init): one-hot targets = the start policy's own move, replaced by pimc's where pimc values the "
        "start policy's move more than this many tricks below its best (a correction); 0: plain imitation",
        ge=0,
    )
    epochs: Whole = setting(8, "passes over the labelled decisions", gt=0)
    batch_size: Whole = setting(1024, "minibatch size", gt=0)
    learning_rate: Number = setting(1e-3, "Adam learning rate, cosine-decayed to 5% over the epochs", gt=0)
    weight_decay: Number = setting(1e-5, "Adam weight decay", ge=0)
    temperature: Number = setting(0.2, "tricks: softmax temperature of the soft target", gt=0)
    hard_weight: Number = setting(
        0.25, "share of the one-hot label (pimc's choice, ties to the heuristic) in the target", ge=0, le=1
    )
    value_coef: Number = setting(0.25, "weight of the value-head loss (balance / 4, squared error)", ge=0)
    validation: Number = setting(0.05, "share of shards held out", ge=0, lt=0.5)
    train_share: Number = setting(
        1.0,
        "share of each folder's training shards fitted (the first ones; the held-out shards stay the same): a "
        "learning curve over the number of labels",
        gt=0,
        le=1,
    )
    threads: Whole = setting(1, "torch threads", gt=0)
    device: Device = setting(
        "auto",
        DEVICE_HELP + ": the fit's (the data stay on the CPU, each minibatch drawn there and sent over; the labelling "
        "searches run on the CPU); a fit's checkpoint holds CPU tensors and goes on on any device",
    )
    suit_augment: Flag = setting(
        True, "each sample seen under a random renaming of the suits (training.distill.symmetry)"
    )
    other_teacher: Text = setting(
        "",
        "label the unsearched decisions (exchange, trump, discards) with this policy's move (a policy file or "
        "'trained') instead of the heuristic's",
    )


class ExtraData(LabelSettings):
    """A further data set of a run: ``hands`` hands labelled into ``<run_dir>/<name>/`` with the run's ``data``
    settings except those this entry gives (e.g. another ``behaviour``, ``search: false``, its own ``seed``), and
    the run's rule set (``env.rules``: one fit, one rule set)."""

    name: Text = setting("", "its folder in the run folder's data/ (not r<k>, a round's)")
    hands: Whole = setting(1, "hands labelled", ge=1)


class DistillEnv(Section):
    """The game of a distillation run."""

    rules: Text = setting(
        "standard",
        "rule preset of every data set's hands, of the fit and of the evaluation (any preset; the network takes "
        "its sizes)",
    )


class DistillEval(
    EvalConfig,
    defaults={"final_deals": 0, "opponents": lambda: ["heuristic"]},
    descriptions={
        "final_deals": "deals of the final evaluation of the last round's policy, per role, against each opponent "
        "(0: none; the fit's validation against pimc is in policies/r<k>.json either way)",
        "every": "not read: a distillation is evaluated once, at the end",
    },
):
    """The final evaluation of a distillation run: the duplicate evaluation every trainer reports
    (:func:`training.evaluation.evaluate.evaluate_against`), off unless ``final_deals`` is set."""


class DistillConfig(
    RunSection,
    defaults={"kind": "distill", "name": "distill"},
    descriptions={"seed": "seed of the fit (round k: seed + k) and of the validation split"},
):
    """A whole distillation run (training/distill/fit.py)."""

    workers: Whole = setting(1, "labelling processes", gt=0)
    nice: Whole = setting(0, "niceness added to the labelling workers", ge=0)
    hands: Whole = setting(4000, "hands labelled in round 0", ge=1)
    dagger_rounds: Whole = setting(0, "extra rounds where the policy plays and pimc labels", ge=0)
    dagger_hands: Whole = setting(1000, "hands per DAgger round", ge=1)
    dagger_rollout: Text = setting(
        "data",
        "who plays the rollouts in a DAgger round (data.rollout: policy): 'data': data.rollout_policy in every "
        "round; 'previous': the policy fitted in the round before (expert iteration)",
    )
    env: DistillEnv = setting(DistillEnv, "the game (its rule set: env.rules, as in every run config)")
    data: LabelSettings = setting(LabelSettings, "how hands are played and labelled")
    fit: FitSettings = setting(FitSettings, "the network and its fit")
    extra_data: list[ExtraData] = setting(
        list, "more data sets (data/<name>) labelled after data/r0, fitted with it every round (name, hands, data keys)"
    )
    eval: DistillEval = setting(DistillEval, "the final evaluation of the last round's policy")

    @model_validator(mode="before")
    @classmethod
    def _entries_start_from_data(cls, values: Any) -> Any:
        """Each ``extra_data`` entry: the run's ``data`` settings, then the entry's own keys."""
        if isinstance(values, dict) and isinstance(values.get("extra_data"), list):
            data = values.get("data") if isinstance(values.get("data"), dict) else {}
            entries = [{**data, **e} if isinstance(e, dict) else e for e in values["extra_data"]]
            values = {**values, "extra_data": entries}
        return values

    @property
    def run_dir(self) -> str:
        """The run folder a new run of this config goes to: ``<output_dir>/<name>``."""
        return os.path.join(self.output_dir, self.name)

    def data_settings(self, extra: ExtraData | None = None) -> DataSettings:
        """The settings of the run's data (``data`` and ``env.rules``; round 0's), or of its ``extra`` data set:
        what the data folder's ``meta.json`` holds and the labelling workers are sent."""
        labels = self.data if extra is None else extra
        return DataSettings(**labels.model_dump(exclude={"name", "hands"}), rules=self.env.rules)


DAGGER_ROLLOUTS = ("data", "previous")
"""The values of ``dagger_rollout``."""


def distill_config_from_dict(data: Any, source: str = "") -> DistillConfig:
    """A validated :class:`DistillConfig` from a plain dict (as YAML gives it)."""
    cfg = validate(DistillConfig, data, source)
    checks = [("data", None)] + [(f"extra_data[{i}]", entry) for i, entry in enumerate(cfg.extra_data)]
    for key, entry in checks:
        try:
            cfg.data_settings(entry).validate()
        except ValueError as err:
            field = getattr(err, "key", "behaviour")  # training.distill.data.SettingsError names the setting
            where = RULES_KEY if field == "rules" else f"{key}.{field}"  # the run's one rule set
            raise config_error(source, where, f"{where}: {err}") from None
    check_eval_rules(cfg.eval, RuleSet.from_any(cfg.env.rules), source)
    if cfg.fit.method == "q" and not cfg.fit.init:
        raise config_error(
            source,
            "fit.init",
            "fit.init: method q adds a Q-network to a policy's logits; name that policy (a policy file or 'trained')",
        )
    if cfg.dagger_rollout not in DAGGER_ROLLOUTS:
        raise config_error(
            source,
            "dagger_rollout",
            f"dagger_rollout: must be one of {', '.join(DAGGER_ROLLOUTS)}, got {cfg.dagger_rollout!r}",
        )
    if cfg.dagger_rollout == "previous" and cfg.data.rollout != "policy":
        raise config_error(
            source,
            "dagger_rollout",
            f"dagger_rollout: 'previous' needs data.rollout: policy (got {cfg.data.rollout!r}): only a policy "
            "plays the rollouts",
        )
    seen: list[str] = []
    for i, entry in enumerate(cfg.extra_data):
        # r<k>: a round's folder; the layout's own folders: a run of the earlier layout moves its extra set's
        # folder into data/ on --resume (training/distill/fit.py old_layout), which these names would break
        layout = entry.name in ("data", "checkpoints", "policies")
        taken = layout or re.fullmatch(r"r\d+", entry.name) or entry.name.startswith(("data_r", "."))
        if not entry.name or taken or entry.name in seen or os.sep in entry.name:
            raise config_error(
                source,
                f"extra_data[{i}].name",
                f"extra_data[{i}].name: {entry.name!r} is taken or not a folder name (by a round's r<k> or an "
                "earlier entry); give each entry its own folder name",
            )
        seen.append(entry.name)
    return cfg


def migrate_distill(data: dict[str, Any], source: str) -> dict[str, Any]:
    """``data`` (a distillation config as YAML gives it) with the rule set of an older release moved to
    ``env.rules``: ``data.rules`` by :func:`training.common.run_config.migrate_rules` (one line on stderr), and
    ``extra_data[].rules``, which had to be the same, dropped (refused, naming the key, where it differs)."""
    data = migrate_rules(data, source, kind="distill")
    entries = data.get("extra_data") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not any(isinstance(e, dict) and "rules" in e for e in entries):
        return data
    env = data.get("env")
    rules = env.get("rules", "standard") if isinstance(env, dict) else "standard"
    data = copy.deepcopy(data)
    for i, entry in enumerate(data["extra_data"]):
        if not isinstance(entry, dict) or "rules" not in entry:
            continue
        key = f"extra_data[{i}].rules"
        if entry["rules"] != rules:
            raise config_error(
                source,
                key,
                f"{key}: {entry['rules']!r}, but the run's rule set ({RULES_KEY}) is {rules!r}; every data set of a "
                f"run is labelled with the rules of its fit: give it once, at {RULES_KEY}",
            )
        del entry["rules"]
        write_line(f"{source or 'the config'}: {key} is read as {RULES_KEY}, the rule set's one key now (drop it)")
    return data


def load_distill_config(path: str | None = None, overrides: list[str] | None = None) -> DistillConfig:
    """Read, override and validate a distillation config (``path`` None: the defaults); a file of an older release
    (a run folder's ``config.yaml``) with its rule set at ``data.rules`` is read as ``env.rules``
    (:func:`migrate_distill`)."""
    return load(distill_config_from_dict, path, overrides, migrate=migrate_distill)


__all__ = [
    "ConfigError",
    "DistillConfig",
    "DistillEnv",
    "ExtraData",
    "FitSettings",
    "distill_config_from_dict",
    "load_distill_config",
    "migrate_distill",
]

if __name__ == "__main__":  # python -m training.distill.config
    print(describe(DistillConfig))
    sys.exit(0)
