"""training.common.yaml_config: the typed-YAML toolkit on a small schema of its own (run configs: test_config.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic")

from training.common.yaml_config import (  # noqa: E402
    ConfigError,
    Flag,
    Mix,
    Number,
    Section,
    Sizes,
    Whole,
    describe,
    load,
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
