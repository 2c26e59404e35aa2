"""SandboxedExecute: nbgrader's Execute with the student's cells in a sandboxed, limited kernel and the tests
in the grader, within a budget per notebook."""
import copy
import functools
import json
import math
import os
import signal
import time

import nbformat
from jupyter_core.utils import run_sync
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbgrader.api import Gradebook
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import Execute
from traitlets import Instance, Integer, Unicode, default

from grader.trusted import cell_outcome
from grader.sandbox import cgroups
from grader.course import nbgrader_meta
from grader.authoring.assignment_settings import kernel_imports, limit_overrides
from grader.limits import GradingLimits
from grader.sandbox.bubblewrap import GradingKernelManager
from grader.trusted.trusted_tests import answer_sources, connect_tests, error_output

SETUP_CELL = "setup"  # the locked cell whose names the test cells share (imports, seed, data)
BUDGET_ERROR = "GradingBudgetSpent"  # ename of the cells not run once a notebook's budget is used up (shown only)
# Kernel messages that add outputs to a cell.
OUTPUT_MESSAGES = {"stream", "display_data", "execute_result", "update_display_data", "error"}


def graded_assignment(resources) -> str:
    """The assignment nbgrader is grading, from the resources it hands each preprocessor (None outside it)."""
    return ((resources or {}).get("nbgrader") or {}).get("assignment")


def join_streams(cell):
    """Consecutive outputs of one stream as one: how a cell's printing splits into messages depends on the
    kernel's flush timing, not on the notebook (nbconvert's CoalesceStreamsPreprocessor, without its
    carriage-return pass, whose regular expression is quadratic on a student's long line)."""
    joined = []
    for output in cell.get("outputs", []):
        if (joined and output.get("output_type") == "stream" and joined[-1].get("output_type") == "stream"
                and joined[-1].get("name") == output.get("name")):
            joined[-1]["text"] = joined[-1].get("text", "") + output.get("text", "")
        else:
            joined.append(output)
    if "outputs" in cell:
        cell["outputs"] = joined


class SandboxedExecute(Execute):
    """nbgrader's Execute, with the student's code in a sandboxed kernel and the tests in the grader.

    - Answer, setup and other cells run in the student's kernel (grader.sandbox.bubblewrap.GradingKernelManager:
      bubblewrap, memory and CPU-time limits).
    - Test cells run here, from the gradebook's copy of their source (grader.trusted.trusted_tests): what they
      raise is the verdict, and their outputs (what nbgrader scores) are written here.
    - A kernel that dies (os._exit, CPU-time limit, killed) fails the cell it was running, with a
      comment saying why; the kernel is restarted, the earlier cells replayed, and grading goes on.
    """

    max_kernel_deaths = Integer(3, help="Restarts allowed per notebook before the rest is marked not run"
                                ).tag(config=True)
    kernel_log_dir = Unicode("", help="Folder for each grading kernel's own log (default: discarded)"
                             ).tag(config=True)
    limits = Instance(GradingLimits, help="The kernels' and the notebook's limits (default: from the config)")

    @default("limits")
    def _default_limits(self):
        return GradingLimits(config=self.config)

    def __init__(self, **kwargs):
        kwargs.setdefault("kernel_manager_class", GradingKernelManager)
        kwargs.setdefault("store_widget_state", False)  # widget state: the kernel's data, unbounded, unused
        kwargs.setdefault("record_timing", False)  # the clock's, not the notebook's: a regrade gives the same file
        # A graded kernel's state is thrown away: killing it (its cgroups' processes too, grader.sandbox.cgroups)
        # saves waiting for the interpreter's teardown, about 0.4 s a notebook.
        kwargs.setdefault("shutdown_kernel", "immediate")
        super().__init__(**kwargs)
        self._class_limits = self.limits
        self._assignment = None

    def preprocess(self, nb, resources=None, km=None):
        self._assignment = graded_assignment(resources)
        self.limits = self._assignment_limits(resources)
        self._deaths = 0
        self._tests = None
        self._resources = resources
        self._trusted = trusted_sources(resources)
        self._references = self._reference_answers(resources)
        self._started = time.monotonic()
        self._cpu_of_ended_kernels = 0.0
        self._budget_spent = ""
        self._output_bytes, self._notebook_output_bytes = {}, 0
        cell_outcome.forget_submitted(nb)
        for cell in nb.cells:  # when the student ran each cell: the clock's (nbclient's own record is off)
            cell.get("metadata", {}).pop("execution", None)
        if self.limits.sandbox and cgroups.problem():
            self.log.warning(cgroups.problem())
        for suffix in ("log", "tests.log"):  # this grading's logs only (a kernel's restarts append to them)
            if self._log_path(suffix):
                open(self._log_path(suffix), "wb").close()
        try:
            nb, resources = super().preprocess(nb, resources, km)
        finally:
            self._close_tests()
        for cell in nb.cells:
            join_streams(cell)
        return nb, resources

    def _assignment_limits(self, resources) -> GradingLimits:
        """The class's limits with the graded assignment's own (course/<assignment>/assignment.toml) where the
        instructor's configuration sets none."""
        overrides = limit_overrides(graded_assignment(resources), explicit=set(self.config.GradingLimits))
        if not overrides:
            return self._class_limits
        names = GradingLimits.class_trait_names(config=True)
        return GradingLimits(**{**{name: getattr(self._class_limits, name) for name in names}, **overrides})

    def _close_tests(self):
        if self._tests is not None:
            self._tests.bridge.close()
            self._tests = None

    def create_kernel_manager(self):
        self._close_tests()  # a new kernel gets a new bridge and a fresh test namespace
        km = super().create_kernel_manager()
        km.limits = self.limits
        km.kernel_imports = list(kernel_imports(self._assignment))
        km.log_path = self._log_path("log")
        return km

    # -- the notebook's budget ----------------------------------------------------------------
    def _seconds_left(self) -> float:
        if not self.limits.notebook_seconds:
            return math.inf
        return self.limits.notebook_seconds - (time.monotonic() - self._started)

    def _cpu_used(self) -> float:
        used = getattr(self.km, "cpu_seconds_used", lambda: 0.0)() if self.km is not None else 0.0
        return self._cpu_of_ended_kernels + used

    def _budget_problem(self) -> str:
        """Why the rest of this notebook is not run ('' while it is within its budget)."""
        if self._seconds_left() <= 0:
            return f"its grading budget of {self.limits.notebook_seconds} s of wall-clock time"
        if self.limits.notebook_cpu_seconds and self._cpu_used() >= self.limits.notebook_cpu_seconds:
            return f"its grading budget of {self.limits.notebook_cpu_seconds} s of CPU time"
        return ""

    def _get_timeout(self, cell):
        """A cell's timeout (GradingLimits.cell_seconds, in place of nbclient's Execute.timeout), never past the
        notebook's budget."""
        timeout = self.limits.cell_seconds or None
        left = self._seconds_left()
        if left == math.inf:
            return timeout
        return max(1, math.ceil(min(timeout or left, left)))

    # -- what the kernel sends, held only within bounds ------------------------------------------
    def process_message(self, msg, cell, cell_index):
        """Outputs count against the cell's and the notebook's budgets as they arrive; past either they are
        dropped, with one note where that budget ran out."""
        if msg.get("msg_type") in OUTPUT_MESSAGES:
            size = len(json.dumps(msg.get("content", {}), default=str))
            spent, total = self._output_bytes.get(cell_index, 0), self._notebook_output_bytes
            self._output_bytes[cell_index], self._notebook_output_bytes = spent + size, total + size
            for used, limit_kb, whose in ((total, self.limits.notebook_output_kb, "this notebook"),
                                          (spent, self.limits.cell_output_kb, "this cell")):
                if used + size > limit_kb * 1024:
                    if used <= limit_kb * 1024:
                        cell.setdefault("outputs", []).append(nbformat.v4.new_output(
                            "stream", name="stdout",
                            text=f"\n... [output truncated by the grader: outputs of {whose} beyond "
                                 f"{limit_kb:,} KB were dropped]\n"))
                    return None
        return super().process_message(msg, cell, cell_index)

    async def _async_handle_timeout(self, timeout, cell=None):
        """nbclient's timeout of a cell run in the kernel (it interrupts the kernel), remembered as the grader's."""
        self._timed_out = timeout
        return await super()._async_handle_timeout(timeout, cell)

    def _log_path(self, suffix: str) -> str:
        """Where this notebook's kernel (suffix "log") or test cells ("tests.log") write their own notices."""
        if not self.kernel_log_dir:
            return ""
        os.makedirs(self.kernel_log_dir, exist_ok=True)
        info = (self._resources or {}).get("nbgrader", {})
        name = f"{info.get('student', 'student')}-{info.get('notebook', 'notebook')}.{suffix}"
        return os.path.join(self.kernel_log_dir, name)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and not self._budget_spent:
            self._budget_spent = self._budget_problem()
        if self._deaths >= self.max_kernel_deaths or (self._budget_spent and cell.cell_type == "code"):
            if cell.cell_type == "code":
                why = (f"the notebook used up {self._budget_spent}; it gets the points it earned before"
                       if self._budget_spent else f"the kernel died {self._deaths} times in this notebook")
                ename = BUDGET_ERROR if self._budget_spent else "NotRun"
                cell.outputs = [error_output(ename, f"not run: {why}")]
                cell_outcome.mark(cell, cell_outcome.BUDGET_SPENT if self._budget_spent else cell_outcome.NOT_RUN)
            return cell, resources
        try:
            if self._is_trusted_test(cell):
                grade_id = nbgrader_meta(cell)["grade_id"]
                source = self._trusted["tests"][grade_id]
                tests = self._trusted_tests()
                cell.outputs = tests.run(source, f"<test cell {grade_id}>", self._get_timeout(cell))
                cell.execution_count = None
                if tests.timed_out:
                    cell_outcome.mark(cell, cell_outcome.TIMED_OUT)
            else:
                self._timed_out = 0  # set to the cell's timeout in seconds if nbclient stops it
                cell, resources = super().preprocess_cell(cell, resources, index)
                if self._timed_out:
                    cell_outcome.mark(cell, cell_outcome.TIMED_OUT)
                    cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=(
                        f"\n... [the grader interrupted this cell at its time limit of {self._timed_out} s]\n")))
        except CellTimeoutError as error:
            # A message above message_mb makes zmq drop the connection it came on, and the rest of the cell's
            # outputs with it; the cell itself has finished. Its outputs decide no score: say so and go on.
            if "Timeout waiting for IOPub output" not in str(error):
                raise
            cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=(
                f"\n... [outputs of this cell were still missing {self.iopub_timeout} s after it ended, as happens "
                f"when a message above the grader's limit of {self.limits.message_mb} MB is refused: what the "
                "kernel sent meanwhile was lost]\n")))
        except DeadKernelError:
            self._deaths += 1
            cell.outputs.append(error_output("KernelDied", self._death_reason()))
            cell_outcome.mark(cell, cell_outcome.CRASHED)
            if self._deaths < self.max_kernel_deaths:
                self._restart_and_replay(index)
            return cell, resources
        if self.limits.memory_mb:
            for output in cell.get("outputs", []):
                if output.output_type == "error" and output.ename == "MemoryError":
                    output.evalue = (f"{output.evalue} (the grader allows each notebook "
                                     f"{self.limits.memory_mb} MB; this cell asked for more)").strip()
        return cell, resources

    def _is_trusted_test(self, cell) -> bool:
        meta = nbgrader_meta(cell)
        return (cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")
                and meta.get("grade_id") in self._trusted["tests"])

    def _trusted_tests(self):
        if self._tests is None:
            km = self.km
            self._tests = connect_tests(km.get_connection_info(), self._trusted["setup"],
                                        is_alive=lambda: run_sync(km.is_alive)(),
                                        interrupt=lambda: run_sync(km.interrupt_kernel)(),
                                        max_message_bytes=self.limits.message_mb * 2 ** 20,
                                        max_json_bytes=self.limits.message_json_mb * 2 ** 20,
                                        log_path=self._log_path("tests.log") or os.devnull,
                                        install_timeout=min(60, max(1, self._seconds_left())),
                                        references=self._references, memory_mb=self.limits.memory_mb)
        return self._tests

    def _reference_answers(self, resources) -> list:
        """The source notebook's answer cells: the correct versions of earlier exercises that stand in for the
        student's while a later exercise is tested (grader/trusted/trusted_tests.py). Without the source notebook, the
        student's own functions are called, and the log says so."""
        info = (resources or {}).get("nbgrader", {})
        if not info.get("assignment") or not info.get("notebook"):
            return []
        course = CourseDirectory(config=self.config)
        path = os.path.join(course.format_path(course.source_directory, ".", info["assignment"]),
                            f"{info['notebook']}.ipynb")
        if not os.path.isfile(path):
            self.log.warning("No source notebook at %s: each exercise's tests call the student's own earlier "
                             "functions, so one mistake can cost points in later exercises", path)
            return []
        return list(_answers_of(path, os.stat(path).st_mtime_ns))

    def _death_reason(self) -> str:
        code = None
        provisioner = getattr(self.km, "provisioner", None)
        process = getattr(provisioner, "process", None)
        if process is not None:
            code = process.poll()
        if code is not None and code > 128:  # bwrap passes on a signal death as 128 + the signal number
            code = 128 - code
        if getattr(self.km, "out_of_memory", lambda: False)():
            return (f"the kernel ran out of memory while running this cell: the grader allows each notebook "
                    f"{self.limits.memory_mb} MB, files written to /tmp, /dev/shm and its home included")
        if code in (-signal.SIGXCPU, -signal.SIGKILL) and self.limits.cpu_seconds:
            return (f"the kernel stopped while running this cell: it used up the grader's CPU-time limit of "
                    f"{self.limits.cpu_seconds} s (exit signal {-code}), or ran out of memory")
        if code is not None and code < 0:
            return f"the kernel was killed by signal {signal.Signals(-code).name} while running this cell"
        return f"the kernel exited (code {code}) while running this cell, e.g. through os._exit or sys.exit"

    def _restart_and_replay(self, index):
        """Fresh kernel, earlier code cells run again (outputs discarded) so later exercises can be graded.
        The replay counts against the notebook's budget like the first run did."""
        self._cpu_of_ended_kernels = self._cpu_used()
        self._cleanup_kernel()
        self.km = self.create_kernel_manager()
        self.start_new_kernel()
        self.start_new_kernel_client()
        for earlier in range(index):
            previous = self.nb.cells[earlier]
            # Test cells only check: replaying them (or a cell that killed the kernel) rebuilds nothing.
            killed = cell_outcome.outcome(previous) == cell_outcome.CRASHED
            if previous.cell_type == "code" and not nbgrader_meta(previous).get("grade") and not killed:
                if self._budget_problem():
                    return
                try:
                    self.execute_cell(copy.deepcopy(previous), earlier, store_history=False)
                except DeadKernelError:
                    self._deaths = self.max_kernel_deaths
                    return


@functools.lru_cache(maxsize=16)
def _answers_of(path: str, modified: int) -> tuple:
    """The answer cells of the source notebook at `path`, read once per version (a class has many notebooks)."""
    return tuple(answer_sources(nbformat.read(path, as_version=4)))


def trusted_sources(resources) -> dict:
    """The gradebook's copy of the setup cell and of every test cell (never the submission's)."""
    info = (resources or {}).get("nbgrader", {})
    found = {"setup": [], "tests": {}}
    if not info.get("db_url"):
        return found
    with Gradebook(info["db_url"]) as gradebook:
        notebook = gradebook.find_notebook(info["notebook"], info["assignment"])
        solutions = {cell.name for cell in notebook.solution_cells}
        sources = {cell.name: cell for cell in notebook.source_cells}
        for cell in notebook.grade_cells:
            if cell.cell_type == "code" and cell.name not in solutions and cell.name in sources:
                found["tests"][cell.name] = sources[cell.name].source
        if SETUP_CELL in sources and sources[SETUP_CELL].locked:
            found["setup"].append(sources[SETUP_CELL].source)
    return found
