"""Feedback that teaches, the class report and the LMS files, on a simulated class of notebook 02.

The class (tests/feedback_class.py) comes as Canvas zip downloads and is graded by `python -m grader grade
--export canvas --export moodle`: alice solved everything, bob's attention takes the softmax over the
queries, carol and dave divide the scores by d_k (the same code), erin's dot_score raises on 2-D inputs,
frank takes d_k from axis 1 (which behaves as another named mistake does on every test).
"""
import csv
import html
import re

import nbformat
import numpy as np
import pytest

from grader.outputs import class_report, lms_export
from grader.feedback import feedback_summary as summary
from grader.running.grading import Grader
from grader.feedback.mistakes import describe
from grader.feedback.sanitise_feedback import scan_page
from tests.course_files import FIXTURE_SOURCE, nbgrader_meta, source_notebook
from tests.feedback_class import ASSIGNMENT, CLASS, LOOKS_LIKE, grade_class
from tests.test_postgres_gradebook import postgres_url  # noqa: F401 (a fixture: a throwaway server)

HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS(.*?)### END HIDDEN TESTS", re.S)


def text_of(page: str) -> str:
    """What a reader sees of a page: tags removed, entities decoded, white space collapsed."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def squeeze(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return grade_class(tmp_path_factory.mktemp("feedback_class"))


def page(workspace, student) -> str:
    return (workspace / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()


def autograded(workspace, student):
    path = workspace / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    return nbformat.read(path, as_version=4)


def rows(path) -> list:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


@pytest.mark.slow
def test_the_report_counts_each_named_mistake_exactly(graded):
    workspace, printed = graded
    assert f"class report: {workspace / 'report.html'}" in printed
    made = {}
    for student, looks in LOOKS_LIKE.items():
        made.setdefault(looks, []).append(student)
    header, *found = rows(workspace / "report_mistakes.csv")
    assert header == ["assignment", "exercise", "named mistake", "students", "who"]
    counted = {}
    for assignment, title, mistake, count, who in found:
        exercise = re.search(r"(\w+) \(\d+ points?\)$", title).group(1)  # "Exercise 2 — Do x (2 points)"
        counted[(exercise, mistake)] = (int(count), sorted(who.split()))
    assert counted == {key: (len(students), sorted(students)) for key, students in made.items()}
    groups = rows(workspace / "report_groups.csv")[1:]
    assert any("scaled_dot_score" in title and who == "carol dave" and same == "yes"
               and describe("divide_by_d_k_not_its_root") in looks
               for _, title, _, who, same, looks in groups)
    page_text = (workspace / "report.html").read_text()
    assert scan_page(page_text).problems == [] and "<script" not in page_text
    assert page_text.count("data:image/png;base64,") >= 1  # the score histogram
    notebooks = {row[0]: row for row in rows(workspace / "report_notebooks.csv")[1:]}
    times = {row[0]: float(row[2]) for row in rows(workspace / "report_times.csv")[1:]}
    assert set(notebooks) == set(times) == set(CLASS) and all(seconds > 0 for seconds in times.values())
    assert "written" not in page_text and "grading seconds" not in page_text, "the page holds no clock reading"


@pytest.mark.slow
def test_every_page_starts_with_what_to_do_and_names_the_mistake(graded):
    workspace, _ = graded
    for student in CLASS:
        shown = page(workspace, student)
        assert "could not be shown safely" not in shown and scan_page(shown).problems == []
        assert shown.index("What to do next") < shown.index('class="input_area"')  # before the notebook
        start = shown.index("What to do next")
        top = text_of(shown[start:shown.index("<hr", start)])
        reports = summary.exercise_reports(autograded(workspace, student))
        failing = [r for r in reports if r.status != "passed"]
        if not failing:
            assert "Every exercise passed" in top
        for report in failing:
            assert f"{report.title}: " in top, f"{student}: {report.title} is not named"
            visible = [f for f in report.failures if not f.hidden]
            for failure in visible:  # the check's own message: what, expected, got, hint
                assert squeeze(failure.message) in top, f"{student}: {failure.message[:80]} missing"
        if student in LOOKS_LIKE:
            assert f"This looks like: {LOOKS_LIKE[student][1]}" in top
        else:
            assert "This looks like" not in top
    bob = page(workspace, "bob")
    top = bob[bob.index("What to do next"):bob.index("<hr", bob.index("What to do next"))]
    assert top.count("data:image/png;base64,") >= 1  # bob's weights beside the expected ones
    erin = text_of(page(workspace, "erin"))
    assert "Raised in your code" in erin and "scores = Q @ K.transpose(0, 2, 1)" in erin
    assert "kernel_agent" not in erin and "_attention_course_grading_agent" not in erin


@pytest.mark.slow
def test_a_page_before_the_deadline_shows_the_visible_tests_and_nothing_a_hidden_test_decides(graded):
    """The on-submit service's "visible" policy (FeedbackSummary.hidden_results = "withheld")."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    from grader.course import SOLUTIONS, workspace_config

    workspace, _ = graded
    config = workspace_config(workspace, SOLUTIONS)
    config.FeedbackSummary.hidden_results = "withheld"
    config.CourseDirectory.feedback_directory = "feedback_withheld"
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    hidden = [nbgrader_meta(c)["grade_id"] for c in source_notebook(ASSIGNMENT).cells if HIDDEN.search(c.source)]
    for student in CLASS:
        assert api.generate_feedback(ASSIGNMENT, student)["success"]
        shown = (workspace / "feedback_withheld" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
        assert scan_page(shown).problems == []
        text = text_of(shown)
        assert [grade_id for grade_id in hidden if grade_id in shown] == [], student
        assert f"{ASSIGNMENT} (Score:" not in text and "What to do next Score:" not in text
        assert f"{ASSIGNMENT} (visible tests: " in text and "hidden tests after the deadline" in text
        full = text_of(page(workspace, student))
        reports = summary.exercise_reports(autograded(workspace, student))
        for report in reports:
            visible = [f for f in report.failures if not f.hidden]
            for failure in visible:
                assert squeeze(failure.message) in text, f"{student}: {failure.message[:80]} missing"
            if not visible:  # what the student's own kernel says: passed, and no name
                assert f"{report.title}: " not in text.split("Fixture")[0]
        names = re.findall(r"This looks like: ([^(]*)\(", text)
        assert all(name in full for name in names), (student, names)
    carol = text_of((workspace / "feedback_withheld" / "carol" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text())
    assert "This looks like: divide by d_k not its root" in carol  # her visible test names it in her kernel too


@pytest.mark.slow
def test_no_page_shows_hidden_test_code_or_hidden_expected_values(graded):
    workspace, _ = graded
    cells = source_notebook(ASSIGNMENT).cells
    regions = [region for cell in cells for region in HIDDEN.findall(cell.source)]
    hidden_lines = {line.strip() for region in regions for line in region.splitlines()
                    if len(line.strip()) > 20 and not line.strip().startswith("#")}
    assert len(hidden_lines) > 50
    for student in CLASS:
        text = text_of(page(workspace, student))
        leaked = [line for line in hidden_lines if squeeze(line) in text]
        assert leaked == [], f"{student}'s page shows hidden test code: {leaked[:3]}"
        for cell in autograded(workspace, student).cells:
            if "### BEGIN HIDDEN TESTS" not in cell.source:
                continue
            for output in cell.get("outputs", []):
                check = summary.CHECK.match(str(output.get("evalue", "")))
                if output.get("output_type") == "error" and check and len(check["expected"].strip()) > 3:
                    assert squeeze(check["expected"]) not in text, (
                        f"{student}'s page shows the expected value of {nbgrader_meta(cell)['grade_id']}")


@pytest.mark.slow
def test_canvas_and_moodle_files_have_the_documented_columns(graded):
    workspace, _ = graded
    with open(workspace / "grades.csv") as handle:
        grades = {row["student_id"]: float(row["score"]) for row in csv.DictReader(handle)}
    header, points, *students = rows(workspace / "grades_canvas.csv")
    assert header == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", ASSIGNMENT]
    assert points[0].strip() == "Points Possible" and float(points[5]) == 26
    assert {row[0]: (row[1], float(row[5])) for row in students} == {
        student: (user_id, grades[student]) for student, (user_id, _) in CLASS.items()}
    header, *students = rows(workspace / "grades_moodle.csv")
    assert header == ["Username", "ID number", "Email address", ASSIGNMENT]
    assert {row[0]: float(row[3]) for row in students} == grades


# -- fast: the pieces, on messages as the checks write them ------------------------------------------
def test_a_hidden_check_message_keeps_what_got_and_hint_but_not_expected():
    message = "weights, no mask: expected [[0.1234 0.8766]], got [[0.5 0.5]]. Hint: softmax over the keys"
    shown, _ = summary.shown_message("AssertionError", message, hidden=True)
    assert "0.1234" not in shown and "[[0.5 0.5]]" in shown and "softmax over the keys" in shown
    assert summary.shown_message("AssertionError", message, hidden=False)[0] == message
    shown, _ = summary.shown_message("AssertionError", "x == 7 for the hidden list [3, 4]", hidden=True)
    assert "7" not in shown and "[3, 4]" not in shown
    shown, _ = summary.shown_message("AssertionError", "", hidden=True)
    assert "hidden check" in shown


def test_a_traceback_is_cut_to_the_students_own_lines():
    trace = ('Traceback (most recent call last):\n'
             '  File "_attention_course_grading_agent", line 120, in serve\n    value = function(*args)\n'
             '  File "/tmp/ipykernel_7/123.py", line 3, in softmax\n    return e / e.sum(axis=2)\n'
             '  File "/venv/lib/numpy/core/_methods.py", line 49, in _sum\n    return umr_sum(a, axis)\n'
             'numpy.exceptions.AxisError: axis 2 is out of bounds for array of dimension 2\n')
    kept = summary.student_lines(trace)
    assert "123.py" in kept and "e.sum(axis=2)" in kept and "AxisError: axis 2" in kept
    assert "grading_agent" not in kept and "_methods.py" not in kept


def test_failed_weights_become_a_picture_and_names_become_words():
    message = ("attention weights on the toy example: expected [[0.5  0.5 ]\n [0.75 0.25]], "
               "got [[0.25 0.5 ]\n [0.75 0.5 ]]. Hint: softmax over the keys")
    assert np.allclose(summary.parse_array("[[0.5  0.5 ]\n [0.75 0.25]]"), [[0.5, 0.5], [0.75, 0.25]])
    assert summary.weights_figure(message).startswith("iVBOR")  # a PNG
    assert summary.weights_figure(message.replace("weights", "context")) == ""
    # a message (perhaps the student's own) printing weights too wide to draw a tick per column gets no figure
    wide = "[" + " ".join(["0.1"] * (summary.MAX_FIGURE_SIDE + 1)) + "]"
    assert summary.weights_figure(f"attention weights: expected {wide}, got {wide}.") == ""
    small = "[" + " ".join(["0.1"] * summary.MAX_FIGURE_SIDE) + "]"
    assert summary.weights_figure(f"attention weights: expected {small}, got {small}.").startswith("iVBOR")
    assert describe("divide_by_d_k_not_its_root") == "divide by d_k not its root"
    assert describe("ReLU on the output too") == "ReLU on the output too"


@pytest.mark.slow
def test_a_class_graded_from_the_formgrader_gets_the_same_report(graded, tmp_path):
    """python -m grader.outputs.class_report reads the results from the gradebook (Formgrader, shards)."""
    workspace, _ = graded
    by_grade = {table: rows(workspace / f"report_{table}.csv") for table in ("mistakes", "groups", "tests")}
    assert class_report.main([str(workspace), "--db-url", f"sqlite:///{workspace / 'gradebook.db'}"]) == 0
    assert {table: rows(workspace / f"report_{table}.csv") for table in by_grade} == by_grade


@pytest.mark.slow
def test_a_class_graded_in_postgresql_gets_pages_a_report_and_lms_files(tmp_path, postgres_url):
    """The fixture assignment's simulated students, graded with the gradebook in PostgreSQL."""
    grader = Grader(tmp_path / "workspace", source=FIXTURE_SOURCE, workers=2, db_url=postgres_url)
    results = grader.run(progress=False)
    workspace = grader.workspace
    assert class_report.write_report(workspace, results, FIXTURE_SOURCE) == workspace / "report.html"
    scores = {"sample_solved": 5.0, "sample_partial": 2.0, "sample_blank": 0.0}
    for kind in ("canvas", "moodle"):
        lms_export.export(kind, postgres_url, workspace)
    assert {row[0]: float(row[3]) for row in rows(workspace / "grades_moodle.csv")[1:]} == scores
    assert {row[3]: float(row[5]) for row in rows(workspace / "grades_canvas.csv")[2:]} == scores
    partial = text_of((workspace / "feedback" / "sample_partial" / "00_fixture" / "00_fixture.html")
                      .read_text())
    assert "Exercise 2 — Average a list mean_of (3 points): – not run" in partial
    assert "not answered yet" in partial
    notebooks = {row[0]: row[2] for row in rows(workspace / "report_notebooks.csv")[1:]}
    assert notebooks == {"sample_solved": "5 / 5", "sample_partial": "2 / 5", "sample_blank": "0 / 5"}


def test_canvas_user_ids_come_from_the_zip_names(tmp_path):
    import zipfile
    with zipfile.ZipFile(tmp_path / "download.zip", "w") as archive:
        archive.writestr("bob_late_1002_2002_02_three_stage_attention.ipynb", "{}")
        archive.writestr("ann-lee_1001_2001_02_three_stage_attention.ipynb", "{}")
        archive.writestr("notes.txt", "")
    assert lms_export.record_zip_ids(tmp_path, tmp_path) == {"bob": "1002", "ann-lee": "1001"}
