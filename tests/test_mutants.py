"""Wrong answers must lose points and differently written correct answers must keep them.

Each assignment's course/<assignment>/answers.py (grader/authoring/assignment_answers.py) gives, per exercise
(the answer cell's grade_id), WRONG = {exercise: {name: code}} and CORRECT = {exercise: {name: code}}.
Every answer is graded by the notebook's own visible and hidden test cells (see notebook_kernel.py),
through the grader's trusted verdicts, and must get the same points in the student's own kernel.
A wrong answer whose visible test fails in the student's kernel is named there ("This looks like: ...",
grader/feedback/visible_mistakes.py). One mistake costs once: with a wrong answer in place (the first LATER_CHECKED of each exercise), the later
exercises whose tests call it
(grader.authoring.exercise_calls) keep all their points when graded, and their visible tests that fail in the
student's kernel name it.
"""
import pytest

from grader.authoring.assignment_answers import answers
from grader.feedback.mistakes import describe
from tests.course_files import ASSIGNMENTS, nbgrader_meta, source_notebook

MODULES = [answers(assignment) for assignment in ASSIGNMENTS if answers(assignment) is not None]
# Later exercises are graded with the first LATER_CHECKED wrong answers of each exercise in place: graded, the
# stand-in replaces the wrong answer whatever it is, so more of them would check the same thing at suite cost.
LATER_CHECKED = 2
CASES = [
    pytest.param(module.ASSIGNMENT, kind, exercise, name, code, kind == "wrong" and rank < LATER_CHECKED,
                 id=f"{module.ASSIGNMENT}-{exercise}-{kind}-{name}")
    for module in MODULES
    for kind, table in (("wrong", module.WRONG), ("correct", module.CORRECT))
    for exercise, entries in table.items()
    for rank, (name, code) in enumerate(entries.items())
]


@pytest.mark.slow
@pytest.mark.parametrize("assignment, kind, exercise, name, code, later", CASES)
def test_answer_is_graded_as_expected(kernels, assignment, kind, exercise, name, code, later):
    result = kernels(assignment).grade_answer(exercise, code, later=later)
    assert result.kernel_points == result.points, (
        f"{name!r} for {exercise}: {result.kernel_points} points in the student's own kernel, {result.points} "
        f"when graded ({result.failures})")
    if kind == "wrong":
        assert result.points < result.max_points, (
            f"Wrong answer {name!r} to {exercise} kept all {result.max_points} points: "
            "the exercise's tests do not catch this mistake"
        )
        assert not result.later_failures, (
            f"Wrong answer {name!r} to {exercise} also cost points in later exercises that call it (the grader's "
            f"correct version should stand in there): {result.later_failures}")
        # The student's Run / Validate names the mistake, as the feedback page does, unless the failure's message
        # changes from one run to the next (a model with fresh random weights each run): a digest cannot name that.
        if result.visible_traceback and not result.visible_unstable:
            assert "This looks like:" in result.visible_traceback and describe(name) in result.visible_traceback, (
                f"Wrong answer {name!r} to {exercise} fails the visible test without being named (run python -m "
                f"grader.feedback.visible_mistakes {assignment} after changing tests or answers): "
                f"{result.visible_traceback[-600:]}")
        assert not result.unnamed_in_kernel, (
            f"With {name!r} in {exercise}, these later visible tests failed in the student's kernel without naming "
            f"`{exercise}`: {result.unnamed_in_kernel}")
    else:
        assert result.points == result.max_points, (
            f"Correct variant {name!r} of {exercise} got {result.points}/{result.max_points}: {result.failures}"
        )


def test_every_exercise_has_enough_mutants():
    """Every assignment has its course/<assignment>/answers.py, with at least 3 wrong answers and 1 correct
    variant for every graded exercise."""
    missing = [assignment for assignment in ASSIGNMENTS if answers(assignment) is None]
    assert not missing, f"no course/<assignment>/answers.py for {missing} (docs/authoring.md)"
    for module in MODULES:
        notebook = source_notebook(module.ASSIGNMENT)
        exercises = [nbgrader_meta(c)["grade_id"] for c in notebook.cells if nbgrader_meta(c).get("solution")]
        for exercise in exercises:
            assert len(module.WRONG.get(exercise, {})) >= 3, f"{module.ASSIGNMENT}: {exercise} has fewer than 3 wrong answers"
            assert len(module.CORRECT.get(exercise, {})) >= 1, f"{module.ASSIGNMENT}: {exercise} has no correct variant"


@pytest.mark.parametrize("module", MODULES, ids=lambda module: module.ASSIGNMENT)
def test_every_answer_is_python(module):
    """A wrong answer that does not even compile loses points for that alone and so tests nothing (an edit of the
    notebook's answer that no longer fits it)."""
    for kind, table in (("WRONG", module.WRONG), ("CORRECT", module.CORRECT)):
        for exercise, entries in table.items():
            for name, code in entries.items():
                try:
                    compile(code, f"<{module.ASSIGNMENT} {exercise} {name}>", "exec")
                except SyntaxError as error:
                    pytest.fail(f"{module.ASSIGNMENT} {kind}[{exercise!r}][{name!r}] is not Python: {error}")
