"""The analysis of a game record: every decision scored by pimc, and the moves that cost more than a threshold.

    sergeant-major analyse game.json [--samples 20] [--seed 0] [--threshold 0.5] [--first-hand 1] [--hands N]
                                     [--out analysis.json]

:func:`analyse` steps through a record (:func:`sm_env.records.record_actions`, which checks it first) and, at
every decision of the hands chosen, builds the acting seat's :class:`~sm_env.core.knowledge.PlayerView` and
scores each legal action with :func:`agents.advice.advise` (pimc's values only). The **cost** of the move
played is the best value minus the played move's value, in tricks of balance (>= 0); a move is **flagged**
when its cost is above ``threshold``. Decisions pimc does not search (the exchange, the auction, the quota
assignment, the face-up card) and forced ones (one legal action) have no value and no cost.

The analysis (plain JSON, format :data:`FORMAT`)::

    {"format": "sergeant-major-analysis/1",
     "search": {"search": "pimc", "rollouts": "heuristic", "samples": 20, "seed": 0, "bid": true},
     "threshold": 0.5, "rules": "standard", "record_seed": 7, "players": 3,
     "record_sha256": "3f2a...",           # the record's fingerprint (record_fingerprint)
     "hands": [1, 10],                     # the hand entries analysed (first, last), of "record_hands"
     "record_hands": 10,
     "rollouts": 52400,                    # the cost: samples x legal actions, summed over the scored decisions
     "decisions": [{"step": 83,            # the action's number in the record (1-based): the viewer's step
                    "hand": 2, "seat": 1, "phase": "play", "where": "trick 5",
                    "played": "7H", "value": -1.2, "best": ["KH"], "best_value": 0.1,
                    "cost": 1.3, "flagged": true,
                    "values": {"7H": -1.2, "KH": 0.1, ...},   # null, with "note", when not scored
                    "note": null}, ...],
     "seats": [{"seat": 0, "decisions": 160, "scored": 120, "flagged": 3, "total_cost": 2.45,
                "mean_cost": 0.02}, ...]}

Two analyses are comparable when their ``search`` entries are equal. The same record, samples and seed give
the same analysis. Cost: (scored decisions) x samples x (legal actions) heuristic rollouts; ``samples`` is
capped by pimc's bound, and ``--hands`` bounds the hands searched (the rest are only re-played).

``record_sha256`` names the record analysed: :func:`record_fingerprint`, the SHA-256 of the record as
:func:`sm_env.records.replay` checks it, in canonical JSON (keys sorted, no spaces), so a record re-saved with
other spacing or key order keeps it. :func:`load_analysis` reads a file written by ``--out`` (at most
:data:`MAX_ANALYSIS_BYTES`), :func:`check_analysis` refuses one that is not of a given record or is malformed,
and :func:`hand_analyses` splits one into the analyses of its hands, each the same as the analysis of that
hand alone (``sergeant-major view RECORD --analysis FILE`` shows a stored analysis so, without searching).

:func:`move_text` says a decision's move by its decision type (``discarded QH``, ``named trump clubs``, ``sent QH
in the exchange``): the one wording of ``analyse``'s flagged moves and of the viewer's, which gets it in each
decision's ``move`` (:func:`with_moves`, added when the server sends an analysis; the file format is unchanged).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from sm_env.core.game import PHASE_NAMES, PLAY, Game, action_text
from sm_env.core.knowledge import player_view
from sm_env.files.json_files import JsonError, read_json, write_json
from sm_env.files.paths import OutputPathError, check_output_path
from sm_env.records import RecordActions, RecordError, load_record, record_actions

from .advice import DEFAULT_SAMPLES, MAX_SAMPLES, AdviceError, advise, check_settings, search_settings

PROG = "sergeant-major analyse"
FORMAT = "sergeant-major-analysis/1"
DEFAULT_THRESHOLD = 0.5
"""Flag a move that costs more than half a trick of balance."""
MAX_THRESHOLD = 100.0
COST_DIGITS = 6  # values and costs are rounded to 6 decimals in the analysis (their sums to floating noise)
MAX_ANALYSIS_BYTES = 64 * 2**20
"""The largest analysis file :func:`load_analysis` reads: an analysis takes about 400 bytes a decision (2 MB for a
100-hand game, about 40 MB for the longest record the viewer steps through, 100,000 actions)."""
DECISION_FIELDS = (
    "step",
    "hand",
    "seat",
    "phase",
    "where",
    "played",
    "value",
    "best",
    "best_value",
    "cost",
    "flagged",
    "values",
    "note",
)


class AnalysisError(ValueError):
    """An analysis that cannot be made: a bad record, or bad samples, seed, threshold or hands."""


def _where(game: Game) -> str:
    """Where in the hand a decision is: ``trick 5`` in the play, else the phase's name."""
    return f"trick {game.tricks_played + 1}" if game.phase == PLAY else PHASE_NAMES[game.phase]


def _round(value: float) -> float:
    return round(value, COST_DIGITS) + 0.0  # + 0.0: no -0.0


def check_threshold(threshold: Any) -> float:
    """The threshold as a float; AnalysisError unless it is a number from 0 to :data:`MAX_THRESHOLD`."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold):
        raise AnalysisError(f"threshold must be a number from 0 to {MAX_THRESHOLD:g} (tricks), got {threshold!r:.40}")
    if not 0 <= threshold <= MAX_THRESHOLD:
        raise AnalysisError(f"threshold must be a number from 0 to {MAX_THRESHOLD:g} (tricks), got {threshold}")
    return float(threshold)


def hand_range(count: int, first_hand: int = 1, hands: int | None = None) -> tuple[int, int]:
    """The hand entries (first, last), 1-based, of a record of ``count`` entries: ``hands`` of them (default:
    all the rest) from ``first_hand``; AnalysisError naming the values allowed."""
    if type(first_hand) is not int or not 1 <= first_hand <= count:
        raise AnalysisError(f"the first hand must be a whole number from 1 to {count} (the record's hands)")
    if hands is not None and (type(hands) is not int or hands < 1):
        raise AnalysisError(f"hands must be a whole number >= 1, got {hands!r:.40}")
    last = count if hands is None else min(count, first_hand + hands - 1)
    return first_hand, last


def _decision(step: int, number: int, game: Game, action: int, samples: int, seed: int, cap: int) -> dict[str, Any]:
    """The analysis of one decision: the acting seat's view, every legal action scored."""
    seat = game.current_player
    assert seat is not None
    view = player_view(game, seat)
    advice = advise(view, samples=samples, seed=seed, cap=cap, policy=False)
    entry: dict[str, Any] = {
        "step": step,
        "hand": number,
        "seat": seat,
        "phase": advice.phase,
        "where": _where(game),
        "played": action_text(action, game.rules),
        "value": None,
        "best": None,
        "best_value": None,
        "cost": None,
        "flagged": False,
        "values": None,
        "note": advice.search_note,
    }
    best = advice.best_value
    value = advice.value_of(action)
    if best is not None and value is not None:
        entry["values"] = {m.text: _round(m.value) for m in advice.moves if m.value is not None}
        entry["value"] = _round(value)
        entry["best_value"] = _round(best)
        entry["best"] = [m.text for m in advice.moves if m.value == best]
        entry["cost"] = _round(best - value)
    return entry


def _seat_table(decisions: list[dict[str, Any]], players: int) -> list[dict[str, Any]]:
    rows = []
    for seat in range(players):
        mine = [d for d in decisions if d["seat"] == seat]
        costs = [d["cost"] for d in mine if d["cost"] is not None]
        total = _round(sum(costs))
        rows.append(
            {
                "seat": seat,
                "decisions": len(mine),
                "scored": len(costs),
                "flagged": sum(1 for d in mine if d["flagged"]),
                "total_cost": total,
                "mean_cost": _round(total / len(costs)) if costs else None,
            }
        )
    return rows


def analyse_actions(
    read: RecordActions,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    threshold: float = DEFAULT_THRESHOLD,
    first_hand: int = 1,
    hands: int | None = None,
    cap: int = MAX_SAMPLES,
) -> dict[str, Any]:
    """The analysis (see the module docstring) of a record already read as actions."""
    try:
        check_settings(samples, seed, cap)
    except AdviceError as err:
        raise AnalysisError(str(err)) from None
    threshold = check_threshold(threshold)
    first, last = hand_range(len(read.hands), first_hand, hands)
    record = read.record
    decisions: list[dict[str, Any]] = []
    for step, (index, game, action) in enumerate(read.steps(), 1):
        if index + 1 > last:
            break
        if index + 1 >= first:
            entry = _decision(step, record["hands"][index]["number"], game, action, samples, seed, cap)
            entry["flagged"] = entry["cost"] is not None and entry["cost"] > threshold
            decisions.append(entry)
    return _assemble(read, search_settings(samples, seed), threshold, (first, last), decisions)


def _assemble(
    read: RecordActions,
    search: dict[str, Any],
    threshold: float,
    hands: tuple[int, int],
    decisions: list[dict[str, Any]],
    fingerprint: str | None = None,
) -> dict[str, Any]:
    """The analysis of the hand entries ``hands`` (first, last) from its decisions."""
    record = read.record
    return {
        "format": FORMAT,
        "search": search,
        "threshold": threshold,
        "rules": record["rules"].get("name", "custom"),
        "record_seed": record.get("seed"),
        "record_sha256": fingerprint or record_fingerprint(record),
        "players": read.rules.num_players,
        "hands": list(hands),
        "record_hands": len(read.hands),
        "rollouts": sum(search["samples"] * len(d["values"]) for d in decisions if d["values"] is not None),
        "decisions": decisions,
        "seats": _seat_table(decisions, read.rules.num_players),
    }


def record_fingerprint(record: dict[str, Any]) -> str:
    """The SHA-256 (hex) of a record in canonical JSON (keys sorted, no spaces, UTF-8): give it the record as
    checked (:attr:`sm_env.records.RecordActions.record`), so that any file of the same game gives the same."""
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def analyse(record: Any, **settings: Any) -> dict[str, Any]:
    """The analysis of a record (a dict; see the module docstring); ``settings`` are those of
    :func:`analyse_actions`. AnalysisError naming what is wrong (a record that does not replay included)."""
    try:
        read = record_actions(record)
    except RecordError as err:
        raise AnalysisError(f"not a record that can be analysed: {err}") from None
    return analyse_actions(read, **settings)


# ---------------------------------------------------------------------- stored analyses


def load_analysis(path: str | os.PathLike[str]) -> Any:
    """The JSON of an analysis file (not checked: :func:`check_analysis` does that), read within bounds
    (:func:`sm_env.files.json_files.read_json`: at most :data:`MAX_ANALYSIS_BYTES`, read no further, nested at
    most 32 levels, finite numbers); AnalysisError naming the path and what is wrong otherwise."""
    try:
        return read_json(path, "an analysis file", MAX_ANALYSIS_BYTES)
    except JsonError as err:
        raise AnalysisError(f"{err}; expected an analysis written by '{PROG} RECORD --out FILE'") from None


def _whole(value: Any, low: int = 0) -> bool:
    return type(value) is int and value >= low


def _number_or_none(value: Any) -> bool:
    return value is None or (type(value) in (int, float) and math.isfinite(value))


def _bad_decision(d: Any, step: int, number: int, seat: int, played: str, threshold: float) -> str | None:
    """What is wrong with the stored decision ``d`` of record step ``step`` (None: nothing)."""
    if not isinstance(d, dict) or set(d) != set(DECISION_FIELDS):
        keys = sorted(d) if isinstance(d, dict) else type(d).__name__
        return f"expected an object with the fields {', '.join(DECISION_FIELDS)}; got {keys!s:.120}"
    if d["step"] != step or type(d["step"]) is not int:
        return f"expected step {step} (the decisions of the hands analysed, in order), got {d['step']!r:.20}"
    if d["seat"] != seat or type(d["seat"]) is not int:
        return f"seat {d['seat']!r:.20}, but the record has player_{seat} acting at this step"
    if d["played"] != played:
        return f"played {d['played']!r:.20}, but the record has {played!r} at this step"
    if d["hand"] != number or type(d["hand"]) is not int:
        return f"hand {d['hand']!r:.20}, but this step is of hand {number} of the record"
    if not all(isinstance(d[k], str) for k in ("phase", "where")):
        return "phase and where must be texts"
    if not all(_number_or_none(d[k]) for k in ("value", "best_value", "cost")):
        return "value, best_value and cost must be numbers or null"
    if d["note"] is not None and not isinstance(d["note"], str):
        return "note must be a text or null"
    if d["best"] is not None and not (isinstance(d["best"], list) and all(isinstance(b, str) for b in d["best"])):
        return "best must be a list of action texts or null"
    values = d["values"]
    if values is not None and not (isinstance(values, dict) and all(_number_or_none(v) for v in values.values())):
        return "values must be an object of action text -> number, or null"
    scored = [d[k] is not None for k in ("value", "best", "best_value", "cost", "values")]
    if any(scored) and not all(scored):
        return "value, best, best_value, cost and values must all be given (a scored move) or all null"
    if d["flagged"] is not (d["cost"] is not None and d["cost"] > threshold):
        return (
            f"flagged is {d['flagged']!r:.10}, but the cost {d['cost']} and the threshold {threshold:g} say otherwise"
        )
    return None


def check_analysis(analysis: Any, read: RecordActions) -> dict[str, Any]:
    """``analysis`` (e.g. from :func:`load_analysis`; its threshold a float) if it is a whole analysis of the
    record ``read``:
    format :data:`FORMAT`, its ``record_sha256`` the record's :func:`record_fingerprint`, and every decision
    of the hands it names, in order, each with the seat that acted at its step and the move played there, and
    fields of the right kinds (``flagged`` agreeing with the cost and the threshold). AnalysisError naming the
    first thing wrong."""
    if not isinstance(analysis, dict) or analysis.get("format") != FORMAT:
        found = analysis.get("format") if isinstance(analysis, dict) else type(analysis).__name__
        raise AnalysisError(
            f"not an analysis (format {found!r:.40}; expected {FORMAT!r}, written by '{PROG} RECORD --out FILE')"
        )
    fingerprint = analysis.get("record_sha256")
    if fingerprint is None:
        raise AnalysisError(
            "the analysis names no record (no record_sha256: written before analyses carried the record's "
            f"fingerprint); analyse the record again: {PROG} RECORD --out FILE"
        )
    wanted = record_fingerprint(read.record)
    if fingerprint != wanted:
        raise AnalysisError(
            f"the analysis of another record: its record_sha256 is {str(fingerprint):.16}..., this record's is "
            f"{wanted[:16]}... (analyse this record: {PROG} RECORD --out FILE)"
        )
    search = analysis.get("search")
    if not (
        isinstance(search, dict)
        and isinstance(search.get("search"), str)
        and isinstance(search.get("rollouts"), str)
        and _whole(search.get("samples"), 1)
        and _whole(search.get("seed"))
    ):
        raise AnalysisError(f"search: expected {{search, rollouts, samples >= 1, seed >= 0, ...}}, got {search!r:.120}")
    threshold = check_threshold(analysis.get("threshold"))
    count = len(read.hands)
    hands = analysis.get("hands")
    if not (
        isinstance(hands, list)
        and len(hands) == 2
        and all(_whole(h, 1) for h in hands)
        and hands[0] <= hands[1] <= count
    ):
        raise AnalysisError(
            f"hands: expected [first, last] hand entries, 1 <= first <= last <= {count}, got {hands!r:.60}"
        )
    decisions = analysis.get("decisions")
    if not isinstance(decisions, list):
        raise AnalysisError(f"decisions: expected a list, got {type(decisions).__name__}")
    first, last = hands
    lo = sum(len(h) for h in read.hands[: first - 1])
    hi = lo + sum(len(h) for h in read.hands[first - 1 : last])
    if len(decisions) != hi - lo:
        raise AnalysisError(
            f"decisions: hands {first}-{last} of the record have {hi - lo} decisions, the analysis lists "
            f"{len(decisions)} (a file cut short or edited?)"
        )
    numbers = [h["number"] for h in read.record["hands"]]
    for step, (index, game, action) in enumerate(read.steps(), 1):
        if step > hi:
            break
        if step > lo:
            seat = game.current_player
            played = action_text(action, game.rules)
            problem = _bad_decision(decisions[step - lo - 1], step, numbers[index], seat, played, threshold)
            if problem:
                raise AnalysisError(f"decisions[{step - lo - 1}] (step {step}): {problem}")
    return dict(analysis, threshold=threshold)


def hand_analyses(analysis: dict[str, Any], read: RecordActions) -> dict[int, dict[str, Any]]:
    """A checked analysis (:func:`check_analysis`) split by hand entry: entry -> the analysis of that hand
    alone, as :func:`analyse_actions` gives it for ``first_hand=entry, hands=1`` with the same settings (its
    seats and rollouts counted for that hand)."""
    first, last = analysis["hands"]
    by_step = {d["step"]: d for d in analysis["decisions"]}
    split = {}
    start = sum(len(h) for h in read.hands[: first - 1])
    for entry in range(first, last + 1):
        end = start + len(read.hands[entry - 1])
        decisions = [by_step[s] for s in range(start + 1, end + 1)]
        window = (entry, entry)
        split[entry] = _assemble(
            read, analysis["search"], analysis["threshold"], window, decisions, analysis["record_sha256"]
        )
        start = end
    return split


# ---------------------------------------------------------------------- text


def _value(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def seat_table_text(analysis: dict[str, Any]) -> str:
    """The per-seat table as text: decisions, scored, flagged, total and mean cost."""
    lines = [f"{'seat':<10}{'decisions':>10}{'scored':>8}{'flagged':>9}{'total cost':>12}{'mean cost':>11}"]
    for row in analysis["seats"]:
        mean = "-" if row["mean_cost"] is None else f"{row['mean_cost']:.3f}"
        lines.append(
            f"{'player_' + str(row['seat']):<10}{row['decisions']:>10}{row['scored']:>8}{row['flagged']:>9}"
            f"{row['total_cost']:>12.2f}{mean:>11}"
        )
    return "\n".join(lines)


def header_text(analysis: dict[str, Any]) -> str:
    """Which search, samples and seed; the hands; the threshold (what makes two analyses comparable)."""
    s = analysis["search"]
    first, last = analysis["hands"]
    return (
        f"rules {analysis['rules']}, record seed {analysis['record_seed']}, hands {first}-{last} of "
        f"{analysis['record_hands']}; search {s['search']} ({s['rollouts']} rollouts), {s['samples']} samples per "
        f"decision, seed {s['seed']}; flagged: cost above {analysis['threshold']:g} tricks"
    )


_MOVE_VERBS = {"play": "played", "discard": "discarded"}


def move_text(phase: str, played: str) -> str:
    """What a decision did, in words by its decision type: ``played QH``, ``discarded QH``, ``sent QH in the
    exchange``, ``named trump clubs``, ``called no trump``, ``bid 9``, ``passed``, ``gave the quotas 8-3-5``,
    ``declined the face-up card`` (``phase`` and ``played`` as a decision of the analysis holds them). The one
    wording of a move of an analysis: ``analyse``'s flagged moves and the viewer's (:func:`with_moves`)."""
    if played == "pass":
        return "declined the face-up card" if phase == "take" else "passed"
    if phase == "exchange":
        return f"sent {played} in the exchange"
    if phase == "trump":
        return f"called {played[len('call ') :]}" if played.startswith("call ") else f"named {played}"
    if phase == "assign":
        return f"gave the {played}"
    if phase == "take":
        return f"took the face-up card and put {played} out of play"
    if phase == "bid":
        return played  # "bid 9"
    return f"{_MOVE_VERBS.get(phase, 'chose')} {played}"


def with_moves(analysis: dict[str, Any]) -> dict[str, Any]:
    """The analysis with each decision's ``move``, its :func:`move_text` (what the viewer shows; a copy)."""
    decisions = [dict(d, move=move_text(d["phase"], d["played"])) for d in analysis["decisions"]]
    return dict(analysis, decisions=decisions)


def flagged_text(analysis: dict[str, Any]) -> list[str]:
    """One line per flagged move."""
    return [
        f"hand {d['hand']}, {d['where']} (step {d['step']}): player_{d['seat']} {move_text(d['phase'], d['played'])} "
        f"({_value(d['value'])}); best {' '.join(d['best'])} ({_value(d['best_value'])}): cost {d['cost']:.2f}"
        for d in analysis["decisions"]
        if d["flagged"]
    ]


def write_analysis(analysis: dict[str, Any], path: str) -> None:
    """Write the analysis as JSON, atomically."""
    write_json(path, analysis, indent=1)


# ---------------------------------------------------------------------- command


def _number(kind: type, low: float, high: float | None = None) -> Any:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not math.isfinite(value) or value < low or (high is not None and value > high):
            bound = f"from {low:g} to {high:g}" if high is not None else f">= {low:g}"
            what = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"expected {what} {bound}, got {text!r}")
        return value

    return parse


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """``sergeant-major analyse``: analyse a record file, print the per-seat table and the flagged moves."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Score every decision of a game record with pimc and flag the moves that cost more than a "
        "threshold (in tricks of balance).",
    )
    parser.add_argument("record", help="a game record file (JSON), e.g. written by 'play' or 'random --save'")
    parser.add_argument(
        "--samples",
        type=_number(int, 1, MAX_SAMPLES),
        default=DEFAULT_SAMPLES,
        help=f"pimc's deals per decision, 1-{MAX_SAMPLES} (default {DEFAULT_SAMPLES})",
    )
    parser.add_argument("--seed", type=_number(int, 0, 2**63 - 1), default=0, help="the search's seed (default 0)")
    parser.add_argument(
        "--threshold",
        type=_number(float, 0, MAX_THRESHOLD),
        default=DEFAULT_THRESHOLD,
        help=f"flag a move that costs more than this, in tricks (default {DEFAULT_THRESHOLD:g})",
    )
    parser.add_argument("--first-hand", type=_number(int, 1), default=1, help="the first hand analysed (default 1)")
    parser.add_argument("--hands", type=_number(int, 1), default=None, help="how many hands (default: all the rest)")
    parser.add_argument("--out", metavar="FILE", help="write the whole analysis as JSON (atomically)")
    args = parser.parse_args(argv)
    out = out if out is not None else sys.stdout
    try:
        try:
            record = load_record(args.record)
        except (FileNotFoundError, RecordError) as err:
            raise AnalysisError(str(err)) from None
        except IsADirectoryError:
            raise AnalysisError(f"{args.record} is a directory, not a record file") from None
        except OSError as err:
            raise AnalysisError(f"cannot read {args.record}: {err.strerror or err}") from None
        if args.out:
            try:
                check_output_path(args.out, "--out")
            except OutputPathError as err:
                raise AnalysisError(str(err)) from None
        start = time.perf_counter()
        analysis = analyse(
            record,
            samples=args.samples,
            seed=args.seed,
            threshold=args.threshold,
            first_hand=args.first_hand,
            hands=args.hands,
        )
        seconds = time.perf_counter() - start
        if args.out:
            try:
                write_analysis(analysis, args.out)
            except OSError as err:
                raise AnalysisError(f"cannot write {args.out}: {err.strerror or err}") from None
    except AnalysisError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    print(f"Analysis of {args.record}: {header_text(analysis)}", file=out)
    print(seat_table_text(analysis), file=out)
    flagged = flagged_text(analysis)
    print(f"\nFlagged moves ({len(flagged)}):" if flagged else "\nNo move cost more than the threshold.", file=out)
    for line in flagged:
        print("  " + line, file=out)
    print(
        f"\n{len(analysis['decisions'])} decisions, {analysis['rollouts']:,} rollouts (samples x legal actions) in "
        f"{seconds:.1f} s",
        file=out,
    )
    if args.out:
        print(f"Analysis written to {args.out}", file=out)
    return 0
