"""A person at the terminal, behind the same agent interface as the bots.

On each turn the player sees its own picture of the table (drawn by
:func:`sm_env.display.render.render_table`): hand sorted by suit, the trick, trump, quotas, tricks
and scores, and a numbered list of the legal actions. It answers with

- a card as text: ``TH``, ``10h``, ``as`` (rank then suit);
- a number from the list;
- in the trump phase: a suit letter ``C``/``D``/``H``/``S`` or name
  (``hearts``);
- assigning the quotas (``dealer_assigns_quotas``): a number from the list,
  or the quotas for dealer, eldest, middle as ``5-3-8``;
- making a call (``calls``): a suit as for trump, ``NT`` (no trump) or
  ``Miz`` (misère);
- in the auction (``auction``): a bid ``8``-``16`` (or ``bid 9``), or
  ``pass``; a number 8-16 is read as a bid, a smaller one as a list number;
- taking the face-up card (``one_card_kitty``, holding 2D): the card to put
  out of play (the face-up card joins the hand), or ``pass`` / ``decline``
  (action 58);
- ``help`` (or ``?``) for help, ``quit`` (or end of input) to stop. No
  single letter is help: ``h`` is hearts at the trump prompt, so the words
  kept for help and quit (``HELP_WORDS``, ``QUIT_WORDS``) name no action at
  any prompt.

When only one action is legal (a card that must be played, say the last
card of the hand), nothing is asked: the table is shown and the action is
played, with a line saying so. A wrong answer gets a clear message and a new
prompt, never a traceback.
Input and output streams are injectable, for tests and other front ends.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from sm_env.core.cards import CARD_TEXT, SUIT_LETTERS, SUIT_MASK, SUIT_NAMES, CardError, from_mask, parse_card
from sm_env.core.game import (
    ASSIGN,
    ASSIGN_ACTION_BASE,
    BID,
    BID_ACTION_BASE,
    DISCARD,
    EXCHANGE,
    MIZ_ACTION,
    NT_ACTION,
    NUM_CARDS,
    PASS_ACTION,
    PLAY,
    TAKE,
    TRUMP,
    TRUMP_ACTION_BASE,
    action_text,
)
from sm_env.core.knowledge import PlayerView
from sm_env.display.render import render_table

from .base import Agent


class HumanQuit(Exception):
    """The person stopped the game (``quit`` or end of input)."""


HELP_WORDS = ("help", "?")  # never a letter: each letter names a suit, a rank or a choice somewhere
QUIT_WORDS = ("quit", "exit", "q")  # q alone is no card (a card is rank then suit)

HELP = """Answer with a card such as TH, 10h or as (rank then suit: 2-9, T or 10, J, Q, K, A;
suit C, D, H, S), or with the number of an action in the list.
To name trump: a suit letter (C, D, H, S) or its name (clubs, diamonds, hearts, spades).
'?' or 'help' shows this again; 'quit' stops the game."""


def hand_by_suit(mask: int) -> str:
    """Cards grouped by suit, spades first, high cards first."""
    groups = []
    for suit in (3, 2, 1, 0):
        cards = [CARD_TEXT[c] for c in reversed(from_mask(mask & SUIT_MASK[suit]))]
        groups.append(f"{SUIT_LETTERS[suit]}: {' '.join(c[0] for c in cards) or '-'}")
    return "  ".join(groups)


def _action_label(action: int, view: PlayerView) -> str:
    if action == PASS_ACTION and view.phase == TAKE:
        return f"decline {CARD_TEXT[view.face_up]}"
    if view.phase == BID:
        return action_text(action)
    if action in (NT_ACTION, MIZ_ACTION):
        return "NT (no trump)" if action == NT_ACTION else "Miz (misère: lose tricks)"
    if action >= ASSIGN_ACTION_BASE:
        return action_text(action, view.rules)[7:] + " (dealer-eldest-middle)"
    if action >= TRUMP_ACTION_BASE:
        suit = action - TRUMP_ACTION_BASE
        return f"{SUIT_LETTERS[suit]} ({SUIT_NAMES[suit]})"
    return CARD_TEXT[action]


def _prompt(view: PlayerView) -> str:
    phase = view.phase
    if phase == TRUMP and view.rules.calls:
        return "Your call (C, D, H, S, NT, Miz or a number): "
    if phase == TRUMP:
        return "Name trump (C, D, H, S or a number): "
    if phase == ASSIGN:
        return "Quotas for dealer, eldest, middle (e.g. 5-3-8 or a number): "
    if phase == DISCARD:
        return "Card to discard (e.g. 3C or a number): "
    if phase == BID:
        return "Your bid (8-16, as dealer of hand 1) or 'pass': "
    if phase == TAKE:
        return f"Take {CARD_TEXT[view.face_up]}: card to put out of play (e.g. 3C), or 'pass' to decline: "
    if phase == EXCHANGE:
        receiver = view.to_send[0][0] if view.to_send else None
        who = f" to player_{receiver}" if receiver is not None else ""
        return f"Card to send{who} (e.g. 3C or a number): "
    return "Card to play (e.g. TH or a number): "


def numbered_actions(view: PlayerView) -> list[int]:
    """The legal actions in the order they are numbered for the player: cards
    as the hand is shown (spades first, high first), trumps C, D, H, S."""
    return sorted(
        from_mask(view.legal), key=lambda a: (a >= TRUMP_ACTION_BASE, -(a // 13), -a) if a < NUM_CARDS else (True, 0, a)
    )


def _parse_bid(answer: str, view: PlayerView) -> int:
    word = answer.lower().removeprefix("bid").strip()
    if word in ("pass", "p", "no"):
        return PASS_ACTION
    if word.isdigit() and 8 <= int(word) <= 16:
        action = BID_ACTION_BASE + int(word) - 8
        if view.legal >> action & 1:
            return action
        high = view.auction_high[0] if view.auction_high else 7
        raise ValueError(f"a bid must be higher than {high}: bid {high + 1}-16 or pass")
    raise ValueError(f"{answer!r} is not a bid: type a number of tricks 8-16, or 'pass'")


def parse_answer(text: str, view: PlayerView) -> int:
    """The action an answer names, or ValueError with a message for the player."""
    legal = numbered_actions(view)
    answer = text.strip()
    if not answer:
        raise ValueError("please type a card (like TH) or a number from the list")
    if view.phase == BID and not (answer.isdigit() and int(answer) < 8):
        return _parse_bid(answer, view)
    if answer.isdigit():
        number = int(answer)
        if not 1 <= number <= len(legal):
            raise ValueError(f"no action number {number}: choose 1-{len(legal)}")
        return legal[number - 1]
    if view.phase == ASSIGN:
        for action in legal:
            if answer.replace(" ", "") == action_text(action, view.rules)[7:]:
                return action
        choices = ", ".join(action_text(a, view.rules)[7:] for a in legal)
        raise ValueError(f"{answer!r} is not an assignment: type the quotas for dealer-eldest-middle ({choices})")
    if view.phase == TAKE and answer.lower() in ("pass", "decline", "no"):
        return PASS_ACTION
    if view.phase == TRUMP:
        word = answer.lower().removeprefix("trump").removeprefix("call").strip()
        calls = {"nt": NT_ACTION, "no trump": NT_ACTION, "notrump": NT_ACTION}
        calls.update({"miz": MIZ_ACTION, "misere": MIZ_ACTION, "misère": MIZ_ACTION})
        if word in calls:
            if not view.legal >> calls[word] & 1:
                raise ValueError(f"{answer!r} is not a call you can make now (each call once per game)")
            return calls[word]
        for suit in range(4):
            if word in (SUIT_LETTERS[suit].lower(), SUIT_NAMES[suit], SUIT_NAMES[suit][:-1]):
                return TRUMP_ACTION_BASE + suit
        raise ValueError(f"{answer!r} is not a suit: type C, D, H or S (or clubs, diamonds, hearts, spades)")
    try:
        card = parse_card(answer)
    except CardError:
        raise ValueError(
            f"{answer!r} is not a card: write a rank (2-9, T or 10, J, Q, K, A) then a suit (C, D, H, S), "
            f"e.g. TH or 10h, or a number from the list"
        ) from None
    if not view.hand >> card & 1:
        raise ValueError(f"you do not hold {CARD_TEXT[card]}")
    if not view.legal >> card & 1:
        if view.phase == PLAY and view.trick:
            led = view.led_suit
            follow = " ".join(CARD_TEXT[c] for c in from_mask(view.hand & SUIT_MASK[led]))
            raise ValueError(f"you must follow {SUIT_NAMES[led]}: play one of {follow}")
        raise ValueError(f"{CARD_TEXT[card]} cannot be played now")
    return card


class HumanAgent(Agent):
    """Asks a person for each action; see the module docstring."""

    name = "human"

    def __init__(
        self,
        seed: int | None = None,
        input_stream: TextIO | None = None,
        output_stream: TextIO | None = None,
        unicode_suits: bool = False,
    ) -> None:
        super().__init__(seed)
        self.input = input_stream if input_stream is not None else sys.stdin
        self.output = output_stream if output_stream is not None else sys.stdout
        self.unicode_suits = unicode_suits

    def say(self, text: str) -> None:
        """Write a line to the person."""
        print(text, file=self.output, flush=True)

    def act(self, view: PlayerView, observation: dict[str, Any] | None = None) -> int:
        legal = numbered_actions(view)
        if not legal:
            raise ValueError(f"human: seat {view.seat} is not to act")
        self.say("")
        self.say(render_table(view, unicode_suits=self.unicode_suits))
        if len(legal) == 1:  # forced: nothing to ask
            what = "card" if legal[0] < NUM_CARDS else "choice"
            self.say(f"  your only legal {what}: {_action_label(legal[0], view)} (played for you)")
            return legal[0]
        self.say("Legal: " + "  ".join(f"{i}) {_action_label(a, view)}" for i, a in enumerate(legal, 1)))
        while True:
            self.output.write(_prompt(view))
            self.output.flush()
            line = self.input.readline()
            if not line:
                self.say("")
                raise HumanQuit("end of input")
            answer = line.strip()
            if answer.lower() in QUIT_WORDS:
                raise HumanQuit("quit")
            if answer.lower() in HELP_WORDS:
                self.say(HELP)
                continue
            try:
                action = parse_answer(answer, view)
            except ValueError as err:
                self.say(f"  {err}")
                continue
            if action < NUM_CARDS:
                self.say(f"  you chose {CARD_TEXT[action]}")
            return action
