"""training.common.yaml_config: the typed-YAML toolkit on a small schema of its own (run configs: test_config.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic")

from pydantic import model_validator  # noqa: E402

from training.common import yaml_config  # noqa: E402
from training.common.yaml_config import (  # noqa: E402
    MAX_CONFIG_BYTES,
    MAX_DEPTH,
    MAX_DIGITS,
    MAX_NODES,
    ConfigError,
    Flag,
    Mix,
    Number,
    Section,
    Sizes,
    Whole,
    describe,
    load,
    parse_yaml,
    read_yaml,
    setting,
    validate,
)


class Inner(Section):
    """A section."""

    size: Whole = setting(3, "a positive whole number", gt=0)
    rate: Number = setting(0.5, "a number in (0, 1]", gt=0, le=1)
    on: Flag = setting(False, "a flag")


class Outer(Section):
    """A schema."""

    layers: Sizes = setting(lambda: [8], "layer sizes")
    mix: Mix = setting(lambda: {"a": 1.0}, "weights")
    inner: Inner = setting(Inner, "the inner section")


def check(data, source=""):
    return validate(Outer, data, source)


def message(data) -> str:
    with pytest.raises(ConfigError) as err:
        check(data, "f.yaml")
    assert str(err.value).startswith("f.yaml: ")
    return str(err.value)


def test_numbers_as_yaml_writes_them_but_never_booleans():
    cfg = check({"layers": ["1e2", 64.0, "1_000"], "mix": {"a": "3e-1"}, "inner": {"size": "1e1", "rate": 1}})
    assert cfg.layers == [100, 64, 1000] and all(type(n) is int for n in cfg.layers)
    assert cfg.mix == {"a": 0.3} and cfg.inner.size == 10 and cfg.inner.rate == 1.0
    assert type(cfg.inner.size) is int and type(cfg.inner.rate) is float
    assert "inner.size: expected a whole number, got True (bool); inner.size: a positive whole number" in message(
        {"inner": {"size": True}}
    )
    assert "inner.size: expected a whole number, got 2.5 (float)" in message({"inner": {"size": 2.5}})
    assert "inner.rate: expected a number, got False (bool)" in message({"inner": {"rate": False}})
    assert "inner.on: expected true or false, got 0 (int)" in message({"inner": {"on": 0}})
    assert "layers: expected a list of whole numbers, got [1, True] (list)" in message({"layers": [1, True]})
    assert "mix: expected a number" in message({"mix": {"a": True}})


class Unbounded(Section):
    """A number with no bounds."""

    scale: Number = setting(1.0, "any finite number")


def test_a_number_is_finite_even_without_bounds():
    assert validate(Unbounded, {"scale": "-1e300"}, "").scale == -1e300
    for bad in (float("inf"), float("-inf"), float("nan"), "inf", "-Infinity", "nan"):
        with pytest.raises(ConfigError, match=r"^f.yaml: scale: expected a finite number \(not inf or nan\), got "):
            validate(Unbounded, {"scale": bad}, "f.yaml")
    with pytest.raises(ConfigError, match=r"^--set scale=.inf: scale: expected a finite number"):
        load(lambda data, source: validate(Unbounded, data, source), None, ["scale=.inf"])
    assert "mix: must map opponent names to finite weights (not inf or nan)" in message({"mix": {"a": float("inf")}})
    assert "mix: must map opponent names to finite weights" in message({"mix": {"a": 1, "b": "nan"}})


def test_bounds_choices_and_sections_are_worded_once():
    assert message({"inner": {"size": 0}}).endswith("inner.size: must be > 0, got 0")
    assert message({"inner": {"rate": 2}}).endswith("inner.rate: must be in (0, 1], got 2")
    text = message({"inner": "big"})
    assert text == "f.yaml: inner: expected a mapping of keys to values, got 'big' (str); inner: the inner section"
    assert check({"inner": None}).inner == Inner()
    text = message({"inner": {"sise": 1}})
    assert "unknown key 'inner.sise' (did you mean 'size'?); allowed keys in 'inner': size, rate, on" in text


def test_load_blames_the_override_that_set_a_bad_value(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("inner:\n  size: 0\n")
    with pytest.raises(ConfigError, match=rf"^{path}: inner.size: must be > 0"):
        load(check, str(path), ["inner.rate=1"])
    with pytest.raises(ConfigError, match=r"^--set inner.rate=2: inner.rate: must be in"):
        load(check, None, ["inner.rate=2"])
    assert load(check, str(path), ["inner.size=4"]).inner.size == 4


def test_describe_lists_defaults_and_descriptions():
    assert describe(Outer).splitlines() == [
        "layers = [8]  layer sizes",
        "mix = {'a': 1.0}  weights",
        "inner:  # the inner section",
        "inner.size = 3  a positive whole number",
        "inner.rate = 0.5  a number in (0, 1]",
        "inner.on = False  a flag",
    ]


class Base(Section):
    """Shared fields."""

    steps: Whole = setting(4, "steps", gt=0)
    sizes: Sizes = setting(lambda: [8], "sizes")


class Changed(Base, defaults={"steps": 9, "sizes": lambda: [2, 2]}, descriptions={"steps": "engine steps"}):
    """The shared fields with other defaults, and one more."""

    extra: Flag = setting(True, "its own")


class Listed(Section):
    """A list of sections."""

    items: list[Inner] = setting(list, "entries")


def test_a_subclass_changes_defaults_and_descriptions_but_keeps_types_and_bounds():
    assert Changed().model_dump() == {"steps": 9, "sizes": [2, 2], "extra": True}
    assert Base().model_dump() == {"steps": 4, "sizes": [8]}  # the base is untouched
    assert Changed().sizes is not Changed().sizes  # a factory default: a fresh list each time
    with pytest.raises(ConfigError, match="steps: must be > 0, got 0"):
        validate(Changed, {"steps": 0}, "")
    assert "steps = 9  engine steps" in describe(Changed) and "steps = 4  steps" in describe(Base)
    with pytest.raises(TypeError, match="no inherited field 'stepz'"):

        class Wrong(Base, defaults={"stepz": 1}):
            pass


def test_errors_inside_a_list_of_sections_name_the_entry():
    with pytest.raises(ConfigError, match=r"^items\[1\].size: must be > 0, got 0$"):
        validate(Listed, {"items": [{"size": 2}, {"size": 0}]}, "")
    with pytest.raises(ConfigError, match=r"unknown key 'items\[0\].sise' \(did you mean 'size'\?\); allowed keys in"):
        validate(Listed, {"items": [{"sise": 2}]}, "")
    with pytest.raises(ConfigError, match=r"^--set items=\[\{size: -1\}\]: items\[0\].size: must be > 0"):
        load(lambda data, source: validate(Listed, data, source), None, ["items=[{size: -1}]"])
    assert "items[].size = 3" in describe(Listed)


class Checked(Section):
    """A schema with a check of the whole config (a model validator: its error has no key)."""

    low: Whole = setting(1, "the lower end")
    high: Whole = setting(2, "the upper end")

    @model_validator(mode="after")
    def _ordered(self) -> Checked:
        if self.low > self.high:
            raise ValueError(f"low must be at most high, got {self.low} > {self.high}")
        return self


Checked.model_rebuild()


def test_a_check_of_the_whole_config_is_one_clear_error():
    with pytest.raises(ConfigError, match=r"^f.yaml: low must be at most high, got 3 > 2$"):
        validate(Checked, {"low": 3}, "f.yaml")


# ---------------------------------------------------------------------------- what a config may cost

BILLION_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + k)}: &{chr(98 + k)} [{', '.join([f'*{chr(97 + k)}'] * 10)}]\n" for k in range(8)
)  # 9 lines, 10**9 values once expanded


def hostile(tmp_path, text: str) -> str:
    path = tmp_path / "hostile.yaml"
    path.write_text(text)
    return str(path)


def test_aliases_that_expand_beyond_the_budget_are_refused_before_expanding(tmp_path):
    assert len(BILLION_LAUGHS) < 700
    path = hostile(tmp_path, BILLION_LAUGHS)
    with pytest.raises(ConfigError, match=rf"^{path}: the YAML expands to more than {MAX_NODES} values"):
        read_yaml(path)
    with pytest.raises(ConfigError, match=r"^--set inner=.*expands to more than"):
        load(check, None, ["inner=" + BILLION_LAUGHS.replace("\n", ", ").join("{}")])
    assert parse_yaml("a: &x [1, 2]\nb: *x\n", "f") == {"a": [1, 2], "b": [1, 2]}  # small aliases still work
    assert parse_yaml("a: &x {k: 1}\nb:\n  <<: *x\n  j: 2\n", "f") == {"a": {"k": 1}, "b": {"k": 1, "j": 2}}


def test_deep_nesting_huge_integers_tags_and_big_files_are_one_clear_error(tmp_path):
    cases = {
        "[" * 5000 + "]" * 5000: f"nests more than {MAX_DEPTH} levels deep",
        "a: " + "7" * 5000: f"a whole number of 5000 digits; at most {MAX_DIGITS}",
        "a: !!python/object/apply:os.system [echo hi]": "YAML tag 'tag:yaml.org,2002:python/object/apply:os.system' is "
        "not allowed",
        "a: !custom 1": "YAML tag '!custom' is not allowed",
        "a: [1, 2": "not valid YAML: expected ',' or ']', but got '<stream end>'",
    }
    for text, expected in cases.items():
        path = hostile(tmp_path, text)
        with pytest.raises(ConfigError) as err:
            read_yaml(path)
        assert str(err.value).startswith(f"{path}: ") and expected in str(err.value), str(err.value)
        assert "\n" not in str(err.value)
    assert parse_yaml("[" * MAX_DEPTH + "]" * MAX_DEPTH, "f") is not None
    assert parse_yaml("a: " + "9" * MAX_DIGITS, "f") == {"a": int("9" * MAX_DIGITS)}
    big = hostile(tmp_path, "#" * (MAX_CONFIG_BYTES + 1))
    with pytest.raises(ConfigError, match=rf"larger than {MAX_CONFIG_BYTES} bytes"):
        read_yaml(big)


def test_every_config_loader_reads_through_the_bounded_reader(tmp_path):
    from training.distill import fit
    from training.evaluation import config as eval_config
    from training.rllib import config as rllib_config
    from training.sb3 import config as sb3_config
    from training.vector import config as vector_config

    path = hostile(tmp_path, BILLION_LAUGHS)
    loaders = (
        sb3_config.load_config,
        eval_config.load_eval_config,
        vector_config.load_selfplay_config,
        vector_config.load_dmc_config,
    )
    for loader in loaders:
        with pytest.raises(ConfigError, match="expands to more than"):
            loader(path, [])
    with pytest.raises(ConfigError, match="expands to more than"):
        rllib_config.load_rllib_config(path, [])
    with pytest.raises(ConfigError, match="expands to more than"):
        fit.load_config(path)
    with pytest.raises(ConfigError, match="tag .*python/name:os.system.* is not allowed"):
        fit.load_config(hostile(tmp_path, "hands: !!python/name:os.system\n"))
    with pytest.raises(ConfigError, match="nests more than"):
        fit.load_config(None, ["hands=" + "[" * 100])
    assert yaml_config.parse_yaml("", "f") is None
