"""The training configuration: a typed schema (pydantic v2) loaded from YAML.

Sections: ``name``, ``output_dir``, ``seed`` and ``env`` (EnvConfig), ``opponents`` (OpponentsConfig),
``pretrain`` (PretrainConfig), ``ppo`` (PPOConfig), ``train`` (TrainConfig), ``eval`` (EvalConfig); every key is
optional, ``sergeant-major config`` prints the defaults and each field's ``description`` (:func:`describe`).

:func:`load_config` raises :class:`ConfigError` naming the source (the file or the ``--set`` override), the dotted
key, the value and what is allowed. ``--set ppo.learning_rate=1e-4`` values are read as YAML
(:func:`apply_overrides`). ``3e-4`` (text in YAML 1.1) is a number, ``1e6`` a whole number; booleans are only
``true`` or ``false``, never numbers.
"""

from __future__ import annotations

import copy
import difflib
import os
from collections.abc import Callable
from typing import Annotated, Any, Literal, get_args

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    WrapValidator,
    model_validator,
)

from sm_env.atomic import atomic_path
from sm_env.episode import EPISODES, REWARDS, check_episode
from sm_env.game import ROLE_NAMES as ROLES


class ConfigError(ValueError):
    """A config file or override that is not valid; the message names the key.

    ``key`` is the dotted key at fault (None when the whole file is) and
    ``detail`` the message without its source prefix.
    """

    def __init__(self, message: str, key: str | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        self.key = key
        self.detail = message if detail is None else detail


def _error(source: str, key: str | None, detail: str) -> ConfigError:
    return ConfigError(f"{source}: {detail}" if source else detail, key, detail)


# ---------------------------------------------------------------------------- field types
# Numbers and flags are pydantic's strict types (a boolean is never a number, a number never a boolean);
# _lax reads the numbers YAML leaves as text. The error formatter (_allowed) words every type error.


def _lax(value: Any) -> Any:
    """A number written as text (YAML 1.1 reads ``3e-4``, ``1e6`` and ``1_000`` as text) as a number, and a
    float without a fraction as an int (a whole number); anything else unchanged, for the strict check."""
    if isinstance(value, str):
        try:
            value = float(value.replace("_", ""))
        except ValueError:
            return value
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _says(message: str) -> WrapValidator:
    """A compound value's one message when it (or an item) has the wrong type; its checks keep theirs."""

    def check(value: Any, handler: Callable[[Any], Any]) -> Any:
        try:
            return handler(value)
        except ValidationError:
            raise ValueError(message) from None

    return WrapValidator(check)


def _check(predicate: Callable[[Any], bool], allowed: str) -> AfterValidator:
    """A check pydantic's own constraints cannot state; ``allowed`` is the message."""

    def check(value: Any) -> Any:
        if value is not None and not predicate(value):
            raise ValueError(allowed)
        return value

    return AfterValidator(check)


def _rules(value: Any) -> str | dict:
    from sm_env.rules import RuleSet

    if not isinstance(value, (str, dict)):
        raise ValueError("expected a rule preset name or a dict of rule options")
    RuleSet.from_any(value)  # raises RulesError (a ValueError) with its own message
    return value


def _seats(value: Any) -> str | list[str]:
    if value == "all":
        return value
    items = [value] if isinstance(value, str) else value
    if not (isinstance(items, list) and items and all(r in ROLES for r in items) and len(set(items)) == len(items)):
        raise ValueError("must be 'all' or a non-empty list of distinct roles from dealer, eldest, middle")
    return value


def _mix(value: Any) -> dict[str, float]:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ValueError("expected a mapping of opponent names to weights")
    if not all(type(_lax(w)) in (int, float) for w in value.values()):
        raise ValueError("expected a number")
    mix = {k: float(_lax(w)) for k, w in value.items()}
    if not mix or min(mix.values()) < 0 or sum(mix.values()) <= 0:
        raise ValueError("must map opponent names to weights >= 0 with a positive sum")
    return mix


Whole = Annotated[StrictInt, BeforeValidator(_lax)]
Number = Annotated[StrictFloat, BeforeValidator(_lax)]  # an int is a number too
Flag = StrictBool  # true or false only: numbers are never read as booleans
Text = StrictStr
Agents = Annotated[list[Text], _says("expected a list of agent names")]
Rules = Annotated[str | dict, BeforeValidator(_rules)]
Mix = Annotated[dict[str, float], BeforeValidator(_mix)]
Ints = _says("expected a list of whole numbers")
Sizes = Annotated[list[Whole], Ints, _check(lambda v: v and min(v) >= 1, "must be a non-empty list of positive sizes")]
Balances = Annotated[
    list[Whole], Ints, _check(lambda v: len(v) == 3 and sum(v) == 0, "must be 3 whole numbers summing to 0")
]


def _doc(default: Any, description: str, **constraints: Any) -> Any:
    """A field with its documentation; a callable default is a factory (a fresh list or dict per config)."""
    if callable(default):
        return Field(default_factory=default, description=description, **constraints)
    return Field(default, description=description, **constraints)


def _section(field: Any) -> type[BaseModel] | None:
    """The section class a field holds, or None for a plain value."""
    kind = field.annotation
    return kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None


class _Section(BaseModel):
    """A config section: unknown keys are errors; a missing or null section is all defaults."""

    model_config = ConfigDict(extra="forbid", validate_default=False)

    @model_validator(mode="before")
    @classmethod
    def _null_is_defaults(cls, data: Any) -> Any:
        return {} if data is None else data

    def to_dict(self) -> dict[str, Any]:
        """Plain values (as YAML writes them)."""
        return self.model_dump()


class EnvConfig(_Section):
    """The learner's game (training/single_agent.py)."""

    rules: Rules = _doc(
        "standard", "rule set: a preset name ('standard', 'woburn', ...) or a dict of docs/rules.md section 9 options"
    )
    episode: Literal[EPISODES] = _doc(
        "hand", "'hand': an episode is one hand (fast, dense reward); 'game': a whole game, hand after hand"
    )
    max_hands: Whole = _doc(100, "game episodes: truncate a game nobody has won after this many hands", gt=0)
    reward: Literal[REWARDS] = _doc(
        "balance",
        "'balance': tricks - quota at the end of every hand; 'result': winning the game (+1 shared by winners, -1 by "
        "losers; needs episode: game)",
    )
    reward_scale: Number = _doc(1.0, "rewards are multiplied by this (balances run about -8..+8)", gt=0)
    dense_reward: Flag = _doc(
        False,
        "reward 'balance' paid sooner: +1 per trick the learner wins when it is won, -quota when the hand ends (the "
        "same total per hand; easier credit assignment)",
    )
    learner_seats: Annotated[str | list[str], BeforeValidator(_seats)] = _doc(
        "all",
        "roles the learner plays in the first hand of an episode: 'all' or a list of 'dealer', 'eldest', 'middle' "
        "(one drawn per episode; one shared policy)",
    )
    exchange_start: Number = _doc(
        0.0,
        "hand episodes: probability that the hand starts with an exchange (random previous balances), so that "
        "exchange decisions are trained",
        ge=0,
        le=1,
    )


class OpponentsConfig(_Section):
    """Who plays the two other seats: baselines and frozen snapshots of the learner."""

    mix: Mix = _doc(
        lambda: {"random": 1.0},
        "weight of each opponent kind: agent names of agents.make_agent ('random', 'heuristic', ...) and 'snapshots' "
        "(a frozen copy of the learner from the pool); each opponent seat draws independently every episode; until "
        "the first snapshot exists its weight goes to the others",
    )
    snapshot_every: Whole = _doc(
        100_000, "learner timesteps between snapshots added to the pool (checked after every segment)", gt=0
    )
    pool_size: Whole = _doc(10, "snapshots kept in the pool (oldest dropped)", gt=0)
    snapshot_deterministic: Flag = _doc(False, "snapshots play their most probable action instead of sampling")


class PretrainConfig(_Section):
    """Optional warm start by imitation: before PPO, the policy learns to copy a
    teacher agent playing the learner's seat (cross-entropy on its actions,
    masked), and the value network learns the teacher's returns."""

    teacher: Text | None = _doc(None, "agent spec to imitate, e.g. 'heuristic' (null: no warm start)")
    decisions: Whole = _doc(200_000, "teacher decisions collected (in the training env, same opponents)", gt=0)
    epochs: Whole = _doc(4, "passes over the collected decisions", gt=0)
    batch_size: Whole = _doc(256, "minibatch size", ge=2)
    learning_rate: Number = _doc(1e-3, "Adam learning rate of the warm start", gt=0)
    value: Flag = _doc(True, "also fit the value network to the teacher's returns")


class PPOConfig(_Section):
    """MaskablePPO (sb3-contrib) hyper-parameters."""

    learning_rate: Number = _doc(3e-4, "Adam learning rate", gt=0)
    lr_schedule: Literal[("constant", "linear")] = _doc(
        "constant", "'linear' decays the learning rate to 0 over train.total_timesteps"
    )
    n_steps: Whole = _doc(256, "steps per env per rollout (rollout size = n_steps * train.n_envs)", gt=0)
    batch_size: Whole = _doc(512, "minibatch size", ge=2)
    n_epochs: Whole = _doc(4, "passes over each rollout", gt=0)
    gamma: Number = _doc(1.0, "discount (episodes are short and end for sure: 1.0 is fine)", gt=0, le=1)
    gae_lambda: Number = _doc(0.95, "GAE lambda", ge=0, le=1)
    clip_range: Number = _doc(0.2, "PPO clipping", gt=0)
    ent_coef: Number = _doc(0.01, "entropy bonus", ge=0)
    vf_coef: Number = _doc(0.5, "value loss weight", ge=0)
    max_grad_norm: Number = _doc(0.5, "gradient clipping", gt=0)
    target_kl: Number | None = _doc(None, "stop an update early beyond this KL (null: never)", gt=0)
    normalize_advantage: Flag = _doc(True, "normalise advantages per minibatch")
    net_arch: Sizes = _doc(lambda: [256, 256], "hidden layer sizes of the policy and of the value network")
    activation: Literal[("tanh", "relu")] = _doc("tanh", "activation of the hidden layers")


class TrainConfig(_Section):
    """Length of the run, vectorisation, checkpoints."""

    total_timesteps: Whole = _doc(200_000, "learner decisions to train for", gt=0)
    n_envs: Whole = _doc(8, "parallel environments", gt=0)
    vec_env: Literal[("dummy", "subproc")] = _doc(
        "dummy", "'dummy': envs in the trainer's process (best on 2 cores); 'subproc': one process each"
    )
    segment_steps: Whole = _doc(
        16_384,
        "learner timesteps per training segment (rounded up to whole rollouts); snapshots, evaluations and "
        "checkpoints happen between segments; envs restart every segment so that --resume continues exactly",
        gt=0,
    )
    checkpoint_every: Whole = _doc(100_000, "timesteps between checkpoints (the last segment always writes one)", gt=0)
    keep_checkpoints: Whole = _doc(3, "numbered checkpoints kept besides checkpoints/latest.zip", ge=0)
    torch_threads: Whole = _doc(1, "torch CPU threads (1 is best with 2 cores and small networks)", gt=0)
    progress_bar: Flag = _doc(True, "show a tqdm progress bar")


class EvalConfig(_Section):
    """Duplicate evaluation of the learner against baselines, per role."""

    every: Whole = _doc(0, "timesteps between evaluations during training (0: only at the end)", ge=0)
    opponents: Agents = _doc(
        lambda: ["heuristic", "random"],
        "baseline agents to evaluate against (the learner plays one seat, the baseline the two others)",
    )
    deals: Whole = _doc(200, "deals per evaluation during training", gt=0)
    final_deals: Whole = _doc(2000, "deals of the final evaluation (0: none)", ge=0)
    mode: Literal[("hand", "game")] = _doc("hand", "evaluate single hands ('hand') or whole games ('game')")
    max_hands: Whole = _doc(30, "game mode: hands per game at most", gt=0)
    start_balances: Balances | None = _doc(
        None,
        "hand mode: balances of an imaginary previous hand (by seat; seat 0 deals), so that every hand opens with "
        "that exchange (null: no exchange)",
    )
    seed: Whole = _doc(20240101, "seed of the evaluation deals (the same deals at every evaluation)")
    workers: Whole = _doc(1, "evaluation worker processes", gt=0)


class Config(_Section):
    """A training run."""

    name: Text = _doc("run", "run name: the run folder is <output_dir>/<name>")
    output_dir: Text = _doc("runs", "folder of run folders (relative to the working directory)")
    seed: Whole = _doc(0, "seed of everything: python random, numpy, torch, environments")
    env: EnvConfig = _doc(EnvConfig, "the learner's game")
    opponents: OpponentsConfig = _doc(OpponentsConfig, "opponent pool")
    pretrain: PretrainConfig = _doc(PretrainConfig, "optional warm start by imitation of a teacher")
    ppo: PPOConfig = _doc(PPOConfig, "MaskablePPO hyper-parameters")
    train: TrainConfig = _doc(TrainConfig, "length, vectorisation, checkpoints")
    eval: EvalConfig = _doc(EvalConfig, "evaluation")


class EvalFileConfig(_Section):
    """An evaluation of a trained policy (configs/eval.yaml):
    ``sergeant-major train --evaluate POLICY --eval-config configs/eval.yaml``."""

    policy: Text | None = _doc(
        None, "policy file (final_model.zip, a checkpoint or a .pt export); --evaluate PATH overrides it"
    )
    rules: Rules = _doc("standard", "rule set of the evaluation games (as env.rules)")
    eval: EvalConfig = _doc(
        EvalConfig,
        "evaluation settings (as the eval section of a training config; final_deals is the number of deals, every is "
        "ignored)",
    )


# ---------------------------------------------------------------------------- validation


_BOUNDS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}
_TYPES = {"bool_type": "true or false", "string_type": "a text", "int_type": "a whole number", "float_type": "a number"}
_TYPES["model_type"] = "a mapping of keys to values"  # a section


def _allowed(err: dict[str, Any], field: Any) -> str:
    """What a field allows, in words, from pydantic's error and the field's own declaration (one formatter
    for every field: choices, types, bounds, and the messages of the checks above)."""
    kind = err["type"]
    if kind == "literal_error":
        return "expected one of " + ", ".join(repr(choice) for choice in get_args(field.annotation))
    if kind in _TYPES:
        return "expected " + _TYPES[kind]
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        bounds = {k: getattr(m, k) for m in field.metadata for k in _BOUNDS if getattr(m, k, None) is not None}
        if len(bounds) == 1:
            ((name, limit),) = bounds.items()
            return f"must be {_BOUNDS[name]} {limit}"
        low = f"({bounds['gt']}" if "gt" in bounds else f"[{bounds['ge']}"
        high = f"{bounds['lt']})" if "lt" in bounds else f"{bounds['le']}]"
        return f"must be in {low}, {high}"
    cause = (err.get("ctx") or {}).get("error")
    return err["msg"] if cause is None else str(cause)


def _explain(model: type[BaseModel], err: dict[str, Any], source: str) -> ConfigError:
    """One pydantic error as a ConfigError naming the key, the value and what is allowed (and, for a value of
    the wrong type, the field's description)."""
    *path, name = err["loc"]  # section names, then the field (compound values report their errors whole)
    for part in path:
        model = _section(model.model_fields[part])
    dotted, value = ".".join(map(str, err["loc"])), err.get("input")
    if err["type"] == "extra_forbidden":
        names = list(model.model_fields)
        close = difflib.get_close_matches(name, names, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        where = f" in {'.'.join(path)!r}" if path else ""
        return _error(source, dotted, f"unknown key {dotted!r}{hint}; allowed keys{where}: {', '.join(names)}")
    field = model.model_fields[name]
    detail = _allowed(err, field)
    if not detail.startswith("expected"):
        return _error(source, dotted, f"{dotted}: {detail}, got {value!r:.80}")
    null = " or null" if field.default is None else ""
    got = f"got {value!r:.80} ({type(value).__name__})"
    return _error(source, dotted, f"{dotted}: {detail}{null}, {got}; {dotted}: {field.description}")


def _validate(model: type[BaseModel], data: Any, source: str) -> Any:
    if not isinstance(data, dict):
        raise _error(source, None, f"the config must be a mapping of keys to values, got {data!r:.60}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _explain(model, exc.errors()[0], source) from None


def _cross_checks(cfg: Config, source: str) -> None:
    env = cfg.env
    try:
        check_episode(env.episode, env.reward, env.max_hands)  # the env's own rules (sm_env.episode)
    except ValueError as err:
        raise _error(source, "env.reward", f"env.reward: {err} (in a config: env.episode: game)") from None
    if cfg.ppo.batch_size > cfg.ppo.n_steps * cfg.train.n_envs:
        raise _error(
            source,
            "ppo.batch_size",
            f"ppo.batch_size: must be at most ppo.n_steps * train.n_envs = "
            f"{cfg.ppo.n_steps * cfg.train.n_envs}, got {cfg.ppo.batch_size}",
        )


def config_from_dict(data: Any, source: str = "") -> Config:
    """A validated :class:`Config` from a plain dict (as YAML gives it)."""
    cfg = _validate(Config, data, source)
    _cross_checks(cfg, source)
    return cfg


def eval_config_from_dict(data: Any, source: str = "") -> EvalFileConfig:
    """A validated :class:`EvalFileConfig` from a plain dict (as YAML gives it)."""
    return _validate(EvalFileConfig, data, source)


def parse_override(text: str) -> tuple[list[str], Any]:
    """``"ppo.learning_rate=1e-4"`` -> (["ppo", "learning_rate"], 1e-4 as YAML reads it)."""
    key, equals, raw = text.partition("=")
    if not equals:
        raise ConfigError(f"--set {text}: expected key=value, e.g. ppo.learning_rate=1e-4")
    if not all(path := key.strip().split(".")):
        raise ConfigError(f"--set {text}: the key must be a dotted name like ppo.learning_rate")
    try:
        return path, yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as err:
        raise ConfigError(f"--set {text}: the value is not valid YAML: {err}") from None


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Set dotted keys in a raw config dict (validated later with the rest); a missing or null section is made."""
    data = copy.deepcopy(data)
    for text in overrides:
        path, value = parse_override(text)
        node = data
        for part in path[:-1]:
            if node.get(part) is None:
                node[part] = {}
            node = node[part]
            if not isinstance(node, dict):
                raise ConfigError(f"--set {text}: {part!r} is not a section")
        node[path[-1]] = value
    return data


def read_yaml(path: str) -> dict[str, Any]:
    """The mapping of a YAML file (an empty file: {})."""
    if not os.path.isfile(path):
        missing = not os.path.exists(path)
        raise ConfigError(
            f"config file not found: {path}" if missing else f"config file {path} is a folder; give a .yaml file"
        )
    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from None
    if not isinstance(data, (dict, type(None))):
        kind = type(data).__name__
        raise ConfigError(f"{path}: the top level must be a mapping of sections (env, ppo, ...), got {kind}")
    return data or {}


def _load(validate: Callable[[Any, str], Any], path: str | None, overrides: list[str] | None) -> Any:
    """Read ``path`` (None: the defaults), apply the overrides, validate; an invalid value set by an
    override is reported as the override's fault (``--set KEY=VALUE: ...``), one from the file as the file's."""
    overrides = list(overrides or [])
    data = apply_overrides(read_yaml(path) if path is not None else {}, overrides)
    try:
        return validate(data, path or "")
    except ConfigError as err:
        for text in reversed(overrides if err.key else []):  # the last override of the key (or its section)
            key = ".".join(parse_override(text)[0])
            if err.key == key or err.key.startswith(key + ".") or key.startswith(err.key + "."):
                raise ConfigError(f"--set {text}: {err.detail}", err.key, err.detail) from None
        raise


def load_config(path: str | None = None, overrides: list[str] | None = None) -> Config:
    """Read, override and validate a training config (see :func:`_load`)."""
    return _load(config_from_dict, path, overrides)


def load_eval_config(path: str | None, overrides: list[str] | None = None) -> EvalFileConfig:
    """Read, override and validate an evaluation config (configs/eval.yaml; None: the defaults)."""
    return _load(eval_config_from_dict, path, overrides)


def config_text(cfg: BaseModel) -> str:
    """The resolved config as YAML text."""
    return yaml.safe_dump(cfg.model_dump(), sort_keys=False)


def save_config(cfg: BaseModel, path: str) -> None:
    """Write the resolved config (any of this package's configs) as YAML, atomically (sm_env.atomic)."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write(config_text(cfg))


def describe(model: type[BaseModel] = Config, prefix: str = "") -> str:
    """Every field with its default and documentation (one per line)."""
    lines = []
    for name, field in model.model_fields.items():
        section = _section(field)
        if section is not None:
            lines += [f"{prefix}{name}:  # {field.description}", describe(section, f"{prefix}{name}.")]
        else:
            lines.append(f"{prefix}{name} = {field.get_default(call_default_factory=True)!r}  {field.description}")
    return "\n".join(lines)
