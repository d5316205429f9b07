"""The compiled engine's one support boundary (sm_env.compiled.support): every RuleSet field classified."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from sm_env.compiled import support
from sm_env.core.rules import PRESETS, SECTION_10_OPTIONS, RulesError, RuleSet

FIELDS = {field.name for field in dataclasses.fields(RuleSet)}


def test_every_ruleset_field_is_mapped_or_refused_and_never_both() -> None:
    assert set(support.MAPPED) | set(support.REFUSED) == FIELDS
    assert not set(support.MAPPED) & set(support.REFUSED)
    assert support.unclassified() == []


def test_a_new_field_is_detected_and_refused_by_name() -> None:
    assert support.unclassified([*FIELDS, "new_option"]) == ["new_option"]

    @dataclasses.dataclass(frozen=True)
    class Extended(RuleSet):
        new_option: bool = False

    extended = Extended()
    assert support.supports(RuleSet()) and not support.supports(extended)  # fails closed, even at the default
    assert support.unsupported(extended) == ["new_option (not classified for the compiled engine)"]


def test_the_mapped_columns_are_the_kernels_rule_vector() -> None:
    from sm_env.compiled import kernels

    named = {column for _, columns in support.MAPPED.values() for column in columns}
    columns = {name for name in dir(kernels) if name.startswith("K_")}
    assert named <= columns
    # the rest is not a rule option: the hand limit and the dealing mode of the caller
    assert columns - named == {"K_MAX_HANDS", "K_GIVEN_DEALS"}


@pytest.mark.parametrize(
    "rules, named",
    [
        (RuleSet(players=4, target_score=2**31), [f"target_score: {2**31}"]),  # four players themselves are played
        (RuleSet(target_score=2**31), [f"target_score: {2**31}"]),  # beyond the kernels' int32 scores
        (RuleSet(fixed_hands=10**30), [f"fixed_hands: {10**30}"]),
    ],
)
def test_unsupported_values_are_named(rules: RuleSet, named: list[str]) -> None:
    assert support.unsupported(rules) == named
    assert not support.supports(rules)


def test_presets_are_supported_exactly_when_their_options_are_mapped() -> None:
    presets = support.supported_presets()
    assert "standard" in presets and "woburn" in presets
    for name, preset in PRESETS.items():
        refused = [option for option in SECTION_10_OPTIONS if getattr(preset, option) and option in support.REFUSED]
        assert (name in presets) == (not refused), name
    for name in ("dealer-makes-quota-up", "chips-12", "9-2-5-variation", "3-5-9", "woburn-auction", "calls"):
        assert name in presets  # section 10, played compiled
    assert "four-5-3-2-2" in presets and "four-6-3-2-1" in presets  # four players (10.6)
    assert presets == sorted(PRESETS)  # every preset


@pytest.mark.parametrize("option", ["auction", "calls"])
def test_every_rule_set_the_auction_and_the_calls_allow_is_supported(option: str) -> None:
    others = [{name: True} for name in SECTION_10_OPTIONS if name != option]
    others += [
        {"pickup_before_discard": True},
        {"pickup_before_discard": True, "trump_after_kitty": True},
        {"max_exchange": 2},
        {"no_exchange": True},
        {"win_margin": 4},
        {"target_score": 10, "target_symmetric": True},
        {"dealer_makes_quota": "up"},
        {"fixed_hands": 9},
        {"quotas": [7, 5, 4]},
    ]
    allowed = 0
    for other in others:
        try:
            rules = RuleSet(**{option: True, **other})
        except RulesError:
            continue  # a combination the rules refuse (docs/rules.md 10.2, 10.3)
        allowed += 1
        assert support.supports(rules), (option, other, support.unsupported(rules))
    assert allowed >= 6


def test_every_rule_set_four_players_allow_is_supported() -> None:
    """Four players with each option they combine with, alone and in pairs (docs/rules.md 10.6 refuses the rest)."""
    singles = [
        {"pickup_before_discard": True},
        {"trump_after_kitty": True},
        {"max_exchange": 1},
        {"no_exchange": True},
        {"win_tricks": None, "win_margin": 3},
        {"win_tricks": None, "target_score": 10, "target_symmetric": True},
        {"dealer_makes_quota": True},
        {"dealer_makes_quota": "up"},
        {"win_tricks": None, "fixed_hands": 8},
        {"quotas": [6, 3, 2, 1]},
        {"quotas": [0, 0, 12, 0]},
    ] + [{name: True} for name in SECTION_10_OPTIONS]
    allowed = refused = 0
    for a in range(len(singles)):
        for b in range(a, len(singles)):
            try:
                rules = RuleSet(players=4, **{**singles[a], **singles[b]})
            except RulesError:
                refused += 1  # an option that needs three players (or a pair the rules refuse)
                continue
            allowed += 1
            assert support.supports(rules), (singles[a], singles[b], support.unsupported(rules))
    assert allowed >= 100 and refused > 0
    for option in ("no_kitty_51", "one_card_kitty", "kitty_trick", "calls", "auction", "dealer_assigns_quotas"):
        with pytest.raises(RulesError, match=option):
            RuleSet(players=4, **{option: True})


@pytest.mark.parametrize("value", [True, False, "up"])
def test_every_dealer_makes_quota_value_is_supported(value: object) -> None:
    assert support.supports(RuleSet(dealer_makes_quota=value))


def test_every_compiled_consumer_asks_the_one_boundary() -> None:
    from agents.search import rollout_kernel
    from sm_env.compiled import batch, single

    assert single.supports is support.supports
    assert rollout_kernel.unsupported is support.unsupported  # the search asks it too, and nothing else
    assert rollout_kernel.supports is support.supports
    assert batch.unsupported_options(RuleSet(players=4)) == []  # kept for the names docs use
    assert batch.unsupported_options(RuleSet(auction=True, chips=True)) == []  # section 10 runs compiled
    assert batch.VectorGame(2, rules=RuleSet(players=4), seed=0).num_players == 4
    with pytest.raises(ValueError, match="target_score"):
        batch.VectorGame(2, rules=RuleSet(target_score=2**40), seed=0)
    with pytest.raises(ValueError, match="target_score"):
        rollout_kernel.RolloutBatch(RuleSet(target_score=2**40), 1)


def test_the_compiled_search_plays_four_players() -> None:
    from agents.search import rollout, rollout_kernel

    four = RuleSet(players=4)
    assert support.supports(four) and rollout_kernel.supports(four) and rollout_kernel.unsupported(four) == []
    assert rollout.compiled_rollouts(four) is rollout_kernel.RolloutBatch  # pimc and ismcts search compiled
    assert rollout.compiled_rollouts(RuleSet()) is rollout_kernel.RolloutBatch
    assert rollout_kernel.RolloutBatch(four, 1).rules.num_players == 4


def test_support_loads_no_numba() -> None:
    code = "import sys, sm_env.compiled.support; assert 'numba' not in sys.modules, 'numba loaded'"
    subprocess.run([sys.executable, "-c", code], check=True)
