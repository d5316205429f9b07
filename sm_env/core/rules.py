"""The rule set: the standard game of docs/rules.md sections 1-8 plus the named
variant options of sections 9 and 10, presets, and validation.

A :class:`RuleSet` is immutable. Build one with keywords, from a preset name
or from a plain dict (as a config file or a game record gives it)::

    RuleSet()                                  # "standard"
    RuleSet(quotas=(9, 5, 2), pickup_before_discard=True)
    RuleSet.from_any("woburn")
    RuleSet.from_any({"max_exchange": 3})

Options (all off in "standard"):

==========================  ==================================================
``pickup_before_discard``   dealer takes the kitty (20 cards), then discards 4
``trump_after_kitty``       with pickup_before_discard: kitty, trump, discards
``quotas``                  (dealer, eldest, middle); sums to the tricks/hand
``no_exchange``             hands are independent; no exchange ever
``max_exchange``            N: nobody gives or takes more than N cards a hand
``win_tricks``              N: first to take N+ tricks in a hand wins (12)
``win_margin``              N: first to take N+ tricks over quota wins
``target_score``            N: first whose running score reaches N wins
``target_symmetric``        with target_score: reaching -N also ends the game
``dealer_makes_quota``      from hand 3 on, a dealer making quota wins: true
                            (or "made") at least its quota, "up" more than it
``fixed_hands``             N: exactly N hands, highest score wins
``no_kitty_51``             2C removed, 17 cards each, no kitty, no discards
``chips``                   chip scoring: every up player wins its surplus
                            from every down player (section 10.7)
``trump_before_exchange``   the dealer names trump before the exchange
``kitty_before_exchange``   kitty and discards before the exchange (sets
                            pickup_before_discard); no show rule
``trump_after_send``        sends, then trump, then returns
``dealer_assigns_quotas``   the dealer gives the three quotas to the seats
                            (actions 68-73) at the start of every hand
``first_up_exchanges_first``  two up players: the one that got up first in
                            the previous hand exchanges first
``kitty_trick``             the dealer's 4 discards count as its first trick
                            (17 tricks; sets pickup_before_discard)
``auction``                 Woburn first-round auction: bids 8-16 (actions
                            58 pass, 59-67) decide hand 1's dealer and quotas
``calls``                   the dealer calls a suit, no trump (56) or misère
                            (57) instead of trump; each player makes each call
                            once, so the game lasts 18 hands (no exchange)
``one_card_kitty``          17 cards each, the 52nd face up; after trump the
                            holder of 2D may take it, putting a card out of
                            play (action 58 declines; 9-5-3, 13 tricks win)
``players``                 3 (the default) or 4: four players, 12 cards
                            each, quotas (dealer, eldest, third, fourth)
                            summing to 12, 9 tricks win (section 10.6)
==========================  ==================================================

Decisions where docs/rules.md is open:

- ``win_tricks`` defaults to 12 unless another end condition (win_margin,
  target_score, dealer_makes_quota, fixed_hands) is set; then it is off
  unless given explicitly.
- ``quotas`` defaults to 8-5-3, or 8-6-3 with ``no_kitty_51``, or 9-5-3 with
  ``kitty_trick`` or ``one_card_kitty`` (17 tricks counted), or 5-3-2-2 with
  four players.
- ``win_tricks`` defaults to 13 with ``one_card_kitty`` (docs/rules.md 10.5).
- ``one_card_kitty`` is refused with ``pickup_before_discard`` (and so
  ``trump_after_kitty``), ``kitty_before_exchange``, ``kitty_trick`` and
  ``no_kitty_51``: it has no kitty to take and no discards.
- ``calls`` turns ``no_exchange`` on (it implies it), needs the quotas
  8-5-3, sets no 12-trick rule (``win_tricks`` stays null unless given) and
  is refused with ``auction``, ``kitty_before_exchange``,
  ``trump_after_kitty``, ``kitty_trick``, ``one_card_kitty``,
  ``no_kitty_51``, ``dealer_assigns_quotas`` and ``fixed_hands`` above 18
  (docs/rules.md 10.3).
- ``auction`` is refused with ``kitty_trick``, ``one_card_kitty``,
  ``no_kitty_51`` and ``dealer_assigns_quotas`` (docs/rules.md 10.2); from
  hand 2 on the quotas are the rule set's (any triple summing to 16).
- Four players (``players: 4``): 12 tricks a hand; ``win_tricks`` defaults
  to 9 instead of 12; ``dealer_makes_quota`` counts from hand 4. Refused
  with ``no_kitty_51``, ``kitty_trick``, ``dealer_assigns_quotas``,
  ``one_card_kitty``, ``auction`` and ``calls`` (docs/rules.md 10.2, 10.3,
  10.5, 10.6).
- End conditions are checked at the end of each hand in the table order
  (win_tricks, win_margin, target_score, dealer_makes_quota, fixed_hands);
  the first one met decides. Among the players meeting it, the highest
  deciding figure (tricks, tricks over quota, running score) wins; a tie
  shares the win. ``fixed_hands`` and the symmetric target compare running
  scores.
- Equal quotas (a custom triple): where an order "by current quota" is
  needed, ties go in role order dealer, eldest, middle; with four players
  in play order from the eldest (eldest, third, fourth, dealer), as
  docs/rules.md 10.6 says.
- ``kitty_before_exchange`` and ``kitty_trick`` imply
  ``pickup_before_discard``: the rule set turns it on (so a record lists it
  as true).
- The phase-order options (section 10.1) and ``first_up_exchanges_first``
  are refused with ``no_exchange``
  (with no exchange there is nothing to order them against), and
  ``kitty_before_exchange`` with ``no_kitty_51`` (no kitty).
- ``dealer_makes_quota`` is kept as ``True`` (``"made"`` is read as
  ``True``) or ``"up"``; ``"up"`` is refused when the dealer's quota is all
  the tricks of a hand (it could never take more).
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, fields
from typing import Any

SECTION_10_OPTIONS = (
    "chips",
    "trump_before_exchange",
    "kitty_before_exchange",
    "trump_after_send",
    "dealer_assigns_quotas",
    "first_up_exchanges_first",
    "kitty_trick",
    "one_card_kitty",
    "auction",
    "calls",
)
"""The section 10 boolean options (docs/rules.md): off in every preset but section 10's."""

OPTION_NAMES = (
    (
        "pickup_before_discard",
        "trump_after_kitty",
        "quotas",
        "no_exchange",
        "max_exchange",
        "win_tricks",
        "win_margin",
        "target_score",
        "target_symmetric",
        "dealer_makes_quota",
        "fixed_hands",
        "no_kitty_51",
    )
    + SECTION_10_OPTIONS
    + ("players",)
)
_BOOL_OPTIONS = (
    "pickup_before_discard",
    "trump_after_kitty",
    "no_exchange",
    "target_symmetric",
    "no_kitty_51",
) + SECTION_10_OPTIONS

_INT_OPTIONS = ("max_exchange", "win_tricks", "win_margin", "target_score", "fixed_hands")

PLAYER_COUNTS = (3, 4)
"""The allowed values of the ``players`` option (docs/rules.md 1 and 10.6)."""

FOUR_PLAYER_REFUSED = ("no_kitty_51", "kitty_trick", "dealer_assigns_quotas", "one_card_kitty", "auction", "calls")
"""Options that make no sense with four players (docs/rules.md 10.6)."""


_STANDARD_VALUES: dict[str, Any] = {
    "pickup_before_discard": False,
    "trump_after_kitty": False,
    "quotas": (8, 5, 3),
    "no_exchange": False,
    "max_exchange": None,
    "win_tricks": 12,
    "win_margin": None,
    "target_score": None,
    "target_symmetric": False,
    "dealer_makes_quota": False,
    "fixed_hands": None,
    "no_kitty_51": False,
    "chips": False,
    "trump_before_exchange": False,
    "kitty_before_exchange": False,
    "trump_after_send": False,
    "dealer_assigns_quotas": False,
    "first_up_exchanges_first": False,
    "kitty_trick": False,
    "one_card_kitty": False,
    "auction": False,
    "calls": False,
    "players": 3,
}


# The named presets: the classic combinations of docs/rules.md section 9 (options
# not listed keep their standard value).
_PRESET_OPTIONS: dict[str, dict[str, Any]] = {
    "standard": {},
    "canadian": {"quotas": (9, 5, 2), "pickup_before_discard": True, "target_score": 10},
    "9-2-5": {"quotas": (9, 2, 5)},
    "6-3-8": {"no_kitty_51": True, "quotas": (8, 6, 3), "target_score": 10},
    "woburn": {"max_exchange": 3},
    "independent": {"no_exchange": True},
    "all-sixteen": {"win_tricks": 16},
    "margin-5": {"win_margin": 5},
    "target-10": {"target_score": 10},
    "dealer-makes-quota": {"dealer_makes_quota": True},
    "fixed-9": {"fixed_hands": 9},
    "fixed-12": {"fixed_hands": 12},
    # section 10
    "dealer-makes-quota-up": {"dealer_makes_quota": "up"},
    "chips-12": {"chips": True, "fixed_hands": 12},
    "9-2-5-variation": {
        "quotas": (9, 2, 5),
        "kitty_before_exchange": True,
        "pickup_before_discard": True,
        "trump_after_send": True,
        "target_score": 15,
        "target_symmetric": True,
    },
    "dealer-assigns": {"dealer_assigns_quotas": True},
    "3-5-9": {
        "quotas": (9, 5, 3),
        "kitty_trick": True,
        "pickup_before_discard": True,
        "first_up_exchanges_first": True,
    },
    "9-5-3-one-card": {"quotas": (9, 5, 3), "one_card_kitty": True},
    "woburn-auction": {"auction": True, "max_exchange": 3},
    "calls": {"calls": True, "no_exchange": True},
    "four-5-3-2-2": {"players": 4, "quotas": (5, 3, 2, 2), "win_tricks": 9},
    "four-6-3-2-1": {"players": 4, "quotas": (6, 3, 2, 1), "win_tricks": 9},
}


class RulesError(ValueError):
    """An unknown option, a wrong type or a combination that makes no sense."""


@dataclass(frozen=True)
class RuleSet:
    """One way of playing Sergeant Major; see the module docstring."""

    name: str | None = None
    pickup_before_discard: bool = False
    trump_after_kitty: bool = False
    quotas: tuple[int, ...] | None = None
    no_exchange: bool = False
    max_exchange: int | None = None
    win_tricks: int | None = None
    win_margin: int | None = None
    target_score: int | None = None
    target_symmetric: bool = False
    dealer_makes_quota: bool | str = False
    fixed_hands: int | None = None
    no_kitty_51: bool = False
    chips: bool = False
    trump_before_exchange: bool = False
    kitty_before_exchange: bool = False
    trump_after_send: bool = False
    dealer_assigns_quotas: bool = False
    first_up_exchanges_first: bool = False
    kitty_trick: bool = False
    one_card_kitty: bool = False
    auction: bool = False
    calls: bool = False
    players: int = 3

    def __post_init__(self) -> None:
        if self.name is not None and not isinstance(self.name, str):
            raise RulesError(f"rule set 'name' must be a string or None, got {type(self.name).__name__}")
        for key in _BOOL_OPTIONS:
            value = getattr(self, key)
            if value is None:
                object.__setattr__(self, key, False)
            elif not isinstance(value, bool):
                raise RulesError(f"rule option {key!r} must be true or false, got {value!r}")
        self._check_dealer_makes_quota()
        self._check_players()
        for key in _INT_OPTIONS:
            value = getattr(self, key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise RulesError(f"rule option {key!r} must be an integer or null, got {value!r}")
        tricks = self.tricks_per_hand
        quotas = self.quotas
        n = self.players
        roles = "[dealer, eldest, middle]" if n == 3 else "[dealer, eldest, third, fourth]"
        if quotas is None:
            quotas = (
                (5, 3, 2, 2)
                if n == 4
                else (8, 6, 3)
                if self.no_kitty_51
                else (9, 5, 3)
                if self.kitty_trick or self.one_card_kitty
                else (8, 5, 3)
            )
        if not isinstance(quotas, (list, tuple)):
            # a set or dict has no dependable order: the quotas are by role, so the order is the meaning
            raise RulesError(f"rule option 'quotas' must be an ordered list {roles}, got {type(quotas).__name__}")
        quotas = tuple(quotas)
        if len(quotas) != n or any(isinstance(q, bool) or not isinstance(q, int) or q < 0 for q in quotas):
            raise RulesError(
                f"rule option 'quotas' must be {n} whole numbers >= 0 {roles} with {n} players, got {list(quotas)}"
            )
        if sum(quotas) != tricks:
            raise RulesError(
                f"quotas {list(quotas)} sum to {sum(quotas)}, but a hand has {tricks} tricks: they must sum to {tricks}"
            )
        object.__setattr__(self, "quotas", quotas)
        if self.calls:
            self._check_calls(quotas)
        self._check_phase_order()
        if self.trump_after_kitty and not self.pickup_before_discard:
            raise RulesError("trump_after_kitty needs pickup_before_discard (the dealer must hold the kitty to see it)")
        if self.no_kitty_51 and (self.pickup_before_discard or self.trump_after_kitty):
            raise RulesError(
                "no_kitty_51 has no kitty: pickup_before_discard and trump_after_kitty make no sense with it"
            )
        if self.no_exchange and self.max_exchange is not None:
            raise RulesError("max_exchange limits the exchange; it makes no sense with no_exchange")
        limits = {
            "max_exchange": (1, tricks),
            "win_tricks": (1, tricks),
            "win_margin": (1, tricks),
            "target_score": (1, None),
            "fixed_hands": (1, None),
        }
        for key, (low, high) in limits.items():
            value = getattr(self, key)
            if value is not None and (value < low or (high is not None and value > high)):
                allowed = f"{low}..{high}" if high is not None else f">= {low}"
                raise RulesError(f"rule option {key!r} must be {allowed} or null, got {value}")
        if self.target_symmetric and self.target_score is None:
            raise RulesError("target_symmetric needs target_score")
        if self.dealer_makes_quota == "up" and quotas[0] >= tricks:
            raise RulesError(
                f"dealer_makes_quota 'up' needs the dealer to take more than its quota {quotas[0]}, but a hand has "
                f"only {tricks} tricks: lower the dealer's quota or use dealer_makes_quota true"
            )
        if self.win_tricks is None and not self._other_end_condition() and not self.calls:
            object.__setattr__(self, "win_tricks", self.default_win_tricks)
        object.__setattr__(self, "name", self._checked_name())

    def _check_phase_order(self) -> None:
        """docs/rules.md 10.1: at most one trump timing; kitty_before_exchange implies pickup_before_discard."""
        timings = [k for k in ("trump_before_exchange", "trump_after_send", "trump_after_kitty") if getattr(self, k)]
        if len(timings) > 1:
            raise RulesError(
                f"{' and '.join(timings)} each say when trump is named: use at most one of trump_before_exchange, "
                f"trump_after_send and trump_after_kitty"
            )
        order = [
            k
            for k in ("trump_before_exchange", "kitty_before_exchange", "trump_after_send", "first_up_exchanges_first")
            if getattr(self, k)
        ]
        if order and self.no_exchange:
            raise RulesError(
                f"{order[0]} orders the exchange or the phases around it; it makes no sense with no_exchange"
            )
        if self.one_card_kitty:
            clash = [
                k
                for k in ("pickup_before_discard", "kitty_before_exchange", "kitty_trick", "no_kitty_51")
                if getattr(self, k)
            ]
            if clash:
                raise RulesError(
                    f"one_card_kitty has a single face-up card and no kitty to take or discards: it makes no sense "
                    f"with {' and '.join(clash)}"
                )
        if self.auction:
            clash = [
                k for k in ("kitty_trick", "one_card_kitty", "no_kitty_51", "dealer_assigns_quotas") if getattr(self, k)
            ]
            if clash:
                raise RulesError(
                    f"auction (the Woburn first-round auction, docs/rules.md 10.2) is not combined with "
                    f"{' and '.join(clash)}"
                )
        for option in ("kitty_before_exchange", "kitty_trick"):  # both imply pickup_before_discard
            if getattr(self, option):
                if self.no_kitty_51:
                    raise RulesError(f"{option} takes the kitty, but no_kitty_51 has none")
                object.__setattr__(self, "pickup_before_discard", True)

    def _check_calls(self, quotas: tuple[int, ...]) -> None:
        """docs/rules.md 10.3: 8-5-3, no exchange, 18 hands; the refused combinations."""
        clash = [
            k
            for k in (
                "auction",
                "kitty_before_exchange",
                "trump_after_kitty",
                "kitty_trick",
                "one_card_kitty",
                "no_kitty_51",
                "dealer_assigns_quotas",
            )
            if getattr(self, k)
        ]
        if clash:
            raise RulesError(f"calls (docs/rules.md 10.3) is not combined with {' and '.join(clash)}")
        if quotas != (8, 5, 3):
            raise RulesError(f"calls needs the quotas 8-5-3 (a misère hand turns them into maxima), got {list(quotas)}")
        if self.fixed_hands is not None and self.fixed_hands > 18:
            raise RulesError(f"calls ends the game after hand 18; fixed_hands {self.fixed_hands} is more than 18")
        object.__setattr__(self, "no_exchange", True)

    def _check_players(self) -> None:
        """docs/rules.md 10.6: 3 or 4 players; four players refuse the options that need three."""
        value = self.players
        if value is None:
            object.__setattr__(self, "players", 3)
            value = 3
        if type(value) is not int or value not in PLAYER_COUNTS:
            raise RulesError(f"rule option 'players' must be 3 or 4, got {value!r}")
        if value == 4:
            refused = [key for key in FOUR_PLAYER_REFUSED if getattr(self, key)]
            if refused:
                raise RulesError(
                    f"{refused[0]} makes no sense with four players (players: 4); four players are not combined "
                    f"with {', '.join(FOUR_PLAYER_REFUSED)}"
                )

    def _check_dealer_makes_quota(self) -> None:
        value = self.dealer_makes_quota
        if value is None or value is False:
            object.__setattr__(self, "dealer_makes_quota", False)
        elif value is True or value == "made":
            object.__setattr__(self, "dealer_makes_quota", True)
        elif value != "up":
            raise RulesError(
                f'rule option \'dealer_makes_quota\' must be false, true (or "made": at least its quota) or "up" '
                f"(more than its quota), got {value!r}"
            )

    def _checked_name(self) -> str:
        """The name that describes these options (docs/interface.md, record ``rules.name``).

        A preset's name is kept only when the options are exactly that
        preset's ("Woburn" becomes "woburn"); otherwise, and for no name or
        "custom", the name is that of the preset whose options these are
        ("standard" when every option is standard), else "custom". Any other
        name given is replaced the same way: docs/interface.md allows only these.
        """
        key = (self.name or "").strip().lower()
        preset = _PRESET_OPTIONS.get(key)
        if preset is not None and self._matches(preset):
            return key
        return next((name for name, options in _PRESET_OPTIONS.items() if self._matches(options)), "custom")

    def _matches(self, preset_options: dict[str, Any]) -> bool:
        expected = {**_STANDARD_VALUES, **preset_options}
        if "win_tricks" not in preset_options and any(
            preset_options.get(key) for key in ("win_margin", "target_score", "dealer_makes_quota", "fixed_hands")
        ):
            expected["win_tricks"] = None
        elif "win_tricks" not in preset_options and preset_options.get("one_card_kitty"):
            expected["win_tricks"] = 13
        elif "win_tricks" not in preset_options and preset_options.get("calls"):
            expected["win_tricks"] = None
        return all(getattr(self, key) == expected[key] for key in OPTION_NAMES)

    def _other_end_condition(self) -> bool:
        return (
            self.win_margin is not None
            or self.target_score is not None
            or self.dealer_makes_quota
            or self.fixed_hands is not None
        )

    @property
    def num_players(self) -> int:
        """Seats at the table: 3, or 4 with ``players: 4`` (docs/rules.md 10.6)."""
        return self.players

    @property
    def tricks_per_hand(self) -> int:
        """Tricks counted in a hand (what the quotas sum to): 16, or 17 with no_kitty_51 (17 played) or
        kitty_trick (16 played plus the dealer's kitty trick) or one_card_kitty (17 played), or 12 with four
        players."""
        if self.players == 4:
            return 12
        return 17 if self.no_kitty_51 or self.kitty_trick or self.one_card_kitty else 16

    @property
    def default_win_tricks(self) -> int:
        """The tricks that win when no other end condition is set: 12, or 13 with one_card_kitty (10.5), or 9
        with four players (10.6)."""
        if self.players == 4:
            return 9
        return 13 if self.one_card_kitty else 12

    @functools.cached_property  # read on every action and observation: decided once per rule set
    def num_actions(self) -> int:
        """Size of the action space: 56, or 74 for rule sets that use actions 56-73 (docs/rules.md 10.8)."""
        return 74 if self.dealer_assigns_quotas or self.one_card_kitty or self.auction or self.calls else 56

    @property
    def hand_size(self) -> int:
        """Cards dealt to each seat, and tricks played in a hand: 16, or 17 with no_kitty_51 or one_card_kitty,
        or 12 with four players."""
        if self.players == 4:
            return 12
        return 17 if self.no_kitty_51 or self.one_card_kitty else 16

    @property
    def kitty_size(self) -> int:
        """Cards in the kitty that the dealer takes (and discards): 4, or 0 with no_kitty_51 or one_card_kitty."""
        return 0 if self.no_kitty_51 or self.one_card_kitty else 4

    @property
    def aside_size(self) -> int:
        """Cards put aside at the deal (a deal's ``kitty``): the kitty, or the face-up card of one_card_kitty."""
        return 1 if self.one_card_kitty else self.kitty_size

    def options(self) -> dict[str, Any]:
        """Every option by name, as the ``rules`` field of a game record."""
        out = {"name": self.name}
        for key in OPTION_NAMES:
            value = getattr(self, key)
            out[key] = list(value) if key == "quotas" else value
        return out

    @classmethod
    def from_any(cls, rules: RuleSet | str | dict[str, Any] | None) -> RuleSet:
        """A rule set from a preset name, a RuleSet or a dict of option names."""
        if rules is None:
            return STANDARD
        if isinstance(rules, RuleSet):
            return rules
        if isinstance(rules, str):
            key = rules.strip().lower()
            if key not in PRESETS:
                raise RulesError(f"unknown rule preset {rules!r}; presets are {sorted(PRESETS)}")
            return PRESETS[key]
        if isinstance(rules, dict):
            not_text = [key for key in rules if not isinstance(key, str)]
            if not_text:
                raise RulesError(
                    f"rule option names must be strings, got {not_text!r:.80}; options are {list(OPTION_NAMES)}"
                )
            unknown = sorted(set(rules) - set(OPTION_NAMES) - {"name"})
            if unknown:
                raise RulesError(f"unknown rule option(s) {unknown}; options are {list(OPTION_NAMES)}")
            options = dict(rules)
            name = options.pop("name", None)
            if name is not None and not isinstance(name, str):
                raise RulesError(f"rule set 'name' must be a string, got {name!r}")
            if name is not None and name.lower() in PRESETS and name.lower() != "custom":
                preset = asdict(PRESETS[name.lower()])
                preset.update(options)
                options = preset
                options.pop("name")
            return cls(name=name, **options)
        raise RulesError(f"rules must be a preset name, a RuleSet or a dict of options, got {type(rules).__name__}")

    def replace(self, **changes: Any) -> RuleSet:
        """A copy with some options changed (the name is recomputed)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        if "name" not in changes:
            values["name"] = None
        return RuleSet(**values)


PRESETS: dict[str, RuleSet] = {name: RuleSet(name=name, **options) for name, options in _PRESET_OPTIONS.items()}
STANDARD = PRESETS["standard"]
