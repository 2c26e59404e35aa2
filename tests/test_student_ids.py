"""A student's name is only data: ids are checked where they enter (a submitted tree's folders, the exchange),
and every CSV the grader writes quotes its cells and makes formulas text (grades.csv, the LMS imports, the
class report). The LMS downloads' side is in tests/test_lms_archives.py."""
import csv
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader.outputs import lms_export
from grader.outputs.csv_cells import inert, write_rows
from grader.outputs.gradebook import export_csv
from grader.running.grading import Grader
from grader.authoring.samples import fill_answers
from grader.intake.student_ids import problem
from tests.course_files import FIXTURE_SOURCE

A = "00_fixture"
NOTEBOOK = f"{A}.ipynb"
HOSTILE_NAMES = ["a,26,26", "=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(1)", "b?b", "b*", "[ab]ob", "{x}",
                 "..", ".hidden", "_x", "a b", "tab\there", "line\nbreak", "quo\"te", "x" * 65, "rtl\u202eoverride",
                 "", "é\u0301"]


@pytest.mark.parametrize("student", ["alice", "ann-lee", "j.doe+attention@uni.example", "José", "学生42", "x" * 64])
def test_real_ids_are_valid(student):
    assert problem(student) == ""


@pytest.mark.parametrize("student", HOSTILE_NAMES)
def test_ids_that_are_markup_globs_or_paths_are_refused_by_name(student):
    message = problem(student)
    assert "is not a valid student id: a student id is 1 to 64 letters or digits" in message
    assert message.isprintable() and len(message) < 250


def test_every_csv_cell_reads_back_as_it_was_and_no_formula_survives(tmp_path):
    cells = ["a,26,26", "=1+1", "+1", "-2", "@SUM(A1)", "\tx", "\rx", "quo\"te", "line\nbreak", "plain", 26.0, 0]
    write_rows(tmp_path / "t.csv", [cells])
    [row] = list(csv.reader(open(tmp_path / "t.csv", newline="", encoding="utf-8")))
    assert row == ["a,26,26", "'=1+1", "'+1", "'-2", "'@SUM(A1)", "'\tx", "'\rx", "quo\"te", "line\nbreak", "plain",
                   "26.0", "0"]
    assert inert(-2.5) == -2.5, "numbers are written as they are"


@pytest.fixture
def gradebook_with_markup_names(db_url):
    """A gradebook whose students carry names (as an LMS or an instructor may set them) with commas and formulas;
    amy has 3 / 5, zed submitted nothing."""
    with Gradebook(db_url) as gradebook:
        gradebook.update_or_create_student("amy", first_name="Amy, 5, 5", last_name="=HYPERLINK(\"http://x\")",
                                           email="@amy")
        gradebook.update_or_create_student("zed", first_name="Zed\nZ", last_name="-Zee")
        submission = gradebook.add_submission("a", "amy")
        for grade in submission.notebooks[0].grades:
            grade.auto_score = grade.max_score if grade.name == "test_f" else 0
        gradebook.db.commit()
    return db_url


def test_grades_csv_keeps_every_name_in_its_column(gradebook_with_markup_names, tmp_path):
    rows = sorted(csv.DictReader(open(export_csv(gradebook_with_markup_names, tmp_path / "grades.csv"), newline="")),
                  key=lambda row: row["student_id"])
    assert [(r["student_id"], r["first_name"], r["last_name"], r["email"], r["score"], r["max_score"]) for r in rows] \
        == [("amy", "Amy, 5, 5", "'=HYPERLINK(\"http://x\")", "'@amy", "3.0", "5.0"),
            ("zed", "Zed\nZ", "'-Zee", "", "0.0", "5.0")]
    assert all(None not in row and len(row) == 11 for row in rows), "no row has more or fewer cells"


def test_nbgrader_export_uses_the_quoting_exporter(gradebook_with_markup_names, tmp_path):
    env = dict(os.environ, JUPYTER_CONFIG_PATH=str(Path(__file__).parents[1] / "grader"))
    run = subprocess.run([sys.executable, "-m", "nbgrader", "export", f"--db={gradebook_with_markup_names}",
                          f"--to={tmp_path / 'exported.csv'}"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Using exporter: QuotedCsvExportPlugin" in run.stderr
    amy = next(row for row in csv.DictReader(open(tmp_path / "exported.csv", newline="")) if row["student_id"] == "amy")
    assert amy["first_name"] == "Amy, 5, 5" and amy["score"] == "3.0"


@pytest.mark.parametrize("kind", ["canvas", "moodle"])
def test_lms_imports_keep_every_name_in_its_column(gradebook_with_markup_names, tmp_path, kind):
    path = lms_export.export(kind, gradebook_with_markup_names, tmp_path)
    rows = list(csv.reader(open(path, newline="", encoding="utf-8")))
    assert len({len(row) for row in rows}) == 1, rows
    text = [cell for row in rows for cell in row]
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in text), text
    if kind == "canvas":
        assert ["'=HYPERLINK(\"http://x\"), Amy, 5, 5", "", "", "amy", "", "3"] in rows


@pytest.mark.slow
def test_a_tree_with_markup_and_glob_folder_names_grades_only_the_valid_students(tmp_path, capsys):
    grader = Grader(tmp_path / "workspace", source=FIXTURE_SOURCE, workers=1)
    grader.generate(A)
    released = nbformat.read(grader.workspace / "release" / A / NOTEBOOK, as_version=4)
    solved = fill_answers(released, nbformat.read(FIXTURE_SOURCE / A / NOTEBOOK, as_version=4), 1.0)
    folder = tmp_path / "class"
    for student, notebook in (("bob", released), ("b?b", solved), ("a,26,26", solved), ("=1+1", solved),
                              ("[ab]ob", solved), ("alice", solved)):
        (folder / student / A).mkdir(parents=True)
        nbformat.write(notebook, folder / student / A / NOTEBOOK)

    results = {r.student: r.score for r in grader.run(folder, progress=False)}

    assert results == {"alice": 5.0, "bob": 0.0}, "the glob names graded nobody, bob only from his own notebook"
    err = capsys.readouterr().err
    for name in ("'b?b'", "'a,26,26'", "'=1+1'", "'[ab]ob'"):
        assert f"Not graded: the folder {name} is not a valid student id" in err, err[-2000:]
    rows = list(csv.DictReader(open(grader.workspace / "grades.csv", newline="")))
    assert sorted((r["student_id"], r["score"]) for r in rows) == [("alice", "5.0"), ("bob", "0.0")]
    assert sorted(p.name for p in (grader.workspace / "submitted").iterdir()) == ["alice", "bob"]
