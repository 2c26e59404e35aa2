"""The course's assignments and notebooks, for the tests."""
import re

import nbformat

from grader.course import NOTEBOOKS, REPO, SOLUTIONS, assignments, nbgrader_meta, source_notebook  # noqa: F401 (re-exported)

FIXTURE_SOURCE = REPO / "tests" / "fixtures" / "solutions"
ASSIGNMENTS = assignments() if SOLUTIONS.is_dir() else []
HEADING = re.compile(r"^#{2,4}\s*Exercise\s+\d+\b.*\((\d+(?:\.\d+)?)\s+points?\)", re.M)


def student_notebook(assignment: str):
    return nbformat.read(NOTEBOOKS / assignment / f"{assignment}.ipynb", as_version=4)
