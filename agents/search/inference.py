"""Weighting sampled deals by how well they explain the opponents' play (belief inference).

:mod:`agents.search.world_sampler` draws deals close to uniformly among those consistent with what a seat knows
for certain (voids shown, cards exchanged). The opponents' play says more than that: a seat that led a low card
of a suit is less likely to hold its ace than one that led the ace. This module scores a sampled deal by the
log-likelihood, under a policy, of every card each opponent played in the hand so far: the deal is set up at
the first trick of the hand (each seat's sampled cards plus the cards it has played since), the tricks are
replayed card by card, and at each opponent's play with a choice the policy's log-probability of the card it
played is added (its softmax over the legal cards, on that opponent's observation of the replayed position).

:func:`deal_log_likelihoods` scores a batch of sampled deals in one forward pass; :func:`resample` keeps
deals in proportion to their tempered likelihood. The policy models the opponents; against players unlike it
the likelihood is only an approximation, which the temperature softens (0: every deal equal, the uniform
sampler's; 1: the policy's own likelihood).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from sm_env.core.game import PLAY, Game
from sm_env.core.knowledge import PlayerView, player_view
from sm_env.observation import encode

from .world_sampler import World, kitty_and_discards, take_of

Logits = Callable[[np.ndarray], np.ndarray]
"""A batch forward pass: float32 [n, observation size] -> logits [n, actions]."""


def start_of_play(view: PlayerView, world: World) -> Game:
    """The sampled deal ``world`` set up at the first trick of ``view``'s hand: each seat holds its sampled
    cards and the cards it has played this hand; no trick played yet."""
    tricks = view.tricks()
    leader = tricks[0].leader if tricks else view.trick_leader
    kitty, discards = kitty_and_discards(view, world)
    hands = [h | p for h, p in zip(world.hands, view.played, strict=True)]
    return Game.from_position(
        view.rules,
        hand_number=view.hand_number,
        dealer=view.dealer,
        scores=view.scores,
        previous_balances=view.previous_balances,
        phase=PLAY,
        to_act=leader,
        hands=hands,
        kitty=kitty,
        kitty_taken=view.kitty_taken,
        trump=view.trump,
        discards=discards,
        trick=(),
        trick_leader=leader,
        tricks_won=(0,) * len(hands),
        tricks_played=0,
        played=(0,) * len(hands),
        voids=(0,) * len(hands),
        quotas=view.quotas,
        take=take_of(view, world),
        call=view.call,
    )


def opponent_plays(view: PlayerView, world: World) -> list[tuple[np.ndarray, int, int]]:
    """Each opponent play with a choice in ``view``'s hand so far, replayed in ``world``: (the opponent's
    observation, the card it played, its legal set)."""
    game = start_of_play(view, world)
    out = []
    for trick in view.tricks():
        for card in trick.cards:
            seat = game.current
            legal = game.legal_mask()
            if seat != view.seat and legal & (legal - 1):
                out.append((encode(player_view(game, seat)), card, legal))
            game.apply(card)
    return out


def deal_log_likelihoods(view: PlayerView, worlds: Sequence[World], logits: Logits) -> np.ndarray:
    """float64 [len(worlds)]: the log-likelihood of the opponents' plays so far in each sampled deal."""
    rows, owner, cards, masks = [], [], [], []
    for i, world in enumerate(worlds):
        for obs, card, legal in opponent_plays(view, world):
            rows.append(obs)
            owner.append(i)
            cards.append(card)
            masks.append([legal >> a & 1 for a in range(52)])
    out = np.zeros(len(worlds))
    if not rows:
        return out
    z = logits(np.asarray(rows, dtype=np.float32)).astype(np.float64)[:, :52]
    z = np.where(np.asarray(masks, dtype=bool), z, -np.inf)
    z -= z.max(axis=1, keepdims=True)
    logp = z[np.arange(len(cards)), cards] - np.log(np.exp(z).sum(axis=1))
    np.add.at(out, np.asarray(owner), logp)
    return out


def resample(
    worlds: Sequence[World], log_likelihoods: np.ndarray, count: int, temperature: float, u: float
) -> list[World]:
    """``count`` deals drawn with replacement from ``worlds`` with probability proportional to
    likelihood ** ``temperature``, by systematic resampling from the uniform draw ``u`` in [0, 1): the k-th
    pick is the deal whose share of the cumulative weight covers (u + k) / count."""
    w = temperature * np.asarray(log_likelihoods, dtype=np.float64)
    w = np.exp(w - w.max())
    edges = np.cumsum(w / w.sum())
    picks = np.searchsorted(edges, (u + np.arange(count)) / count, side="right")
    return [worlds[min(int(p), len(worlds) - 1)] for p in picks]


def effective_size(log_likelihoods: np.ndarray, temperature: float) -> float:
    """The effective number of deals of the weights (1 / sum of squared normalized weights)."""
    w = temperature * log_likelihoods
    w = np.exp(w - w.max())
    w /= w.sum()
    return float(1.0 / (w * w).sum()) if math.isfinite(w.sum()) else 0.0
