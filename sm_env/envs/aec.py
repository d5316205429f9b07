# noqa: D212, D415
"""
# Sergeant Major (3-5-8)

A PettingZoo AEC environment for the three-player trick-taking card game
Sergeant Major, modelled on PettingZoo's classic environments. The rules are
those of ``docs/rules.md`` (the standard game) plus the named variants of
:mod:`sm_env.core.rules`.

| Import             | `from sm_env import env`                      |
|--------------------|-----------------------------------------------|
| Registry           | `make("aec", "sm_env/sergeant_major-v0")`     |
| Actions            | Discrete                                      |
| Parallel API       | No                                            |
| Manual Control     | No                                            |
| Agents             | `agents= ['player_0', 'player_1', 'player_2']` |
| Agents             | 3                                             |
| Action Shape       | Discrete(56)                                  |
| Action Values      | [0, 55]                                       |
| Observation Shape  | (789,)                                        |
| Observation Values | [-1, 1]                                       |

Each hand the dealer must take 8 tricks, the player on its left (eldest) 5
and the third player (middle) 3. A player who took more tricks than its quota
in one hand is *up* and, in the next hand, passes unwanted cards to a player
who was *down*, who must return its highest cards of the same suits. The
dealer names trump and exchanges 4 cards with the kitty, then 16 tricks are
played (follow suit if able; no obligation to trump). The first player to
take 12 or more tricks in one hand wins the game.

With four players (``rules="four-5-3-2-2"`` or ``"four-6-3-2-1"``, option
``players: 4``, docs/rules.md 10.6) the agents are ``player_0`` ...
``player_3``, each holds 12 cards, the quotas are 5-3-2-2 or 6-3-2-1 and 9
tricks in a hand win; the action space stays ``Discrete(56)`` and the
observation has 1016 entries, seats relative as self, left, across, right
(``FOUR_LAYOUT`` in :mod:`sm_env.observation`).

Decisions are taken one at a time by the agent in ``agent_selection``, which
is always the engine's player to act. The same agent may act several times in
a row: an up player chooses its exchange cards one by one, and the dealer
names trump and then discards 4 cards one by one.

### Action Space

One `gymnasium.spaces.Discrete(56)` space, the same for every agent:

| ids   | meaning                                                                  |
|-------|--------------------------------------------------------------------------|
| 0-51  | a card, by card id: play it to the trick (play phase), discard it (the   |
|       | dealer, discard phase) or send it (an up player, exchange phase)         |
| 52-55 | name trump: 52 clubs, 53 diamonds, 54 hearts, 55 spades (the dealer)     |

Card id = `suit * 13 + (rank - 2)` with suits C=0, D=1, H=2, S=3 and ranks
2..14 (J=11, Q=12, K=13, A=14): 0 = 2C, 12 = AC, 13 = 2D, 51 = AS.

An illegal action raises :class:`IllegalEnvActionError` (a subclass of
:class:`sm_env.core.game.IllegalActionError`, itself a ``ValueError``) whose message
names the action, the phase and the legal actions; the environment is left
exactly as it was. There is no penalty-and-terminate behaviour
(PettingZoo's ``TerminateIllegalWrapper`` is deliberately not used; wrap the
env in it, ``TerminateIllegalWrapper(env, illegal_reward=-1)``, for tools that
sample actions without the mask). :mod:`sm_env.envs.wrappers` adapts the
observation to other libraries (a Box observation with the mask in the info,
RLlib's key names) and :mod:`sm_env.envs.rllib_env` is the RLlib adapter.

### Observation Space

`observe(agent)` returns a dict:

| key           | space                         | meaning                                   |
|---------------|-------------------------------|-------------------------------------------|
| `observation` | `Box(-1, 1, (789,), float32)` | what this agent knows, relative to its    |
|               |                               | seat (layout below)                       |
| `action_mask` | `Box(0, 1, (56,), int8)`      | 1 exactly for the legal actions; all 0    |
|               |                               | for an agent not to act, and for everyone |
|               |                               | once the game is over                     |

The observation layout (offset, size, feature) is documented feature by
feature in :mod:`sm_env.observation` (``OBSERVATION_LAYOUT`` holds it in
code): own hand, cards played by each seat, the open trick, cards passed and
received in the exchange, kitty cards shown, own discards, the kitty (dealer,
once taken), trump, led suit, phase, role, quotas, tricks won, hand sizes,
voids shown in play, previous balances, running scores, exchange counts,
cards still to choose, discards left, tricks played, kitty taken, player to
act, trick leader, hand number. Seats are relative: self, left, right.

The observation is built from :func:`sm_env.core.knowledge.player_view` (the one
place that decides what a player may know) by
:func:`sm_env.observation.encode`. It holds only the agent's own hand, what
was played, what it sent, received, discarded or was shown, and public counts
and scores: two games that differ only in cards an agent cannot see give it
identical observations. Both arrays are fresh on every call; the caller may
keep or modify them.

### Rewards

`reward="score"` (default): when a hand ends, every agent receives the
change of its running score in that hand: its balance, tricks taken minus
quota, or under ``chips`` (docs/rules.md 10.7) the chips it won or paid
(zero-sum). All other steps reward 0. In every rule set the rewards of an
agent over a game add up to its final running score (the record's
``scores``, what ``target_score`` and ``fixed_hands`` rank by) minus its
starting score, which is 0 (``start_balances`` are not scored).

`reward="balance"`: when a hand ends, every agent receives the hand's
balance, tricks taken minus quota (zero-sum). It equals ``"score"`` in every
rule set without ``chips``; under ``chips`` the game is scored in chips, so
the balances of a game do not add up to its scores.

`reward="result"`: 0 on every step except the last one of a game that was
won under the rules: the winners share +1 and the losers share -1 (one
winner: +1 for it, -0.5 for each loser; two winners: +0.5 each, -1 for the
loser; everybody sharing the win: 0). A truncated game rewards 0.
`reward="result"` needs `episode="game"`.

### Episode end

A game won under the rules sets `terminations` for every agent. A game that
nobody has won after `max_hands` hands sets `truncations` for every agent.
With `episode="hand"` the episode is one hand and ends with `terminations`
for every agent, whatever the engine says about the game.

### Arguments

```python
env(rules="standard", episode="game", max_hands=100, reward="score", render_mode=None, compiled="auto")
```

`rules`: a preset name of :data:`sm_env.core.rules.PRESETS` (``"standard"``,
``"woburn"``, ``"canadian"``, ...), a :class:`~sm_env.core.rules.RuleSet`, or a
dict of docs/rules.md section 9 and 10 option names (the ``rules`` field of a record).

`episode`: ``"game"`` (a whole game, hand after hand) or ``"hand"`` (one
hand; every episode is a new game whose hand 1 has no exchange, unless the
reset option ``start_balances`` gives one).

`max_hands`: truncate a game that nobody has won after this many hands
(default 100; ``None``: no limit). Ignored with ``episode="hand"``.

`reward`: ``"score"``, ``"balance"`` or ``"result"`` (above; :mod:`sm_env.core.episode`).

`render_mode`: ``None``, ``"ansi"`` (``render()`` returns the table as text,
seen by the player to act, or by a spectator once the game is over),
``"human"`` (prints it, after every step too) or ``"rgb_array"`` (the same
table as an RGB ``uint8`` array of shape (600, 960, 3), drawn by
:mod:`sm_env.display.picture`; needs Pillow).

`max_cycles`: accepted only because ``pettingzoo.make`` passes it when asked
to; games end by the rules and ``max_hands``, so any value other than None
or -1 is ignored with a warning.

`compiled`: ``"auto"`` (default) steps, observes and masks with compiled
kernels (:mod:`sm_env.compiled.single`, numba) whenever the compiled engine
runs the rule set (:func:`sm_env.compiled.support.supports`: every option of
sections 1-10, three and four players: every preset) and numba's cache holds
them, about five times faster per decision; while the cache lacks them (a
fresh install) the env plays on the pure-Python path, says so in one line and
compiles them in a background process, and a later reset takes them
(:mod:`sm_env.compiled.readiness`). ``True`` always takes the kernels
(compiling them first if needed, announced in one line); ``False``, and the
other rule sets, use the pure-Python path:
``observation.encode(knowledge.player_view(game, seat))`` on the stepped
:class:`~sm_env.core.game.Game`, the readable definition. Both paths give the
same games, observations, masks, rewards, infos, records and errors, bit
for bit (``tests/test_env_kernel.py`` plays them in lockstep); the env holds
either through one :class:`sm_env.compiled.adapter.EngineAdapter`.

`reset(seed=None, options=None)`: `seed` seeds the game (same seed and same
actions give the same game); a reset without a seed continues a random stream
seeded by the last seeded reset. `options` may hold ``"first_dealer"`` (seat
0-2) and ``"deals"`` (a list of deals for hands 1, 2, ...: ``{"hands": [[16
cards] x 3 by absolute seat], "kitty": [4 cards]}``, cards as ids or text
such as ``"TH"``) and, beyond docs/interface.md, ``"start_balances"`` (the
balances of an imaginary previous hand, e.g. ``[2, -1, -1]``, so that hand 1
starts with an exchange: with ``episode="hand"`` this is how single hands with
an exchange are studied; the record keeps it, so it replays). Any other key
is ignored with a ``UserWarning`` naming the known options (PettingZoo's
``api_test`` probes ``reset`` with a made-up option). A bad option raises (``DealError`` for a malformed
deal) and leaves the environment as it was.

### Extras on the unwrapped environment (`env.unwrapped`)

`record()`: the game so far as a JSON-ready record
(:func:`sm_env.records.game_record`; replay it with :func:`sm_env.replay`).
`game`: the engine (:class:`sm_env.core.game.Game`), for tools that need the full
state (a spectator, a search agent); reading it is the caller's
responsibility, since it holds every hidden card. On the compiled path the
``Game`` is brought up to date when ``game`` is read (it replays the actions
played since) and from then on is stepped along with the kernels until the
next reset, so a reference to it stays current; an agent loop that never
reads it never pays for it. It is for reading: actions go through ``step``.
`legal_actions()`: the legal action ids of the player to act.
`action_mask(agent=None)`: the mask without building the observation.

### Infos

`infos[agent]` holds only public facts, with the same keys and numeric types
on every step (so that TorchRL, Tianshou and RLlib can store them; nothing is
ever ``None`` or text):

| key         | type                 | meaning                                                |
|-------------|----------------------|--------------------------------------------------------|
| `phase`     | `int`                | phase index into ``sm_env.PHASE_NAMES``: 0 exchange,   |
|             |                      | 1 trump, 2 discard, 3 play, 4 over, 5 assign, 6 take,  |
|             |                      | 7 bid                                                  |
| `hand`      | `int`                | hand number, from 1                                    |
| `winners`   | `int8` array (3,)    | by seat: 1 for each winner of the game, all 0 while it |
|             |                      | runs and when nobody won                               |
| `truncated` | `bool`               | the episode was truncated (equals ``truncations``)     |

`PHASE_NAMES[info["phase"]]` gives the phase's name; the engine's
``game.winner`` (a seat, a list of seats or None) the winner in the record's
form. With ``episode="hand"`` an episode always terminates, so ``truncated``
stays False even when the one-hand game has no winner.

### Version History

* v0: Initial release.
"""

from __future__ import annotations

import operator
import random
import warnings
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from sm_env.compiled.adapter import EngineAdapter
from sm_env.compiled.codes import CODE_HAND_ENDED, CODE_PHASE_SHIFT
from sm_env.compiled.readiness import check_compiled, use_compiled
from sm_env.compiled.support import supports
from sm_env.core.cards import from_mask
from sm_env.core.episode import (
    DEFAULT_REWARD,
    check_episode,
    engine_max_hands,
    episode_end,
    hand_rewards,
    result_rewards,
)
from sm_env.core.game import OVER, Game, GameOverError, IllegalActionError, check_seed, result_text
from sm_env.core.knowledge import player_view
from sm_env.core.rules import RuleSet
from sm_env.display.render import render_table
from sm_env.observation import action_mask, observation_size

__all__ = [
    "AGENTS",
    "EnvGameOverError",
    "FastOrderEnforcingWrapper",
    "IllegalEnvActionError",
    "agent_names",
    "env",
    "raw_env",
]

AGENTS: tuple[str, ...] = ("player_0", "player_1", "player_2")
"""The agents of a three-player game; ``agent_names(4)`` with four players."""


def agent_names(num_players: int) -> tuple[str, ...]:
    """The agent names by seat: ``player_0`` ... ``player_{n-1}``."""
    return tuple(f"player_{seat}" for seat in range(num_players))


_OPTION_KEYS = ("first_dealer", "deals", "start_balances")


class IllegalEnvActionError(IllegalActionError):
    """An illegal action given to ``step``; the environment is unchanged.

    Subclass of :class:`sm_env.core.game.IllegalActionError` with the engine's message.
    """


class EnvGameOverError(IllegalEnvActionError, GameOverError):
    """``step`` on the raw environment once the game has ended and no agent remains (``agents`` is empty);
    the wrapped ``env()`` warns instead, as PettingZoo's wrapper does."""


def env(**kwargs: Any) -> AECEnv:
    """The Sergeant Major AEC environment, wrapped like PettingZoo's classic ones.

    Keywords are those of :class:`raw_env`. The only wrapper is PettingZoo's
    ``OrderEnforcingWrapper`` (using the environment before ``reset`` is a clear
    error), in a subclass with fast paths once reset. Illegal actions raise
    instead of terminating, and out-of-range actions get the same clear error
    as any other illegal action, so ``TerminateIllegalWrapper`` and
    ``AssertOutOfBoundsWrapper`` are not used.
    """
    return FastOrderEnforcingWrapper(raw_env(**kwargs))


class FastOrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` with the same checks and fast paths after reset.

    The base wrapper reaches every attribute of the inner environment through
    ``__getattr__`` and every method through two wrapper layers, which costs
    more than a decision of the game itself. Here the attributes an agent loop
    reads (``agent_selection``, ``agents``, ``rewards``, ``terminations``,
    ``truncations``, ``infos``, ``_cumulative_rewards``) are properties, and
    ``last``, ``observe`` and ``step`` call the inner environment directly once
    ``reset`` was called. Before reset everything behaves (and fails) exactly
    as in the base wrapper.
    """

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """As ``AECEnv.last``; an error before reset."""
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.last(observe)

    def observe(self, agent: str) -> dict[str, np.ndarray] | None:
        """As the inner ``observe``; an error before reset."""
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.observe(agent)

    def step(self, action: int | None) -> None:
        """As the inner ``step``; an error before reset, a warning once no agent is left."""
        if self._has_reset and self.env.agents:
            self._has_updated = True
            self.env.step(action)
        else:
            super().step(action)

    def __str__(self) -> str:
        """The environment's name, as PettingZoo's own ``OrderEnforcingWrapper`` prints it."""
        return str(self.env)


def _forward(name: str) -> property:
    def get(self: FastOrderEnforcingWrapper) -> Any:
        if self.__dict__.get("_has_reset"):
            return getattr(self.env, name)
        raise AttributeError(name)  # -> OrderEnforcingWrapper.__getattr__: "cannot be accessed before reset"

    def set(self: FastOrderEnforcingWrapper, value: Any) -> None:
        setattr(self.env, name, value)

    return property(get, set, doc=f"The inner environment's ``{name}`` (after reset).")


for _name in ("agent_selection", "agents", "rewards", "terminations", "truncations", "infos", "_cumulative_rewards"):
    setattr(FastOrderEnforcingWrapper, _name, _forward(_name))


class raw_env(AECEnv):
    """The unwrapped environment; see the module docstring for spaces, rewards and arguments."""

    metadata = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": "sergeant_major_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        rules: RuleSet | str | dict[str, Any] | None = "standard",
        episode: str = "game",
        max_hands: int | None = 100,
        reward: str = DEFAULT_REWARD,
        render_mode: str | None = None,
        max_cycles: int | None = None,
        compiled: bool | str = "auto",
    ) -> None:
        super().__init__()
        self.rules = RuleSet.from_any(rules)
        check_episode(episode, reward, max_hands)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        if max_cycles is not None and max_cycles != -1:
            warnings.warn(
                f"sergeant_major_v0 ignores max_cycles={max_cycles}: games end by the rules or after max_hands hands "
                f"(max_hands={max_hands})",
                stacklevel=2,
            )
        self.episode = episode
        self.reward_mode = reward
        self.max_hands = max_hands
        self.render_mode = render_mode
        self._game_max_hands = engine_max_hands(episode, max_hands)
        # whether the compiled path may be taken (True, "auto") and how (use_compiled decides at each reset)
        self._compiled = check_compiled(compiled) if supports(self.rules) else False
        self._use_kernel = self._compiled is not False

        self._agent_names = agent_names(self.rules.num_players)  # player_0 .. player_2 (player_3 with four)
        self._seats = {agent: seat for seat, agent in enumerate(self._agent_names)}
        self.possible_agents = list(self._agent_names)
        self.agents = list(self._agent_names)
        n_actions, n_obs = self.rules.num_actions, observation_size(self.rules)  # 56 and 789 but in section 10.8
        self._num_actions = n_actions
        self.action_spaces = {agent: spaces.Discrete(n_actions) for agent in self._agent_names}
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(low=-1.0, high=1.0, shape=(n_obs,), dtype=np.float32),
                    "action_mask": spaces.Box(low=0, high=1, shape=(n_actions,), dtype=np.int8),
                }
            )
            for agent in self._agent_names
        }
        self._engine: EngineAdapter | None = None  # the game on the engine that steps it, after reset
        self._seed_rng = random.Random()
        self.rewards = dict.fromkeys(self._agent_names, 0.0)
        self._cumulative_rewards = dict.fromkeys(self._agent_names, 0.0)
        self.terminations = dict.fromkeys(self._agent_names, False)
        self.truncations = dict.fromkeys(self._agent_names, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self._agent_names}
        self.agent_selection = self._agent_names[0]
        self._rewarded = False
        self._scores: list[int] = []  # the running scores when the last hand was rewarded (or the game began)
        self._info_code = -1  # phase | hand number << 3 when the infos were last built

    # ------------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> spaces.Space:
        """The (cached) observation space: Dict(observation Box(-1, 1, (789,)), action_mask Box(0, 1, (56,)))."""
        return self.observation_spaces[self._agent_names[self._seat(agent)]]

    def action_space(self, agent: str) -> spaces.Space:
        """The (cached) action space of an agent: Discrete(56)."""
        return self.action_spaces[self._agent_names[self._seat(agent)]]

    # ------------------------------------------------------------------ reset

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game (see the module docstring for ``seed`` and ``options``).

        The new game is built before anything changes, so a bad option raises
        and leaves the environment as it was.
        """
        first_dealer = deals = start_balances = None
        if options:
            if not isinstance(options, dict):
                raise ValueError(f"reset options must be a dict, got {type(options).__name__}")
            unknown = sorted(str(k) for k in options if k not in _OPTION_KEYS)
            if unknown:
                # A warning, not an error: PettingZoo's api_test probes reset() with a made-up option.
                warnings.warn(
                    f"unknown reset option(s) {unknown} ignored; the options are {list(_OPTION_KEYS)}",
                    UserWarning,
                    stacklevel=2,
                )
            first_dealer = options.get("first_dealer")
            deals = options.get("deals")
            start_balances = options.get("start_balances")
        if seed is not None:
            try:
                seed = operator.index(seed)
            except TypeError:
                raise ValueError(f"seed must be an integer or None, got {seed!r}") from None
            seed = check_seed(seed)  # the engine's range, checked before the seed is turned into text
            seed_rng = random.Random(f"sm_env.reset:{seed}")
            game_seed = seed
        else:
            seed_rng = random.Random()
            seed_rng.setstate(self._seed_rng.getstate())
            game_seed = seed_rng.getrandbits(128)  # as many bits as agents.fresh_seed draws
        game = Game(
            self.rules,
            seed=game_seed,
            first_dealer=first_dealer,
            deals=deals,
            max_hands=self._game_max_hands,
            start_balances=start_balances,
        )
        engine = EngineAdapter(game, use_compiled(self._compiled))  # before the Game is played or read
        # Everything below cannot fail: swap the new game in.
        if seed is None:
            game.seed = None  # the record's seed is the one given to reset (None when none was given)
        self._seed_rng = seed_rng
        self._engine = engine
        self.agents = list(self._agent_names)
        self.rewards = dict.fromkeys(self._agent_names, 0.0)
        self._cumulative_rewards = dict.fromkeys(self._agent_names, 0.0)
        self.terminations = dict.fromkeys(self._agent_names, False)
        self.truncations = dict.fromkeys(self._agent_names, False)
        self._rewarded = False
        self._scores = list(game.scores)
        self._info_code = -1
        self._skip_agent_selection = None
        self._update_infos(game.phase, game.hand_number)
        self.agent_selection = self._agent_names[game.current]

    # ------------------------------------------------------------------ the engine

    @property
    def game(self) -> Game | None:
        """The engine (:class:`sm_env.core.game.Game`) of the current game, up to date (None before reset).

        It holds every hidden card: reading it is the caller's responsibility.
        On the compiled path the ``Game`` is brought up to date when it is read
        and, from then on in this game, stepped with every action, so a
        reference to it stays current.
        """
        return None if self._engine is None else self._engine.hand_out()

    def _status(self) -> tuple[int, int, list[int] | None]:
        """(phase, hand number, winners) of the current game."""
        engine = self._engine
        return engine.phase, engine.hand_number, engine.winners

    # ------------------------------------------------------------------ step

    def step(self, action: int | None) -> None:
        """Apply the action of ``agent_selection`` (see the module docstring).

        Raises IllegalEnvActionError, naming the action and the legal ones,
        without changing anything, if the action is not legal.
        """
        # validate: an agent that is done takes PettingZoo's dead step; after the end, or before reset, an error
        agent = self.agent_selection
        try:
            dead = self.terminations[agent] or self.truncations[agent]
        except KeyError:  # every agent has been removed: the game has ended
            raise self._stepped_after_end(action) from None
        if dead:
            self._was_dead_step(action)
            return
        engine = self._engine
        if engine is None:
            raise RuntimeError("call reset() before step()")
        # apply: the engine refuses an illegal action with the Game's message and changes nothing
        try:
            code = engine.play(action)
        except IllegalActionError as err:
            raise IllegalEnvActionError(str(err)) from None
        # rewards: the last step's are cleared; a hand that ended pays its rewards
        self._cumulative_rewards[agent] = 0.0
        if self._rewarded:
            self._clear_rewards()
        if code & CODE_HAND_ENDED:
            self._end_hand(engine.balances(), engine.scores())
        # next agent: the engine's player to act, or the end of the game; infos when the phase or hand changed
        key = code >> CODE_PHASE_SHIFT  # phase | hand number << 3
        if key & 7 == OVER:
            self._end_game()
        else:
            self.agent_selection = self._agent_names[code & 3]
            if key != self._info_code:
                self._update_infos(key & 7, key >> 3)
        if self.render_mode == "human":
            self.render()

    def _stepped_after_end(self, action: Any) -> Exception:
        if self._engine is None:
            return RuntimeError("call reset() before step()")
        _, hands, winners = self._status()
        end = result_text(winners, False, hands) if winners else f"after {hands} hand{'s' if hands != 1 else ''}"
        return EnvGameOverError(
            f"step({action!r}) after the game has ended ({end}): no agents remain (env.agents is empty); "
            "call reset() to play another game"
        )

    def _clear_rewards(self) -> None:
        rewards = self.rewards
        for a in rewards:
            rewards[a] = 0.0
        self._rewarded = False

    def _end_hand(self, balances: Sequence[int], scores: Sequence[int]) -> None:
        """Give the rewards of the hand that just ended (a passed-out deal, auction, ends none)."""
        values = hand_rewards(self.reward_mode, balances, self._scores, scores)
        self._scores = list(scores)
        if values is None:
            return
        rewards = self.rewards
        cumulative = self._cumulative_rewards
        for agent, value in zip(self._agent_names, values, strict=True):
            rewards[agent] = value
            cumulative[agent] += value
        self._rewarded = True

    def _end_game(self) -> None:
        """Set terminations or truncations for everybody (and the result rewards)."""
        phase, hand_number, winners = self._status()
        won = winners is not None
        terminated, truncated = episode_end(self.episode, won)
        self.terminations = dict.fromkeys(self._agent_names, terminated)
        self.truncations = dict.fromkeys(self._agent_names, truncated)
        if self.reward_mode == "result" and won:
            for agent, value in zip(self._agent_names, result_rewards(winners, len(self._agent_names)), strict=True):
                self.rewards[agent] = value
                self._cumulative_rewards[agent] += value
            self._rewarded = True
        self._update_infos(phase, hand_number, winners)

    def _update_infos(self, phase: int, hand_number: int, winners_seats: list[int] | None = None) -> None:
        """Public information only, fixed keys and numeric values (see "Infos" in the module docstring)."""
        winners = np.zeros(len(self._agent_names), dtype=np.int8)
        if winners_seats is not None:
            winners[list(winners_seats)] = 1
        truncated = bool(self.truncations[self._agent_names[0]])
        self._info_code = phase | hand_number << 3
        self.infos = {
            agent: {"phase": phase, "hand": hand_number, "winners": winners.copy(), "truncated": truncated}
            for agent in self.agents
        }

    # ------------------------------------------------------------------ observe

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32 (789,), "action_mask": int8 (56,)}`` for an agent (fresh arrays)."""
        engine = self._engine
        if engine is None:
            raise RuntimeError("call reset() before observe()")
        try:
            seat = self._seats[agent]
        except (KeyError, TypeError):
            seat = self._seat(agent)  # raises: not an agent name
        obs, mask = engine.observe(seat)
        return {"observation": obs, "action_mask": mask}

    def _seat(self, agent: Any) -> int:
        """The seat of an agent name; a clear error for anything else."""
        try:
            return self._seats[agent]
        except (KeyError, TypeError):
            raise ValueError(f"unknown agent {agent!r}; the agents are {list(self._agent_names)}") from None

    def action_mask(self, agent: str | None = None) -> np.ndarray:
        """The action mask of an agent (default: the one to act), without building the observation."""
        engine = self._engine
        if engine is None:
            raise RuntimeError("call reset() before action_mask()")
        if agent is not None:
            self._seat(agent)
        seat = engine.current_player
        if seat is None or self._agent_names[seat] != (self.agent_selection if agent is None else agent):
            return np.zeros(self._num_actions, dtype=np.int8)
        return action_mask(engine.legal_bits(), self._num_actions)

    def legal_actions(self) -> list[int]:
        """Legal action ids of the player to act (empty once the game is over)."""
        if self._engine is None:
            raise RuntimeError("call reset() before legal_actions()")
        return from_mask(self._engine.legal_bits())

    # ------------------------------------------------------------------ record, render

    def record(self) -> dict[str, Any]:
        """The game so far as a JSON-ready record (``sm_env.records.game_record``)."""
        if self._engine is None:
            raise RuntimeError("call reset() before record()")
        from sm_env.records import game_record

        return game_record(self._engine.synced())

    def render(self) -> str | np.ndarray | None:
        """The table seen by the player to act (the whole table once over): ``"ansi"`` text, ``"human"``
        printed, ``"rgb_array"`` an RGB picture (:func:`sm_env.display.picture.table_picture`)."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode "
                "(use sm_env.env(render_mode='ansi'), 'human' or 'rgb_array')."
            )
            return None
        if self._engine is None:
            raise RuntimeError("call reset() before render()")
        game = self._engine.synced()
        seat = game.current_player
        if self.render_mode == "rgb_array":
            from sm_env.display.picture import table_picture

            return table_picture(game) if seat is None else table_picture(player_view(game, seat))
        text = render_table(game) if seat is None else render_table(player_view(game, seat))
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        """Nothing to release (text rendering only)."""
