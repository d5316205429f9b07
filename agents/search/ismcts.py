"""Information-Set Monte Carlo Tree Search (single-observer ISMCTS).

The algorithm is SO-ISMCTS of Cowling, Powley and Whitehouse, "Information
Set Monte Carlo Tree Search" (IEEE TCIAIG 4(2), 2012), for three or four players.
One tree is grown from the searching seat's information set. Each iteration:

1. *Determinize*: sample one deal consistent with everything the seat knows
   (:func:`agents.search.world_sampler.sample_world`) and build it as an engine
   game (:func:`~agents.search.world_sampler.world_from_view`).
2. *Select*: from the root, while every action legal in this deal already
   has a child, move to the child that maximises the UCB with availability
   ``mean + c * sqrt(ln(availability) / visits)``, where ``mean`` is the
   average reward of the seat to act there (the seat to act, own or an
   opponent's, is decided by the public play so far, so it is the same in
   every deal). Children are keyed by action alone; a child's availability
   counts the selections at its parent in which its action was legal.
3. *Expand*: add one child for a random legal action not tried yet.
4. *Simulate*: play the hand out with the heuristic for every seat
   (:func:`agents.search.rollout.rollout`; each seat sees only its own hand and the
   public play, so the rollout is not clairvoyant, only the deal is).
5. *Back up*: every node on the path adds the reward of the seat that chose
   the action leading to it.

Value backed up: for each seat, the change of its hand balance (tricks -
quota; in a misère hand maximum - tricks, docs/rules.md 10.3) from the
decision to the end of the hand, divided by the tricks left. Once the hand's
call is made that is the tricks taken from here (taken away in a misère
hand) over the tricks left, in [0, 1] (in [-1, 0]); at the dealer's call
(``calls``) it also compares a misère against a suit or no-trump hand, each
as the engine scores it. Each seat is played for its own balance.
The 12-trick game win is not valued (as in :mod:`agents.search.pimc`). The action
played is the root child with the most visits; ties go to the heuristic's
choice, then to the lowest action id.

Phases: the play of the tricks is searched. Naming trump and the discards
are searched only with ``bid=1`` (the tree then starts at the trump or at the
next discard and runs on into the play); it is off by default because the
heuristic rollouts measure trump and discard choices poorly (see
:mod:`agents.search.pimc`, where the same option measured worse than the heuristic).
The exchange always defers to the heuristic (the engine cannot resume an
exchange in progress from a view), and so do the quota assignment and a
trump or discards made before the hand's exchange is over (docs/rules.md 10.1). Decisions with one legal action are not
searched.

Budget: ``iterations`` per decision (default 200; reproducible under a seed)
or ``seconds`` per decision (iterate until the time is up, at least one
iteration, at most ``MAX_ITERATIONS`` so that the tree's memory stays
bounded; not reproducible). ``c`` is the exploration constant (default
0.3). The paper uses 0.7 for rewards in [0, 1], but here one trick of 16 is
worth only 0.06, and 0.7 spreads 100-200 iterations almost evenly; a short
sweep (100 iterations against the heuristic, 40 duplicate hands) gave
+0.23, +0.33 and +0.26 balance per hand for c = 0.7, 0.3 and 0.15, so the
choice is within noise and 0.3 is the middle of it.

Speed: by default the whole loop runs compiled (:mod:`agents.search.ismcts_kernel`):
the same draws from the agent's generator, the same rollout cards and the
same floating-point updates, so a seed grows the same tree either way. An
iteration needs the rewards of the one before, so iterations run one after
another inside one kernel call rather than as a batch. ``kernel=0`` forces
the Python loop below, which is also used when numba is missing or the
kernel does not know an option of the rules.

Spec strings (see :func:`agents.make_agent`): ``ismcts``,
``ismcts:iterations=400``, ``ismcts:seconds=0.2``, ``ismcts:iterations=200,c=0.5``,
``ismcts:kernel=0``.
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

from agents.players.base import Agent
from agents.players.heuristic import heuristic_action
from agents.players.unseen import deck_of
from sm_env.compiled.readiness import first_compile
from sm_env.core.cards import from_mask, to_mask
from sm_env.core.game import DISCARD, OVER, PLAY, TRUMP, Game
from sm_env.core.knowledge import PlayerView

from .rollout import compiled_rollouts, rollout
from .world_sampler import Constraints, constraints_of, sample_world, world_from_view

MAX_ITERATIONS = 100_000
"""The most iterations of one decision under a time budget, and the largest ``iterations`` a spec may ask for
(:data:`agents.AGENT_PARAMS`): each adds a tree node (about 700 bytes), so a decision stays under 100 MB."""


class Node:
    """A tree node: reached by ``action`` chosen by ``player`` (None at the root)."""

    __slots__ = ("action", "player", "children", "visits", "avail", "total")

    def __init__(self, action: int | None = None, player: int | None = None) -> None:
        self.action = action
        self.player = player
        self.children: dict[int, Node] = {}
        self.visits = 0
        self.avail = 0
        self.total = 0.0  # sum of the rewards of ``player``

    def mean(self) -> float:
        return self.total / self.visits if self.visits else 0.0


def _discard_mask(game: Game) -> int:
    return to_mask(game.log.discards or ())


class IsmctsAgent(Agent):
    """SO-ISMCTS with heuristic rollouts; see the module docstring."""

    name = "ismcts"

    def __init__(
        self,
        seed: int | None = None,
        iterations: int = 200,
        seconds: float | None = None,
        c: float = 0.3,
        bid: bool = False,
        kernel: bool = True,
    ) -> None:
        super().__init__(seed)
        if iterations < 1:
            raise ValueError(f"ismcts: iterations must be >= 1, got {iterations}")
        if seconds is not None and not seconds > 0:
            raise ValueError(f"ismcts: seconds must be > 0, got {seconds}")
        if not (c >= 0 and math.isfinite(c)):
            raise ValueError(f"ismcts: c must be a finite number >= 0, got {c}")
        self.iterations = iterations
        self.seconds = seconds
        self.c = c
        self.bid = bid
        self.kernel = kernel
        self.decisions = 0
        self.total_iterations = 0
        default = (iterations, seconds, c, bid, kernel) == (200, None, 0.3, False, True)
        self.name = "ismcts" if default else self._label()

    def _label(self) -> str:
        parts = [f"seconds={self.seconds:g}" if self.seconds is not None else f"iterations={self.iterations}"]
        if self.c != 0.3:
            parts.append(f"c={self.c:g}")
        if self.bid:
            parts.append("bid=1")
        if not self.kernel:
            parts.append("kernel=0")
        return "ismcts:" + ",".join(parts)

    def act(self, view: PlayerView, observation: dict[str, Any] | None = None) -> int:
        legal = from_mask(view.legal)
        if not legal:
            raise ValueError(f"ismcts: no legal action for seat {view.seat} (is it to act?)")
        default = heuristic_action(view)
        phase = view.phase
        searched = phase == PLAY or (self.bid and phase in (TRUMP, DISCARD) and not view.exchange_pending)
        if len(legal) == 1 or not searched:
            return default
        root = self.search(view)
        return max(legal, key=lambda a: (self._visits(root, a), a == default, -a))

    @staticmethod
    def _visits(root: Node, action: int) -> int:
        child = root.children.get(action)
        return child.visits if child is not None else 0

    def search(self, view: PlayerView) -> Node:
        """Grow a tree from the view's information set; returns its root.

        Compiled (:mod:`agents.search.ismcts_kernel`: the same draws, rollouts and tree) when ``kernel`` is on, numba
        is installed, the agent's generator is a plain ``random.Random`` and the kernel plays these rules;
        else the loop below."""
        cons = constraints_of(view)
        left = view.rules.hand_size - view.tricks_played  # the rewards are balance gained / tricks left
        deadline = None if self.seconds is None else time.perf_counter() + self.seconds
        if self.kernel and type(self.rng) is random.Random and compiled_rollouts(view.rules) is not None:
            with first_compile("search"):
                root, n = self._search_compiled(view, cons, left, deadline)
        else:
            root, n = self._search_python(view, cons, left, deadline)
        self.decisions += 1
        self.total_iterations += n
        return root

    def _search_compiled(
        self, view: PlayerView, cons: Constraints, left: int, deadline: float | None
    ) -> tuple[Node, int]:
        from .ismcts_kernel import CompiledTree

        tree = CompiledTree(view, cons, self.rng, self.c, left)
        try:
            if deadline is None:
                tree.iterate(self.iterations)
                n = self.iterations
            else:
                n = 0
                while True:  # short chunks, so that the clock is read often
                    tree.iterate(8)
                    n += 8
                    if time.perf_counter() >= deadline or n >= MAX_ITERATIONS:
                        break
        finally:
            tree.close()  # the agent's generator continues where the compiled copy stopped
        return tree.nodes(Node), n

    def _search_python(
        self, view: PlayerView, cons: Constraints, left: int, deadline: float | None
    ) -> tuple[Node, int]:
        rng = self.rng
        deck = deck_of(view.rules)
        root = Node()
        n = 0
        while True:
            game = world_from_view(view, sample_world(view, rng, cons))
            start = game.hand_balances()  # public: the same in every deal
            path = [root]
            node = root
            while game.phase != OVER:  # select while fully expanded, else expand one
                legal = from_mask(game.legal_mask())
                untried = [a for a in legal if a not in node.children]
                if untried:
                    action = untried[rng.randrange(len(untried))]
                    child = node.children[action] = Node(action, game.current)
                    child.avail = 1
                    game.apply(action)
                    path.append(child)
                    break
                best, best_key = None, -math.inf
                for a in legal:
                    child = node.children[a]
                    child.avail += 1
                    key = child.total / child.visits + self.c * math.sqrt(math.log(child.avail) / child.visits)
                    if key > best_key:
                        best, best_key = child, key
                game.apply(best.action)
                node = best
                path.append(node)
            rollout(game, deck, _discard_mask(game))
            end = game.log.balances  # the rollout ends the hand, which scores it
            rewards = [(end[s] - start[s]) / left for s in range(len(start))]
            for visited in path:
                visited.visits += 1
                if visited.player is not None:
                    visited.total += rewards[visited.player]
            n += 1
            if deadline is None:
                if n >= self.iterations:
                    break
            elif time.perf_counter() >= deadline or n >= MAX_ITERATIONS:
                break
        return root, n
