"""Grade submissions with nbgrader's own apps: generate -> (zip_collect) -> autograde -> feedback -> export.

The roles live in their own modules: grader.intake (submissions in), grader.sandbox (the kernels),
grader.trusted_tests (test cells decided in the grader), grader.gradebook (results, grades.csv, summary).
"""
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat
from nbgrader.apps import NbGraderAPI
from nbgrader.coursedir import CourseDirectory
from tqdm import tqdm

from grader import cgroups
from grader.course import (SOLUTIONS, CourseError, check_assignments, prepare_environment, workspace_config,
                           write_workspace_config)
from grader.gradebook import (Result, export_csv, failure_reason, read_result, record_ungradable,
                              register_students, summary_table)
from grader.intake import TREE_LAYOUT, ZIP_LAYOUT, take_collected, take_tree, zips_by_assignment
from grader.limits import GradingLimits
from grader.preprocessors import BUDGET_ERROR
from grader.sandbox import THREAD_VARIABLES, sandbox_problem
from grader.samples import write_samples

# nbgrader 0.9 trips SQLAlchemy 2 autoflush warnings while autograding; they are harmless noise.
warnings.filterwarnings("ignore", module="nbgrader.api")

__all__ = ["Grader", "Result", "summary_table"]


class Grader:
    """One grading workspace: its own release copy, submitted/, autograded/, feedback/ and gradebook.

    `limits` override grader.limits.GradingLimits by name (memory_mb=4000, notebook_seconds=600, ...; the
    course config's values otherwise); each cell runs under `cell_timeout` seconds; `workers` notebooks
    are graded at once (default: one per core), each kernel with cores // workers threads for NumPy and
    TensorFlow unless `threads` says otherwise. `db_url` puts the gradebook elsewhere, e.g. PostgreSQL
    for several graders (default: SQLite here).
    """

    def __init__(self, workspace: Path, source: Path = SOLUTIONS, *, cell_timeout: int = None, workers: int = None,
                 db_url: str = None, **limits):
        prepare_environment()
        unknown = sorted(set(limits) - set(GradingLimits.class_trait_names(config=True)))
        if unknown:
            raise TypeError(f"unknown limits {', '.join(unknown)}; valid: "
                            f"{', '.join(GradingLimits.class_trait_names(config=True))}")
        self.workspace = Path(workspace).resolve()
        self.source = Path(source).resolve()
        self.workers = workers or os.cpu_count() or 1
        # Kernels graded side by side share the cores instead of each starting one thread per core.
        limits.setdefault("threads", max(1, (os.cpu_count() or 1) // self.workers))
        self.workspace.mkdir(parents=True, exist_ok=True)
        write_workspace_config(self.workspace, self.source, db_url)
        self.config = workspace_config(self.workspace, self.source, db_url)
        for name, value in limits.items():
            setattr(self.config.GradingLimits, name, value)
        self.limits = GradingLimits(config=self.config)
        if self.limits.sandbox:
            problem = sandbox_problem()
            if problem:
                raise CourseError(f"cannot grade safely: {problem}. To grade without a sandbox anyway "
                                  "(student code could then change grades), pass --unsafe-no-sandbox")
            if cgroups.problem():
                print(f"WARNING: {cgroups.problem()}", file=sys.stderr)
        self.settings = {"cell_timeout": cell_timeout, **limits}  # what each worker process is given
        self.config.SandboxedExecute.kernel_log_dir = str(self.workspace / "logs")
        if cell_timeout:
            self.config.Execute.timeout = cell_timeout
        self.api = NbGraderAPI(coursedir=CourseDirectory(config=self.config), config=self.config)
        self.db_url = self.config.CourseDirectory.db_url

    # -- steps -------------------------------------------------------------------------------
    def generate(self, assignment: str):
        outcome = self.api.generate_assignment(assignment, force=True, create=True)
        if not outcome["success"]:
            raise CourseError(f"nbgrader generate_assignment {assignment} failed:\n{outcome.get('error', outcome.get('log'))}")

    def submitted_dir(self, student: str, assignment: str) -> Path:
        return self.workspace / "submitted" / student / assignment

    def take_tree(self, folder: Path, assignments: list) -> tuple:
        """Copy <folder>/<student>/<assignment>/ into the workspace (grader.intake: no link followed);
        return the (student, assignment) pairs and, by pair, the notes on what was left out."""
        return take_tree(folder, assignments, self.workspace / "submitted", self.config.CourseDirectory.max_file_size)

    def take_zips(self, folder: Path, assignments: list) -> tuple:
        """Put LMS zip downloads through `nbgrader zip_collect`, once per assignment they contain; then copy
        what it put in submitted/ again with grader.intake. Returns the pairs and the notes, as take_tree."""
        pairs, notes = [], {}
        zips = zips_by_assignment(folder, assignments, self.workspace / "zip_downloads")
        for assignment, archives in zips.items():
            downloaded = self.workspace / "downloaded" / assignment
            if downloaded.exists():
                shutil.rmtree(downloaded)
            (downloaded / "archive").mkdir(parents=True)
            for archive in archives:  # the grader's own copies (zips_by_assignment)
                shutil.copy(archive, downloaded / "archive" / archive.name)
            self.generate(assignment)  # zip_collect checks names against the released notebooks
            run = subprocess.run([sys.executable, "-m", "nbgrader", "zip_collect", assignment, "--force"],
                                 cwd=self.workspace, capture_output=True, text=True)
            if run.returncode != 0:
                raise CourseError(f"nbgrader zip_collect {assignment} failed:\n{run.stderr[-2000:]}")
            submitted, max_kb = self.workspace / "submitted", self.config.CourseDirectory.max_file_size
            taken, taken_notes = take_collected(submitted, assignment, downloaded / "collected", max_kb)
            pairs += taken
            notes.update(taken_notes)
        return pairs, notes

    def autograde(self, student: str, assignment: str, attempts: int = 5) -> Result:
        """nbgrader autograde for one submission, sandboxed and limited; retried if the gradebook is locked."""
        started = time.monotonic()
        for attempt in range(attempts):
            outcome = self.api.autograde(assignment, student, force=True, create=True)
            text = f"{outcome.get('error') or ''}{outcome.get('log') or ''}"
            if outcome["success"] or "database is locked" not in text:
                break
            time.sleep(1 + attempt)
        if not outcome["success"]:
            record_ungradable(self.db_url, student, assignment)
        result = self.read_result(student, assignment)
        result.notes += grading_notes(self.workspace / "autograded" / student / assignment)
        if not outcome["success"]:
            result.error = failure_reason(text)
            logs = sorted(p.name for p in (self.workspace / "logs").glob(f"{student}-{assignment}.*log"))
            if logs:
                result.error += f" (see logs/{', logs/'.join(logs)})"
        result.seconds = time.monotonic() - started  # for the class report
        return result

    def register_students(self, students):
        register_students(self.db_url, students)

    def feedback(self, student: str, assignment: str):
        self.api.generate_feedback(assignment, student, force=True)

    def read_result(self, student: str, assignment: str) -> Result:
        return read_result(self.db_url, student, assignment)

    def export(self, path: Path) -> Path:
        return export_csv(self.db_url, path)

    def feedback_path(self, student: str, assignment: str) -> Path:
        return self.workspace / "feedback" / student / assignment / f"{assignment}.html"

    # -- the whole run -----------------------------------------------------------------------
    def run(self, submissions: Path = None, assignments=(), progress: bool = True, feedback: bool = True) -> list:
        chosen = check_assignments(assignments, self.source)
        for assignment in chosen:
            self.generate(assignment)
        if submissions is None:
            samples = self.workspace / "samples"
            if samples.exists():
                shutil.rmtree(samples)
            write_samples(self.workspace / "release", self.source, chosen, samples)
            pairs, notes = self.take_tree(samples, chosen)
        else:
            folder = Path(submissions)
            if not folder.is_dir():
                raise CourseError(f"Submissions folder {folder} does not exist")
            if not any(folder.iterdir()):
                raise CourseError(f"Submissions folder {folder} is empty: expected {TREE_LAYOUT} or {ZIP_LAYOUT}")
            take = self.take_zips if any(folder.glob("*.zip")) else self.take_tree
            pairs, notes = take(folder, chosen)
        results = self.grade_pairs(pairs, progress, feedback)
        for result in results:  # what intake left out (links, devices, files over the limits)
            result.notes = notes.get((result.student, result.assignment), []) + result.notes
        self.export(self.workspace / "grades.csv")
        return results

    def grade_pairs(self, pairs: list, progress: bool = True, feedback: bool = True) -> list:
        """Autograde (and write feedback for) each (student, assignment), `workers` at a time."""
        bar = tqdm(total=len(pairs), desc="Grading", unit="notebook", disable=not progress)
        results = []
        self.register_students(student for student, _ in pairs)
        if self.workers <= 1 or len(pairs) <= 1:
            for student, assignment in pairs:
                results.append(_grade_one(self, student, assignment, feedback))
                bar.update()
        else:
            settings = (str(self.workspace), str(self.source), dict(self.settings, db_url=self.db_url))
            context = multiprocessing.get_context("spawn")  # no forked copies of zmq/SQLite handles
            with ProcessPoolExecutor(self.workers, mp_context=context, initializer=_start_worker,
                                     initargs=settings) as pool:
                futures = [pool.submit(_worker_grade, student, assignment, feedback) for student, assignment in pairs]
                for future in as_completed(futures):
                    results.append(future.result())
                    bar.update()
        bar.close()
        return results


def grading_notes(folder: Path) -> list:
    """What stopped the grading of a notebook early (its budget), from the autograded notebook."""
    notes = []
    for path in sorted(folder.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error" and output.get("ename") == BUDGET_ERROR:
                    notes.append(f"grading stopped early: {output.get('evalue', '')[len('not run: '):]}")
                    return notes
    return notes


def _grade_one(grader: "Grader", student: str, assignment: str, feedback: bool) -> Result:
    result = grader.autograde(student, assignment)
    if feedback and not result.error:
        grader.feedback(student, assignment)
    return result


_worker_grader = None


def _start_worker(workspace: str, source: str, settings: dict):
    """A worker process: its test cells (NumPy, TensorFlow) share the cores like its kernels do."""
    global _worker_grader
    os.environ.update(dict.fromkeys(THREAD_VARIABLES, str(settings["threads"])))
    _worker_grader = Grader(Path(workspace), Path(source), workers=1, **settings)


def _worker_grade(student: str, assignment: str, feedback: bool) -> Result:
    return _grade_one(_worker_grader, student, assignment, feedback)
