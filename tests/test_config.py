"""training.sb3.config: the typed schema, its error messages, overrides and saving."""

from __future__ import annotations

import fnmatch
import os

import pytest
import yaml

from training.common.yaml_config import ConfigError, apply_overrides, save_config
from training.evaluation.config import EvalFileConfig, load_eval_config
from training.sb3.config import Config, config_from_dict, describe, load_config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _sb3(path):
    return load_config(path), Config


def _eval(path):
    return load_eval_config(path), EvalFileConfig


def _vector(path):
    """A batched-trainer config. Every preset runs compiled now (configs/selfplay_four, _auction, _calls too), so
    each config's rule set is one the compiled boundary accepts; one it refuses stops the config with that
    boundary's one line (tests/test_ppo_vector.py and tests/test_rule_shapes.py check that)."""
    from sm_env.compiled.support import unsupported
    from sm_env.core.rules import RuleSet
    from training.vector.config import SelfPlayConfig, load_selfplay_config

    with open(path, encoding="utf-8") as handle:
        rules = RuleSet.from_any(yaml.safe_load(handle)["env"]["rules"])
    assert unsupported(rules) == [], path
    return load_selfplay_config(path), SelfPlayConfig


def _dmc(path):
    from training.vector.config import DMCConfig, load_dmc_config

    return load_dmc_config(path), DMCConfig


def _exploit(path):
    from training.vector.exploit import ExploitConfig, load_exploit_config

    return load_exploit_config(path, ["target.agent=heuristic"]), ExploitConfig  # the agent comes as SPEC


def _rllib(path):
    from training.rllib.config import RLlibConfig, load_rllib_config

    return load_rllib_config(path), RLlibConfig


def _real_deal(path):
    from training.distill.config_playouts import RunConfig, load_run_config

    return load_run_config(path), RunConfig


def _leaderboard(path):
    from training.evaluation.leaderboard_page import LeaderboardConfig, load_leaderboard_config

    return load_leaderboard_config(path), LeaderboardConfig


def _distill(path):
    from training.distill import fit

    return fit.load_config(path), fit.DistillConfig


# configs/ file name pattern -> the loader of its trainer; a config file that matches none fails the test below
LOADERS = (
    ("quickstart.yaml", _sb3),
    ("full.yaml", _sb3),
    ("sb3_*.yaml", _sb3),
    ("eval.yaml", _eval),
    ("selfplay*.yaml", _vector),
    ("dmc.yaml", _dmc),
    ("rllib_*.yaml", _rllib),
    ("distill*.yaml", _distill),
    ("exit*.yaml", _distill),  # expert iteration: a distillation config
    ("exploit.yaml", _exploit),
    ("real_deal*.yaml", _real_deal),  # sergeant-major improve --config
    ("scratch_playouts.yaml", _real_deal),  # the same command, from a fresh network
    ("scratch_sb3.yaml", _sb3),  # from scratch through the SB3 route
    ("scratch_rllib.yaml", _rllib),  # and through the RLlib route
    ("leaderboard.yaml", _leaderboard),  # sergeant-major leaderboard --config
    ("presets.yaml", _leaderboard),  # the same command: docs/presets.md
)
SHIPPED = sorted(os.listdir(os.path.join(ROOT, "configs")))


@pytest.mark.parametrize("name", [n for n in SHIPPED if n.endswith((".yaml", ".yml"))])
def test_every_shipped_config_loads_with_its_loader(name):
    loaders = [loader for pattern, loader in LOADERS if fnmatch.fnmatch(name, pattern)]
    assert len(loaders) == 1, f"configs/{name}: no loader (or several) in tests/test_config.py LOADERS"
    cfg, kind = loaders[0](os.path.join(ROOT, "configs", name))  # loads and validates, or raises
    assert isinstance(cfg, kind)


def test_every_loader_pattern_still_names_a_shipped_config():
    assert all(any(fnmatch.fnmatch(n, pattern) for n in SHIPPED) for pattern, _ in LOADERS)


@pytest.mark.parametrize(
    "data, words",
    [
        ({"ppo": {"learnin_rate": 1e-3}}, ["unknown key 'ppo.learnin_rate'", "learning_rate"]),
        ({"bogus": 1}, ["unknown key 'bogus'", "allowed keys"]),
        ({"ppo": {"learning_rate": "fast"}}, ["ppo.learning_rate", "expected a number", "'fast'"]),
        ({"train": {"n_envs": 2.5}}, ["train.n_envs", "whole number"]),
        ({"train": {"progress_bar": "yes"}}, ["train.progress_bar", "true or false"]),
        ({"ppo": {"learning_rate": -1}}, ["ppo.learning_rate", "must be > 0"]),
        ({"ppo": {"gamma": 1.5}}, ["ppo.gamma", "(0, 1]"]),
        ({"env": {"episode": "round"}}, ["env.episode", "'hand', 'game'", "'round'"]),
        ({"env": {"learner_seats": ["dealer", "banker"]}}, ["env.learner_seats", "dealer, eldest, middle"]),
        ({"env": {"rules": "no-such-rules"}}, ["env.rules", "preset"]),
        ({"env": {"rules": "four-5-3-2-2", "learner_seats": ["middle"]}}, ["env.learner_seats", "third, fourth"]),
        (
            {"env": {"learner_seats": "banker"}},
            ["env.learner_seats", "unknown role 'banker'", "dealer, eldest, middle"],
        ),
        ({"env": {"rules": "four-5-3-2-2"}, "eval": {"start_balances": [1, 0, -1]}}, ["eval.start_balances", "be 4"]),
        ({"env": {"rules": "calls", "exchange_start": 0.3}}, ["env.exchange_start", "must be 0", "'calls'"]),
        ({"env": {"reward": "result"}}, ["env.reward", "episode: game"]),
        ({"opponents": {"mix": {"random": 0}}}, ["opponents.mix", "positive sum"]),
        ({"ppo": {"batch_size": 10**6}}, ["ppo.batch_size", "n_steps * train.n_envs"]),
    ],
)
def test_bad_configs_give_clear_errors(data, words):
    with pytest.raises(ConfigError) as err:
        config_from_dict(data, "my.yaml")
    message = str(err.value)
    assert message.startswith("my.yaml: ")
    for word in words:
        assert word in message, (word, message)


def test_config_files_and_overrides(tmp_path):
    with pytest.raises(ConfigError, match="config file not found: .*missing.yaml"):
        load_config(str(tmp_path / "missing.yaml"))
    path = tmp_path / "c.yaml"
    path.write_text("ppo:\n  learning_rate: 3e-4\ntrain:\n  total_timesteps: 1e6\n")
    cfg = load_config(
        str(path),
        ["ppo.learning_rate=1e-4", "opponents.mix={random: 1, heuristic: 3}", "env.learner_seats=[dealer, middle]"],
    )
    assert cfg.ppo.learning_rate == 1e-4 and cfg.train.total_timesteps == 1_000_000
    assert cfg.opponents.mix == {"random": 1.0, "heuristic": 3.0}
    assert cfg.env.learner_seats == ["dealer", "middle"]
    with pytest.raises(ConfigError, match="key=value"):
        apply_overrides({}, ["ppo.learning_rate"])
    with pytest.raises(ConfigError, match="unknown key 'ppo.lr'"):
        load_config(str(path), ["ppo.lr=1"])
    path.write_text("- just\n- a list\n")
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load_config(str(path))


@pytest.mark.parametrize(
    "data, words",
    [
        ({"train": {"n_envs": True}}, ["train.n_envs", "whole number", "True"]),
        ({"ppo": {"learning_rate": True}}, ["ppo.learning_rate", "expected a number"]),
        ({"train": {"progress_bar": 1}}, ["train.progress_bar", "true or false"]),
        ({"name": 5}, ["name", "expected a text"]),
        ({"ppo": {"net_arch": [64, "wide"]}}, ["ppo.net_arch", "list of whole numbers"]),
        ({"ppo": {"net_arch": []}}, ["ppo.net_arch", "non-empty list"]),
        ({"ppo": {"target_kl": "high"}}, ["ppo.target_kl", "expected a number or null"]),
        ({"ppo": {"target_kl": 0}}, ["ppo.target_kl", "must be > 0"]),
        ({"eval": {"start_balances": [1, 1, 1]}}, ["eval.start_balances", "summing to 0"]),
        ({"opponents": {"mix": {"random": "lots"}}}, ["opponents.mix", "expected a number"]),
        ({"env": "hand"}, ["env", "mapping of keys to values"]),
        ({"env": {"max_hands": 0}}, ["env.max_hands", "must be > 0", "got 0"]),
    ],
)
def test_more_bad_values_name_the_key_the_value_and_what_is_allowed(data, words):
    with pytest.raises(ConfigError) as err:
        config_from_dict(data, "my.yaml")
    message = str(err.value)
    assert message.startswith("my.yaml: ")
    for word in words:
        assert word in message, (word, message)


def test_numbers_written_as_text_and_null_sections_are_accepted():
    cfg = config_from_dict({"ppo": {"learning_rate": "3e-4", "target_kl": None}, "train": {"total_timesteps": "1e6"}})
    assert cfg.ppo.learning_rate == 3e-4 and cfg.ppo.target_kl is None
    assert cfg.train.total_timesteps == 1_000_000 and isinstance(cfg.train.total_timesteps, int)
    assert config_from_dict({"env": None}).env == Config().env


def test_a_set_typo_is_blamed_on_the_set_option_not_the_file(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("ppo:\n  learning_rate: 3e-4\n")
    with pytest.raises(ConfigError) as err:
        load_config(str(path), ["ppo.lerning_rate=1e-4"])
    message = str(err.value)
    assert message.startswith("--set ppo.lerning_rate=1e-4: unknown key 'ppo.lerning_rate'"), message
    assert "did you mean 'learning_rate'" in message and str(path) not in message
    with pytest.raises(ConfigError, match=r"^--set train.n_envs=0: train.n_envs: must be > 0"):
        load_config(str(path), ["train.n_envs=0"])
    # a bad value in the file is still the file's fault, even with other overrides
    path.write_text("ppo:\n  gamma: 2\n")
    with pytest.raises(ConfigError, match=rf"^{path}: ppo.gamma"):
        load_config(str(path), ["train.n_envs=4"])


def test_eval_config_defaults_overrides_and_errors(tmp_path):
    spec = load_eval_config(None, ["eval.final_deals=7"])
    assert isinstance(spec, EvalFileConfig) and spec.eval.final_deals == 7 and spec.env.rules == "standard"
    with pytest.raises(ConfigError, match=r"^--set eval.mode=round: eval.mode: expected one of 'hand', 'game'"):
        load_eval_config(None, ["eval.mode=round"])


def test_save_config_round_trips_atomically(tmp_path):
    cfg = load_config(os.path.join(ROOT, "configs", "quickstart.yaml"), ["ppo.learning_rate=1e-4"])
    path = tmp_path / "config.yaml"
    path.write_text("old")
    (tmp_path / "config.yaml.tmp").mkdir()  # a fixed temporary name would collide with this
    save_config(cfg, str(path))
    assert load_config(str(path)) == cfg
    assert yaml.safe_load(path.read_text())["ppo"]["learning_rate"] == 1e-4
    assert sorted(os.listdir(tmp_path)) == ["config.yaml", "config.yaml.tmp"]  # no temporary file left


def test_describe_lists_every_field_with_its_documentation():
    text = describe()
    for section in ("env", "opponents", "pretrain", "ppo", "train", "eval"):
        for name, field in type(getattr(Config(), section)).model_fields.items():
            assert f"{section}.{name} = " in text and field.description in text


def test_the_sb3_and_the_vector_ppo_sections_are_one_section_with_their_own_defaults():
    from training.common.ppo import PPOSection
    from training.sb3.config import PPOConfig
    from training.vector.config import VectorPPOConfig

    shared = list(PPOSection.model_fields)
    assert len(shared) == 15 and list(PPOConfig.model_fields) == shared
    assert list(VectorPPOConfig.model_fields)[:15] == shared
    for name in shared:
        for section in (PPOConfig, VectorPPOConfig):
            mine, base = section.model_fields[name], PPOSection.model_fields[name]
            assert (mine.annotation, mine.metadata) == (base.annotation, base.metadata), (section, name)
    sb3, vector = PPOConfig(), VectorPPOConfig()
    assert (sb3.n_steps, sb3.batch_size, sb3.net_arch, sb3.activation) == (256, 512, [256, 256], "tanh")
    assert (vector.n_steps, vector.batch_size, vector.net_arch, vector.activation) == (64, 4096, [512, 256], "relu")
    assert "train.n_envs" in PPOConfig.model_fields["n_steps"].description
    assert "env.num_games" in VectorPPOConfig.model_fields["n_steps"].description
    with pytest.raises(ConfigError, match="ppo.clip_range: must be > 0"):
        load_config(None, ["ppo.clip_range=0"])


def test_the_rllib_trainer_alone_refuses_four_players():
    pytest.importorskip("pydantic")
    from training.rllib.config import rllib_config_from_dict

    with pytest.raises(ConfigError, match="the RLlib trainer plays three players; 'four-5-3-2-2' has 4"):
        rllib_config_from_dict({"env": {"rules": "four-5-3-2-2"}}, "r.yaml")
    with pytest.raises(ConfigError, match="eval.start_balances: start_balances must be 3 integers"):
        rllib_config_from_dict({"eval": {"start_balances": [1, 0, -1, 0]}}, "r.yaml")
    assert config_from_dict({"env": {"rules": "four-5-3-2-2"}}).env.rules == "four-5-3-2-2"  # SB3 trains them
