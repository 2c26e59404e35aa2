"""Notebooks 02 and 04: common mistakes fail the VISIBLE test, with a message that says what to fix.

Each mutant module lists in CAUGHT_BY_VISIBLE the wrong answers a student must learn about when they run
the visible test, not only from the grade (batch axes, non-default parameters, unequal sizes). For each,
the exercise's visible test cell must fail both in the student's kernel (Run, Validate) and through the
grader's trusted verdicts, and the failure must carry a hint.
"""
import pytest

from tests.course_files import nbgrader_meta
from grader.authoring.assignment_answers import answers

MODULES = (answers("02_three_stage_attention"), answers("04_self_attention"))
CASES = [pytest.param(module.ASSIGNMENT, exercise, name, id=f"{module.ASSIGNMENT}-{exercise}-{name}")
         for module in MODULES for exercise, names in getattr(module, "CAUGHT_BY_VISIBLE", {}).items() for name in names]
WRONG = {module.ASSIGNMENT: module.WRONG for module in MODULES}

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("assignment, exercise, name", CASES)
def test_visible_test_catches_the_mistake_with_a_hint(kernels, assignment, exercise, name):
    kernel = kernels(assignment)
    visible = [c for c in kernel.test_cells(exercise) if nbgrader_meta(c)["grade_id"] == f"test_{exercise}_visible"]
    assert len(visible) == 1, f"{exercise}: no visible test cell"
    source = visible[0].source
    defined = kernel.run(WRONG[assignment][exercise][name])
    try:
        assert defined.ok, f"the wrong answer {name!r} does not even define: {defined.error}"
        in_kernel = kernel.run(source)
        trusted = [o for o in kernel.trusted.run(source, f"<test_{exercise}_visible>", kernel.timeout)
                   if o.output_type == "error"]
    finally:
        restored = kernel.run(kernel.answer_cell(exercise).source)
        assert restored.ok, restored.error
    assert not in_kernel.ok, f"{name!r} passes the visible test of {exercise} in the student's kernel"
    assert trusted, f"{name!r} passes the visible test of {exercise} when graded"
    for where, message in (("kernel", in_kernel.error), ("grader", f"{trusted[0].ename}: {trusted[0].evalue}")):
        assert message.startswith("AssertionError") and "Hint:" in message, (
            f"{name!r} fails the visible test of {exercise} ({where}) without a hint: {message[:500]}")
