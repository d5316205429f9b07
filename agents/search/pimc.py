"""Perfect-information Monte Carlo (PIMC) search.

At each decision the agent samples deals consistent with everything its
seat knows (:mod:`agents.search.world_sampler`), and in each sampled deal tries
every legal action, playing the rest of the hand out with the heuristic
player (:mod:`agents.players.heuristic`) for every seat. The heuristic in the
rollouts sees only what its seat would know in that deal (own hand plus
public play), so the rollouts are not clairvoyant; only the deal is.
The value of an action is the acting seat's balance in the hand (tricks
minus quota; in a misère hand maximum minus tricks, docs/rules.md 10.3), as
the engine scores it, averaged over the sampled deals. Within one hand the
quota is fixed, so in the play this ranks as the tricks taken do; at the
dealer's call (``calls``) it compares hands scored differently, a misère
against a suit or no-trump hand. The best average wins;
ties go to the heuristic's own choice. Every action is scored on the same
deals (common random numbers), so the comparison is sharp even with few
samples.

Budget: ``samples`` deals per decision (default 20; 16 with policy rollouts, below), or ``seconds`` per
decision (sampling until the time is up, at least one deal; not
reproducible across machines). Decisions with one legal action cost
nothing.

Phases: the play of the tricks is always searched. Naming trump and the
discards are searched only with ``bid=1``: each trump (or discard) is tried
and the hand played out, discards and play by the heuristic; a trump or a
discard made before the hand's exchange is over (docs/rules.md 10.1) defers
to the heuristic, as the exchange and the quota assignment do. It is off by
default because it measured worse than the heuristic's own trump and
discard rules (pimc:samples=16 with bid=1 against two copies with bid=0,
50 deals: -0.25 [-0.47, 0.00] balance per hand; the rollouts do not value
voids and a long trump suit the way real play does). Under ``calls`` the
searched call is level with the heuristic's or a little better (docs/results/search-call.md). With heuristic
rollouts the exchange always defers to the heuristic (its choice there, send cards that fetch the
receiver's best, leaves little to gain); policy rollouts can search it (``exchange=1``, below).

Speed: by default the deals are drawn by :mod:`agents.search.world_kernel` and
every deal x action is played out in one compiled batch
(:meth:`agents.search.rollout_kernel.RolloutBatch.run_each`). Both draw the same
numbers and play the same cards as the Python path (:func:`sample_world`,
:func:`agents.search.rollout.rollout`), so a seed gives the same values and
actions either way; ``kernel=0`` forces the Python path, which is also used
when numba is missing or the kernel does not know an option of the rules.

Policy rollouts (``rollout=policy``, spec ``pimc:rollout=policy``): the rollouts are played by the shipped
policy of the rule set (:func:`agents.players.trained.trained_policy`, the agent ``trained``) for every seat instead of
the heuristic: each seat's move is the policy's most probable legal action on that seat's own observation of the
rollout (greedy, as ``trained`` plays; a forced move without asking). This is policy improvement by rollouts:
one step of search over the policy. Everything else is as above: the same deals (the same draws of the seeded
generator), every action tried on every deal, the acting seat's mean balance in the hand, the best wins, ties
to the policy's own choice. The phases pimc does not search (the exchange, the auction, the quota assignment,
the face-up card, and trump and the discards without ``bid=1``) are decided by the policy directly, so the
agent plays as ``trained`` except where it searches. Budget: 16 deals per decision unless ``samples`` or
``seconds`` says otherwise (a time budget plays :data:`POLICY_CHUNK` deals per batch). Speed: every deal x
action of a decision is one batch of rows of the compiled engine, moved in lockstep, with one forward pass of
the network (torch) over every row that waits on a choice per step (:mod:`agents.search.policy_rollout`);
``kernel=0``, or rules the compiled engine does not run, play the same moves one position at a time in Python.
Rule sets without a shipped policy are refused (:meth:`PimcAgent.check_rules`, one line naming the rule sets
that have one). Figures: docs/results/policy-rollouts.md.

With policy rollouts two more parameters: ``policy=PATH`` plays a given policy file instead of the shipped one
(the rollouts and the phases not searched; the file must play the rules), e.g. the policy an expert-iteration
round fitted (``configs/exit_v3.yaml``); ``exchange=1`` searches the cards sent in the exchange too: each legal
card, over the sampled deals, played out to the hand's end by the policy (the rest of the exchange included),
valued by the acting seat's balance in the hand. The position is set up from the view alone
(:func:`agents.search.policy_rollout.exchange_position`: the rounds already done, the seat's cards chosen so far),
for rule sets whose hand opens with the exchange; where it cannot be (another order of the stages, or an order of
senders that depends on the previous hand, ``first_up_exchanges_first``), the policy's own move is played.

Counting the game (``game=W``, with either rollout player): a hand is also a step of a game that is won by the
first seat to take 12 tricks in a hand (docs/rules.md; whatever end conditions the rules set). The balance alone
values a 12th trick like any other, and an opponent's 12th like any other lost trick. With ``game`` the value of
a played-out deal is the acting seat's balance plus ``W`` times its result reward where the hand's end wins the
game under the rules (:func:`sm_env.core.episode.result_rewards`: +1 for a win, -0.5 when another seat wins,
shared wins shared), as the engine decides it. The term counts once some seat has taken ``game_from`` tricks
in the hand (default :data:`DEFAULT_GAME_FROM`) and can still reach the rules' ``win_tricks``; before that the
game is rarely decided in a few sampled deals and the term is mostly noise. ``game_only=1`` searches only those
decisions and plays the default move (the policy's, or the heuristic's) everywhere else: against two
heuristics in whole games that wins more often than searching every decision (docs/results/search-game.md).

Deals in proportion to a belief (``belief=PATH``, with ``pool`` and ``alpha``): the deals above are uniform among
those consistent with what the seat knows for certain. A belief network (:mod:`agents.search.belief`, learnt by
``sergeant-major improve belief`` from the policy's self-play) reads the seat's observation and gives for every
card a distribution over where it lies; ``pool`` times the deals needed are drawn as before, each weighted by
``exp(alpha x`` the sum over the unplaced cards of the log-probability of where it puts them``)``, and systematic
resampling keeps the number needed (the draws from the agent's seeded generator). With ``prior=P`` (policy
rollouts) each searched value gains ``P`` times the policy's log-probability of the move: the policy's preference
decides between moves the search values alike, where the search's values are noise. Figures:
docs/results/belief-prior.md.

Spec strings (see :func:`agents.make_agent`): ``pimc``, ``pimc:samples=40``,
``pimc:seconds=0.5``, ``pimc:samples=16,bid=1``, ``pimc:kernel=0``, ``pimc:rollout=policy``,
``pimc:rollout=policy,samples=32``, ``pimc:rollout=policy,bid=1,exchange=1`` (every decision type searched),
``pimc:rollout=policy,policy=runs/exit_v3/policy_r0.pt``, ``pimc:rollout=policy,game=8,game_only=1``,
``pimc:rollout=policy,belief=agents/policies/standard_belief_v1.pt,prior=1,samples=24`` (the strongest search here:
+0.27 a hand over ``trained``, docs/results/belief-24-deals.md; the spec ``search`` stands for it).
"""

from __future__ import annotations

import random
import time
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from agents.players.base import Agent
from agents.players.heuristic import heuristic_action
from agents.players.unseen import deck_of
from sm_env.compiled.readiness import first_compile
from sm_env.core.cards import from_mask, to_mask
from sm_env.core.game import DISCARD, EXCHANGE, PLAY, TRUMP, Game
from sm_env.core.knowledge import PlayerView
from sm_env.core.rules import RuleSet
from sm_env.observation import encode

from .policy_rollout import ExchangeSetupError, exchange_position, exchange_searchable, with_public_history
from .rollout import compiled_rollouts, played_out_value, rollout
from .world_sampler import Constraints, constraints_of, sample_world, world_from_view

if TYPE_CHECKING:
    from .world_kernel import TwisterStream

DEFAULT_SAMPLES = {"heuristic": 20, "policy": 16}
"""Deals per decision unless ``samples`` or ``seconds`` is given, by rollout player (the spec's ``rollout``)."""
POLICY_CHUNK = 4
"""Deals played out per batch under a time budget with policy rollouts."""
DEFAULT_POOL = 8
"""With ``belief``: deals drawn per deal kept (the belief weights them, systematic resampling keeps ``samples``)."""
DEFAULT_ALPHA = 0.5
"""With ``belief``: the power of the belief's weights (below 1: tempered, the cards are not independent)."""
MAX_POOL = 64
MAX_DRAWN = 20_000
"""With ``belief``: the most deals drawn per decision (``samples x pool``; about 200 MB of scoring arrays)."""
DEFAULT_GAME_FROM = 4
"""``game_from``'s default: the game's result counts once some seat has taken 4 tricks in the hand."""
MAX_GAME_WEIGHT = 1000.0
"""The largest ``game`` weight (a game's result worth 1000 tricks: only the game counts)."""


class PimcAgent(Agent):
    """PIMC search with heuristic or policy rollouts; see the module docstring."""

    name = "pimc"

    def __init__(
        self,
        seed: int | None = None,
        samples: int | None = None,
        seconds: float | None = None,
        bid: bool = False,
        kernel: bool = True,
        rollout: str = "heuristic",
        exchange: bool = False,
        policy: str | None = None,
        game: float = 0.0,
        game_from: int = DEFAULT_GAME_FROM,
        game_only: bool = False,
        belief: str | None = None,
        pool: int = DEFAULT_POOL,
        alpha: float = DEFAULT_ALPHA,
        prior: float = 0.0,
    ) -> None:
        super().__init__(seed)
        if rollout not in DEFAULT_SAMPLES:
            raise ValueError(f"pimc: rollout must be one of {', '.join(DEFAULT_SAMPLES)}, got {rollout!r}")
        if rollout != "policy" and (exchange or policy):
            given = "exchange=1" if exchange else f"policy={policy}"
            raise ValueError(f"pimc: {given} needs rollout=policy (the heuristic's rollouts do not search it)")
        if samples is None:
            samples = DEFAULT_SAMPLES[rollout]
        if samples < 1:
            raise ValueError(f"pimc: samples must be >= 1, got {samples}")
        if seconds is not None and seconds <= 0:
            raise ValueError(f"pimc: seconds must be > 0, got {seconds}")
        if not 0 <= game <= MAX_GAME_WEIGHT:  # also refuses nan
            raise ValueError(f"pimc: game must be a number in [0, {MAX_GAME_WEIGHT:g}], got {game}")
        if game_from < 0:
            raise ValueError(f"pimc: game_from must be >= 0, got {game_from}")
        if game_only and not game:
            raise ValueError("pimc: game_only=1 needs game > 0 (it searches only where the game counts)")
        if prior and rollout != "policy":
            raise ValueError("pimc: prior needs rollout=policy (it adds the policy's log-probabilities)")
        if not 1 <= pool <= MAX_POOL:
            raise ValueError(f"pimc: pool must be a whole number in [1, {MAX_POOL}], got {pool}")
        if belief and samples * pool > MAX_DRAWN:
            raise ValueError(
                f"pimc: with belief, samples x pool (deals drawn per decision) must be at most {MAX_DRAWN}, "
                f"got {samples} x {pool}"
            )
        if not 0 <= alpha <= 10 or not 0 <= prior <= 10:  # also refuses nan
            raise ValueError(f"pimc: alpha and prior must be numbers in [0, 10], got {alpha} and {prior}")
        self.samples = samples
        self.seconds = seconds
        self.bid = bid
        self.kernel = kernel
        self.rollout = rollout
        self.exchange = exchange
        self.game = float(game)
        self.game_from = game_from
        self.game_only = game_only
        self.decisions = 0
        self.worlds = 0
        self.needs_observation = rollout == "policy"  # the policy decides the phases not searched
        self._policy: Any = None  # policy rollouts: the policy's agent (TrainedAgent: that of the rules played)
        self._rules: Any = None
        self._rollouts: dict[tuple[str, RuleSet], Any] = {}  # (policy file, rules) -> the rollouts that play it
        self.policy_file = policy
        self._belief: Any = None  # the belief network (agents.search.belief.BeliefNet)
        self.belief_file, self.pool, self.alpha, self.prior = belief, int(pool), float(alpha), float(prior)
        if belief:
            from .belief import load_belief

            self._belief = load_belief(belief)  # a PolicyLoadError (a ValueError) names a bad file
        if policy:
            from agents.players.ppo_agent import PPOAgent

            self._policy = PPOAgent(policy, seed)  # a PolicyLoadError (a ValueError) names a bad file
        elif rollout == "policy":
            from agents.players.trained import TrainedAgent

            self._policy = TrainedAgent(seed)  # the standard rules' policy until check_rules
        defaults = (DEFAULT_SAMPLES[rollout], None, False, True, False, None, 0.0, DEFAULT_GAME_FROM, False, None, 0.0)
        given = (samples, seconds, bid, kernel, exchange, policy, self.game, game_from, game_only, belief, self.prior)
        if given == defaults:
            self.name = "pimc" if rollout == "heuristic" else f"pimc:rollout={rollout}"
        else:
            self.name = self._label()

    def _label(self) -> str:
        parts = [f"seconds={self.seconds:g}" if self.seconds is not None else f"samples={self.samples}"]
        if self.bid:
            parts.append("bid=1")
        if self.exchange:
            parts.append("exchange=1")
        if self.policy_file:
            parts.append(f"policy={self.policy_file}")
        if self.game:
            parts.append(f"game={self.game:g}")
        if self.game_from != DEFAULT_GAME_FROM:
            parts.append(f"game_from={self.game_from}")
        if self.game_only:
            parts.append("game_only=1")
        if self.belief_file:
            parts.append(f"belief={self.belief_file}")
            if (self.pool, self.alpha) != (DEFAULT_POOL, DEFAULT_ALPHA):
                parts.append(f"pool={self.pool},alpha={self.alpha:g}")
        if self.prior:
            parts.append(f"prior={self.prior:g}")
        if not self.kernel:
            parts.append("kernel=0")
        if self.rollout != "heuristic":
            parts.insert(0, f"rollout={self.rollout}")
        return "pimc:" + ",".join(parts)

    def check_rules(self, rules: RuleSet) -> None:
        """With policy rollouts, take the shipped policy of ``rules`` (:func:`agents.players.trained.trained_policy`); a
        ValueError in one line naming the rule sets that have one if none plays them (with ``policy``: that file,
        a ValueError if it cannot play ``rules``). Heuristic rollouts play any rule set. With ``belief``, a ValueError
        if the belief network does not read these rules' observation."""
        if self._belief is not None:
            self._belief.check_rules(rules)
        if self._policy is not None:
            self._policy.check_rules(rules)
            self._rules = rules

    def act(self, view: PlayerView, observation: dict[str, Any] | None = None) -> int:
        legal = from_mask(view.legal)
        if not legal:
            raise ValueError(f"pimc: no legal action for seat {view.seat} (is it to act?)")
        if len(legal) == 1:
            return legal[0]
        if isinstance(observation, dict):
            observation = observation.get("observation")
        default = self.default_action(view, observation)
        if not searched_phase(view, self.bid, self.exchange) or (self.game_only and not self.game_weight(view)):
            return default
        try:
            values = self.scored(view, legal, observation)
        except ExchangeSetupError:  # an exchange whose plan the view cannot rebuild (exchange_position)
            return default
        return max(legal, key=lambda a: (values[a], a == default, -a))

    def scored(self, view: PlayerView, legal: list[int], observation: Any = None) -> dict[int, float]:
        """What :meth:`act` maximises: :meth:`evaluate`'s values, with ``prior`` plus that times the policy's
        log-probability of each action (``observation``: the view's encoded vector, if the caller has it)."""
        values = self.evaluate(view, legal)
        return self._with_prior(values, view, observation) if self.prior else values

    def _with_prior(self, values: dict[int, float], view: PlayerView, observation: Any) -> dict[int, float]:
        """``values`` plus ``prior`` times the policy's log-probability of each action (``prior``: tricks per nat)."""
        import numpy as np

        logits = self._policy.policy.masked_logits(encode(view) if observation is None else observation, view.legal)
        top = logits.max()
        log_probs = logits - top - np.log(np.exp(logits - top).sum())
        return {a: v + self.prior * float(log_probs[a]) for a, v in values.items()}

    def default_action(self, view: PlayerView, observation: Any = None) -> int:
        """The move played where the agent does not search, and preferred among equal values: the heuristic's,
        or with policy rollouts the policy's most probable legal move (``observation``: the view's encoded
        observation vector, if the caller has it)."""
        if self._policy is None:
            return heuristic_action(view)
        if view.rules is not self._rules:
            self.check_rules(view.rules)
        return self._policy.choose(encode(view) if observation is None else observation, view.legal)

    def evaluate(self, view: PlayerView, legal: list[int] | None = None) -> dict[int, float]:
        """The per-action value table: mean balance of the acting seat in the hand after each legal action
        (``legal``, default all), over the sampled deals; with ``game`` (from ``game_from`` tricks on, see
        :meth:`game_weight`) plus ``game`` times the mean result reward where the hand's end wins the game.
        ``act`` plays its best entry."""
        if legal is None:
            legal = from_mask(view.legal)
        with first_compile("search") if self.kernel else nullcontext():
            stream = _compiled_stream(self.rng) if self.kernel else None
            try:
                totals, n = self._search(view, legal, stream)
            finally:
                if stream is not None:
                    stream.close()  # the agent's generator continues where the compiled copy stopped
        self.decisions += 1
        self.worlds += n
        return {a: totals[i] / n for i, a in enumerate(legal)}

    def game_weight(self, view: PlayerView) -> float:
        """The weight of the game's result in the values of ``view``'s decision: ``game`` once some seat has
        taken ``game_from`` tricks in the hand and (where the rules end the game at ``win_tricks``) can still
        reach ``win_tricks``, else 0 (the balance alone)."""
        if not self.game:
            return 0.0
        target, left = view.rules.win_tricks, view.rules.tricks_per_hand - view.tricks_played
        live = any(won >= self.game_from and (target is None or won + left >= target) for won in view.tricks_won)
        return self.game if live else 0.0

    def _search(self, view: PlayerView, legal: list[int], stream: TwisterStream | None) -> tuple[list[float], int]:
        """The acting seat's values of the hand after each action (:meth:`evaluate`), summed over the deals, and
        the number of deals.

        Deals are drawn by ``stream`` when given (compiled, the same draws), else by ``sample_world``; rollouts
        run compiled when the kernel plays these rules, else in Python (the same cards)."""
        me = view.seat
        deck = deck_of(view.rules)
        cons = constraints_of(view)
        batch_of = compiled_rollouts(view.rules) if self.kernel else None
        weight = self.game_weight(view)
        totals: list[float] = [0] * len(legal)
        deadline = None if self.seconds is None else time.perf_counter() + self.seconds
        n = 0
        while True:
            # a fixed budget samples every deal, then plays them out in one batch; a time budget one deal at a time
            # (policy rollouts: POLICY_CHUNK deals, a batch worth a network call)
            count = self.samples if deadline is None else (POLICY_CHUNK if self._policy is not None else 1)
            if self._belief is not None:
                positions = self._believed_positions(view, cons, stream, count)
            else:
                positions = [self._position(view, cons, stream) for _ in range(count)]
            if self._policy is not None:  # policy rollouts: every deal x every action in one lockstep batch
                games = [game if view.phase == EXCHANGE else with_public_history(game, view) for game, _ in positions]
                won = self._policy_rollouts(view.rules).values(games, legal, me, weight).sum(axis=0)
                totals = [t + w for t, w in zip(totals, won.tolist(), strict=True)]
            elif batch_of is not None:  # compiled: every deal x every action in one batch
                batch = batch_of(view.rules, count)
                for row, (game, dealer_out) in enumerate(positions):
                    batch.load(row, game, deck, dealer_out)
                won = batch.values_each(legal, me, weight).sum(axis=0)  # balances in the hand (and the game's result)
                totals = [t + w for t, w in zip(totals, won.tolist(), strict=True)]
            else:
                extra = view.phase == DISCARD
                for base, dealer_out in positions:
                    for i, action in enumerate(legal):
                        game = base.clone()
                        game.apply(action)
                        rollout(game, deck, dealer_out | (1 << action if extra else 0))
                        totals[i] += played_out_value(game, me, weight)  # the rollout ends the hand, which scores it
            n += count
            if deadline is None or time.perf_counter() >= deadline:
                break
        return totals, n

    def _policy_rollouts(self, rules: RuleSet) -> Any:
        """The rollouts of the policy of ``rules`` (:mod:`agents.search.policy_rollout`): compiled when the
        kernel is on and runs the rules, else the Python reference (the same moves)."""
        agent = self._policy
        if self._rules is not rules:
            self.check_rules(rules)
        key = (agent.path, rules)
        if key not in self._rollouts:
            from .policy_rollout import BatchPolicy, PolicyRollouts, PythonPolicyRollouts

            if self.kernel and compiled_rollouts(rules) is not None:
                self._rollouts[key] = PolicyRollouts(rules, BatchPolicy(agent.policy))
            else:
                self._rollouts[key] = PythonPolicyRollouts(agent.choose)
        return self._rollouts[key]

    def _believed_positions(
        self, view: PlayerView, cons: Constraints, stream: TwisterStream | None, count: int
    ) -> list[tuple[Game, int]]:
        """``count`` deals drawn in proportion to the belief network (:func:`agents.search.belief.resample`)."""
        from .belief import resample

        worlds = [
            sample_world(view, self.rng, cons) if stream is None else stream.sample_world(view.hand, cons)
            for _ in range(count * self.pool)
        ]
        belief = self._belief
        scores = belief.scores(belief.log_probs(encode(view)), view.seat, cons.unknown, worlds)
        draw = self.rng.randrange if stream is None else stream.randrange
        return [self._setup(view, worlds[i]) for i in resample(scores, self.alpha, count, draw)]

    def _setup(self, view: PlayerView, world: Any) -> tuple[Game, int]:
        """``world`` as a game at ``view``'s decision, and the cards its dealer knows are out (its discards). An
        exchange decision (policy rollouts with ``exchange``) is set up by
        :func:`~agents.search.policy_rollout.exchange_position`."""
        dealer_out = to_mask(view.discards or ()) if view.dealer == view.seat else world.out
        if view.phase == EXCHANGE:
            return exchange_position(view, world), dealer_out
        return world_from_view(view, world), dealer_out

    def _position(self, view: PlayerView, cons: Constraints, stream: TwisterStream | None) -> tuple[Game, int]:
        """A sampled deal as a game, and the cards its dealer knows are out (:meth:`_setup`)."""
        world = sample_world(view, self.rng, cons) if stream is None else stream.sample_world(view.hand, cons)
        return self._setup(view, world)


def searched_phase(view: PlayerView, bid: bool = True, exchange: bool = False) -> bool:
    """Whether pimc searches the decision of ``view``: the play of the tricks always; naming trump (or the
    call) and the discards with ``bid``, once the hand's exchange is over; the cards sent in the exchange with
    ``exchange`` (policy rollouts), where :func:`~agents.search.policy_rollout.exchange_searchable` says the
    position can be set up; never the auction, the quota assignment or the face-up card (the heuristic, or with
    policy rollouts the policy, decides those)."""
    phase = view.phase
    if phase == EXCHANGE:
        return exchange and exchange_searchable(view)
    return phase == PLAY or (bid and phase in (TRUMP, DISCARD) and not view.exchange_pending)


def _compiled_stream(rng: random.Random) -> TwisterStream | None:
    """The compiled copy of ``rng``'s stream (:func:`agents.search.world_kernel.compiled_stream`), or None when
    numba is missing: :func:`sample_world` then draws the same deals in Python."""
    try:
        from .world_kernel import compiled_stream
    except ImportError:
        return None
    return compiled_stream(rng)
