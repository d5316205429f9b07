"""The rule set: defaults (docs/rules.md 1-8), presets and options (section 9), validation."""

from __future__ import annotations

import dataclasses

import pytest

from sm_env.core.rules import OPTION_NAMES, PRESETS, STANDARD, RulesError, RuleSet


def test_standard_defaults_follow_rules_1_to_8():
    r = RuleSet()
    assert r.name == "standard"
    assert r.quotas == (8, 5, 3)  # dealer, eldest, middle
    assert sum(r.quotas) == r.tricks_per_hand == 16
    assert r.hand_size == 16 and r.kitty_size == 4
    assert 3 * r.hand_size + r.kitty_size == 52
    assert r.win_tricks == 12
    assert r.players == r.num_players == 3
    off = [k for k in OPTION_NAMES if k not in ("quotas", "win_tricks", "players")]
    assert all(getattr(r, k) in (False, None) for k in off), {k: getattr(r, k) for k in off}
    assert r == STANDARD


def test_options_lists_every_option():
    opts = STANDARD.options()
    assert set(opts) == {"name", *OPTION_NAMES}
    assert opts["name"] == "standard"
    assert opts["quotas"] == [8, 5, 3]
    assert opts["win_tricks"] == 12
    assert not hasattr(STANDARD, "to_dict")  # one name for one thing: options()


def test_from_any_accepts_none_str_ruleset_dict():
    assert RuleSet.from_any(None) == STANDARD
    assert RuleSet.from_any("standard") == STANDARD
    assert RuleSet.from_any("  Standard ") == STANDARD
    custom = RuleSet(max_exchange=3)
    assert RuleSet.from_any(custom) is custom
    assert RuleSet.from_any({}) == STANDARD
    assert RuleSet.from_any({"max_exchange": 3}).max_exchange == 3
    assert RuleSet.from_any({"quotas": [9, 2, 5]}).quotas == (9, 2, 5)
    assert RuleSet.from_any({"pickup_before_discard": None}).pickup_before_discard is False


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_are_valid_and_round_trip(name):
    preset = RuleSet.from_any(name)
    assert preset.name == name
    assert sum(preset.quotas) == preset.tricks_per_hand
    assert RuleSet.from_any(preset.options()) == preset
    # the record's rules dict (name + every option) gives back the same rule set
    assert RuleSet.from_any(dict(preset.options())).options() == preset.options()


def test_preset_contents():
    canadian = RuleSet.from_any("canadian")
    assert canadian.quotas == (9, 5, 2) and canadian.pickup_before_discard and canadian.target_score == 10
    assert canadian.win_tricks is None  # replaced by the target score (docs/rules.md 9)
    six = RuleSet.from_any("6-3-8")
    assert six.no_kitty_51 and six.quotas == (8, 6, 3)
    assert six.tricks_per_hand == 17 and six.hand_size == 17 and six.kitty_size == 0
    assert RuleSet.from_any("woburn").max_exchange == 3
    assert RuleSet.from_any("independent").no_exchange
    assert RuleSet.from_any("all-sixteen").win_tricks == 16
    assert RuleSet.from_any("margin-5").win_margin == 5 and RuleSet.from_any("margin-5").win_tricks is None
    assert RuleSet.from_any("fixed-9").fixed_hands == 9


def test_names_describe_the_options():
    assert RuleSet(max_exchange=2).name == "custom"
    # options that are exactly a preset's take that preset's name
    assert RuleSet(max_exchange=3).name == "woburn"
    assert RuleSet(quotas=(8, 5, 3)).name == "standard"
    assert STANDARD.replace(no_exchange=True, max_exchange=None, quotas=(9, 5, 2)).name == "custom"
    assert STANDARD.replace(no_exchange=True).name == "independent"
    assert RuleSet(no_exchange=True).replace(no_exchange=False).name == "standard"
    # a preset name with an option changed no longer describes the rule set
    assert RuleSet.from_any({"name": "standard", "win_tricks": 13}).name == "custom"
    assert RuleSet.from_any({"name": "standard", "no_exchange": True}).name == "independent"
    assert RuleSet.from_any({"name": "woburn", "max_exchange": 2}).name == "custom"
    assert RuleSet.from_any({"name": "Woburn"}).name == "woburn"
    assert RuleSet.from_any({"name": "custom"}).name == "standard"
    # a preset name in a dict starts from that preset
    assert RuleSet.from_any({"name": "woburn"}) == PRESETS["woburn"]
    assert RuleSet.from_any({"name": "canadian", "target_score": 15}).quotas == (9, 5, 2)


def test_win_tricks_default_depends_on_other_end_conditions():
    assert RuleSet(target_score=10).win_tricks is None
    assert RuleSet(target_score=10, win_tricks=12).win_tricks == 12
    assert RuleSet(fixed_hands=9).win_tricks is None
    assert RuleSet(dealer_makes_quota=True).win_tricks is None
    assert RuleSet(no_exchange=True).win_tricks == 12


def test_rule_set_is_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        STANDARD.quotas = (9, 5, 2)  # type: ignore[misc]


def test_rules_error_is_value_error():
    assert issubclass(RulesError, ValueError)


@pytest.mark.parametrize(
    ("rules", "needle"),
    [
        ({"no_such_option": 1}, "no_such_option"),
        ({"pickup": True}, "pickup"),
        ("no-such-preset", "no-such-preset"),
        (42, "int"),
        (["standard"], "list"),
        ({"name": 5}, "name"),
    ],
)
def test_unknown_options_and_inputs(rules, needle):
    with pytest.raises(RulesError) as info:
        RuleSet.from_any(rules)
    assert needle in str(info.value)


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"pickup_before_discard": 1}, "pickup_before_discard"),
        ({"no_exchange": "yes"}, "no_exchange"),
        ({"max_exchange": "3"}, "max_exchange"),
        ({"max_exchange": 2.5}, "max_exchange"),
        ({"win_tricks": True}, "win_tricks"),
        ({"target_score": 10.0}, "target_score"),
        ({"quotas": 16}, "quotas"),
        ({"quotas": [8, 8]}, "quotas"),
        ({"quotas": [8, 5, 3, 0]}, "quotas"),
        ({"quotas": ["8", "5", "3"]}, "quotas"),
        ({"quotas": [9, 8, -1]}, "quotas"),
        ({"quotas": [8.0, 5, 3]}, "quotas"),
        ({"quotas": [True, 12, 3]}, "quotas"),
    ],
)
def test_wrong_types(options, needle):
    with pytest.raises(RulesError) as info:
        RuleSet.from_any(options)
    assert needle in str(info.value)
    with pytest.raises(RulesError):
        RuleSet(**options)


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"quotas": [8, 5, 2]}, "sum"),  # 15 != 16 tricks
        ({"quotas": [9, 5, 3]}, "sum"),
        ({"no_kitty_51": True, "quotas": [8, 5, 3]}, "17"),  # 17 tricks a hand there
        ({"trump_after_kitty": True}, "pickup_before_discard"),
        ({"no_kitty_51": True, "pickup_before_discard": True}, "no_kitty_51"),
        ({"no_exchange": True, "max_exchange": 3}, "max_exchange"),
        ({"target_symmetric": True}, "target_score"),
        ({"max_exchange": 0}, "max_exchange"),
        ({"max_exchange": 17}, "max_exchange"),
        ({"win_tricks": 0}, "win_tricks"),
        ({"win_tricks": 17}, "win_tricks"),
        ({"win_margin": -1}, "win_margin"),
        ({"target_score": 0}, "target_score"),
        ({"fixed_hands": 0}, "fixed_hands"),
    ],
)
def test_impossible_combinations(options, needle):
    with pytest.raises(RulesError) as info:
        RuleSet.from_any(options)
    assert needle in str(info.value)


def test_valid_combinations_near_the_limits():
    assert RuleSet(trump_after_kitty=True, pickup_before_discard=True).trump_after_kitty
    assert RuleSet(no_kitty_51=True).quotas == (8, 6, 3)
    assert RuleSet(max_exchange=16).max_exchange == 16
    assert RuleSet(win_tricks=16).win_tricks == 16
    assert RuleSet(target_score=10, target_symmetric=True).target_symmetric
    assert RuleSet(quotas=(16, 0, 0)).quotas == (16, 0, 0)


# ---------------------------------------------------------------------- unclear inputs get clear errors


@pytest.mark.parametrize("quotas", [{8, 5, 3}, {8: 1, 5: 1, 3: 1}, "853", 853])
def test_quotas_must_be_an_ordered_list(quotas):
    with pytest.raises(RulesError, match="ordered list"):
        RuleSet(quotas=quotas)
    with pytest.raises(RulesError, match="ordered list"):
        RuleSet.from_any({"quotas": quotas})


def test_a_rules_dict_with_mixed_key_types_is_a_rules_error():
    with pytest.raises(RulesError, match="option names must be strings"):
        RuleSet.from_any({"quotas": [8, 5, 3], 1: True})


@pytest.mark.parametrize("name", [5, 1.5, ["standard"]])
def test_a_name_that_is_not_text_is_a_rules_error(name):
    with pytest.raises(RulesError, match="'name' must be a string"):
        RuleSet(name=name)


def test_num_actions_is_decided_once_and_leaves_equality_hash_and_copies_alone():
    import copy
    import pickle

    fresh, used = RuleSet(dealer_assigns_quotas=True), RuleSet(dealer_assigns_quotas=True)
    assert used.num_actions == 74 and RuleSet().num_actions == 56
    assert "num_actions" in vars(used)  # cached on the rule set: read on every action and observation
    assert used == fresh and hash(used) == hash(fresh) and repr(used) == repr(fresh)
    assert used.options() == fresh.options()
    assert pickle.loads(pickle.dumps(used)) == fresh and copy.deepcopy(used).num_actions == 74
