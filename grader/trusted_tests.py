"""Verdicts decided outside student code: the test cells run here, in the grader, never in the student's
kernel.

While a notebook is graded, the student's (sandboxed) kernel runs the setup, answer and other
cells. Each test cell runs here instead, in a namespace of its own: the setup cell's names are the
grader's own (NumPy, the course's checks, the data), and every other name the test reads (the
graded functions, the student's variables) is a `Remote` (grader/remote.py) that asks the kernel's
agent (grader/kernel_agent.py) for one thing at a time through the bridge (grader/bridge.py). So the
student's interpreter sees the inputs of each call and nothing else: no test code, no expected value,
no hidden test. Whatever it answers, the checks, the references and the verdict are computed here, a
cell whose checks did not all run fails (grader/check_coverage.py), and the test cell's outputs (what
nbgrader scores) are written here.
"""
import ast
import builtins
import contextlib
import io
import os
import sys
import traceback

from nbclient.exceptions import DeadKernelError
from nbformat.notebooknode import NotebookNode

from attention_course import kernel_side
from grader.bridge import MAX_REPLY_CHARACTERS, KernelBridge, install_agent_code, mark_stderr
from grader.check_coverage import RAN, CheckCoverage
from grader.kernel_client import LimitedBlockingKernelClient
from grader.student_errors import StudentCodeError

# Student output kept per test cell.
MAX_STUDENT_OUTPUT = 20_000


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

    def __init__(self, bridge: KernelBridge, setup_sources: list, log_path: str = os.devnull):
        self.bridge = bridge
        self.setup_sources = list(setup_sources)
        self.log_path = log_path
        self.namespace = None

    def _start(self):
        self.namespace = Namespace(self.bridge)
        for index, source in enumerate(self.setup_sources):
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                exec(compile(source, f"<setup cell {index}>", "exec"), self.namespace)

    def run(self, source: str, name: str, timeout: float) -> list:
        """Outputs of the test cell `source` as nbgrader will score them (stream, execute_result, error)."""
        stdout = io.StringIO()
        self.bridge.output = lambda text: stdout.write(text) if stdout.tell() < MAX_STUDENT_OUTPUT else None
        outputs, result, failure = [], None, None
        stderr = io.StringIO()
        try:
            # The course's test helpers (attention_course.kernel_side) work through this kernel while it runs.
            with self.bridge.test_run(timeout), kernel_side.bridged(self.bridge), \
                    contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr), \
                    native_stderr_to(self.log_path):
                if self.namespace is None:
                    self._start()
                result = self._exec(source, name)
        except DeadKernelError:
            raise
        except BaseException as error:  # noqa: B902 (a test that calls exit() still fails, not the grader)
            failure = error
        text = stdout.getvalue()
        text += mark_stderr(stderr.getvalue())
        if text:
            outputs.append(NotebookNode(output_type="stream", name="stdout", text=text))
        if failure is not None:
            outputs.append(exception_output(failure, name))
        elif result is not None:
            outputs.append(NotebookNode(output_type="execute_result", execution_count=None, metadata={},
                                        data={"text/plain": repr(result)}))
        return outputs

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


def error_output(ename: str, evalue: str, frames: str = "") -> NotebookNode:
    """An nbgrader error output (what makes a test cell score 0)."""
    trace = [frames, f"{ename}: {evalue}"] if frames else [f"{ename}: {evalue}"]
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=trace)


def exception_output(error: BaseException, name: str) -> NotebookNode:
    """The error output of an exception a test cell raised, with the frames of the test cell `name`."""
    ename = "CellTimeoutError" if isinstance(error, TimeoutError) else type(error).__name__
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == name]
    return error_output(ename, str(error), "".join(traceback.format_list(frames)))


def connect_tests(connection_info: dict, setup_sources: list, *, is_alive, interrupt,
                  max_message_bytes: int = MAX_REPLY_CHARACTERS, log_path: str = os.devnull,
                  install_timeout: float = 60) -> TrustedTests:
    """The whole chain for one kernel: a client of its own (size-limited sockets), the bridge, the agent
    installed in the kernel, and the trusted test runner with the setup cell's sources."""
    client = LimitedBlockingKernelClient()
    client.max_message_bytes = max_message_bytes
    client.load_connection_info(connection_info)
    client.start_channels()
    bridge = KernelBridge(client, is_alive=is_alive, interrupt=interrupt, output=lambda text: None)
    bridge.run_code(install_agent_code(), timeout=install_timeout)
    return TrustedTests(bridge, setup_sources, log_path)
