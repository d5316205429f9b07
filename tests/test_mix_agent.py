"""The agent ``mix`` (agents/mix.py): routing by decision type, seeds, refusals, the evaluator, and the swap
A/B of training/evaluation/strength.py."""

from __future__ import annotations

import json
import os
import random

import pytest

from agents import AgentSpecError, act, make_agent, make_opponent
from agents.mix import DECISION_TYPES, MAX_SPEC, PART_NAMES, MixAgent, decision_types, part_seed, split_mix
from agents.players.base import Agent
from agents.players.heuristic import heuristic_action
from agents.players.random_agent import RandomAgent
from sm_env.core.cards import from_mask
from sm_env.core.game import PHASE_NAMES, PLAY, TRUMP, Game
from sm_env.core.knowledge import player_view
from sm_env.core.rules import RuleSet
from sm_env.records.format import game_record

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Recorder(Agent):
    """Plays a random legal action and records the phase of every decision it is given."""

    def __init__(self, name: str, needs_observation: bool = False) -> None:
        super().__init__(0)
        self.name = name
        self.needs_observation = needs_observation
        self.phases: list[str] = []
        self.observations: list[object] = []

    def act(self, view, observation=None):
        self.phases.append(PHASE_NAMES[view.phase])
        self.observations.append(observation)
        return self.rng.choice(from_mask(view.legal))


def play(agents, rules, seed, max_hands=3, start_balances=None) -> Game:
    """One game of ``agents`` (one per seat, reset from ``seed``); the finished Game."""
    game = Game(rules, seed=seed, max_hands=max_hands, start_balances=start_balances)
    for seat, agent in enumerate(agents):
        agent.reset(seed * 10 + seat)
    while (seat := game.current_player) is not None:
        game.apply(act(agents[seat], player_view(game, seat)))
    return game


# ---------------------------------------------------------------- routing


RULES = ["standard", "6-3-8", "independent", "3-5-9", "9-2-5-variation", "dealer-assigns", "9-5-3-one-card"]
RULES += ["woburn-auction", "calls", "four-5-3-2-2"]


@pytest.mark.parametrize("rules", RULES)
def test_each_part_is_given_only_the_decisions_of_its_type_and_every_type_occurs(rules):
    rule_set = RuleSet.from_any(rules)
    seen: set[str] = set()
    for seed in range(3):
        recorders = [{name: Recorder(name) for name in PART_NAMES} for _ in range(rule_set.num_players)]
        mixes = [MixAgent(parts, {}) for parts in recorders]
        play(mixes, rule_set, seed)
        for parts in recorders:
            assert parts["base"].phases == []  # every type is named: the base decides nothing
            for name, recorder in parts.items():
                assert set(recorder.phases) <= {name}
                seen |= set(recorder.phases)
    assert seen == set(decision_types(rule_set))  # decision_types names exactly the phases that occur
    assert list(decision_types(rule_set)) == sorted(seen, key=decision_types(rule_set).index)


def test_the_base_takes_every_type_not_named_and_only_those():
    parts = {"base": Recorder("base"), "play": Recorder("play"), "trump": Recorder("trump")}
    mixes = [MixAgent(parts, {})] + [MixAgent({"base": Recorder("x")}, {}) for _ in range(2)]
    play(mixes, "standard", 1, start_balances=[2, -1, -1])  # seat 0 sends in the first hand's exchange
    assert set(parts["play"].phases) == {"play"} and set(parts["trump"].phases) == {"trump"}
    assert set(parts["base"].phases) == {"exchange", "discard"}


def test_decision_types_by_rule_set():
    assert decision_types("standard") == ("exchange", "trump", "discard", "play")
    assert decision_types("independent") == ("trump", "discard", "play")
    assert decision_types("6-3-8") == ("exchange", "trump", "play")  # no kitty: no discards
    assert decision_types("calls") == ("trump", "discard", "play")  # the call is the trump decision
    assert decision_types("woburn-auction") == ("bid", "exchange", "trump", "discard", "play")
    assert decision_types("dealer-assigns") == ("assign", "exchange", "trump", "discard", "play")
    assert decision_types("9-5-3-one-card") == ("exchange", "trump", "take", "play")
    assert decision_types("9-2-5-variation") == ("discard", "exchange", "trump", "play")  # its order
    assert set(DECISION_TYPES) == set(PHASE_NAMES) - {"over"}


def test_random_and_heuristic_parts_play_their_own_moves():
    seed = 11
    mix = make_agent("mix:base=random;play=heuristic", seed)
    replica = RandomAgent(seed)  # the base part is seeded with the mix's seed itself
    game = Game("standard", seed=3, max_hands=3)
    mix.reset(seed)
    replica.reset(seed)
    phases = {PLAY: 0, TRUMP: 0}
    differs = 0
    while (seat := game.current_player) is not None:
        view = player_view(game, seat)
        action = act(mix, view)
        if view.phase == PLAY:
            assert action == heuristic_action(view)
        else:
            assert action == replica.act(view)
            differs += action != heuristic_action(view)
        phases[view.phase] = phases.get(view.phase, 0) + 1
        game.apply(action)
    assert phases[PLAY] > 40 and phases[TRUMP] >= 1 and differs > 0  # the base is not the heuristic


def test_a_part_that_needs_the_observation_gets_it_and_the_others_do_not():
    parts = {"base": Recorder("base"), "play": Recorder("play", needs_observation=True)}
    mix = MixAgent(parts, {})
    assert mix.needs_observation
    play([mix, make_agent("heuristic"), make_agent("heuristic")], "standard", 2, max_hands=1)
    assert parts["play"].observations and all(
        o["observation"].shape == (789,) and o["action_mask"].shape == (56,) for o in parts["play"].observations
    )
    assert parts["base"].observations and all(o is None for o in parts["base"].observations)
    assert make_agent("mix:base=heuristic;play=trained").needs_observation
    assert make_agent("mix:base=trained;play=heuristic").needs_observation
    assert not make_agent("mix:base=heuristic;play=random").needs_observation


# ---------------------------------------------------------------- seeds, names


def test_the_same_seed_gives_the_same_game_record_and_another_seed_another():
    spec = "mix:base=random;trump=random;discard=random;play=random"

    def record(seed):
        agents = [make_agent(spec) for _ in range(3)]
        game = Game("standard", seed=5, max_hands=4)
        for seat, agent in enumerate(agents):
            agent.reset(seed + seat)
        while (seat := game.current_player) is not None:
            game.apply(act(agents[seat], player_view(game, seat)))
        return game_record(game)

    assert record(1) == record(1)
    assert record(1) != record(2)


def test_a_mix_of_only_a_base_plays_exactly_as_the_base():
    one = play([make_agent("mix:base=random") for _ in range(3)], "standard", 4)
    two = play([make_agent("random") for _ in range(3)], "standard", 4)
    assert game_record(one) == game_record(two)


def test_every_part_is_reseeded_with_its_own_derived_seed():
    mix = make_agent("mix:base=random;exchange=random;trump=random;play=random", 9)
    seeds = {name: part_seed(9, name) for name in mix.parts}
    assert seeds["base"] == 9 and len(set(seeds.values())) == 4
    assert all(0 <= s < 2**63 for s in seeds.values())
    for name, part in mix.parts.items():  # built with its seed ...
        assert part.rng.random() == random.Random(seeds[name]).random()
    mix.reset(123)
    for name, part in mix.parts.items():  # ... and reset with it
        assert part.rng.random() == random.Random(part_seed(123, name)).random()
    assert part_seed(123, "play") == part_seed(123, "play") != part_seed(124, "play")
    assert part_seed(None, "play") is None


def test_the_name_reads_in_tables():
    assert make_agent("mix:base=heuristic;play=random").name == "mix(heuristic, play=random)"
    assert make_agent("mix: base = trained ; trump = pimc:samples=4,bid=1").name == (
        "mix(trained, trump=pimc:samples=4,bid=1)"
    )


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    "spec, message",
    [
        ("mix:base=heuristic;trick=random", "unknown decision type 'trick'; allowed: base, exchange, trump, discard"),
        ("mix:base=heuristic;play=random;Play=heuristic", "decision type 'play' named twice"),
        ("mix:base=heuristic;base=random", "decision type 'base' named twice"),
        ("mix:base=heuristic;play=human", "mix part play='human': 'human' cannot be part of a mix"),
        ("mix:base=human", "mix part base='human': 'human' cannot be part of a mix"),
        ("mix:base=heuristic;play=mix:base=random", "mix part play='mix:base=random': a mix cannot be part of a mix"),
        ("mix:base=heuristic;play=pimc:samples=0", "mix part play='pimc:samples=0'.*'samples' must be a whole number"),
        ("mix:base=heuristic;play=pimc:samples", "mix part play='pimc:samples'.*key=value pairs"),
        ("mix:base=nobody", "mix part base='nobody': unknown agent 'nobody'; known agents"),
        ("mix:base=ppo:no/such/file.pt", "mix part base='ppo:no/such/file.pt': ppo agent: checkpoint file not found"),
        ("mix:play=heuristic", "needs base=SPEC"),
        ("mix:heuristic", "parts are NAME=SPEC separated by ';'"),
        ("mix:base=heuristic;", "parts are NAME=SPEC separated by ';'"),
        ("mix:base=heuristic;play=", "part 'play' has no agent spec"),
        ("mix:", "parts are NAME=SPEC"),
        ("mix:base=" + "x" * MAX_SPEC, f"a mix spec has at most {MAX_SPEC} characters"),
    ],
)
def test_bad_mix_specs_are_one_clear_error(spec, message):
    with pytest.raises(AgentSpecError, match=message) as info:
        make_agent(spec)
    assert "\n" not in str(info.value) and len(str(info.value)) < 400


def test_split_mix_keeps_each_part_as_written_base_first():
    assert split_mix("play=pimc:samples=16,bid=1; base=ppo:runs/x/p.pt") == {
        "base": "ppo:runs/x/p.pt",
        "play": "pimc:samples=16,bid=1",
    }


def test_check_rules_checks_every_part_and_the_types_named(no_shipped_policy):
    no_shipped_policy("dealer-assigns")
    make_agent("mix:base=heuristic;bid=random").check_rules(RuleSet.from_any("woburn-auction"))
    with pytest.raises(ValueError, match="decision type.s. bid never occur under the rule set 'standard' "):
        make_agent("mix:base=heuristic;bid=random").check_rules(RuleSet.from_any("standard"))
    with pytest.raises(ValueError, match="its decision types: trump, discard, play"):
        make_agent("mix:base=heuristic;exchange=random").check_rules(RuleSet.from_any("independent"))
    with pytest.raises(ValueError, match="mix part play='trained': .*dealer-assigns"):
        make_agent("mix:base=heuristic;play=trained").check_rules(RuleSet.from_any("dealer-assigns"))


def test_a_mix_is_an_opponent_but_never_a_batched_one():
    assert isinstance(make_opponent("mix:base=heuristic;play=random"), MixAgent)
    from training.common.fixed_agents import FixedAgentError, check_fixed_agent

    with pytest.raises(FixedAgentError, match="cannot be a batched opponent .a mix is played"):
        check_fixed_agent("mix:base=heuristic;play=trained", RuleSet.from_any("standard"))


def test_a_tournament_fingerprints_the_policy_files_of_the_parts():
    from training.evaluation.tournament import fingerprint

    assert fingerprint("mix:base=heuristic;play=random") is None
    with_policy = fingerprint("mix:base=heuristic;play=trained")
    assert with_policy is not None and with_policy != fingerprint("mix:base=trained;play=heuristic")


# ---------------------------------------------------------------- the evaluator


def test_evaluate_plays_a_mix_on_the_general_path():
    from training.evaluation.evaluate import evaluate

    same = evaluate(["mix:base=heuristic;play=heuristic", "heuristic"], 3, "hand", 0, 1, progress=False)
    key = ("mix:base=heuristic;play=heuristic", "heuristic")
    assert same.pairwise[key].mean == same.pairwise[key].lo == same.pairwise[key].hi == 0.0
    worse = evaluate(
        ["mix:base=heuristic;play=random", "heuristic"], 3, "hand", 0, 1, start_balances=(-1, -1, 2), progress=False
    )
    assert worse.pairwise[("mix:base=heuristic;play=random", "heuristic")].mean < -0.5
    assert worse.timing["mix:base=heuristic;play=random"]["decisions"] > 100
    with pytest.raises(ValueError, match="human"):
        evaluate(["mix:base=heuristic;play=human", "heuristic"], 1, "hand", 0, 1, progress=False)


# ---------------------------------------------------------------- training/evaluation/strength.py --swap


def _strength():
    from training.evaluation import strength

    return strength


def test_the_swap_of_an_agent_into_itself_changes_nothing_in_any_row(tmp_path, capsys):
    out = tmp_path / "swap.json"
    args = ["--policy", "heuristic", "--swap", "heuristic", "--deals", "0", "--swap-deals", "2", "--workers", "1"]
    assert _strength().main([*args, "--out", str(out)]) == 0
    swap = json.loads(out.read_text())["swap"]
    assert list(swap["types"]) == ["exchange", "trump", "discard", "play"] and swap["start_balances"] == [-1, -1, 2]
    assert swap["types"]["play"]["spec"] == "mix:base=heuristic;play=heuristic"
    for row in [*swap["types"].values(), swap["total"]]:
        assert all(row[k] == {"mean": 0.0, "lo": 0.0, "hi": 0.0} for k in ("dealer", "eldest", "middle", "all"))
    text = capsys.readouterr().out
    assert "| decision type from heuristic | dealer | eldest | middle | all |" in text
    assert "| exchange | +0.000 [+0.000, +0.000] |" in text and "| all (heuristic itself) |" in text


def test_the_swap_of_random_moves_loses_and_first_hands_leave_out_the_exchange(capsys):
    strength = _strength()
    args = ["--policy", "heuristic", "--swap", "random", "--deals", "0", "--swap-deals", "2", "--workers", "1"]
    assert strength.main([*args, "--start-balances", "none"]) == 0
    text = capsys.readouterr().out
    assert "| exchange | - | - | - | not played: no exchange in a first hand" in text
    assert strength.main([*args, "--rules", "calls"]) == 0  # no exchange; the call is the trump row
    rows = [line.split(" | ")[0] for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert rows[2:] == ["| trump", "| discard", "| play", "| all (random itself)"]
    assert strength.main([*args, "--swap", "mix:base=random"]) == 2
    assert "a mix cannot be swapped into a mix" in capsys.readouterr().err
    assert strength.main([*args, "--start-balances", "1,1"]) == 2
    assert "--start-balances 1,1: start_balances must be 3 integers" in capsys.readouterr().err


def test_the_swap_table_is_built_from_the_figures():
    def estimate(mean):
        return {"mean": mean, "lo": mean - 0.1, "hi": mean + 0.1}

    def row(mean):
        return {**{r: estimate(mean) for r in ("dealer", "eldest", "middle", "all")}, "ms_per_decision": 2.5}

    figures = {
        "base": "trained",
        "candidate": "pimc",
        "rules": "standard",
        "mode": "hand",
        "deals": 10,
        "seed": 7,
        "hands": "first hands (no exchange)",
        "table": ["mix", "trained", "heuristic"],
        "roles": ["dealer", "eldest", "middle"],
        "order": ["exchange", "trump", "play"],
        "types": {"trump": {**row(0.25), "wall_seconds": 3.0}, "play": {**row(-0.5), "wall_seconds": 4.0}},
        "skipped": {"exchange": "no exchange in a first hand"},
        "total": {**row(0.125), "wall_seconds": 9.0},
    }
    lines = _strength().swap_lines(figures)
    assert "10 deals x 6 seatings" in lines[0] and "with trained and a heuristic" in lines[0]
    assert lines[2:] == [
        "| decision type from pimc | dealer | eldest | middle | all | ms/decision | wall s |",
        "| --- | --- | --- | --- | --- | ---: | ---: |",
        "| exchange | - | - | - | not played: no exchange in a first hand | | |",
        "| trump | " + " | ".join(["+0.250 [+0.150, +0.350]"] * 4) + " | 2.500 | 3 |",
        "| play | " + " | ".join(["-0.500 [-0.600, -0.400]"] * 4) + " | 2.500 | 4 |",
        "| all (pimc itself) | " + " | ".join(["+0.125 [+0.025, +0.225]"] * 4) + " | 2.500 | 9 |",
    ]
