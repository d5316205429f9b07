"""Pictures of the table: an RGB image (numpy ``uint8``, shape ``(H, W, 3)``).

:func:`table_picture` draws

- a **player's view** (a :class:`~sm_env.core.knowledge.PlayerView`, or a game and
  a seat, which goes through :func:`~sm_env.core.knowledge.player_view`): that
  seat's own hand face up, the others as card backs, and only what that seat
  may know (its exchanges, the kitty if it is the dealer and took it, cards
  shown to it); two games that differ only in cards hidden from that seat
  give the same picture;
- the **whole table** (a game and no seat): every hand face up, the kitty and
  the discards, for replays and spectators.

It draws the :mod:`sm_env.display.scene` description of the table (the same one the
browser pages show), with Pillow and its built-in font; suits are drawn as
shapes, so no font with card symbols is needed. This is what
``render_mode="rgb_array"`` returns (Gymnasium's convention, usable by
``gymnasium.wrappers.RecordVideo`` and ``imageio``).

Layout (``width`` x ``height``, default 960 x 600): the viewer (seat 0 for
the whole table) at the bottom, the seat to its left at the top left, the
seat to its right at the top right; a header line (hand, phase, trump); the
open trick and the last trick in the middle; exchanges, kitty, discards and
shown cards in a column on the right.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from sm_env.core.game import Game
from sm_env.core.knowledge import PlayerView, player_view

from .scene import full_table, seat_table

FELT = (31, 107, 67)
FELT_DARK = (23, 79, 50)
WHITE = (255, 255, 255)
INK = (27, 27, 27)
RED = (192, 38, 45)
GOLD = (242, 193, 78)
BACK = (43, 76, 154)
BACK_LINE = (90, 120, 200)
GREY = (200, 200, 200)

NAMES = ("player_0", "player_1", "player_2", "player_3")  # by seat; player_3 only with four players


def _pillow() -> tuple[Any, Any, Any]:
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:
        raise ImportError(
            "table pictures (render_mode='rgb_array') need Pillow: pip install pillow "
            "(or the project's web extra: pip install -e '.[web]')"
        ) from None
    return Image, ImageDraw, ImageFont


@lru_cache(maxsize=8)
def _font(size: int) -> Any:
    _, _, image_font = _pillow()
    try:
        return image_font.load_default(size=size)
    except TypeError:  # Pillow < 10.1: one bitmap size only
        return image_font.load_default()


def table_picture(
    source: PlayerView | Game, seat: int | None = None, width: int = 960, height: int = 600
) -> np.ndarray:
    """An RGB picture of a player's view, or of the whole table (a game and no seat)."""
    if width < 480 or height < 300:
        raise ValueError(f"the picture must be at least 480 x 300 pixels, got {width} x {height}")
    if isinstance(source, PlayerView):
        table = seat_table(source, NAMES)
    elif isinstance(source, Game):
        table = full_table(source, NAMES) if seat is None else seat_table(player_view(source, seat), NAMES)
    else:
        raise TypeError(f"table_picture needs a PlayerView or a Game, got {type(source).__name__}")
    return draw_table(table, width, height)


def draw_table(table: dict[str, Any], width: int = 960, height: int = 600) -> np.ndarray:
    """Draw a :mod:`sm_env.display.scene` table description (see the module docstring for the layout)."""
    image_mod, draw_mod, _ = _pillow()
    image = image_mod.new("RGB", (width, height), FELT)
    painter = _Painter(draw_mod.Draw(image), width / 960)
    painter.table(table, width, height)
    return np.asarray(image, dtype=np.uint8).copy()


class _Painter:
    """Drawing helpers; every length is scaled by ``scale`` (1.0 for 960 pixels wide)."""

    def __init__(self, draw: Any, scale: float) -> None:
        self.d = draw
        self.k = scale

    def s(self, value: float) -> int:
        return int(round(value * self.k))

    def text(self, xy: tuple[float, float], text: str, size: int = 15, fill: tuple[int, int, int] = WHITE) -> None:
        self.d.text((xy[0], xy[1]), text, font=_font(max(8, self.s(size))), fill=fill)

    # ------------------------------------------------------------------ suits and cards

    def suit(self, suit: str, cx: float, cy: float, r: float, fill: tuple[int, int, int]) -> None:
        """A suit symbol centred at (cx, cy), about 2r wide."""
        d = self.d
        if suit == "D":
            d.polygon([(cx, cy - r), (cx + r * 0.75, cy), (cx, cy + r), (cx - r * 0.75, cy)], fill=fill)
        elif suit == "H":
            q = r * 0.5
            d.ellipse([cx - r, cy - r * 0.8, cx, cy + q * 0.2], fill=fill)
            d.ellipse([cx, cy - r * 0.8, cx + r, cy + q * 0.2], fill=fill)
            d.polygon([(cx - r * 0.97, cy - r * 0.15), (cx + r * 0.97, cy - r * 0.15), (cx, cy + r)], fill=fill)
        elif suit == "S":
            q = r * 0.5
            d.ellipse([cx - r, cy - q * 0.2, cx, cy + r * 0.6], fill=fill)
            d.ellipse([cx, cy - q * 0.2, cx + r, cy + r * 0.6], fill=fill)
            d.polygon([(cx - r * 0.97, cy + r * 0.1), (cx + r * 0.97, cy + r * 0.1), (cx, cy - r)], fill=fill)
            d.polygon([(cx, cy + r * 0.2), (cx - r * 0.4, cy + r), (cx + r * 0.4, cy + r)], fill=fill)
        else:  # clubs
            c = r * 0.45
            for ox, oy in ((0, -0.5), (-0.5, 0.15), (0.5, 0.15)):
                x, y = cx + ox * r, cy + oy * r
                d.ellipse([x - c, y - c, x + c, y + c], fill=fill)
            d.polygon([(cx, cy), (cx - r * 0.4, cy + r), (cx + r * 0.4, cy + r)], fill=fill)

    def card(self, x: float, y: float, text: str | None, w: float = 40, h: float = 56, mark: bool = False) -> None:
        """A card with its top-left corner at (x, y): face up (``text`` such as ``TH``) or a back (None)."""
        size = int(18 * w / 40)
        w, h = self.s(w), self.s(h)
        radius = max(2, self.s(5))
        if mark:
            self.d.rounded_rectangle([x - 3, y - 3, x + w + 3, y + h + 3], radius=radius + 2, fill=GOLD)
        if text is None:
            self.d.rounded_rectangle([x, y, x + w, y + h], radius=radius, fill=BACK, outline=WHITE, width=1)
            inset = max(2, self.s(4))
            self.d.rounded_rectangle(
                [x + inset, y + inset, x + w - inset, y + h - inset], radius=radius, outline=BACK_LINE
            )
            return
        self.d.rounded_rectangle([x, y, x + w, y + h], radius=radius, fill=WHITE, outline=GREY, width=1)
        colour = RED if text[1] in "HD" else INK
        rank = "10" if text[0] == "T" else text[0]
        self.text((x + w * 0.1, y + h * 0.03), rank, size=size, fill=colour)
        self.suit(text[1], x + w / 2, y + h * 0.66, w * 0.28, colour)

    def row(self, x: float, y: float, cards: Sequence[str | None], overlap: float, **kw: Any) -> None:
        for i, c in enumerate(cards):
            self.card(x + i * overlap, y, c, **kw)

    # ------------------------------------------------------------------ the table

    def seat(self, table: dict[str, Any], seat: int, x: float, y: float, width: float) -> None:
        p = table["players"][seat]
        acting = table["to_act"] == seat and not table["over"]
        box_h = self.s(120)
        self.d.rounded_rectangle(
            [x, y, x + width, y + box_h],
            radius=self.s(10),
            fill=FELT_DARK,
            outline=GOLD if acting else FELT_DARK,
            width=max(1, self.s(3)),
        )
        you = " (you)" if seat == table["seat"] else ""
        role = p["role"] or "bidding"  # no role during the auction (nobody deals yet)
        self.text((x + self.s(10), y + self.s(6)), f"{NAMES[seat]}{you} - {role}", size=17)
        if p["quota"] is None:  # the dealer has still to assign the quotas
            stats = f"quota ?  tricks {p['tricks']}  score {p['score']:+d}"
        else:
            balance = p["tricks"] - p["quota"]
            stats = f"quota {p['quota']}  tricks {p['tricks']} ({balance:+d})  score {p['score']:+d}"
        self.text((x + self.s(10), y + self.s(28)), stats, size=14, fill=GOLD)
        hand = table["hands"][seat]
        cards: list[str | None] = list(hand) if hand is not None else [None] * p["cards"]
        if cards:
            overlap = min(self.s(42), (width - self.s(60)) / max(1, len(cards) - 1))
            self.row(x + self.s(10), y + self.s(52), cards, overlap)

    def trick(self, cards: Sequence[dict[str, Any]], x: float, y: float, label: str, winner: int | None) -> None:
        self.text((x, y), label, size=14)
        for i, pc in enumerate(cards):
            cx = x + i * self.s(62)
            self.card(cx, y + self.s(22), pc["card"], mark=winner == pc["seat"])
            self.text((cx, y + self.s(82)), NAMES[pc["seat"]].replace("player_", "p"), size=12)

    def table(self, table: dict[str, Any], width: int, height: int) -> None:
        k = self.s
        me = table["seat"] if table["seat"] is not None else 0
        trump = table["trump"]
        header = f"Sergeant Major [{table['rules']}]  hand {table['hand_number']}  {table['phase']}  trump:"
        self.text((k(14), k(10)), header, size=18)
        if trump:
            self.suit(
                trump,
                k(14) + self.d.textlength(header, font=_font(k(18))) + k(16),
                k(21),
                k(9),
                WHITE if trump in "CS" else (255, 180, 180),
            )
        else:
            self.text((k(14) + self.d.textlength(header, font=_font(k(18))) + k(6), k(10)), "none", size=18)
        if table["over"]:
            winner = table["winner"]
            won = winner if isinstance(winner, list) else [winner] if winner is not None else []
            result = "game over: won by " + ", ".join(NAMES[s] for s in won) if won else "game over"
            self.text((k(600), k(10)), result, size=18, fill=GOLD)
        elif table["to_act"] is not None:
            self.text((k(600), k(10)), f"to act: {NAMES[table['to_act']]}", size=18, fill=GOLD)
        n = len(table["players"])
        if n == 3:  # left at the top left, right at the top right
            seat_w = k(330)
            self.seat(table, (me + 1) % 3, k(14), k(44), seat_w)
            self.seat(table, (me + 2) % 3, width - k(14) - seat_w, k(44), seat_w)
        else:  # four players: left, across and right along the top
            seat_w = k(300)
            for i, x in enumerate((k(14), (width - seat_w) / 2, width - k(14) - seat_w), 1):
                self.seat(table, (me + i) % n, x, k(44), seat_w)
        bottom_w = width - k(300)
        self.seat(table, me, k(14), height - k(134), bottom_w)
        # middle: the open trick and the last closed one
        closed = [t for t in table["tricks"] if t["winner"] is not None]
        mid_y = k(180)
        if table["trick"] is not None:
            t = table["trick"]
            self.trick(t["cards"], k(40), mid_y, f"trick {t['number']} (led by {NAMES[t['leader']]})", None)
        if closed:
            last = closed[-1]
            self.trick(last["cards"], k(300), mid_y, f"last trick: {NAMES[last['winner']]} won", last["winner"])
        # right column: exchanges, kitty, discards, shown
        x, y = width - k(270), height - k(134) - k(150)
        lines: list[tuple[str, list[str] | None]] = []
        for e in table["exchanges"]:
            head = f"{NAMES[e['from']]} -> {NAMES[e['to']]}: {e['count']}"
            lines.append((head, None))
            if e["sent"] is not None:
                lines.append(("  sent", e["sent"]))
                lines.append(("  back", e["returned"] or []))
        if table["kitty_size"]:
            lines.append(("kitty", table["kitty"]) if table["kitty"] is not None else ("kitty: face down", None))
            if table["discards"]:
                lines.append(("discards", table["discards"]))
        for shown in table["shown"]:
            lines.append((f"shown to {NAMES[shown['to']]}", shown["cards"]))
        y = max(k(180), y - max(0, len(lines) - 5) * k(26))
        for label, cards in lines[-10:]:
            self.text((x, y), label, size=13)
            if cards:
                self.row(x + k(110), y - k(2), cards, k(24), w=22, h=30)
            y += k(32) if cards else k(20)
