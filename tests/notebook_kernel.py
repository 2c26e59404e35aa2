"""Run a source notebook's cells in one live kernel, and grade answers against its test cells.

The mutant tests use this to swap one answer cell for a wrong (or differently written) answer,
run that exercise's visible and hidden test cells exactly as written in the notebook, and put the
original answer back. Each test cell is judged twice: in the kernel, as the student's Run and
Validate see it, and in this process through the grader's own trusted verdicts (grader/trusted_tests.py),
as `grade` decides it. Pass/fail follows the course's grader: an error fails the cell; stderr from a
cell that raised nothing does not (see grader/preprocessors.py).
"""
import os
import re
from dataclasses import dataclass, field

import nbformat
from jupyter_client import KernelManager

from grader.course import SOLUTIONS, course_config, nbgrader_meta
from grader.exercise_calls import exercise_calls
from grader.preprocessors import SETUP_CELL
from grader.trusted_tests import answer_sources, connect_tests



def ignore_pattern() -> re.Pattern:
    return re.compile(course_config().IgnorePattern.pattern)


@dataclass
class CellResult:
    ok: bool
    error: str = ""
    stderr: str = ""
    stdout: str = ""
    traceback: str = ""

    @property
    def passed(self) -> bool:
        # The course's grader keeps a passing test's stderr as text (grader.preprocessors.PassingTestsKeepStderr)
        return self.ok


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


class NotebookKernel:
    """One kernel in the notebook's folder, with NBGRADER_EXECUTION set like autograding."""

    def __init__(self, assignment: str, timeout: int = 600):
        self.path = SOLUTIONS / assignment / f"{assignment}.ipynb"
        self.notebook = nbformat.read(self.path, as_version=4)
        self.timeout = timeout
        self._ignore = ignore_pattern()
        env = dict(os.environ, NBGRADER_EXECUTION="autograde", MPLBACKEND="Agg")
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(cwd=str(self.path.parent), env=env)
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=120)
        setup = [c.source for c in self.notebook.cells if nbgrader_meta(c).get("grade_id") == SETUP_CELL]
        self.calls = exercise_calls(self.notebook)
        # The chain gets its own sockets: a second manager.client() would mute the first's iopub.
        self.trusted = connect_tests(self.manager.get_connection_info(), setup, is_alive=self.manager.is_alive,
                                     interrupt=self.manager.interrupt_kernel, install_timeout=120,
                                     references=answer_sources(self.notebook))

    def close(self):
        self.trusted.bridge.close()
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)

    def run(self, code: str) -> CellResult:
        streams = {"stdout": [], "stderr": []}
        errors, tracebacks = [], []

        def hook(message):
            content = message["content"]
            if message["msg_type"] == "stream":
                streams[content["name"]].append(content["text"])
            elif message["msg_type"] == "error":
                errors.append(f"{content['ename']}: {content['evalue']}")
                tracebacks.append("\n".join(content.get("traceback", [])))

        reply = self.client.execute_interactive(code, timeout=self.timeout, output_hook=hook,
                                                allow_stdin=False)
        stderr = "".join(streams["stderr"])
        if stderr and self._ignore.search(stderr):
            stderr = ""
        ok = reply["content"]["status"] == "ok" and not errors
        return CellResult(ok, "\n".join(errors), stderr, "".join(streams["stdout"]), "\n".join(tracebacks))

    def run_all(self):
        """Run every code cell in order; raise if one fails."""
        for index, cell in enumerate(self.notebook.cells):
            if cell.cell_type != "code":
                continue
            result = self.run(cell.source)
            if not result.ok:
                raise RuntimeError(f"{self.path.name} cell {index} failed: {result.error}")

    def answer_cell(self, exercise: str):
        for cell in self.notebook.cells:
            if nbgrader_meta(cell).get("grade_id") == exercise and nbgrader_meta(cell).get("solution"):
                return cell
        raise KeyError(f"No answer cell with grade_id {exercise!r} in {self.path.name}")

    def test_cells(self, exercise: str) -> list:
        prefix = f"test_{exercise}_"
        cells = [c for c in self.notebook.cells
                 if nbgrader_meta(c).get("grade") and nbgrader_meta(c).get("grade_id", "").startswith(prefix)]
        if not cells:
            raise KeyError(f"No test cells named {prefix}* in {self.path.name}")
        return cells

    def grade_answer(self, exercise: str, answer_code: str, later: bool = False) -> ExerciseResult:
        """Points the exercise's own test cells give `answer_code`; the notebook's answer is restored after.
        With `later`, also the test cells of the later exercises that call this one (grader.exercise_calls),
        their answer cells run again first, as in a notebook run from the top."""
        defined = self.run(answer_code)
        result = ExerciseResult(0.0, 0.0)
        for cell in self.test_cells(exercise):
            meta = nbgrader_meta(cell)
            result.max_points += meta["points"]
            # The grader's verdict first: the kernel's own run of the test may change the notebook's globals.
            errors = ([o for o in self.trusted.run(cell.source, f"<{meta['grade_id']}>", self.timeout)
                       if o.output_type == "error"] if defined.ok else [defined.error])
            outcome = self.run(cell.source) if defined.ok else defined
            if outcome.passed:
                result.kernel_points += meta["points"]
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
