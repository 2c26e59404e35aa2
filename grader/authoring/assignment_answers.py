"""Each assignment's folder beside its source notebook: `course/<assignment>/answers.py` and `all_wrong.py`.

It holds, per exercise (the answer cell's grade_id), WRONG = {exercise: {name: code}}, the typical
wrong answers the feedback names (grader/feedback/mistakes.py) and the tests require to lose points, and
CORRECT = {exercise: {name: code}}, correct answers written differently that must keep them
(tests/test_mutants.py). The grader reads it from here, never from the test tree; a mutant written as
an edit of the notebook's own answer uses `answer_editor`.
"""
import functools
import importlib.util

from attention_course.paths import assignments_dir
from grader.course import SOLUTIONS, CourseError

# Beside solutions/ and, like it, the instructor's: CORRECT holds correct answers, so no image ships these two
# files (grading reads the names and fingerprints in course/named_mistakes instead).


@functools.lru_cache(maxsize=None)
def answers(assignment: str):
    """The module course/<assignment>/answers.py (WRONG, CORRECT), loaded once; None for an assignment without
    one (a course of the instructor's own: its feedback names no mistakes; tests/test_mutants.py requires one
    for every assignment of this course)."""
    path = assignments_dir() / assignment / "answers.py"
    if not path.is_file():
        return None
    module = _load(path, f"course_answers_{assignment}")
    if getattr(module, "ASSIGNMENT", assignment) != assignment:
        raise CourseError(f"{path} says it belongs to {module.ASSIGNMENT!r}")
    return module


@functools.lru_cache(maxsize=None)
def all_wrong(assignment: str) -> dict:
    """{grade_id: code}: course/<assignment>/all_wrong.py's ALL_WRONG, one wrong answer per answer cell (a
    notebook of them must score 0: tests/test_all_wrong.py); {} for an assignment without the file."""
    path = assignments_dir() / assignment / "all_wrong.py"
    return _load(path, f"course_all_wrong_{assignment}").ALL_WRONG if path.is_file() else {}


def _load(path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def answer_editor(assignment: str):
    """edit(exercise, old, new, ...): the notebook's answer to `exercise` with each `old` text replaced (once)
    by its `new`, so mutants follow the notebook; an edit that no longer applies raises instead of silently
    testing the right answer."""
    import nbformat

    from grader.authoring.samples import answers as solved_answers

    # grade_id -> the notebook's answer, solution markers removed
    solved = solved_answers(nbformat.read(SOLUTIONS / assignment / f"{assignment}.ipynb", as_version=4))

    def edit(exercise, *pairs):
        code = solved[exercise]
        for old, new in zip(pairs[::2], pairs[1::2]):
            if old not in code:
                raise ValueError(f"mutant edit of {exercise} no longer applies: {old!r}")
            code = code.replace(old, new, 1)
        return code

    return edit
