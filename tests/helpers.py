"""Helpers for the tests: deals from text, scripted play, state snapshots, the benchmark scripts as modules.

Card text accepts the engine's forms (``AH``, ``TH``, ``10h``) and a suit-group
shorthand ``H:AKQ`` (= ``AH KH QH``), so a 16-card hand fits on one line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from sm_env.core.cards import CARD_TEXT, NUM_CARDS, SUIT_LETTERS, parse_card
from sm_env.core.game import TRUMP_ACTION_BASE, Game


def cards(text: str | Iterable[int | str]) -> list[int]:
    """Card ids from text like ``"AH 10h 2C"`` or ``"S:AKQ C:2"`` (or ids)."""
    if not isinstance(text, str):
        return [parse_card(c) for c in text]
    out: list[int] = []
    for token in text.split():
        if ":" in token:
            suit, ranks = token.split(":")
            out.extend(parse_card(rank + suit) for rank in ranks)
        else:
            out.append(parse_card(token))
    return out


def card(text: str) -> int:
    """One card id from text."""
    return parse_card(text)


def mask(text: str | Iterable[int | str]) -> int:
    """Bit set of the cards in ``text``."""
    result = 0
    for c in cards(text):
        result |= 1 << c
    return result


def trump(suit: str) -> int:
    """Action id naming trump ``suit`` (one of C, D, H, S)."""
    return TRUMP_ACTION_BASE + SUIT_LETTERS.index(suit.upper())


def make_deal(h0: str | None, h1: str | None, h2: str | None, kitty: str | None = None) -> dict:
    """A deal by absolute seat; at most one of the four parts may be None and
    then gets every card not named elsewhere. Checks that the parts partition
    the deck (so a typo in a test deal fails loudly here, not in the engine)."""
    parts = [h0, h1, h2, kitty]
    named = [cards(p) if p is not None else None for p in parts]
    used = [c for p in named if p is not None for c in p]
    assert len(used) == len(set(used)), f"test deal names a card twice: {sorted(CARD_TEXT[c] for c in used)}"
    rest = sorted(set(range(NUM_CARDS)) - set(used))
    missing = [i for i, p in enumerate(named) if p is None]
    assert len(missing) <= 1, "at most one part of a test deal may be left to fill"
    if missing:
        named[missing[0]] = rest
    else:
        assert not rest, f"test deal leaves cards out: {[CARD_TEXT[c] for c in rest]}"
    sizes = [len(p) for p in named]
    assert sizes in ([16, 16, 16, 4], [17, 17, 17, 1]), f"test deal has part sizes {sizes}"  # 1: one_card_kitty
    return {"hands": named[:3], "kitty": named[3]}


def act(game: Game, actions: str | Iterable[int | str]) -> None:
    """Apply a script: card texts/ids, or ``"T:H"``-style tokens to name trump."""
    if isinstance(actions, str):
        actions = actions.split()
    for a in actions:
        if isinstance(a, str) and a.upper().startswith("T:"):
            game.apply(trump(a[2:]))
        elif isinstance(a, str):
            game.apply(parse_card(a))
        else:
            game.apply(a)


def sent_not_yet_returned() -> Game:
    """``trump_after_send``, hand 1 after start balances (1, 1, -2): seat 0 has sent 2C and seat 1 AC to seat 2,
    which has not returned them yet (the game waits for trump)."""
    deal = {
        "hands": [
            "2C 3C 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD 2H".split(),
            "AC 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH 2S 3S 4S".split(),
            "4C 5C 6C 7C 8C 9C TC JC QC KC 5S 6S 7S 8S 9S TS".split(),
        ],
        "kitty": "JS QS KS AS".split(),
    }
    game = Game(rules={"trump_after_send": True}, seed=0, first_dealer=0, deals=[deal], start_balances=[1, 1, -2])
    act(game, "2C AC")
    return game


def highest(game: Game) -> int:
    return max(game.legal_actions())


def lowest(game: Game) -> int:
    return min(game.legal_actions())


def play_hand(game: Game, policy: Callable[[Game], int] = highest) -> None:
    """Play tricks with ``policy`` until the current hand ends (or the game)."""
    hand = game.hand_number
    while game.current_player is not None and game.hand_number == hand:
        game.apply(policy(game))


def hand_log(log) -> dict:
    """A HandLog as plain data (for equality checks)."""
    return {
        "number": log.number,
        "dealer": log.dealer,
        "quotas": list(log.quotas),
        "deal": [sorted(h) for h in log.deal_hands],
        "kitty": sorted(log.kitty),
        "exchanges": [
            (e.sender, e.receiver, e.count, list(e.sent), None if e.returned is None else sorted(e.returned))
            for e in log.exchanges
        ],
        "trump": log.trump,
        "discards": None if log.discards is None else list(log.discards),
        "shown": None if log.shown is None else [(s, sorted(c)) for s, c in log.shown],
        "tricks": None if log.tricks is None else [(t.leader, list(t.cards), t.winner) for t in log.tricks],
        "tricks_won": None if log.tricks_won is None else list(log.tricks_won),
        "balances": None if log.balances is None else list(log.balances),
        "scores": None if log.scores is None else list(log.scores),
    }


def history(game: Game) -> list[dict]:
    return [hand_log(h) for h in game.history]


def snapshot(game: Game) -> dict:
    """Everything observable about a game, as plain data."""
    return {
        "phase": game.phase,
        "current": game.current_player,
        "hands": list(game.hands),
        "legal": game.legal_mask(),
        "to_send": game.exchange_to_send(),
        "dealer": game.dealer,
        "quotas": list(game.quotas),
        "hand_number": game.hand_number,
        "trump": game.trump,
        "trick": list(game.trick),
        "tricks_won": list(game.tricks_won),
        "scores": list(game.scores),
        "winner": game.winner,
        "truncated": game.truncated,
        "rng": game.rng.getstate(),
        "history": history(game),
        "repr": repr(game),
    }


def not_model_files(folder, real: str) -> dict[str, tuple[str, str]]:
    """Paths given as a policy or belief file that are no such file, each with what the refusal must name:
    a character device, a directory, a text file (a copy of /etc/passwd), an empty file, ``real`` cut in half."""
    import os
    import shutil

    text = folder / "passwd.pt"
    if os.path.isfile("/etc/passwd"):
        shutil.copyfile("/etc/passwd", text)
    else:
        text.write_text("root:x:0:0:root:/root:/bin/bash\n")
    (folder / "folder.pt").mkdir()
    (folder / "empty.pt").write_bytes(b"")
    data = open(real, "rb").read()
    (folder / "cut.pt").write_bytes(data[: len(data) // 2])
    cases = {
        "a directory": (str(folder / "folder.pt"), "not a regular file (a directory)"),
        "text": (str(text), "file: it is text"),
        "an empty file": (str(folder / "empty.pt"), "an empty file"),
        "a cut policy": (str(folder / "cut.pt"), "a zip cut short or damaged"),
    }
    if os.path.exists("/dev/zero"):
        cases["a character device"] = ("/dev/zero", "not a regular file (a character device)")
    return cases


def listening_addresses(root_pid: int) -> set[tuple[str, int]]:
    """The ``(address, port)`` of every TCP socket listening in process ``root_pid`` or any of its descendants,
    read from ``/proc`` (Linux): the sockets of ``/proc/net/tcp`` and ``tcp6`` in state LISTEN whose inode one
    of those processes holds open. Addresses as text (``127.0.0.1``, ``::ffff:127.0.0.1``, ``0.0.0.0``, ``::``)."""
    import ipaddress
    import os

    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):  # gone meanwhile
                continue
            children.setdefault(parent, []).append(int(name))
    tree, todo = set(), [root_pid]
    while todo:
        pid = todo.pop()
        tree.add(pid)
        todo.extend(children.get(pid, []))
    inodes: set[str] = set()
    for pid in tree:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if fields[3] != "0A" or fields[9] not in inodes:  # 0A: LISTEN
                    continue
                hex_address, hex_port = fields[1].split(":")
                raw = bytes.fromhex(hex_address)
                words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))  # each 32-bit word host-order
                found.add((str(ipaddress.ip_address(words)), int(hex_port, 16)))
    return found


def off_loopback(addresses: set[tuple[str, int]]) -> set[tuple[str, int]]:
    """Those of ``addresses`` that are not on loopback (``127.x``, ``::1``, ``::ffff:127.x``)."""
    import ipaddress

    def loopback(text: str) -> bool:
        address = ipaddress.ip_address(text)
        mapped = getattr(address, "ipv4_mapped", None)
        return (mapped or address).is_loopback

    return {(host, port) for host, port in addresses if not loopback(host)}


TINY_PPO = [
    "env.num_games=8",
    "ppo.n_steps=16",
    "ppo.batch_size=32",
    "ppo.n_epochs=2",
    "ppo.net_arch=[16]",
    "train.torch_threads=1",
    "train.progress=false",
    "eval.final_deals=0",
]
"""A vector PPO run of a few seconds (``--set`` overrides; a test adds what it needs)."""
TINY_DMC = [
    "env.num_games=4",
    "dmc.n_steps=16",
    "dmc.batch_size=32",
    "dmc.replay_rollouts=8",
    "dmc.net_arch=[16]",
    "train.torch_threads=1",
    "train.progress=false",
    "eval.final_deals=0",
]
"""A DMC run of a few seconds (``--set`` overrides; a test adds what it needs)."""
