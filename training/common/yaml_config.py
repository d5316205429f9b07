"""Typed YAML configs (pydantic v2): field types, messages that name the key, ``--set`` overrides, files.

The toolkit of every kind of config (each of :data:`training.common.run_config.CONFIG_KINDS`: the trainers',
the distillation and play-out runs', the exploiter's, the evaluation's, the leaderboard's); their one error is
:class:`ConfigError`, which lives in the standard-library-only :mod:`training.common.errors` and is re-exported
here. What it holds:

- field types that read YAML as a person means it: :data:`Number` and :data:`Whole` take numbers (``3e-4``
  and ``1e6`` written as text too, ``1e6`` a whole number) but never booleans, and a :data:`Number` is finite
  (``.inf`` and ``.nan`` are refused), :data:`Flag` only ``true`` or ``false``, :data:`Device` a device this
  machine has (:mod:`training.common.device`); :class:`Section` forbids unknown keys and reads a null section
  as all defaults;
- :func:`setting`: a field with its default and ``description`` (:func:`describe` lists them);
- :func:`validate` turns the first pydantic error into a :class:`ConfigError` naming the source, the dotted
  key, the value and what is allowed (one formatter for every field: choices, types, bounds, own checks);
- :func:`load` reads a file, applies ``--set KEY=VALUE`` overrides (values read as YAML) and validates,
  blaming a bad value on the override that set it;
- :func:`parse_yaml` and :func:`read_yaml`: the one way the project reads YAML configs (files and override
  values), with bounds on what a config may cost: at most :data:`MAX_CONFIG_BYTES` bytes, nesting at most
  :data:`MAX_DEPTH` deep, at most :data:`MAX_NODES` values once aliases are expanded (no "billion laughs"),
  whole numbers of at most :data:`MAX_DIGITS` digits, and only YAML's own plain tags (no ``!!python/...``).
"""

from __future__ import annotations

import copy
import difflib
import math
import os
from collections.abc import Callable
from typing import Annotated, Any, get_args

import yaml
from pydantic import (
    AfterValidator,
    AllowInfNan,
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
from pydantic_core import PydanticUndefined

from sm_env.files.atomic import atomic_path
from sm_env.files.json_files import MAX_DEPTH, MAX_DIGITS

from .device import check_device
from .errors import ConfigError, config_error

# ---------------------------------------------------------------------------- reading YAML, bounded

MAX_CONFIG_BYTES = 1 << 20  # a config file (the committed ones are a few KB)
MAX_NODES = 100_000  # values in the document once every alias is expanded
# MAX_DEPTH (nested mappings and lists, 32) and MAX_DIGITS (of a whole number, 100): the bounds of every file the
# project reads back, YAML here and JSON in sm_env.files.json_files
_SAFE_TAGS = frozenset(
    "tag:yaml.org,2002:" + name
    for name in (
        "str",
        "int",
        "float",
        "bool",
        "null",
        "map",
        "seq",
        "merge",
        "timestamp",
        "binary",
        "omap",
        "pairs",
        "set",
    )
)


def _yaml_error(source: str, err: yaml.YAMLError) -> ConfigError:
    """A YAML syntax error in one line (the problem and where it is)."""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return config_error(source, None, f"not valid YAML: {problem}{where}")


def _check_nodes(root: yaml.Node, source: str) -> None:
    """Refuse a document that expands to more than MAX_NODES values, has a tag of its own or a huge integer.

    Each node is visited once (an alias is the node it names), its expanded size memoised, so the check is
    linear in the text however the aliases multiply.
    """
    sizes: dict[int, int] = {}
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in sizes:
            continue
        if done:
            children = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else node.value
            size = 1 + sum(sizes[id(child)] for child in children)
            if size > MAX_NODES:
                raise config_error(
                    source, None, f"the YAML expands to more than {MAX_NODES} values (aliases repeat what they name)"
                )
            sizes[id(node)] = size
            continue
        if node.tag not in _SAFE_TAGS:
            raise config_error(source, None, f"YAML tag {node.tag!r} is not allowed: a config holds plain values only")
        if isinstance(node, yaml.ScalarNode):
            if node.tag == "tag:yaml.org,2002:int" and len(node.value) > MAX_DIGITS:
                raise config_error(source, None, f"a whole number of {len(node.value)} digits; at most {MAX_DIGITS}")
            sizes[id(node)] = 1
            continue
        stack.append((node, True))
        children = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else node.value
        stack.extend((child, False) for child in children if id(child) not in sizes)


def parse_yaml(text: str, source: str) -> Any:
    """The value of one YAML document (None for an empty one), read with PyYAML's safe loader within the bounds
    of the module docstring; a :class:`ConfigError` naming ``source`` and the bound otherwise."""
    if len(text) > MAX_CONFIG_BYTES:
        raise config_error(source, None, f"the config is {len(text)} characters long; at most {MAX_CONFIG_BYTES}")
    try:
        depth = 0
        for event in yaml.parse(text, Loader=yaml.SafeLoader):  # events first: composing recurses per level
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise config_error(source, None, f"the YAML nests more than {MAX_DEPTH} levels deep")
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _check_nodes(node, source)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.YAMLError as err:
        raise _yaml_error(source, err) from None


# ---------------------------------------------------------------------------- field types
# Numbers and flags are pydantic's strict types (a boolean is never a number, a number never a boolean);
# _lax reads the numbers YAML leaves as text. One formatter (_allowed) words every error.


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
    """Any rule set (a preset name or a dict of options); what a trainer runs is its own config's to check."""
    from sm_env.core.rules import RuleSet

    if not isinstance(value, (str, dict)):
        raise ValueError("expected a rule preset name or a dict of rule options")
    RuleSet.from_any(value)  # raises RulesError (a ValueError) with its own message
    return value


def _three_player_rules(value: Any) -> str | dict:
    """A rule set of three players (the RLlib trainer, whose league env seats three)."""
    from sm_env.core.rules import RuleSet

    rules = RuleSet.from_any(_rules(value))
    if rules.num_players != 3:
        raise ValueError(
            f"the RLlib trainer plays three players; {rules.name!r} has {rules.num_players} (docs/rules.md 10.6): "
            "the batched trainer (training.vector), distillation and the SB3 trainer play four"
        )
    return value


def _mix(value: Any) -> dict[str, float]:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ValueError("expected a mapping of opponent names to weights")
    if not all(type(_lax(w)) in (int, float) for w in value.values()):
        raise ValueError("expected a number")
    mix = {k: float(_lax(w)) for k, w in value.items()}
    if not all(math.isfinite(w) for w in mix.values()):
        raise ValueError("must map opponent names to finite weights (not inf or nan)")
    if not mix or min(mix.values()) < 0 or sum(mix.values()) <= 0:
        raise ValueError("must map opponent names to weights >= 0 with a positive sum")
    return mix


Whole = Annotated[StrictInt, BeforeValidator(_lax)]
Number = Annotated[StrictFloat, BeforeValidator(_lax), AllowInfNan(False)]  # an int too; not inf or nan
Flag = StrictBool  # true or false only: numbers are never read as booleans
Text = StrictStr
Agents = Annotated[list[Text], _says("expected a list of agent names")]
Rules = Annotated[str | dict, BeforeValidator(_rules)]
Device = Annotated[StrictStr, AfterValidator(check_device)]  # training.common.device: a device this machine has
ThreePlayerRules = Annotated[str | dict, BeforeValidator(_three_player_rules)]
Mix = Annotated[dict[str, float], BeforeValidator(_mix)]
Resources = Annotated[
    dict[str, Number],
    _says("expected a mapping of Ray resource names to amounts"),
    _check(lambda v: all(x >= 0 for x in v.values()), "must map Ray resource names to amounts >= 0"),
]
Ints = _says("expected a list of whole numbers")
Sizes = Annotated[list[Whole], Ints, _check(lambda v: v and min(v) >= 1, "must be a non-empty list of positive sizes")]
Balances = Annotated[  # one per player: the rule set checks how many (training.evaluation.config.check_eval_rules)
    list[Whole],
    Ints,
    _check(lambda v: len(v) in (3, 4) and sum(v) == 0, "must be 3 whole numbers (4 with four players) summing to 0"),
]


def setting(default: Any, description: str, **constraints: Any) -> Any:
    """A field with its documentation; a callable default is a factory (a fresh list or dict per config)."""
    if callable(default):
        return Field(default_factory=default, description=description, **constraints)
    return Field(default, description=description, **constraints)


def _section(field: Any) -> type[BaseModel] | None:
    """The section class a field holds (or the item class of a list of sections), or None for a plain value."""
    kind = field.annotation
    if not (isinstance(kind, type) and issubclass(kind, BaseModel)):
        kind = next(iter(get_args(kind)), None)  # list[Section]
    return kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None


def dotted(loc: tuple[Any, ...]) -> str:
    """A key path as a config names it: ``("extra_data", 0, "hands")`` -> ``extra_data[0].hands``."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")


class Section(BaseModel):
    """A config section: unknown keys are errors; a missing or null section is all defaults.

    A subclass may give inherited fields other defaults and descriptions (their types and bounds stay):
    ``class Mine(Base, defaults={"n_steps": 64}, descriptions={"n_steps": "..."})``; a callable default is
    a factory, as for :func:`setting`.
    """

    model_config = ConfigDict(extra="forbid", validate_default=False)

    def __init_subclass__(cls, defaults: Any = None, descriptions: Any = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)  # defaults, descriptions: for __pydantic_init_subclass__

    @classmethod
    def __pydantic_init_subclass__(
        cls, defaults: dict[str, Any] | None = None, descriptions: dict[str, str] | None = None, **kwargs: Any
    ) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        defaults, descriptions = defaults or {}, descriptions or {}
        for name in {**defaults, **descriptions}:
            if name not in cls.model_fields:
                raise TypeError(f"{cls.__name__}: no inherited field {name!r} to change")
            field = copy.copy(cls.model_fields[name])
            changes: dict[str, Any] = {}
            if name in defaults:
                value, factory = defaults[name], callable(defaults[name])
                changes = {
                    "default": PydanticUndefined if factory else value,
                    "default_factory": value if factory else None,
                }
            if name in descriptions:
                changes["description"] = descriptions[name]
            for key, value in changes.items():
                setattr(field, key, value)
            field._attributes_set = {**getattr(field, "_attributes_set", {}), **changes}  # what subclasses inherit
            cls.__pydantic_fields__[name] = field
        if defaults or descriptions:
            cls.model_rebuild(force=True)

    @model_validator(mode="before")
    @classmethod
    def _null_is_defaults(cls, data: Any) -> Any:
        return {} if data is None else data

    def to_dict(self) -> dict[str, Any]:
        """Plain values (as YAML writes them)."""
        return self.model_dump()


# ---------------------------------------------------------------------------- validation


_BOUNDS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}
_TYPES = {"bool_type": "true or false", "string_type": "a text", "int_type": "a whole number", "float_type": "a number"}
_TYPES["model_type"] = "a mapping of keys to values"  # a section
_TYPES["finite_number"] = "a finite number (not inf or nan)"


def _allowed(err: dict[str, Any], field: Any) -> str:
    """What a field allows, in words, from pydantic's error and the field's own declaration (one formatter
    for every field: choices, types, bounds, and the messages of the checks above)."""
    kind = err["type"]
    if kind == "literal_error":
        choices = get_args(field.annotation)
        if not all(isinstance(choice, str) for choice in choices):  # a list of choices: pydantic's wording
            return "expected one of " + str((err.get("ctx") or {}).get("expected", choices))
        return "expected one of " + ", ".join(repr(choice) for choice in choices)
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
    loc = err["loc"]  # section names (and list indices), then the field, then an item's index in a list field
    if all(isinstance(part, int) for part in loc):  # a check of the whole config (a model validator): no key
        return config_error(source, None, _allowed(err, None))
    last = max(i for i, part in enumerate(loc) if not isinstance(part, int))
    *path, name = loc[: last + 1]
    for part in path:
        if not isinstance(part, int):
            model = _section(model.model_fields[part])
    key, value = dotted(err["loc"]), err.get("input")
    if err["type"] == "extra_forbidden":
        names = list(model.model_fields)
        close = difflib.get_close_matches(name, names, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        where = f" in {dotted(tuple(path))!r}" if path else ""
        return config_error(source, key, f"unknown key {key!r}{hint}; allowed keys{where}: {', '.join(names)}")
    field = model.model_fields[name]
    detail = _allowed(err, field)
    if not detail.startswith("expected"):
        return config_error(source, key, f"{key}: {detail}, got {value!r:.80}")
    null = " or null" if field.default is None and last == len(loc) - 1 else ""  # not for an item of a list
    got = f"got {value!r:.80} ({type(value).__name__})"
    return config_error(source, key, f"{key}: {detail}{null}, {got}; {key}: {field.description}")


def validate(model: type[BaseModel], data: Any, source: str) -> Any:
    """``data`` (a plain dict, as YAML gives it) as a ``model``; the first error as a :class:`ConfigError`."""
    if not isinstance(data, dict):
        raise config_error(source, None, f"the config must be a mapping of keys to values, got {data!r:.60}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _explain(model, exc.errors()[0], source) from None


def parse_override(text: str) -> tuple[list[str], Any]:
    """``"ppo.learning_rate=1e-4"`` -> (["ppo", "learning_rate"], 1e-4 as YAML reads it)."""
    key, equals, raw = text.partition("=")
    if not equals:
        raise ConfigError(f"--set {text}: expected key=value, e.g. ppo.learning_rate=1e-4")
    if not all(path := key.strip().split(".")):
        raise ConfigError(f"--set {text}: the key must be a dotted name like ppo.learning_rate")
    try:
        return path, parse_yaml(raw, "") if raw.strip() else ""
    except ConfigError as err:
        raise ConfigError(f"--set {text}: {err}") from None  # the value's fault, as parse_yaml words it


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


def read_config_text(path: str) -> str:
    """The text of a config file, at most MAX_CONFIG_BYTES bytes of UTF-8; a ConfigError otherwise."""
    if not os.path.isfile(path):
        missing = not os.path.exists(path)
        raise ConfigError(
            f"config file not found: {path}" if missing else f"config file {path} is a folder; give a .yaml file"
        )
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as err:
        raise ConfigError(f"{path}: cannot be read: {err.strerror}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise config_error(path, None, f"the file is larger than {MAX_CONFIG_BYTES} bytes: not a config")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise config_error(path, None, f"not UTF-8 text (byte {err.start})") from None


def read_yaml(path: str) -> dict[str, Any]:
    """The mapping of a YAML file (an empty file: {}), read by :func:`parse_yaml` (at most MAX_CONFIG_BYTES)."""
    data = parse_yaml(read_config_text(path), path)
    if not isinstance(data, (dict, type(None))):
        kind = type(data).__name__
        raise ConfigError(f"{path}: the top level must be a mapping of sections (env, ppo, ...), got {kind}")
    return data or {}


def load(
    check: Callable[[Any, str], Any],
    path: str | None,
    overrides: list[str] | None,
    migrate: Callable[[dict[str, Any], str], dict[str, Any]] | None = None,
) -> Any:
    """Read ``path`` (None: the defaults), ``migrate(data, source)`` it if given (a file of an older release into
    this one's shape: :func:`training.common.run_config.migrate_rules`), apply the overrides, ``check(data,
    source)`` (a validator that raises ConfigError); an invalid value set by an override is reported as the
    override's fault (``--set KEY=VALUE: ...``), one from the file as the file's."""
    overrides = list(overrides or [])
    data = read_yaml(path) if path is not None else {}
    if migrate is not None and path is not None:
        data = migrate(data, path)
    data = apply_overrides(data, overrides)
    try:
        return check(data, path or "")
    except ConfigError as err:
        for text in reversed(overrides if err.key else []):  # the last override of the key (or its section)
            key = ".".join(parse_override(text)[0])
            if err.key == key or err.key.startswith((key + ".", key + "[")) or key.startswith(err.key + "."):
                raise ConfigError(f"--set {text}: {err.detail}", err.key, err.detail) from None
        raise


def config_text(cfg: BaseModel) -> str:
    """The resolved config as YAML text."""
    return yaml.safe_dump(cfg.model_dump(), sort_keys=False)


def save_config(cfg: BaseModel, path: str) -> None:
    """Write the resolved config (any of this package's configs) as YAML, atomically (sm_env.files.atomic)."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write(config_text(cfg))


def describe(model: type[BaseModel], prefix: str = "") -> str:
    """Every field with its default and documentation (one per line)."""
    lines = []
    for name, field in model.model_fields.items():
        section = _section(field)
        if section is not None:
            inner = f"{prefix}{name}{'' if section is field.annotation else '[]'}."  # a list of sections: name[].
            lines += [f"{prefix}{name}:  # {field.description}", describe(section, inner)]
        else:
            lines.append(f"{prefix}{name} = {field.get_default(call_default_factory=True)!r}  {field.description}")
    return "\n".join(lines)
