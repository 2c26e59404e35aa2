"""The gradebook side: results read from nbgrader's gradebook, rows for ungradable work, grades.csv, summary."""
import csv
import sqlite3

from nbgrader.api import Gradebook
from sqlalchemy import text

from grader.outputs.gradebook import (Result, export_csv, failure_reason, read_result, record_ungradable, register_students,
                              summary_table)


def test_registering_is_idempotent_and_an_ungradable_submission_gets_a_zero_row(db_url, tmp_path):
    register_students(db_url, ["bob", "amy", "bob"])
    register_students(db_url, ["amy", "cy"])
    record_ungradable(db_url, "bob", "a")
    record_ungradable(db_url, "bob", "a")
    with Gradebook(db_url) as gradebook:
        assert sorted(s.id for s in gradebook.students) == ["amy", "bob", "cy"]
        assert len(gradebook.find_assignment("a").submissions) == 1
    result = read_result(db_url, "bob", "a")
    assert (result.score, result.max_score) == (0.0, 5.0)
    assert read_result(db_url, "amy", "a").max_score == 5.0, "no submission: the assignment's maximum, score 0"
    rows = list(csv.DictReader(open(export_csv(db_url, tmp_path / "grades.csv"))))
    assert {row["student_id"]: float(row["score"]) for row in rows if row["student_id"] == "bob"} == {"bob": 0.0}


def test_failed_tests_are_the_grades_below_their_maximum(db_url):
    with Gradebook(db_url) as gradebook:
        gradebook.update_or_create_student("amy")
        submission = gradebook.add_submission("a", "amy")
        for grade in submission.notebooks[0].grades:
            grade.auto_score = grade.max_score if grade.name == "test_f" else 0
        gradebook.db.commit()
    result = read_result(db_url, "amy", "a")
    assert (result.score, result.failed) == (3.0, ["test_g"])


def test_failure_reasons_and_the_summary_table():
    assert failure_reason("... NotJSONError: bad") == "not a valid notebook (unreadable JSON)"
    assert failure_reason("[ERROR] No notebooks were matched by x") == "notebook missing"
    assert failure_reason("first\n\nlast line of the log\n") == "last line of the log"
    table = summary_table([Result("bo", "a", 2.0, 5.0, failed=["test_g"]), Result("al", "a", 5.0, 5.0)])
    lines = table.splitlines()
    assert lines[0].split() == ["student", "assignment", "score", "failed", "tests"]
    assert lines[2].split()[:1] == ["al"] and lines[3].endswith("test_g"), "sorted by assignment, then student"


def test_an_sqlite_gradebook_writes_ahead_and_syncs_at_checkpoints(db_url, tmp_path):
    """The grader's SQLite gradebooks skip the fsync of each of nbgrader's commits (grader.outputs.gradebook), and a
    second connection (another worker, the Formgrader) reads what the first committed while it is open."""
    with Gradebook(db_url) as gradebook:
        session = gradebook.db
        assert session.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert session.execute(text("PRAGMA synchronous")).scalar() == 1  # NORMAL
        gradebook.update_or_create_student("dee")
        other = sqlite3.connect(tmp_path / "gradebook.db")
        assert other.execute("SELECT id FROM student").fetchall() == [("dee",)]
        other.close()
