"""Policy rollouts: play sampled positions to the end of the hand with a policy network for every seat
(``pimc:rollout=policy``, :mod:`agents.search.pimc`).

Every seat's move in a rollout is the policy's most probable legal action on that seat's observation of the
rollout's game (what :class:`agents.players.ppo_agent.PPOAgent` plays with ``deterministic=True``); a forced move
(one legal action) is played without asking the network. The observation is the seat's own: its hand, the
public play and what it knows of the exchange, so the rollouts are not clairvoyant; only the deal is.

Two ways to play them, the same moves:

- :class:`PolicyRollouts` (compiled): every position of a decision (deals x candidate moves) is a row of the
  engine's arrays (:mod:`sm_env.compiled.kernels`, loaded by :func:`sm_env.compiled.loader.load_game`), and
  the rows move in lockstep (:mod:`agents.search.policy_kernel`): the forced moves compiled, then one
  observation per row that waits on a choice, one forward pass of the network in torch on all of them, and
  the chosen moves. A decision costs one network call per move of the longest rollout, not one per move;
- :func:`policy_rollout` (one position in Python, through :class:`~sm_env.core.game.Game`,
  :func:`~sm_env.core.knowledge.player_view` and :func:`~sm_env.observation.encode`): the readable reference,
  and pimc's path with ``kernel=0`` or rules the compiled engine does not run.

A sampled position (:func:`agents.search.world_sampler.world_from_view`) starts a hand in the middle and
knows nothing of what came before it in the hand. :func:`with_public_history` gives it what the searching
seat knows of the hand's history that the observation shows: the exchanges (the cards of the seat's own
exchanges, the count of every exchange; the cards exchanged between two other seats are hidden from the
searching seat, so in the rollout those two seats see the count of their exchange but not its cards), the
kitty cards shown to the seat, and the auction. The searching seat's observation of the position is then
exactly its observation in the real game (``tests/test_guided_search.py``). An opponent dealer's kitty, once
taken, is not sampled: in the rollout its kitty plane is empty.

An exchange decision (``pimc:rollout=policy,exchange=1``) starts from :func:`exchange_position`: the sampled
hands as they lie, set up by :meth:`sm_env.core.game.Game.at_exchange` at the sender's decision, with the rounds
already done (an earlier round between two other seats with its count alone, as above) and the cards the seat
has chosen so far in its round; the seat's observation is again its real one (``tests/test_exchange_search.py``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from agents.players.ppo_agent import NumpyPolicy
from agents.players.threads import one_thread
from sm_env.core.game import EXCHANGE, OVER, Game, hand_order
from sm_env.core.knowledge import PlayerView, player_view
from sm_env.core.logs import ExchangeLog
from sm_env.core.rules import RuleSet
from sm_env.observation import encode, observation_size

from .rollout import played_out_value
from .world_sampler import World

# torch and the compiled engine are imported by the classes that use them: pimc imports this module, and its
# heuristic search needs neither


MAX_ROWS = 8192  # rollouts stepped together at most (observations: 8192 x 789 float32, 26 MB)


class BatchPolicy:
    """The forward pass of a :class:`NumpyPolicy` on a batch of observations (float32, the same weights and
    activation: the layers of ``NumpyPolicy.logits``): the first layer compiled over the nonzero entries of each
    observation (:func:`agents.search.policy_kernel.first_layer`: 0.5-0.7 ms against torch's 2.1 ms for 129
    rows of the standard policy's 789 x 512 layer), the others in torch. ``calls`` and ``rows`` count the
    forward passes and the observations they took. The sums run in another order than numpy's one row at a
    time, so two logits within float rounding of each other are the only place the two can choose differently.

    Inside :func:`agents.players.threads.one_thread` torch runs on one thread (its thread count is given back after): a
    decision's batches (a few hundred rows) gain little from more, and on a machine whose cores are busy torch's default
    threads made each forward pass 13 times slower (2.3 ms against 30.6 ms for 100 rows of the first layer)."""

    def __init__(self, policy: NumpyPolicy) -> None:
        import torch

        from .policy_kernel import first_layer

        self.torch = torch
        self.policy = policy
        layers = [*policy.hidden, policy.head]
        self.first = layers[0]  # (w [inputs, outputs], b): float32, contiguous (NumpyPolicy)
        self.layers = [(torch.from_numpy(w), torch.from_numpy(b)) for w, b in layers[1:]]
        self.activation = torch.tanh if policy.activation == "tanh" else torch.relu
        self._first_layer = first_layer
        self._hidden = np.empty((0, self.first[0].shape[1]), dtype=np.float32)
        self.calls = 0
        self.rows = 0

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """float32 [n, actions]: the logits of each observation (float32 [n, observation size])."""
        self.calls += 1
        self.rows += observations.shape[0]
        n = observations.shape[0]
        if self._hidden.shape[0] < n:
            self._hidden = np.empty((n, self._hidden.shape[1]), dtype=np.float32)
        hidden = self._hidden[:n]
        self._first_layer(observations, self.first[0], self.first[1], hidden)
        if not self.layers:  # no hidden layer: the first layer is the head
            return hidden.copy()
        torch = self.torch
        with torch.no_grad():
            x = self.activation(torch.from_numpy(hidden))
            last = len(self.layers) - 1
            for k, (w, b) in enumerate(self.layers):
                x = torch.addmm(b, x, w)
                if k < last:
                    x = self.activation(x)
        return x.numpy()


def with_public_history(game: Game, view: PlayerView) -> Game:
    """``game`` (a position of ``view``'s hand set up by ``world_from_view``) given the hand's history that
    ``view`` knows and the observation shows (the module docstring): its exchanges, the kitty cards shown to
    the seat, the auction. Changes and returns ``game``; reads nothing but ``view``."""
    log = game.log
    exchanges = []
    for ex in view.exchanges:  # complete: a position is set up once the hand's exchange is over
        entry = ExchangeLog(ex.sender, ex.receiver, ex.count)
        entry.sent = list(ex.sent or ())  # hidden from the view: the count alone
        entry.returned = list(ex.returned or ())
        entry.delivered = True
        exchanges.append(entry)
    log.exchanges = exchanges
    if view.shown:
        log.shown = [*(log.shown or ()), (view.seat, tuple(c for c in range(52) if view.shown >> c & 1))]
    return _with_auction(game, view)


def _with_auction(game: Game, view: PlayerView) -> Game:
    """``game`` given the auction that ``view`` shows (public); changes and returns it."""
    game.auction_first = view.auction_first
    game.auction_bids = view.auction_bids
    game.auction_passed = view.auction_passed
    game.auction_high = view.auction_high
    game.hand1_quotas = None if view.hand1_quotas is None else list(view.hand1_quotas)
    game.passed_out = view.passed_out
    return game


class ExchangeSetupError(ValueError):
    """An exchange decision that :func:`exchange_position` cannot set up as the view shows it."""


def exchange_searchable(view: PlayerView) -> bool:
    """Whether :func:`exchange_position` can set up ``view``'s decision: the seat sends cards in the hand's
    exchange, under rules whose hand opens with the exchange (:meth:`sm_env.core.game.Game.at_exchange`)."""
    return (
        view.phase == EXCHANGE
        and view.to_act == view.seat
        and view.previous_balances is not None
        and hand_order(view.rules)[0] == "exchange"
    )


def exchange_position(view: PlayerView, world: World) -> Game:
    """A game at ``view``'s exchange decision (:func:`exchange_searchable`) with the sampled hidden cards
    (``world``: the hands as they lie now, the kitty), set up by :meth:`~sm_env.core.game.Game.at_exchange`
    from what the view shows: the rounds already done (the cards of an exchange between two other seats are
    hidden from the searching seat, so in the rollout every seat sees the count of that exchange alone, as
    :func:`with_public_history` does), the cards the seat has chosen so far in its round, the scores, the
    auction. Reads nothing but ``view`` and ``world``; an :class:`ExchangeSetupError` (a ValueError) where the
    set-up game would not be the seat's decision (a plan the view cannot rebuild, e.g. under
    ``first_up_exchanges_first``, whose order of senders depends on the previous hand)."""
    if not exchange_searchable(view):
        raise ExchangeSetupError(
            f"exchange_position: seat {view.seat} does not send in an exchange that opens the hand"
        )
    me = view.seat
    done: list[ExchangeLog] = []
    chosen: list[int] = []
    for ex in view.exchanges:
        if ex.sender == me and ex.returned is None:  # the seat's own round, in progress
            chosen.extend(ex.sent or ())
            continue
        entry = ExchangeLog(ex.sender, ex.receiver, ex.count)
        entry.sent = list(ex.sent or ())  # hidden from the view: the count alone
        entry.returned = list(ex.returned or ())
        entry.delivered = True
        done.append(entry)
    try:
        game = Game.at_exchange(
            view.rules,
            hand_number=view.hand_number,
            dealer=view.dealer,
            scores=view.scores,
            previous_balances=view.previous_balances,
            hands=world.hands,
            kitty=world.kitty,
            done=done,
            chosen=chosen,
            quotas=view.quotas,
        )
    except ValueError as err:
        raise ExchangeSetupError(str(err)) from None
    if game.current != me or game.legal_mask() != view.legal or game.cards_to_send() != view.to_send:
        raise ExchangeSetupError(f"exchange_position: the exchange set up for seat {me} is not the one its view shows")
    game.calls_left = view.calls_left
    return _with_auction(game, view)


Chooser = Callable[[np.ndarray, int], int]
"""A seat's move from its observation vector and the legal-action bit set
(:meth:`agents.players.ppo_agent.PPOAgent.choose`)."""


def policy_rollout(game: Game, choose: Chooser) -> None:
    """Play ``game`` to its end (a position's game ends with its hand): each seat's move is
    ``choose(observation, legal)`` (e.g. :meth:`agents.players.ppo_agent.PPOAgent.choose`) on its observation, a forced
    move without asking."""
    while game.phase != OVER:
        legal = game.legal_mask()
        if legal & (legal - 1) == 0:
            action = legal.bit_length() - 1
        else:
            action = choose(encode(player_view(game, game.current_player)), legal)
        game.apply(action)


class PolicyRollouts:
    """Positions played out in lockstep by a policy (the module docstring), compiled; the rules must be ones the
    compiled engine runs (:func:`sm_env.compiled.support.supports`)."""

    def __init__(self, rules: RuleSet, policy: BatchPolicy) -> None:
        from sm_env.compiled import kernels
        from sm_env.compiled.loader import load_game

        from . import policy_kernel
        from .rollout_kernel import hand_values

        self._vk, self._pk, self._load, self._hand_values = kernels, policy_kernel, load_game, hand_values
        self.rules = rules
        self.policy = policy
        self.size = observation_size(rules)
        self.steps = 0  # lockstep steps with a network call, over every values()

    def values(self, games: list[Game], actions: list[int], seat: int, game_weight: float = 0.0) -> np.ndarray:
        """int64 [len(games), len(actions)]: ``seat``'s balance in the hand (tricks - quota; in a misère hand
        maximum - tricks) when each game is played out after each action (legal in every game); with
        ``game_weight`` (float64) plus that times the seat's result reward where the hand's end ended the
        game (:func:`agents.search.rollout_kernel.hand_values`). The rows
        (games x actions) are played :data:`MAX_ROWS` at most at a time, so memory stays bounded at any
        number of sampled deals (the rows are independent: the result is the same)."""
        step = max(1, MAX_ROWS // max(1, len(actions)))
        if len(games) > step:
            return np.concatenate(
                [self._values(games[i : i + step], actions, seat, game_weight) for i in range(0, len(games), step)]
            )
        return self._values(games, actions, seat, game_weight)

    def _values(self, games: list[Game], actions: list[int], seat: int, game_weight: float) -> np.ndarray:
        vk, pk = self._vk, self._pk
        n, k = len(games), len(actions)
        st1 = np.zeros((n, vk.NUM_S), dtype=np.int32)
        cm1 = np.zeros((n, vk.NUM_C), dtype=np.uint64)
        for row, game in enumerate(games):
            self._load(st1, cm1, row, game, rules_checked=True)
        st = np.repeat(st1, k, axis=0)
        cm = np.repeat(cm1, k, axis=0)
        cfg = vk.rules_config(self.rules, games[0].hand_number)  # the hand's end ends every row's game
        pk.apply_each(st, cm, cfg, np.tile(np.asarray(actions, dtype=np.int64), n))
        rows = n * k
        waiting = np.empty(rows, dtype=np.int64)
        seats = np.full(rows, -1, dtype=np.int64)  # the seat to act
        obs = np.empty((rows, self.size), dtype=np.float32)
        with one_thread():
            while True:
                m = pk.advance(st, cm, cfg, waiting)
                if m == 0:
                    break
                vk.observe_games(st, cm, cfg, seats[:m], waiting[:m], obs[:m])
                pk.apply_best(st, cm, cfg, waiting[:m], self.policy.logits(obs[:m]))
                self.steps += 1
        return self._hand_values(st, seat, self.rules.num_players, game_weight).reshape(n, k)


class PythonPolicyRollouts:
    """:class:`PolicyRollouts`' values by :func:`policy_rollout`, one position at a time (the reference)."""

    def __init__(self, choose: Chooser) -> None:
        self.choose = choose

    def values(self, games: list[Game], actions: list[int], seat: int, game_weight: float = 0.0) -> np.ndarray:
        out = np.zeros((len(games), len(actions)), dtype=np.float64 if game_weight else np.int64)
        for i, base in enumerate(games):
            for j, action in enumerate(actions):
                played = base.clone()
                played.apply(action)
                policy_rollout(played, self.choose)
                out[i, j] = played_out_value(played, seat, game_weight)  # the rollout ends the hand, which scores it
        return out
