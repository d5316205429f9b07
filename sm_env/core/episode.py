"""Episodes and rewards: the one definition shared by the AEC env and the training env.

Episode kinds (``EPISODES``):

- ``"game"``: a whole game, hand after hand. It *terminates* when won under
  the rules and is *truncated* when nobody has won after ``max_hands`` hands
  (``None``: no limit).
- ``"hand"``: one hand; it always ends with a *termination*, whatever the
  engine says about the game (the engine is built with ``max_hands=1``).

Reward modes (``REWARDS``), per seat:

- ``"score"`` (the default of every env): when a hand ends, the change of the
  seat's running score (``Game.scores``) in that hand: the hand's balance
  (tricks - quota), or with ``chips`` (docs/rules.md 10.7) the chips it won or
  paid. Zero sum. Invariant, in every rule set: over an episode the rewards
  of a seat add up to its running score at the end minus its running score at
  the start (every game starts at 0: ``start_balances`` are the balances of an
  imaginary hand before the game and are not scored). The running score is
  what ``target_score`` and ``fixed_hands`` rank by and what the record's
  ``scores`` hold.
- ``"balance"``: when a hand ends, that hand's balance (tricks - quota, or
  maximum - tricks in a misère hand; zero sum). It equals ``"score"`` in every
  rule set without ``chips``; under ``chips`` it is not what the game is
  scored by, and its sum over a game is not the final score.
- ``"result"`` (``episode="game"`` only): 0 until the last step of a game that
  was won; then the winners share +1 and the losers share -1 (one winner: +1,
  -0.5 for each loser; two winners: +0.5 each, -1 for the loser; everybody
  sharing the win: 0). A truncated game rewards 0.

A passed-out deal (``auction``) is no hand played: it scores nothing and pays
no reward in any mode.

:func:`check_episode` validates the options with messages naming the bad
value and what is allowed; :func:`engine_max_hands`, :func:`hand_rewards`,
:func:`result_rewards` and :func:`episode_end` are the bookkeeping.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

EPISODES: tuple[str, ...] = ("hand", "game")
REWARDS: tuple[str, ...] = ("score", "balance", "result")
DEFAULT_REWARD = "score"
"""The reward mode of every environment unless told otherwise: what decides the game."""


def check_episode(episode: Any, reward: Any, max_hands: Any) -> None:
    """Raise ValueError unless (episode, reward, max_hands) is a valid combination."""
    if episode not in EPISODES:
        raise ValueError(f"episode must be 'game' (a whole game) or 'hand' (one hand), got {episode!r}")
    if reward not in REWARDS:
        raise ValueError(
            f"reward must be 'score' (the change of the running score at the end of each hand), 'balance' "
            f"(the hand's tricks - quota, which differs from the score under chips) or 'result' "
            f"(+1 shared by the winners, -1 by the losers, at the end of the game), got {reward!r}"
        )
    if reward == "result" and episode == "hand":
        raise ValueError(
            "reward='result' rewards winning the game, but episode='hand' ends after one hand: "
            "use reward='score' with episode='hand', or episode='game' with reward='result'"
        )
    if max_hands is not None and (isinstance(max_hands, bool) or not isinstance(max_hands, int) or max_hands < 1):
        raise ValueError(f"max_hands must be a whole number >= 1 or None (no limit), got {max_hands!r}")


def engine_max_hands(episode: str, max_hands: int | None) -> int | None:
    """The engine's ``max_hands`` for an episode: 1 for a hand, else ``max_hands``."""
    return 1 if episode == "hand" else max_hands


def hand_rewards(
    reward: str, balances: Sequence[int], scores_before: Sequence[int], scores_after: Sequence[int]
) -> tuple[float, ...] | None:
    """Rewards by seat of a hand that ended (None: the mode pays nothing at the end of a hand).

    ``balances``: the hand's balances; ``scores_before`` / ``scores_after``:
    the running scores before and after the hand (the engine's, which alone
    decides how a hand is scored). ``"score"`` pays their difference,
    ``"balance"`` the balances, ``"result"`` nothing.
    """
    if reward == "score":
        return tuple(float(after - before) for before, after in zip(scores_before, scores_after, strict=True))
    if reward == "balance":
        return tuple(float(b) for b in balances)
    return None


def result_rewards(winners: Sequence[int] | None, num_players: int = 3) -> tuple[float, ...]:
    """Result rewards by seat at the end of a game (``winners`` None: truncated, all 0): the winners share +1,
    the losers -1."""
    if winners is None or len(winners) in (0, num_players):
        return (0.0,) * num_players
    win, lose = 1.0 / len(winners), -1.0 / (num_players - len(winners))
    return tuple(win if seat in winners else lose for seat in range(num_players))


def result_table(num_players: int = 3) -> tuple[tuple[float, ...], ...]:
    """:func:`result_rewards` by winner bit set: entry ``bits`` (bit s set when seat s won; 0: nobody won) holds
    the rewards by seat. For engines that record the winners as a bit set (the compiled engine's)."""
    seats = range(num_players)
    return tuple(result_rewards([s for s in seats if bits >> s & 1], num_players) for bits in range(1 << num_players))


def episode_end(episode: str, won: bool) -> tuple[bool, bool]:
    """(terminated, truncated) of an episode whose game just ended (``won``: under the rules)."""
    if episode == "hand" or won:
        return True, False
    return False, True
