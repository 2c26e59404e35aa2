"""Run a source notebook's cells in one live kernel, and grade answers against its test cells.

The mutant tests use this (grader.sandbox.notebook_kernel's kernel with the grader's trusted test chain) to
swap one answer cell for a wrong (or differently written) answer, run that exercise's visible and
hidden test cells exactly as written in the notebook, and put the original answer back. Each test
cell is judged twice: in the kernel, as the student's Run and Validate see it, and in this process
through the grader's own trusted verdicts (grader/trusted/trusted_tests.py), as `grade` decides it.
"""
from dataclasses import dataclass, field

from grader.sandbox import notebook_kernel
from grader.course import nbgrader_meta
from grader.authoring.exercise_calls import exercise_calls
from grader.preprocessors import SETUP_CELL
from grader.trusted.trusted_tests import answer_sources, connect_tests


@dataclass
class ExerciseResult:
    points: float  # as the grader's trusted verdicts give them
    max_points: float
    kernel_points: float = 0.0  # as the test cells give them in the student's own kernel (Run, Validate)
    failures: dict = field(default_factory=dict)  # grade_id -> message
    # Later exercises whose tests call this one: grade_id -> message of each of their test cells that failed
    # when graded, and of each visible one that failed in the student's kernel without naming this exercise.
    later_failures: dict = field(default_factory=dict)
    unnamed_in_kernel: dict = field(default_factory=dict)
    visible_traceback: str = ""  # what the student reads when the visible test fails in their kernel ('' if it passed)
    visible_unstable: bool = False  # the visible test, run again as it is, failed with another message


class NotebookKernel(notebook_kernel.NotebookKernel):
    """The notebook's kernel, and the grader's trusted test chain connected to it."""

    def __init__(self, assignment: str, timeout: int = 600):
        super().__init__(assignment, timeout)
        setup = [c.source for c in self.notebook.cells if nbgrader_meta(c).get("grade_id") == SETUP_CELL]
        self.calls = exercise_calls(self.notebook)
        # The chain gets its own sockets: a second manager.client() would mute the first's iopub.
        self.trusted = connect_tests(self.manager.get_connection_info(), setup, is_alive=self.manager.is_alive,
                                     interrupt=self.manager.interrupt_kernel, install_timeout=120,
                                     references=answer_sources(self.notebook))

    def close(self):
        self.trusted.bridge.close()
        super().close()

    def grade_answer(self, exercise: str, answer_code: str, later: bool = False) -> ExerciseResult:
        """Points the exercise's own test cells give `answer_code`; the notebook's answer is restored after.
        With `later`, also the test cells of the later exercises that call this one (grader.authoring.exercise_calls),
        their answer cells run again first, as in a notebook run from the top."""
        defined = self.run(answer_code)
        result = ExerciseResult(0.0, 0.0)
        tests = self.test_cells(exercise)
        for cell in tests:
            meta = nbgrader_meta(cell)
            result.max_points += meta["points"]
            # The grader's verdict first: the kernel's own run of the test may change the notebook's globals.
            errors = ([o for o in self.trusted.run(cell.source, f"<{meta['grade_id']}>", self.timeout)
                       if o.output_type == "error"] if defined.ok else [defined.error])
            outcome = self.run(cell.source) if defined.ok else defined
            if outcome.passed:
                result.kernel_points += meta["points"]
            elif cell is tests[0]:
                result.visible_traceback = outcome.traceback or outcome.error
                if "This looks like:" not in result.visible_traceback:  # named only if its message is reproducible
                    result.visible_unstable = self.run(cell.source).error != outcome.error
            if errors:
                result.failures[meta["grade_id"]] = "; ".join(
                    e if isinstance(e, str) else f"{e.ename}: {e.evalue}"[:300] for e in errors)
            else:
                result.points += meta["points"]
        callers = [other for other, calls in self.calls.items() if exercise in calls] if later and defined.ok else []
        # The visible test once more, last: the hidden cells run above (students never run them) also record a
        # result for the exercise, and the note a later test shows reads the visible one, as in a student's kernel.
        own_visible_failed = any(not self.run(c.source).ok for c in self.test_cells(exercise)[:1]) if callers else False
        for other in callers:
            self.run(self.answer_cell(other).source)
            for cell in self.test_cells(other):
                grade_id = nbgrader_meta(cell)["grade_id"]
                errors = [o for o in self.trusted.run(cell.source, f"<{grade_id}>", self.timeout)
                          if o.output_type == "error"]
                if errors:
                    result.later_failures[grade_id] = f"{errors[0].ename}: {errors[0].evalue}"[:300]
            visible = self.run(self.test_cells(other)[0].source)
            if own_visible_failed and not visible.ok and f"your `{exercise}`" not in visible.traceback:
                result.unnamed_in_kernel[other] = visible.error[:300]
        restored = self.run(self.answer_cell(exercise).source)
        if not restored.ok:
            raise RuntimeError(f"Restoring the answer to {exercise} failed: {restored.error}")
        for other in callers:
            self.run(self.answer_cell(other).source)
        return result
