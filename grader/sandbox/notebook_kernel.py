"""A source notebook's cells run in one live kernel in the notebook's folder, as autograding runs them
(NBGRADER_EXECUTION set): grader/feedback/visible_mistakes.py runs the named mistakes against the visible tests in
it, and the tests' mutant harness (tests/notebook_kernel.py) grades wrong answers with it.

Pass/fail follows the course's grader: an error fails the cell; stderr from a cell that raised nothing
does not (grader.preprocessors.PassingTestsKeepStderr).
"""
import os
import re
from dataclasses import dataclass

from jupyter_client import KernelManager

from grader.course import SOLUTIONS, course_config, nbgrader_meta, source_notebook


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


class NotebookKernel:
    """One kernel in the notebook's folder, with NBGRADER_EXECUTION set like autograding."""

    def __init__(self, assignment: str, timeout: int = 600):
        self.path = SOLUTIONS / assignment / f"{assignment}.ipynb"
        self.notebook = source_notebook(assignment)
        self.timeout = timeout
        self._ignore = ignore_pattern()
        env = dict(os.environ, NBGRADER_EXECUTION="autograde", MPLBACKEND="Agg")
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(cwd=str(self.path.parent), env=env)
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=120)

    def close(self):
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
