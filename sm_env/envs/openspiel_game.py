"""Sergeant Major as an OpenSpiel game (``pyspiel``; the ``openspiel`` extra: ``pip install -e ".[openspiel]"``).

Importing this module registers the Python game ``"python_sergeant_major"`` with ``pyspiel.register_game``,
so that ``pyspiel.load_game("python_sergeant_major", {"rules": "woburn"})`` works and OpenSpiel's
algorithms (ISMCTS, the CFR family, NFSP, policy gradients, ``rl_environment``) can play it.
docs/openspiel.md is the guide; this docstring is the reference.

It is an adapter, with no rule logic: every decision is applied to the reference engine
:class:`sm_env.core.game.Game`, which alone decides legality and scores; episodes and rewards come from
:mod:`sm_env.core.episode`, the observation tensor from :mod:`sm_env.observation` (as in ``sm_env.env``), what
a seat knows from :mod:`sm_env.core.knowledge` and the resampled histories from :mod:`sm_env.core.histories`.

Game parameters (``pyspiel.load_game(name, params)``); a value out of range is refused with a ValueError
naming it and what is allowed:

==================  =========  =============================================================================
name                default    meaning
==================  =========  =============================================================================
``rules``           standard   a preset name of ``sm_env.PRESETS``, optionally followed by options of
                               docs/rules.md as ``;option:value`` (``"standard;kitty_trick:true;quotas:9/5/3"``;
                               values true, false, null, integers, lists joined by ``/``, or text). A
                               preset name of digits and dashes is kept with a trailing ``;`` (``"6-3-8;"``)
``players``         0          3 or 4; 0 plays the rule set's own number (4 for ``four-5-3-2-2`` and
                               ``four-6-3-2-1``). 4 with a three-player rule set plays it with ``players: 4``
                               (docs/rules.md 10.6): three-player quotas give way to the four-player default
                               5-3-2-2 and the 12-trick win to 9 (``standard`` becomes ``four-5-3-2-2``)
``episode``         hand       ``"hand"`` (one hand) or ``"game"`` (a whole game, hand after hand), as the env
``max_hands``       100        ``episode="game"``: a game nobody has won ends (truncated) after this many hand
                               entries; 1 to :data:`MAX_HANDS`
``reward``          score      ``"score"``, ``"balance"`` or ``"result"`` (``episode="game"`` only), as the env
``start_balances``  ""         the env's reset option: e.g. ``"2 -1 -1"`` opens hand 1 with that exchange;
                               ``""`` none
==================  =========  =============================================================================

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

Observations (not perfect recall). ``observation_tensor(p)`` is the env's observation of seat ``p``
(``sm_env.observation.encode`` of ``knowledge.player_view``: 789 entries with three players, 1016 with
four, docs/interface.md): this hand as p sees it now, the cards each seat played but not the order of past
tricks, of earlier hands only the running scores and the last balances. ``observation_string(p)`` is the
fields of the same ``PlayerView`` as text. During a deal the tensor is all zero and the string ``"dealing"``.

Information states (perfect recall). ``information_state_string(p)`` and ``information_state_tensor(p)`` hold
everything seat p has observed since the game began, in every hand entry of it (a game spans several hands;
a deal passed out in the auction is an entry): per entry, ``knowledge.hand_knowledge`` (public: dealer,
quotas, the bids, each exchange's seats, count, cards chosen so far, delivery and return, trump or the call,
how many cards were discarded, whether the kitty was taken, the face-up card and who took it, every card
played in order; p's own: its cards as dealt, the cards it sent, received and returned, its discards in
order, the kitty once it took it, the kitty cards shown to it, the card it put out), and during a deal how
many cards are dealt and which of them p got. Its decisions follow from these, so two histories share an
information state only if p saw the same and did the same in both (Kuhn's perfect recall; the order in which
p's own cards were dealt is not kept: p decides nothing during a deal). Nothing hidden from p is in it
(``hand_knowledge`` builds it as ``player_view`` builds the view). The string names the seat, the first
dealer, then each entry (``hand 2: dealer 1 quotas 3-8-5 | dealt ... | exchange 1>0 2/2 delivered back sent
- returned - | trump S | discards 4 | tricks 2:AH,8D,2H 2:...``); the tensor (float32, every entry in
[0, 1], seats relative to p: 0 = p, 1 = the next clockwise, ...) is a header of n entries (the first dealer,
one-hot) and one block per hand entry the episode can have (1 with ``episode="hand"``, ``max_hands`` with
``"game"``), zero until the entry begins. A block, in order (C = 52 card entries by card id, n players,
E = the most exchanges in a hand: 2 with three players, 4 with four, 0 without exchanges):

=================  ===============  ============================================================================
feature            size             value
=================  ===============  ============================================================================
begun              1                1 once the entry's deal has begun
dealt so far       1                cards dealt / cards in the deck (1 once dealt)
dealer             n                one-hot (zeros during an auction)
quotas known       1                1 once the quotas are set (assigned, or the auction won)
quotas             n                by seat, / 17
dealt              C                p's cards as dealt (so far, during the deal)
face-up            C                ``one_card_kitty`` only: the face-up card
auction            12 x 13 + 1      ``auction`` only: each bid in order, bidder one-hot (3) and pass or bid
                                    8-16 one-hot (10); then 1 if the deal was passed out
exchanges          E x (2n + 4      each exchange in order: sender and receiver one-hot, count / 17, cards
                   + 2C)            chosen / 17, delivered, returned, the cards sent (the k-th chosen: k / 17),
                                    the cards returned (1), as far as p knows them
trump              6                one-hot: trump suit, or the call (clubs ... spades, no trump, misère)
discards           1 + C            with a kitty: how many the dealer discarded / 4; p's own, the k-th: k / 4
kitty              1 + C            with a kitty: 1 once taken; the kitty if p is the dealer
shown              C                with a kitty: the kitty cards shown to p
take               n + 1 + C        ``one_card_kitty`` only: who decided (one-hot), took it, p's card put out
played             n x C + C        who played each card (one-hot by seat), then its trick number / 17
=================  ===============  ============================================================================

With three players and the standard rules a block has 661 entries (:func:`info_state_layout` gives the
offsets of any rule set). The tensor tells apart exactly the information states the string does.

Resampling. ``state.resample_from_infostate(p, sampler)`` returns a state whose information state for p is
this one's, drawn by :func:`sm_env.core.histories.sample_history` from what p knows alone: every hand entry
of the game replayed from its deal, the hidden cards and the other seats' hidden decisions (cards sent in an
exchange, discards, a card put out) drawn consistent with everything p saw (voids shown in play, its
exchanges, the kitty cards shown to it, the face-up card), each hand checked by the engine. ``sampler`` is
OpenSpiel's (a callable giving numbers in [0, 1), e.g. ``pyspiel.UniformProbabilitySampler``), which seeds
the draw. OpenSpiel's Python ``ISMCTSBot`` uses it when no resampler is set. A state built by
:meth:`SergeantMajorGame.state_from_engine` has no history to redraw and refuses.

Rewards (OpenSpiel's ``State::Rewards``: the reward of the most recent transition, undefined at chance
nodes, summing to ``Returns()``). At a decision or terminal state ``rewards()`` is what the transitions since
the previous decision paid: with ``reward="score"`` each seat's change of running score when the decision
before ended a hand (through the next deal's chance nodes, where it is paid on reaching the next decision),
else zero; at a chance node it is zero. So summing ``rewards()`` at every state, or only at decisions and
the end (``random_sim_test``, ``rl_environment``), gives ``returns()``: the rewards since the episode began,
equal to the env's cumulative rewards. The reward model is ``REWARDS`` (intermediate rewards in a game of
several hands). Utility bounds: per hand ``(tricks in a hand) * (n - 1)`` (chips can pay a balance twice),
times ``max_hands`` for a game; 1 for ``reward="result"``.

Serialization: ``state.serialize()`` is the action history (:func:`history_text`: the action ids, chance
ones included, separated by spaces) and ``game.deserialize_state(text)`` replays such a text, each action
checked (:func:`state_from_history`); it also reads the ``history=`` line of OpenSpiel's own format and
ignores the rest. Neither ever unpickles. ``pyspiel.serialize_game_and_state`` and
``pyspiel.deserialize_game_and_state`` are OpenSpiel's C++, which for every Python game pickles the state's
attributes: read such text only if you wrote it.

Search over sampled worlds of the project's own: :meth:`SergeantMajorGame.state_from_engine` wraps any
``Game`` (for instance one built by ``Game.from_position`` from a sampled deal) as a decision state, with no
chance history and returns counted from there; having no history, its information state string is its
observation string (not perfect recall) and its tensor holds only the hand it starts in.

OpenSpiel's C++ ``pyspiel.ISMCTSBot`` cannot search this game: OpenSpiel's bridge for Python states does not
pass ``ResampleFromInfostate`` on to Python (docs/openspiel.md has the measured failure). Use
``open_spiel.python.algorithms.ismcts``.
"""

from __future__ import annotations

import functools
import operator
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel

from sm_env.core.cards import CARD_TEXT, NUM_CARDS
from sm_env.core.episode import check_episode, engine_max_hands, hand_rewards, result_rewards
from sm_env.core.game import CALL_NAMES, OVER, Game, action_text, check_start_balances, normalize_deal
from sm_env.core.histories import game_knowledge, sample_history
from sm_env.core.knowledge import HandKnowledge, PlayerView, hand_knowledge, player_view
from sm_env.core.logs import NO_SUIT
from sm_env.core.rules import RuleSet
from sm_env.display.render import render_table
from sm_env.observation import encode, observation_size

__all__ = [
    "GAME_NAME",
    "MAX_HANDS",
    "SergeantMajorGame",
    "SergeantMajorInfoStateObserver",
    "SergeantMajorObserver",
    "SergeantMajorState",
    "deal_chance_actions",
    "history_text",
    "info_state_layout",
    "state_from_history",
]

GAME_NAME = "python_sergeant_major"
"""The name to give ``pyspiel.load_game``."""

DEFAULT_PARAMS: dict[str, Any] = {
    "rules": "standard",
    "players": 0,
    "episode": "hand",
    "max_hands": 100,
    "reward": "score",
    "start_balances": "",
}
MAX_RULES_TEXT = 2_000
"""The longest ``rules`` parameter read (every option of rules.md set is a few hundred characters)."""
MAX_HANDS = 1_000
"""The largest ``max_hands``: the information state tensor has a block per hand entry an episode can have."""
_DECISIONS_PER_HAND = 100  # more than any hand takes: 52 cards, 4 discards, trump, exchange, auction, ...
_SCALE = 17.0  # counts of cards and tricks in the tensors: the most tricks a hand can count

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


def _with_players(rules: RuleSet, players: Any) -> RuleSet:
    """The rule set for the ``players`` parameter: 0 keeps it; 4 turns a three-player rule set into its
    four-player form (three-player quotas and the 12-trick default win give way to the four-player defaults)."""
    if isinstance(players, bool) or not isinstance(players, int) or players not in (0, 3, 4):
        raise ValueError(f"players must be 3 or 4 (0: the rule set's own number), got {players!r}")
    if players in (0, rules.num_players):
        return rules
    if players == 3:
        raise ValueError(
            f"players=3 but the rules {rules.name or 'given'!r} are for four players; use players=4 (or 0) or a "
            "three-player rule set"
        )
    options = rules.options()
    options.pop("name")
    options["players"] = 4
    if len(rules.quotas) != 4:
        options["quotas"] = None
    if rules.win_tricks == rules.default_win_tricks:
        options["win_tricks"] = None
    return RuleSet(**options)


class SergeantMajorGame(pyspiel.Game):
    """The game of one parameter set (module docstring); ``pyspiel.load_game`` builds it."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        values = {**DEFAULT_PARAMS, **(params or {})}
        rules, values["rules"] = _rules_of(values["rules"])
        rules = _with_players(rules, values["players"])
        values["players"] = rules.num_players
        episode, reward, max_hands = values["episode"], values["reward"], values["max_hands"]
        check_episode(episode, reward, max_hands)
        if max_hands is None or not 1 <= max_hands <= MAX_HANDS:
            raise ValueError(f"max_hands must be a whole number from 1 to {MAX_HANDS}, got {max_hands!r}")
        self.rules = rules
        self.episode = episode
        self.reward_mode = reward
        self.max_hands = max_hands
        self.start_balances = _balances_of(values["start_balances"], rules)
        if self.start_balances is not None:
            Game(rules, seed=0, first_dealer=0, start_balances=self.start_balances)  # the engine's own checks
        entries = 1 if episode == "hand" else max_hands
        self.settings = _Settings(
            rules,
            reward,
            tuple(range(1, NUM_CARDS) if rules.no_kitty_51 else range(NUM_CARDS)),
            engine_max_hands(episode, max_hands),
            self.start_balances,
            _Layout.of(rules, entries),
        )
        n = rules.num_players
        bound = 1.0 if reward == "result" else float((rules.hand_size + 1) * (n - 1) * entries)
        info = pyspiel.GameInfo(
            num_distinct_actions=rules.num_actions,
            max_chance_outcomes=NUM_CARDS,
            num_players=n,
            min_utility=-bound,
            max_utility=bound,
            utility_sum=0.0,
            max_game_length=_DECISIONS_PER_HAND * entries,
        )
        super().__init__(_GAME_TYPE, info, values)

    def new_initial_state(self) -> SergeantMajorState:
        """The state before the first dealer is drawn (a chance node)."""
        return SergeantMajorState(self)

    def state_from_engine(self, engine: Game) -> SergeantMajorState:
        """A state wrapping a copy of ``engine`` as it stands (for search over sampled worlds): no chance
        history, returns counted from here, no information state to resample. Its rules must be this game's."""
        if engine.rules != self.rules:
            raise ValueError(
                f"state_from_engine: the engine plays {engine.rules.name!r}, this game {self.rules.name!r}"
            )
        state = SergeantMajorState(self)
        state._core.start_from(engine)
        return state

    def deserialize_state(self, text: str) -> SergeantMajorState:
        """The state of ``text``: :func:`history_text`'s action ids, or OpenSpiel's serialized form, of which only
        the ``history=player:action,...`` line is read (the rest, a pickle, never is); every action replayed and
        checked (:func:`state_from_history`)."""
        if isinstance(text, str) and text.startswith("history="):
            line = text.split("\n", 1)[0][len("history=") :]
            words = []
            for pair in filter(None, line.split(",")):
                _, colon, action = pair.partition(":")
                if not colon:
                    raise ValueError(f"history text: {pair!r:.20} is not player:action")
                words.append(action)
            text = " ".join(words)
        return state_from_history(self, text)

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: dict[str, Any] | None = None
    ) -> SergeantMajorObserver | SergeantMajorInfoStateObserver:
        """The observer of one player: the information state (perfect recall) when ``iig_obs_type`` asks for
        perfect recall, else the observation (module docstring)."""
        if params:
            raise ValueError(f"observation parameters are not supported, got {sorted(params)}")
        if iig_obs_type is not None and iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER:
            raise ValueError(
                "only the observation of one player (private_info=SINGLE_PLAYER, the default) is provided, got "
                f"private_info={iig_obs_type.private_info}"
            )
        if iig_obs_type is not None and iig_obs_type.perfect_recall:
            return SergeantMajorInfoStateObserver(self)
        return SergeantMajorObserver(self)


# ----------------------------------------------------------------------------- the information state layout


@dataclass(frozen=True, eq=False)
class _Layout:
    """Offsets of the information state tensor (module docstring): ``blocks`` blocks of ``block`` entries after
    a header of n; ``at[name]`` the offset of a feature within a block, 0-sized features left out."""

    n: int
    blocks: int
    block: int
    at: dict[str, int]
    exchanges: int

    @staticmethod
    def of(rules: RuleSet, blocks: int) -> _Layout:
        features = info_state_layout(rules)
        at = {name: offset for name, offset, _ in features}
        n = rules.num_players
        exchanges = _max_exchanges(rules)
        return _Layout(n, blocks, sum(size for _, _, size in features), at, exchanges)

    @property
    def size(self) -> int:
        return self.n + self.blocks * self.block


def _max_exchanges(rules: RuleSet) -> int:
    """The most exchanges a hand can have: every up player with every down player."""
    if rules.no_exchange:
        return 0
    return 2 if rules.num_players == 3 else 4


def info_state_layout(rules: RuleSet) -> tuple[tuple[str, int, int], ...]:
    """The features of one hand entry's block of the information state tensor: (name, offset, size), in order
    (module docstring); a feature the rule set does not have is left out."""
    n, cards = rules.num_players, NUM_CARDS
    kitty = rules.kitty_size > 0
    sizes = [
        ("begun", 1),
        ("dealt so far", 1),
        ("dealer", n),
        ("quotas known", 1),
        ("quotas", n),
        ("dealt", cards),
        ("face-up", cards if rules.one_card_kitty else 0),
        ("auction", 12 * 13 + 1 if rules.auction else 0),
        ("exchanges", _max_exchanges(rules) * (2 * n + 4 + 2 * cards)),
        ("trump", 6),
        ("discards", 1 + cards if kitty else 0),
        ("kitty", 1 + cards if kitty else 0),
        ("shown", cards if kitty else 0),
        ("take", n + 1 + cards if rules.one_card_kitty else 0),
        ("played", n * cards + cards),
    ]
    out, offset = [], 0
    for name, size in sizes:
        if size:
            out.append((name, offset, size))
            offset += size
    return tuple(out)


@functools.lru_cache(maxsize=8192)
def _block(layout: _Layout, seat: int, known: HandKnowledge) -> np.ndarray:
    """The tensor block of one hand entry as ``seat`` knows it (read-only; cached: the knowledge is a value)."""
    out = np.zeros(layout.block, np.float32)
    at, n = layout.at, layout.n

    def rel(s: int) -> int:
        return (s - seat) % n

    out[at["begun"]] = 1.0
    out[at["dealt so far"]] = 1.0
    if known.dealer is not None:
        out[at["dealer"] + rel(known.dealer)] = 1.0
    if known.quotas is not None:
        out[at["quotas known"]] = 1.0
        for s, quota in enumerate(known.quotas):
            out[at["quotas"] + rel(s)] = quota / _SCALE
    out[at["dealt"] + np.asarray(known.dealt, np.int64)] = 1.0
    if "face-up" in at and known.face_up >= 0:
        out[at["face-up"] + known.face_up] = 1.0
    if "auction" in at and known.auction is not None:
        for k, (s, bid) in enumerate(known.auction):
            base = at["auction"] + 13 * k
            out[base + rel(s)] = 1.0
            out[base + 3 + (0 if bid is None else bid - 7)] = 1.0
        out[at["auction"] + 12 * 13] = float(known.passed_out)
    if "exchanges" in at:
        width = 2 * n + 4 + 2 * NUM_CARDS
        if len(known.exchanges) > layout.exchanges:  # cannot happen: every up player with every down player
            raise RuntimeError(
                f"hand {known.number} has {len(known.exchanges)} exchanges, the layout room for {layout.exchanges}"
            )
        for k, ex in enumerate(known.exchanges):
            base = at["exchanges"] + width * k
            out[base + rel(ex.sender)] = 1.0
            out[base + n + rel(ex.receiver)] = 1.0
            out[base + 2 * n : base + 2 * n + 4] = (ex.count / _SCALE, ex.chosen / _SCALE, ex.delivered, ex.back)
            for order, card in enumerate(ex.sent or ()):
                out[base + 2 * n + 4 + card] = (order + 1) / _SCALE
            for card in ex.returned or ():
                out[base + 2 * n + 4 + NUM_CARDS + card] = 1.0
    call = known.call if known.call >= 0 else known.trump
    if call != NO_SUIT:
        out[at["trump"] + call] = 1.0
    if "discards" in at:
        out[at["discards"]] = known.discard_count / 4.0
        for order, card in enumerate(known.discards or ()):
            out[at["discards"] + 1 + card] = (order + 1) / 4.0
        out[at["kitty"]] = float(known.kitty_taken)
        for card in known.kitty or ():
            out[at["kitty"] + 1 + card] = 1.0
        for card in known.shown:
            out[at["shown"] + card] = 1.0
    if "take" in at and known.take is not None:
        out[at["take"] + rel(known.take[0])] = 1.0
        out[at["take"] + n] = float(known.take[1])
        if known.put_out is not None:
            out[at["take"] + n + 1 + known.put_out] = 1.0
    played = at["played"]
    for number, trick in enumerate(known.tricks):
        for position, card in enumerate(trick.cards):
            out[played + NUM_CARDS * rel((trick.leader + position) % n) + card] = 1.0
            out[played + n * NUM_CARDS + card] = (number + 1) / _SCALE
    out.flags.writeable = False
    return out


def _cards(cards: Sequence[int] | None) -> str:
    return "-" if cards is None else ",".join(CARD_TEXT[c] for c in cards) or "none"


@functools.lru_cache(maxsize=8192)
def _hand_text(calls: bool, known: HandKnowledge) -> str:
    """One hand entry as the seat knows it, as text (the information state string; cached)."""
    parts = [f"hand {known.number}: dealer {'-' if known.dealer is None else known.dealer}"]
    parts[0] += " quotas " + ("-" if known.quotas is None else "-".join(map(str, known.quotas)))
    if known.auction is not None:
        bids = " ".join(f"{s}:{'pass' if b is None else b}" for s, b in known.auction)
        parts.append(f"auction {bids or '-'}" + (" passed out" if known.passed_out else ""))
    parts.append("dealt " + _cards(known.dealt))
    if known.face_up >= 0:
        parts.append("face-up " + CARD_TEXT[known.face_up])
    for ex in known.exchanges:
        state = (" delivered" if ex.delivered else "") + (" back" if ex.back else "")
        parts.append(
            f"exchange {ex.sender}>{ex.receiver} {ex.chosen}/{ex.count}{state} sent {_cards(ex.sent)} "
            f"returned {_cards(ex.returned)}"
        )
    if known.call >= 0:
        parts.append("call " + CALL_NAMES[known.call])
    elif known.trump != NO_SUIT and not calls:
        parts.append("trump " + "CDHS"[known.trump])
    if known.discard_count:
        parts.append(f"discards {known.discard_count} {_cards(known.discards)}")
    if known.kitty_taken:
        parts.append("kitty taken " + _cards(known.kitty))
    if known.shown:
        parts.append("shown " + _cards(known.shown))
    if known.take is not None:
        put = _cards(None if known.put_out is None else (known.put_out,))
        parts.append(f"take {known.take[0]} {'took' if known.take[1] else 'declined'} put out {put}")
    if known.tricks:
        parts.append(
            "tricks " + " ".join(f"{t.leader}:{','.join(CARD_TEXT[c] for c in t.cards)}" for t in known.tricks)
        )
    return " | ".join(parts)


# ----------------------------------------------------------------------------- states


@dataclass(frozen=True)
class _Settings:
    """What every state of a game reads (shared by the states, not copied)."""

    rules: RuleSet
    reward_mode: str
    deck: tuple[int, ...]  # the cards dealt, in card-id order (without 2C under no_kitty_51)
    engine_max_hands: int | None
    start_balances: list[int] | None
    layout: _Layout


class _Core:
    """The state of one episode, copied fast by ``clone`` (OpenSpiel deep-copies a Python state's ``__dict__``).

    ``game`` is None during a deal (a chance node); ``hand_start`` is the engine as the current hand began
    (before the deal of the next hand it is replayed with ``hand_actions``, the next deal queued, so that the
    engine deals what chance dealt); ``finished`` is, during a later deal, the engine right after the hand that
    ended (its hand entries but the last are the game's: the last is a stand-in until chance has dealt);
    ``from_engine`` marks a state of ``state_from_engine`` (no history before it).
    """

    __slots__ = (
        "dealt",
        "finished",
        "first_dealer",
        "from_engine",
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
        self.finished: Game | None = None
        self.from_engine = False
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
        self.from_engine = True

    def __deepcopy__(self, memo: dict[int, Any]) -> _Core:
        other = _Core.__new__(_Core)
        other.settings = self.settings
        other.first_dealer = self.first_dealer
        other.dealt = list(self.dealt)
        other.game = None if self.game is None else self.game.clone()
        other.finished = self.finished  # never stepped
        other.from_engine = self.from_engine
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
            self._deal(int(action))  # pays nothing: a reward due is paid on reaching the next decision
            return
        rewards = [0.0] * len(core.rewards)
        game = core.game
        hand = game.hand_number
        game.apply(int(action))  # the engine checks legality (IllegalActionError, state unchanged)
        core.hand_actions.append(int(action))
        if game.hand_number != hand or game.phase == OVER:
            self._end_hand(game.history[hand - 1].balances, game.history[hand - 1].scores, rewards)
        if game.phase == OVER:
            if self._core.settings.reward_mode == "result" and game.winners is not None:
                rewards = list(result_rewards(game.winners, len(rewards)))
        elif game.hand_number != hand:
            core.finished = game
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
        core.finished = None
        core.hand_start = game.clone()
        core.hand_actions = []
        core.dealt = []

    def rewards(self) -> list[float]:
        """The reward of the transitions since the previous decision, by seat (OpenSpiel's ``State::Rewards``):
        at a decision or terminal state, a hand's reward when the decision before ended it (the game's with
        ``reward="result"``), else zero; at a chance node zero, the deal's chance actions paying nothing, so that
        a reward is counted once whether rewards are summed at every state or at decisions and the end."""
        core = self._core
        return [0.0] * len(core.rewards) if core.game is None else list(core.rewards)

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

    def serialize(self) -> str:
        """The action history as text (:func:`history_text`); ``game.deserialize_state`` reads it back."""
        return history_text(self)

    def resample_from_infostate(self, player_id: int, probability_sampler: Callable[[], float]) -> SergeantMajorState:
        """A state with the same information state for ``player_id``, the hidden cards and the other seats' hidden
        decisions drawn from what that seat knows (module docstring); ``probability_sampler()`` seeds the draw."""
        core = self._core
        rules = core.settings.rules
        if core.from_engine:
            raise ValueError(
                "resample_from_infostate: this state was built by state_from_engine and has no history to redraw"
            )
        try:
            seat = operator.index(player_id)
        except TypeError:
            seat = -1
        if isinstance(player_id, bool) or not 0 <= seat < rules.num_players:
            raise ValueError(
                f"resample_from_infostate: player_id must be a seat 0-{rules.num_players - 1}, got {player_id!r}"
            )
        player_id = seat
        seed = 0
        for _ in range(4):
            seed = seed << 16 | int(float(probability_sampler()) * 65536) & 0xFFFF
        rng = random.Random(seed)
        state = self.get_game().new_initial_state()
        if core.first_dealer is None:
            return state
        state.apply_action(core.first_dealer)
        engine = core.game if core.game is not None else core.finished
        entries = 0 if engine is None else len(engine.history) - (core.game is None)
        if entries:
            drawn = sample_history(game_knowledge(engine, player_id, entries), rng)
            for deal, actions in zip(drawn.deals, drawn.actions, strict=True):
                for action in deal_chance_actions(deal, rules):
                    state.apply_action(action)
                for action in actions:
                    state.apply_action(action)
        if core.game is None:  # a deal in progress: the seat's own cards, the others' drawn
            size, n = rules.hand_size, rules.num_players
            mine = {i for i in range(len(core.dealt)) if i < n * size and i // size == player_id}
            left = [card for card in core.settings.deck if card not in {core.dealt[i] for i in mine}]
            rng.shuffle(left)
            for i, card in enumerate(core.dealt):
                state.apply_action(card if i in mine else left.pop())
        if state.information_state_string(player_id) != self.information_state_string(player_id):
            raise RuntimeError(
                f"resample_from_infostate: the redrawn state is not seat {player_id}'s information state"
            )
        return state

    # ------------------------------------------------------------------ what a seat knows

    def engine(self) -> Game | None:
        """A copy of the engine (every hidden card included; None during a deal)."""
        game = self._core.game
        return None if game is None else game.clone()

    def view(self, player: int) -> PlayerView | None:
        """What seat ``player`` knows now (``knowledge.player_view``); None during a deal."""
        game = self._core.game
        return None if game is None else player_view(game, player)

    def knowledge(self, player: int) -> tuple[HandKnowledge, ...]:
        """What seat ``player`` knows of every hand entry begun and dealt (``knowledge.hand_knowledge``), the
        one in progress last; a deal in progress is not among them (:meth:`dealing`)."""
        core = self._core
        engine = core.game if core.game is not None else core.finished
        if engine is None:
            return ()
        start = 0 if not core.from_engine else len(engine.history) - 1
        count = len(engine.history) - (core.game is None)
        return tuple(hand_knowledge(engine, player, index) for index in range(start, count))

    def dealing(self, player: int) -> tuple[int, tuple[int, ...]] | None:
        """During a deal: (cards dealt so far, the cards of them seat ``player`` got, sorted); else None."""
        core = self._core
        if core.game is not None or core.first_dealer is None:
            return None
        size, n = core.settings.rules.hand_size, core.settings.rules.num_players
        mine = core.dealt[player * size : (player + 1) * size] if player < n else []
        return len(core.dealt), tuple(sorted(mine))

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
    """A view's fields as one line of text (``name=value``, this hand's tricks in order): the observation string.
    A function of the ``PlayerView`` only, so it holds only what the player knows."""
    parts = [f"{name}={getattr(view, name)!r}" for name in PlayerView.__slots__ if name not in ("rules", "_tricks")]
    parts.append("tricks=" + ";".join(f"{t.leader}:{','.join(CARD_TEXT[c] for c in t.cards)}" for t in view.tricks()))
    return " ".join(parts)


class SergeantMajorObserver:
    """OpenSpiel's Python observer of the observation: ``tensor`` (the env's observation, ``dict["observation"]``
    the same array) and ``string_from`` (module docstring)."""

    def __init__(self, game: SergeantMajorGame) -> None:
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


class SergeantMajorInfoStateObserver:
    """OpenSpiel's Python observer of the information state (perfect recall): ``tensor`` (``dict["info_state"]``
    the same array) and ``string_from``; the layout is the module docstring's."""

    def __init__(self, game: SergeantMajorGame) -> None:
        self.layout = game.settings.layout
        self.calls = game.rules.calls
        self.tensor = np.zeros(self.layout.size, np.float32)
        self.dict = {"info_state": self.tensor}

    def set_from(self, state: SergeantMajorState, player: int) -> None:
        """The tensor of ``player`` in ``state``: the first dealer, then a block per hand entry begun."""
        layout, out = self.layout, self.tensor
        out.fill(0.0)
        first = state._core.first_dealer
        if first is None:
            return
        n = layout.n
        out[(first - player) % n] = 1.0
        offset = n
        for known in state.knowledge(player)[: layout.blocks]:
            out[offset : offset + layout.block] = _block(layout, player, known)
            offset += layout.block
        dealing = state.dealing(player)
        if dealing is not None and offset < out.size:
            count, mine = dealing
            out[offset + layout.at["begun"]] = 1.0
            out[offset + layout.at["dealt so far"]] = count / len(state._core.settings.deck)
            out[offset + layout.at["dealt"] + np.asarray(mine, np.int64)] = 1.0

    def string_from(self, state: SergeantMajorState, player: int) -> str:
        """The information state of ``player`` as text: the seat, the first dealer, then each hand entry."""
        first = state._core.first_dealer
        if state._core.from_engine:  # no history: the observation's text
            return f"seat {player} | from engine | " + view_text(state.view(player))
        if first is None:
            return f"seat {player} | first dealer -"
        parts = [f"seat {player} | first dealer {first}"]
        parts += [_hand_text(self.calls, known) for known in state.knowledge(player)]
        dealing = state.dealing(player)
        if dealing is not None:
            count, mine = dealing
            parts.append(f"dealing {count}/{len(state._core.settings.deck)} dealt {_cards(mine)}")
        return " || ".join(parts)


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
