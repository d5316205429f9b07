"""Which cards a seat has not seen: the deck of a rule set and the cards still out.

Small helpers shared by the heuristic player, the world sampler and the
search agents. They use only what a :class:`~sm_env.core.knowledge.PlayerView`
shows (the rules, the own hand, the cards played, the own discards).
"""

from __future__ import annotations

from sm_env.core.cards import deck_of
from sm_env.core.knowledge import PlayerView

__all__ = ["deck_of", "outstanding_of"]


def outstanding_of(view: PlayerView) -> int:
    """Cards that may still be in an opponent's hand, as far as this seat knows (with ``one_card_kitty`` not the
    face-up card unless an opponent took it, nor the card this seat put out of play)."""
    p = view.played
    played = p[0] | p[1] | p[2] if len(p) == 3 else p[0] | p[1] | p[2] | p[3]  # three or four players
    out = deck_of(view.rules) & ~view.hand & ~played
    if view.discards:
        for c in view.discards:
            out &= ~(1 << c)
    face_up = getattr(view, "face_up", -1)
    if face_up >= 0:
        if view.take is None or not view.take[1]:
            out &= ~(1 << face_up)
        if view.put_out is not None:
            out &= ~(1 << view.put_out)
    return out
