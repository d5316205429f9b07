"""The roles the SB3 learner plays: ``learner_seats`` read under a rule set.

``learner_seats`` is ``"all"``, a role name or a list of role names; the names are the rule set's
(:func:`sm_env.core.game.role_names`): dealer, eldest, middle with three players, dealer, eldest, third,
fourth with four (docs/rules.md 10.6). The env draws one of them per episode; the config checks them with
the same function, so both refuse the same values with the same message.
"""

from __future__ import annotations

from collections.abc import Sequence

from sm_env.core.game import role_names
from sm_env.core.rules import RuleSet


def role_indices(learner_seats: str | Sequence[str], rules: RuleSet) -> tuple[int, ...]:
    """The role indices (sorted, distinct) of ``learner_seats`` under ``rules``; a ValueError in one line
    names the rule set's allowed roles."""
    names = role_names(rules)
    if learner_seats == "all":
        return tuple(range(len(names)))
    if isinstance(learner_seats, str):
        learner_seats = [learner_seats]
    out = []
    for role in learner_seats:
        if role not in names:
            raise ValueError(
                f"learner_seats: unknown role {role!r} for the rules {rules.name!r} ({rules.num_players} players); "
                f"allowed: 'all' or a list of {', '.join(names)}"
            )
        out.append(names.index(role))
    if not out:
        raise ValueError("learner_seats: empty list; give 'all' or at least one role")
    return tuple(sorted(set(out)))
