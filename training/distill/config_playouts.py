"""The configuration of a play-out run (``sergeant-major distill --config configs/real_deal_v8.yaml``, or
``sergeant-major improve``).

Keys (every one optional; ``sergeant-major config --kind playouts`` lists them with their defaults)::

    kind: playouts              # what runs this file
    name: real_deal             # run folder <output_dir>/<name>
    output_dir: runs
    seed: 0                     # the fit's seed
    workers: 2                  # labelling processes (one data file each at a time)
    policy: trained             # plays, is played out, starts the Q-network and is the prior; fresh: a new network
    arch: [512, 256]            # policy: fresh: its hidden layers
    env: {rules: standard}      # the rule set: a preset of 56 actions, three or four players
    student: null               # {init, decisions, epochs, learning_rate}: first copy `policy` into a smaller network
    labels:                     # the data files, in groups of seeds: labels/<seed>.npz
      - {seeds: [21, 22], hands: 18000, types: [exchange, trump, discard], policy: null, roles: null}
    epochs: 4                   # the fit
    learning_rate: 3.0e-4
    device: auto                # the fit's device: auto (CUDA where present, else the CPU), cpu, cuda, cuda:N, mps
    q_init: null
    game_weight: 0.0
    weight: 1.0                 # the combination
    rounds: 1                   # policy iteration: each round plays and plays out with the round before's policy
    window: 1                   # a round's fit: its label files and those of the rounds before, this many rounds
    max_hours: 0                # a time budget of training, checked between rounds (0: none)
    tensorboard: true           # TensorBoard scalars in RUN/tb: each round's fit and evaluation
    eval: {every: 0, final_deals: 0, ...}   # every > 0: evaluate each round's policy (eval.jsonl, the curve)

The from-scratch recipe (``configs/scratch_playouts.yaml``) is ``policy: fresh``, ``weight: 0`` and several
rounds: round 0 plays and plays out with a freshly initialised network, fits the Q-network, and the Q-network's
greedy policy plays round 1, and so on (approximate policy iteration, each move valued in the real deal).

Errors are :class:`training.common.yaml_config.ConfigError` naming the key, the value and what is allowed, and
``--set KEY=VALUE`` overrides work as for every run config. A file of an older release (a run folder's
``config.yaml``) with its rule set at ``rules`` is read as ``env.rules``
(:func:`training.common.run_config.migrate_rules`). Reading a config imports no torch.
"""

from __future__ import annotations

from functools import partial

from pydantic import field_validator, model_validator

from sm_env.core.game import PLAY, role_names
from sm_env.core.rules import RulesError, RuleSet
from training.common.budget import HOURS_HELP, MAX_HOURS
from training.common.device import DEVICE_HELP
from training.common.run_config import RunSection, migrate_rules
from training.common.yaml_config import Device, Flag, Number, Section, Text, Whole, load, setting
from training.common.yaml_config import validate as validate_config
from training.evaluation.config import EvalConfig, check_eval_rules

LABELLED = (0, 1, 2)  # exchange, trump, discard (sm_env.core.game phase numbers): label's default
TYPES = {"exchange": 0, "trump": 1, "discard": 2, "play": PLAY}  # the decision types that can be labelled
FIT_BATCH = 512  # decisions per step of the fit
MAX_HANDS = 50_000  # hands per data file: its rows are held in memory (about 40 decisions, 80 kB a hand of play)
MAX_DECISIONS = 3_000_000  # distil: decisions held in memory (1.6 kB each)
MAX_EPOCHS = 100  # passes of a fit, a merge or a copy over their data
STANDARD = RuleSet.from_any("standard")
FRESH = "fresh"  # policy: a freshly initialised network (policies/fresh.pt), the from-scratch recipe
MAX_WIDTH = 4096  # units of a hidden layer of a fresh network
ROUND_SEED = 1_000_000  # round r labels seed s with the games of seed s + r x ROUND_SEED


class RunEval(
    EvalConfig,
    defaults={"every": 0, "final_deals": 0},
    descriptions={"every": "above 0: every round's policy is evaluated once, on `deals` deals (0: only at the end)"},
):
    """The play-out run's evaluations: ``every`` above 0 evaluates every round's policy on ``deals`` deals
    (eval.jsonl: the learning curve); ``final_deals`` the final policy at the end."""


def labelled_rules(rules: RuleSet | str | dict) -> RuleSet:
    """The rule set of ``rules``, refused in one line (a RulesError) unless every decision it has can be
    labelled: the rule sets of 56 actions, three or four players (the Q-network adds its values to every
    decision, and the bids, calls, quota assignments and kitty takes of the 74-action rule sets are not among
    :data:`TYPES`)."""
    ruleset = RuleSet.from_any(rules)
    if ruleset.num_actions != STANDARD.num_actions:
        raise RulesError(
            f"the rule set {ruleset.name!r} has {ruleset.num_actions} actions (bids, calls, "
            f"assigned quotas or a kitty taken); only rule sets of {STANDARD.num_actions} actions can be labelled"
        )
    return ruleset


def role_numbers(ruleset: RuleSet, roles: list[str] | tuple[str, ...] | None) -> list[int] | None:
    """The role numbers (0 dealer, 1 eldest, ...) of the role names ``roles`` (None: every role); a ValueError
    names the rule set's roles when one is unknown or none is given."""
    if roles is None:
        return None
    names = role_names(ruleset)
    if not roles or not set(roles) <= set(names):
        raise ValueError(f"roles must be some of {', '.join(names)}, got {list(roles)}")
    return [names.index(role) for role in roles]


class LabelGroup(Section):
    """Label files made alike: one file ``labels/<seed>.npz`` per seed."""

    seeds: list[Whole] = setting(lambda: [0], "one data file per seed", min_length=1, max_length=1000)
    hands: Whole = setting(6000, "hands played per file", ge=1, le=MAX_HANDS)
    types: list[Text] = setting(lambda: ["play"], f"decision types labelled, of {', '.join(TYPES)}")
    policy: Text | None = setting(None, "the policy that plays and is played out (null: the run's)")
    roles: list[Text] | None = setting(None, "label only these roles' decisions, e.g. [middle] (null: every role)")

    @model_validator(mode="after")
    def _known_types(self) -> LabelGroup:
        if not self.types or not set(self.types) <= set(TYPES):
            raise ValueError(f"types must be some of {', '.join(TYPES)}, got {self.types}")
        return self


class Student(Section):
    """The optional first stage of a run: ``distil`` the run's policy into a smaller network, which then plays."""

    init: Text = setting("agents/policies/standard_v4.pt", "the policy whose network (shape, weights) starts the copy")
    decisions: Whole = setting(2_000_000, "decisions of the policy's self-play", ge=FIT_BATCH * 10, le=MAX_DECISIONS)
    epochs: Whole = setting(4, "passes over them", ge=1, le=MAX_EPOCHS)
    learning_rate: Number = setting(1e-4, "Adam's rate, decaying linearly to 0", gt=0)


class PlayoutsEnv(Section):
    """The game of a play-out run."""

    rules: Text = setting("standard", "the rule preset played (one of 56 actions, three or four players)")

    @field_validator("rules")
    @classmethod
    def _labelled_rules(cls, rules: str) -> str:
        labelled_rules(rules)  # a RulesError (a ValueError) says what is wrong and what is allowed
        return rules


class RunConfig(
    RunSection,
    defaults={"kind": "playouts", "name": "real_deal"},
    descriptions={"seed": "the fit's seed (and a fresh policy's: policy: fresh)"},
):
    """The stages of one run (``sergeant-major distill --config``, or ``improve``): (copy the policy into a smaller
    network,) label the groups, fit the Q-network, combine it with the policy (or its copy)."""

    workers: Whole = setting(2, "labelling processes (one data file each at a time)", ge=1, le=64)
    policy: Text = setting(
        "trained",
        "the policy that plays, is played out, starts the Q-network and is the prior; fresh: a freshly initialised "
        "network of `arch` (the from-scratch recipe)",
    )
    arch: list[Whole] = setting(lambda: [512, 256], "policy: fresh: the hidden layers", min_length=1, max_length=4)
    env: PlayoutsEnv = setting(PlayoutsEnv, "the game (its rule set: env.rules, as in every run config)")
    student: Student | None = setting(
        None, "first copy `policy` into a smaller network (student.pt), which then plays in its place (null: no copy)"
    )
    labels: list[LabelGroup] = setting(lambda: [LabelGroup()], "the data files: groups of seeds")
    epochs: Whole = setting(4, "the fit's passes over the data", ge=1, le=MAX_EPOCHS)
    learning_rate: Number = setting(3e-4, "the fit's Adam rate, decaying linearly to 0", gt=0)
    device: Device = setting(
        "auto",
        DEVICE_HELP + ": the fit's and the student's copy's (the labelling, its play-outs and the "
        "self-play run on the CPU); not part of what a fit is kept for: a run goes on on any device",
    )
    q_init: Text | None = setting(
        None, "the policy whose hidden layers start the Q-network (null: the one that plays; its size sets the cost)"
    )
    game_weight: Number = setting(
        0.0, "the fit: tricks per unit of result reward (a game won +1, lost -0.5 with three players)", ge=0, le=100
    )
    weight: Number = setting(
        1.0, "combine: tricks per unit of the policy's logits (0: the Q-network alone)", ge=0, le=1000
    )
    rounds: Whole = setting(
        1, "policy iteration: round r+1 plays and is played out by round r's policy (above 1: weight 0)", ge=1, le=100
    )
    window: Whole = setting(
        1, "a round's fit: its label files and those of the rounds before it, this many rounds in all", ge=1, le=100
    )
    max_hours: Number = setting(
        0.0,
        HOURS_HELP + "; checked between rounds: a run that spends it ends with the last finished round's policy",
        ge=0,
        le=MAX_HOURS,
    )
    tensorboard: Flag = setting(
        True,
        "TensorBoard scalars in RUN/tb (tensorboard --logdir RUN/tb): each round's fit (its held-out gains) and "
        "evaluation, at the decisions labelled so far",
    )
    eval: RunEval = setting(RunEval, "every > 0: evaluate each round's policy (eval.jsonl); final_deals: at the end")

    @model_validator(mode="after")
    def _rounds(self) -> RunConfig:
        if self.rounds > 1 and self.weight != 0:
            raise ValueError(
                f"rounds above 1 need weight: 0 (each round's policy is its Q-network; a policy combined with the "
                f"one before grows wider every round), got weight {self.weight:g}"
            )
        if self.rounds > 1 and any(group.policy is not None for group in self.labels):
            raise ValueError("rounds above 1: every label group plays the round's policy (labels[].policy: null)")
        if self.policy == FRESH and self.student is not None:
            raise ValueError("policy: fresh has nothing to copy into a student (student: null)")
        if not all(1 <= width <= MAX_WIDTH for width in self.arch):
            raise ValueError(f"arch: every hidden layer has 1..{MAX_WIDTH} units, got {self.arch}")
        check_eval_rules(self.eval, RuleSet.from_any(self.env.rules), "the play-out config")
        return self

    @model_validator(mode="after")
    def _known_roles(self) -> RunConfig:
        seen: set[int] = set()
        for group in self.labels:
            role_numbers(labelled_rules(self.env.rules), group.roles)  # checked before any labelling
            for seed in group.seeds:
                if seed in seen:
                    raise ValueError(f"label seed {seed} is listed twice (one data file per seed)")
                seen.add(seed)
        return self


def load_run_config(path: str | None, overrides: list[str] | None = None) -> RunConfig:
    """Read, override (``KEY=VALUE``) and validate a run config; a ConfigError names the key at fault. A file of an
    older release with its rule set at ``rules`` is read as ``env.rules`` (one line on stderr)."""
    return load(
        lambda data, source: validate_config(RunConfig, data, source),
        path,
        overrides,
        migrate=partial(migrate_rules, kind="playouts"),
    )
