"""Simulated students built from the current notebooks, so grading can be tried in one command.

- solved: every answer cell filled from the source notebook;
- partial: the first half of the exercises filled, the rest untouched;
- blank: the student notebook as released.
They are made fresh from solutions/ each run, so they never drift from the assignments.
"""
import re
from pathlib import Path

import nbformat

from grader.course import nbgrader_meta

SAMPLE_STUDENTS = {"sample_solved": 1.0, "sample_partial": 0.5, "sample_blank": 0.0}
_MARKER = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")


def answers(source_notebook) -> dict:
    """grade_id -> the solution cell's code with the nbgrader markers removed."""
    found = {}
    for cell in source_notebook.cells:
        meta = nbgrader_meta(cell)
        if meta.get("solution") and cell.cell_type == "code":
            found[meta["grade_id"]] = "\n".join(
                line for line in cell.source.splitlines() if not _MARKER.match(line))
    return found


def fill_answers(student_notebook, source_notebook, fraction: float = 1.0):
    """A copy of the student notebook with the first `fraction` of its answer cells solved."""
    filled = nbformat.from_dict(student_notebook)
    solutions = answers(source_notebook)
    order = [meta["grade_id"] for meta in (nbgrader_meta(c) for c in filled.cells) if meta.get("solution")]
    keep = set(order[: round(len(order) * fraction)])
    for cell in filled.cells:
        grade_id = nbgrader_meta(cell).get("grade_id")
        if grade_id in keep and nbgrader_meta(cell).get("solution"):
            cell.source = solutions[grade_id]
    return filled


def write_samples(release_dir: Path, source_dir: Path, assignments: list, target: Path,
                  students: dict = SAMPLE_STUDENTS) -> list:
    """Write target/<student>/<assignment>/<assignment>.ipynb for every student (name -> fraction of the
    exercises solved); return the students. The one writer of simulated classes: `grade`'s sample class,
    the benchmark's class and the tests' solved and untouched students."""
    for assignment in assignments:
        student_nb = nbformat.read(release_dir / assignment / f"{assignment}.ipynb", as_version=4)
        source_nb = nbformat.read(source_dir / assignment / f"{assignment}.ipynb", as_version=4)
        for student, fraction in students.items():
            folder = target / student / assignment
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(fill_answers(student_nb, source_nb, fraction), folder / f"{assignment}.ipynb")
    return list(students)
