"""Hands that open with an exchange: what the trainers' ``exchange_start`` needs.

``exchange_start`` (the SB3 env, distillation's data) is the share of training hands that start with an
exchange, from the balances of an imaginary previous hand (``Game(start_balances=...)``). A rule set whose
first hand never exchanges cannot give such hands: ``no_exchange`` (and ``calls``, which turns it on:
docs/rules.md 10.3) has no exchange at all, and with ``auction`` hand 1 follows the auction (10.2).
"""

from __future__ import annotations

from sm_env.core.rules import RuleSet


def opens_with_exchange(rules: RuleSet) -> bool:
    """Whether hand 1 of ``rules`` can start with an exchange (from start balances)."""
    return not (rules.no_exchange or rules.auction)


def check_exchange_start(rules: RuleSet, exchange_start: float) -> None:
    """A ValueError (one line) if ``exchange_start`` is above 0 under rules whose first hand has no exchange."""
    if exchange_start > 0 and not opens_with_exchange(rules):
        raise ValueError(
            f"exchange_start must be 0 with the rules {rules.name!r}: their first hand has no exchange "
            "(no_exchange, calls or auction: docs/rules.md 10.2, 10.3)"
        )
