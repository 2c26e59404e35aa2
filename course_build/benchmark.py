"""Benchmarks that print numbers (nothing here asserts a time).

python -m course_build.benchmark notebooks          Run All (full, with training); one solved student autograded by
                                              stock nbgrader, by `grade` and by `grade --unsafe-no-sandbox`:
                                              the sandbox's cost, and the time test cells take in the grader;
                                              each time over its assignment's budget (assignment.toml)
python -m course_build.benchmark grading [-n 20] [-w W ...]  n simulated students x all assignments: stock sequential
                                              `nbgrader autograde` against `grade` with parallel workers,
                                              without feedback (the same work) and with it
python -m course_build.benchmark phases [-n 3]      where the time of `grade` goes, per notebook (n students:
                                              solved, partial, blank): kernel start and stop, setup cell,
                                              the other cells in the kernel, test cells in the grader,
                                              nbgrader's bookkeeping, and the feedback page
(python -m tests.hostile_benchmark, beside the hostile cases it grades, uses GraderCost from here.)
"""
import argparse
import functools
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbconvert.exporters import Exporter, HTMLExporter, TemplateExporter
from nbgrader.api import Gradebook

from grader.authoring.assignment_settings import assignment_settings
from grader.course import SOLUTIONS, assignments, nbgrader_meta, prepare_environment
from grader.running.grading import Grader
from grader.preprocessors.sandboxed_execute import SandboxedExecute
from grader.feedback.sanitise_feedback import SanitiseFeedback
from grader.authoring.samples import write_samples
from grader.trusted.trusted_tests import TrustedTests, native_stderr_to
from course_build import results

MIX = (1.0, 0.5, 0.0)  # solved, partial, blank, in turn


def run_all_seconds(assignment: str) -> float:
    notebook = nbformat.read(SOLUTIONS / assignment / f"{assignment}.ipynb", as_version=4)
    env_before = os.environ.pop("NBGRADER_EXECUTION", None)
    start = time.perf_counter()
    with native_stderr_to(os.devnull):  # the kernel inherits it: TensorFlow's notices stay off the console
        NotebookClient(notebook, timeout=1800, kernel_name="python3",
                       resources={"metadata": {"path": str(SOLUTIONS / assignment)}}).execute()
    if env_before is not None:
        os.environ["NBGRADER_EXECUTION"] = env_before
    return time.perf_counter() - start


def write_class(root: Path, release: Path, names: list, students: int) -> Path:
    folder = root / "class"
    write_samples(release, SOLUTIONS, names, folder,
                  {f"student{index:02d}": MIX[index % len(MIX)] for index in range(students)})
    return folder


def scores(db_url: str) -> dict:
    with Gradebook(db_url) as gradebook:
        return {(s.student.id, s.assignment.name): s.score for a in gradebook.assignments for s in a.submissions}


def use_stock_nbgrader(grader: Grader):
    """Point the workspace's nbgrader_config.py at stock nbgrader: its own Execute, no sandbox, tests in the kernel."""
    config = grader.config
    (grader.workspace / "nbgrader_config.py").write_text("\n".join([
        "c = get_config()",
        f"c.CourseDirectory.root = {str(grader.workspace)!r}",
        f"c.CourseDirectory.source_directory = {config.CourseDirectory.source_directory!r}",
        f"c.CourseDirectory.release_directory = {config.CourseDirectory.release_directory!r}",
        f"c.CourseDirectory.db_url = {config.CourseDirectory.db_url!r}",
        f"c.Execute.timeout = {grader.limits.cell_seconds!r}",
        "c.IgnorePattern.enabled = True",
        f"c.IgnorePattern.pattern = {config.IgnorePattern.pattern!r}",
        "c.OverwriteCells.add_missing_cells = True", ""]))


def stock_autograde_seconds(grader: Grader, names: list) -> float:
    """Plain sequential `nbgrader autograde` of every submission in the workspace, assignment after assignment."""
    use_stock_nbgrader(grader)
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_CONFIG_PATH"}
    start = time.perf_counter()
    for assignment in names:
        subprocess.run([sys.executable, "-m", "nbgrader", "autograde", assignment, "--force"],
                       cwd=grader.workspace, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def timed_test_cells():
    """Patch TrustedTests.run to add up the time test cells spend in the grader; returns the running total."""
    total = [0.0]
    run = TrustedTests.run

    def timed(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return run(self, *args, **kwargs)
        finally:
            total[0] += time.perf_counter() - start
    TrustedTests.run = timed
    return total


PHASES = ("kernel start/stop", "setup cell", "other cells in kernel", "test cells in grader",
          "nbgrader bookkeeping", "feedback: sanitiser", "feedback: other preprocessors",
          "feedback: template",
          "feedback: rest")
# What grading a notebook costs besides running its cells (the student's code, the course's) and its tests.
LEFT = "left besides cells and tests"


class PhaseClock:
    """Seconds spent in each phase of grading one notebook, from timers wrapped around the methods that
    do the work (in this process, so phases are measured with workers=1)."""

    def __init__(self):
        self.seconds = dict.fromkeys(PHASES, 0.0)
        # nbclient's sync methods wrap the async ones they captured at import: time the sync names.
        for name in ("start_new_kernel", "start_new_kernel_client", "_cleanup_kernel"):
            self._wrap(NotebookClient, name, "kernel start/stop")
        self._wrap(SandboxedExecute, "preprocess_cell", self._cell_phase)
        self._wrap(TemplateExporter, "from_notebook_node", "feedback: template")
        # Autograde's own exporter runs its preprocessors (the execution) through _preprocess too.
        self._wrap(Exporter, "_preprocess", lambda exporter, *args: (
            "feedback: other preprocessors" if isinstance(exporter, HTMLExporter) else None))
        self._wrap(SanitiseFeedback, "preprocess", "feedback: sanitiser")

    @staticmethod
    def _cell_phase(executor, cell, *args, **kwargs) -> str:
        meta = nbgrader_meta(cell)
        if meta.get("grade") and not meta.get("solution") and cell.cell_type == "code":
            return "test cells in grader"
        return "setup cell" if meta.get("grade_id") == "setup" else "other cells in kernel"

    def _wrap(self, owner, name, phase):
        method = getattr(owner, name)
        seconds, depth = self.seconds, [0]  # a call nested in one of its own kind counts once

        @functools.wraps(method)
        def timed(*args, **kwargs):
            depth[0] += 1
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                depth[0] -= 1
                which = phase(*args, **kwargs) if callable(phase) else phase
                if depth[0] == 0 and which:
                    seconds[which] += time.perf_counter() - start
        setattr(owner, name, timed)

    def grade(self, grader: Grader, student: str, assignment: str) -> dict:
        """Autograde and write feedback for one submission; return its seconds by phase (and in all)."""
        before = dict(self.seconds)
        start = time.perf_counter()
        grader.autograde(student, assignment)
        autograde = time.perf_counter() - start
        grader.feedback(student, assignment)
        total = time.perf_counter() - start
        spent = {phase: self.seconds[phase] - before[phase] for phase in PHASES}
        # Nested: the sanitiser is one of the preprocessors, which run inside the template's export.
        spent["feedback: template"] -= spent["feedback: other preprocessors"]
        spent["feedback: other preprocessors"] -= spent["feedback: sanitiser"]
        spent["nbgrader bookkeeping"] = autograde - sum(spent[p] for p in PHASES[:4])
        spent["feedback: rest"] = total - autograde - sum(spent[p] for p in PHASES[5:8])
        spent["total"] = total
        spent[LEFT] = total - spent["other cells in kernel"] - spent["test cells in grader"]
        return spent


def phases_benchmark(names, students: int):
    """Per assignment, `students` simulated students (solved, partial, blank in turn) graded one at a time:
    the mean seconds per notebook in each phase."""
    clock = PhaseClock()
    import keras  # noqa: F401 (a worker imports TensorFlow once, for its first notebook; not per row)
    columns = [*PHASES, "total", LEFT]
    print("seconds per notebook; columns: " + ", ".join(f"{i + 1} {c}" for i, c in enumerate(columns)))
    print(f"{'assignment':<26}" + "".join(f"{index + 1:>7}" for index in range(len(columns))))
    table = []
    for assignment in names:
        with tempfile.TemporaryDirectory() as tmp:
            grader = Grader(Path(tmp) / "grade", workers=1)
            grader.generate(assignment)
            grader.name_mistakes(assignment)  # once per assignment, before a class (grade does it first too)
            folder = write_class(Path(tmp), grader.workspace / "release", [assignment], students)
            pairs, _ = grader.take_tree(folder, [assignment])
            grader.register_students(student for student, _ in pairs)
            rows = [clock.grade(grader, student, assignment) for student, _ in pairs]
        mean = {c: sum(row[c] for row in rows) / len(rows) for c in columns}
        print(f"{assignment:<26}" + "".join(f"{mean[c]:>7.2f}" for c in columns), flush=True)
        table.append([f"`{assignment}`", *(round(mean[c], 2) for c in columns)])
    record_if_complete(names, "benchmark-phases", f"Seconds per notebook, by phase ({students} students a notebook: "
                       "solved, partial, blank in turn)", ["notebook", *columns], table,
                       setup_cell_share=round(sum(row[2] for row in table) / sum(row[-2] for row in table), 3),
                       left_share=round(sum(row[-1] for row in table) / sum(row[-2] for row in table), 3))


def record_if_complete(names, name: str, title: str, columns, rows, **facts):
    """Record a run of every assignment in results/ (the manual's figures); a subset only prints."""
    if sorted(names) != assignments():
        print(f"(not recorded in results/{name}.json: a subset of the assignments)")
        return
    print(f"recorded in {results.record(name, title, columns, rows, **facts).relative_to(results.REPO_ROOT)}")


def notebooks_benchmark(names):
    """Per assignment, one solved student: Run All, stock nbgrader, `grade` with and without the sandbox; then
    every time over the assignment's budget."""
    print(f"{'assignment':<26}{'Run All':>9}{'stock nbgrader':>16}{'grade':>8}{'no sandbox':>12}"
          f"{'sandbox cost':>14}{'test cells in grader':>22}   (seconds)")
    test_cells, over, table = timed_test_cells(), [], []
    import keras  # noqa: F401 (a grading process imports TensorFlow once, for its first notebook; not per row)
    for assignment in names:
        run_all = run_all_seconds(assignment)
        seconds = {}
        with tempfile.TemporaryDirectory() as tmp:
            for label, sandbox in (("stock", True), ("grade", True), ("unsafe", False)):
                grader = Grader(Path(tmp) / label, workers=1, sandbox=sandbox)
                grader.generate(assignment)
                grader.take_tree(write_class(Path(tmp) / label, grader.workspace / "release", [assignment], 1),
                                 [assignment])
                if label == "stock":
                    seconds[label] = stock_autograde_seconds(grader, [assignment])
                    continue
                before, start = test_cells[0], time.perf_counter()
                result = grader.autograde("student00", assignment)
                seconds[label] = time.perf_counter() - start
                if sandbox:
                    seconds["tests"] = test_cells[0] - before
                    score = f"{result.score:g}/{result.max_score:g}"
        print(f"{assignment:<26}{run_all:>9.1f}{seconds['stock']:>16.1f}{seconds['grade']:>8.1f}"
              f"{seconds['unsafe']:>12.1f}"
              f"{seconds['grade'] - seconds['unsafe']:>14.1f}{seconds['tests']:>22.1f}   score {score}", flush=True)
        over += over_budget(assignment, run_all, seconds["grade"])
        table.append([f"`{assignment}`", round(run_all, 1), round(seconds["stock"], 1), round(seconds["grade"], 1),
                      round(seconds["unsafe"], 1), round(seconds["grade"] - seconds["unsafe"], 1),
                      round(seconds["tests"], 1), score.replace("/", " / ")])
    for line in over:
        print(line)
    print(f"{len(over)} over budget (course/<assignment>/assignment.toml [budgets])")
    record_if_complete(names, "benchmark-notebooks", "One solved student per notebook",
                       ["notebook", "Run All, training included (s)", "stock nbgrader autograde (s)", "`grade` (s)",
                        "`grade`, no sandbox (s)", "sandbox cost (s)", "test cells in the grader (s)", "score"],
                       table, over_budget=len(over), slowest_run_all=max(row[1] for row in table),
                       slowest_grading=max(row[3] for row in table))


def over_budget(assignment: str, run_all: float, grading: float) -> list:
    """What exceeds the assignment's declared budgets, one line each."""
    settings = assignment_settings(assignment)
    if settings is None:
        return [f"{assignment}: no assignment.toml, so no budgets to check"]
    return [f"OVER BUDGET {assignment}: {what} {measured:.1f} s, budget {budget} s"
            for what, measured, budget in (("Run All", run_all, settings.run_all_seconds),
                                           ("grading one solved student", grading, settings.grading_seconds))
            if measured > budget]


class BusyCores:
    """How many of the machine's cores were busy, on average, while it ran (from /proc/stat: every process
    counts, so read it on an otherwise idle machine; the load average is printed beside it)."""

    def __enter__(self):
        self.start = self._jiffies()
        return self

    def __exit__(self, *exc):
        busy, total = (after - before for after, before in zip(self._jiffies(), self.start))
        self.cores = os.cpu_count() * busy / total if total else 0.0

    @staticmethod
    def _jiffies() -> tuple:
        fields = [int(value) for value in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
        idle = fields[3] + fields[4]  # idle and iowait
        return sum(fields) - idle, sum(fields)


def grading_benchmark(names, students: int, worker_counts: list, stock_seconds: float = None):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sequential = Grader(root / "sequential", workers=1)
        for assignment in names:
            sequential.generate(assignment)
        # The typical mistakes the feedback names are graded once per assignment version, not per class.
        start = time.perf_counter()
        Grader(sequential.workspace, workers=max(worker_counts)).name_all_mistakes(names)
        print(f"named mistakes graded (or found cached) in {time.perf_counter() - start:.1f} s", flush=True)
        folder = write_class(root, sequential.workspace / "release", names, students)
        sequential.take_tree(folder, names)
        if stock_seconds:  # measured before on this machine: only `grade` is measured now
            plain, busy = stock_seconds, None
        else:
            with BusyCores() as busy:
                plain = stock_autograde_seconds(sequential, names)
        rows = [("plain sequential nbgrader autograde (stock)", plain, busy.cores if busy else math.nan)]
        print(f"{rows[0][0]}: {plain:.1f} s", flush=True)
        for workers in worker_counts:
            timings = {}
            for feedback in (False, True):  # first the same work as the baseline, then the whole `grade`
                parallel = Grader(root / f"parallel-{workers}-feedback-{feedback}", workers=workers)
                start = time.perf_counter()
                with BusyCores() as busy:
                    parallel.run(folder, names, progress=False, feedback=feedback)
                timings[feedback] = time.perf_counter() - start
                label = f"grade (sandboxed), {workers} workers, " + ("+ HTML feedback" if feedback else
                                                                      "autograde only")
                rows.append((label, timings[feedback], busy.cores))
                same = scores(sequential.db_url) == scores(parallel.db_url) if not stock_seconds else "not measured"
                print(f"{label}: {timings[feedback]:.1f} s; identical scores to stock nbgrader: {same}", flush=True)
            print(f"{workers} workers: feedback costs {100 * (timings[True] / timings[False] - 1):.1f} % over "
                  "autograding alone", flush=True)
    notebooks = students * len(names)
    print(f"{students} students x {len(names)} assignments = {notebooks} notebooks, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    for label, seconds, busy in rows:
        print(f"{label:<52}{seconds:8.1f} s {students / (seconds / 60):7.2f} students/min"
              f"  {plain / seconds:5.2f}x  {busy:4.2f} cores busy")
    if stock_seconds:
        print("(not recorded in results/: stock nbgrader was not measured in this run)")
        return
    record_if_complete(names, "benchmark-grading", f"{students} students x {len(names)} assignments = {notebooks} "
                       "notebooks", ["pipeline", "wall time (s)", "students per minute", "vs. stock sequential",
                                     "cores busy"],
                       [[label, round(seconds, 1), round(students / (seconds / 60), 2), f"{plain / seconds:.2f}x",
                         round(busy, 2)] for label, seconds, busy in rows],
                       notebooks=notebooks, stock_seconds=round(plain, 1), grade_seconds=round(rows[-1][1], 1),
                       speedup=round(plain / rows[-1][1], 2),
                       feedback_cost_percent=round(100 * (rows[-1][1] / rows[-2][1] - 1), 1))
    per_student = rows[-1][1] / students
    record_if_complete(names, "benchmark-scale", f"1,000 students of {len(names)} notebooks each, from this run's "
                       f"{per_student:.1f} s a student on one {os.cpu_count()}-core machine, plus "
                       f"{SHARD_START_SECONDS} s a shard", ["machines", *map(str, SCALE_MACHINES)],
                       [["wall time", *(_duration(1000 * per_student / machines + SHARD_START_SECONDS)
                                        for machines in SCALE_MACHINES)]])


# A shard's own start (its class preparation and the cached named mistakes), measured on 2 cores (docs/scale.md).
SHARD_START_SECONDS = 20
SCALE_MACHINES = (1, 4, 8, 16, 32)


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 2 * 3600 else f"{seconds / 60:.0f} min"


class GraderCost:
    """The CPU time and peak memory of this process and its direct children (the grading workers), sampled
    from /proc while it runs; the kernels, the workers' children, are left out."""

    def __init__(self, interval: float = 0.2):
        self.interval, self.peaks, self.cpu = interval, {}, {}
        self._stop = None

    def __enter__(self):
        import threading
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def _sample(self):
        tick = os.sysconf("SC_CLK_TCK")
        while not self._stop.is_set():
            me = os.getpid()
            for pid in [me, *self._children(me)]:
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                rss = [int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")]
                if not rss:  # a process that has exited and not been waited for
                    continue
                self.peaks[pid] = max(self.peaks.get(pid, 0), rss[0])
                self.cpu[pid] = (int(fields[11]) + int(fields[12])) / tick  # utime + stime of the process alone
            self._stop.wait(self.interval)

    @staticmethod
    def _children(pid: int) -> list:
        try:
            return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except OSError:
            return []

    def summary(self) -> tuple:
        """(CPU seconds of the grader and its workers, the largest peak of one of them in MB)."""
        return sum(self.cpu.values()), max(self.peaks.values(), default=0) / 1024


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m course_build.benchmark", description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["notebooks", "grading", "phases"], nargs="?", default="notebooks")
    parser.add_argument("-a", "--assignment", action="append", default=[], help="only these assignments")
    parser.add_argument("-n", "--students", type=int, default=None, help="default: 20 (grading), 3 (phases)")
    parser.add_argument("--stock-seconds", type=float, default=None,
                        help="grading: stock nbgrader's time measured before on this machine (not run again)")
    parser.add_argument("-w", "--workers", type=int, action="append", default=[],
                        help="grading: workers of `grade` (repeatable: a pair of rows for each; default: one per core)")
    args = parser.parse_args(argv)
    prepare_environment()
    names = args.assignment or assignments()
    if args.what == "notebooks":
        notebooks_benchmark(names)
    elif args.what == "phases":
        phases_benchmark(names, args.students or len(MIX))
    else:
        grading_benchmark(names, args.students or 20, args.workers or [os.cpu_count()], args.stock_seconds)


if __name__ == "__main__":
    main()
