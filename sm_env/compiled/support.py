"""Which rule sets the compiled engine runs: the one answer, asked by every compiled consumer.

:func:`supports` (and :func:`unsupported`, which names what is not supported, for
error messages) is what ``VectorGame``, ``CompiledGame`` (``raw_env``'s compiled path),
the compiled rollouts of search (``RolloutBatch``, used by pimc and ismcts) and, through
``VectorGame``, the batched training env and trainer ask. Plain Python, no numba:
``raw_env`` asks it without loading the compiled engine.

It fails closed: every field of :class:`~sm_env.core.rules.RuleSet` is either
``MAPPED`` (copied into the kernels' rule vector, :func:`sm_env.compiled.kernels.rules_config`,
and supported for the values of its kind) or ``REFUSED`` (supported only at the one
value named there, its default); a field in neither table makes every rule set
unsupported by name until it is classified (``tests/test_support.py`` checks that
the tables cover the fields).
"""

from __future__ import annotations

import dataclasses

from sm_env.core.game import MAX_ACTIONS, NUM_ACTIONS
from sm_env.core.rules import PRESETS, SECTION_10_OPTIONS, RuleSet

__all__ = ["INT32_MAX", "MAPPED", "REFUSED", "supported_presets", "supports", "unclassified", "unsupported"]

INT32_MAX = 2**31 - 1
"""The largest number the kernels' int32 state holds (scores, hand numbers)."""

BOOL, OPTIONAL_INT, QUOTAS, LABEL, DEALER_MAKES = "bool", "optional int", "quotas", "label", "true, false or up"
SEATS = "3 or 4"

_DEAL_SIZES = ("K_TRICKS", "K_HAND_SIZE", "K_KITTY_SIZE")

MAPPED: dict[str, tuple[str, tuple[str, ...]]] = {
    # field: (the kind of value supported, the kernels' rule-vector columns that hold it)
    "name": (LABEL, ()),  # a label: it changes no rule
    "pickup_before_discard": (BOOL, ("K_PICKUP", "K_NSTAGES", "K_ORDER")),
    "trump_after_kitty": (BOOL, ("K_TRUMP_AFTER_KITTY", "K_NSTAGES", "K_ORDER")),
    "quotas": (QUOTAS, ("K_Q",)),
    "no_exchange": (BOOL, ("K_NO_EXCHANGE",)),
    "max_exchange": (OPTIONAL_INT, ("K_MAX_EXCHANGE",)),
    "win_tricks": (OPTIONAL_INT, ("K_WIN_TRICKS",)),
    "win_margin": (OPTIONAL_INT, ("K_WIN_MARGIN",)),
    "target_score": (OPTIONAL_INT, ("K_TARGET",)),
    "target_symmetric": (BOOL, ("K_TARGET_SYM",)),
    "dealer_makes_quota": (DEALER_MAKES, ("K_DEALER_MAKES",)),  # 0 off, 1 at least its quota, 2 "up"
    "fixed_hands": (OPTIONAL_INT, ("K_FIXED",)),
    "no_kitty_51": (BOOL, ("K_NO_KITTY_51", *_DEAL_SIZES, "K_NSTAGES", "K_ORDER")),
    # section 10 (docs/rules.md)
    "chips": (BOOL, ("K_CHIPS",)),
    "trump_before_exchange": (BOOL, ("K_NSTAGES", "K_ORDER")),  # the hand order: Game's hand_order
    "kitty_before_exchange": (BOOL, ("K_NSTAGES", "K_ORDER")),
    "trump_after_send": (BOOL, ("K_NSTAGES", "K_ORDER")),
    "first_up_exchanges_first": (BOOL, ("K_FIRST_UP",)),
    "kitty_trick": (BOOL, ("K_KITTY_TRICK", "K_TRICKS")),
    "dealer_assigns_quotas": (BOOL, ("K_ASSIGN", "K_NSTAGES", "K_ORDER", "K_NUM_ACTIONS", "K_OBS_SIZE")),
    "one_card_kitty": (BOOL, ("K_ONE_CARD", "K_NSTAGES", "K_ORDER", "K_NUM_ACTIONS", "K_OBS_SIZE", *_DEAL_SIZES)),
    "auction": (BOOL, ("K_AUCTION", "K_NUM_ACTIONS", "K_OBS_SIZE")),
    "calls": (BOOL, ("K_CALLS", "K_NO_EXCHANGE", "K_NUM_ACTIONS", "K_OBS_SIZE")),
    # the seats (docs/rules.md 10.6): every seat loop of the kernels runs over range(cfg[K_PLAYERS])
    "players": (SEATS, ("K_PLAYERS", "K_Q", *_DEAL_SIZES, "K_OBS_SIZE")),
}
"""Fields the kernels play: (kind of value supported, the ``K_*`` columns of the rule vector that hold it)."""

REFUSED: dict[str, object] = {option: False for option in SECTION_10_OPTIONS if option not in MAPPED}
"""Fields the kernels do not play, with the one value they run (the default): the section 10 options
(docs/rules.md) not in ``MAPPED`` (none today: the kernels play every option; a new one lands here, or in
``MAPPED`` once the kernels play it)."""


def unclassified(names: object = None) -> list[str]:
    """Field names (default: the fields of RuleSet) that are in neither ``MAPPED`` nor ``REFUSED``."""
    if names is None:
        names = [field.name for field in dataclasses.fields(RuleSet)]
    return [name for name in names if name not in MAPPED and name not in REFUSED]


def _kind_ok(kind: str, value: object) -> bool:
    if kind == LABEL:
        return True
    if kind == BOOL:
        return isinstance(value, bool)
    if kind == DEALER_MAKES:
        return isinstance(value, bool) or value == "up"
    if kind == SEATS:
        return type(value) is int and value in (3, 4)
    if kind == OPTIONAL_INT:
        return value is None or (type(value) is int and 0 <= value <= INT32_MAX)
    # QUOTAS: whole numbers by role (as many as the seats: RuleSet checks that)
    return isinstance(value, tuple) and all(type(q) is int and 0 <= q <= INT32_MAX for q in value)


def unsupported(rules: RuleSet) -> list[str]:
    """What of ``rules`` the compiled engine does not run (empty: it runs the rule set).

    A refused boolean option that is on is named alone (``"calls"``); any other value as
    ``"name: value"`` (``"quotas: (-1, 9, 8)"``); a field the tables
    do not classify as ``"name (not classified for the compiled engine)"``.
    """
    found = []
    for field in dataclasses.fields(rules):
        name = field.name
        value = getattr(rules, name)
        if name in MAPPED:
            if not _kind_ok(MAPPED[name][0], value):
                found.append(f"{name}: {value}")
        elif name in REFUSED:
            if value != REFUSED[name] or type(value) is not type(REFUSED[name]):
                found.append(name if value is True else f"{name}: {value}")
        else:
            found.append(f"{name} (not classified for the compiled engine)")
    if not found and rules.num_actions not in (NUM_ACTIONS, MAX_ACTIONS):  # implied by the tables; checked all the same
        found.append(f"num_actions: {rules.num_actions}")
    return found


def supports(rules: RuleSet) -> bool:
    """Whether the compiled engine runs ``rules`` exactly (see :func:`unsupported`)."""
    return not unsupported(rules)


def supported_presets() -> list[str]:
    """Names of the presets the compiled engine runs (every preset of docs/rules.md sections 1-9 and those of
    section 10 whose options are in ``MAPPED``)."""
    return sorted(name for name, preset in PRESETS.items() if supports(preset))
