"""The course's assignments and notebooks, for the tests."""
import re

import nbformat

from grader.course import NOTEBOOKS, REPO, SOLUTIONS, assignments, nbgrader_meta  # noqa: F401 (re-exported)

FIXTURE_SOURCE = REPO / "tests" / "fixtures" / "solutions"
ASSIGNMENTS = assignments() if SOLUTIONS.is_dir() else []
HEADING = re.compile(r"^#{2,4}\s*Exercise\s+\d+\b.*\((\d+(?:\.\d+)?)\s+points?\)", re.M)


def source_notebook(assignment: str):
    return nbformat.read(SOLUTIONS / assignment / f"{assignment}.ipynb", as_version=4)


def student_notebook(assignment: str):
    return nbformat.read(NOTEBOOKS / assignment / f"{assignment}.ipynb", as_version=4)


def answer_editor(assignment: str):
    """edit(exercise, old, new, ...): the notebook's answer to `exercise` with each `old` text replaced (once)
    by its `new`, so mutants follow the notebook; an edit that no longer applies raises instead of silently
    testing the right answer."""
    from grader.samples import answers

    solved = answers(source_notebook(assignment))  # grade_id -> the notebook's answer, solution markers removed

    def edit(exercise, *pairs):
        code = solved[exercise]
        for old, new in zip(pairs[::2], pairs[1::2]):
            if old not in code:
                raise ValueError(f"mutant edit of {exercise} no longer applies: {old!r}")
            code = code.replace(old, new, 1)
        return code

    return edit
