"""Cards (docs/rules.md section 2): ids, text, parsing, printing and bit-set helpers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sm_env.core.cards import (
    CARD_TEXT,
    FULL_DECK,
    NUM_CARDS,
    RANK_LETTERS,
    SUIT_LETTERS,
    SUIT_MASK,
    CardError,
    card_text,
    from_mask,
    make_card,
    mask_text,
    parse_card,
    parse_cards,
    rank_of,
    suit_of,
    texts,
    to_mask,
)


@pytest.mark.parametrize(
    ("text", "card_id"),
    [("2C", 0), ("AC", 12), ("2D", 13), ("AS", 51), ("TH", 2 * 13 + 8), ("JD", 13 + 9), ("QS", 39 + 10), ("KC", 11)],
)
def test_documented_ids(text, card_id):
    # docs/rules.md 2: id = suit * 13 + (rank - 2), suits C D H S, J=11 Q=12 K=13 A=14
    assert parse_card(text) == card_id
    assert card_text(card_id) == text


def test_id_formula_for_every_card():
    ranks = {r: i + 2 for i, r in enumerate("23456789TJQKA")}
    seen = set()
    for suit_index, suit in enumerate("CDHS"):
        for rank_char, rank in ranks.items():
            cid = suit_index * 13 + (rank - 2)
            assert make_card(suit_index, rank) == cid
            assert suit_of(cid) == suit_index
            assert rank_of(cid) == rank
            assert card_text(cid) == rank_char + suit
            assert CARD_TEXT[cid] == rank_char + suit
            seen.add(cid)
    assert seen == set(range(52)) and NUM_CARDS == 52


def test_higher_id_is_higher_card_within_a_suit():
    for suit in range(4):
        ids = [make_card(suit, r) for r in range(2, 15)]
        assert ids == sorted(ids)
        assert [rank_of(c) for c in ids] == list(range(2, 15))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("TH", "TH"),
        ("10H", "TH"),
        ("10h", "TH"),
        ("th", "TH"),
        ("as", "AS"),
        ("  qd ", "QD"),
        ("2c", "2C"),
        ("10S", "TS"),
        ("Jc", "JC"),
        ("kH", "KH"),
    ],
)
def test_parse_text_forms(text, expected):
    assert card_text(parse_card(text)) == expected


def test_parse_ids_and_numpy_ints():
    np = pytest.importorskip("numpy")
    for cid in range(52):
        assert parse_card(cid) == cid
        assert parse_card(np.int64(cid)) == cid
        assert parse_card(CARD_TEXT[cid]) == cid
        assert parse_card(CARD_TEXT[cid].lower()) == cid


@pytest.mark.parametrize("bad", ["", "X", "1H", "11H", "ZH", "AX", "HA", "T", "10", "100H", "A S", "AH5", "♥A"])
def test_bad_text_raises_helpful_card_error(bad):
    with pytest.raises(CardError) as info:
        parse_card(bad)
    message = str(info.value)
    assert repr(bad) in message  # names the offending input
    assert "'TH'" in message  # and shows the expected form


@pytest.mark.parametrize("bad", [-1, 52, 100, 1.5, None, True, False, [1], object()])
def test_bad_ids_raise_card_error(bad):
    with pytest.raises(CardError) as info:
        parse_card(bad)
    assert "0-51" in str(info.value)


def test_card_error_is_value_error():
    assert issubclass(CardError, ValueError)


def test_parse_cards():
    assert parse_cards("AS KS 10h 2c") == [51, 50, 34, 0]
    assert parse_cards(["AS", 0, "td"]) == [51, 0, 21]
    assert parse_cards([]) == []
    with pytest.raises(CardError):
        parse_cards("AS KS XX")


def test_printing():
    assert texts([51, 0, 34]) == ["AS", "2C", "TH"]
    assert texts([]) == []
    assert mask_text(0) == ""
    # grouped by suit, high first: spades, hearts, diamonds, clubs
    assert mask_text(to_mask(parse_cards("2C AC 5H TH AS 3D"))) == "AS TH 5H 3D AC 2C"
    for cid in range(52):
        assert len(card_text(cid)) == 2
        assert card_text(cid)[0] in RANK_LETTERS and card_text(cid)[1] in SUIT_LETTERS


def test_suit_masks_partition_the_deck():
    union = 0
    for s, m in enumerate(SUIT_MASK):
        assert bin(m).count("1") == 13
        assert from_mask(m) == [make_card(s, r) for r in range(2, 15)]
        assert union & m == 0
        union |= m
    assert union == FULL_DECK == (1 << 52) - 1


def test_mask_helpers_examples():
    assert to_mask([]) == 0
    assert from_mask(0) == []
    assert to_mask([0, 51]) == 1 | (1 << 51)
    assert to_mask([3, 3]) == 1 << 3
    # action ids beyond the cards (trumps 52-55) and big masks
    assert from_mask(0xF << 52) == [52, 53, 54, 55]
    assert from_mask((1 << 70) | (1 << 64) | 1) == [0, 64, 70]


@given(st.sets(st.integers(min_value=0, max_value=80)))
def test_mask_round_trip(ids):
    m = to_mask(ids)
    assert from_mask(m) == sorted(ids)
    assert m.bit_count() == len(ids)


@given(st.lists(st.integers(min_value=0, max_value=51), unique=True))
def test_text_round_trip(ids):
    assert parse_cards(" ".join(texts(ids))) == ids
    assert parse_cards(" ".join(t.lower() for t in texts(ids))) == ids
    assert sorted(parse_cards(mask_text(to_mask(ids)).split())) == sorted(ids)
