"""The learner's seat as a single-agent Gymnasium environment.

:class:`SingleSeatEnv` lets one learner play one seat of a Sergeant Major game
while the other seats (two, or three with four players: docs/rules.md 10.6)
are played, inside :meth:`SingleSeatEnv.step`, by opponents drawn from an
:class:`OpponentPool` (baseline agents and frozen snapshots of the learner).
Every opponent is a plain
:class:`agents.players.base.Agent` that sees only its ``player_view``; a snapshot is a
:class:`SnapshotAgent` around the learner's numpy policy. Every transition
is from the learner's point of view only: a rollout never mixes two
players' observations.

It drives the engine directly, which is several times faster than stepping
the PettingZoo environment, and computes exactly what that environment would
give the same seat (episodes and rewards are those of :mod:`sm_env.core.episode`,
as in the environment). It steps the game through
:class:`sm_env.compiled.adapter.EngineAdapter`, as ``raw_env`` does, on one of two
paths that give the same games, observations, masks, rewards and infos bit for
bit (``tests/test_single_seat_kernel.py`` plays them in lockstep):

- compiled (``compiled="auto"``, the default, whenever the compiled engine runs the
  rule set, :func:`sm_env.compiled.support.supports`, and numba's cache holds the
  kernels: until then the pure-Python path while they compile in the background,
  as ``raw_env`` does, :mod:`sm_env.compiled.readiness`; ``compiled=True``
  compiles them first if needed): the game is stepped,
  observed and masked by the kernels of :mod:`sm_env.compiled.single`
  (``CompiledGame``, as ``raw_env``'s compiled path). The pure-Python ``Game``
  is still built at every reset (seed, deals, options; its RNG decides every
  deal) and brought up to date only when something needs it: an opponent that
  acts on a :class:`~sm_env.core.knowledge.PlayerView` (heuristic, search, any
  agent but those below), or a read of :attr:`SingleSeatEnv.game` (from then
  on, until the next reset, it is stepped with every action, so a reference to
  it stays current). Opponents that act on the observation and the legal
  actions alone (:class:`SnapshotAgent`, :class:`agents.players.ppo_agent.PPOAgent`,
  :class:`agents.players.random_agent.RandomAgent`: exactly those classes) are asked
  through their ``choose`` and never bring the ``Game`` up to date;
- pure Python (``compiled=False``, and rule sets the compiled engine does not run):
  ``Game.apply``, ``knowledge.player_view`` and ``observation.encode``; every
  opponent acts on its ``PlayerView``.

What the learner gets:

- observation: ``observation.encode(player_view(game, seat))``
  (``observation_size(rules)`` floats in [-1, 1]: 789 for the standard rules,
  791 with 74 actions, 900 with ``one_card_kitty``); the action space is
  ``Discrete(rules.num_actions)``: 56, or 74 for the rule sets of docs/rules.md
  10.8 (docs/interface.md); 1016 floats with four players. Every rule set
  trains, three players and four (the compiled path where the compiled engine
  runs it, else the pure-Python one);
- reward, from the learner's point of view, in the env's reward modes:
  ``"score"`` (default) gives the change of the learner's running score in
  each hand when that hand ends (its balance, tricks - quota, or its chips
  under ``chips``), so the rewards of a game add up to its final score;
  ``"balance"`` gives the hand's balance (the same but under ``chips``);
  ``"result"`` (``episode="game"`` only) gives, when a game is won, the
  learner's share of +1 for the winners and -1 for the losers (one winner:
  +1 / -0.5 each), 0 for a truncation (``max_hands``); ``reward_scale``
  multiplies each. ``dense_reward=True`` (score and balance modes) pays the
  same total sooner: +1 for every trick the learner wins, when it is won,
  and the rest of the hand's reward (-quota without chips) when the hand
  ends;
- ``episode="hand"`` plays one hand (a termination at its end);
  ``episode="game"`` plays a whole game (termination when won, truncation at
  ``max_hands``).

Which seat the learner plays: ``learner_seats`` is ``"all"`` or a list of
the rule set's roles (:func:`sm_env.core.game.role_names`: ``"dealer"``,
``"eldest"``, ``"middle"``; with four players ``"dealer"``, ``"eldest"``,
``"third"``, ``"fourth"``). Each episode draws one of them with the env's
RNG; the learner's absolute seat is drawn too and the first dealer is set so
that the learner has that role in the first hand (in ``"game"`` episodes
roles then rotate as the rules say).

``reset(seed, options)``: options ``role`` (a role name or 0 to n - 1, n =
``rules.num_players``), ``seat`` (0 to n - 1) and ``deals`` (as ``sm_env``
reset options) fix what is otherwise drawn from the env's RNG.

``exchange_start`` (hand episodes): the probability that the hand starts with
an exchange, from the balances of an imaginary previous hand (tricks of the
previous hand drawn as ``tricks_per_hand`` independent tricks, each won by a
seat with probability quota / tricks_per_hand), so that exchange decisions
are trained too; with four players too (the exchange of docs/rules.md 10.6).
Rule sets whose first hand never exchanges (``no_exchange``, ``calls``,
``auction``: docs/rules.md 10.2, 10.3) refuse an ``exchange_start`` above 0.

Masks: :meth:`SingleSeatEnv.action_masks` (sb3-contrib's MaskablePPO
convention) and ``info["action_mask"]`` hold the learner's legal actions. The
learner is only ever asked to act when it has a legal action, so the mask is
never all zero; after the episode has ended (no decision left) it is all ones.
An illegal action (a policy or a tool that ignores the mask: plain PPO,
Gymnasium's and SB3's env checkers) raises
:class:`sm_env.IllegalEnvActionError` (a ``ValueError``) naming the action and
the legal ones, and changes nothing (``illegal_action="raise"``, the default,
as ``raw_env``). ``illegal_action="lowest_legal"`` replaces it by the lowest
legal action instead and flags the step with ``info["illegal_action"] = True``
(for tools that sample without the mask; a learner trained so learns from
moves it did not choose).

:class:`ActionMaskVecEnv` caches the masks from the infos so that MaskablePPO
does not need one extra inter-process call per step with SubprocVecEnv.

Torch's threads: ``torch_threads=1`` (the default) puts torch on one thread
when the env is made (``torch.set_num_threads``: the whole process's setting).
The networks trained on this env are small, and for them torch's pool of one
thread per core costs more than it saves, most of all on busy cores (the
figures: docs/ecosystem.md). ``torch_threads=N`` sets N threads instead, and
``None`` leaves torch's setting as it is (the trainer does so: it sets
``train.torch_threads`` itself).

Gymnasium id: importing this module registers :data:`GYM_ID`,
``sm_env/SergeantMajorSingleSeat-v0``; ``gymnasium.make(GYM_ID, **kwargs)``
makes ``SingleSeatEnv(**kwargs)``, and
``gymnasium.make("training.sb3.single_agent:sm_env/SergeantMajorSingleSeat-v0")``
imports this module first. (Registered here, not by ``import sm_env``: the
environment package never refers to the training layer above it.) Gymnasium's
``check_env(env.unwrapped, skip_render_check=True)`` passes with
``illegal_action="lowest_legal"``: the checker samples actions without the mask.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

from agents import Agent, act
from agents.players.ppo_agent import STANDARD_SHAPE, NumpyPolicy, PolicyShape, PPOAgent
from agents.players.random_agent import RandomAgent
from agents.players.trained import TrainedAgent
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
from sm_env.core.game import OVER, Game, IllegalActionError, action_text, role_names
from sm_env.core.knowledge import PlayerView, player_view
from sm_env.core.rules import RuleSet
from sm_env.envs.aec import IllegalEnvActionError
from sm_env.observation import encode, observation_size
from training.common.exchange import check_exchange_start
from training.common.workers import limit_threads

from .seats import role_indices

SNAPSHOTS = "snapshots"  # name of the snapshot entry in an opponent mix
# how an opponent is asked on the compiled path (_opponent_kind): its PlayerView, the legal actions, or the
# observation vector and the legal actions (on the pure-Python path: always its PlayerView)
_VIEW, _LEGAL, _OBSERVATION = 0, 1, 2
ILLEGAL_ACTIONS = ("raise", "lowest_legal")  # what step does with an illegal action (the module docstring)
GYM_ID = "sm_env/SergeantMajorSingleSeat-v0"
"""The Gymnasium id of :class:`SingleSeatEnv`, registered when this module is imported."""


def set_torch_threads(threads: int | None) -> None:
    """Torch on ``threads`` CPU threads for this process (None: left as it is); a ValueError unless a whole
    number >= 1 or None."""
    if threads is None:
        return
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(
            f"torch_threads must be a whole number >= 1, or None to leave torch's threads as they are; got {threads!r}"
        )
    import torch

    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


# ---------------------------------------------------------------------------- opponents


class SnapshotAgent(Agent):
    """A frozen snapshot of the learner as an agent: its numpy policy
    (:class:`agents.players.ppo_agent.NumpyPolicy`) sampling, or playing its argmax.

    It encodes the view itself into a reused buffer, so callers need not build
    the observation dict (``needs_observation`` is False)."""

    def __init__(self, policy: NumpyPolicy, seed: int | None, deterministic: bool, name: str) -> None:
        super().__init__(seed)
        self.policy = policy
        self.deterministic = deterministic
        self.name = name
        self._obs = np.zeros(policy.observation_size, dtype=np.float32)

    def act(self, view: PlayerView, observation: dict[str, Any] | None = None) -> int:
        encode(view, self._obs)
        return self.choose(self._obs, view.legal)

    def choose(self, observation: np.ndarray, legal: int) -> int:
        """What :meth:`act` plays, from the observation vector and the legal-action bit set alone."""
        return self.policy.choose(observation, legal, self.deterministic, self.rng)


def make_baseline(name: str, seed: int) -> Agent:
    """A baseline agent by spec through ``agents.make_agent`` (the registry)."""
    from agents import make_agent

    return make_agent(name, seed)


class OpponentPool:
    """Where opponents come from: weighted baselines plus frozen snapshots.

    Args:
        mix: weight of each opponent kind: agent names understood by
            ``agents.make_agent`` (``"random"``, ``"heuristic"``, ...) and
            ``"snapshots"`` (a uniformly drawn snapshot of the learner). While
            no snapshot exists its weight goes to the other entries (or to
            ``"random"`` if there is none).
        pool_size: how many snapshots are kept (oldest dropped first).
        snapshot_deterministic: snapshots play their argmax instead of sampling.

    Each opponent seat draws its opponent independently at every reset.
    """

    def __init__(
        self, mix: Mapping[str, float] | None = None, pool_size: int = 10, snapshot_deterministic: bool = False
    ) -> None:
        mix = dict(mix or {"random": 1.0})
        if not mix or any(w < 0 for w in mix.values()) or sum(mix.values()) <= 0:
            raise ValueError(f"opponent mix needs non-negative weights with a positive sum, got {mix}")
        self.mix = mix
        self.pool_size = pool_size
        self.snapshot_deterministic = snapshot_deterministic
        self.snapshots: list[tuple[str, NumpyPolicy]] = []

    def add_snapshot(
        self, name: str, arrays: Mapping[str, np.ndarray], activation: str, shape: PolicyShape = STANDARD_SHAPE
    ) -> None:
        """A snapshot of the learner joins the pool (its network of ``shape``: the env's rule set's)."""
        policy = NumpyPolicy.from_state_dict(arrays, activation, where=f"snapshot {name}", shape=shape)
        self.snapshots.append((name, policy))
        del self.snapshots[: -self.pool_size]

    def snapshot_names(self) -> list[str]:
        return [name for name, _ in self.snapshots]

    def _weights(self) -> tuple[list[str], list[float]]:
        names, weights = [], []
        for name, weight in self.mix.items():
            if weight > 0 and (name != SNAPSHOTS or self.snapshots):
                names.append(name)
                weights.append(weight)
        if not names:
            return ["random"], [1.0]
        return names, weights

    def draw(self, rng: random.Random) -> str:
        """The kind of one opponent: an agent name, or ``"snapshots:<name>"``."""
        names, weights = self._weights()
        kind = rng.choices(names, weights)[0] if len(names) > 1 else names[0]
        if kind == SNAPSHOTS:
            return f"{SNAPSHOTS}:{rng.randrange(len(self.snapshots))}"
        return kind


# ---------------------------------------------------------------------------- env


class SingleSeatEnv(gym.Env):
    """One learner seat against pooled opponents (see the module docstring)."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        rules: RuleSet | str | dict[str, Any] | None = "standard",
        episode: str = "hand",
        max_hands: int | None = 100,
        reward: str = DEFAULT_REWARD,
        reward_scale: float = 1.0,
        learner_seats: str | Sequence[str] = "all",
        exchange_start: float = 0.0,
        dense_reward: bool = False,
        opponents: OpponentPool | Mapping[str, float] | None = None,
        baseline_factory: Callable[[str, int], Agent] | None = None,
        compiled: bool | str = "auto",
        illegal_action: str = "raise",
        torch_threads: int | None = 1,
    ) -> None:
        super().__init__()
        if illegal_action not in ILLEGAL_ACTIONS:
            raise ValueError(f"illegal_action must be one of {list(ILLEGAL_ACTIONS)}, got {illegal_action!r}")
        set_torch_threads(torch_threads)
        self.illegal_action = illegal_action
        self.rules = RuleSet.from_any(rules)
        self.num_players = self.rules.num_players
        self.role_names = role_names(self.rules)  # by role index: dealer, eldest, middle (third, fourth)
        check_episode(episode, reward, max_hands)
        if not 0.0 <= exchange_start <= 1.0:
            raise ValueError(f"exchange_start must be a probability in [0, 1], got {exchange_start!r}")
        check_exchange_start(self.rules, exchange_start)  # a first hand without an exchange cannot open with one
        # whether the compiled path may be used (True, "auto") and how: use_compiled decides at every reset
        self.compiled = check_compiled(compiled) if supports(self.rules) else False
        self.episode = episode
        self.max_hands = engine_max_hands(episode, max_hands)
        self.reward_mode = reward
        self.reward_scale = float(reward_scale)
        self.roles = role_indices(learner_seats, self.rules)
        self.exchange_start = float(exchange_start) if episode == "hand" else 0.0
        self.dense_reward = bool(dense_reward)
        self.pool = opponents if isinstance(opponents, OpponentPool) else OpponentPool(opponents)
        self.baseline_factory = baseline_factory or make_baseline
        self.observation_size, self.num_actions = observation_size(self.rules), self.rules.num_actions
        self.observation_space = gym.spaces.Box(-1.0, 1.0, shape=(self.observation_size,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(self.num_actions)
        self._all_ones = np.ones(self.num_actions, dtype=np.int8)
        self._rng = random.Random(0)
        self._baselines: dict[tuple[str, int], Agent] = {}
        self._engine: EngineAdapter | None = None  # the episode's game on the engine that steps it, after reset
        self._kinds: dict[int, int] = {}  # how each opponent is asked (_VIEW, _LEGAL, _OBSERVATION)
        self._code = 0  # the step code of the last action (sm_env.compiled.codes)
        self._scratch_obs = np.zeros(self.observation_size, dtype=np.float32)  # opponents' observations
        self._scratch_mask = np.zeros(self.num_actions, dtype=np.int8)
        self.seat = 0
        self.opponents: dict[int, Agent] = {}
        self.opponent_names: dict[int, str] = {}  # the pool's name of each opponent (a baseline spec or a snapshot)
        self._mask = self._all_ones
        self._credited = 0
        self._hand_credit = 0
        self._scores: list[int] = []  # the running scores after the last hand credited (or at the start)
        self.decisions = 0  # engine decisions (learner + opponents) since construction

    # -- pool management (callable through VecEnv.env_method) -----------------
    def add_snapshot(self, name: str, arrays: Mapping[str, np.ndarray], activation: str = "tanh") -> None:
        self.pool.add_snapshot(name, arrays, activation, PolicyShape.of(self.rules))

    def snapshot_names(self) -> list[str]:
        return self.pool.snapshot_names()

    # -- gymnasium API ---------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        options = options or {}
        role, seat = self._fixed_role_and_seat(options)
        super().reset(seed=seed)
        if seed is not None or self._engine is None:
            # every random choice of the wrapper comes from np_random (seeded by reset)
            self._rng = random.Random(int(self.np_random.integers(2**63)))
            self._baselines = {}
        rng = self._rng
        n = self.num_players
        if role is None:
            role = rng.choice(self.roles)
        drawn = rng.randrange(n)  # drawn even when the options give the seat (the stream of earlier versions)
        seat = drawn if seat is None else seat
        start = None
        if self.exchange_start > 0 and rng.random() < self.exchange_start:
            start = self._previous_balances(rng, (seat - role) % n)
        self.seat = seat
        game = Game(
            self.rules,
            seed=rng.randrange(2**62),
            first_dealer=(seat - role) % n,
            deals=options.get("deals"),
            max_hands=self.max_hands,
            start_balances=start,
        )
        self._engine = engine = EngineAdapter(game, use_compiled(self.compiled))  # before the Game is read
        self.opponents, self.opponent_names = {}, {}
        for s in range(n):
            if s != seat:
                kind = self.pool.draw(rng)
                self.opponents[s] = self._opponent(kind, s, rng)
                self.opponent_names[s] = self._kind_name(kind)
        compiled = engine.fast is not None
        self._kinds = {s: self._opponent_kind(agent) if compiled else _VIEW for s, agent in self.opponents.items()}
        self._credited = 0
        self._hand_credit = 0
        self._scores = list(game.scores)
        reward = self._advance(game.current | game.phase << CODE_PHASE_SHIFT)  # opponents who act before the learner
        assert reward == 0.0 and self._code & 3 == seat
        return self._observe(), self._info()

    @property
    def game(self) -> Game | None:
        """The engine (:class:`sm_env.core.game.Game`) of the current episode, up to date (None before reset).

        It holds every hidden card. On the compiled path it is brought up to date
        when read and, from then on until the next reset, stepped with every action.
        It is for reading: actions go through ``step``.
        """
        return None if self._engine is None else self._engine.hand_out()

    def step(self, action: Any):
        engine = self._engine
        if engine is None:
            raise RuntimeError("call reset() before step()")
        if self._code >> CODE_PHASE_SHIFT & 7 == OVER:
            raise RuntimeError("the episode is over; call reset()")
        action = int(action)
        illegal = not (0 <= action < self.num_actions and self._mask[action])  # the learner's mask: it is to act
        if illegal:
            action = self._replacement(action)
        reward = self._advance(self._play(action))
        terminated = truncated = False
        if self._code >> CODE_PHASE_SHIFT & 7 == OVER:
            terminated, truncated = episode_end(self.episode, engine.winners is not None)
        obs = self._observe()
        info = self._info()
        if illegal:
            info["illegal_action"] = True
        return obs, reward * self.reward_scale, terminated, truncated, info

    def _replacement(self, action: int) -> int:
        """The lowest legal action in place of the illegal ``action`` (``illegal_action="lowest_legal"``), or
        IllegalEnvActionError naming it and the legal ones (``"raise"``); nothing changes before either."""
        game = self._engine.synced()
        legal = game.legal_mask()
        if self.illegal_action == "lowest_legal":
            return (legal & -legal).bit_length() - 1
        try:
            game.apply(action)  # refused: the engine's message, with the reason and the legal actions
        except IllegalActionError as err:
            message = str(err)
        else:  # pragma: no cover - the masks are the engine's
            raise AssertionError(f"action {action} is legal in the Game but not in the learner's mask")
        if "legal actions:" not in message:  # out of range: the engine names the action ids only
            message += "; legal actions: " + " ".join(action_text(a, self.rules) for a in from_mask(legal))
        raise IllegalEnvActionError(
            f"{message} (ids {from_mask(legal)}). Pick actions with the mask (action_masks(), "
            'info["action_mask"]: sb3-contrib\'s MaskablePPO does), or build the env with '
            "illegal_action='lowest_legal' to have an illegal one replaced by the lowest legal one"
        )

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (int8 0/1, one per action id); never all zero."""
        return self._mask

    # -- internals ---------------------------------------------------------------
    @staticmethod
    def _opponent_kind(agent: Agent) -> int:
        """How the compiled path asks an opponent: from the legal actions (exactly a RandomAgent), from the
        observation and the legal actions (exactly a SnapshotAgent, a PPOAgent or a TrainedAgent, the spec
        ``trained``), else from its PlayerView."""
        kind = type(agent)
        if kind is RandomAgent:
            return _LEGAL
        if kind is SnapshotAgent or kind is PPOAgent or kind is TrainedAgent:
            return _OBSERVATION
        return _VIEW

    def _kind_name(self, kind: str) -> str:
        if kind.startswith(SNAPSHOTS + ":"):
            return self.pool.snapshots[int(kind.split(":", 1)[1])][0]
        return kind

    def _opponent(self, kind: str, seat: int, rng: random.Random) -> Agent:
        """The agent of one opponent seat for this episode, seeded from ``rng``."""
        agent_seed = rng.randrange(2**62)
        if kind.startswith(SNAPSHOTS + ":"):
            name, policy = self.pool.snapshots[int(kind.split(":", 1)[1])]
            return SnapshotAgent(policy, agent_seed, self.pool.snapshot_deterministic, name)
        key = (kind, seat)
        agent = self._baselines.get(key)
        if agent is None:
            agent = self._baselines[key] = self.baseline_factory(kind, agent_seed)
        agent.reset(agent_seed)
        if isinstance(agent, PPOAgent):
            agent.check_rules(self.rules)  # what its act() checks (and picks trained's policy); choose() does not
        return agent

    def _fixed_role_and_seat(self, options: Mapping[str, Any]) -> tuple[int | None, int | None]:
        """The reset options' role (an index) and seat, None where not given; a ValueError (before anything
        changes) names what a bad one allows."""
        n = self.num_players
        role = options.get("role")
        if isinstance(role, str):
            if role not in self.role_names:
                raise ValueError(f"reset option role: {role!r} is not one of {list(self.role_names)}")
            role = self.role_names.index(role)
        elif role is not None and (
            isinstance(role, bool) or not isinstance(role, (int, np.integer)) or not 0 <= role < n
        ):
            raise ValueError(f"reset option role: a role name {list(self.role_names)} or 0-{n - 1}, got {role!r}")
        seat = options.get("seat")
        if seat is not None and (
            isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n
        ):
            raise ValueError(f"reset option seat: a seat 0-{n - 1}, got {seat!r}")
        return (None if role is None else int(role)), (None if seat is None else int(seat))

    def _previous_balances(self, rng: random.Random, dealer: int) -> list[int]:
        """Balances of an imaginary previous hand dealt by the seat right of ``dealer``."""
        n = self.num_players
        previous_dealer = (dealer - 1) % n
        quotas = [self.rules.quotas[(s - previous_dealer) % n] for s in range(n)]
        tricks = [0] * n
        for seat in rng.choices(range(n), quotas, k=self.rules.tricks_per_hand):
            tricks[seat] += 1
        return [tricks[s] - quotas[s] for s in range(n)]

    def _play(self, action: int) -> int:
        """Apply a legal action on the engine; the step code."""
        code = self._engine.play(action)
        self.decisions += 1
        return code

    def _advance(self, code: int) -> float:
        """Opponents act until the learner is to act or the game is over, from the step code of the last action
        (or of the start); the learner's reward for every hand (or game) that ended meanwhile."""
        engine = self._engine
        seat = self.seat
        mode = self.reward_mode
        opponents, kinds = self.opponents, self._kinds
        reward = 0.0
        while True:
            if code & CODE_HAND_ENDED and mode != "result":
                scores = engine.scores()
                paid = hand_rewards(mode, engine.balances(), self._scores, scores)
                reward += paid[seat] - self._hand_credit
                self._scores = list(scores)
                self._hand_credit = 0
            s = code & 3
            if code >> CODE_PHASE_SHIFT & 7 == OVER or s == seat:
                break
            kind = kinds[s]
            if kind == _LEGAL:
                action = opponents[s].choose(engine.legal_bits())
            elif kind == _OBSERVATION:
                obs = self._scratch_obs
                engine.observe_into(s, obs, self._scratch_mask)
                action = opponents[s].choose(obs, engine.legal_bits())
            else:
                action = act(opponents[s], player_view(engine.synced(), s))
            code = self._play(action)
        self._code = code
        if mode != "result":
            if self.dense_reward and code >> CODE_PHASE_SHIFT & 7 != OVER:
                tricks = engine.tricks_won(seat)  # of the hand in progress
                reward += tricks - self._hand_credit
                self._hand_credit = tricks
        elif code >> CODE_PHASE_SHIFT & 7 == OVER and self._credited == 0:
            self._credited = 1
            reward = result_rewards(engine.winners, self.num_players)[seat]
        return reward

    def _observe(self) -> np.ndarray:
        """The learner's observation; its mask into ``_mask`` (all ones once the episode is over)."""
        obs, mask = self._engine.observe(self.seat)
        self._mask = self._all_ones if self._code >> CODE_PHASE_SHIFT & 7 == OVER else mask
        return obs

    def _info(self) -> dict[str, Any]:
        engine = self._engine
        seat = self.seat
        names, n = self.role_names, self.num_players
        info: dict[str, Any] = {"action_mask": self._mask.copy(), "role": names[(seat - engine.dealer) % n]}
        if self._code >> CODE_PHASE_SHIFT & 7 == OVER:
            info["balance"] = engine.scores()[seat]
            info["hands"] = engine.hand_number
            info["first_role"] = names[(seat - engine.first_dealer) % n]
            info["opponents"] = [self.opponent_names[s] for s in sorted(self.opponent_names)]
        return info


# ---------------------------------------------------------------------------- vector env


class ActionMaskVecEnv(VecEnvWrapper):
    """Caches each sub-env's mask (``info["action_mask"]``) so that
    ``env_method("action_masks")`` needs no call into the sub-envs."""

    def __init__(self, venv: VecEnv) -> None:
        super().__init__(venv)
        self._masks = np.ones((venv.num_envs, int(venv.action_space.n)), dtype=np.int8)

    def reset(self):
        obs = self.venv.reset()
        for i, info in enumerate(self.venv.reset_infos):
            self._masks[i] = info["action_mask"]
        return obs

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        reset_infos = self.venv.reset_infos
        for i, done in enumerate(dones):
            self._masks[i] = (reset_infos[i] if done else infos[i])["action_mask"]
        return obs, rewards, dones, infos

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs):
        if method_name == "action_masks" and not method_args and not method_kwargs:
            rows = range(self.num_envs) if indices is None else ([indices] if isinstance(indices, int) else indices)
            return [self._masks[i] for i in rows]
        return self.venv.env_method(method_name, *method_args, indices=indices, **method_kwargs)

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or self.venv.has_attr(attr_name)


def make_vec_env(
    env_kwargs: dict[str, Any],
    n_envs: int,
    kind: str = "dummy",
    seed: int | None = None,
    pool_kwargs: dict[str, Any] | None = None,
) -> VecEnv:
    """``n_envs`` copies of :class:`SingleSeatEnv` in a Dummy/SubprocVecEnv,
    with the mask cache and episode statistics (VecMonitor). Each env gets its
    own :class:`OpponentPool` built from ``pool_kwargs``."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    def factory() -> SingleSeatEnv:
        return SingleSeatEnv(**env_kwargs, opponents=OpponentPool(**(pool_kwargs or {})))

    def subprocess_factory() -> SingleSeatEnv:  # runs in the worker process: one torch thread there, and
        import signal  # Ctrl-C is the trainer's to handle (a checkpoint, then close)

        signal.signal(signal.SIGINT, signal.SIG_IGN)
        limit_threads()
        return factory()

    if kind == "dummy":
        venv: VecEnv = DummyVecEnv([factory] * n_envs)
    elif kind == "subproc":
        venv = SubprocVecEnv([subprocess_factory] * n_envs, start_method="forkserver")
    else:
        raise ValueError(f"vec_env must be 'dummy' or 'subproc', got {kind!r}")
    if seed is not None:
        venv.seed(seed)
    return VecMonitor(ActionMaskVecEnv(venv), info_keywords=("first_role",))


if GYM_ID not in gym.registry:  # once, also when this module is imported again
    gym.register(id=GYM_ID, entry_point=f"{__name__}:SingleSeatEnv")
