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
    StrictStr,
    ValidationError,
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
# Each BeforeValidator accepts exactly the YAML values that mean the type and
# raises ValueError("expected ...") otherwise; AfterValidators check ranges.


def _number(value: Any) -> float:
    if isinstance(value, (int, float, str)) and not isinstance(value, bool):
        try:
            return float(value.replace("_", "") if isinstance(value, str) else value)
        except ValueError:
            pass
    raise ValueError("expected a number")


def _whole(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        number = _number(value)
    except ValueError:
        number = 0.5
    if not number.is_integer():
        raise ValueError("expected a whole number")
    return int(number)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    raise ValueError("expected a text")


def _list_of(convert: Callable[[Any], Any], what: str) -> Callable[[Any], list[Any]]:
    def check(value: Any) -> list[Any]:
        try:
            if isinstance(value, list):
                return [convert(v) for v in value]
        except (ValueError, ValidationError):
            pass
        raise ValueError(f"expected a list of {what}")

    return check


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
    mix = {k: _number(v) for k, v in value.items()}
    if not mix or any(w < 0 for w in mix.values()) or sum(mix.values()) <= 0:
        raise ValueError("must map opponent names to weights >= 0 with a positive sum")
    return mix


Whole = Annotated[int, BeforeValidator(_whole)]
Number = Annotated[float, BeforeValidator(_number)]
Flag = StrictBool  # true or false only: numbers are never read as booleans
Text = StrictStr
Agents = Annotated[list[str], BeforeValidator(_list_of(_text, "agent names"))]
Rules = Annotated[str | dict, BeforeValidator(_rules)]
Wholes = BeforeValidator(_list_of(_whole, "whole numbers"))
Sizes = Annotated[list[int], Wholes, _check(lambda v: v and min(v) >= 1, "must be a non-empty list of positive sizes")]
Balances = Annotated[
    list[int], Wholes, _check(lambda v: len(v) == 3 and sum(v) == 0, "must be 3 whole numbers summing to 0")
]


class _Section(BaseModel):
    """A config section: unknown keys are errors; a missing or null section is all defaults."""

    model_config = ConfigDict(extra="forbid", validate_default=False)

    @model_validator(mode="before")
    @classmethod
    def _mapping(cls, data: Any) -> Any:
        if data is None:
            return {}
        if not isinstance(data, (dict, BaseModel)):
            raise ValueError(f"must be a mapping of keys to values, got {data!r:.60}")
        return data

    def to_dict(self) -> dict[str, Any]:
        """Plain values (as YAML writes them)."""
        return self.model_dump()


class EnvConfig(_Section):
    """The learner's game (training/single_agent.py)."""

    rules: Rules = Field(
        "standard",
        description="rule set: a preset name ('standard', 'woburn', ...) or a dict of docs/rules.md section 9 options",
    )
    episode: Literal[EPISODES] = Field(
        "hand",
        description="'hand': an episode is one hand (fast, dense reward); 'game': a whole game, hand after hand",
    )
    max_hands: Whole = Field(
        100, gt=0, description="game episodes: truncate a game nobody has won after this many hands"
    )
    reward: Literal[REWARDS] = Field(
        "balance",
        description="'balance': tricks - quota at the end of every hand; 'result': winning the game "
        "(+1 shared by winners, -1 by losers; needs episode: game)",
    )
    reward_scale: Number = Field(1.0, gt=0, description="rewards are multiplied by this (balances run about -8..+8)")
    dense_reward: Flag = Field(
        False,
        description="reward 'balance' paid sooner: +1 per trick the learner wins when it is won, -quota when "
        "the hand ends (the same total per hand; easier credit assignment)",
    )
    learner_seats: Annotated[str | list[str], BeforeValidator(_seats)] = Field(
        "all",
        description="roles the learner plays in the first hand of an episode: 'all' or a list of "
        "'dealer', 'eldest', 'middle' (one drawn per episode; one shared policy)",
    )
    exchange_start: Number = Field(
        0.0,
        ge=0,
        le=1,
        description="hand episodes: probability that the hand starts with an exchange (random previous "
        "balances), so that exchange decisions are trained",
    )


class OpponentsConfig(_Section):
    """Who plays the two other seats: baselines and frozen snapshots of the learner."""

    mix: Annotated[dict[str, float], BeforeValidator(_mix)] = Field(
        default_factory=lambda: {"random": 1.0},
        description="weight of each opponent kind: agent names of agents.make_agent ('random', 'heuristic', "
        "...) and 'snapshots' (a frozen copy of the learner from the pool); each opponent seat draws "
        "independently every episode; until the first snapshot exists its weight goes to the others",
    )
    snapshot_every: Whole = Field(
        100_000, gt=0, description="learner timesteps between snapshots added to the pool (checked after every segment)"
    )
    pool_size: Whole = Field(10, gt=0, description="snapshots kept in the pool (oldest dropped)")
    snapshot_deterministic: Flag = Field(
        False, description="snapshots play their most probable action instead of sampling"
    )


class PretrainConfig(_Section):
    """Optional warm start by imitation: before PPO, the policy learns to copy a
    teacher agent playing the learner's seat (cross-entropy on its actions,
    masked), and the value network learns the teacher's returns."""

    teacher: Text | None = Field(None, description="agent spec to imitate, e.g. 'heuristic' (null: no warm start)")
    decisions: Whole = Field(
        200_000, gt=0, description="teacher decisions collected (in the training env, same opponents)"
    )
    epochs: Whole = Field(4, gt=0, description="passes over the collected decisions")
    batch_size: Whole = Field(256, ge=2, description="minibatch size")
    learning_rate: Number = Field(1e-3, gt=0, description="Adam learning rate of the warm start")
    value: Flag = Field(True, description="also fit the value network to the teacher's returns")


class PPOConfig(_Section):
    """MaskablePPO (sb3-contrib) hyper-parameters."""

    learning_rate: Number = Field(3e-4, gt=0, description="Adam learning rate")
    lr_schedule: Literal[("constant", "linear")] = Field(
        "constant", description="'linear' decays the learning rate to 0 over train.total_timesteps"
    )
    n_steps: Whole = Field(256, gt=0, description="steps per env per rollout (rollout size = n_steps * train.n_envs)")
    batch_size: Whole = Field(512, ge=2, description="minibatch size")
    n_epochs: Whole = Field(4, gt=0, description="passes over each rollout")
    gamma: Number = Field(1.0, gt=0, le=1, description="discount (episodes are short and end for sure: 1.0 is fine)")
    gae_lambda: Number = Field(0.95, ge=0, le=1, description="GAE lambda")
    clip_range: Number = Field(0.2, gt=0, description="PPO clipping")
    ent_coef: Number = Field(0.01, ge=0, description="entropy bonus")
    vf_coef: Number = Field(0.5, ge=0, description="value loss weight")
    max_grad_norm: Number = Field(0.5, gt=0, description="gradient clipping")
    target_kl: Number | None = Field(None, gt=0, description="stop an update early beyond this KL (null: never)")
    normalize_advantage: Flag = Field(True, description="normalise advantages per minibatch")
    net_arch: Sizes = Field(
        default_factory=lambda: [256, 256], description="hidden layer sizes of the policy and of the value network"
    )
    activation: Literal[("tanh", "relu")] = Field("tanh", description="activation of the hidden layers")


class TrainConfig(_Section):
    """Length of the run, vectorisation, checkpoints."""

    total_timesteps: Whole = Field(200_000, gt=0, description="learner decisions to train for")
    n_envs: Whole = Field(8, gt=0, description="parallel environments")
    vec_env: Literal[("dummy", "subproc")] = Field(
        "dummy", description="'dummy': envs in the trainer's process (best on 2 cores); 'subproc': one process each"
    )
    segment_steps: Whole = Field(
        16_384,
        gt=0,
        description="learner timesteps per training segment (rounded up to whole rollouts); snapshots, "
        "evaluations and checkpoints happen between segments; envs restart every segment so that "
        "--resume continues exactly",
    )
    checkpoint_every: Whole = Field(
        100_000, gt=0, description="timesteps between checkpoints (the last segment always writes one)"
    )
    keep_checkpoints: Whole = Field(3, ge=0, description="numbered checkpoints kept besides checkpoints/latest.zip")
    torch_threads: Whole = Field(1, gt=0, description="torch CPU threads (1 is best with 2 cores and small networks)")
    progress_bar: Flag = Field(True, description="show a tqdm progress bar")


class EvalConfig(_Section):
    """Duplicate evaluation of the learner against baselines, per role."""

    every: Whole = Field(0, ge=0, description="timesteps between evaluations during training (0: only at the end)")
    opponents: Agents = Field(
        default_factory=lambda: ["heuristic", "random"],
        description="baseline agents to evaluate against (the learner plays one seat, the baseline the two others)",
    )
    deals: Whole = Field(200, gt=0, description="deals per evaluation during training")
    final_deals: Whole = Field(2000, ge=0, description="deals of the final evaluation (0: none)")
    mode: Literal[("hand", "game")] = Field(
        "hand", description="evaluate single hands ('hand') or whole games ('game')"
    )
    max_hands: Whole = Field(30, gt=0, description="game mode: hands per game at most")
    start_balances: Balances | None = Field(
        None,
        description="hand mode: balances of an imaginary previous hand (by seat; seat 0 deals), so that every "
        "hand opens with that exchange (null: no exchange)",
    )
    seed: Whole = Field(20240101, description="seed of the evaluation deals (the same deals at every evaluation)")
    workers: Whole = Field(1, gt=0, description="evaluation worker processes")


class Config(_Section):
    """A training run."""

    name: Text = Field("run", description="run name: the run folder is <output_dir>/<name>")
    output_dir: Text = Field("runs", description="folder of run folders (relative to the working directory)")
    seed: Whole = Field(0, description="seed of everything: python random, numpy, torch, environments")
    env: EnvConfig = Field(default_factory=EnvConfig, description="the learner's game")
    opponents: OpponentsConfig = Field(default_factory=OpponentsConfig, description="opponent pool")
    pretrain: PretrainConfig = Field(
        default_factory=PretrainConfig, description="optional warm start by imitation of a teacher"
    )
    ppo: PPOConfig = Field(default_factory=PPOConfig, description="MaskablePPO hyper-parameters")
    train: TrainConfig = Field(default_factory=TrainConfig, description="length, vectorisation, checkpoints")
    eval: EvalConfig = Field(default_factory=EvalConfig, description="evaluation")


class EvalFileConfig(_Section):
    """An evaluation of a trained policy (configs/eval.yaml):
    ``sergeant-major train --evaluate POLICY --eval-config configs/eval.yaml``."""

    policy: Text | None = Field(
        None, description="policy file (final_model.zip, a checkpoint or a .pt export); --evaluate PATH overrides it"
    )
    rules: Rules = Field("standard", description="rule set of the evaluation games (as env.rules)")
    eval: EvalConfig = Field(
        default_factory=EvalConfig,
        description="evaluation settings (as the eval section of a training config; "
        "final_deals is the number of deals, every is ignored)",
    )


# ---------------------------------------------------------------------------- validation


def _section_model(model: type[BaseModel], path: tuple[Any, ...]) -> type[BaseModel] | None:
    """The section class at ``path`` (a pydantic error location) below ``model``."""
    for part in path:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        annotation = getattr(field, "annotation", None)
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return None
        model = annotation
    return model


_BOUNDS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}
_PLAIN = {"bool_type": "expected true or false", "string_type": "expected a text"}


def _allowed(err: dict[str, Any], field: Any) -> str:
    """What a field allows, in words, from pydantic's error and the field's own declaration (one formatter
    for every field: bounds, choices, strict types, and the messages of the checks above)."""
    kind = err["type"]
    if kind == "literal_error" and field is not None:
        return "expected one of " + ", ".join(repr(choice) for choice in get_args(field.annotation))
    bounds = {
        k: getattr(m, k) for m in getattr(field, "metadata", ()) for k in _BOUNDS if getattr(m, k, None) is not None
    }
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal") and bounds:
        if len(bounds) == 1:
            ((name, limit),) = bounds.items()
            return f"must be {_BOUNDS[name]} {limit}"
        low = f"({bounds['gt']}" if "gt" in bounds else f"[{bounds.get('ge')}"
        high = f"{bounds['lt']})" if "lt" in bounds else f"{bounds.get('le')}]"
        return f"must be in {low}, {high}"
    cause = (err.get("ctx") or {}).get("error")
    return str(cause) if cause is not None else _PLAIN.get(kind, err["msg"])


def _explain(model: type[BaseModel], err: dict[str, Any], source: str) -> ConfigError:
    """One pydantic error as a ConfigError naming the key, the value and what is allowed."""
    loc = tuple(err["loc"])
    dotted = ".".join(str(part) for part in loc)
    value = err.get("input")
    section = _section_model(model, loc[:-1])
    names = list(section.model_fields) if section is not None else []
    field = section.model_fields.get(loc[-1]) if section is not None and isinstance(loc[-1], str) else None
    if err["type"] == "extra_forbidden":
        close = difflib.get_close_matches(str(loc[-1]), names, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        where = ".".join(str(part) for part in loc[:-1])
        return _error(
            source,
            dotted,
            f"unknown key {dotted!r}{hint}; allowed keys{' in ' + repr(where) if where else ''}: {', '.join(names)}",
        )
    detail = _allowed(err, field)
    if not loc:
        return _error(source, None, f"the config {detail}")
    text = f"{dotted}: {detail}, got {value!r:.80}"
    if detail.startswith("expected"):
        if field is not None and field.default is None:
            text = f"{dotted}: {detail} or null, got {value!r:.80}"
        text += f" ({type(value).__name__})"
        if field is not None and field.description:
            text += f"; {dotted}: {field.description}"
    return _error(source, dotted, text)


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
    if "=" not in text:
        raise ConfigError(f"--set {text}: expected key=value, e.g. ppo.learning_rate=1e-4")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key or any(not part for part in key.split(".")):
        raise ConfigError(f"--set {text}: the key must be a dotted name like ppo.learning_rate")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as err:
        raise ConfigError(f"--set {text}: the value is not valid YAML: {err}") from None
    return key.split("."), value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Set dotted keys in a raw config dict (validated later with the rest)."""
    data = copy.deepcopy(data)
    for text in overrides:
        path, value = parse_override(text)
        node = data
        for part in path[:-1]:
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            elif not isinstance(child, dict):
                raise ConfigError(f"--set {text}: {part!r} is not a section")
            node = child
        node[path[-1]] = value
    return data


def read_yaml(path: str) -> dict[str, Any]:
    if not os.path.exists(path):
        raise ConfigError(f"config file not found: {path}")
    if os.path.isdir(path):
        raise ConfigError(f"config file {path} is a folder; give a .yaml file")
    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: the top level must be a mapping of sections (env, ppo, ...), got {type(data).__name__}"
        )
    return data


def _blame(err: ConfigError, overrides: list[str]) -> ConfigError:
    """The error as the fault of the ``--set`` override that set its key, if one did."""
    if err.key is None:
        return err
    for text in reversed(overrides):
        key = ".".join(parse_override(text)[0])
        if err.key == key or err.key.startswith(key + ".") or key.startswith(err.key + "."):
            return ConfigError(f"--set {text}: {err.detail}", err.key, err.detail)
    return err


def _load(validate: Callable[[Any, str], Any], path: str | None, overrides: list[str] | None) -> Any:
    """Read ``path`` (None: the defaults), apply the overrides, validate; an invalid value set by an
    override is reported as the override's fault (``--set KEY=VALUE: ...``), one from the file as the file's."""
    overrides = list(overrides or [])
    data = apply_overrides(read_yaml(path) if path is not None else {}, overrides)
    try:
        return validate(data, path or "")
    except ConfigError as err:
        raise _blame(err, overrides) from None


def load_config(path: str | None = None, overrides: list[str] | None = None) -> Config:
    """Read, override and validate a training config (see :func:`_load`)."""
    return _load(config_from_dict, path, overrides)


def load_eval_config(path: str | None, overrides: list[str] | None = None) -> EvalFileConfig:
    """Read, override and validate an evaluation config (configs/eval.yaml; None: the defaults)."""
    return _load(eval_config_from_dict, path, overrides)


def config_text(cfg: Config) -> str:
    """The resolved config as YAML text."""
    return yaml.safe_dump(cfg.to_dict(), sort_keys=False)


def save_config(cfg: Config, path: str) -> None:
    """Write the resolved config as YAML, atomically (sm_env.atomic)."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write(config_text(cfg))


def describe(model: type[BaseModel] = Config, prefix: str = "") -> str:
    """Every field with its default and documentation (one per line)."""
    lines = []
    for name, field in model.model_fields.items():
        dotted = prefix + name
        section = _section_model(model, (name,))
        if section is not None:
            lines.append(f"{dotted}:  # {field.description}")
            lines.append(describe(section, dotted + "."))
            continue
        default = field.get_default(call_default_factory=True)
        lines.append(f"{dotted} = {default!r}  {field.description}")
    return "\n".join(lines)
