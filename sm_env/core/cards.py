"""Cards: ids, text, suits, ranks and bit-set helpers.

Card id (docs/rules.md section 2): ``id = suit * 13 + (rank - 2)`` with suits
0=C, 1=D, 2=H, 3=S and ranks 2..14 (J=11, Q=12, K=13, A=14). So 0 = 2C,
12 = AC, 13 = 2D, 51 = AS. Within a suit a higher id is a higher card.

A set of cards is an ``int`` bit set: bit ``id`` is set when the card is in
the set. Suit ``s`` occupies bits ``13*s .. 13*s+12``.

Text form: rank character then suit character (``TH``, ``AS``); parsers also
accept ``10H`` and lower case.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

NUM_CARDS = 52
NUM_SUITS = 4
SUIT_LETTERS = "CDHS"
RANK_LETTERS = "23456789TJQKA"
SUIT_SYMBOLS = "\u2663\u2666\u2665\u2660"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")

SUIT_MASK: tuple[int, ...] = tuple(0x1FFF << (13 * s) for s in range(NUM_SUITS))
FULL_DECK = (1 << NUM_CARDS) - 1

CARD_TEXT: tuple[str, ...] = tuple(RANK_LETTERS[c % 13] + SUIT_LETTERS[c // 13] for c in range(NUM_CARDS))


def deck_of(rules: object) -> int:
    """The cards in play under a rule set, as a bit set: all 52, without 2C under ``no_kitty_51``."""
    return FULL_DECK & ~1 if getattr(rules, "no_kitty_51", False) else FULL_DECK


class CardError(ValueError):
    """A card given as text or number that is not one of the 52 cards."""


def suit_of(card: int) -> int:
    """Suit 0-3 of a card id."""
    return card // 13


def rank_of(card: int) -> int:
    """Rank 2-14 of a card id."""
    return card % 13 + 2


def make_card(suit: int, rank: int) -> int:
    """Card id from suit 0-3 and rank 2-14."""
    return suit * 13 + rank - 2


def card_text(card: int) -> str:
    """Two-character text of a card id, e.g. ``TH``."""
    return CARD_TEXT[card]


def parse_card(card: int | str) -> int:
    """Card id from an id or a text such as ``TH``, ``10h`` or ``as``."""
    if isinstance(card, str):
        text = card.strip().upper()
        if len(text) == 3 and text.startswith("10"):
            text = "T" + text[2]
        if len(text) == 2 and text[0] in RANK_LETTERS and text[1] in SUIT_LETTERS:
            return SUIT_LETTERS.index(text[1]) * 13 + RANK_LETTERS.index(text[0])
        raise CardError(
            f"unknown card {card!r}: write a rank 2-9, T (or 10), J, Q, K, A then a suit C, D, H, S, e.g. 'TH' or '10h'"
        )
    try:
        value = operator.index(card)  # ints and numpy ints, not floats
    except TypeError:
        raise CardError(f"unknown card {card!r}: expected a card id 0-51 or a text like 'TH'") from None
    if isinstance(card, bool) or not 0 <= value < NUM_CARDS:
        raise CardError(f"unknown card {card!r}: card ids are integers 0-51")
    return value


def parse_cards(cards: Iterable[int | str]) -> list[int]:
    """Card ids from an iterable of ids or texts."""
    if isinstance(cards, str):
        cards = cards.split()
    return [parse_card(c) for c in cards]


def to_mask(cards: Iterable[int]) -> int:
    """Bit set of card ids."""
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


# _CHUNK_BITS[k][m]: the bit positions set in the 13-bit chunk value m placed at
# bit 13*k. Five chunks cover every action id (cards 0-51, trumps 52-55, ...).
_CHUNK_BITS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(13 * k + b for b in range(13) if m >> b & 1) for m in range(1 << 13)) for k in range(5)
)


def from_mask(mask: int) -> list[int]:
    """Ids in a bit set (cards, or action ids), ascending."""
    if mask >> 65:
        ids = []
        while mask:
            low = mask & -mask
            ids.append(low.bit_length() - 1)
            mask ^= low
        return ids
    c0, c1, c2, c3, c4 = _CHUNK_BITS
    return [
        *c0[mask & 0x1FFF],
        *c1[mask >> 13 & 0x1FFF],
        *c2[mask >> 26 & 0x1FFF],
        *c3[mask >> 39 & 0x1FFF],
        *c4[mask >> 52 & 0x1FFF],
    ]


def lowest(mask: int) -> int:
    """The lowest id in a non-empty bit set (-1 for an empty one)."""
    return (mask & -mask).bit_length() - 1


def highest(mask: int) -> int:
    """The highest id in a non-empty bit set (-1 for an empty one)."""
    return mask.bit_length() - 1


def texts(cards: Iterable[int]) -> list[str]:
    """Texts of card ids, in the given order."""
    return [CARD_TEXT[c] for c in cards]


def mask_text(mask: int) -> str:
    """Cards of a bit set as space-separated text, grouped by suit, high first."""
    return " ".join(CARD_TEXT[c] for c in reversed(from_mask(mask)))
