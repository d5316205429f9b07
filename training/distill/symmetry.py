"""Suit symmetry of the observation and the actions, for data augmentation.

Under rules where no suit is special (the standard rules: any suit can be
trump, no suit ranks above another), renaming the suits of a position gives
an equally valid position whose best moves are the renamed best moves. A
permutation ``perm`` sends suit ``s`` to suit ``perm[s]``; card ``13 s + r``
becomes ``13 perm[s] + r`` and suit action ``52 + s`` (naming trump, or the
suit calls of ``calls``) becomes ``52 + perm[s]``. Actions 56-73
(docs/rules.md 10.8: no trump, misère, pass or decline, the bids, the quota
assignments) name no suit and stay in place; taking the face-up card of
``one_card_kitty`` is the id of the card put out, a card like any other.

Two rule sets single out a suit, so only the renamings that keep it are
symmetries there (:func:`permutations`): ``no_kitty_51`` removes the two of
clubs, and with ``one_card_kitty`` the holder of the two of diamonds decides
on the face-up card (docs/rules.md 9, 10.5). Those rule sets get the 6
renamings of the other three suits; every other rule set all 24.

:func:`index_tables` gives, for each permutation, gather indices
``obs_index`` [O] and ``action_index`` [A] (the rule set's sizes) such that
``permuted_obs = obs[obs_index]`` and ``permuted_vector = vector[action_index]``
for any per-action vector (logits, values, legal mask). In the observation
(see :mod:`sm_env.observation`, whatever the rule set's layout) the suit-indexed
parts are the card planes (52 entries each: :data:`CARD_PLANES`), the suit
one-hots (:data:`SUIT_BLOCKS`: 4 entries per seat, or the first 4 of each
6-entry call one-hot of ``calls``); every feature of :data:`SUIT_FREE` stays in
place, and a feature in none of these tables is an error (a new feature must
be classified here before its data is augmented).
"""

from __future__ import annotations

import itertools

import numpy as np

from sm_env.core.game import TRUMP_ACTION_BASE
from sm_env.core.rules import STANDARD, RuleSet
from sm_env.observation import layout_of, observation_size

PERMUTATIONS: tuple[tuple[int, ...], ...] = tuple(itertools.permutations(range(4)))
"""Every renaming of the four suits (suit s -> perm[s])."""

CARD_PLANES = frozenset(("hand", "played", "trick", "gave", "got", "shown", "discards", "kitty", "face_up", "put_out"))
"""Features made of 52-entry card planes (one per relative seat where there are several)."""
SUIT_BLOCKS: dict[str, tuple[int, int]] = {
    "trump": (4, 4),
    "led_suit": (4, 4),
    "voids": (4, 4),
    "call": (6, 4),
    "calls_left": (6, 4),
}
"""Suit-indexed features: (entries per block, of which the first are the suits C, D, H, S)."""
SUIT_FREE = frozenset(
    (
        "phase",
        "role",
        "quotas",
        "tricks_won",
        "hand_sizes",
        "previous_balances",
        "scores",
        "exchange_counts",
        "to_send",
        "discards_left",
        "tricks_played",
        "kitty_taken",
        "to_act",
        "trick_leader",
        "hand_number",
        "assigning",
        "quotas_known",
        "face_up_taker",
        "face_up_declined",
        "taking",
        "bidding",
        "bids",
        "bid_passed",
        "high_bidder",
        "high_bid",
        "hand1_quotas",
        "first_bidder",
        "passed_out",
        "hands_left",
    )
)
"""Features that name no suit: they stay in place under every renaming."""


def fixed_suits(rules: RuleSet) -> tuple[int, ...]:
    """The suits a renaming must keep under ``rules``: clubs with ``no_kitty_51`` (no two of clubs), diamonds
    with ``one_card_kitty`` (the two of diamonds decides on the face-up card); none otherwise."""
    return (0,) * rules.no_kitty_51 + (1,) * rules.one_card_kitty


def permutations(rules: RuleSet | None = None) -> tuple[tuple[int, ...], ...]:
    """The suit renamings that are symmetries of ``rules`` (default: the standard rules: all 24)."""
    fixed = fixed_suits(rules or STANDARD)
    return tuple(perm for perm in PERMUTATIONS if all(perm[s] == s for s in fixed))


def _inverse(perm: tuple[int, ...]) -> list[int]:
    inv = [0] * 4
    for s, t in enumerate(perm):
        inv[t] = s
    return inv


def index_tables(
    rules: RuleSet | None = None, perms: tuple[tuple[int, ...], ...] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(obs_index [K, O], action_index [K, A]) int64 gather tables, one row per renaming of ``perms`` (default:
    :func:`permutations`, K = 24, or 6 for the rule sets that single out a suit); O and A are the rule set's
    observation size and action count (default: the standard rules, 789 and 56)."""
    rules = rules or STANDARD
    perms = permutations(rules) if perms is None else perms
    obs_tables = np.tile(np.arange(observation_size(rules)), (len(perms), 1))
    action_tables = np.tile(np.arange(rules.num_actions), (len(perms), 1))
    for k, perm in enumerate(perms):
        inv = _inverse(perm)
        cards = np.array([inv[c // 13] * 13 + c % 13 for c in range(52)])  # new card id -> old card id
        suits = np.array(inv)  # new suit -> old suit
        for name, offset, size in layout_of(rules):
            if name in CARD_PLANES:
                for base in range(offset, offset + size, 52):
                    obs_tables[k, base : base + 52] = base + cards
            elif name in SUIT_BLOCKS:
                block, _suits = SUIT_BLOCKS[name]
                for base in range(offset, offset + size, block):
                    obs_tables[k, base : base + 4] = base + suits
            elif name not in SUIT_FREE:
                raise ValueError(
                    f"observation feature {name!r} is not classified for suit renaming (training/distill/symmetry.py)"
                )
        action_tables[k, :52] = cards
        action_tables[k, TRUMP_ACTION_BASE : TRUMP_ACTION_BASE + 4] = TRUMP_ACTION_BASE + suits
    return obs_tables, action_tables
