"""Compiled kernels of :mod:`sm_env.compiled.batch`: the rules of :mod:`sm_env.core.game`
over struct-of-arrays state, one row per game (numba ``njit``, cached).

The pure-Python :class:`sm_env.core.game.Game` is the readable reference; every
function here mirrors the method of the same name there and is checked
against it decision by decision (``tests/test_vector.py`` and
``benchmarks/lockstep_vector.py``). The observation is that of
:func:`sm_env.observation.encode` of :func:`sm_env.core.knowledge.player_view`,
bit for bit.

One set of kernels for three and four players (docs/rules.md 10.6): the seat count is data,
``cfg[K_PLAYERS]``; every seat loop runs over ``range(n)``, seats move on by :func:`_after` and are
seen relative to a player by :func:`_rel` (``(s + k) % n`` and ``(s - seat) % n`` without a division),
and every per-seat column has room for ``MAX_SEATS`` (a three-player game leaves the fourth at 0). The
observation, the hot path, is written by one body (:func:`_encode_seats`) that :func:`encode_row`
inlines twice, with n = 3 and n = 4 as constants, so numba folds each copy's loops and offsets
(three players observe as fast as before the seat count became data). The auction, the calls and
``dealer_assigns_quotas`` are three-player options (RuleSet refuses them with four): their tables are
by the three roles (``THREE_SEATS``).

State of game ``i`` (absolute seats 0 .. n - 1):

- ``st[i, S_*]`` (int32): phase, player to act, dealer, hand number, trick,
  tricks won, quotas, scores, previous balances, exchange plan, the call
  and the calls left (``calls``), the auction (``auction``), ...;
- ``cm[i, C_*]`` (uint64 bit sets, bit = card id): hands, kitty, cards
  played, discards, exchange sent / returned per (sender, receiver) pair (at sender * MAX_SEATS + receiver),
  kitty cards shown per seat; with ``cfg[K_GIVEN_DEALS]`` (:mod:`sm_env.compiled.single`)
  also the deal of the next hand, which the caller provides instead of the generator;
- ``rng[i]`` (uint64): the slot's SplitMix64 state; ``rng_start[i, 0]`` its
  value when the game in the slot began (enough to re-deal the game), and
  ``rng_start[i, 1]`` that of the game that ended last in the slot.

Rule set: an int64 vector ``cfg[K_*]`` built by :func:`rules_config`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from sm_env.core.game import (
    ALL_CALLS,
    ASSIGN,
    ASSIGN_ACTION_BASE,
    ASSIGNMENTS,
    AUCTION_QUOTAS,
    BID,
    BID_ACTION_BASE,
    DISCARD,
    EXCHANGE,
    MIZ,
    MIZ_MAXIMA,
    NT,
    OVER,
    PASS_ACTION,
    PLAY,
    TAKE,
    TRUMP,
    TRUMP_ACTION_BASE,
    TWO_OF_DIAMONDS,
    hand_order,
)
from sm_env.core.rules import RuleSet
from sm_env.observation import OBSERVATION_SIZE, OFFSETS, observation_size, seat_features

loop_kernel = njit(cache=True, _nrt=False)
"""The decorator of the kernels called from Python (a loop over the slots): compiled without numba's reference
counting (NRT). With it, every array handed to an inlined helper and every row view (``out[i]``) costs an
atomic increment and decrement of the array's count, which the pruning pass leaves in these loops: measured,
half of a step's time and a tenth of an observation's. Nothing they call allocates (scratch is on the stack:
:func:`_stack_int64`), and the arrays they are given live in the caller for the whole call.
"""
parallel_kernel = njit(cache=True, parallel=True, _nrt=False)  # the same over the slots in numba's threads


@intrinsic
def _stack_int64(typingctx, size):
    """A 1-D int64 array of ``size`` (a constant) uninitialised entries in the calling function's stack frame: the
    scratch of a helper (a deck, a figure per seat) without an allocation, so that nothing a loop kernel calls
    needs NRT. Never returned or kept past the function that made it."""
    if not isinstance(size, types.IntegerLiteral):
        raise TypingError(f"_stack_int64: the size must be a constant, got {size}")
    count = size.literal_value
    array_type = types.Array(types.int64, 1, "C")

    def codegen(context, builder, signature, args):
        data = cgutils.alloca_once(builder, context.get_value_type(types.int64), size=count)
        array = make_array(array_type)(context, builder)
        intp = context.get_value_type(types.intp)
        populate_array(array, data=data, shape=[intp(count)], strides=[intp(8)], itemsize=intp(8), meminfo=None)
        return array._getvalue()

    return array_type(size), codegen


# ---------------------------------------------------------------------------- layout

MAX_SEATS = 4
"""Seats the state has room for: every per-seat column holds MAX_SEATS entries, of which a game uses the first
``cfg[K_PLAYERS]`` (3, or 4 with ``players: 4``, docs/rules.md 10.6); the others stay 0."""
MAX_ROUNDS = MAX_SEATS - 1  # exchange rounds of a hand: one per up player
MAX_TARGETS = MAX_SEATS - 1  # receivers of one round: the down players
PAIRS = MAX_SEATS * MAX_SEATS  # (sender, receiver) pairs of the exchange, at sender * MAX_SEATS + receiver
THREE_SEATS = 3  # the auction, the calls and dealer_assigns_quotas are three-player options (RuleSet refuses them
#                  with four): their tables are by the three roles

# int32 state columns
S_PHASE = 0
S_CUR = 1
S_DEALER = 2
S_HAND_NO = 3
S_FIRST_DEALER = 4
S_LEADER = 5
S_LED = 6
S_TRUMP = 7
S_TRICK_LEN = 8
S_TRICK = 9  # MAX_SEATS: cards of the open trick in play order
S_TRICKS_PLAYED = S_TRICK + MAX_SEATS
S_TW = S_TRICKS_PLAYED + 1  # MAX_SEATS: tricks won this hand by seat
S_Q = S_TW + MAX_SEATS  # MAX_SEATS: quotas by seat
S_SC = S_Q + MAX_SEATS  # MAX_SEATS: running scores by seat
S_HAS_PREV = S_SC + MAX_SEATS
S_PB = S_HAS_PREV + 1  # MAX_SEATS: previous hand's balances by seat
S_PICKED = S_PB + MAX_SEATS
S_DISC_COUNT = S_PICKED + 1
S_VOID = S_DISC_COUNT + 1  # MAX_SEATS: 4-bit suit sets
S_EX_NROUNDS = S_VOID + MAX_SEATS
S_EX_ROUND = S_EX_NROUNDS + 1
S_EX_SENDER = S_EX_ROUND + 1  # MAX_ROUNDS: sender of round r
S_EX_NT = S_EX_SENDER + MAX_ROUNDS  # MAX_ROUNDS: receivers in round r
S_EX_RECV = S_EX_NT + MAX_ROUNDS  # MAX_ROUNDS * MAX_TARGETS: receiver of round r, target t at MAX_TARGETS * r + t
S_EX_CNT = S_EX_RECV + MAX_ROUNDS * MAX_TARGETS  # the same: count of round r, target t
S_EX_TARGET = S_EX_CNT + MAX_ROUNDS * MAX_TARGETS
S_EX_PEND = S_EX_TARGET + 1  # MAX_TARGETS: cards chosen so far for target t of the current round
S_EX_STARTED = S_EX_PEND + MAX_TARGETS  # PAIRS: count of the exchange of a pair once its first card is chosen, else 0
S_STAGE = S_EX_STARTED + PAIRS  # index into the hand order (cfg[K_ORDER]) of the stage being played; -1 before
S_UP_AT = S_STAGE + 1  # MAX_SEATS: trick (0 = first, -1 = the kitty trick) in which a seat won its (quota + 1)-th
#                        trick, else 52
S_PUP = S_UP_AT + MAX_SEATS  # MAX_SEATS: S_UP_AT of the previous hand (all 52 in hand 1): first_up_exchanges_first
S_QKNOWN = S_PUP + MAX_SEATS  # 1 once the hand's quotas are known (0 while the dealer has to assign them)
S_TAKER = S_QKNOWN + 1  # one_card_kitty: the seat that decided on the face-up card, -1 before
S_PUT_OUT = S_TAKER + 1  # one_card_kitty: the card it put out of play to take it, -1 (declined, or not decided)
S_CALL = S_PUT_OUT + 1  # calls: the hand's call (0-3 a suit, 4 NT, 5 Miz), -1 before it
S_CALLS_LEFT = S_CALL + 1  # MAX_SEATS: by seat, the 6-bit set of calls (actions 52 + k) the seat may make as dealer
#                            (calls: those it has not made yet; without calls the four suits, never used up)
S_AUC_FIRST = S_CALLS_LEFT + MAX_SEATS  # auction: the seat that bids first (Game.auction_first)
S_AUC_BID = S_AUC_FIRST + 1  # MAX_SEATS: auction: the highest bid of each seat, 0 for none
S_AUC_PASSED = S_AUC_BID + MAX_SEATS  # auction: bit set of the seats that have passed
S_AUC_HIGH = S_AUC_PASSED + 1  # auction: the highest bid, 0 before any
S_AUC_HIGH_SEAT = S_AUC_HIGH + 1  # auction: its bidder (after the auction: hand 1's dealer), -1 before any
S_PASSED_OUT = S_AUC_HIGH_SEAT + 1  # auction: passed-out deals so far (counted in S_HAND_NO, not as hands played)
S_LOG_LEN = S_PASSED_OUT + 1
S_WINNERS = S_LOG_LEN + 1  # bit set of winning seats (0 while nobody has won)
S_TRUNCATED = S_WINNERS + 1
S_FIN_LOG_LEN = S_TRUNCATED + 1  # the game that just ended in the slot: actions, hands
S_FIN_HANDS = S_FIN_LOG_LEN + 1
S_FIN_WINNERS = S_FIN_HANDS + 1
S_FIN_TRUNCATED = S_FIN_WINNERS + 1
NUM_S = S_FIN_TRUNCATED + 1 + (S_FIN_TRUNCATED + 1) % 2  # (even: the row is a whole number of uint64 words,
#                                                          sm_env.compiled.single)

# uint64 card-set columns
C_HAND = 0  # MAX_SEATS
C_KITTY = C_HAND + MAX_SEATS
C_PLAYED = C_KITTY + 1  # MAX_SEATS
C_DISCARDS = C_PLAYED + MAX_SEATS
C_SENT = C_DISCARDS + 1  # PAIRS: sender * MAX_SEATS + receiver
C_RET = C_SENT + PAIRS  # PAIRS: returned to sender by receiver, at sender * MAX_SEATS + receiver
C_SHOWN = C_RET + PAIRS  # MAX_SEATS: kitty cards shown to a seat
C_NEXT_HAND = C_SHOWN + MAX_SEATS  # MAX_SEATS: with K_GIVEN_DEALS, the deal of the next hand by seat (kept when
#                                    a hand starts)
C_NEXT_KITTY = C_NEXT_HAND + MAX_SEATS  # the kitty of that deal
NUM_C = C_NEXT_KITTY + 1

# rule set vector
K_PICKUP = 0  # (these two for the record: the hand order, K_ORDER, plays them)
K_TRUMP_AFTER_KITTY = 1
K_Q = 2  # MAX_SEATS: quotas by role (dealer, eldest, middle; with four players dealer, eldest, third, fourth)
K_NO_EXCHANGE = K_Q + MAX_SEATS
K_MAX_EXCHANGE = K_NO_EXCHANGE + 1  # -1: none (same for every optional number below)
K_WIN_TRICKS = K_MAX_EXCHANGE + 1
K_WIN_MARGIN = K_WIN_TRICKS + 1
K_TARGET = K_WIN_MARGIN + 1
K_TARGET_SYM = K_TARGET + 1
K_DEALER_MAKES = K_TARGET_SYM + 1  # 0 off, 1 at least its quota (true), 2 more than its quota ("up")
K_FIXED = K_DEALER_MAKES + 1
K_NO_KITTY_51 = K_FIXED + 1
K_TRICKS = K_NO_KITTY_51 + 1  # tricks counted in a hand (what the quotas sum to)
K_HAND_SIZE = K_TRICKS + 1  # cards dealt to a seat: the tricks played
K_KITTY_SIZE = K_HAND_SIZE + 1
K_MAX_HANDS = K_KITTY_SIZE + 1
K_GIVEN_DEALS = K_MAX_HANDS + 1  # 1: a hand starts with the deal in C_NEXT_* (the caller puts it there), not rng's
K_CHIPS = K_GIVEN_DEALS + 1
K_FIRST_UP = K_CHIPS + 1  # first_up_exchanges_first
K_KITTY_TRICK = K_FIRST_UP + 1
K_NSTAGES = K_KITTY_TRICK + 1  # stages of a hand before the play (Game's hand_order) ...
K_ORDER = K_NSTAGES + 1  # 8: ... their ST_* codes in order
K_ASSIGN = K_ORDER + 8  # dealer_assigns_quotas
K_NUM_ACTIONS = K_ASSIGN + 1  # the rule set's action space: 56 or 74
K_OBS_SIZE = K_NUM_ACTIONS + 1  # its observation length: 789, 791 with 74 actions (900 one_card_kitty, 809 auction,
#                                 816 calls), 1016 with four players
K_ONE_CARD = K_OBS_SIZE + 1  # one_card_kitty: the kitty (C_KITTY) is the face-up card
K_AUCTION = K_ONE_CARD + 1  # auction: hand 1 is dealt after the Woburn auction (phase BID)
K_CALLS = K_AUCTION + 1  # calls: the dealer calls a suit, NT or Miz, each once a game; 18 hands
K_PLAYERS = K_CALLS + 1  # the seats at the table: 3 or 4 (every seat loop runs over range(cfg[K_PLAYERS]))
NUM_K = K_PLAYERS + 1

HANDS_WITH_CALLS = 6 * THREE_SEATS  # calls: every seat makes each of its six calls once

LEGAL_SHIFT_ASSIGN = 16
"""A legal set is one uint64 word of actions ``shift`` and up: 0 but in the assign and bid phases, whose actions
68-73 (58-67) are bits 52-57 (42-51) (:func:`legal_shift`)."""

# stage codes of cfg[K_ORDER] (the stages of sm_env.core.game.hand_order)
ST_ASSIGN, ST_EXCHANGE, ST_SEND, ST_RETURN, ST_TRUMP, ST_KITTY, ST_DISCARD, ST_TAKE = range(8)
STAGE_CODES = {
    "assign": ST_ASSIGN,
    "exchange": ST_EXCHANGE,
    "send": ST_SEND,
    "return": ST_RETURN,
    "trump": ST_TRUMP,
    "kitty": ST_KITTY,
    "discard": ST_DISCARD,
    "take": ST_TAKE,
}

# The observation layout by seat count (sm_env.observation.seat_features): _OBS3[F_*] / _OBS4[F_*] is the offset of
# a feature with 3 / 4 seats, [F_BASE] the length before the 74-action entries. Tuples, not an array: numba makes
# them constants, so each inlined copy of the observation kernel writes at fixed offsets (with an array the offsets
# are loads, and LLVM, unable to prove an index non-negative, turned the zeroing loop into scatter stores).
_FEATURE_NAMES = tuple(name for name, _ in seat_features(3))
(
    F_HAND, F_PLAYED, F_TRICK, F_GAVE, F_GOT, F_SHOWN, F_DISCARDS, F_KITTY, F_TRUMP, F_LED, F_PHASE, F_ROLE,
    F_QUOTAS, F_TW, F_HS, F_VOIDS, F_PREV, F_SCORES, F_COUNTS, F_TO_SEND, F_DISC_LEFT, F_TRICKS_PLAYED,
    F_KITTY_TAKEN, F_TO_ACT, F_LEADER, F_HAND_NO, F_BASE,
) = range(len(_FEATURE_NAMES) + 1)  # fmt: skip


def _layout(n: int) -> tuple[int, ...]:
    """The offsets of the features of ``seat_features(n)`` in order, then their total length (at F_BASE)."""
    offsets = []
    offset = 0
    for index, (name, size) in enumerate(seat_features(n)):
        assert name == _FEATURE_NAMES[index]
        offsets.append(offset)
        offset += size
    return (*offsets, offset)


_OBS3 = _layout(3)
_OBS4 = _layout(MAX_SEATS)
assert _OBS3[:F_BASE] == tuple(OFFSETS[name] for name in _FEATURE_NAMES) and _OBS3[F_BASE] == OBSERVATION_SIZE
_ASSIGNMENTS = np.array(ASSIGNMENTS, dtype=np.int64)  # action 68 + a gives role r the quota cfg[K_Q + [a, r]]
# _AUCTION_QUOTAS[bid]: hand 1's quotas by role (dealer = the winning bid, eldest, middle), bids 8-16
_AUCTION_QUOTAS = np.zeros((17, 3), dtype=np.int64)
for _bid, (_eldest, _middle) in AUCTION_QUOTAS.items():
    _AUCTION_QUOTAS[_bid] = (_bid, _eldest, _middle)
_MIZ_MAXIMA = np.array(MIZ_MAXIMA, dtype=np.int64)  # a misère hand's maxima by role

_ONE = np.uint64(1)
# _BYTE_BITS_F32[b] / _BYTE_BITS_I8[b]: the 8 bits of byte b, lowest first, as 0/1 entries
_BYTE_BITS_F32 = np.array([[(b >> k) & 1 for k in range(8)] for b in range(256)], dtype=np.float32)
_BYTE_BITS_I8 = np.array([[(b >> k) & 1 for k in range(8)] for b in range(256)], dtype=np.int8)
# Observation scales as multiplications: float32(x * (1 / d)) equals the reference's float32(x / d) for every whole
# x with |x| < 2**22 (tests/test_vector.py checks it), and a multiplication is several times cheaper than a division.
_BY10, _BY17, _BY18, _BY20, _BY100 = 1.0 / 10.0, 1.0 / 17.0, 1.0 / 18.0, 1.0 / 20.0, 1.0 / 100.0
_SUIT_MASKS = np.array([0x1FFF << (13 * s) for s in range(4)], dtype=np.uint64)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_GATHER = np.uint64(0x0102040810204080)  # eight 0/1 bytes times this: byte j is bit 56 + j (random_legal)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def rules_config(rules: RuleSet, max_hands: int | None, given_deals: bool = False) -> np.ndarray:
    """The int64 rule vector of a rule set (optional numbers as -1 when off); ``given_deals``: hands are dealt
    from the C_NEXT_* columns instead of the slot's generator."""

    def opt(value: int | None) -> int:
        return -1 if value is None else int(value)

    cfg = np.zeros(NUM_K, dtype=np.int64)
    cfg[K_PICKUP] = rules.pickup_before_discard
    cfg[K_TRUMP_AFTER_KITTY] = rules.trump_after_kitty
    cfg[K_Q : K_Q + rules.num_players] = rules.quotas
    cfg[K_NO_EXCHANGE] = rules.no_exchange
    cfg[K_MAX_EXCHANGE] = opt(rules.max_exchange)
    cfg[K_WIN_TRICKS] = opt(rules.win_tricks)
    cfg[K_WIN_MARGIN] = opt(rules.win_margin)
    cfg[K_TARGET] = opt(rules.target_score)
    cfg[K_TARGET_SYM] = rules.target_symmetric
    cfg[K_DEALER_MAKES] = 2 if rules.dealer_makes_quota == "up" else int(rules.dealer_makes_quota is True)
    cfg[K_FIXED] = opt(rules.fixed_hands)
    cfg[K_NO_KITTY_51] = rules.no_kitty_51
    cfg[K_TRICKS] = rules.tricks_per_hand
    cfg[K_HAND_SIZE] = rules.hand_size
    cfg[K_KITTY_SIZE] = rules.kitty_size
    cfg[K_MAX_HANDS] = opt(max_hands)
    cfg[K_GIVEN_DEALS] = given_deals
    cfg[K_CHIPS] = rules.chips
    cfg[K_FIRST_UP] = rules.first_up_exchanges_first
    cfg[K_KITTY_TRICK] = rules.kitty_trick
    order = hand_order(rules)
    cfg[K_NSTAGES] = len(order)
    for index, stage in enumerate(order):
        cfg[K_ORDER + index] = STAGE_CODES[stage]
    cfg[K_ASSIGN] = rules.dealer_assigns_quotas
    cfg[K_NUM_ACTIONS] = rules.num_actions
    cfg[K_OBS_SIZE] = observation_size(rules)
    cfg[K_ONE_CARD] = rules.one_card_kitty
    cfg[K_AUCTION] = rules.auction
    cfg[K_CALLS] = rules.calls
    cfg[K_PLAYERS] = rules.num_players
    return cfg


# ---------------------------------------------------------------------------- bits and random numbers


@njit(cache=True, inline="always")
def _bit(card):
    return _ONE << np.uint64(card)


@njit(cache=True, inline="always")
def _top(mask):
    """Highest card id in a non-empty bit set."""
    return 63 - leading_zeros(mask)


@njit(cache=True, inline="always")
def _count(mask):
    """Number of cards in a bit set (SWAR popcount)."""
    m = mask - ((mask >> np.uint64(1)) & np.uint64(0x5555555555555555))
    m = (m & np.uint64(0x3333333333333333)) + ((m >> np.uint64(2)) & np.uint64(0x3333333333333333))
    m = (m + (m >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((m * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True, inline="always")
def mix64(z):
    """The SplitMix64 output function of a uint64."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _next(rng, i):
    """Next SplitMix64 number of slot i."""
    s = rng[i] + _GOLDEN
    rng[i] = s
    return mix64(s)


@njit(cache=True, inline="always")
def _below(rng, i, n):
    """A number 0..n-1 from slot i's generator: the top 32 bits scaled to n (no division)."""
    return int(((_next(rng, i) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@njit(cache=True, inline="always")
def _after(seat, k, n):
    """The seat ``k`` places clockwise after ``seat`` (0 <= k < n) at a table of ``n``: (seat + k) % n, no division."""
    s = seat + k
    return s - n if s >= n else s


@njit(cache=True, inline="always")
def _rel(seat, observer, n):
    """``seat`` relative to ``observer`` (0 itself, 1 left, ...; both seats 0..n-1): (seat - observer) % n."""
    d = seat - observer
    return d + n if d < 0 else d


@njit(cache=True)
def slot_states(seed, num_games):
    """Initial generator state of every slot: mix64(mix64(seed) ^ mix64(i + 1))."""
    out = np.empty(num_games, dtype=np.uint64)
    base = mix64(np.uint64(seed))
    for i in range(num_games):
        out[i] = mix64(base ^ mix64(np.uint64(i + 1)))
    return out


# ---------------------------------------------------------------------------- game flow (mirrors Game)


@njit(cache=True)
def _deal(rng, i, cfg, deck):
    """Shuffle (Fisher-Yates from the top) and deal into ``deck``: seat 0, 1, 2 then the kitty."""
    n = 52
    first = 0
    if cfg[K_NO_KITTY_51]:
        first = 1  # 2C is removed
    for k in range(n - first):
        deck[k] = k + first
    m = n - first
    for k in range(m - 1, 0, -1):
        j = _below(rng, i, k + 1)
        t = deck[k]
        deck[k] = deck[j]
        deck[j] = t
    return m


@njit(cache=True)
def start_game(i, st, cm, rng, rng_start, cfg):
    """A new game in slot i: first dealer from the slot's generator, then hand 1."""
    rng_start[i, 0] = rng[i]
    for k in range(S_FIN_LOG_LEN):  # the S_FIN_* columns describe the previous game
        st[i, k] = 0
    calls = ALL_CALLS if cfg[K_CALLS] else 0xF  # without calls the dealer names one of the four suits
    n = cfg[K_PLAYERS]
    for seat in range(n):
        st[i, S_UP_AT + seat] = 52  # no hand before: the usual exchange order
        st[i, S_CALLS_LEFT + seat] = calls
    first = _below(rng, i, n)
    st[i, S_FIRST_DEALER] = first
    st[i, S_AUC_FIRST] = first
    st[i, S_AUC_HIGH_SEAT] = -1
    _start_hand(i, st, cm, rng, cfg, first, False)


@njit(cache=True)
def _start_hand(i, st, cm, rng, cfg, dealer, has_prev):
    n = cfg[K_PLAYERS]
    st[i, S_HAND_NO] += 1
    st[i, S_DEALER] = dealer
    for k in range(C_NEXT_HAND):
        cm[i, k] = 0
    if cfg[K_GIVEN_DEALS]:
        for s in range(n):
            cm[i, C_HAND + s] = cm[i, C_NEXT_HAND + s]
        cm[i, C_KITTY] = cm[i, C_NEXT_KITTY]
    else:
        deck = _stack_int64(52)
        m = _deal(rng, i, cfg, deck)
        size = cfg[K_HAND_SIZE]
        for s in range(n):
            h = np.uint64(0)
            for k in range(s * size, (s + 1) * size):
                h |= _bit(deck[k])
            cm[i, C_HAND + s] = h
        kitty = np.uint64(0)
        for k in range(n * size, m):
            kitty |= _bit(deck[k])
        cm[i, C_KITTY] = kitty
    assign = cfg[K_ASSIGN]
    for s in range(n):
        st[i, S_Q + s] = 0 if assign else cfg[K_Q + _rel(s, dealer, n)]
        st[i, S_TW + s] = 0
        st[i, S_VOID + s] = 0
    st[i, S_QKNOWN] = 0 if assign else 1
    st[i, S_TAKER] = -1
    st[i, S_PUT_OUT] = -1
    st[i, S_CALL] = -1
    st[i, S_HAS_PREV] = 1 if has_prev else 0
    if not has_prev:
        for s in range(n):
            st[i, S_PB + s] = 0
    st[i, S_TRUMP] = -1
    st[i, S_PICKED] = 0
    st[i, S_DISC_COUNT] = 0
    st[i, S_TRICK_LEN] = 0
    st[i, S_LED] = -1
    st[i, S_LEADER] = _after(dealer, 1, n)
    st[i, S_TRICKS_PLAYED] = 0
    for k in range(PAIRS):
        st[i, S_EX_STARTED + k] = 0
    for s in range(n):
        st[i, S_PUP + s] = st[i, S_UP_AT + s]
        st[i, S_UP_AT + s] = 52
    st[i, S_EX_NROUNDS] = 0
    if not assign:  # else planned once the dealer has assigned the quotas
        _exchange_plan(i, st, cfg)
    st[i, S_EX_ROUND] = 0
    st[i, S_STAGE] = -1
    if cfg[K_AUCTION] and st[i, S_HAND_NO] - st[i, S_PASSED_OUT] == 1:  # the auction decides who deals hand 1
        _start_auction(i, st, dealer)
        return
    _next_stage(i, st, cm, cfg)


@njit(cache=True)
def _start_auction(i, st, first):
    """Before hand 1 (docs/rules.md 10.2): ``first`` bids first; no dealer and no quotas yet (Game._start_hand)."""
    st[i, S_AUC_FIRST] = first
    for s in range(THREE_SEATS):
        st[i, S_AUC_BID + s] = 0
        st[i, S_Q + s] = 0
    st[i, S_AUC_PASSED] = 0
    st[i, S_AUC_HIGH] = 0
    st[i, S_AUC_HIGH_SEAT] = -1
    st[i, S_QKNOWN] = 0
    st[i, S_PHASE] = BID
    st[i, S_CUR] = first


@njit(cache=True)
def _bid(i, st, cm, rng, cfg, action):
    """A pass or a bid (Game._bid): the auction ends when all but the highest bidder have passed (it deals hand 1
    with the bid as its quota) or all passed (the deal is passed out)."""
    seat = st[i, S_CUR]
    if action == PASS_ACTION:
        st[i, S_AUC_PASSED] |= 1 << seat
    else:
        bid = action - BID_ACTION_BASE + 8
        st[i, S_AUC_BID + seat] = bid
        st[i, S_AUC_HIGH] = bid
        st[i, S_AUC_HIGH_SEAT] = seat
    passed = st[i, S_AUC_PASSED]
    if passed == (1 << THREE_SEATS) - 1:
        _pass_out(i, st, cm, rng, cfg)
    elif st[i, S_AUC_HIGH_SEAT] >= 0 and _count(np.uint64(passed)) == THREE_SEATS - 1:
        _win_auction(i, st, cm, cfg)
    else:
        nxt = (seat + 1) % THREE_SEATS
        while passed >> nxt & 1:
            nxt = (nxt + 1) % THREE_SEATS
        st[i, S_CUR] = nxt


@njit(cache=True)
def _win_auction(i, st, cm, cfg):
    """The highest bidder deals hand 1 with its bid as quota and the table's quotas for the others; no
    exchange (Game._win_auction)."""
    dealer = st[i, S_AUC_HIGH_SEAT]
    bid = st[i, S_AUC_HIGH]
    st[i, S_DEALER] = dealer
    for s in range(THREE_SEATS):
        st[i, S_Q + s] = _AUCTION_QUOTAS[bid, (s - dealer) % THREE_SEATS]
    st[i, S_QKNOWN] = 1
    st[i, S_LEADER] = (dealer + 1) % THREE_SEATS
    st[i, S_EX_NROUNDS] = 0
    _next_stage(i, st, cm, cfg)


@njit(cache=True)
def _pass_out(i, st, cm, rng, cfg):
    """Every seat passed: a new deal, the next seat bids first; or the game stops at max_hands (Game._pass_out)."""
    st[i, S_PASSED_OUT] += 1
    if cfg[K_MAX_HANDS] >= 0 and st[i, S_HAND_NO] >= cfg[K_MAX_HANDS]:
        st[i, S_TRUNCATED] = 1
        st[i, S_PHASE] = OVER
        return
    _start_hand(i, st, cm, rng, cfg, (st[i, S_AUC_FIRST] + 1) % THREE_SEATS, False)


@njit(cache=True)
def _assign(i, st, cm, cfg, action):
    """The dealer gives the quotas (docs/rules.md 10.7); the exchange is planned with them (Game._assign)."""
    dealer = st[i, S_DEALER]
    a = action - ASSIGN_ACTION_BASE
    for s in range(THREE_SEATS):
        st[i, S_Q + s] = cfg[K_Q + _ASSIGNMENTS[a, (s - dealer) % THREE_SEATS]]
    st[i, S_QKNOWN] = 1
    _exchange_plan(i, st, cfg)
    st[i, S_EX_ROUND] = 0
    _next_stage(i, st, cm, cfg)


@njit(cache=True, inline="always")
def _sort_seats(seats, count, key):
    """Sort ``seats[:count]`` by ``key[seat]``, ascending and stable (insertion sort: at most MAX_SEATS seats)."""
    for a in range(1, count):
        seat = seats[a]
        b = a
        while b > 0 and key[seats[b - 1]] > key[seat]:
            seats[b] = seats[b - 1]
            b -= 1
        seats[b] = seat


@njit(cache=True)
def _exchange_plan(i, st, cfg):
    """Rounds of the exchange, as Game._exchange_plan (previous balances in S_PB; docs/rules.md 4, 9, 10.6).

    Up players go one round each, higher current quota first (with first_up_exchanges_first the one that got
    up first in the previous hand first); each serves the down players, lower current quota first, with the
    smaller of its remaining surplus and that player's remaining deficit; max_exchange caps what each player
    gives or takes in the hand. Equal quotas go in role order (dealer first) with three players, in play order
    from the eldest with four.
    """
    st[i, S_EX_NROUNDS] = 0
    if st[i, S_HAS_PREV] == 0 or cfg[K_NO_EXCHANGE]:
        return
    n = cfg[K_PLAYERS]
    dealer = st[i, S_DEALER]
    tie_first = dealer if n == 3 else _after(dealer, 1, n)  # the seat that comes first among equal quotas
    senders = _stack_int64(MAX_SEATS)
    receivers = _stack_int64(MAX_SEATS)
    key = _stack_int64(MAX_SEATS)
    left = _stack_int64(MAX_SEATS)  # remaining surplus (up) or deficit (down)
    given = _stack_int64(MAX_SEATS)  # cards given (up) or taken (down) so far, for max_exchange
    given[:] = 0
    nups = ndowns = 0
    for s in range(n):
        balance = st[i, S_PB + s]
        left[s] = abs(balance)
        if balance > 0:
            senders[nups] = s
            nups += 1
        elif balance < 0:
            receivers[ndowns] = s
            ndowns += 1
    if nups == 0:
        return
    for s in range(n):  # senders: higher quota first; the tie order within a quota
        key[s] = -st[i, S_Q + s] * MAX_SEATS + _rel(s, tie_first, n)
    _sort_seats(senders, nups, key)
    if cfg[K_FIRST_UP]:  # the one up first in the last hand first (stable: ties keep the order above)
        for s in range(n):
            key[s] = st[i, S_PUP + s]
        _sort_seats(senders, nups, key)
    for s in range(n):  # receivers: lower quota first
        key[s] = st[i, S_Q + s] * MAX_SEATS + _rel(s, tie_first, n)
    _sort_seats(receivers, ndowns, key)
    cap = cfg[K_MAX_EXCHANGE]
    nr = 0
    for u in range(nups):
        sender = senders[u]
        nt = 0
        for d in range(ndowns):
            receiver = receivers[d]
            count = min(left[sender], left[receiver])
            if cap >= 0:
                count = min(count, cap - given[sender], cap - given[receiver])
            if count > 0:
                st[i, S_EX_RECV + MAX_TARGETS * nr + nt] = receiver
                st[i, S_EX_CNT + MAX_TARGETS * nr + nt] = count
                nt += 1
                left[sender] -= count
                left[receiver] -= count
                given[sender] += count
                given[receiver] += count
        if nt > 0:
            st[i, S_EX_SENDER + nr] = sender
            st[i, S_EX_NT + nr] = nt
            nr += 1
    st[i, S_EX_NROUNDS] = nr


@njit(cache=True)
def _begin_exchange_round(i, st):
    r = st[i, S_EX_ROUND]
    st[i, S_PHASE] = EXCHANGE
    st[i, S_CUR] = st[i, S_EX_SENDER + r]
    st[i, S_EX_TARGET] = 0
    for t in range(MAX_TARGETS):
        st[i, S_EX_PEND + t] = 0


@njit(cache=True, inline="always")
def _send(i, st, cm, cfg, card):
    sender = st[i, S_CUR]
    r = st[i, S_EX_ROUND]
    t = st[i, S_EX_TARGET]
    receiver = st[i, S_EX_RECV + MAX_TARGETS * r + t]
    count = st[i, S_EX_CNT + MAX_TARGETS * r + t]
    bit = _bit(card)
    cm[i, C_HAND + sender] ^= bit
    cm[i, C_SENT + sender * MAX_SEATS + receiver] |= bit
    st[i, S_EX_STARTED + sender * MAX_SEATS + receiver] = count
    st[i, S_EX_PEND + t] += 1
    if st[i, S_EX_PEND + t] == count:
        st[i, S_EX_TARGET] = t + 1
        if t + 1 == st[i, S_EX_NT + r]:
            _complete_exchange_round(i, st, cm, cfg)


@njit(cache=True)
def _complete_exchange_round(i, st, cm, cfg):
    """The sender has chosen every card of its round: the cards move into the receivers' hands, and in a
    plain exchange (not the ``send`` stage of trump_after_send) each receiver returns at once."""
    sender = st[i, S_CUR]
    r = st[i, S_EX_ROUND]
    nt = st[i, S_EX_NT + r]
    for t in range(nt):
        receiver = st[i, S_EX_RECV + MAX_TARGETS * r + t]
        cm[i, C_HAND + receiver] |= cm[i, C_SENT + sender * MAX_SEATS + receiver]
    if cfg[K_ORDER + st[i, S_STAGE]] == ST_EXCHANGE:
        for t in range(nt):
            _return(i, cm, sender, st[i, S_EX_RECV + MAX_TARGETS * r + t])
    st[i, S_EX_ROUND] = r + 1
    if r + 1 < st[i, S_EX_NROUNDS]:
        _begin_exchange_round(i, st)
    else:
        _next_stage(i, st, cm, cfg)


@njit(cache=True)
def _return(i, cm, sender, receiver):
    """The receiver returns its top n_s cards of each suit s sent, from its hand as it stands."""
    sent = cm[i, C_SENT + sender * MAX_SEATS + receiver]
    hand = cm[i, C_HAND + receiver]
    returned = np.uint64(0)
    for suit in range(4):
        sm = _SUIT_MASKS[suit]
        for _ in range(_count(sent & sm)):
            top = _bit(_top(hand & sm))
            hand ^= top
            returned |= top
    cm[i, C_HAND + receiver] = hand
    cm[i, C_RET + sender * MAX_SEATS + receiver] = returned
    cm[i, C_HAND + sender] |= returned


@njit(cache=True)
def _next_stage(i, st, cm, cfg):
    """Go on to the next stage of the hand order that needs a decision, or to the play (Game._next_stage)."""
    while True:
        stage = st[i, S_STAGE] + 1
        st[i, S_STAGE] = stage
        if stage == cfg[K_NSTAGES]:
            _start_play(i, st, cfg)
            return
        code = cfg[K_ORDER + stage]
        if code == ST_ASSIGN:
            st[i, S_PHASE] = ASSIGN
            st[i, S_CUR] = st[i, S_DEALER]
            return
        if code == ST_EXCHANGE or code == ST_SEND:
            if st[i, S_EX_NROUNDS] > 0:
                _begin_exchange_round(i, st)
                return
        elif code == ST_RETURN:
            for r in range(st[i, S_EX_NROUNDS]):
                for t in range(st[i, S_EX_NT + r]):
                    _return(i, cm, st[i, S_EX_SENDER + r], st[i, S_EX_RECV + MAX_TARGETS * r + t])
        elif code == ST_KITTY:
            if st[i, S_PICKED] == 0:
                _pickup(i, st, cm, cfg)
        elif code == ST_TRUMP:
            st[i, S_PHASE] = TRUMP
            st[i, S_CUR] = st[i, S_DEALER]
            return
        elif code == ST_DISCARD:
            st[i, S_PHASE] = DISCARD
            st[i, S_CUR] = st[i, S_DEALER]
            return
        elif code == ST_TAKE:
            if _top(cm[i, C_KITTY]) != TWO_OF_DIAMONDS:  # else nobody can take it
                st[i, S_PHASE] = TAKE
                for s in range(cfg[K_PLAYERS]):
                    if cm[i, C_HAND + s] >> np.uint64(TWO_OF_DIAMONDS) & _ONE:
                        st[i, S_CUR] = s
                return


@njit(cache=True)
def _take(i, st, cm, cfg, action):
    """The holder of 2D takes the face-up card, putting ``action`` out of play, or declines (Game._take)."""
    seat = st[i, S_CUR]
    st[i, S_TAKER] = seat
    if action != PASS_ACTION:
        cm[i, C_HAND + seat] = (cm[i, C_HAND + seat] | cm[i, C_KITTY]) ^ _bit(action)
        st[i, S_PUT_OUT] = action
    _next_stage(i, st, cm, cfg)


@njit(cache=True, inline="always")
def _name_trump(i, st, cm, cfg, suit):
    """Trump is named; with calls the dealer's call (a suit, 4 NT, 5 Miz) is used up (Game._name_trump)."""
    if cfg[K_CALLS]:
        st[i, S_CALL] = suit
        st[i, S_CALLS_LEFT + st[i, S_DEALER]] &= ~(1 << suit)
        if suit >= NT:
            suit = -1  # no trump in a no-trump or misère hand
    st[i, S_TRUMP] = suit
    _next_stage(i, st, cm, cfg)


@njit(cache=True, inline="always")
def _discard(i, st, cm, cfg, card):
    dealer = st[i, S_DEALER]
    bit = _bit(card)
    cm[i, C_HAND + dealer] ^= bit
    cm[i, C_DISCARDS] |= bit
    st[i, S_DISC_COUNT] += 1
    if st[i, S_DISC_COUNT] == cfg[K_KITTY_SIZE]:
        if cfg[K_KITTY_TRICK]:  # the discards are the dealer's first trick (docs/rules.md 10.4)
            st[i, S_TW + dealer] += 1
            if st[i, S_TW + dealer] == st[i, S_Q + dealer] + 1:
                st[i, S_UP_AT + dealer] = -1
        _next_stage(i, st, cm, cfg)


@njit(cache=True)
def _pickup(i, st, cm, cfg):
    """The dealer takes the kitty; the show rule (docs/rules.md 5.4)."""
    dealer = st[i, S_DEALER]
    kitty = cm[i, C_KITTY]
    cm[i, C_HAND + dealer] |= kitty
    st[i, S_PICKED] = 1
    for sender in range(cfg[K_PLAYERS]):
        returned = cm[i, C_RET + sender * MAX_SEATS + dealer]
        if sender == dealer or returned == 0:
            continue
        shown = np.uint64(0)
        for suit in range(4):
            ret = returned & _SUIT_MASKS[suit]
            if ret != 0:
                lowest = ret & (~ret + _ONE)  # lowest returned card of the suit
                above = _SUIT_MASKS[suit] & ~((lowest << _ONE) - _ONE)
                shown |= kitty & above
        cm[i, C_SHOWN + sender] |= shown


@njit(cache=True, inline="always")
def _start_play(i, st, cfg):
    st[i, S_PHASE] = PLAY
    leader = _after(st[i, S_DEALER], 1, cfg[K_PLAYERS])
    st[i, S_LEADER] = leader
    st[i, S_CUR] = leader


@njit(cache=True, inline="always")
def _play(i, st, cm, rng, cfg, card, reward):
    """Play a card; returns True when the hand ended (its balances written into ``reward``)."""
    seat = st[i, S_CUR]
    players = cfg[K_PLAYERS]
    bit = _bit(card)
    cm[i, C_HAND + seat] ^= bit
    cm[i, C_PLAYED + seat] |= bit
    n = st[i, S_TRICK_LEN]
    suit = card // 13
    if n > 0:
        if suit != st[i, S_LED]:
            st[i, S_VOID + seat] |= 1 << st[i, S_LED]
    else:
        st[i, S_LED] = suit
    st[i, S_TRICK + n] = card
    st[i, S_TRICK_LEN] = n + 1
    if n + 1 < players:
        st[i, S_CUR] = _after(seat, 1, players)
        return False
    best = st[i, S_TRICK]
    best_pos = 0
    best_suit = st[i, S_LED]
    trump = st[i, S_TRUMP]
    for k in range(1, players):
        c = st[i, S_TRICK + k]
        s = c // 13
        if s == best_suit:
            if c > best:
                best = c
                best_pos = k
        elif s == trump:
            best = c
            best_pos = k
            best_suit = s
    winner = _after(st[i, S_LEADER], best_pos, players)
    st[i, S_TW + winner] += 1
    if st[i, S_TW + winner] == st[i, S_Q + winner] + 1:
        st[i, S_UP_AT + winner] = st[i, S_TRICKS_PLAYED]
    st[i, S_TRICKS_PLAYED] += 1
    st[i, S_TRICK_LEN] = 0
    st[i, S_LED] = -1
    st[i, S_LEADER] = winner
    st[i, S_CUR] = winner
    if st[i, S_TRICKS_PLAYED] == cfg[K_HAND_SIZE]:
        _end_hand(i, st, cm, rng, cfg, reward)
        return True
    return False


@njit(cache=True)
def _best(figure, seats):
    """Bit set of the seats (of bit set ``seats``) with the highest figure."""
    top = -(1 << 30)
    for s in range(MAX_SEATS):
        if seats >> s & 1 and figure[s] > top:
            top = figure[s]
    out = 0
    for s in range(MAX_SEATS):
        if seats >> s & 1 and figure[s] == top:
            out |= 1 << s
    return out


@njit(cache=True)
def _best_reaching(figure, threshold, n):
    """Bit set of the seats with the highest figure among those whose figure is at least ``threshold`` (0: none)."""
    hit = 0
    for s in range(n):
        if figure[s] >= threshold:
            hit |= 1 << s
    return _best(figure, hit) if hit else 0


@njit(cache=True, inline="always")
def score_changes(cfg, balances, n):
    """The hand's balances (``balances[:n]``, by seat) turned in place into the changes of the running scores:
    the balances themselves, or with chips each up player wins its surplus from every down player and each
    down player pays every surplus (docs/rules.md 10.7, Game's chip_changes). The one place that scores."""
    if not cfg[K_CHIPS]:
        return
    paid = 0
    downs = 0
    for s in range(n):
        if balances[s] > 0:
            paid += balances[s]
        elif balances[s] < 0:
            downs += 1
    for s in range(n):
        b = balances[s]
        balances[s] = b * downs if b > 0 else (-paid if b < 0 else 0)


@njit(cache=True)
def _end_hand(i, st, cm, rng, cfg, reward):
    """Score the hand, then end the game or deal the next hand (as Game._end_hand); its balances by seat go
    into ``reward``."""
    n = cfg[K_PLAYERS]
    balances = _stack_int64(MAX_SEATS)
    tricks = _stack_int64(MAX_SEATS)
    scores = _stack_int64(MAX_SEATS)
    changes = _stack_int64(MAX_SEATS)
    dealer = st[i, S_DEALER]
    misere = st[i, S_CALL] == MIZ
    for s in range(n):
        tricks[s] = st[i, S_TW + s]
        if misere:  # the maximum minus the tricks taken (docs/rules.md 10.3; three players)
            balances[s] = _MIZ_MAXIMA[(s - dealer) % THREE_SEATS] - tricks[s]
        else:
            balances[s] = tricks[s] - st[i, S_Q + s]
        reward[s] = balances[s]
        changes[s] = balances[s]
    score_changes(cfg, changes, n)
    for s in range(n):
        st[i, S_SC + s] += changes[s]
        scores[s] = st[i, S_SC + s]
    everyone = (1 << n) - 1
    winners = 0
    hand_no = st[i, S_HAND_NO]
    played = hand_no - st[i, S_PASSED_OUT]  # hands played: passed-out deals do not count (auction)
    if cfg[K_WIN_TRICKS] >= 0:
        winners = _best_reaching(tricks, cfg[K_WIN_TRICKS], n)
    if winners == 0 and cfg[K_WIN_MARGIN] >= 0:
        winners = _best_reaching(balances, cfg[K_WIN_MARGIN], n)
    if winners == 0 and cfg[K_TARGET] >= 0:
        target = cfg[K_TARGET]
        met = False
        for s in range(n):
            if scores[s] >= target or (cfg[K_TARGET_SYM] and scores[s] <= -target):
                met = True
        if met:
            winners = _best(scores, everyone)
    if winners == 0 and cfg[K_DEALER_MAKES] and played >= n:  # from the hand after a full round of deals
        surplus = tricks[dealer] - st[i, S_Q + dealer]
        if surplus > 0 or (surplus == 0 and cfg[K_DEALER_MAKES] == 1):  # 2 ("up"): more than its quota
            winners = 1 << dealer
    if winners == 0 and cfg[K_FIXED] >= 0 and played >= cfg[K_FIXED]:
        winners = _best(scores, everyone)
    if winners == 0 and cfg[K_CALLS] and played >= HANDS_WITH_CALLS:  # every seat has made its six calls
        winners = _best(scores, everyone)
    if winners != 0:
        st[i, S_WINNERS] = winners
        st[i, S_PHASE] = OVER
    elif cfg[K_MAX_HANDS] >= 0 and hand_no >= cfg[K_MAX_HANDS]:
        st[i, S_TRUNCATED] = 1
        st[i, S_PHASE] = OVER
    else:
        for s in range(n):
            st[i, S_PB + s] = balances[s]
        _start_hand(i, st, cm, rng, cfg, _after(dealer, 1, n), True)


# ---------------------------------------------------------------------------- legality, actions


@njit(cache=True, inline="always")
def _legal_bits(i, st, cm):
    """Legal action bit set of the player to act (Game.legal_mask)."""
    phase = st[i, S_PHASE]
    if phase == PLAY:
        hand = cm[i, C_HAND + st[i, S_CUR]]
        if st[i, S_TRICK_LEN] > 0:
            follow = hand & _SUIT_MASKS[st[i, S_LED]]
            if follow != 0:
                return follow
        return hand
    if phase == EXCHANGE or phase == DISCARD:
        return cm[i, C_HAND + st[i, S_CUR]]
    if phase == TRUMP:  # the calls the dealer may make: the four suits, or with calls those not made yet
        return np.uint64(st[i, S_CALLS_LEFT + st[i, S_DEALER]]) << np.uint64(TRUMP_ACTION_BASE)
    if phase == ASSIGN:
        return np.uint64(0x3F) << np.uint64(ASSIGN_ACTION_BASE - LEGAL_SHIFT_ASSIGN)
    if phase == TAKE:
        return cm[i, C_HAND + st[i, S_CUR]] | _ONE << np.uint64(PASS_ACTION)
    if phase == BID:  # pass, or bid more than the highest bid
        low = BID_ACTION_BASE + st[i, S_AUC_HIGH] - 7 if st[i, S_AUC_HIGH] else BID_ACTION_BASE
        bids = (np.uint64(0x1FF) >> np.uint64(low - BID_ACTION_BASE)) << np.uint64(low - LEGAL_SHIFT_ASSIGN)
        return bids | _ONE << np.uint64(PASS_ACTION - LEGAL_SHIFT_ASSIGN)
    return np.uint64(0)


@njit(cache=True, inline="always")
def legal_shift(phase):
    """The action of bit 0 of a legal set in ``phase`` (see LEGAL_SHIFT_ASSIGN)."""
    return LEGAL_SHIFT_ASSIGN if phase == ASSIGN or phase == BID else 0


@njit(cache=True, inline="always")
def _is_legal(i, st, cm, cfg, a):
    """Whether action ``a`` is legal in slot i."""
    if a < 0 or a >= cfg[K_NUM_ACTIONS]:
        return False
    b = a - legal_shift(st[i, S_PHASE])
    if b < 0 or b >= 64:
        return False
    return (_legal_bits(i, st, cm) >> np.uint64(b)) & _ONE != 0


@loop_kernel
def legal_bits_of(st, cm, i):
    """Legal action bit set of slot i, shifted by legal_shift of its phase (for error messages)."""
    return _legal_bits(i, st, cm)


@njit(cache=True, inline="always")
def _apply(i, st, cm, rng, cfg, action, reward):
    """Apply a legal action; a hand that ends writes its balances into ``reward``."""
    phase = st[i, S_PHASE]
    if phase == PLAY:
        return _play(i, st, cm, rng, cfg, action, reward)
    if phase == EXCHANGE:
        _send(i, st, cm, cfg, action)
    elif phase == TRUMP:
        _name_trump(i, st, cm, cfg, action - TRUMP_ACTION_BASE)
    elif phase == ASSIGN:
        _assign(i, st, cm, cfg, action)
    elif phase == TAKE:
        _take(i, st, cm, cfg, action)
    elif phase == BID:
        _bid(i, st, cm, rng, cfg, action)
    else:
        _discard(i, st, cm, cfg, action)
    return False


@loop_kernel
def first_illegal(st, cm, cfg, actions, active):
    """Index of the first active slot whose action is not legal, or -1."""
    for i in range(actions.shape[0]):
        if active[i] and not _is_legal(i, st, cm, cfg, actions[i]):
            return i
    return -1


@njit(cache=True, inline="always")
def _step_one(i, st, cm, rng, rng_start, cfg, log, actions, active, rewards, done, final_seats, final_out):
    """One slot of step_games; returns 1 when its action log is full."""
    n = cfg[K_PLAYERS]
    for s in range(n):
        rewards[i, s] = 0.0
    done[i] = False
    if not active[i]:
        return 0
    a = actions[i]
    k = st[i, S_LOG_LEN]
    log[i, k] = a
    st[i, S_LOG_LEN] = k + 1
    if _apply(i, st, cm, rng, cfg, a, rewards[i]):  # a hand ended: its balances are in rewards[i]
        # the reward is the change of the running score (the balance, or the chips under chips): it adds up to
        # the scores
        score_changes(cfg, rewards[i], n)
    if st[i, S_PHASE] == OVER:
        done[i] = True
        if final_seats[i] >= 0:
            encode_row(i, final_seats[i], st, cm, cfg, final_out[i])
        st[i, S_FIN_LOG_LEN] = st[i, S_LOG_LEN]
        st[i, S_FIN_HANDS] = st[i, S_HAND_NO]
        st[i, S_FIN_WINNERS] = st[i, S_WINNERS]
        st[i, S_FIN_TRUNCATED] = st[i, S_TRUNCATED]
        rng_start[i, 1] = rng_start[i, 0]
        start_game(i, st, cm, rng, rng_start, cfg)
    return 1 if k + 1 >= log.shape[1] else 0


@loop_kernel
def step_games(st, cm, rng, rng_start, cfg, log, actions, active, rewards, done, final_seats, final_out):
    """Apply ``actions[i]`` in every active slot (all legal: see first_illegal).

    Writes the hand balances paid into ``rewards[i]`` and ``done[i]``. A slot
    whose game ended writes the final observation of ``final_seats[i]`` (if
    >= 0) into ``final_out[i]``, keeps the ended game's facts in S_FIN_* and
    holds a new game. Returns True when some slot's action log is full (the
    caller grows it before the next step).
    """
    full = 0
    for i in range(actions.shape[0]):
        full += _step_one(i, st, cm, rng, rng_start, cfg, log, actions, active, rewards, done, final_seats, final_out)
    return full > 0


@njit(cache=True, parallel=True)  # with NRT: the parfor's sum of ``full`` allocates
def step_games_parallel(st, cm, rng, rng_start, cfg, log, actions, active, rewards, done, final_seats, final_out):
    """step_games over the slots in parallel threads."""
    full = 0
    for i in prange(actions.shape[0]):
        full += _step_one(i, st, cm, rng, rng_start, cfg, log, actions, active, rewards, done, final_seats, final_out)
    return full > 0


@loop_kernel
def start_games(st, cm, rng, rng_start, cfg):
    for i in range(st.shape[0]):
        start_game(i, st, cm, rng, rng_start, cfg)


@njit(cache=True, inline="always")
def write_mask(legal, shift, row):
    """row[a] = 1 exactly for the actions a of the legal set ``legal`` (bit b: action shift + b)."""
    width = row.shape[0]
    for a in range(min(shift, width)):
        row[a] = 0
    whole = min((width - shift) // 8, 8)  # bytes of the legal set whose 8 actions all fit in the row
    for b in range(whole):
        bits = _BYTE_BITS_I8[(legal >> np.uint64(8 * b)) & np.uint64(0xFF)]
        base = shift + 8 * b
        for k in range(8):  # a fixed count: compiled as straight stores
            row[base + k] = bits[k]
    for a in range(shift + 8 * whole, width):  # the rest: a partial byte, and any actions past the 64 bits
        b = a - shift
        row[a] = np.int8((legal >> np.uint64(b)) & _ONE) if b < 64 else np.int8(0)


@njit(cache=True, inline="always")
def _legal_one(i, st, cm, out):
    write_mask(_legal_bits(i, st, cm), legal_shift(st[i, S_PHASE]), out[i])


@loop_kernel
def legal_masks(st, cm, out):
    """out[i, a] = 1 exactly for the legal actions of slot i."""
    for i in range(st.shape[0]):
        _legal_one(i, st, cm, out)


@parallel_kernel
def legal_masks_parallel(st, cm, out):
    """legal_masks over the slots in parallel threads."""
    for i in prange(st.shape[0]):
        _legal_one(i, st, cm, out)


@njit(cache=True)
def game_deals(start, cfg, num_hands):
    """First dealer and the decks of the first hands of a game whose generator began at ``start``."""
    rng = np.empty(1, dtype=np.uint64)
    rng[0] = start
    first = _below(rng, 0, cfg[K_PLAYERS])
    decks = np.zeros((num_hands, 52), dtype=np.int64)
    for h in range(num_hands):
        _deal(rng, 0, cfg, decks[h])
    return first, decks


@loop_kernel
def random_legal(mask, state, out):
    """out[i] = a uniformly random legal action of int8 mask row i (0/1 entries; xorshift64 generator per row in
    ``state``): with n legal actions, the k-th of them (k = (s >> 32) * n >> 32, s the row's next number), or -1
    for a row without a legal action.

    The row is read 8 entries at a time: a uint64 word of eight 0/1 bytes times ``_GATHER`` has those bytes as
    the bits of its top byte, so the row becomes a bit set of actions (two words: actions 0-63 and 64 up).
    """
    width = mask.shape[1]
    words = width // 8
    for i in range(mask.shape[0]):
        s = state[i]
        s ^= s << np.uint64(13)
        s ^= s >> np.uint64(7)
        s ^= s << np.uint64(17)
        state[i] = s
        row = mask[i]
        low = high = np.uint64(0)  # legal actions 0-63, 64 up (as bits)
        for w in range(words):
            byte = (_word(row, w) * _GATHER) >> np.uint64(56)
            if w < 8:
                low |= byte << np.uint64(8 * w)
            else:
                high |= byte << np.uint64(8 * w - 64)
        for a in range(8 * words, width):
            if row[a]:
                if a < 64:
                    low |= _ONE << np.uint64(a)
                else:
                    high |= _ONE << np.uint64(a - 64)
        n_low = _count(low)
        n = n_low + _count(high)
        if n == 0:
            out[i] = -1
            continue
        k = int(((s >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))  # 0..n-1
        bits = low
        base = 0
        if k >= n_low:
            bits = high
            base = 64
            k -= n_low
        for _ in range(k):  # drop the k lowest legal actions
            bits &= bits - _ONE
        out[i] = base + trailing_zeros(bits)


@njit(cache=True, inline="always")
def _word(row, w):
    """Eight int8 mask entries as one uint64 (little-endian)."""
    x = np.uint64(0)
    for b in range(8):  # zero-extended bytes: LLVM reads the eight as one 64-bit load
        x |= np.uint64(np.uint8(row[8 * w + b])) << np.uint64(8 * b)
    return x


# ---------------------------------------------------------------------------- observation


@njit(cache=True, inline="always")
def _plane(row, base, mask):
    """row[base + c] = 1.0 for each card c in the bit set, else 0.0 (52 entries, 8 at a time)."""
    for b in range(6):
        bits = _BYTE_BITS_F32[(mask >> np.uint64(8 * b)) & np.uint64(0xFF)]
        for k in range(8):
            row[base + 8 * b + k] = bits[k]
    bits = _BYTE_BITS_F32[(mask >> np.uint64(48)) & np.uint64(0xF)]
    for k in range(4):
        row[base + 48 + k] = bits[k]


@njit(cache=True, inline="always")
def encode_row(i, seat, st, cm, cfg, row):
    """observation.encode(knowledge.player_view(game, seat)) of slot i, into ``row``: :func:`_encode_seats`
    with the game's seat count as a constant, so that each of the two copies numba inlines here has its
    seat loops, offsets and ``% n`` folded (the observation is the hot path: as fast for three as before)."""
    if cfg[K_PLAYERS] == 3:
        _encode_seats(i, seat, st, cm, cfg, row, 3)
    else:
        _encode_seats(i, seat, st, cm, cfg, row, MAX_SEATS)


@njit(cache=True, inline="always")
def _encode_seats(i, seat, st, cm, cfg, row, n):
    """encode_row for ``n`` seats (the layout of ``seat_features(n)``; relative seat r is the seat r places to
    the left)."""
    off = _OBS3 if n == 3 else _OBS4
    phase = st[i, S_PHASE]
    dealer = st[i, S_DEALER]
    acting = phase != OVER and st[i, S_CUR] == seat
    _plane(row, off[F_HAND], cm[i, C_HAND + seat])
    leader_rel = _rel(st[i, S_LEADER], seat, n)
    trick_len = st[i, S_TRICK_LEN]
    ex_round = st[i, S_EX_ROUND]
    # the sender of the round being chosen (its cards have not reached the receivers yet), else -1
    choosing = st[i, S_EX_SENDER + ex_round] if ex_round < st[i, S_EX_NROUNDS] else -1
    for r in range(n):
        other = _after(seat, r, n)
        _plane(row, off[F_PLAYED] + 52 * r, cm[i, C_PLAYED + other])
        k = _rel(r, leader_rel, n)  # the place in the open trick of relative seat r's card
        _plane(row, off[F_TRICK] + 52 * r, _bit(st[i, S_TRICK + k]) if k < trick_len else np.uint64(0))
        if r == 0:
            continue
        # exchange knowledge: the cards I gave to / got from ``other`` (what it returned included)
        gave = got = np.uint64(0)
        mine = seat * MAX_SEATS + other  # my exchange with it
        if st[i, S_EX_STARTED + mine] != 0:
            gave |= cm[i, C_SENT + mine]
            got |= cm[i, C_RET + mine]
        theirs = other * MAX_SEATS + seat  # its exchange with me
        if st[i, S_EX_STARTED + theirs] != 0 and other != choosing:
            got |= cm[i, C_SENT + theirs]
            gave |= cm[i, C_RET + theirs]
        _plane(row, off[F_GAVE] + 52 * (r - 1), gave)
        _plane(row, off[F_GOT] + 52 * (r - 1), got)
    _plane(row, off[F_SHOWN], cm[i, C_SHOWN + seat])
    is_dealer = seat == dealer
    _plane(row, off[F_DISCARDS], cm[i, C_DISCARDS] if is_dealer else np.uint64(0))
    _plane(row, off[F_KITTY], cm[i, C_KITTY] if is_dealer and st[i, S_PICKED] else np.uint64(0))
    row[off[F_TRUMP] :] = 0.0  # a slice: one memset (an index loop was vectorised as scatter stores)
    if st[i, S_TRUMP] >= 0:
        row[off[F_TRUMP] + st[i, S_TRUMP]] = 1.0
    if trick_len > 0:
        row[off[F_LED] + st[i, S_LED]] = 1.0
    if phase <= OVER:  # the assign phase has its own entry
        row[off[F_PHASE] + phase] = 1.0
    if phase != BID:  # no roles before the auction is won
        row[off[F_ROLE] + _rel(seat, dealer, n)] = 1.0
    known = st[i, S_QKNOWN]
    for r in range(n):
        s = _after(seat, r, n)
        if known:
            row[off[F_QUOTAS] + r] = st[i, S_Q + s] * _BY17
        row[off[F_TW] + r] = st[i, S_TW + s] * _BY17
        size = _count(cm[i, C_HAND + s])
        row[off[F_HS] + r] = 1.0 if size >= 20 else size * _BY20
        v = st[i, S_SC + s]
        row[off[F_SCORES] + r] = 1.0 if v >= 32 else (-1.0 if v <= -32 else v / 32.0)
        if st[i, S_HAS_PREV]:
            row[off[F_PREV] + r] = st[i, S_PB + s] * _BY17
        voids = st[i, S_VOID + s]
        for suit in range(4):
            if voids >> suit & 1:
                row[off[F_VOIDS] + 4 * r + suit] = 1.0
    for s in range(n):
        for r in range(n):
            count = st[i, S_EX_STARTED + s * MAX_SEATS + r]
            if count:  # the pair (from rel a, to rel b), a != b, in the order (0,1) (0,2) .. (1,0) (1,2) ..
                a = _rel(s, seat, n)
                b = _rel(r, seat, n)
                row[off[F_COUNTS] + a * (n - 1) + (b if b < a else b - 1)] = count * _BY17
    if phase == EXCHANGE:
        if acting:
            rnd = st[i, S_EX_ROUND]
            for t in range(st[i, S_EX_TARGET], st[i, S_EX_NT + rnd]):
                receiver = st[i, S_EX_RECV + MAX_TARGETS * rnd + t]
                left_to_choose = st[i, S_EX_CNT + MAX_TARGETS * rnd + t] - st[i, S_EX_PEND + t]
                row[off[F_TO_SEND] + _rel(receiver, seat, n) - 1] = left_to_choose * _BY17
    elif phase == DISCARD:
        row[off[F_DISC_LEFT]] = (cfg[K_KITTY_SIZE] - st[i, S_DISC_COUNT]) / 4.0
    row[off[F_TRICKS_PLAYED]] = st[i, S_TRICKS_PLAYED] * _BY17
    if st[i, S_PICKED]:
        row[off[F_KITTY_TAKEN]] = 1.0
    if phase != OVER:
        row[off[F_TO_ACT] + _rel(st[i, S_CUR], seat, n)] = 1.0
        if phase == PLAY:
            row[off[F_LEADER] + leader_rel] = 1.0
    hand_no = st[i, S_HAND_NO]
    row[off[F_HAND_NO]] = 1.0 if hand_no >= 100 else hand_no * _BY100
    base = off[F_BASE]
    if row.shape[0] > base:  # rule sets with 74 actions (three players): assigning, quotas known
        if phase == ASSIGN:
            row[base] = 1.0
        if known:
            row[base + 1] = 1.0
        if cfg[K_ONE_CARD]:  # the face-up card, who took it or declined, taking, put out
            base += 2
            row[base + _top(cm[i, C_KITTY])] = 1.0
            taker = st[i, S_TAKER]
            put_out = st[i, S_PUT_OUT]
            if taker >= 0:
                if put_out >= 0:
                    row[base + 52 + _rel(taker, seat, n)] = 1.0
                else:
                    row[base + 55] = 1.0
            if phase == TAKE and acting:
                row[base + 56] = 1.0
            if put_out >= 0 and taker == seat:
                row[base + 57 + put_out] = 1.0
        elif cfg[K_AUCTION]:
            _auction_block(i, seat, st, row, base + 2)
        elif cfg[K_CALLS]:
            _calls_block(i, seat, st, row, base + 2)


@njit(cache=True)
def _auction_block(i, seat, st, row, base):
    """The auction's 18 observation entries from ``base`` (sm_env.observation._auction)."""
    phase = st[i, S_PHASE]
    if phase == BID:
        row[base] = 1.0
    passed = st[i, S_AUC_PASSED]
    for s in range(THREE_SEATS):
        rel = (s - seat) % THREE_SEATS
        if st[i, S_AUC_BID + s]:
            row[base + 1 + rel] = st[i, S_AUC_BID + s] / 16.0
        if passed >> s & 1:
            row[base + 4 + rel] = 1.0
    high_seat = st[i, S_AUC_HIGH_SEAT]
    if high_seat >= 0:
        bid = st[i, S_AUC_HIGH]
        row[base + 7 + (high_seat - seat) % THREE_SEATS] = 1.0
        row[base + 10] = bid / 16.0
        if phase != BID:  # the auction is won: hand 1's quotas
            for s in range(THREE_SEATS):
                row[base + 11 + (s - seat) % THREE_SEATS] = _AUCTION_QUOTAS[bid, (s - high_seat) % THREE_SEATS] * _BY17
    row[base + 14 + (st[i, S_AUC_FIRST] - seat) % THREE_SEATS] = 1.0
    row[base + 17] = min(st[i, S_PASSED_OUT] * _BY10, 1.0)


@njit(cache=True)
def _calls_block(i, seat, st, row, base):
    """The calls' 25 observation entries from ``base`` (sm_env.observation._calls)."""
    if st[i, S_CALL] >= 0:
        row[base + st[i, S_CALL]] = 1.0
    left = 0
    for s in range(THREE_SEATS):
        calls = st[i, S_CALLS_LEFT + s]
        at = base + 6 + 6 * ((s - seat) % THREE_SEATS)
        for c in range(6):
            if calls >> c & 1:
                row[at + c] = 1.0
                left += 1
    row[base + 24] = left * _BY18


@loop_kernel
def observe_games(st, cm, cfg, seats, rows, out):
    """out[k] = observation of slot rows[k] seen by seats[k] (-1: the player to act)."""
    for k in range(rows.shape[0]):
        seat = seats[k] if seats[k] >= 0 else st[rows[k], S_CUR]
        encode_row(rows[k], seat, st, cm, cfg, out[k])


@parallel_kernel
def observe_games_parallel(st, cm, cfg, seats, rows, out):
    """observe_games over the slots in parallel threads."""
    for k in prange(rows.shape[0]):
        seat = seats[k] if seats[k] >= 0 else st[rows[k], S_CUR]
        encode_row(rows[k], seat, st, cm, cfg, out[k])


# ---------------------------------------------------------------------------- full state (privileged critics)

FULL_STATE_SIZE = 52 * THREE_SEATS  # with three players; 52 * n with n seats (full_state_size)


def full_state_size(num_players: int) -> int:
    """Length of a full-state row with ``num_players`` seats: a 52-entry card plane per other seat, then the kitty."""
    return 52 * num_players


@njit(cache=True, inline="always")
def full_state_row(i, seat, cm, n, row):
    """The cards ``seat`` does not see, relative to it: row[52 * (r - 1) : 52 * r] the hand of the seat r places
    to its left (r = 1 .. n - 1: with three players left, right; with four left, across, right), then the kitty
    as dealt in the last 52 entries (1.0 = the card)."""
    for r in range(1, n):
        _plane(row, 52 * (r - 1), cm[i, C_HAND + _after(seat, r, n)])
    _plane(row, 52 * (n - 1), cm[i, C_KITTY])


@loop_kernel
def full_state_games(st, cm, cfg, seats, rows, out):
    """out[k] = full_state_row of slot rows[k] for seats[k] (-1: the player to act)."""
    for k in range(rows.shape[0]):
        seat = seats[k] if seats[k] >= 0 else st[rows[k], S_CUR]
        full_state_row(rows[k], seat, cm, cfg[K_PLAYERS], out[k])
