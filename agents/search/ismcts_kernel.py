"""Compiled ISMCTS iterations: :meth:`agents.search.ismcts.IsmctsAgent.search`'s loop in numba, the same
algorithm, the same random numbers and the same rollouts, so the same tree for a given seed.

:mod:`agents.search.ismcts` is the readable reference. Here one kernel call runs
many iterations: sample a deal (:mod:`agents.search.world_kernel`, drawing from
the agent's Mersenne Twister exactly as ``random.Random`` would), write it
into an engine row (:mod:`sm_env.compiled.kernels`), select and expand in the
tree, play the hand out with the heuristic
(:func:`agents.search.rollout_kernel.rollout_row`) and back up the rewards.

Tree layout (struct of arrays, node 0 the root, nodes in the order they
were created): ``action``, ``player`` (-1 at the root), ``visits``,
``avail``, ``total`` and ``child[node, action]`` (-1: no child yet).
:class:`CompiledTree` grows it and turns it into :class:`agents.search.ismcts.Node`
objects.

The deal only changes a row's hands and kitty (and which cards another
dealer's discards are), so the row of one deal built by
``world_from_view`` + ``RolloutBatch.load`` serves as the template of all.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
from numba import njit

from agents.players.unseen import deck_of
from sm_env.compiled import kernels as vk
from sm_env.compiled.cache_key import key_cache_to_sources
from sm_env.core.game import DISCARD, MAX_ACTIONS, OVER, TRUMP
from sm_env.core.knowledge import PlayerView

from .rollout_kernel import RolloutBatch, hand_balance, lowest, rollout_row
from .world_kernel import CHECK_TABLES, MAX_LOCATIONS, TwisterStream, randbelow, sample_placement
from .world_sampler import ACROSS, KITTY, LEFT, OUT, RIGHT, Constraints, WorldError, slacks, world_from_view

MAX_DEPTH = 128  # decisions from a searched decision to the end of a hand (at most 1 + 4 + 51)


@njit(cache=True, inline="always")
def _lowest(mask, count):
    """The ``count`` lowest cards of ``mask``."""
    out = np.int64(0)
    for _ in range(count):
        low = mask & -mask
        out |= low
        mask ^= low
    return out


@njit(cache=True)
def grow(
    mt,
    pos,
    allowed,
    unknown,
    capacity,
    slack0,
    check_sets,
    check_count,
    template_st,
    template_cm,
    st,
    cm,
    cfg,
    world,
    start_balances,
    left,
    c,
    iterations,
    action,
    player,
    parent,
    visits,
    avail,
    total,
    child,
    n_nodes,
):
    """Run ``iterations`` ISMCTS iterations on the tree (``n_nodes[0]`` nodes); returns -1, or the card at
    which deal sampling got stuck.

    ``world``: [deck, seat, left seat, right seat, own hand, kitty taken (0/1), the known kitty, the dealer's
    discards when the viewer knows them (a mask), 1 when it does, else the number of discards made (the
    engine then takes that many of the deal's cards out of play, the lowest first, as ``world_from_view``),
    the seat across (four players; -1 with three)].
    """
    placed = np.zeros(MAX_LOCATIONS, dtype=np.int64)
    path = np.zeros(MAX_DEPTH, dtype=np.int64)
    empty_log = np.zeros(0, dtype=np.int64)
    rng = np.zeros(1, dtype=np.uint64)  # never drawn from: the hand ends the row
    reward = np.zeros(vk.MAX_SEATS, dtype=np.float32)
    deck = world[0]
    for _ in range(iterations):
        stuck = sample_placement(mt, pos, allowed, unknown, capacity, slack0, check_sets, check_count, placed)
        if stuck >= 0:
            return stuck
        for k in range(vk.NUM_S):
            st[0, k] = template_st[0, k]
        for k in range(vk.NUM_C):
            cm[0, k] = template_cm[0, k]
        cm[0, vk.C_HAND + world[1]] = np.uint64(world[4])
        cm[0, vk.C_HAND + world[2]] = np.uint64(placed[LEFT])
        cm[0, vk.C_HAND + world[3]] = np.uint64(placed[RIGHT])
        if world[10] >= 0:
            cm[0, vk.C_HAND + world[10]] = np.uint64(placed[ACROSS])
        cm[0, vk.C_KITTY] = np.uint64(world[6] if world[5] else placed[KITTY])
        out_d = world[7] if world[8] else _lowest(placed[OUT], world[9])  # the discards the row's dealer knows
        cfg[vk.K_MAX_HANDS] = st[0, vk.S_HAND_NO]
        node = 0
        depth = 1
        path[0] = 0
        while st[0, vk.S_PHASE] != OVER:  # select while fully expanded, else expand one
            legal = np.int64(vk._legal_bits(0, st, cm))
            untried = 0
            m = legal
            while m:
                a = lowest(m)
                m &= m - 1
                if child[node, a] < 0:
                    untried += 1
            phase = st[0, vk.S_PHASE]
            if untried:
                pick = randbelow(mt, pos, untried)
                m = legal
                a = -1
                while m:
                    a = lowest(m)
                    m &= m - 1
                    if child[node, a] < 0:
                        if pick == 0:
                            break
                        pick -= 1
                new = n_nodes[0]
                n_nodes[0] = new + 1
                action[new] = a
                player[new] = st[0, vk.S_CUR]
                parent[new] = node
                visits[new] = 0
                avail[new] = 1
                total[new] = 0.0
                child[node, a] = new
                if phase == DISCARD:
                    out_d |= np.int64(1) << a
                vk._apply(0, st, cm, rng, cfg, a, reward)
                path[depth] = new
                depth += 1
                break
            best = -1
            best_key = -math.inf
            m = legal
            while m:
                a = lowest(m)
                m &= m - 1
                ch = child[node, a]
                avail[ch] += 1
                key = total[ch] / visits[ch] + c * math.sqrt(math.log(avail[ch]) / visits[ch])
                if key > best_key:
                    best = ch
                    best_key = key
            a = action[best]
            if phase == DISCARD:
                out_d |= np.int64(1) << a
            vk._apply(0, st, cm, rng, cfg, a, reward)
            node = best
            path[depth] = node
            depth += 1
        rollout_row(0, st, cm, cfg, deck, out_d, -1, empty_log)
        for d in range(depth):
            n = path[d]
            visits[n] += 1
            if player[n] >= 0:
                total[n] += (hand_balance(st, 0, player[n]) - start_balances[player[n]]) / left
    return -1


_FIELDS = (  # name, dtype, fill
    ("action", np.int64, -1),
    ("player", np.int64, -1),
    ("parent", np.int64, -1),
    ("visits", np.int64, 0),
    ("avail", np.int64, 0),
    ("total", np.float64, 0.0),
    ("child", np.int64, -1),
)


class CompiledTree:
    """An ISMCTS tree of one decision grown by the kernel; see the module docstring.

    ``rng`` is the agent's generator: its stream is copied in and written back by :meth:`close`. ``c``: the
    exploration constant; ``left``: the tricks left in the hand (the rewards are balance gained / ``left``).
    """

    def __init__(self, view: PlayerView, cons: Constraints, rng: random.Random, c: float, left: int) -> None:
        self.cons = cons
        self.c = float(c)
        self.stream = TwisterStream(rng)
        template = TwisterStream(random.Random(0)).sample_world(view.hand, cons)  # any deal: rows differ by deal
        deck = deck_of(view.rules)
        batch = RolloutBatch(view.rules, 1)
        game = world_from_view(view, template)
        batch.load(0, game, deck, 0)
        self.template_st, self.template_cm, cfg = batch.arrays()
        self.st = self.template_st.copy()
        self.cm = self.template_cm.copy()
        self.cfg = cfg.copy()
        known = view.phase != TRUMP and view.discards is not None
        discards = 0
        for card in view.discards or ():
            discards |= 1 << card
        made = view.discard_count if view.phase != TRUMP and not known else 0
        kitty = view.kitty or 0
        kitty_known = view.kitty_taken
        if view.face_up >= 0:  # one_card_kitty: the kitty is the face-up card, public (as world_from_view has it)
            kitty, kitty_known = 1 << view.face_up, True
        seats = cons.seats
        across = seats[2] if len(seats) > 2 else -1
        values = [deck, view.seat, seats[0], seats[1], view.hand, kitty_known, kitty, discards, known, made, across]
        self.world = np.array(values, dtype=np.int64)
        self.allowed = np.array(cons.allowed, dtype=np.int64)
        self.capacity = np.array(cons.capacity, dtype=np.int64)
        self.slack = np.array(slacks(cons), dtype=np.int64)
        self.checks = CHECK_TABLES[len(cons.capacity)]
        self.start_balances = np.array(game.hand_balances(), dtype=np.int64)  # public: the same in every deal
        self.left = left  # the rewards are balance gained from here / left
        self.n_nodes = np.ones(1, dtype=np.int64)  # the root
        self.tree: dict[str, np.ndarray] = {}
        self._reserve(256)

    def _reserve(self, size: int) -> None:
        have = len(self.tree["visits"]) if self.tree else 0
        if size <= have:
            return
        size = max(size, 2 * have)
        grown = {}
        for name, dtype, fill in _FIELDS:
            grown[name] = np.full((size, MAX_ACTIONS) if name == "child" else size, fill, dtype=dtype)
            if have:
                grown[name][:have] = self.tree[name]
        self.tree = grown

    def iterate(self, iterations: int) -> None:
        """Run ``iterations`` more iterations (each adds at most one node)."""
        self._reserve(int(self.n_nodes[0]) + iterations)
        t = self.tree
        stuck = grow(
            self.stream.mt,
            self.stream.pos,
            self.allowed,
            np.int64(self.cons.unknown),
            self.capacity,
            self.slack,
            *self.checks,
            self.template_st,
            self.template_cm,
            self.st,
            self.cm,
            self.cfg,
            self.world,
            self.start_balances,
            self.left,
            self.c,
            iterations,
            t["action"],
            t["player"],
            t["parent"],
            t["visits"],
            t["avail"],
            t["total"],
            t["child"],
            self.n_nodes,
        )
        if stuck >= 0:
            raise WorldError(f"seat {self.cons.seat}: sampling got stuck at card {stuck}")

    def close(self) -> None:
        """Write the advanced random state back into the agent's generator."""
        self.stream.close()

    def nodes(self, node_class: type) -> Any:
        """The tree as ``node_class(action, player)`` objects (the root ``node_class()``) with ``children``
        (in the order they were created), ``visits``, ``avail`` and ``total``; returns the root."""
        t = self.tree
        made = []
        for i in range(int(self.n_nodes[0])):
            node = node_class(int(t["action"][i]), int(t["player"][i])) if i else node_class()
            node.visits = int(t["visits"][i])
            node.avail = int(t["avail"][i])
            node.total = float(t["total"][i])
            if i:
                made[t["parent"][i]].children[node.action] = node
            made.append(node)
        return made[0]


key_cache_to_sources(globals())  # the cache of this file's kernels, keyed to the code they are compiled from
