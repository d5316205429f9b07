"""Episodes and rewards: the one definition shared by the AEC env and the training env.

Episode kinds (``EPISODES``):

- ``"game"``: a whole game, hand after hand. It *terminates* when won under
  the rules and is *truncated* when nobody has won after ``max_hands`` hands
  (``None``: no limit).
- ``"hand"``: one hand; it always ends with a *termination*, whatever the
  engine says about the game (the engine is built with ``max_hands=1``).

Reward modes (``REWARDS``), per seat:

- ``"balance"``: when a hand ends, that hand's balance (tricks - quota; zero
  sum). The sum over a game is the final running score.
- ``"result"`` (``episode="game"`` only): 0 until the last step of a game that
  was won; then the winners share +1 and the losers share -1 (one winner: +1,
  -0.5 for each loser; two winners: +0.5 each, -1 for the loser; everybody
  sharing the win: 0). A truncated game rewards 0.

:func:`check_episode` validates the options with messages naming the bad
value and what is allowed; :func:`engine_max_hands`, :func:`hand_rewards`,
:func:`result_rewards` and :func:`episode_end` are the bookkeeping.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

EPISODES: tuple[str, ...] = ("hand", "game")
REWARDS: tuple[str, ...] = ("balance", "result")


def check_episode(episode: Any, reward: Any, max_hands: Any) -> None:
    """Raise ValueError unless (episode, reward, max_hands) is a valid combination."""
    if episode not in EPISODES:
        raise ValueError(f"episode must be 'game' (a whole game) or 'hand' (one hand), got {episode!r}")
    if reward not in REWARDS:
        raise ValueError(
            f"reward must be 'balance' (tricks - quota at the end of each hand) or 'result' "
            f"(+1 shared by the winners, -1 by the losers, at the end of the game), got {reward!r}"
        )
    if reward == "result" and episode == "hand":
        raise ValueError(
            "reward='result' rewards winning the game, but episode='hand' ends after one hand: "
            "use reward='balance' with episode='hand', or episode='game' with reward='result'"
        )
    if max_hands is not None and (isinstance(max_hands, bool) or not isinstance(max_hands, int) or max_hands < 1):
        raise ValueError(f"max_hands must be a whole number >= 1 or None (no limit), got {max_hands!r}")


def engine_max_hands(episode: str, max_hands: int | None) -> int | None:
    """The engine's ``max_hands`` for an episode: 1 for a hand, else ``max_hands``."""
    return 1 if episode == "hand" else max_hands


def hand_rewards(balances: Sequence[int]) -> tuple[float, ...]:
    """Balance rewards by seat of a hand that ended with these balances (one per seat)."""
    return tuple(float(b) for b in balances)


def result_rewards(winners: Sequence[int] | None, num_players: int = 3) -> tuple[float, ...]:
    """Result rewards by seat at the end of a game (``winners`` None: truncated, all 0): the winners share +1,
    the losers -1."""
    if winners is None or len(winners) in (0, num_players):
        return (0.0,) * num_players
    win, lose = 1.0 / len(winners), -1.0 / (num_players - len(winners))
    return tuple(win if seat in winners else lose for seat in range(num_players))


def episode_end(episode: str, won: bool) -> tuple[bool, bool]:
    """(terminated, truncated) of an episode whose game just ended (``won``: under the rules)."""
    if episode == "hand" or won:
        return True, False
    return False, True
