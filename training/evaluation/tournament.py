"""A tournament: any number of agents, every table needed, a leaderboard (``sergeant-major tournament``).

A *table* is one duplicate evaluation (:func:`training.evaluation.evaluate.play_table`, what ``eval``
runs): its agents play the same deals, deal ``i`` with the same seed at every table, in every seating.
The tables (:func:`tables_for`; ``players`` is 3, or 4 with a four-player preset):

- design ``sets`` (the default with at least ``players`` agents): every set of ``players`` distinct agents,
  in all the permutations of the seats (6, or 24), so every pair of agents meets at ``n - 2`` tables
  (``C(n-2, 2)`` with four players) with both in every seat;
- design ``cover``: fewer tables that still seat every pair of agents together (:func:`cover_tables`),
  each in all the permutations of the seats, so both of a pair sit in every seat against each other. It is
  built in the order the agents are named: the first ``players`` agents form one table, then each later
  agent joins the agents before it, ``players - 1`` at a time. With 7 agents and three seats that is 11
  tables instead of 35; name the costly agents (the searches) last, and they sit at the fewest tables.
  Appending an agent to the list adds only its own tables; naming the agents in another order gives
  another design. The ratings use every pair's results, so they rank the agents fairly; the balance
  columns average over different opponents per agent, so read them with the design in mind;
- design ``pairs`` (the default with fewer agents): every ordered pair, A against copies of B in the
  rotations of the seats.

The run folder (``--out``, default ``runs/tournament/<rules>-<mode>-seed<S>-<D>deals``) holds:

- ``tournament.json``: the settings every table shares (rules, mode, seed, deals, table setup); a second
  run in the folder must have the same settings (a clear error otherwise);
- ``tables/<agents>-<key>.json``: one file per table, written atomically once the table is played: its
  agents, settings, the fingerprint of every policy file it loaded, and every deal's result. ``key`` hashes
  all of them, so a file is used only for the very table it holds;
- ``leaderboard.json``, ``leaderboard.md`` and ``leaderboard.png``: computed from the stored tables of
  the agents named (:mod:`training.evaluation.leaderboard`).

So a run killed part way resumes with the same command (the tables stored are not played again; the table
in progress is played from its start), adding an agent to the command plays only the tables with it (with
``cover``: appended last), and removing one leaves its tables stored but out of the leaderboard. The
leaderboard depends only on the settings, the seed, the design and the agents (with ``cover``, their order
too), not on the number of runs, ``--workers`` or ``--ray`` (timing aside). Changing an agent's code does
not change its spec: use a new folder then.

Command line::

    sergeant-major tournament --agents random heuristic pimc ismcts trained --deals 1000 --workers 2
    sergeant-major tournament --agents random heuristic pimc ismcts --rules four-5-3-2-2 --deals 100
    sergeant-major tournament --agents random heuristic trained pimc ismcts --design cover --deals 1000
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import re
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents import TRAINED_POLICY, parse_spec
from agents.mix import split_mix
from sm_env.core.rules import RuleSet
from sm_env.files.atomic import atomic_path
from sm_env.files.json_files import JsonError, read_json, write_json
from sm_env.files.paths import check_output_path
from training.common.progress import progress_bar
from training.common.ray_cluster import RayOptions
from training.common.workers import spawn_pool

from .command import add_deal_arguments, deal_settings
from .deals import DealConfig, schedule
from .evaluate import check_agent, check_table_setup, play_table
from .leaderboard import Table, leaderboard, markdown, plot

MAX_AGENTS = 12
MAX_DEALS = 10_000
MAX_WORKERS = 256
MAX_HANDS = 1000
BOOTSTRAP_RANGE = (100, 5000)  # the resampling weights take bootstrap x deals x 8 bytes: at most 400 MB
DESIGNS = ("auto", "sets", "cover", "pairs")
TABLE_FORMAT = "sergeant-major-table/1"
SETTINGS_FORMAT = "sergeant-major-tournament/1"


def tables_for(specs: Sequence[str], players: int, design: str = "auto") -> tuple[str, list[tuple[str, ...]]]:
    """The design used and its tables (agent specs in seating-index order; see the module docstring). A set
    is sorted by spec, so a table is the same whatever the order the agents are named in."""
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {', '.join(DESIGNS)}, got {design!r}")
    if design == "auto":
        design = "sets" if len(specs) >= players else "pairs"
    if design in ("sets", "cover") and len(specs) < players:
        raise ValueError(f"design {design!r} needs at least {players} agents, got {len(specs)}")
    if design == "sets":
        return design, list(itertools.combinations(sorted(specs), players))
    if design == "cover":
        return design, cover_tables(specs, players)
    return design, [(a, b) for a, b in itertools.permutations(specs, 2)]


def cover_tables(specs: Sequence[str], players: int) -> list[tuple[str, ...]]:
    """Tables of ``players`` distinct agents that seat every pair of ``specs`` together at least once.

    In the order named: ``specs[:players]`` is the first table; then agent ``k`` sits with the agents before
    it in groups of ``players - 1`` (``specs[0:2]``, ``specs[2:4]``, ... with three seats), the last group
    filled up from the first agents. Agent ``k`` (``k >= players``) so sits at ``ceil(k / (players - 1))``
    tables, and the tables of the first ``m`` agents do not change when agents are appended. Each table is
    sorted by spec, like a ``sets`` table (so a folder played with ``sets`` already holds every ``cover``
    table)."""
    if len(specs) < players:
        raise ValueError(f"design 'cover' needs at least {players} agents, got {len(specs)}")
    tables = [tuple(sorted(specs[:players]))]
    group = players - 1
    for k in range(players, len(specs)):
        before = list(specs[:k])
        for start in range(0, k, group):
            members = before[start : start + group]
            members += [s for s in before if s not in members][: group - len(members)]
            tables.append(tuple(sorted([*members, specs[k]])))
    return tables


def fingerprint(spec: str) -> str | None:
    """The SHA-256 (first 16 hex digits) of the policy file(s) a spec loads (``ppo:`` and ``rllib:`` their
    path; ``trained`` every shipped ``.pt`` policy, since it picks one by rule set; ``mix`` those of its parts;
    ``pimc`` its rollout policy, ``policy=PATH`` or the shipped ones, and its ``belief=PATH``); None for the agents
    that load nothing."""
    kind, rest, params = parse_spec(spec)
    if kind in ("mix", "pimc"):
        if kind == "mix":
            parts = {name: fingerprint(part) for name, part in split_mix(rest).items()}
        else:
            rollout = f"ppo:{params['policy']}" if params.get("policy") else "trained"
            parts = {"rollout": fingerprint(rollout) if params.get("rollout") == "policy" else None}
            parts["belief"] = fingerprint(f"ppo:{params['belief']}") if params.get("belief") else None
        loaded = [f"{name}={print_}" for name, print_ in parts.items() if print_ is not None]
        return hashlib.sha256(";".join(loaded).encode()).hexdigest()[:16] if loaded else None
    path = os.path.dirname(TRAINED_POLICY) if kind == "trained" else rest if kind in ("ppo", "rllib") else None
    if path is None:
        return None
    digest = hashlib.sha256()
    files = [path] if os.path.isfile(path) else sorted(os.path.join(r, f) for r, _, fs in os.walk(path) for f in fs)
    if kind == "trained":
        files = [f for f in files if f.endswith(".pt")]
    for name in files:
        digest.update(os.path.relpath(name, path).encode())
        with open(name, "rb") as handle:
            digest.update(handle.read())
    return digest.hexdigest()[:16]


def _slug(specs: Sequence[str]) -> str:
    text = "__".join(re.sub(r"[^A-Za-z0-9.=-]+", "_", os.path.basename(s) if ":" in s else s) for s in specs)
    return text[:80]


@dataclass
class TournamentResult:
    """What :func:`tournament` did: the leaderboard (a JSON-ready dict), the files written, the tables
    played by this run and the number reused from the folder."""

    board: dict[str, Any]
    paths: dict[str, str]
    played: list[tuple[str, ...]] = field(default_factory=list)
    reused: int = 0


MAX_SETTINGS_BYTES = 1 << 20  # tournament.json: a few kB
MAX_TABLE_BYTES = 256 << 20  # a table file: about 2 kB a deal in hand mode (MAX_DEALS deals), more in game mode
MAX_TABLE_VALUES = MAX_TABLE_BYTES // 16  # a table file as written takes about 22 bytes a value (indented)
TABLE_HEADER_VALUES = 10_000  # the values of a table file besides its deals (settings, agents, seatings)
TABLE_VALUE_BYTES = 64  # the most bytes a value of a table file takes as written (a float, indented: about 40)
MAX_SECONDS = 10**9  # seconds (about 32 years) no table or deal takes: keeps every sum of them finite


def table_limits(agents: int, deals: int, players: int, hands: int) -> tuple[int, int]:
    """The most bytes and values (:func:`sm_env.files.json_files.count_values`) a table file of ``deals`` deals
    of ``agents`` agents at ``players`` seats, ``hands`` hands a game at most, is read with: values twice what the
    layout :func:`tournament` writes takes, plus :data:`TABLE_HEADER_VALUES`, at most :data:`MAX_TABLE_VALUES`;
    bytes :data:`TABLE_VALUE_BYTES` a value, at most :data:`MAX_TABLE_BYTES`. The memory of reading a table file
    so stays within a fixed multiple of what a real one of those settings needs."""
    seatings = len(schedule(agents, players))
    seating = 6 + 3 * players + hands * (4 + 2 * players)  # keys, seating, winners, scores; each hand a list of 3
    deal = 5 + seatings + 2 * agents + seatings * seating  # keys, seconds, decisions, its seatings
    values = min(TABLE_HEADER_VALUES + 2 * deals * deal, MAX_TABLE_VALUES)
    return min(TABLE_VALUE_BYTES * values, MAX_TABLE_BYTES), values


def _read_json(path: str, what: str, max_bytes: int, max_values: int | None = None) -> Any:
    """``path``'s JSON, bounded (:func:`sm_env.files.json_files.read_json`); a one-line ValueError otherwise, which
    for a table says how to recover."""
    try:
        return read_json(path, what, max_bytes, max_values=max_values)
    except JsonError as err:
        advice = "delete it to play the table again" if what == "a table file" else "use another --out"
        raise ValueError(f"{err}; {advice}") from None


def _record_settings(out: str, settings: dict[str, Any]) -> None:
    """Record the settings in the folder (checked by :func:`tournament`), or check them against those recorded
    (ValueError if they differ)."""
    path = os.path.join(out, "tournament.json")
    if os.path.exists(path):
        stored = _read_json(path, "a tournament's settings file", MAX_SETTINGS_BYTES)
        if not isinstance(stored, dict) or stored.get("format") != SETTINGS_FORMAT:
            found = stored.get("format") if isinstance(stored, dict) else type(stored).__name__
            raise ValueError(f"{path} is not a tournament's settings file (format {found!r})")
        if not isinstance(stored.get("settings"), dict):
            raise ValueError(f"{path}: its settings are not an object; the file is damaged: use another --out")
        differ = [
            f"{k} {stored['settings'].get(k)!r} there, {v!r} here"
            for k, v in settings.items()
            if stored["settings"].get(k) != v
        ]
        if differ:
            raise ValueError(
                f"{out} holds a tournament with other settings ({'; '.join(differ)}): "
                "use another --out, or the same settings"
            )
        return
    os.makedirs(out, exist_ok=True)
    write_json(path, {"format": SETTINGS_FORMAT, "settings": settings}, indent=2)


def _whole(value: Any, low: int, high: int) -> bool:
    return type(value) is int and low <= value < high


def _numbers(value: Any, count: int, low: float, high: float) -> bool:
    """Whether ``value`` is a list of ``count`` numbers from ``low`` to ``high``."""
    if not isinstance(value, list) or len(value) != count:
        return False
    return all(type(x) in (int, float) and low <= x <= high for x in value)


def _hand_problem(hand: Any, players: int, tricks: int) -> str | None:
    """What is wrong with one hand of a stored seating, ``[dealer, tricks won, balances]`` by seat, or None. The
    bounds are the rules': a seat wins 0 to ``tricks`` (the tricks of a hand) and its balance, tricks won minus
    its quota (a misère hand: its maximum minus tricks won), quotas and maxima 0 to ``tricks``, lies from
    ``-tricks`` to ``tricks``."""
    shape = f"[dealer 0-{players - 1}, {players} tricks won 0-{tricks}, {players} balances -{tricks} to {tricks}]"
    if not (isinstance(hand, list) and len(hand) == 3 and _whole(hand[0], 0, players)):
        return f"must be {shape}"
    for name, values, low in (("tricks won", hand[1], 0), ("balances", hand[2], -tricks)):
        if not isinstance(values, list) or len(values) != players:
            return f"must be {shape}"
        for value in values:
            if not _whole(value, low, tricks + 1):
                return f"must be {shape} (a hand has {tricks} tricks): {name} holds {value!r}"
    return None


def _seating_problem(seating: Any, agents: int, players: int, tricks: int) -> str | None:
    """What is wrong with one seating of a stored deal (``play_deal``'s layout), or None."""
    if not isinstance(seating, dict):
        return "is not an object"
    who = seating.get("seating")
    if not isinstance(who, list) or len(who) != players or not all(_whole(a, 0, agents) for a in who):
        return f"seating must be {players} agent numbers 0-{agents - 1}"
    hands = seating.get("hands")
    if not isinstance(hands, list):
        return "hands must be a list"
    for h, hand in enumerate(hands):
        problem = _hand_problem(hand, players, tricks)
        if problem is not None:
            return f"hands[{h}] {problem}"
    if "first_dealer" in seating and not _whole(seating["first_dealer"], 0, players):
        return f"first_dealer must be a seat 0-{players - 1}"
    winners = seating.get("winners")
    if not isinstance(winners, list) or not all(_whole(s, 0, players) for s in winners):
        return f"winners must be a list of seats 0-{players - 1}"
    return None


def table_problem(stored: Any, agents: Sequence[str], deals: int, rules: RuleSet) -> str | None:
    """What is wrong with a stored table of ``agents`` and ``deals`` deals under ``rules`` (the layout
    :func:`tournament` writes: every deal ``play_deal``'s result, in order; tricks and balances within the rules'
    bounds, :func:`_hand_problem`; seconds and decisions from 0 to :data:`MAX_SECONDS`), or None. The one check
    of a table file read back, so the leaderboard never meets a malformed one and its sums stay finite."""
    players, tricks = rules.num_players, rules.tricks_per_hand
    if not isinstance(stored, dict):
        return f"holds {type(stored).__name__}, not a table (an object)"
    if stored.get("agents") != list(agents):
        return f"agents must be {list(agents)}"
    elapsed = stored.get("elapsed_seconds")
    if type(elapsed) not in (int, float) or not 0 <= elapsed <= MAX_SECONDS:
        return f"elapsed_seconds must be a number of seconds from 0 to {MAX_SECONDS}"
    rows = stored.get("deals")
    if not isinstance(rows, list) or len(rows) != deals:
        return f"deals must be a list of {deals} deals"
    seatings = len(schedule(len(agents), players))
    for i, deal in enumerate(rows):
        if not isinstance(deal, dict) or deal.get("index") != i:
            return f"deals[{i}] must be an object with index {i}"
        times = (deal.get("seconds"), deal.get("decisions"))
        if not all(_numbers(value, len(agents), 0, MAX_SECONDS) for value in times):
            return f"deals[{i}]: seconds and decisions must be {len(agents)} numbers from 0 to {MAX_SECONDS}"
        if not isinstance(deal.get("seatings"), list) or len(deal["seatings"]) != seatings:
            return f"deals[{i}]: seatings must be a list of {seatings} seatings"
        for k, seating in enumerate(deal["seatings"]):
            problem = _seating_problem(seating, len(agents), players, tricks)
            if problem is not None:
                return f"deals[{i}].seatings[{k}]: {problem}"
    return None


def _load_table(path: str, key: str, table: Sequence[str], deals: int, rules: RuleSet, hands: int) -> Table | None:
    """The table stored at ``path`` (None if there is none), read within :func:`table_limits` (``hands``: a
    game's most); a one-line ValueError if the file is not that table (another key, format or number of deals)
    or is damaged (:func:`table_problem`)."""
    if not os.path.lexists(path):
        return None
    stored = _read_json(path, "a table file", *table_limits(len(table), deals, rules.num_players, hands))
    if (
        not isinstance(stored, dict)
        or stored.get("format") != TABLE_FORMAT
        or stored.get("key") != key
        or not isinstance(stored.get("deals"), list)
        or len(stored["deals"]) != deals
    ):
        raise ValueError(f"{path} does not hold the table its name says: delete it to play the table again")
    problem = table_problem(stored, table, deals, rules)
    if problem is not None:
        raise ValueError(f"{path}: {problem}; the file is damaged: delete it to play the table again")
    return Table(tuple(table), stored["deals"], float(stored["elapsed_seconds"]))


def _checked(
    specs: list[str],
    mode: str,
    deals: int,
    bootstrap: int,
    max_hands: int,
    workers: int | None,
    rules: RuleSet | str | dict[str, Any] | None,
    dealer: int,
    start_balances: Sequence[int] | None,
) -> tuple[int, RuleSet, tuple[int, ...] | None]:
    """Every argument of :func:`tournament` checked before anything is played or written (a one-line ValueError):
    the workers, the rule set and the start balances to use."""
    if not 2 <= len(specs) <= MAX_AGENTS:
        raise ValueError(f"a tournament takes 2-{MAX_AGENTS} agents, got {len(specs)}")
    repeated = sorted({s for s in specs if specs.count(s) > 1})
    if repeated:
        raise ValueError(f"each agent is named once; named more than once: {', '.join(repeated)}")
    if mode not in ("hand", "game"):
        raise ValueError(f"mode must be 'hand' or 'game', got {mode!r}")
    if not 1 <= deals <= MAX_DEALS:
        raise ValueError(f"deals must be 1-{MAX_DEALS}, got {deals}")
    if not BOOTSTRAP_RANGE[0] <= bootstrap <= BOOTSTRAP_RANGE[1]:
        raise ValueError(f"bootstrap must be {BOOTSTRAP_RANGE[0]}-{BOOTSTRAP_RANGE[1]} resamplings, got {bootstrap}")
    if max_hands > MAX_HANDS:
        raise ValueError(f"max_hands must be 1-{MAX_HANDS}, got {max_hands}")
    workers = min(2, os.cpu_count() or 1) if workers is None else int(workers)
    if not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"workers must be 1-{MAX_WORKERS}, got {workers}")
    rule_set = RuleSet.from_any(rules)
    balances = check_table_setup(rule_set, dealer, start_balances, max_hands)
    for spec in specs:
        check_agent(spec, rule_set)
    return workers, rule_set, balances


def _stored_tables(
    folder: str,
    tables: list[tuple[str, ...]],
    settings: dict[str, Any],
    prints: dict[str, str | None],
    deals: int,
    rules: RuleSet,
) -> tuple[dict[tuple[str, ...], Table], list[tuple[tuple[str, ...], str, str]]]:
    """The tables already stored in ``folder`` for these settings and agents (their files checked), and the
    others to play: (agents, key, file) each, the key a hash of the settings, the agents and their fingerprints."""
    stored: dict[tuple[str, ...], Table] = {}
    todo: list[tuple[tuple[str, ...], str, str]] = []
    for table in tables:
        ident = {"settings": settings, "agents": list(table), "fingerprints": [prints[s] for s in table]}
        key = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]
        path = os.path.join(folder, f"{_slug(table)}-{key}.json")
        found = _load_table(path, key, table, deals, rules, settings["max_hands"])
        if found is None:
            todo.append((table, key, path))
        else:
            stored[table] = found
    return stored, todo


def _play_tables(
    todo: list[tuple[tuple[str, ...], str, str]],
    configs: dict[tuple[str, ...], DealConfig],
    stored: dict[tuple[str, ...], Table],
    result: TournamentResult,
    deals: int,
    workers: int,
    ray: str | RayOptions | None,
    progress: bool,
    on_table: Callable[[tuple[str, ...]], None] | None,
    settings: dict[str, Any],
    prints: dict[str, str | None],
) -> None:
    """Play the missing tables in order, each stored in its own file as soon as it is played."""
    bar = progress_bar(deals * len(todo), "deals", "deal", enabled=progress)
    pool = spawn_pool(min(workers, deals)) if todo and ray is None and min(workers, deals) > 1 else None
    try:
        for number, (table, key, path) in enumerate(todo, 1):
            if hasattr(bar, "set_postfix_str"):
                bar.set_postfix_str(f"table {number}/{len(todo)}")
            started = time.perf_counter()
            played = play_table(configs[table], deals, 1, ray, on_deal=lambda: bar.update(1), pool=pool)
            elapsed = time.perf_counter() - started
            write_json(
                path,
                {
                    "format": TABLE_FORMAT,
                    "key": key,
                    "agents": list(table),
                    "fingerprints": [prints[s] for s in table],
                    "settings": settings,
                    "seatings": [list(s) for s in schedule(len(table), configs[table].rules.num_players)],
                    "elapsed_seconds": elapsed,
                    "deals": played,
                },
                indent=2,
            )
            stored[table] = Table(table, played, elapsed)
            result.played.append(table)
            if on_table is not None:
                on_table(table)
    finally:
        bar.close()
        if pool is not None:
            pool.terminate()
            pool.join()


def _write_board(
    result: TournamentResult,
    out: str,
    specs: list[str],
    tables: list[Table],
    settings: dict[str, Any],
    bootstrap: int,
    prints: dict[str, str | None],
    command: str | None,
) -> None:
    """The leaderboard of every table, written atomically as JSON, Markdown and a PNG into ``out``."""
    board = leaderboard(specs, tables, settings, bootstrap)
    board["fingerprints"] = prints
    result.board = board
    result.paths = {
        "json": os.path.join(out, "leaderboard.json"),
        "md": os.path.join(out, "leaderboard.md"),
        "png": os.path.join(out, "leaderboard.png"),
    }
    write_json(result.paths["json"], board, indent=2)
    with atomic_path(result.paths["md"]) as tmp, open(tmp, "w", encoding="utf-8") as handle:
        handle.write(markdown(board, command=command))
    with atomic_path(result.paths["png"]) as tmp:
        plot(board, tmp)


def tournament(
    agents: Sequence[str],
    out: str,
    deals: int = 1000,
    mode: str = "hand",
    seed: int = 0,
    workers: int | None = None,
    *,
    rules: RuleSet | str | dict[str, Any] | None = None,
    design: str = "auto",
    dealer: int = 0,
    start_balances: Sequence[int] | None = None,
    max_hands: int = 30,
    bootstrap: int = 2000,
    progress: bool = True,
    ray: str | RayOptions | None = None,
    command: str | None = None,
    on_table: Callable[[tuple[str, ...]], None] | None = None,
) -> TournamentResult:
    """Play the tables of ``agents`` missing from the folder ``out`` and write the leaderboard there (see the
    module docstring). The arguments are those of :func:`training.evaluation.evaluate.evaluate`, plus
    ``design`` (``auto``, ``sets``, ``cover`` or ``pairs``), ``command`` (quoted in the Markdown) and ``on_table``
    (called with each table's agents once it is stored). Bad input is a one-line ValueError, raised before
    anything is played or written."""
    specs = [str(a).strip() for a in agents]
    workers, rule_set, balances = _checked(
        specs, mode, deals, bootstrap, max_hands, workers, rules, dealer, start_balances
    )
    design, tables = tables_for(specs, rule_set.num_players, design)
    settings = json.loads(
        json.dumps(
            {
                "rules": rule_set.name,
                "rule_options": rule_set.options(),
                "mode": mode,
                "seed": int(seed),
                "deals": int(deals),
                "dealer": dealer if mode == "hand" else None,
                "start_balances": None if balances is None or mode == "game" else list(balances),
                "max_hands": max_hands if mode == "game" else 1,
            }
        )
    )
    out = check_output_path(out, "--out", folder=True)
    prints = {s: fingerprint(s) for s in specs}
    _record_settings(out, settings)
    folder = os.path.join(out, "tables")
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise ValueError(f"{folder} is not a folder: the run folder is damaged; use another --out")
    os.makedirs(folder, exist_ok=True)

    stored, todo = _stored_tables(folder, tables, settings, prints, deals, rule_set)
    if progress:
        print(
            f"{len(tables)} tables ({design}): {len(stored)} stored, {len(todo)} to play, {deals} deals each",
            file=sys.stderr,
        )
    result = TournamentResult({}, {}, reused=len(stored))
    configs = {
        t: DealConfig(t, mode, int(seed), rule_set, dealer, balances if mode == "hand" else None, max_hands)
        for t, _, _ in todo
    }
    _play_tables(todo, configs, stored, result, deals, workers, ray, progress, on_table, settings, prints)
    _write_board(
        result, out, specs, [stored[t] for t in tables], dict(settings, design=design), bootstrap, prints, command
    )
    return result


def build_parser(prog: str = "sergeant-major tournament") -> argparse.ArgumentParser:
    """The command line of :func:`main`."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--agents",
        nargs="+",
        required=True,
        help=f"2-{MAX_AGENTS} agent specs: random heuristic pimc ismcts trained ppo:PATH ...",
    )
    parser.add_argument(
        "--deals", type=int, default=1000, help=f"deals per table, each in every seating (1-{MAX_DEALS}, default 1000)"
    )
    add_deal_arguments(parser, f"1-{MAX_HANDS}, ", f"{BOOTSTRAP_RANGE[0]}-{BOOTSTRAP_RANGE[1]}, ")
    parser.add_argument(
        "--design",
        choices=DESIGNS,
        default="auto",
        help="tables: every set of distinct agents (sets), fewer sets that still seat every pair together, "
        "built in the order the agents are named (cover), or every ordered pair (pairs); "
        "auto: sets when there are enough agents (default)",
    )
    parser.add_argument(
        "--out",
        default=None,
        help="run folder (default runs/tournament/<rules>-<mode>-seed<S>-<D>deals); "
        "the same folder resumes, or adds the tables of new agents",
    )
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "sergeant-major tournament") -> int:
    """Command line: play the missing tables, print the leaderboard, write it into the run folder."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(prog).parse_args(argv)
    out = args.out or os.path.join("runs", "tournament", f"{args.rules}-{args.mode}-seed{args.seed}-{args.deals}deals")
    try:
        result = tournament(
            args.agents,
            out,
            args.deals,
            args.mode,
            args.seed,
            args.workers,
            design=args.design,
            **deal_settings(args),
            command=shlex.join([*prog.split(), *argv]),
        )
    except ValueError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return 2
    print(markdown(result.board))
    print(
        f"played {len(result.played)} tables, reused {result.reused}; saved "
        f"{result.paths['json']}, {result.paths['md']}, {result.paths['png']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
