"""Sergeant Major (3-5-8): a rules-exact engine and PettingZoo environment.

Public names::

    from sm_env import env, raw_env      # PettingZoo AEC environment (see sm_env.envs.aec)
    from sm_env import replay            # re-play and check a game record (sm_env.records)
    from sm_env import RuleSet, PRESETS  # rule sets and variant presets (sm_env.core.rules)
    from sm_env import Game              # the rules engine (sm_env.core.game)
    from sm_env import PHASE_NAMES       # phase names by index (the env's info["phase"])
    from sm_env import render_table      # text picture of a player's view or the whole table

Importing the package registers the environment with PettingZoo's registry
as ``"sm_env/sergeant_major-v0"``, so ``pettingzoo.make("aec",
"sm_env/sergeant_major-v0", rules="woburn")`` works after ``import sm_env``.
The record helpers (``replay``, ``game_record``, ``save_record``,
``load_record``) come from :mod:`sm_env.records`.
"""

from __future__ import annotations

import pettingzoo

from sm_env.core.cards import CardError, card_text, from_mask, mask_text, parse_card, parse_cards, to_mask
from sm_env.core.game import PHASE_NAMES, DealError, Game, GameOverError, IllegalActionError, action_text
from sm_env.core.rules import PRESETS, RulesError, RuleSet
from sm_env.display.render import render_table
from sm_env.envs.aec import EnvGameOverError, IllegalEnvActionError, env, raw_env

from .records import ReplayError, game_record, load_record, replay, save_record

__all__ = [
    "ENV_ID",
    "PHASE_NAMES",
    "PRESETS",
    "CardError",
    "DealError",
    "EnvGameOverError",
    "Game",
    "GameOverError",
    "IllegalActionError",
    "IllegalEnvActionError",
    "ReplayError",
    "RuleSet",
    "RulesError",
    "action_text",
    "card_text",
    "env",
    "from_mask",
    "game_record",
    "load_record",
    "mask_text",
    "parse_card",
    "parse_cards",
    "raw_env",
    "render_table",
    "replay",
    "save_record",
    "to_mask",
]

ENV_ID = "sm_env/sergeant_major-v0"


if ENV_ID not in pettingzoo.aec_registry:  # importing twice (or reloading) must not warn about overriding
    pettingzoo.register("aec", ENV_ID, entry_point="sm_env.sergeant_major_v0:env")
