"""The classroom with feedback on submit (`python -m classroom --on-submit`): the hub starts the on-submit
service as the instructor; a student's submission is graded without the instructor, the student's own
`nbgrader fetch_feedback` brings its page, and the service's status page, signed in through the hub, tells
each person their own attempts and limits, and the instructor every attempt."""
import os
import subprocess
import sys
import time

import nbformat
import pytest

from grader.authoring.samples import fill_answers
from tests.classroom.hub import request

pytestmark = [pytest.mark.slow, pytest.mark.classroom]

ASSIGNMENT = "02_three_stage_attention"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"


def nbgrader_as(room, user: str, *args, config: str):
    """`nbgrader ARGS` run as `user` in their home, with the configuration their server reads."""
    home = room.home(user)
    paths = os.pathsep.join(str(room.state / "config" / part) for part in (config, "common"))
    run = subprocess.run(["runuser", "-u", user, "--", "env", f"HOME={home}", f"JUPYTER_CONFIG_PATH={paths}",
                          sys.executable, "-m", "nbgrader", *args], cwd=home, capture_output=True, text=True)
    assert run.returncode == 0, f"nbgrader {args[0]} as {user}:\n{run.stderr[-2000:]}"
    return run


def test_a_submission_is_graded_without_the_instructor_and_its_page_fetched(start_classroom):
    hub = start_classroom("cos-", students=2, options=["--on-submit"])
    room = hub.room
    instructor, (ada, bob) = room.instructor, room.students
    course = room.course_dir
    for step in (["generate_assignment", ASSIGNMENT, "--force"], ["release_assignment", ASSIGNMENT, "--force"]):
        run = subprocess.run(["runuser", "-u", instructor, "--", "env", f"HOME={room.home(instructor)}",
                              sys.executable, "-m", "nbgrader", *step], cwd=course, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-2000:]
    status_url = f"{hub.url}/services/on-submit/"
    before = request(status_url, hub.token(ada))
    assert "Your next attempt is accepted: <strong>now</strong>" in before and "0 of 4 in the last hour" in before

    nbgrader_as(room, ada, "fetch_assignment", ASSIGNMENT, config="students")
    path = room.home(ada) / ASSIGNMENT / NOTEBOOK
    source = nbformat.read(course / "source" / ASSIGNMENT / NOTEBOOK, as_version=4)
    nbformat.write(fill_answers(nbformat.read(path, as_version=4), source, 1.0), path)
    submitted = time.monotonic()
    nbgrader_as(room, ada, "submit", ASSIGNMENT, config="students")

    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        page = request(status_url, hub.token(ada))
        if "<td>graded</td>" in page or "<td>refused</td>" in page:
            break
        time.sleep(2)
    waited = time.monotonic() - submitted
    assert "<td>graded</td>" in page, f"not graded after {waited:.0f} s:\n{page[-2000:]}\n{hub.hub_log_tail()}"
    assert "1 of 4 in the last hour" in page and "counts" in page
    assert "Your next attempt is accepted: <strong>from " in page  # the 5-minute gap, before the student submits again
    print(f"graded and released {waited:.1f} s after `nbgrader submit`")

    nbgrader_as(room, ada, "fetch_feedback", ASSIGNMENT, config="students")
    [feedback] = (room.home(ada) / ASSIGNMENT / "feedback").glob(f"*/{ASSIGNMENT}.html")
    text = feedback.read_text()
    assert "hidden tests after the deadline" in text and "Every exercise passes its visible tests" in text

    theirs = request(status_url, hub.token(bob))  # bob sees his own (none), not ada's
    assert "<td>graded</td>" not in theirs and ada not in theirs
    teacher = request(status_url, hub.token(instructor))
    assert "Every attempt (instructor)" in teacher and f"<td>{ada}</td>" in teacher
    anonymous = request(status_url)  # no token: redirected to the hub's sign-in page, never the status page
    assert "Signed in as" not in anonymous and "Sign in" in anonymous
