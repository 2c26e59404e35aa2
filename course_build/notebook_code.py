"""Run a solution notebook's own cells outside Jupyter.

The training scripts (and some tests) build the course's reference models from the solution
notebooks' cells, picked by their nbgrader grade_id, so each model has one source: the notebook.
Students never receive this file or the solutions it reads.
"""
import contextlib
import io

import nbformat

from grader.course import SOLUTIONS, nbgrader_meta


def run_cells(assignment: str, grade_ids, namespace=None, setup=True) -> dict:
    """Execute the setup cell (unless setup=False) and then the cells with these grade_ids, in the
    order given, in `namespace` (a fresh dict by default); return the namespace.

    Values the cells read from earlier notebook cells (sizes, vocabularies) go in `namespace`.
    """
    notebook = nbformat.read(SOLUTIONS / assignment / f"{assignment}.ipynb", as_version=4)
    cells = {nbgrader_meta(cell).get("grade_id"): cell for cell in notebook.cells}
    wanted = (["setup"] if setup else []) + list(grade_ids)
    missing = [grade_id for grade_id in wanted if grade_id not in cells]
    if missing:
        raise KeyError(f"{assignment} has no cell with grade_id {', '.join(missing)}")
    namespace = {} if namespace is None else namespace
    for grade_id in wanted:
        with contextlib.redirect_stdout(io.StringIO()):  # the setup cell prints its versions line
            exec(compile(cells[grade_id].source, f"{assignment} cell {grade_id}", "exec"), namespace)
    return namespace


def run_notebook(assignment: str, stop_at=None, tests=False, grading=False) -> dict:
    """Run the solution notebook's code cells in one namespace, as Run All does with training on (no
    NBGRADER_EXECUTION; with grading=True, as nbgrader runs it: no training), from the notebook's folder;
    return the namespace. Test cells are skipped unless tests=True; `stop_at`: stop before the first cell
    whose source contains this text."""
    import os

    before = os.environ.pop("NBGRADER_EXECUTION", None)
    if grading:
        os.environ["NBGRADER_EXECUTION"] = "autograde"
    os.environ["MPLBACKEND"] = "Agg"
    import matplotlib.pyplot as plt

    path = SOLUTIONS / assignment / f"{assignment}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    namespace = {"__name__": "__main__"}
    cwd = os.getcwd()
    os.chdir(path.parent)
    try:
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type != "code" or (nbgrader_meta(cell).get("grade") and not tests):
                continue
            if stop_at and stop_at in cell.source:
                break
            exec(compile(cell.source, f"{path.name} cell {index}", "exec"), namespace)
            plt.close("all")  # figures are not looked at here
    finally:
        os.chdir(cwd)
        os.environ.pop("NBGRADER_EXECUTION", None)
        if before is not None:
            os.environ["NBGRADER_EXECUTION"] = before
    return namespace


def training_arguments(description: str, epochs: int):
    """The options every training script shares: --epochs, --batch-size, --lr, --seed, --dry-run."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--epochs", type=int, default=epochs)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--lr", type=float, default=0.005)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dry-run", action="store_true", help="train and report, write nothing")
    return parser
