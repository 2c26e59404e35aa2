"""The gradebook side of grading: results read from nbgrader's gradebook, grades.csv, the summary table."""
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from sqlalchemy import event
from sqlalchemy.engine import Engine

from grader.outputs.grades_export import QuotedCsvExportPlugin


@event.listens_for(Engine, "connect")
def _write_ahead(connection, _record):
    """An SQLite gradebook in write-ahead-log mode, synced at checkpoints rather than at each of the ~50
    commits nbgrader makes per notebook (a third of a second of fsync per notebook). A killed grader or a
    power cut loses at most the last commits, never the file's consistency, and the ledger
    (grader/running/ledger.py) grades again whatever was not recorded as done. Readers no longer block writers."""
    if isinstance(connection, sqlite3.Connection):
        cursor = connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()


@dataclass
class Result:
    student: str
    assignment: str
    score: float = 0.0
    max_score: float = 0.0
    failed: list = field(default_factory=list)
    error: str = ""
    notes: list = field(default_factory=list)  # what intake left out (grader.intake.submissions), a budget that was spent
    seconds: float = 0.0  # how long autograding took (the class report)
    graded_now: bool = False  # graded by this run (else read from the ledger: graded before)


def register_students(db_url: str, students):
    """Add every student to the gradebook before the workers start: two workers grading one student's
    assignments would otherwise both insert the student row, and the second fails on its UNIQUE id."""
    with Gradebook(db_url) as gradebook:
        for student in sorted(set(students)):
            gradebook.update_or_create_student(student)


def record_ungradable(db_url: str, student: str, assignment: str):
    """A submission nbgrader could not run still gets a row (score 0) in the gradebook and grades.csv."""
    with Gradebook(db_url) as gradebook:
        gradebook.update_or_create_student(student)
        try:
            gradebook.find_submission(assignment, student)
        except MissingEntry:
            gradebook.add_submission(assignment, student)


def read_result(db_url: str, student: str, assignment: str) -> Result:
    result = Result(student, assignment)
    with Gradebook(db_url) as gradebook:
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


def export_csv(db_url: str, path: Path) -> Path:
    with Gradebook(db_url) as gradebook:
        QuotedCsvExportPlugin(to=str(path)).export(gradebook)
    return path


def failure_reason(text: str) -> str:
    """One line for the summary from what nbgrader logged about a submission it could not grade."""
    for markers, reason in ((("NotJSONError", "JSONDecodeError"), "not a valid notebook (unreadable JSON)"),
                            (("NotebookValidationError",), "not a valid notebook"),
                            (("No notebooks were matched",), "notebook missing")):
        if any(marker in text for marker in markers):
            return reason
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def summary_table(results: list) -> str:
    rows = [("student", "assignment", "score", "failed tests")]
    results = sorted(results, key=lambda r: (r.assignment, r.student))
    for r in results:
        failed = r.error or (", ".join(r.failed) if r.failed else "-")
        rows.append((r.student, r.assignment, f"{r.score:g} / {r.max_score:g}", failed))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = []
    for index, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[i]) if i < 3 else cell for i, cell in enumerate(row)))
        if index == 0:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 12)
    notes = [f"  {r.student}/{r.assignment}: {note}" for r in results for note in r.notes]
    if notes:
        lines += ["", "Notes (what intake left out, grading stopped early):", *notes]
    return "\n".join(lines)
