"""The settings of a duplicate evaluation that every trainer runs (:class:`EvalConfig`: the ``eval`` section of
every training config, read by the SB3, batched, RLlib, distillation and play-out configs alike), and the
evaluation config of every backend (:class:`EvalFileConfig`, ``configs/eval.yaml``: ``sergeant-major train
--evaluate POLICY --eval-config FILE``)."""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

from sm_env.core.game import check_start_balances
from sm_env.core.rules import RuleSet
from training.common.run_config import KindSection, migrate_rules
from training.common.yaml_config import (
    Agents,
    Balances,
    Rules,
    Section,
    Text,
    Whole,
    config_error,
    load,
    setting,
    validate,
)


class EvalConfig(Section):
    """Duplicate evaluation of the learner against baselines, per role."""

    every: Whole = setting(0, "timesteps between evaluations during training (0: only at the end)", ge=0)
    opponents: Agents = setting(
        lambda: ["heuristic", "random"],
        "baseline agents to evaluate against (the learner plays one seat, the baseline the others)",
    )
    deals: Whole = setting(200, "deals per evaluation during training", gt=0)
    final_deals: Whole = setting(2000, "deals of the final evaluation (0: none)", ge=0)
    mode: Literal[("hand", "game")] = setting("hand", "evaluate single hands ('hand') or whole games ('game')")
    max_hands: Whole = setting(30, "game mode: hands per game at most", gt=0)
    start_balances: Balances | None = setting(
        None,
        "hand mode: balances of an imaginary previous hand (by seat, one per player; seat 0 deals), so that every "
        "hand opens with that exchange (null: no exchange)",
    )
    seed: Whole = setting(20240101, "seed of the evaluation deals (the same deals at every evaluation)")
    workers: Whole = setting(1, "evaluation worker processes", gt=0)


def check_eval_rules(settings: EvalConfig, rules: RuleSet, source: str, key: str = "eval") -> None:
    """An ``eval`` section against the trainer's rule set: ``start_balances`` must be one possible balance per
    player (``sm_env.core.game.check_start_balances``); a ConfigError naming ``key.start_balances``."""
    try:
        check_start_balances(settings.start_balances, rules)
    except ValueError as err:
        raise config_error(source, f"{key}.start_balances", f"{key}.start_balances: {err}") from None


class EvalEnvConfig(Section):
    """The game of the evaluation."""

    rules: Rules = setting("standard", "rule set of the evaluation games: a preset name or a dict of rule options")


class EvalFileConfig(
    KindSection,
    defaults={"kind": "eval"},
    descriptions={"kind": "what runs this file: eval (training.common.run_config.CONFIG_KINDS)"},
):
    """An evaluation of a trained policy (configs/eval.yaml):
    ``sergeant-major train --evaluate POLICY --eval-config configs/eval.yaml``."""

    policy: Text | None = setting(
        None, "policy file (final_model.zip, a checkpoint or a .pt export); --evaluate PATH overrides it"
    )
    env: EvalEnvConfig = setting(EvalEnvConfig, "the game (its rule set: env.rules, as in every run config)")
    eval: EvalConfig = setting(
        EvalConfig,
        "evaluation settings (as the eval section of a training config; final_deals is the number of deals, every is "
        "ignored)",
    )


def eval_config_from_dict(data: Any, source: str = "") -> EvalFileConfig:
    """A validated :class:`EvalFileConfig` from a plain dict (as YAML gives it)."""
    cfg = validate(EvalFileConfig, data, source)
    check_eval_rules(cfg.eval, RuleSet.from_any(cfg.env.rules), source)
    return cfg


def load_eval_config(path: str | None, overrides: list[str] | None = None) -> EvalFileConfig:
    """Read, override and validate an evaluation config (configs/eval.yaml; None: the defaults); a file of an
    older release with its rule set at ``rules`` is read as ``env.rules``
    (:func:`training.common.run_config.migrate_rules`)."""
    return load(eval_config_from_dict, path, overrides, migrate=partial(migrate_rules, kind="eval"))
