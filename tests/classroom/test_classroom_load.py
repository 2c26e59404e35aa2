"""Thirty students fetch and submit at once through the hub, and every submission is collected and graded.

What it proves: the hub starts 31 real single-user servers (each its own Unix user), each person's token
opens their own server only and no student's server has the instructor's tools, and the exchange and
collection hold under concurrency. All students' requests go through the hub's proxy with the
student's own token, to their own server's nbgrader API (the same calls the Assignments list makes):
30 fetches at once, then 30 submissions at once. The instructor collects through the Formgrader's API and
grades the collected submissions with `python -m grader grade` run as the instructor (the same sandboxed
pipeline as the Formgrader's Autograde button, two workers). Each student's notebook carries a marker
with their name, and solved / half-solved / blank rotate by student, so a lost, doubled or swapped
submission shows up as a missing row, a wrong marker or a wrong score.

All traffic stays on 127.0.0.1; every loop is bounded (fixed student count, timeouts). The timings are
written to test-artifacts/classroom/load.json and printed.
"""
import csv
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest

from classroom.layout import STUDENT_HIDDEN_PLUGINS
from grader.course import REPO, SOLUTIONS, assignments
from grader.authoring.samples import fill_answers, nbgrader_meta
from tests.classroom.hub import COURSE_ID, HTTPError

pytestmark = [pytest.mark.slow, pytest.mark.classroom]

STUDENTS = int(os.environ.get("CLASSROOM_LOAD_STUDENTS", "30"))
ASSIGNMENT = "02_three_stage_attention"
NOTEBOOK = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
FRACTIONS = (1.0, 0.5, 0.0)  # student i solves FRACTIONS[i % 3] of the exercises
ARTIFACTS = REPO / "test-artifacts" / "classroom"


def marker(student: str) -> str:
    return f"# load-test marker: {student}"


def status_of(call) -> int:
    try:
        call()
        return 200
    except HTTPError as error:
        return error.code


def disabled_plugins(lab_page: str) -> set:
    """The plugins JupyterLab's page config (the jupyter-config-data script) switches off."""
    config = re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', lab_page, re.S)
    return set(json.loads(config.group(1)).get("disabledExtensions") or [])


def check_roles(hub, instructor, students):
    """Over the REST API with each person's own token: the instructor has the Formgrader and the course's
    assignments; no student's server has it (server extension off, JupyterLab plugins off); no student's
    token opens the instructor's server or the next student's."""
    listed = sorted(a["name"] for a in hub.as_user(instructor, "formgrader/api/assignments"))
    assert listed == assignments(SOLUTIONS)
    assert not set(STUDENT_HIDDEN_PLUGINS) & disabled_plugins(hub.as_user(instructor, "lab"))
    for i, student in enumerate(students):
        for path in ("formgrader", "formgrader/api/assignments", "formgraders"):
            assert status_of(lambda: hub.as_user(student, path)) == 404, f"{student}'s server answers /{path}"
        hidden = disabled_plugins(hub.as_user(student, "lab"))
        assert set(STUDENT_HIDDEN_PLUGINS) <= hidden, f"{student}'s JupyterLab loads {set(STUDENT_HIDDEN_PLUGINS) - hidden}"
        neighbour = students[(i + 1) % len(students)]
        for other, path in ((instructor, "api/contents"), (instructor, "formgrader/api/assignments"),
                            (neighbour, "api/contents")):
            code = status_of(lambda: hub.as_user(student, path, server=other))
            assert code == 403, f"{student} opening /user/{other}/{path}: HTTP {code}, expected 403"


def all_at_once(students, work):
    """Run work(student) for every student in its own thread, released together by a barrier."""
    barrier = threading.Barrier(len(students))

    def run(student):
        barrier.wait(timeout=120)
        started = time.monotonic()
        result = work(student)
        return result, time.monotonic() - started

    started = time.monotonic()
    with ThreadPoolExecutor(len(students)) as pool:
        outcomes = dict(zip(students, pool.map(run, students)))
    return outcomes, time.monotonic() - started


def test_thirty_students_fetch_and_submit_at_once_and_every_submission_is_graded(start_classroom):
    test_started = time.monotonic()
    timings = {"students": STUDENTS}
    hub = start_classroom("crl-", students=STUDENTS)
    room = hub.room
    instructor, students = room.instructor, room.students
    timings["classroom_start_s"] = round(hub.start_seconds, 1)
    source = nbformat.read(room.course_dir / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    total = sum(nbgrader_meta(c).get("points", 0) for c in source.cells if nbgrader_meta(c).get("grade"))
    fraction = {student: FRACTIONS[i % 3] for i, student in enumerate(students)}

    # 31 servers, asked for all at once.
    timings["servers_ready_s"] = round(hub.start_servers([instructor, *students]), 1)
    print("progress:", timings, flush=True)
    for student in students:
        hub.token(student)
    check_roles(hub, instructor, students)

    # The instructor generates and releases the assignment (Formgrader API).
    for step in ("assign", "release"):
        outcome = hub.as_user(instructor, f"formgrader/api/assignment/{ASSIGNMENT}/{step}", "POST", {})
        assert outcome["success"], outcome

    # 30 fetches at once, each through the student's own server.
    action = {"course_id": COURSE_ID, "assignment_id": ASSIGNMENT}
    fetched, fetch_seconds = all_at_once(
        students, lambda s: hub.as_user(s, "assignments/fetch", "POST", action))
    for student, (outcome, _) in fetched.items():
        assert outcome["success"], f"{student}: fetch failed: {outcome}"
    timings["fetch_all_s"] = round(fetch_seconds, 2)
    timings["fetch_slowest_s"] = round(max(t for _, t in fetched.values()), 2)

    # Each student's answers (solved, half or blank by turn) and a marker with their name.
    def answer(student):
        notebook = nbformat.from_dict(hub.as_user(student, f"api/contents/{NOTEBOOK}")["content"])
        notebook = fill_answers(notebook, source, fraction[student])
        first = next(c for c in notebook.cells if nbgrader_meta(c).get("solution"))
        first.source = f"{marker(student)}\n{first.source}"
        hub.as_user(student, f"api/contents/{NOTEBOOK}", "PUT", {"type": "notebook", "format": "json", "content": notebook})

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(answer, students))

    # 30 submissions at once.
    submitted, submit_seconds = all_at_once(
        students, lambda s: hub.as_user(s, "assignments/submit", "POST", action))
    for student, (outcome, _) in submitted.items():
        assert outcome["success"], f"{student}: submit failed: {outcome}"
        mine = [a for a in outcome["value"] if a["status"] == "submitted" and a["assignment_id"] == ASSIGNMENT]
        assert mine and len(mine[0]["submissions"]) == 1, f"{student}: the list after submitting shows {mine}"
    timings["submit_all_s"] = round(submit_seconds, 2)
    timings["submit_slowest_s"] = round(max(t for _, t in submitted.values()), 2)
    print("progress:", timings, flush=True)
    inbound = sorted(p.name.split("+")[0] for p in (room.exchange / COURSE_ID / "inbound").iterdir())
    assert inbound == sorted(students), "the exchange's inbound does not hold exactly one submission per student"

    # The instructor collects (Formgrader API): one submission per student, each with its own marker.
    started = time.monotonic()
    outcome = hub.as_user(instructor, f"formgrader/api/assignment/{ASSIGNMENT}/collect", "POST", {})
    timings["collect_s"] = round(time.monotonic() - started, 1)
    assert outcome["success"], outcome
    collected = room.course_dir / "submitted"
    assert sorted(p.name for p in collected.iterdir()) == sorted(students)
    for student in students:
        notebook = nbformat.read(collected / student / NOTEBOOK, as_version=4)
        markers = [line for cell in notebook.cells for line in cell.source.splitlines() if "load-test marker" in line]
        assert len(markers) == 1 and marker(student) in markers[0], f"{student}'s collected notebook has {markers}"

    # ... and grades them with the course's sandboxed grader, as the instructor's Unix user.
    workspace = room.course_dir / "graded-load"
    started = time.monotonic()
    entry = pwd.getpwnam(instructor)
    run = subprocess.run(
        [shutil.which("runuser") or "/usr/sbin/runuser", "-u", instructor, "--", sys.executable, "-m", "grader", "grade", str(collected),
         "--assignment", ASSIGNMENT, "--workspace", str(workspace), "--no-progress"],
        cwd=room.course_dir, capture_output=True, text=True, timeout=1200,
        env={"HOME": entry.pw_dir, "USER": instructor, "PATH": f"{os.path.dirname(sys.executable)}:/usr/bin:/bin",
             "LANG": "C.UTF-8"})
    timings["grade_s"] = round(time.monotonic() - started, 1)
    assert run.returncode == 0, f"grade failed:\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
    rows = list(csv.DictReader(open(workspace / "grades.csv")))
    graded = {r["student_id"]: float(r["score"]) for r in rows if r["assignment"] == ASSIGNMENT}
    assert sorted(graded) == sorted(students) and len(rows) == STUDENTS, f"grades.csv has {len(rows)} rows: {sorted(graded)}"
    by_fraction = {f: {graded[s] for s in students if fraction[s] == f} for f in FRACTIONS}
    assert by_fraction[1.0] == {total} and by_fraction[0.0] == {0.0}, by_fraction
    assert len(by_fraction[0.5]) == 1 and 0 < next(iter(by_fraction[0.5])) < total, by_fraction
    timings["scores"] = {str(f): sorted(v) for f, v in by_fraction.items()}
    timings["graded"] = len(graded)

    timings["total_s"] = round(time.monotonic() - test_started, 1)  # without the stop (Ctrl-C) afterwards
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "load.json").write_text(json.dumps(timings, indent=2))
    print("load test:", json.dumps(timings))
