"""Verdicts decided outside student code: the test cells run here, in the grader, never in the student's
kernel.

While a notebook is graded, the student's (sandboxed) kernel runs the setup, answer and other
cells. Each test cell runs here instead, in a namespace of its own: the setup cell's names are the
grader's own (NumPy, the course's checks, the data), and every other name the test reads (the
graded functions, the student's variables) is a `Remote` (grader/trusted/remote.py) that asks the kernel's
agent (grader/trusted/kernel_agent.py) for one thing at a time through the bridge (grader/trusted/bridge.py). So the
student's interpreter sees the inputs of each call and nothing else: no test code, no expected value,
no hidden test. Whatever it answers, the checks, the references and the verdict are computed here, a
cell whose checks did not all run fails (grader/trusted/check_coverage.py), and the test cell's outputs (what
nbgrader scores) are written here.

One mistake costs once: a test cell that starts with `testing(exercise, calls=(...))`
(attention_course.dependencies) has the functions of earlier exercises it names replaced, for the rest
of the cell, by correct versions that run here: the source notebook's answer cells, run in a namespace of
their own. In the student's kernel those names (and the default arguments that captured them) become
call-backs to these versions, which answer only while the cell runs; the student's printed output of a
cell they answered in is withheld, so no correct answer leaves the grader on inputs of the student's
choosing.
"""
import ast
import builtins
import contextlib
import importlib
import io
import os
import sys
import time
import traceback
import uuid

from nbclient.exceptions import DeadKernelError
from nbformat.notebooknode import NotebookNode

from attention_course import dependencies, kernel_side
from grader.trusted.bridge import CellOutOfTime, KernelBridge, install_agent_code, mark_stderr
from grader.trusted.check_coverage import RAN, CheckCoverage
from grader.sandbox.kernel_client import DEFAULT_MAX_JSON_BYTES, DEFAULT_MAX_MESSAGE_BYTES, LimitedBlockingKernelClient
from grader.limits import FIXED, GradingLimits
from grader.trusted.reference_worker import ReferenceCall
from grader.trusted.student_errors import StudentCodeError

# Student output kept per test cell.
MAX_STUDENT_OUTPUT = FIXED["student_output_characters"].value
# What a test cell's outputs keep of any text, the test's own prints included (they may show student values):
# its printed text, its last expression's repr, and the message of the error that failed it.
MAX_TEST_TEXT = FIXED["test_text_characters"].value
MAX_ERROR_CHARACTERS = FIXED["error_characters"].value
# After a test cell (its deadline perhaps spent), how long putting the student's own functions back may take.
RESTORE_SECONDS = FIXED["restore_seconds"].value
WITHHELD = ("[your code's printed output is not shown for this test: the grader's correct versions of earlier "
            "exercises answered its calls]\n")


class Namespace(dict):
    """The test cells' globals: the grader's own names, and the student's as Remotes when asked for."""

    def __init__(self, bridge):
        super().__init__(__name__="__main__")
        self.bridge = bridge

    def __missing__(self, name):
        if hasattr(builtins, name):
            return getattr(builtins, name)
        try:
            return self.bridge.request("global", name)
        except StudentCodeError as error:
            raise NameError(f"name {name!r} is not defined") from error


@contextlib.contextmanager
def native_stderr_to(path: str):
    """Send what libraries write to file descriptor 2 (TensorFlow's C++ start-up notices) to `path`."""
    sys.stderr.flush()
    saved = os.dup(2)
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(target, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(target)


class TrustedTests:
    """Runs the setup cell once and then each test cell in the grader, against one kernel's agent.

    What libraries print below Python while the tests run (TensorFlow's notices) goes to `log_path`.
    """

    def __init__(self, bridge: KernelBridge, setup_sources: list, log_path: str = os.devnull,
                 references: list = (), memory_mb: int = GradingLimits.memory_mb.default_value):
        self.bridge = bridge
        self.setup_sources = list(setup_sources)
        self.log_path = log_path
        self.references = list(references)  # the source notebook's answer cells, in order
        self.memory_mb = memory_mb  # of the worker that answers the student's calls of correct versions
        self._token = uuid.uuid4().hex  # this notebook's namespace in that worker
        self.namespace = None
        self.timed_out = False  # whether the last test cell run reached its deadline (the grader's own state)
        self._reference = None  # their namespace, made when a test first asks for a correct version
        self._standing = []  # (names put in the test's namespace, the kernel's number to restore) of this cell

    def _start(self):
        self.namespace = Namespace(self.bridge)
        run_quietly(self.setup_sources, "setup cell", self.namespace)

    def run(self, source: str, name: str, timeout: float) -> list:
        """Outputs of the test cell `source` as nbgrader will score them (stream, execute_result, error)."""
        stdout, withheld = CappedText(MAX_TEST_TEXT), io.StringIO()
        self.bridge.output = lambda text: ((withheld if self._standing else stdout).write(text)
                                           if stdout.tell() + withheld.tell() < MAX_STUDENT_OUTPUT else None)
        outputs, result, failure = [], None, None
        stderr = CappedText(MAX_TEST_TEXT)
        try:
            # The course's test helpers (attention_course.kernel_side) work through this kernel while it runs.
            with self.bridge.test_run(timeout), kernel_side.bridged(self.bridge), self._stand_ins(), \
                    contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), \
                    native_stderr_to(self.log_path):
                if self.namespace is None:
                    self._start()
                result = self._exec(source, name)
        except DeadKernelError:
            raise
        except BaseException as error:  # noqa: B902 (a test that calls exit() still fails, not the grader)
            failure = error
        if withheld.tell():
            stdout.write(WITHHELD if self.bridge.callbacks_run else withheld.getvalue())
        text = stdout.kept()
        text += mark_stderr(stderr.kept())
        if text:
            outputs.append(NotebookNode(output_type="stream", name="stdout", text=text))
        self.timed_out = isinstance(failure, CellOutOfTime)
        if failure is not None:
            outputs.append(exception_output(failure, name))
        elif result is not None:
            outputs.append(NotebookNode(output_type="execute_result", execution_count=None, metadata={},
                                        data={"text/plain": cut(repr(result), MAX_TEST_TEXT)}))
        return outputs

    @contextlib.contextmanager
    def _stand_ins(self):
        """The span in which `testing(..., calls=...)` puts correct versions in place; they go when it ends."""
        dependencies.STAND_IN = self._stand_in
        try:
            yield
        finally:
            dependencies.STAND_IN = None
            standing, self._standing = self._standing, []
            for names, number in reversed(standing):
                for name in names:
                    self.namespace.pop(name, None)
                self.bridge.deadline = max(self.bridge.deadline or 0, time.monotonic() + RESTORE_SECONDS)
                try:
                    self.bridge.request("restore_globals", number)
                except (DeadKernelError, KeyboardInterrupt):
                    raise
                except (Exception, CellOutOfTime):  # noqa: BLE001 (a kernel that will not restore keeps dead call-backs: its loss)
                    pass

    def _stand_in(self, names):
        """Correct versions of the earlier exercises `names`, here and in the kernel, for this test cell: the
        course's test double for a layer (attention_course.dependencies.DOUBLES), else the source notebook's
        function."""
        values = {}
        for name in (n for n in names if dependencies.DOUBLES.get(n)):
            values[name] = getattr(importlib.import_module("attention_course.layer_doubles"), dependencies.DOUBLES[name])
        functions = [name for name in names if name not in dependencies.DOUBLES]
        if functions and self.references:  # without the source notebook, the student's own functions are called
            reference = self._reference_namespace()
            unknown = [name for name in functions if not callable(reference.get(name))]
            if unknown:
                raise LookupError(f"the test asks for correct versions of {unknown}, which the source notebook's "
                                  "answer cells do not define")
            values.update({name: ReferenceCall(reference[name], name, self._token,
                                               (tuple(self.setup_sources), tuple(self.references)), self.memory_mb)
                           for name in functions})
        if not values:
            return
        # A double is asked of the kernel like the student's class it replaces (isinstance checks reach it there).
        here = {name: value for name, value in values.items() if name not in dependencies.DOUBLES}
        self.namespace.update(here)
        self._standing.append((list(here), self.bridge.request("set_globals", values)))

    def _reference_namespace(self) -> dict:
        """The setup cell and the source notebook's answer cells, run here once (a plain namespace: nothing in
        it reaches the student's kernel but call-backs)."""
        if self._reference is None:
            namespace = {"__name__": "__main__"}
            run_quietly(self.setup_sources, "setup cell", namespace)
            run_quietly(self.references, "correct answer", namespace)
            self._reference = namespace
        return self._reference

    def _exec(self, source: str, name: str):
        coverage = CheckCoverage(ast.parse(source, filename=name))
        self.namespace[RAN] = coverage.mark
        tree = coverage.tree
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, name, "exec"), self.namespace)
        result = None
        if last is not None:
            result = eval(compile(ast.Expression(last.value), name, "eval"), self.namespace)
        coverage.verify()
        return result


def run_quietly(sources: list, label: str, namespace: dict):
    """Run cells' sources in `namespace`, what they print dropped."""
    for index, source in enumerate(sources):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            exec(compile(source, f"<{label} {index}>", "exec"), namespace)


class CappedText(io.StringIO):
    """A stream that keeps its first `limit` characters and counts the rest."""

    def __init__(self, limit: int):
        super().__init__()
        self.limit, self.dropped = limit, 0

    def write(self, text):
        room = self.limit - self.tell()
        if len(text) > room:
            self.dropped += len(text) - max(room, 0)
            text = text[:max(room, 0)]
        return super().write(text)

    def kept(self) -> str:
        return self.getvalue() + (cut_note(self.dropped) + "\n" if self.dropped else "")


def cut(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and a line saying how many more there were."""
    return text if len(text) <= limit else text[:limit] + cut_note(len(text) - limit)


def cut_note(dropped: int) -> str:
    return f"\n... [cut by the grader: {dropped:,} more characters]"


def error_output(ename: str, evalue: str, frames: str = "") -> NotebookNode:
    """An nbgrader error output (what makes a test cell score 0), its message cut to MAX_ERROR_CHARACTERS."""
    ename, evalue, frames = cut(ename, 200), cut(evalue, MAX_ERROR_CHARACTERS), cut(frames, MAX_ERROR_CHARACTERS)
    trace = [frames, f"{ename}: {evalue}"] if frames else [f"{ename}: {evalue}"]
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=trace)


def exception_output(error: BaseException, name: str) -> NotebookNode:
    """The error output of an exception a test cell raised, with the frames of the test cell `name`."""
    ename = "CellTimeoutError" if isinstance(error, CellOutOfTime) else type(error).__name__
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == name]
    return error_output(ename, str(error), "".join(traceback.format_list(frames)))


def connect_tests(connection_info: dict, setup_sources: list, *, is_alive, interrupt,
                  max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, max_json_bytes: int = DEFAULT_MAX_JSON_BYTES,
                  log_path: str = os.devnull, install_timeout: float = 60, references: list = (),
                  memory_mb: int = GradingLimits.memory_mb.default_value) -> TrustedTests:
    """The whole chain for one kernel: a client of its own (size-limited sockets), the bridge, the agent
    installed in the kernel, and the trusted test runner with the setup cell's sources and the source
    notebook's answer cells (`references`, for the correct versions of earlier exercises)."""
    client = LimitedBlockingKernelClient()
    client.max_message_bytes, client.max_json_bytes = max_message_bytes, max_json_bytes
    client.load_connection_info(connection_info)
    client.start_channels()
    bridge = KernelBridge(client, is_alive=is_alive, interrupt=interrupt, output=lambda text: None)
    bridge.run_code(install_agent_code(), timeout=install_timeout)
    return TrustedTests(bridge, setup_sources, log_path, references, memory_mb)


def answer_sources(source_nb) -> list:
    """The answer cells of a source notebook (with their solutions), in order."""
    return [cell.source for cell in source_nb.cells
            if cell.cell_type == "code" and cell.get("metadata", {}).get("nbgrader", {}).get("solution")]
