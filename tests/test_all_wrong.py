"""A student whose every answer is wrong everywhere scores 0 on every notebook.

course/<assignment>/all_wrong.py holds one such answer per answer cell (zeros of the right shape, layers that
output zeros, models that ignore their inputs); the test grades the eight notebooks with the real grader
(sandboxed, verdicts in the grader) in one run. A test cell that gives such a notebook points checks only
shapes or properties that the wrong answer also has: make it check values against the test's own reference.

To see one notebook's result while changing its tests: python -m tests.test_all_wrong 06_transformer
"""
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from grader.authoring.assignment_answers import all_wrong
from tests.course_files import ASSIGNMENTS, nbgrader_meta, source_notebook, student_notebook

STUDENT = "all_wrong"


def all_wrong_notebook(assignment: str):
    """The released notebook with every answer cell replaced by its wrong answer."""
    notebook = student_notebook(assignment)
    for cell in notebook.cells:
        meta = nbgrader_meta(cell)
        if meta.get("solution"):
            cell.source = all_wrong(assignment)[meta["grade_id"]].strip("\n")
    return notebook


def graded_cells(assignment: str) -> list:
    return [nbgrader_meta(c)["grade_id"] for c in source_notebook(assignment).cells if nbgrader_meta(c).get("grade")]


def grade_all_wrong(root: Path, assignments) -> dict:
    """Grade the all-wrong student's notebooks of `assignments` in one run: {assignment: Result}."""
    from grader.running.grading import Grader

    for assignment in assignments:
        folder = root / "class" / STUDENT / assignment
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(all_wrong_notebook(assignment), folder / f"{assignment}.ipynb")
    grader = Grader(root / "workspace", workers=2)
    results = grader.run(root / "class", assignments=list(assignments), progress=False, feedback=False)
    return {result.assignment: result for result in results}


def describe(result) -> str:
    passed = [name for name in graded_cells(result.assignment) if name not in result.failed]
    text = f"{result.assignment}: {result.score:g} / {result.max_score:g}"
    if result.error:
        text += f", not graded ({result.error})"
    return text + (f", passed {', '.join(passed)}" if passed else "")


def test_every_answer_cell_has_a_wrong_answer():
    for assignment in ASSIGNMENTS:
        exercises = {nbgrader_meta(c)["grade_id"] for c in source_notebook(assignment).cells
                     if nbgrader_meta(c).get("solution")}
        assert set(all_wrong(assignment)) == exercises, (
            f"{assignment}: course/{assignment}/all_wrong.py answers {sorted(all_wrong(assignment))}, "
            f"the notebook's answer cells are {sorted(exercises)}")


@pytest.mark.slow
def test_a_notebook_of_wrong_answers_scores_zero_everywhere(tmp_path):
    results = grade_all_wrong(tmp_path, ASSIGNMENTS)
    assert sorted(results) == sorted(ASSIGNMENTS)
    scored = [describe(r) for r in results.values() if r.score > 0 or r.error or not r.max_score]
    assert not scored, "wrong answers kept points (or were not graded):\n" + "\n".join(scored)


if __name__ == "__main__":
    chosen = sys.argv[1:] or ASSIGNMENTS
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for result in sorted(grade_all_wrong(Path(folder), chosen).values(), key=lambda r: r.assignment):
            print(describe(result))
    print(f"graded in {time.perf_counter() - started:.0f} s")
