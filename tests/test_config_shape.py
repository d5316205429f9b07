"""One config shape: every run config derives from the run section (:class:`training.common.run_config.RunSection`),
every config file from its kind (:class:`KindSection`), and a run config's rule set is at one key, ``env.rules``
(a leaderboard's sections keep one each); a file of an older release is moved there on load (``migrate_rules``)."""

from __future__ import annotations

import importlib
import typing

import pytest

pytest.importorskip("pydantic")

from pydantic import BaseModel  # noqa: E402

from sm_cli.cli import _CONFIG_LOADERS  # noqa: E402
from training.common.errors import ConfigError  # noqa: E402
from training.common.run_config import CONFIG_KINDS, KindSection, RunSection, migrate_rules  # noqa: E402

NOT_RUNS = {"eval": "sergeant-major train --evaluate", "leaderboard": "a page of tournaments, each its own run folder"}
RULES_KEYS = {"leaderboard": {"sections[].rules"}}  # every other kind: {"env.rules"}
PENDING: dict[str, str] = {}  # kinds whose owner moves them to the one shape (tests xfail strictly until then)


def _model(kind: str) -> type[BaseModel]:
    module, _, name = _CONFIG_LOADERS[kind]
    return getattr(importlib.import_module(module), name)


def _sections(annotation: typing.Any) -> list[tuple[type[BaseModel], str]]:
    """The section classes a field's annotation holds, each with ``[]`` when in a list (``list[S] | None``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [(annotation, "")]
    inner = "[]" if typing.get_origin(annotation) is list else ""
    return [(model, inner + more) for arg in typing.get_args(annotation) for model, more in _sections(arg)]


def _rules_keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    """The dotted keys named ``rules`` in ``model`` and its sections (``sections[].rules`` in a list of them)."""
    keys = {prefix + "rules"} if "rules" in model.model_fields else set()
    for name, field in model.model_fields.items():
        for section, inner in _sections(field.annotation):
            keys |= _rules_keys(section, f"{prefix}{name}{inner}.")
    return keys


def _kinds() -> list:
    return [
        pytest.param(kind, marks=pytest.mark.xfail(strict=True, reason=PENDING[kind])) if kind in PENDING else kind
        for kind in CONFIG_KINDS
    ]


def test_every_kind_has_a_loader() -> None:
    assert list(_CONFIG_LOADERS) == list(CONFIG_KINDS)


@pytest.mark.parametrize("kind", _kinds())
def test_every_config_derives_from_its_section_and_keeps_its_rules_at_one_key(kind: str) -> None:
    model = _model(kind)
    assert issubclass(model, KindSection) and model.model_fields["kind"].default == kind
    assert issubclass(model, RunSection) == (kind not in NOT_RUNS), model
    assert _rules_keys(model) == RULES_KEYS.get(kind, {"env.rules"}), model


def test_the_rules_key_check_can_fail() -> None:
    """A rule set at another key, or at two, is seen."""

    class Old(KindSection):
        rules: str = "standard"

    assert _rules_keys(Old) == {"rules"}
    assert _rules_keys(_model("leaderboard")) == {"sections[].rules"}


def test_an_old_eval_file_is_read_with_its_rules_at_env_rules(tmp_path, capsys) -> None:
    from training.evaluation.config import load_eval_config

    path = tmp_path / "eval.yaml"
    path.write_text("kind: eval\nrules: woburn\neval: {final_deals: 10}\n")
    spec = load_eval_config(str(path), ["eval.deals=5"])
    assert spec.env.rules == "woburn" and spec.eval.final_deals == 10
    err = capsys.readouterr().err
    assert err == f"{path}: rules is read as env.rules, the rule set's one key now (move it there)\n"
    assert load_eval_config(str(path), ["env.rules=standard"]).env.rules == "standard"  # --set after the move
    path.write_text("rules: woburn\nenv: {rules: standard}\n")
    with pytest.raises(ConfigError, match=r"eval.yaml: rules: the rule set is env.rules now, which says 'standard'"):
        load_eval_config(str(path))
    path.write_text("env: {rules: woburn}\n")
    capsys.readouterr()
    assert load_eval_config(str(path)).env.rules == "woburn" and capsys.readouterr().err == ""


def test_migrate_rules_moves_each_kind_s_old_key_and_leaves_the_rest(capsys) -> None:
    old = {"kind": "distill", "data": {"rules": "calls", "hands": 3}, "env": None}
    new = migrate_rules(old, "d.yaml", kind="distill")
    assert new == {"kind": "distill", "data": {"hands": 3}, "env": {"rules": "calls"}}
    assert old["data"] == {"rules": "calls", "hands": 3}  # the caller's dict untouched
    assert capsys.readouterr().err.startswith("d.yaml: data.rules is read as env.rules")
    same = {"rules": "standard", "env": {"rules": "standard"}}
    assert migrate_rules(same, "p.yaml", kind="playouts") == {"env": {"rules": "standard"}}
    capsys.readouterr()
    for data, kind in (({"env": {"rules": "calls"}}, "sb3"), ({"rules": "calls"}, "sb3"), ({"data": 1}, "distill")):
        assert migrate_rules(data, "f.yaml", kind=kind) is data  # nothing to move: no line
    assert capsys.readouterr().err == ""
    with pytest.raises(ConfigError, match="env: expected a mapping"):
        migrate_rules({"rules": "calls", "env": 3}, "f.yaml", kind="eval")


def test_an_old_distill_file_is_read_with_its_rules_at_env_rules(tmp_path, capsys) -> None:
    """A run folder's config.yaml of an older release (``data.rules``, ``extra_data[].rules``) still loads, with
    one line on stderr for each key moved; its data settings (what meta.json holds) are those it had."""
    from training.distill.config import load_distill_config

    path = tmp_path / "config.yaml"
    path.write_text(
        "kind: distill\n"
        "data: {rules: four-5-3-2-2, samples: 3}\n"
        "extra_data: [{name: x, hands: 1, rules: four-5-3-2-2}]\n"
    )
    cfg = load_distill_config(str(path))
    assert cfg.env.rules == "four-5-3-2-2" and cfg.data.samples == 3
    assert cfg.data_settings().rules == cfg.data_settings(cfg.extra_data[0]).rules == "four-5-3-2-2"
    assert cfg.data_settings().record()["samples"] == 3
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"{path}: data.rules is read as env.rules, the rule set's one key now (move it there)",
        f"{path}: extra_data[0].rules is read as env.rules, the rule set's one key now (drop it)",
    ]
    path.write_text("kind: distill\ndata: {rules: four-5-3-2-2}\nextra_data: [{name: x, hands: 1, rules: standard}]\n")
    with pytest.raises(ConfigError, match=r"extra_data\[0\].rules: 'standard', but the run's rule set \(env.rules\)"):
        load_distill_config(str(path))
    with pytest.raises(ConfigError, match="unknown key 'data.rules'"):
        load_distill_config(None, ["data.rules=four-5-3-2-2"])  # --set: the one key only
    path.write_text("kind: distill\nenv: {rules: four-5-3-2-2}\n")
    capsys.readouterr()
    assert load_distill_config(str(path)).data_settings().rules == "four-5-3-2-2" and capsys.readouterr().err == ""


def test_an_old_playouts_file_is_read_with_its_rules_at_env_rules(tmp_path, capsys) -> None:
    from training.distill.config_playouts import load_run_config

    path = tmp_path / "config.yaml"
    path.write_text("kind: playouts\nname: old\nrules: four-5-3-2-2\n")
    cfg = load_run_config(str(path))
    assert cfg.env.rules == "four-5-3-2-2" and cfg.name == "old"
    assert (
        capsys.readouterr().err == f"{path}: rules is read as env.rules, the rule set's one key now (move it there)\n"
    )
    with pytest.raises(ConfigError, match="env.rules"):
        load_run_config(None, ["env.rules=calls"])  # 74 actions: not labelled
