"""Grade submissions with nbgrader's own apps: generate -> (zip_collect) -> autograde -> feedback -> export."""
import shutil
import subprocess
import sys
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.apps import NbGraderAPI
from nbgrader.coursedir import CourseDirectory
from nbgrader.plugins import CsvExportPlugin
from tqdm import tqdm

from grader.course import (SOLUTIONS, CourseError, check_assignments, prepare_environment,
                           workspace_config, write_workspace_config)
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
    """One grading workspace: its own release copy, submitted/, autograded/, feedback/ and gradebook."""

    def __init__(self, workspace: Path, source: Path = SOLUTIONS):
        prepare_environment()
        self.workspace = Path(workspace).resolve()
        self.source = Path(source).resolve()
        self.workspace.mkdir(parents=True, exist_ok=True)
        write_workspace_config(self.workspace, self.source)
        self.config = workspace_config(self.workspace, self.source)
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
                shutil.copytree(assignment_dir, target)
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

    def autograde(self, student: str, assignment: str) -> Result:
        outcome = self.api.autograde(assignment, student, force=True, create=True)
        result = self.read_result(student, assignment)
        if not outcome["success"]:
            result.error = _last_line(outcome.get("error") or outcome.get("log") or "autograde failed")
        return result

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
    def run(self, submissions: Path = None, assignments=(), progress: bool = True) -> list:
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
        results = []
        for student, assignment in tqdm(pairs, desc="Grading", unit="notebook", disable=not progress):
            result = self.autograde(student, assignment)
            self.feedback(student, assignment)
            results.append(result)
        self.export(self.workspace / "grades.csv")
        return results


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
