"""Grade submissions with nbgrader's own apps: generate -> (zip_collect) -> autograde -> feedback -> export."""
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
import warnings
import zipfile
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.apps import NbGraderAPI
from nbgrader.coursedir import CourseDirectory
from nbgrader.plugins import CsvExportPlugin
from tqdm import tqdm

from grader.course import (DEFAULT_CPU_SECONDS, DEFAULT_MEMORY_MB, SOLUTIONS, CourseError, check_assignments,
                           prepare_environment, workspace_config, write_workspace_config)
from grader.sandbox import sandbox_problem
from grader.samples import write_samples

# nbgrader 0.9 trips SQLAlchemy 2 autoflush warnings while autograding; they are harmless noise.
warnings.filterwarnings("ignore", module="nbgrader.api")

TREE_LAYOUT = "<folder>/<student>/<assignment>/<assignment>.ipynb"
ZIP_LAYOUT = "<folder>/*.zip holding <student>_<number>_<number>_<assignment>.ipynb files (LMS download)"


@dataclass
class Result:
    student: str
    assignment: str
    score: float = 0.0
    max_score: float = 0.0
    failed: list = field(default_factory=list)
    error: str = ""


class Grader:
    """One grading workspace: its own release copy, submitted/, autograded/, feedback/ and gradebook.

    Kernels run under a memory and a CPU-time limit (MB and seconds; 0 = none) and each cell under
    `cell_timeout` seconds; `workers` notebooks are graded at once (default: one per core), each kernel
    with `kernel_threads` threads for NumPy and TensorFlow (default: cores // workers).
    `db_url` puts the gradebook elsewhere, e.g. PostgreSQL for several graders (default: SQLite here).
    """

    def __init__(self, workspace: Path, source: Path = SOLUTIONS, *, memory_mb: int = DEFAULT_MEMORY_MB,
                 cpu_seconds: int = DEFAULT_CPU_SECONDS, cell_timeout: int = None, workers: int = None,
                 db_url: str = None, kernel_threads: int = None, sandbox: bool = True):
        prepare_environment()
        if sandbox:
            problem = sandbox_problem()
            if problem:
                raise CourseError(f"cannot grade safely: {problem}. To grade without a sandbox anyway "
                                  "(student code could then change grades), pass --unsafe-no-sandbox")
        self.workspace = Path(workspace).resolve()
        self.source = Path(source).resolve()
        self.workers = workers or os.cpu_count() or 1
        # Kernels graded side by side share the cores instead of each starting one thread per core.
        kernel_threads = kernel_threads or max(1, (os.cpu_count() or 1) // self.workers)
        self.limits = {"memory_mb": memory_mb, "cpu_seconds": cpu_seconds, "cell_timeout": cell_timeout,
                       "kernel_threads": kernel_threads, "sandbox": sandbox}
        self.workspace.mkdir(parents=True, exist_ok=True)
        write_workspace_config(self.workspace, self.source, db_url)
        self.config = workspace_config(self.workspace, self.source, db_url)
        execute = self.config.SandboxedExecute
        execute.memory_limit_mb, execute.cpu_limit_seconds = memory_mb, cpu_seconds
        execute.kernel_threads, execute.sandbox = kernel_threads, sandbox
        execute.kernel_log_dir = str(self.workspace / "logs")
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

    def take_tree(self, folder: Path, assignments: list) -> list:
        """Copy <folder>/<student>/<assignment>/ into the workspace; return the (student, assignment) pairs."""
        pairs, ignored = [], []
        for student_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
            for assignment_dir in sorted(p for p in student_dir.iterdir() if p.is_dir()):
                if assignment_dir.name not in assignments:
                    ignored.append(f"{student_dir.name}/{assignment_dir.name}")
                    continue
                target = self.submitted_dir(student_dir.name, assignment_dir.name)
                if target.exists():
                    shutil.rmtree(target)
                shutil.copytree(assignment_dir, target, ignore=self._oversized_files)
                self._rescue_renamed_notebook(target, assignment_dir.name)
                pairs.append((student_dir.name, assignment_dir.name))
        if not pairs:
            found = ", ".join(ignored[:5]) or "no <student>/<assignment> folders"
            raise CourseError(
                f"No submissions found in {folder}: expected {TREE_LAYOUT} or {ZIP_LAYOUT} "
                f"for one of {', '.join(assignments)}; found {found}"
            )
        if ignored:
            print(f"Skipped folders that are not assignments: {', '.join(ignored)}", file=sys.stderr)
        return pairs

    def _oversized_files(self, folder: str, names: list) -> list:
        """Files over CourseDirectory.max_file_size (KB) are left out of grading (nbgrader would copy them)."""
        limit = self.config.CourseDirectory.max_file_size * 1024
        skipped = [n for n in names if os.path.isfile(os.path.join(folder, n)) and os.path.getsize(os.path.join(folder, n)) > limit]
        for name in skipped:
            print(f"Skipped {os.path.join(folder, name)}: larger than {limit // 1024} KB", file=sys.stderr)
        return skipped

    @staticmethod
    def _rescue_renamed_notebook(folder: Path, assignment: str):
        """A lone notebook under another name ("01_topic (1).ipynb", "Copy1") is graded as the assignment."""
        expected = folder / f"{assignment}.ipynb"
        others = sorted(p for p in folder.glob("*.ipynb") if p != expected)
        if not expected.exists() and len(others) == 1:
            others[0].rename(expected)
            print(f"{folder.parent.name}/{assignment}: graded {others[0].name} as {expected.name}", file=sys.stderr)

    def take_zips(self, folder: Path, assignments: list) -> list:
        """Put LMS zip downloads through `nbgrader zip_collect`, once per assignment they contain."""
        zips = sorted(folder.glob("*.zip"))
        by_assignment = {}
        for archive in zips:
            try:
                names = zipfile.ZipFile(archive).namelist()
            except zipfile.BadZipFile:
                print(f"Skipped {archive.name}: not a readable zip file", file=sys.stderr)
                continue
            for assignment in assignments:
                if any(name.endswith(f"_{assignment}.ipynb") for name in names):
                    by_assignment.setdefault(assignment, []).append(archive)
        if not by_assignment:
            raise CourseError(
                f"None of the {len(zips)} zip files in {folder} holds a notebook named like {ZIP_LAYOUT} "
                f"for one of {', '.join(assignments)}"
            )
        pairs = []
        for assignment, archives in by_assignment.items():
            downloaded = self.workspace / "downloaded" / assignment
            if downloaded.exists():
                shutil.rmtree(downloaded)
            (downloaded / "archive").mkdir(parents=True)
            for archive in archives:
                shutil.copy(archive, downloaded / "archive" / archive.name)
            self.generate(assignment)  # zip_collect checks names against the released notebooks
            run = subprocess.run([sys.executable, "-m", "nbgrader", "zip_collect", assignment, "--force"],
                                 cwd=self.workspace, capture_output=True, text=True)
            if run.returncode != 0:
                raise CourseError(f"nbgrader zip_collect {assignment} failed:\n{run.stderr[-2000:]}")
            submitted = self.workspace / "submitted"
            students = sorted(p.parent.name for p in submitted.glob(f"*/{assignment}") if p.is_dir())
            pairs += [(student, assignment) for student in students]
        return pairs

    def autograde(self, student: str, assignment: str, attempts: int = 5) -> Result:
        """nbgrader autograde for one submission, sandboxed and limited; retried if the gradebook is locked."""
        for attempt in range(attempts):
            outcome = self.api.autograde(assignment, student, force=True, create=True)
            text = f"{outcome.get('error') or ''}{outcome.get('log') or ''}"
            if outcome["success"] or "database is locked" not in text:
                break
            time.sleep(1 + attempt)
        if not outcome["success"]:
            self._record_ungradable(student, assignment)
        result = self.read_result(student, assignment)
        if not outcome["success"]:
            result.error = _failure_reason(text)
        return result

    def register_students(self, students):
        """Add every student to the gradebook before the workers start: two workers grading one student's
        assignments would otherwise both insert the student row, and the second fails on its UNIQUE id."""
        with Gradebook(self.db_url) as gradebook:
            for student in sorted(set(students)):
                gradebook.update_or_create_student(student)

    def _record_ungradable(self, student: str, assignment: str):
        """A submission nbgrader could not run still gets a row (score 0) in the gradebook and grades.csv."""
        with Gradebook(self.db_url) as gradebook:
            gradebook.update_or_create_student(student)
            try:
                gradebook.find_submission(assignment, student)
            except MissingEntry:
                gradebook.add_submission(assignment, student)

    def feedback(self, student: str, assignment: str):
        self.api.generate_feedback(assignment, student, force=True)

    def read_result(self, student: str, assignment: str) -> Result:
        result = Result(student, assignment)
        with Gradebook(self.db_url) as gradebook:
            try:
                submission = gradebook.find_submission(assignment, student)
            except MissingEntry:
                result.max_score = gradebook.find_assignment(assignment).max_score
                return result
            result.score, result.max_score = submission.score, submission.max_score
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.auto_score is not None and grade.auto_score < grade.max_score:
                        result.failed.append(grade.name)
        return result

    def export(self, path: Path) -> Path:
        with Gradebook(self.db_url) as gradebook:
            CsvExportPlugin(to=str(path)).export(gradebook)
        return path

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
            pairs = self.take_tree(samples, chosen)
        else:
            folder = Path(submissions)
            if not folder.is_dir():
                raise CourseError(f"Submissions folder {folder} does not exist")
            if not any(folder.iterdir()):
                raise CourseError(f"Submissions folder {folder} is empty: expected {TREE_LAYOUT} or {ZIP_LAYOUT}")
            pairs = self.take_zips(folder, chosen) if any(folder.glob("*.zip")) else self.take_tree(folder, chosen)
        results = self.grade_pairs(pairs, progress, feedback)
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
            settings = (str(self.workspace), str(self.source), dict(self.limits, db_url=self.db_url))
            context = multiprocessing.get_context("spawn")  # no forked copies of zmq/SQLite handles
            with ProcessPoolExecutor(self.workers, mp_context=context, initializer=_start_worker,
                                     initargs=settings) as pool:
                futures = [pool.submit(_worker_grade, student, assignment, feedback) for student, assignment in pairs]
                for future in as_completed(futures):
                    results.append(future.result())
                    bar.update()
        bar.close()
        return results


def _grade_one(grader: "Grader", student: str, assignment: str, feedback: bool) -> Result:
    result = grader.autograde(student, assignment)
    if feedback and not result.error:
        grader.feedback(student, assignment)
    return result


_worker_grader = None


def _start_worker(workspace: str, source: str, limits: dict):
    global _worker_grader
    _worker_grader = Grader(Path(workspace), Path(source), workers=1, **limits)


def _worker_grade(student: str, assignment: str, feedback: bool) -> Result:
    return _grade_one(_worker_grader, student, assignment, feedback)


def _failure_reason(text: str) -> str:
    for markers, reason in ((("NotJSONError", "JSONDecodeError"), "not a valid notebook (unreadable JSON)"),
                            (("NotebookValidationError",), "not a valid notebook"),
                            (("No notebooks were matched",), "notebook missing")):
        if any(marker in text for marker in markers):
            return reason
    return _last_line(text)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def summary_table(results: list) -> str:
    rows = [("student", "assignment", "score", "failed tests")]
    for r in sorted(results, key=lambda r: (r.assignment, r.student)):
        failed = r.error or (", ".join(r.failed) if r.failed else "-")
        rows.append((r.student, r.assignment, f"{r.score:g} / {r.max_score:g}", failed))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = []
    for index, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[i]) if i < 3 else cell for i, cell in enumerate(row)))
        if index == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 12)
    return "\n".join(lines)
