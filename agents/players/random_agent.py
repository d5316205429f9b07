"""A uniformly random legal player (the floor every baseline must beat)."""

from __future__ import annotations

from typing import Any

from sm_env.core.cards import from_mask
from sm_env.core.knowledge import PlayerView

from .base import Agent


class RandomAgent(Agent):
    """Picks uniformly among the legal actions with its own seeded RNG."""

    name = "random"

    def act(self, view: PlayerView, observation: dict[str, Any] | None = None) -> int:
        if not view.legal:
            raise ValueError(f"{self.name}: no legal action for seat {view.seat} (is it to act?)")
        return self.choose(view.legal)

    def choose(self, legal: int) -> int:
        """What :meth:`act` plays, from the legal-action bit set alone (not empty): a uniform draw."""
        return self.rng.choice(from_mask(legal))
