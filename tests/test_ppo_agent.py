"""agents/players/ppo_agent.py: malformed policy files give one clear PolicyLoadError, from the loader, from
agents.make_agent, from `sergeant-major eval` and from `sergeant-major train --evaluate`, never a traceback."""

from __future__ import annotations

import io
import json
import re
import zipfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import not_model_files  # noqa: E402

from agents import AgentSpecError, make_agent  # noqa: E402
from agents.players import ppo_agent  # noqa: E402
from agents.players.base import Agent  # noqa: E402
from agents.players.ppo_agent import META_ENTRY, NumpyPolicy, PolicyLoadError, PPOAgent, export_policy  # noqa: E402
from sm_cli import main as cli_main  # noqa: E402
from sm_env.core.game import NUM_ACTIONS, Game  # noqa: E402
from sm_env.core.knowledge import player_view  # noqa: E402
from sm_env.observation import OBSERVATION_SIZE  # noqa: E402


def _state(hidden: int = 8) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return {
        "mlp_extractor.policy_net.0.weight": torch.randn(hidden, OBSERVATION_SIZE, generator=gen),
        "mlp_extractor.policy_net.0.bias": torch.randn(hidden, generator=gen),
        "action_net.weight": torch.randn(NUM_ACTIONS, hidden, generator=gen),
        "action_net.bias": torch.randn(NUM_ACTIONS, generator=gen),
    }


def _sb3_zip(path, state, meta) -> str:
    """An SB3-like model zip: a policy.pth of tensors and the plain-JSON metadata entry."""
    raw = io.BytesIO()
    torch.save(state, raw)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("policy.pth", raw.getvalue())
        if meta is not None:
            archive.writestr(META_ENTRY, meta if isinstance(meta, str) else json.dumps(meta))
    return str(path)


def _missing_bias(state):
    del state["mlp_extractor.policy_net.0.bias"]
    return state


def _sparse(state):
    state["action_net.weight"] = state["action_net.weight"].to_sparse()
    return state


def _wrong_shape(state):
    state["action_net.bias"] = state["action_net.bias"][:10]
    return state


def _too_few_inputs(state):
    state["mlp_extractor.policy_net.0.weight"] = state["mlp_extractor.policy_net.0.weight"][:, :100]
    return state


def _text_weight(state):
    state["action_net.bias"] = "not numbers"
    return state


MALFORMED = {
    "meta is a list": (lambda s: s, [1, 2, 3], "must hold a JSON object"),
    "meta is not JSON": (lambda s: s, "{oops", "not valid JSON"),
    "missing bias": (_missing_bias, {"activation": "tanh"}, "missing 'mlp_extractor.policy_net.0.bias'"),
    "sparse tensor": (_sparse, {"activation": "tanh"}, "only dense tensors"),
    "wrong bias shape": (_wrong_shape, {"activation": "tanh"}, "inconsistent shapes"),
    "wrong input size": (_too_few_inputs, {"activation": "tanh"}, "takes 100 inputs"),
    "activation not a name": (lambda s: s, {"activation": ["tanh"]}, "unknown activation"),
    "meta nested deep": (lambda s: s, "[" * 50_000 + "]" * 50_000, "nested more than 32 levels deep"),
    "meta nested 40 deep": (lambda s: s, '{"a": ' + "[" * 40 + "]" * 40 + "}", "nested more than 32 levels deep"),
    "meta with a NaN": (lambda s: s, '{"activation": "tanh", "x": NaN}', "NaN is not a JSON value"),
    "meta with 400 digits": (lambda s: s, '{"players": ' + "9" * 400 + "}", "a whole number of 400 digits"),
    "more weights than its net_arch": (lambda s: _state(400), {"net_arch": [8]}, "policy.pth entry declares"),
    "layers not its net_arch": (lambda s: s, {"net_arch": [16]}, "its layers are [8]; its metadata declares net_arch"),
}


@pytest.fixture(params=sorted(MALFORMED))
def malformed(request, tmp_path):
    change, meta, message = MALFORMED[request.param]
    return _sb3_zip(tmp_path / "model.zip", change(_state()), meta), message


def test_a_well_formed_zip_loads_and_plays(tmp_path):
    agent = PPOAgent(_sb3_zip(tmp_path / "model.zip", _state(), {"activation": "relu"}), seed=1)
    assert isinstance(agent, Agent) and agent.policy.net_arch == [8] and agent.policy.activation == "relu"
    view = player_view(Game(seed=3), Game(seed=3).current)
    assert view.legal >> agent.act(view) & 1


def test_the_loader_names_what_is_wrong(malformed):
    path, message = malformed
    with pytest.raises(PolicyLoadError, match="model.zip") as info:
        PPOAgent(path)
    assert message in str(info.value)


def test_a_plain_list_state_dict_in_a_pt_export_is_refused(tmp_path):
    path = tmp_path / "bad.pt"
    torch.save({"format": "sergeant-major-policy/1", "state_dict": [1, 2]}, path)
    with pytest.raises(PolicyLoadError, match="expected a state dict"):
        PPOAgent(path)


def _declare_size(path: str, entry: str, size: int) -> None:
    """Rewrite the size the zip's central directory declares for ``entry`` (its data stays as it is)."""
    data = bytearray(open(path, "rb").read())
    at = data.index(b"PK\x01\x02")
    while data[at + 46 : at + 46 + len(entry)] != entry.encode():
        at = data.index(b"PK\x01\x02", at + 4)
    data[at + 24 : at + 28] = size.to_bytes(4, "little")
    open(path, "wb").write(bytes(data))


def test_the_size_of_the_weights_is_checked_before_they_are_read(tmp_path, monkeypatch):
    # a policy.pth declaring 3 GiB: refused from the zip's directory, nothing read
    path = _sb3_zip(tmp_path / "huge.zip", _state(), None)
    _declare_size(path, "policy.pth", 3 << 30)
    with pytest.raises(PolicyLoadError, match=f"policy.pth entry declares {3 << 30} bytes; a policy holds at most"):
        PPOAgent(path)
    # the declared network bounds the entry: 400 hidden units where sm_policy.json says 8
    fits = _sb3_zip(tmp_path / "fits.zip", _state(400), {"net_arch": [400]})
    assert PPOAgent(fits).policy.net_arch == [400]
    # the cap on any policy file, SB3 zip or .pt export (1.3 MB of weights against a 64 kB cap)
    monkeypatch.setattr(ppo_agent, "MAX_POLICY_BYTES", 1 << 16)
    with pytest.raises(PolicyLoadError, match="declares .* bytes; the network of sm_policy.json"):
        PPOAgent(fits)
    export = tmp_path / "big.pt"
    export_policy(NumpyPolicy.from_state_dict(_state(400)), str(export))
    with pytest.raises(PolicyLoadError, match=r"big.pt: \d+ bytes; a policy file holds at most 65536"):
        PPOAgent(export)


def test_make_agent_turns_it_into_an_agent_spec_error(malformed):
    path, message = malformed
    with pytest.raises(AgentSpecError) as info:
        make_agent(f"ppo:{path}")
    assert message in str(info.value)


def _one_error_line(err: str, prefix: str, message: str) -> None:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(prefix) and message in lines[0], err


def test_eval_prints_one_line(malformed, tmp_path, capsys):
    path, message = malformed
    argv = ["eval", "--agents", f"ppo:{path}", "random", "--deals", "1", "--workers", "1", "--no-progress"]
    assert cli_main(argv + ["--out", str(tmp_path / "ev")]) == 2
    _one_error_line(capsys.readouterr().err, "sergeant-major eval: error: ", message)


def test_train_evaluate_prints_one_line(malformed, tmp_path, capsys):
    path, message = malformed
    assert cli_main(["train", "--evaluate", path, "--set", "eval.final_deals=1"]) == 2
    _one_error_line(capsys.readouterr().err, "sergeant-major train: error: ", message)


def test_export_round_trip_keeps_the_weights(tmp_path):
    policy = NumpyPolicy.from_state_dict(_state())
    export_policy(policy, str(tmp_path / "p.pt"))
    again = PPOAgent(tmp_path / "p.pt").policy
    obs = np.linspace(-1, 1, OBSERVATION_SIZE, dtype=np.float32)
    assert np.allclose(again.logits(obs), policy.logits(obs))


# ---------------------------------------------------------------------------- hostile files


class _Hostile:
    """Unpickling this would run code: a policy file must never be unpickled beyond tensors and plain values."""

    def __reduce__(self):
        return (print, ("pwned",))


def _hostile_files(tmp_path) -> dict[str, str]:
    import pickle

    torch.save({"format": "sergeant-major-policy/1", "state_dict": _Hostile()}, tmp_path / "class.pt")
    (tmp_path / "class.pkl").write_bytes(pickle.dumps(_Hostile()))
    zipped = _sb3_zip(tmp_path / "class.zip", _state(), {"activation": "tanh"})
    with zipfile.ZipFile(zipped, "w") as archive:  # an SB3-like zip whose policy.pth is a pickled class
        archive.writestr("policy.pth", pickle.dumps(_Hostile()))
    return {name: str(tmp_path / name) for name in ("class.pt", "class.pkl", "class.zip")}


@pytest.mark.parametrize("name", ["class.pt", "class.pkl", "class.zip"])
def test_a_file_holding_a_class_is_refused_in_one_line_without_torchs_advice(name, tmp_path, capsys):
    path = _hostile_files(tmp_path)[name]
    with pytest.raises(PolicyLoadError, match="not a plain policy file") as info:
        PPOAgent(path)
    assert "\n" not in str(info.value) and "weights_only" not in str(info.value)
    with pytest.raises(AgentSpecError, match="cannot be loaded safely"):
        make_agent(f"ppo:{path}")
    argv = ["eval", "--agents", f"ppo:{path}", "random", "--deals", "1", "--workers", "1", "--no-progress"]
    assert cli_main(argv + ["--out", str(tmp_path / "ev")]) == 2
    _one_error_line(capsys.readouterr().err, "sergeant-major eval: error: ", "not a plain policy file")
    assert cli_main(["train", "--evaluate", path, "--set", "eval.final_deals=1"]) == 2
    captured = capsys.readouterr()
    _one_error_line(captured.err, "sergeant-major train: error: ", "not a plain policy file")
    assert "weights_only" not in captured.err and "pwned" not in captured.out + captured.err


# ---------------------------------------------------------------------------- paths that are no policy file

NOT_POLICIES = ("a character device", "a directory", "text", "an empty file", "a cut policy")


@pytest.mark.parametrize("case", NOT_POLICIES)
def test_a_path_that_is_no_policy_file_says_what_it_found(case, tmp_path, capsys):
    cases = not_model_files(tmp_path, "agents/policies/standard_v0.pt")
    if case not in cases:
        pytest.skip(f"no {case} on this system")
    path, found = cases[case]
    with pytest.raises(PolicyLoadError) as info:
        PPOAgent(path)
    message = str(info.value)
    assert path in message and found in message and "\n" not in message, message
    assert "not found" not in message and "Error" not in message  # neither "file not found" nor an IndexError
    for spec in (f"ppo:{path}", f"pimc:rollout=policy,policy={path}"):
        with pytest.raises(AgentSpecError, match=re.escape(message)):
            make_agent(spec)
    argv = ["eval", "--agents", f"ppo:{path}", "random", "random", "--deals", "1", "--workers", "1"]
    assert cli_main(argv + ["--no-progress", "--out", str(tmp_path / "ev")]) == 2
    _one_error_line(capsys.readouterr().err, "sergeant-major eval: error: ", found)


def test_a_zip_of_other_entries_is_no_policy_file(tmp_path):
    with zipfile.ZipFile(tmp_path / "notes.zip", "w") as archive:
        archive.writestr("notes.txt", "hello")
    with pytest.raises(PolicyLoadError, match=r"notes.zip: not a policy file: a zip holding 'notes.txt', without"):
        PPOAgent(tmp_path / "notes.zip")
    (tmp_path / "noise.pt").write_bytes(bytes(range(1, 64)))
    with pytest.raises(PolicyLoadError, match=r"noise.pt: not a policy file: no zip header \(it starts with 01 02"):
        PPOAgent(tmp_path / "noise.pt")


# ---------------------------------------------------------------------------- rule sets


@pytest.mark.parametrize("rules", ["dealer-assigns", "9-5-3-one-card"])
def test_a_policy_on_rules_it_cannot_play_fails_up_front_in_one_line(rules, tmp_path, capsys, no_shipped_policy):
    no_shipped_policy(rules)
    argv = ["eval", "--agents", "trained", "heuristic", "--rules", rules, "--deals", "1", "--workers", "1"]
    assert cli_main(argv + ["--no-progress", "--out", str(tmp_path / "ev")]) == 2
    err = capsys.readouterr().err
    _one_error_line(err, "sergeant-major eval: error: ", f"no shipped policy plays the rule set {rules!r}")
    assert "the rule sets with one are standard_v7.pt: standard, " in err and not (tmp_path / "ev").exists()


def test_check_rules_accepts_the_rule_sets_of_its_observation(no_shipped_policy):
    from sm_env.core.rules import RuleSet

    no_shipped_policy("dealer-assigns")
    agent = make_agent("trained")
    for name in ("standard", "woburn", "9-2-5"):
        agent.check_rules(RuleSet.from_any(name))
    with pytest.raises(PolicyLoadError, match="'dealer-assigns' .*74 actions"):
        agent.check_rules(RuleSet.from_any("dealer-assigns"))


# ---------------------------------------------------------------------------- the torch bridge


def test_the_torch_bridge_round_trips_an_actor():
    from torch import nn

    from agents.players.ppo_agent import actor_state, policy_from_torch, policy_into_torch

    torch.manual_seed(0)
    actor = nn.Sequential(nn.Linear(OBSERVATION_SIZE, 12), nn.ReLU(), nn.Linear(12, 8), nn.ReLU())
    head = nn.Linear(8, NUM_ACTIONS)
    policy = policy_from_torch([actor, head], "relu")
    assert policy.net_arch == [12, 8] and set(actor_state([actor, head])) == set(policy.arrays())
    obs = torch.linspace(-1, 1, OBSERVATION_SIZE)
    with torch.no_grad():
        expected = head(actor(obs)).numpy()
        head.bias.add_(1.0)  # the policy is a copy: later training does not move it
    assert np.allclose(policy.logits(obs.numpy()), expected, atol=1e-5)
    fresh = [nn.Sequential(nn.Linear(OBSERVATION_SIZE, 12), nn.ReLU(), nn.Linear(12, 8), nn.ReLU()), nn.Linear(8, 56)]
    policy_into_torch(policy, fresh)
    with torch.no_grad():
        assert np.allclose(fresh[1](fresh[0](obs)).numpy(), expected, atol=1e-5)
    with pytest.raises(PolicyLoadError, match="do not fit the policy's layers"):
        policy_into_torch(policy, [nn.Linear(OBSERVATION_SIZE, 12), nn.Linear(12, NUM_ACTIONS)])
