"""docs/architecture.md stays true to the tree: every path and module it names exists, every source file is
described in it, and the floors it states are the layers that tests/test_layers.py enforces.

The checkers read the text only (no project module is imported): each returns the problems it finds, and a
test plants a problem into a copy of the page to show that the checker reports it.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

from test_layers import GRAPH, LAYERS, TRAINERS  # tests/ is on sys.path: the sibling module, parsed not run

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGES = ("sm_env", "agents", "training", "sm_web", "sm_cli")
TOP = (*PACKAGES, "tests", "docs", "configs", "benchmarks", "notebooks")
EXTENSIONS = (".py", ".md", ".yaml", ".yml", ".toml", ".json", ".js", ".html", ".css", ".ipynb")
REMOVED = ("sm_env.game", "sm_env.vector", "agents.pimc", "training.evaluate")
"""The flat module names of 0.1 that the page names as removed: they must stay absent."""
NAME_COLUMN = 30
"""Where a tree line's description starts; an entry's names stand before it, two spaces a level."""
TOP_FLOOR = ("the package's public names", "the command line", "__init__")
"""How the page names a package's own top floor (its modules outside every sub-folder)."""

PATH_TOKEN = re.compile(r"(?<![\w./*-])([\w*-]+(?:/[\w.*-]*)+)")
BARE_FILE = re.compile(r"(?<![\w./*-])([\w-]+(?:\.[\w-]+)*(?:" + "|".join(re.escape(e) for e in EXTENSIONS) + r"))\b")
MODULE_TOKEN = re.compile(r"(?<![\w./])((?:" + "|".join(PACKAGES) + r")(?:\.\w+)+)")


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def tree_lines(text: str) -> list[str]:
    """The lines of the code block under ``## The tree``."""
    rest = text[text.index("## The tree") :]
    start = rest.index("```") + 3
    return rest[start : rest.index("```", start)].strip("\n").splitlines()


def tree_entries(text: str) -> tuple[list[str], list[str]]:
    """The paths the tree names, resolved against their folders: its entries (a folder ends with ``/``), and the
    bare file names of each description, resolved against the folder it describes (a folder's own, a file's
    parent)."""
    entries: list[str] = []
    described: list[str] = []
    folders: list[str] = []
    context = ""
    for line in tree_lines(text):
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        if not body:
            continue
        if indent < NAME_COLUMN:
            names, *rest = re.split(r"\s{2,}", body, maxsplit=1)
            description = rest[0] if rest else ""
            depth = indent // 2
            folders = folders[:depth]
            parent = "/".join(folders)
            context = parent
            for name in re.split(r"[,\s]+", names.strip()):
                path = f"{parent}/{name}" if parent else name
                entries.append(path)
                if name.endswith("/"):
                    folders = folders[:depth] + [name.rstrip("/")]
                    context = path.rstrip("/")
        else:
            description = body
        described += [f"{context}/{name}" if context else name for name in BARE_FILE.findall(description)]
    return entries, described


def at_root(path: str) -> bool:
    """Whether the file ``path`` names is one of the root's (``mkdocs.yml`` in the description of ``docs/``)."""
    return (ROOT / Path(path).name).is_file()


def exists(pattern: str) -> bool:
    """Whether ``pattern`` (a path from the root; ``*`` and the placeholder ``NAME`` match any name) exists."""
    pattern = pattern.rstrip("/").replace("NAME", "*")
    return any(ROOT.glob(pattern)) if "*" in pattern else (ROOT / pattern).exists()


@cache
def defined_names(path: Path) -> frozenset[str]:
    """The names a module defines or imports at its top level."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return frozenset(names)


def module_file(dotted: str) -> Path | None:
    """The file of module ``dotted`` (a package's ``__init__.py``), or None."""
    base = ROOT.joinpath(*dotted.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def resolve_module(token: str) -> Path | None:
    """The file a dotted name names: a module, or a module and one name it defines (``pkg.mod.func``)."""
    if (path := module_file(token)) is not None:
        return path
    head, _, name = token.rpartition(".")
    path = module_file(head)
    return path if path is not None and name in defined_names(path) else None


def resolve_path(token: str) -> str | None:
    """The path from the root that a path token names (one of :data:`TOP` first, or a path inside a package such
    as ``core/game.py``), or None; tokens that are not file paths (``RUN/tb``) resolve to themselves."""
    token = token.rstrip(".")
    first = token.split("/")[0]
    if first in TOP:
        return token if exists(token) else None
    if not token.endswith(EXTENSIONS):
        return token  # not a path of the tree: a run folder's part, a choice list (auto/cpu/cuda)
    return next((f"{p}/{token}" for p in PACKAGES if exists(f"{p}/{token}")), None)


def project_files() -> list[str]:
    """Every file of the packages, tests, benchmarks, docs and configs, from the root."""
    return sorted(
        str(p.relative_to(ROOT)) for top in TOP for p in (ROOT / top).rglob("*") if "__pycache__" not in p.parts
    )


def missing_paths(text: str) -> list[str]:
    """Every path, file name and module the page names that is not in the tree (check (a))."""
    problems = []
    entries, described = tree_entries(text)
    problems += [f"tree entry {p}" for p in entries if not exists(p)]
    problems += [f"tree description names {p}" for p in described if not exists(p) and not at_root(p)]
    body = text.replace("\n".join(tree_lines(text)), "")  # prose and tables: the tree's names resolve above
    for token in PATH_TOKEN.findall(text):
        if resolve_path(token) is None:
            problems.append(f"path {token}")
    names = {Path(f).name for f in project_files()} | {p.name for p in ROOT.iterdir()}
    for token in BARE_FILE.findall(body):
        if "/" not in token and token not in names:
            problems.append(f"file name {token}")
    for token in MODULE_TOKEN.findall(text):
        if token in REMOVED:
            if module_file(token) is not None:
                problems.append(f"removed module {token} is back")
        elif resolve_module(token) is None:
            problems.append(f"module {token}")
    return problems


def named_files(text: str) -> set[str]:
    """The source files the page names: tree entries and descriptions, full paths, dotted module names."""
    entries, described = tree_entries(text)
    named = {p.rstrip("/") for p in entries + described}
    named |= {p for t in PATH_TOKEN.findall(text) if (p := resolve_path(t)) is not None}
    for token in MODULE_TOKEN.findall(text):
        path = resolve_module(token)
        if path is not None:
            named.add(str(path.relative_to(ROOT)))
    return named


def source_files() -> list[str]:
    """Every ``.py`` file of the packages but ``__init__.py``, ``__main__.py`` and private ``_*.py``."""
    return sorted(
        str(p.relative_to(ROOT))
        for package in PACKAGES
        for p in (ROOT / package).rglob("*.py")
        if not p.name.startswith("_") and "__pycache__" not in p.parts
    )


def package_folders() -> list[str]:
    """Every folder of the packages that holds Python files (a package or a sub-package)."""
    return sorted(
        str(p.parent.relative_to(ROOT)) for package in PACKAGES for p in (ROOT / package).rglob("__init__.py")
    )


def unnamed_files(text: str, files: list[str] | None = None, folders: list[str] | None = None) -> list[str]:
    """Every source file and package folder the page does not name (check (b))."""
    named = named_files(text)
    entries = {p.rstrip("/") for p in tree_entries(text)[0] if p.endswith("/")}
    problems = [f"file {f}" for f in (source_files() if files is None else files) if f not in named]
    problems += [f"folder {f}/" for f in (package_folders() if folders is None else folders) if f not in entries]
    return problems


def stated_floors(text: str, package: str) -> list[tuple[str, ...]]:
    """The floors the page states for ``package`` (``Within a package the folders are its floors: ...``), ground
    up, each as the dotted names on it (the package itself for its top floor)."""
    sentence = " ".join(text.replace("`", "").split())
    sentence = sentence[sentence.index("the folders are its floors:") :]
    sentence = sentence[sentence.index(":") + 1 : sentence.index(".")]
    segment = next(s.strip() for s in sentence.split(";") if s.strip().startswith(package + " "))
    floors = []
    for floor in segment.removeprefix(package).split(" < "):
        floor = floor.strip()
        words = re.search(r"\((.*)\)", floor)
        names = [n.split(":")[0].strip() for n in (words.group(1) if words else floor).split(",")]
        dotted = []
        for name in names:
            if name in TOP_FLOOR or floor in TOP_FLOOR:
                dotted.append(package)
            elif (ROOT / package / name).is_dir() or (ROOT / package / f"{name}.py").is_file():
                dotted.append(f"{package}.{name}")
            else:
                dotted.append(f"{package}.{name}?")  # named on the page, absent from the tree
        floors.append(tuple(dict.fromkeys(dotted)))
    return floors


def floor_of(module: str, floors: list[tuple[str, ...]]) -> int:
    """The floor of ``module``: the one whose name is the longest prefix of it."""
    best, best_len = -1, -1
    for rank, names in enumerate(floors):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best_len:
                best, best_len = rank, len(name)
    return best


def wrong_floors(text: str, graph: dict[str, set[str]] | None = None) -> list[str]:
    """Where the floors the page states differ from tests/test_layers.py's LAYERS (sm_env, training: the same
    layers, the trainers its TRAINERS) or from the imports (agents, whose floors the folder check enforces)
    (check (c))."""
    graph = GRAPH if graph is None else graph
    problems = []
    for package in ("sm_env", "agents", "training"):
        floors = stated_floors(text, package)
        problems += [f"{package}: no such folder or module {n[:-1]}" for f in floors for n in f if n.endswith("?")]
        if package != "agents":
            layers = [set(layer) for layer in LAYERS if all(p.split(".")[0] == package for p in layer)]
            if [set(f) for f in floors] != layers:
                problems.append(f"{package}: the page says {floors}, tests/test_layers.py {layers}")
        for module, targets in graph.items():
            if module.split(".")[0] != package:
                continue
            problems += [
                f"{module} imports {t}, a floor above its own"
                for t in sorted(targets)
                if t.split(".")[0] == package and floor_of(t, floors) > floor_of(module, floors)
            ]
    trainers = stated_floors(text, "training")[-2]
    if set(trainers) != set(TRAINERS):
        problems.append(f"the page's trainers {trainers} are not tests/test_layers.py's {TRAINERS}")
    return problems


def checkpoint_trainers() -> tuple[str, ...]:
    """``training.common.checkpoint.TRAINERS``, read from the source (no torch import)."""
    tree = ast.parse((ROOT / "training" / "common" / "checkpoint.py").read_text(encoding="utf-8"))
    return next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "TRAINERS" for t in node.targets)
    )


def unnamed_trainers(text: str) -> list[str]:
    """The checkpoint trainers (``TRAINERS``) that ``text`` does not name as ``name``."""
    return [name for name in checkpoint_trainers() if f"`{name}`" not in text]


# ---------------------------------------------------------------------------- the page as it is


def test_every_path_and_module_the_page_names_exists():
    assert missing_paths(doc_text()) == []


def test_every_source_file_and_folder_is_described():
    assert unnamed_files(doc_text()) == []


def test_the_floors_are_the_layers_the_import_check_enforces():
    assert wrong_floors(doc_text()) == []


def test_every_trainer_of_the_checkpoint_format_is_named():
    """The page and checkpoint.py's docstring name every trainer its format holds (``belief-fit`` too)."""
    assert "belief-fit" in checkpoint_trainers()
    assert unnamed_trainers(doc_text()) == []
    source = (ROOT / "training" / "common" / "checkpoint.py").read_text(encoding="utf-8")
    assert unnamed_trainers(ast.get_docstring(ast.parse(source)) or "") == []
    assert unnamed_trainers(doc_text().replace("`belief-fit`", "the belief fit")) == ["belief-fit"]


# ---------------------------------------------------------------------------- each check can fail


def test_the_tree_resolves_entries_against_their_folders():
    entries, described = tree_entries(doc_text())
    assert {"sm_env/core/game.py", "sm_env/compiled/adapter.py", "agents/players/rllib_agent.py"} <= set(entries)
    assert {"training/distill/fit_q.py", "training/common/checkpoint.py", "sm_web/sessions.py"} <= set(described)


def test_a_missing_path_file_or_module_is_reported():
    text = doc_text()
    planted = text.replace("    cards.py", "    ghost.py                  nothing here\n    cards.py", 1)
    planted = planted.replace("atomic.py (atomic file writes", "spectre.py, atomic.py (atomic file writes", 1)
    planted += (
        "\nobservations in `observation.py`; see `sm_env/observation.py`, `compiled/nothing.py`,"
        " `training.playouts.fit` and `training.common.checkpoint.no_such_name`.\n"
    )
    found = missing_paths(planted)
    assert "tree entry sm_env/core/ghost.py" in found
    assert "tree description names sm_env/files/spectre.py" in found
    assert "file name observation.py" in found
    assert "path sm_env/observation.py" in found
    assert "path compiled/nothing.py" in found
    assert "module training.playouts.fit" in found
    assert "module training.common.checkpoint.no_such_name" in found


def test_an_undescribed_file_or_folder_is_reported():
    text = doc_text()
    lines = [line for line in text.splitlines() if not line.startswith("    adapter.py")]
    found = unnamed_files("\n".join(lines), files=[*source_files(), "training/vector/new_trainer.py"])
    assert found == ["file sm_env/compiled/adapter.py", "file training/vector/new_trainer.py"]
    found = unnamed_files(text, files=[], folders=[*package_folders(), "training/playouts"])
    assert found == ["folder training/playouts/"]


def test_a_wrong_floor_is_reported():
    text = doc_text()
    swapped, n = re.subn(r"common <\s+evaluation <", "evaluation < common <", text, count=1)
    assert n == 1
    assert any(p.startswith("training: the page says") for p in wrong_floors(swapped))
    planted, n = re.subn(r"rllib,\s+distill\)", "rllib, distill, playouts)", text, count=1)
    assert n == 1
    found = wrong_floors(planted)
    assert "training: no such folder or module training.playouts" in found
    assert any(p.startswith("the page's trainers") for p in found)
    graph = {k: set(v) for k, v in GRAPH.items()}
    graph["agents.players.heuristic"].add("agents.search.pimc")
    assert wrong_floors(text, graph) == ["agents.players.heuristic imports agents.search.pimc, a floor above its own"]
