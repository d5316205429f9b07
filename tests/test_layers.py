"""The direction of imports (docs/architecture.md): no import cycle between files, nothing imports a layer
above its own, no trainer imports another, and the rules core imports the standard library only.

Every import counts, at module level or inside a function, ``TYPE_CHECKING`` blocks included: a cycle that
only a lazy import hides is still a cycle in the design.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("sm_env", "agents", "training", "sm_web", "sm_cli")

# Layers from the ground up; a module may import its own layer and the layers below it. The first prefix
# that matches a module's name decides its layer.
LAYERS: list[tuple[str, ...]] = [
    ("sm_env.core", "sm_env.files"),  # atomic writes and bounded JSON reads: standard library only
    ("sm_env.records", "sm_env.observation"),
    ("sm_env.display", "sm_env.compiled"),
    ("sm_env.envs",),
    ("sm_env",),  # the package's public names and the versioned entry module
    ("agents",),
    ("training.common",),  # what every trainer shares
    ("training.evaluation",),  # the one evaluation every trainer reports
    ("training.sb3", "training.vector", "training.rllib", "training.distill"),  # the trainers: TRAINERS
    ("training",),  # training/cli.py and train.py: the command line over every trainer
    ("sm_web",),
    ("sm_cli",),
]
TRAINERS = LAYERS[LAYERS.index(("training",)) - 1]
"""The trainers: one layer, and each a layer of its own beside the others (none imports another: what two
share lives in ``training.common`` or ``training.evaluation``; :func:`imports_between_trainers`)."""


def layer_of(module: str) -> int:
    best, best_len = -1, -1
    for rank, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = rank, len(prefix)
    return best


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    return found


MODULES = project_modules()


def imports_of(module: str, path: Path) -> set[str]:
    """The project modules (files) that ``module`` imports, anywhere in its body."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            # "from x import y" imports the file x.y when there is one, else the names of x
            targets = [f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in MODULES else stem for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != module:
                found.add(target)
    return found


GRAPH = {module: imports_of(module, path) for module, path in MODULES.items()}


def test_every_module_has_a_layer():
    assert [m for m in MODULES if layer_of(m) < 0] == []


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of ``graph`` from a module to a layer above its own."""
    return [
        f"{module} ({layer_of(module)}) imports {target} ({layer_of(target)})"
        for module, targets in graph.items()
        for target in sorted(targets)
        if layer_of(target) > layer_of(module)
    ]


def test_no_module_imports_a_layer_above_its_own():
    assert upward_imports(GRAPH) == []


def trainer_of(module: str) -> str | None:
    """The trainer (one of :data:`TRAINERS`) that ``module`` belongs to, or None."""
    return next((t for t in TRAINERS if module == t or module.startswith(t + ".")), None)


def imports_between_trainers(graph: dict[str, set[str]]) -> list[str]:
    """Every import of ``graph`` from one trainer's module into another trainer's."""
    return [
        f"{module} ({trainer_of(module)}) imports {target} ({trainer_of(target)})"
        for module, targets in graph.items()
        for target in sorted(targets)
        if trainer_of(module) and trainer_of(target) and trainer_of(module) != trainer_of(target)
    ]


def test_no_trainer_imports_another():
    assert imports_between_trainers(GRAPH) == []


def test_the_trainers_are_above_what_they_share_and_below_the_command_line():
    shared = [layer_of("training.common.runs"), layer_of("training.evaluation.evaluate")]
    trainers = {layer_of(f"{trainer}.config") for trainer in ("training.sb3", "training.vector", "training.rllib")}
    trainers |= {layer_of("training.distill.fit"), layer_of("training.distill.run_playouts")}
    assert shared[0] < shared[1] < min(trainers) == max(trainers) < layer_of("training.cli") == layer_of("training")
    assert {trainer_of(m) for m in MODULES if m.startswith("training.")} - {None} == set(TRAINERS)


def test_the_trainer_check_finds_a_planted_import(tmp_path):
    """An import from one trainer into another fails the check: planted in the graph, and planted in a file
    (read by the same parser as every module of the project)."""
    graph = {k: set(v) for k, v in GRAPH.items()}
    graph["training.distill.fit"].add("training.vector.ppo")
    graph["training.rllib.trainer"].add("training.sb3.config")
    found = imports_between_trainers(graph)
    assert sorted(found) == [
        "training.distill.fit (training.distill) imports training.vector.ppo (training.vector)",
        "training.rllib.trainer (training.rllib) imports training.sb3.config (training.sb3)",
    ]
    planted = tmp_path / "planted.py"
    planted.write_text("def go():\n    from training.vector import ppo\n\n    return ppo\n", encoding="utf-8")
    graph = {"training.distill.planted": imports_of("training.distill.planted", planted)}
    assert imports_between_trainers(graph) == [
        "training.distill.planted (training.distill) imports training.vector.ppo (training.vector)"
    ]
    graph = {"training.common.planted": imports_of("training.common.planted", planted)}
    assert upward_imports(graph) and not imports_between_trainers(graph)  # common under a trainer: upward


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as a list of modules (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_cycle_between_files():
    cycle = find_cycle(GRAPH)
    assert cycle is None, " -> ".join(cycle)


def test_the_cycle_finder_finds_a_planted_cycle():
    graph = {k: set(v) for k, v in GRAPH.items()}
    graph["sm_env.core.cards"].add("sm_env.core.game")  # game imports cards already
    cycle = find_cycle(graph)
    assert cycle is not None and {"sm_env.core.cards", "sm_env.core.game"} <= set(cycle)


def test_the_layer_check_finds_a_planted_upward_import():
    assert layer_of("sm_env.core.game") < layer_of("sm_env.compiled.batch") < layer_of("agents.search.pimc")
    assert layer_of("sm_web.app") < layer_of("sm_cli.cli")
    graph = {k: set(v) for k, v in GRAPH.items()}
    graph["sm_env.core.game"].add("sm_env.compiled.batch")
    graph["sm_web.app"].add("sm_cli.cli")
    found = upward_imports(graph)
    assert len(found) == 2 and found[0].startswith("sm_env.core.game") and found[1].startswith("sm_web.app")


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("sm_env.core")))
def test_the_rules_core_imports_the_standard_library_only(module):
    outside = []
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots = [node.module.split(".")[0]]
        else:
            continue
        outside += [r for r in roots if r not in sys.stdlib_module_names and r != "sm_env"]
    assert outside == []
    assert all(t.startswith("sm_env.core") or layer_of(t) == 0 for t in GRAPH[module])


def test_ruff_refuses_the_removed_module_names(tmp_path):
    """The flat names of 0.1 are gone; the lint rule (banned-api in pyproject.toml) keeps them from coming back."""
    import shutil
    import subprocess

    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (the dev extra brings it)")
    old = tmp_path / "old_names.py"
    old.write_text(
        "import sm_env.vector\nfrom training.evaluate import evaluate\nfrom agents import pimc\n\n"
        "print(sm_env, evaluate, pimc)\n"
    )
    new = tmp_path / "new_names.py"
    new.write_text(
        "import sm_env.compiled.batch\nfrom sm_env import env\nfrom training.evaluation import evaluate\n\n"
        "print(sm_env, env, evaluate)\n"
    )
    config = str(ROOT / "pyproject.toml")
    found = subprocess.run(
        [ruff, "check", "--no-cache", "--config", config, str(old)], capture_output=True, text=True, timeout=60
    )
    assert found.returncode == 1
    for name in ("sm_env.vector", "training.evaluate", "agents.pimc"):
        assert f"`{name}` is banned" in found.stdout, found.stdout
    clean = subprocess.run(
        [ruff, "check", "--no-cache", "--config", config, str(new)], capture_output=True, text=True, timeout=60
    )
    assert clean.returncode == 0, clean.stdout


def sub_package(module: str) -> str:
    """The folder a module sits in, as a dotted name: ``sm_env.core`` for ``sm_env.core.game``, ``agents`` for
    ``agents.mix`` and for the package ``agents`` itself."""
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


def sub_package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The imports of ``graph`` between folders (an import inside one folder is left out)."""
    folders: dict[str, set[str]] = {}
    for module, targets in graph.items():
        here = sub_package(module)
        folders.setdefault(here, set()).update(sub_package(t) for t in targets if sub_package(t) != here)
    return folders


def test_no_import_cycle_between_sub_packages():
    """The folders show the layers: no folder imports another that imports it back, directly or through others
    (docs/architecture.md)."""
    cycle = find_cycle(sub_package_graph(GRAPH))
    assert cycle is None, " -> ".join(cycle)


def test_the_sub_package_check_finds_a_planted_loop():
    graph = {k: set(v) for k, v in GRAPH.items()}
    graph["agents.players.heuristic"].add("agents.search.pimc")  # pimc imports the heuristic already
    cycle = find_cycle(sub_package_graph(graph))
    assert cycle is not None and {"agents.players", "agents.search"} <= set(cycle)
