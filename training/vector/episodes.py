"""The open episodes of Deep Monte-Carlo: each decision held until its episode ends, then its Monte-Carlo target.

One :class:`EpisodeBook` per set of games (the learner's own games with ``train.actors: 0``, each acting
process's games otherwise: training/vector/actors.py). Layout: decision ``k`` of game ``i``'s open episode at
``[k, i]`` of ``obs`` (float32 [K, N, observation size]), ``action`` and ``seat`` (int64 [K, N]) and
``paid_before`` (float64 [K, N]: what the deciding seat had been paid in the episode before it); ``length[i]``
decisions are open in game ``i``, ``paid[i, s]`` is what seat ``s`` has been paid since game ``i``'s episode
began. ``K`` starts at :data:`OPEN_STEPS` and doubles whenever an episode needs more room.

Target of a decision when its episode ends: ``paid[i, seat] - paid_before[k, i]``, what its seat was paid from
that decision on (its own step included), undiscounted (training/vector/dmc.py's module docstring).
"""

from __future__ import annotations

import numpy as np

OPEN_STEPS = 64  # first room for each game's open episode (decisions); doubled whenever an episode needs more
ARRAYS = ("obs", "action", "seat", "paid_before")


class EpisodeBook:
    """The open episodes of ``num_games`` games (module docstring)."""

    def __init__(self, num_games: int, obs_size: int, num_players: int) -> None:
        n = self.num_games = num_games
        self.rows = np.arange(n)
        self.obs = np.zeros((OPEN_STEPS, n, obs_size), dtype=np.float32)
        self.action = np.zeros((OPEN_STEPS, n), dtype=np.int64)
        self.seat = np.zeros((OPEN_STEPS, n), dtype=np.int64)
        self.paid_before = np.zeros((OPEN_STEPS, n), dtype=np.float64)
        self.length = np.zeros(n, dtype=np.int64)
        self.paid = np.zeros((n, num_players), dtype=np.float64)

    def record(self, obs: np.ndarray, actions: np.ndarray, seat: np.ndarray) -> None:
        """One decision in every game: its observation, the action taken and the seat that took it."""
        if self.length.max() == len(self.obs):
            self.grow()
        k, rows = self.length, self.rows
        self.obs[k, rows] = obs
        self.action[k, rows] = actions
        self.seat[k, rows] = seat
        self.paid_before[k, rows] = self.paid[rows, seat]
        self.length += 1

    def pay(self, paid: np.ndarray, done: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The step's rewards by seat (float64 [N, P]) and which episodes it ended: the finished decisions of
        those (:meth:`finish`), or None when none ended."""
        self.paid += paid
        return self.finish(np.flatnonzero(done)) if done.any() else None

    def finish(self, games: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The episodes of ``games`` just ended: their decisions (observations, actions, targets: games in
        order, decisions in order), and the games' episodes emptied."""
        lengths = self.length[games]
        game = np.repeat(games, lengths)  # decision d of the ended episodes: game[d], its k[d]-th decision
        k = np.arange(len(game)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        seat = self.seat[k, game]
        target = self.paid[game, seat] - self.paid_before[k, game]
        finished = (self.obs[k, game], self.action[k, game], target)
        self.length[games] = 0
        self.paid[games] = 0.0
        return finished

    def grow(self) -> None:
        """Twice the room for the open episodes (an episode longer than any before)."""
        for name in ARRAYS:
            old = getattr(self, name)
            setattr(self, name, np.concatenate([old, np.zeros_like(old)]))
