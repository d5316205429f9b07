"""The settings of a duplicate evaluation that every trainer runs (the ``eval`` section of every training
config, and ``configs/eval.yaml``'s): one class, read by the SB3, batched and RLlib configs alike."""

from __future__ import annotations

from typing import Literal

from sm_env.core.game import check_start_balances
from sm_env.core.rules import RuleSet
from training.common.yaml_config import Agents, Balances, Section, Whole, config_error, setting


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
