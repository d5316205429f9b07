"""The research notebooks in notebooks/.

- ``test_committed_outputs`` (fast, always runs): every notebook is committed
  executed, with the outputs of every code cell, no errors, PNG figures, and
  no temporary paths or oversized outputs.
- ``test_notebook_runs`` (marked ``notebooks``; deselect with
  ``-m "not notebooks"``): executes every notebook top to bottom with nbclient
  on small settings (environment variables below), in a temporary copy so that
  the committed outputs are never overwritten.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))

# small settings read by the notebooks' size knobs
SMALL = {
    "SM_NOTEBOOK_DEALS": "12",  # 02, 03: deals per duplicate evaluation
    "SM_NOTEBOOK_PIMC_DEALS": "2",  # 02: deals with the search agent
    "SM_NOTEBOOK_GAMES": "40",  # 04: self-play games per population
    "SM_NOTEBOOK_STEPS": "2048",  # 03: PPO learner decisions
    "SM_NOTEBOOK_PRETRAIN": "2000",  # 03: warm-start decisions
}
CELL_TIMEOUT = 240  # seconds per cell
MAX_OUTPUT_CHARS = 600_000  # per notebook, images included


def _ids(paths: list[Path]) -> list[str]:
    return [p.stem for p in paths]


def test_notebooks_exist() -> None:
    names = {p.name for p in NOTEBOOKS}
    for name in ("01_rules_and_environment.ipynb", "02_baselines.ipynb", "03_training.ipynb", "04_game_analysis.ipynb"):
        assert name in names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_committed_outputs(path: Path) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code, "a notebook without code"
    counts = [c.get("execution_count") for c in code]
    assert all(counts), f"{path.name}: not every code cell was executed"
    assert counts == sorted(counts), f"{path.name}: cells were not executed top to bottom"
    images = 0
    for cell in code:
        for out in cell.get("outputs", []):
            assert out["output_type"] != "error", f"{path.name}: committed with an error: {out.get('ename')}"
            data = out.get("data", {})
            images += "image/png" in data
            assert out.get("name") != "stderr" or "Traceback" not in "".join(out.get("text", ""))
    assert images, f"{path.name}: no PNG figure among the outputs"
    text = json.dumps(nb)
    assert len(text) < MAX_OUTPUT_CHARS, f"{path.name}: {len(text)} characters; keep outputs small"
    without_images = re.sub(r'"image/png": "[^"]*"', "", text)
    for pattern in (r"/tmp/", r"/home/", r"/work/", r"[A-Za-z]:\\\\Users"):
        assert not re.search(pattern, without_images), f"{path.name}: an absolute path ({pattern}) in the outputs"


@pytest.mark.notebooks
@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    if path.stem.startswith("03"):
        pytest.importorskip("sb3_contrib")
        pytest.importorskip("tensorboard")
    work = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOK_DIR, work)
    for key, value in SMALL.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    copy = work / path.name
    nb = nbformat.read(copy, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(work)}},
        record_timing=False,
    )
    client.execute()  # raises CellExecutionError naming the cell on any error
    nbformat.write(nb, copy)
    assert any(
        "image/png" in out.get("data", {})
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
    ), "the notebook drew no figure"
    assert os.path.getsize(copy) > 0
