"""nbgrader's real pipeline, driven by the instructor command line, on the small fixture assignment."""
import csv
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from grader.course import CourseError
from grader.running import grading
from grader.running.grading import Grader, Result, summary_table
from grader.authoring.samples import fill_answers
from tests.course_files import ASSIGNMENTS, FIXTURE_SOURCE, REPO, nbgrader_meta, source_notebook

FIXTURE = "00_fixture"
FULL, ADD_ONLY = 5.0, 2.0


def clean_env() -> dict:
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_CONFIG_PATH"}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


@pytest.fixture
def grader(tmp_path):
    return Grader(tmp_path / "workspace", source=FIXTURE_SOURCE)


def scores(results) -> dict:
    return {(r.student, r.assignment): (r.score, r.max_score) for r in results}


def test_samples_score_full_partial_and_zero_and_write_grades_and_feedback(grader):
    results = grader.run(progress=False)
    assert scores(results) == {
        ("sample_solved", FIXTURE): (FULL, FULL),
        ("sample_partial", FIXTURE): (ADD_ONLY, FULL),
        ("sample_blank", FIXTURE): (0.0, FULL),
    }
    rows = list(csv.DictReader(open(grader.workspace / "grades.csv")))
    assert {(r["student_id"], float(r["score"])) for r in rows} == {
        ("sample_solved", FULL), ("sample_partial", ADD_ONLY), ("sample_blank", 0.0)}
    for result in results:
        assert grader.feedback_path(result.student, FIXTURE).is_file()
    blank = next(r for r in results if r.student == "sample_blank")
    assert blank.failed == ["test_add_visible", "test_add_hidden", "test_mean_of_visible", "test_mean_of_hidden"]
    table = summary_table(results)
    assert "sample_partial  00_fixture  2 / 5" in table and "test_mean_of_hidden" in table


def test_grading_without_feedback_gives_the_scores_and_no_html(grader):
    results = grader.run(progress=False, feedback=False)
    assert scores(results)[("sample_partial", FIXTURE)] == (ADD_ONLY, FULL)
    assert not any(grader.feedback_path(r.student, FIXTURE).exists() for r in results)


def test_grading_again_gives_the_same_result(grader):
    first = scores(grader.run(progress=False))
    assert scores(grader.run(progress=False)) == first


def test_every_student_is_in_the_gradebook_before_the_first_autograde(grader, monkeypatch):
    """Parallel workers grading one student's assignments must not both insert the student (UNIQUE id race)."""
    grader.generate(FIXTURE)
    seen = []

    def record(grader_, student, assignment, feedback, *ledger):
        with Gradebook(grader_.db_url) as gradebook:
            seen.append(sorted(s.id for s in gradebook.students))
        return Result(student, assignment)

    monkeypatch.setattr(grading, "_grade_one", record)
    grader.workers = 1  # the recorder cannot reach spawned workers; registration happens before either path
    grader.grade_pairs([("carol", FIXTURE), ("alice", FIXTURE), ("bob", FIXTURE)], progress=False)
    assert seen[0] == ["alice", "bob", "carol"]


def test_kernels_graded_side_by_side_share_the_cores(tmp_path):
    cores = os.cpu_count()
    alone = Grader(tmp_path / "alone", source=FIXTURE_SOURCE, workers=1).config.GradingLimits.threads
    side_by_side = Grader(tmp_path / "parallel", source=FIXTURE_SOURCE, workers=cores).config.GradingLimits.threads
    assert (alone, side_by_side) == (cores, 1)


def make_student_tree(tmp_path, grader) -> Path:
    grader.generate(FIXTURE)
    released = nbformat.read(grader.workspace / "release" / FIXTURE / f"{FIXTURE}.ipynb", as_version=4)
    source = nbformat.read(FIXTURE_SOURCE / FIXTURE / f"{FIXTURE}.ipynb", as_version=4)
    folder = tmp_path / "downloads"
    for student, fraction in (("alice", 1.0), ("bob", 0.5)):
        (folder / student / FIXTURE).mkdir(parents=True)
        nbformat.write(fill_answers(released, source, fraction), folder / student / FIXTURE / f"{FIXTURE}.ipynb")
    return folder


def test_a_submitted_tree_is_graded(tmp_path, grader):
    folder = make_student_tree(tmp_path, grader)
    assert scores(grader.run(folder, progress=False)) == {("alice", FIXTURE): (FULL, FULL), ("bob", FIXTURE): (ADD_ONLY, FULL)}


def test_lms_zip_downloads_go_through_zip_collect(tmp_path, grader):
    tree = make_student_tree(tmp_path, grader)
    zips = tmp_path / "zips"
    zips.mkdir()
    with zipfile.ZipFile(zips / "submissions.zip", "w") as archive:
        archive.write(tree / "alice" / FIXTURE / f"{FIXTURE}.ipynb", f"alice_1001_2001_{FIXTURE}.ipynb")
        archive.write(tree / "bob" / FIXTURE / f"{FIXTURE}.ipynb", f"bob_late_1002_2002_{FIXTURE}.ipynb")
    assert scores(grader.run(zips, progress=False)) == {("alice", FIXTURE): (FULL, FULL), ("bob", FIXTURE): (ADD_ONLY, FULL)}


def test_empty_and_malformed_submission_folders_get_clear_errors(tmp_path, grader):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CourseError, match="is empty: expected <folder>/<student>/<assignment>"):
        grader.run(empty, progress=False)
    malformed = tmp_path / "malformed"
    (malformed / "alice" / "homework1").mkdir(parents=True)
    with pytest.raises(CourseError, match=r"No submissions found .* for one of 00_fixture; found alice/homework1"):
        grader.run(malformed, progress=False)
    with pytest.raises(CourseError, match="does not exist"):
        grader.run(tmp_path / "missing", progress=False)
    with pytest.raises(CourseError, match="Unknown assignment 'ps9'; valid assignments: 00_fixture"):
        grader.run(assignments=["ps9"], progress=False)


@pytest.mark.skipif(not ASSIGNMENTS, reason="no assignments in solutions/")
def test_command_line_names_the_valid_assignments_on_a_typo():
    for command in (["release", "01_encoder_decodr"], ["grade", "--assignment", "01_encoder_decodr"],
                    ["mistakes", "01_encoder_decodr"]):
        run = subprocess.run([sys.executable, "-m", "grader", *command], cwd=REPO, capture_output=True,
                             text=True, env=clean_env())
        assert run.returncode == 2
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and "01_encoder_decodr" in lines[0], run.stderr
        assert all(name in lines[0] for name in ASSIGNMENTS), run.stderr


def nbgrader(args, cwd, **extra):
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, capture_output=True, text=True,
                         env=clean_env(), **extra)
    assert run.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{run.stdout[-1500:]}\n{run.stderr[-3000:]}"
    return run


def test_exchange_round_trip(tmp_path):
    grader = Grader(tmp_path / "course", source=FIXTURE_SOURCE)
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    student_home = tmp_path / "student"
    student_home.mkdir()
    student_flags = [f"--Exchange.root={exchange}", "--CourseDirectory.course_id=attention"]
    course = grader.workspace

    grader.generate(FIXTURE)
    nbgrader(["release_assignment", FIXTURE, f"--Exchange.root={exchange}", "--force"], course)
    nbgrader(["fetch_assignment", FIXTURE, *student_flags], student_home)
    fetched = student_home / FIXTURE / f"{FIXTURE}.ipynb"
    source = nbformat.read(FIXTURE_SOURCE / FIXTURE / f"{FIXTURE}.ipynb", as_version=4)
    nbformat.write(fill_answers(nbformat.read(fetched, as_version=4), source, 0.5), fetched)
    nbgrader(["submit", FIXTURE, *student_flags], student_home)
    nbgrader(["collect", FIXTURE, f"--Exchange.root={exchange}"], course)
    students = [p.name for p in (course / "submitted").iterdir()]
    assert len(students) == 1
    nbgrader(["autograde", FIXTURE], course)
    assert grader.read_result(students[0], FIXTURE).score == ADD_ONLY
    nbgrader(["generate_feedback", FIXTURE], course)
    nbgrader(["release_feedback", FIXTURE, f"--Exchange.root={exchange}"], course)
    nbgrader(["fetch_feedback", FIXTURE, *student_flags], student_home)
    feedback = list((student_home / FIXTURE / "feedback").glob(f"*/{FIXTURE}.html"))
    assert len(feedback) == 1, f"fetch_feedback brought {feedback}"
    assert f"{FIXTURE} (Score: 2.0 / 5.0)" in feedback[0].read_text()


@pytest.mark.slow
def test_grade_prints_the_progress_bar_and_the_table_and_nothing_of_tensorflow(tmp_path):
    run = subprocess.run([sys.executable, "-m", "grader", "grade", "--assignment", "01_encoder_decoder",
                          "--workspace", str(tmp_path / "workspace")], cwd=REPO, capture_output=True, text=True,
                         env=clean_env())
    assert run.returncode == 0, run.stderr[-2000:]
    noise = [line for line in run.stderr.replace("\r", "\n").splitlines()
             if line.strip() and not line.startswith("Grading")]
    assert noise == [], f"the console shows more than the progress bar: {noise[:5]}"
    points = sum(nbgrader_meta(cell).get("points", 0) for cell in source_notebook("01_encoder_decoder").cells)
    assert f"sample_solved   01_encoder_decoder  {points:g} / {points:g}" in run.stdout
    assert any((tmp_path / "workspace" / "logs").glob("sample_solved-01_encoder_decoder.*log"))
