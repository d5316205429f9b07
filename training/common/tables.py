"""The closing table of every run and of ``sergeant-major train --evaluate``: one line per opponent and role
(standard library only)."""

from __future__ import annotations

from typing import Any


def format_table(results: dict[str, Any]) -> str:
    """The table of ``training.evaluation.evaluate.evaluate_against``'s results, one line per opponent and role
    (the closing table of every run)."""

    def ci(pair: list[float]) -> str:
        return f"[{pair[0]:+.3f}, {pair[1]:+.3f}]"

    lines = [
        f"{'opponent':<11}{'role':<8}{'balance':>9}{'95% CI':>19}{'opp. bal':>10}"
        f"{'advantage':>11}{'95% CI':>19}{'beats it':>10}"
    ]
    for opponent, per_role in results.items():
        for role, r in per_role.items():  # the rule set's roles, then all
            line = (
                f"{opponent:<11}{role:<8}{r['balance']:>+9.3f}{ci(r['balance_ci']):>19}{r['opponent_balance']:>+10.3f}"
            )
            if "advantage" in r:
                verdict = "yes" if r["advantage_ci"][0] > 0 else ("NO" if r["advantage_ci"][1] < 0 else "unclear")
                line += f"{r['advantage']:>+11.3f}{ci(r['advantage_ci']):>19}{verdict:>10}"
            lines.append(line)
    return "\n".join(lines)
