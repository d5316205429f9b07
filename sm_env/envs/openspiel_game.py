"""Sergeant Major as an OpenSpiel game (``pyspiel``; the ``openspiel`` extra: ``pip install -e ".[openspiel]"``).

Importing this module registers the Python game ``"python_sergeant_major"`` with ``pyspiel.register_game``,
so that ``pyspiel.load_game("python_sergeant_major", {"rules": "woburn"})`` works and OpenSpiel's
algorithms (ISMCTS, the CFR family, NFSP, policy gradients, ``rl_environment``) can play it.
docs/openspiel.md is the guide; this docstring is the reference.

It is an adapter, with no rule logic: every decision is applied to the reference engine
:class:`sm_env.core.game.Game`, which alone decides legality and scores; episodes and rewards come from
:mod:`sm_env.core.episode` and the tensors from :mod:`sm_env.observation`, as in ``sm_env.env``.

Game parameters (``pyspiel.load_game(name, params)``):

================  =========  ===============================================================================
name              default    meaning
================  =========  ===============================================================================
``rules``         standard   a preset name of ``sm_env.PRESETS``, optionally followed by options of
                             docs/rules.md as ``;option:value`` (``"standard;kitty_trick:true;quotas:9/5/3"``;
                             values true, false, null, integers, lists joined by ``/``, or text). A
                             preset name of digits and dashes is kept with a trailing ``;`` (``"6-3-8;"``)
``episode``       hand       ``"hand"`` (one hand) or ``"game"`` (a whole game, hand after hand), as the env
``max_hands``     100        ``episode="game"``: a game nobody has won ends (truncated) after this many hands
``reward``        score      ``"score"``, ``"balance"`` or ``"result"`` (``episode="game"`` only), as the env
``start_balances``  ""       the env's reset option: e.g. ``"2 -1 -1"`` opens hand 1 with that exchange;
                             ``""`` none
================  =========  ===============================================================================

Chance nodes. An episode opens with two kinds of chance node, each uniform over its outcomes:

- the first dealer: chance actions ``0 .. n-1`` (the seat; n players);
- the deal, one card at a time: each chance action is the card id (0-51, docs/rules.md 2) of the next card
  of a shuffled deck, chosen among the cards not dealt yet (without 2C under ``no_kitty_51``). The first
  ``hand_size`` cards go to seat 0, the next to seat 1, and so on, the rest to the kitty (the face-up card
  under ``one_card_kitty``): 52 chance nodes with three players (16 + 16 + 16 + 4). This is the env's deal
  (``sm_env.core.game.random_deal`` deals a shuffled deck in the same order), so a state's chance actions
  are the ``deals`` reset option of ``sm_env.env``.

With ``episode="game"`` each later hand (a passed-out deal under ``auction`` too) is dealt the same way by
chance nodes right after the action that ended the previous hand. ``max_chance_outcomes`` is 52.

Player actions are the env's action ids, with the same numbering (docs/interface.md: 0-51 a card, 52-55
trump, ...; ``num_distinct_actions`` is 56, or 74 for the rule sets of rules.md 10.8), and the legal set of a
state is ``Game.legal_actions()`` (empty for a player not to act).

Observations. ``observation_tensor(p)`` and ``information_state_tensor(p)`` are both the env's observation
of seat ``p`` (``sm_env.observation.encode`` of ``knowledge.player_view``: 789 entries with three players,
1016 with four, docs/interface.md), so they hold exactly what that player may know. The information state
is therefore *not* perfect recall: like the env's observation it keeps the cards each seat played this
hand but not the order of past tricks, and of earlier hands only the running scores and the last hand's
balances. ``observation_string(p)`` and ``information_state_string(p)`` are the fields of the same
``PlayerView`` as text (this hand's tricks in order included), the keys OpenSpiel's ISMCTS uses. At chance
nodes (a deal in progress) nothing of the new hand is known yet: the tensors are all zero and the strings
say ``"dealing"``. ``str(state)`` is the whole table, every hidden card included (for debugging).

Rewards and returns are the env's: with ``reward="score"`` each seat receives the change of its running
score when a hand ends (``rewards()`` after that action), so ``returns()`` at the end equal the env's
cumulative rewards; the reward model is ``REWARDS`` (intermediate rewards in a game of several hands).
Utility bounds: per hand ``(tricks in a hand) * (n - 1)`` (chips can pay a balance twice), times
``max_hands`` for a game; 1 for ``reward="result"``.

Serialization: ``state.serialize()`` / ``game.deserialize_state(text)`` and
``pyspiel.serialize_game_and_state`` work as for every OpenSpiel Python game: the text holds the action
history and a pickle of the state, so only deserialize text you wrote yourself. :func:`history_text`
and :func:`state_from_history` are a plain alternative: the actions as text, replayed with legality checked.

Search over sampled worlds: :meth:`SergeantMajorGame.state_from_engine` wraps any ``Game`` (for instance one
built by ``Game.from_position`` from a sampled deal) as a decision state, with no chance history and
returns counted from there. Resampling an information state needs the world sampler of
``agents.search.world_sampler`` (which this package must not import): OpenSpiel's Python ``ISMCTSBot``
takes it through ``bot.set_resampler`` (``training/evaluation/openspiel_demo.py`` does this). OpenSpiel's C++
``pyspiel.ISMCTSBot`` cannot call a Python resampler; use ``open_spiel.python.algorithms.ismcts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel

from sm_env.core.cards import CARD_TEXT, NUM_CARDS
from sm_env.core.episode import check_episode, engine_max_hands, hand_rewards, result_rewards
from sm_env.core.game import OVER, Game, action_text, check_start_balances, normalize_deal
from sm_env.core.knowledge import PlayerView, player_view
from sm_env.core.rules import RuleSet
from sm_env.display.render import render_table
from sm_env.observation import encode, observation_size

__all__ = [
    "GAME_NAME",
    "SergeantMajorGame",
    "SergeantMajorObserver",
    "SergeantMajorState",
    "deal_chance_actions",
    "history_text",
    "state_from_history",
]

GAME_NAME = "python_sergeant_major"
"""The name to give ``pyspiel.load_game``."""

DEFAULT_PARAMS: dict[str, Any] = {
    "rules": "standard",
    "episode": "hand",
    "max_hands": 100,
    "reward": "score",
    "start_balances": "",
}
MAX_RULES_TEXT = 2_000
"""The longest ``rules`` parameter read (every option of rules.md set is a few hundred characters)."""
_DECISIONS_PER_HAND = 100  # more than any hand takes: 52 cards, 4 discards, trump, exchange, auction, ...

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Sergeant Major (3-5-8)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.REWARDS,
    max_num_players=4,
    min_num_players=3,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULT_PARAMS,
)


def _option_value(text: str) -> Any:
    """One option's value in the ``rules`` parameter: true/false, null, an integer, integers joined by ``/``
    (a list, e.g. quotas ``9/5/3``), else the text (e.g. ``up``)."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("null", "none"):
        return None
    try:
        return [int(part) for part in text.split("/")] if "/" in text else int(text)
    except ValueError:
        return text


def _rules_of(text: Any) -> tuple[RuleSet, str]:
    """The rule set of the ``rules`` parameter (``PRESET`` or ``PRESET;option:value;...``) and the text to
    keep in the game's parameters: a preset name of digits and dashes (``6-3-8``) gets a trailing ``;``,
    which OpenSpiel's game strings would otherwise read as a malformed number."""
    if not isinstance(text, str) or len(text) > MAX_RULES_TEXT:
        raise ValueError(f"rules must be a preset name, optionally followed by ';option:value' pairs, got {text!r:.80}")
    base, *pairs = (part.strip() for part in text.split(";"))
    options: dict[str, Any] = {}
    for pair in pairs:
        if not pair:
            continue
        key, colon, value = pair.partition(":")
        if not colon:
            raise ValueError(f"rules: {pair!r:.40} is not an option:value pair (e.g. 'standard;kitty_trick:true')")
        options[key.strip()] = _option_value(value.strip())
    rules = RuleSet.from_any({"name": base, **options} if options else base)
    kept = text.strip()
    return rules, kept + ";" if kept.replace("-", "").isdigit() else kept


def _balances_of(text: Any, rules: RuleSet) -> list[int] | None:
    """The ``start_balances`` parameter: ``""`` (none) or whole numbers separated by spaces."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        values = [int(part) for part in text.split()]
    except ValueError:
        raise ValueError(
            f"start_balances must be {rules.num_players} whole numbers separated by spaces (e.g. '2 -1 -1') or "
            f"'' for none, got {text!r:.80}"
        ) from None
    return check_start_balances(values, rules)


def deal_chance_actions(deal: dict[str, Any], rules: RuleSet) -> list[int]:
    """The chance actions that deal ``deal`` (``{"hands": [...], "kitty": [...]}`` by absolute seat, as the
    env's ``deals`` reset option; card ids): seat 0's cards, seat 1's, ..., then the kitty."""
    return [card for hand in deal["hands"] for card in hand] + list(deal["kitty"])


class SergeantMajorGame(pyspiel.Game):
    """The game of one parameter set (module docstring); ``pyspiel.load_game`` builds it."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        values = {**DEFAULT_PARAMS, **(params or {})}
        rules, values["rules"] = _rules_of(values["rules"])
        episode, reward, max_hands = values["episode"], values["reward"], values["max_hands"]
        check_episode(episode, reward, max_hands)
        self.rules = rules
        self.episode = episode
        self.reward_mode = reward
        self.max_hands = max_hands
        self.start_balances = _balances_of(values["start_balances"], rules)
        if self.start_balances is not None:
            Game(rules, seed=0, first_dealer=0, start_balances=self.start_balances)  # the engine's own checks
        self.settings = _Settings(
            rules,
            reward,
            tuple(range(1, NUM_CARDS) if rules.no_kitty_51 else range(NUM_CARDS)),
            engine_max_hands(episode, max_hands),
            self.start_balances,
        )
        n = rules.num_players
        hands = 1 if episode == "hand" else max_hands
        bound = 1.0 if reward == "result" else float((rules.hand_size + 1) * (n - 1) * hands)
        info = pyspiel.GameInfo(
            num_distinct_actions=rules.num_actions,
            max_chance_outcomes=NUM_CARDS,
            num_players=n,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=0.0,
            max_game_length=_DECISIONS_PER_HAND * hands,
        )
        super().__init__(_GAME_TYPE, info, values)

    def new_initial_state(self) -> SergeantMajorState:
        """The state before the first dealer is drawn (a chance node)."""
        return SergeantMajorState(self)

    def state_from_engine(self, engine: Game) -> SergeantMajorState:
        """A state wrapping a copy of ``engine`` as it stands (for search over sampled worlds): no chance
        history, returns counted from here. Its rules must be this game's."""
        if engine.rules != self.rules:
            raise ValueError(
                f"state_from_engine: the engine plays {engine.rules.name!r}, this game {self.rules.name!r}"
            )
        state = SergeantMajorState(self)
        state._core.start_from(engine)
        return state

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: dict[str, Any] | None = None
    ) -> SergeantMajorObserver:
        """The observer of the tensors and strings (the same one for observations and information states)."""
        return SergeantMajorObserver(self, iig_obs_type, params)


@dataclass(frozen=True)
class _Settings:
    """What every state of a game reads (shared by the states, not copied)."""

    rules: RuleSet
    reward_mode: str
    deck: tuple[int, ...]  # the cards dealt, in card-id order (without 2C under no_kitty_51)
    engine_max_hands: int | None
    start_balances: list[int] | None


class _Core:
    """The state of one episode, copied fast by ``clone`` (OpenSpiel deep-copies a Python state's ``__dict__``).

    ``game`` is None during a deal (a chance node); ``hand_start`` is the engine as the current hand began
    (before the deal of the next hand it is replayed with ``hand_actions``, the next deal queued, so that the
    engine deals what chance dealt).
    """

    __slots__ = (
        "dealt",
        "first_dealer",
        "game",
        "hand_actions",
        "hand_start",
        "returns",
        "rewards",
        "scores",
        "settings",
    )

    def __init__(self, settings: _Settings) -> None:
        num_players = settings.rules.num_players
        self.settings = settings
        self.first_dealer: int | None = None
        self.dealt: list[int] = []
        self.game: Game | None = None
        self.hand_start: Game | None = None
        self.hand_actions: list[int] = []
        self.scores: list[int] = [0] * num_players
        self.rewards = [0.0] * num_players
        self.returns = [0.0] * num_players

    def start_from(self, engine: Game) -> None:
        self.first_dealer = engine.first_dealer
        self.game = engine.clone()
        self.hand_start = engine.clone()
        self.scores = list(engine.scores)

    def __deepcopy__(self, memo: dict[int, Any]) -> _Core:
        other = _Core.__new__(_Core)
        other.settings = self.settings
        other.first_dealer = self.first_dealer
        other.dealt = list(self.dealt)
        other.game = None if self.game is None else self.game.clone()
        other.hand_start = self.hand_start  # never stepped: copied before it is replayed
        other.hand_actions = list(self.hand_actions)
        other.scores = list(self.scores)
        other.rewards = list(self.rewards)
        other.returns = list(self.returns)
        return other


class SergeantMajorState(pyspiel.State):
    """A state: the deal's chance nodes, then the engine's decisions (module docstring)."""

    def __init__(self, game: SergeantMajorGame) -> None:
        super().__init__(game)
        self._core = _Core(game.settings)

    # ------------------------------------------------------------------ the OpenSpiel interface

    def current_player(self) -> int:
        """The seat to act, ``PlayerId.CHANCE`` during a deal, ``PlayerId.TERMINAL`` at the end."""
        game = self._core.game
        if game is None:
            return pyspiel.PlayerId.CHANCE
        if game.phase == OVER:
            return pyspiel.PlayerId.TERMINAL
        return game.current

    def is_terminal(self) -> bool:
        game = self._core.game
        return game is not None and game.phase == OVER

    def _legal_actions(self, player: int) -> list[int]:
        """The engine's legal actions of the player to act (none for another player)."""
        game = self._core.game
        if game is None or game.phase == OVER or player != game.current:
            return []
        return game.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The first dealer (a seat), then the next card of the deal (a card id not dealt yet); uniform."""
        core = self._core
        if core.first_dealer is None:
            n = self._core.settings.rules.num_players
            return [(seat, 1.0 / n) for seat in range(n)]
        dealt = set(core.dealt)
        left = [card for card in self._core.settings.deck if card not in dealt]
        return [(card, 1.0 / len(left)) for card in left]

    def _apply_action(self, action: int) -> None:
        core = self._core
        if core.game is None:
            self._deal(int(action))
            return
        game = core.game
        hand = game.hand_number
        game.apply(int(action))  # the engine checks legality (IllegalActionError, state unchanged)
        core.hand_actions.append(int(action))
        rewards = [0.0] * len(core.rewards)
        if game.hand_number != hand or game.phase == OVER:
            self._end_hand(game.history[hand - 1].balances, game.history[hand - 1].scores, rewards)
        if game.phase == OVER:
            if self._core.settings.reward_mode == "result" and game.winners is not None:
                rewards = list(result_rewards(game.winners, len(rewards)))
        elif game.hand_number != hand:
            core.game = None  # the next hand is dealt by chance nodes, then replayed (_deal)
        core.rewards = rewards
        core.returns = [r + x for r, x in zip(core.returns, rewards, strict=True)]

    def _end_hand(self, balances: Sequence[int] | None, scores: Sequence[int], rewards: list[float]) -> None:
        """The rewards of the hand that just ended (None balances: a passed-out deal, no reward), as the env's."""
        if balances is None:
            return
        core = self._core
        values = hand_rewards(self._core.settings.reward_mode, balances, core.scores, scores)
        core.scores = list(scores)
        if values is not None:
            rewards[:] = values

    def _deal(self, action: int) -> None:
        """A chance action: the first dealer, or the next card of the deal; the last card starts the hand."""
        core = self._core
        sm = core.settings
        if core.first_dealer is None:
            core.first_dealer = action
            return
        core.dealt.append(action)
        if len(core.dealt) < len(sm.deck):
            return
        rules = sm.rules
        size, n = rules.hand_size, rules.num_players
        cards = core.dealt
        deal = {"hands": [cards[i * size : (i + 1) * size] for i in range(n)], "kitty": cards[n * size :]}
        if core.hand_start is None:
            game = Game(
                rules,
                seed=0,  # unused: every hand is dealt by chance
                first_dealer=core.first_dealer,
                deals=[deal],
                max_hands=sm.engine_max_hands,
                start_balances=sm.start_balances,
            )
        else:
            game = core.hand_start.clone()
            game.deal_queue.append(normalize_deal(deal, rules))
            for played in core.hand_actions:
                game.apply(played)
        core.game = game
        core.hand_start = game.clone()
        core.hand_actions = []
        core.dealt = []

    def rewards(self) -> list[float]:
        """The rewards of the last player action, by seat (chance actions pay nothing and leave them as they
        were, so that the reward of a hand's last action is still there at the next decision, where OpenSpiel's
        loops read it)."""
        return list(self._core.rewards)

    def returns(self) -> list[float]:
        """The rewards summed since the episode began (from :meth:`SergeantMajorGame.state_from_engine`: since
        then), by seat."""
        return list(self._core.returns)

    def _action_to_string(self, player: int, action: int) -> str:
        if player != pyspiel.PlayerId.CHANCE:
            return action_text(action, self._core.settings.rules)
        core = self._core
        if core.first_dealer is None:
            return f"first dealer: seat {action}"
        rules = self._core.settings.rules
        position = len(core.dealt)
        to = f"seat {position // rules.hand_size}" if position < rules.num_players * rules.hand_size else "kitty"
        return f"deal {CARD_TEXT[action]} to {to}"

    def engine(self) -> Game | None:
        """A copy of the engine (every hidden card included; None during a deal)."""
        game = self._core.game
        return None if game is None else game.clone()

    def view(self, player: int) -> PlayerView | None:
        """What seat ``player`` knows (``knowledge.player_view``); None during a deal."""
        game = self._core.game
        return None if game is None else player_view(game, player)

    def __str__(self) -> str:
        """The whole table (every card), or the deal in progress."""
        game = self._core.game
        if game is None:
            return self._dealing_text()
        return render_table(game)

    def _dealing_text(self) -> str:
        core = self._core
        if core.first_dealer is None:
            return "dealing: first dealer to draw"
        return f"dealing: {len(core.dealt)} of {len(self._core.settings.deck)} cards dealt"


def view_text(view: PlayerView) -> str:
    """A view's fields as one line of text (``name=value``, this hand's tricks in order): the observation and
    information state strings. A function of the ``PlayerView`` only, so it holds only what the player knows."""
    parts = [f"{name}={getattr(view, name)!r}" for name in PlayerView.__slots__ if name not in ("rules", "_tricks")]
    parts.append("tricks=" + ";".join(f"{t.leader}:{','.join(CARD_TEXT[c] for c in t.cards)}" for t in view.tricks()))
    return " ".join(parts)


class SergeantMajorObserver:
    """OpenSpiel's Python observer: ``tensor`` (the env's observation, ``dict["observation"]`` the same array)
    and ``string_from``; one layout for observations and information states (module docstring)."""

    def __init__(
        self,
        game: SergeantMajorGame,
        iig_obs_type: pyspiel.IIGObservationType | None = None,
        params: dict[str, Any] | None = None,
    ) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported, got {sorted(params)}")
        if iig_obs_type is not None and iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER:
            raise ValueError(
                "only the observation of one player (private_info=SINGLE_PLAYER, the default) is provided, got "
                f"private_info={iig_obs_type.private_info}"
            )
        self.tensor = np.zeros(observation_size(game.rules), np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: SergeantMajorState, player: int) -> None:
        """The tensor of ``player`` in ``state`` (all zero during a deal)."""
        view = state.view(player)
        if view is None:
            self.tensor.fill(0.0)
        else:
            encode(view, self.tensor)

    def string_from(self, state: SergeantMajorState, player: int) -> str:
        """The view of ``player`` as text (:func:`view_text`), or ``"dealing"`` during a deal."""
        view = state.view(player)
        return "dealing" if view is None else view_text(view)


def history_text(state: SergeantMajorState) -> str:
    """The state's action history (chance and player actions) as text: integers separated by spaces."""
    return " ".join(str(a) for a in state.history())


def state_from_history(game: SergeantMajorGame, text: str) -> SergeantMajorState:
    """The state of :func:`history_text`'s text: every action replayed from the initial state, each checked
    (a chance action among the outcomes, a player action legal); ValueError naming the first bad one."""
    if not isinstance(text, str) or len(text) > 12 * game.max_game_length() * 2 + 1000:
        raise ValueError("history text: expected integers separated by spaces, of a bounded length")
    state = game.new_initial_state()
    for index, word in enumerate(text.split()):
        try:
            action = int(word)
        except ValueError:
            raise ValueError(f"history text: action {index} is {word!r:.20}, not an integer") from None
        if state.is_terminal():
            raise ValueError(f"history text: action {index} ({action}) comes after the end of the episode")
        allowed = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        if action not in allowed:
            raise ValueError(f"history text: action {index} ({action}) is not legal here; legal: {allowed}")
        state.apply_action(action)
    return state


pyspiel.register_game(_GAME_TYPE, SergeantMajorGame)
