"""Feedback on submit (grader/running/on_submit.py) through nbgrader's real exchange: students are Unix users who run
`nbgrader fetch_assignment`, `submit` and `fetch_feedback` themselves (runuser), the service grades with the
course's sandboxed pipeline, and the gradebook, the released pages and the refusals are read back."""
import datetime
import os
import shutil
import time

import pytest

from grader.running.ledger import now
from grader.running.on_submit import ATTEMPTS, OnSubmit, SubmitPolicy, arrival
from grader.authoring.samples import fill_answers
from tests.course_files import FIXTURE_SOURCE, nbgrader_meta
from tests.exchange_class import ExchangeCourse, shared_folder, user_ids

pytestmark = [pytest.mark.slow, pytest.mark.skipif(os.geteuid() != 0, reason="students are Unix users: run as root")]

A = "00_fixture"
NOTEBOOK = f"{A}.ipynb"
# Passes add's tests and mean_of's visible one ([1, 2, 3]); mean_of's hidden tests ([4, 8], [7]) fail.
MEAN_OF_THREE = "def mean_of(values):\n    return math.fsum(values) / 3\n"
HIDDEN_FAILURE = "mean_of"  # the hidden test cell's grade_id starts with it


@pytest.fixture
def room():
    with shared_folder("on-submit-") as root:
        yield root


def solved(released, source):
    return fill_answers(released, source, 1.0)


def mean_of_three(released, source):
    notebook = fill_answers(released, source, 1.0)
    next(c for c in notebook.cells if nbgrader_meta(c).get("grade_id") == "mean_of").source = MEAN_OF_THREE
    return notebook


def rows(service: OnSubmit) -> dict:
    with service.engine.connect() as connection:
        return {row.folder: row for row in connection.execute(ATTEMPTS.select())}


def test_before_the_deadline_the_page_shows_the_visible_tests_after_it_the_whole_page(room):
    course = ExchangeCourse(room, FIXTURE_SOURCE, A, before_deadline="visible")
    course.set_deadline(now() + datetime.timedelta(days=1))
    folder = course.submit("osub_ada", mean_of_three)
    service = course.service()

    results = service.poll()

    assert [(r.student, r.score, r.max_score) for r in results] == [("osub_ada", 3.0, 5.0)]
    assert rows(service)[folder].state == "graded" and rows(service)[folder].released == "visible"
    [page] = course.fetch_feedback("osub_ada")
    assert "hidden tests after the deadline" in page and "Visible tests: 2 / 2 points" in page
    assert "(Score: 3" not in page and "hidden test <code>" not in page and "test_mean_of_hidden" not in page
    [shown] = service.status("osub_ada")
    assert [(a["state"], a["score"], a["counted"]) for a in shown["attempts"]] == [("graded", None, True)]
    assert course.gradebook_score("osub_ada") == 3.0

    course.set_deadline(now() - datetime.timedelta(minutes=1))
    assert service.release_after_deadlines() == 1
    [page] = course.fetch_feedback("osub_ada")
    assert "Score: 3 / 5" in page and "test_mean_of_hidden" in page
    assert service.status("osub_ada")[0]["attempts"][0]["score"] == 3.0
    assert rows(service)[folder].released == "full"


def test_limits_refuse_an_attempt_too_soon_and_the_next_time_is_told(room):
    course = ExchangeCourse(room, FIXTURE_SOURCE, A, min_gap_minutes=10, before_deadline="full")
    first = course.submit("osub_bea", mean_of_three)
    service = course.service()
    service.poll()
    second = course.submit("osub_bea", solved)

    assert service.poll() == []  # nothing graded: refused
    recorded = rows(service)
    assert recorded[second].state == "refused"
    assert "one attempt every 10 minutes" in recorded[second].reason
    allowed, used = service.next_allowed("osub_bea", A)
    assert used == 1 and allowed == recorded[first].arrived_at + datetime.timedelta(minutes=10)
    assert allowed.strftime("%H:%M:%S") in recorded[second].reason
    assert course.gradebook_score("osub_bea") == 3.0  # the accepted attempt's


def test_a_burst_of_submissions_gets_only_the_hours_attempts_graded(room):
    course = ExchangeCourse(room, FIXTURE_SOURCE, A, min_gap_minutes=0, attempts_per_hour=2, before_deadline="none")
    folders = [course.submit("osub_cy", mean_of_three) for _ in range(6)]  # `nbgrader submit` six times at once
    service = course.service()

    service.poll()  # records all six (four refused), grades the first
    service.poll()  # grades the second

    states = [rows(service)[folder].state for folder in folders]
    assert states == ["graded", "graded"] + ["refused"] * 4
    assert all("2 attempts per hour" in rows(service)[folder].reason for folder in folders[2:])
    feedback = course.exchange / "attention" / "feedback"  # before_deadline="none": nothing released yet
    assert not feedback.exists() or not any(feedback.iterdir())
    assert [a["score"] for a in service.status("osub_cy")[0]["attempts"]] == [None] * 6


def test_a_folder_named_for_another_student_is_refused_and_nothing_is_graded_twice(room):
    course = ExchangeCourse(room, FIXTURE_SOURCE, A, before_deadline="full")
    own = course.submit("osub_dan", solved)
    forged = course.submit("osub_eve", mean_of_three)
    _, rest = forged.split("+", 1)
    (course.exchange / "attention" / "inbound" / forged).rename(course.exchange / "attention" / "inbound" /
                                                                 f"osub_dan+{rest}")
    service = course.service()  # both arrived while no service ran

    graded = service.poll()

    assert [(r.student, r.score) for r in graded] == [("osub_dan", 5.0)]
    forged_row = rows(service)[f"osub_dan+{rest}"]
    assert forged_row.state == "refused" and forged_row.reason == "not submitted from this student's own account"
    assert course.gradebook_score("osub_dan") == 5.0
    assert course.service().poll() == []  # a restarted service grades nothing again
    assert rows(service)[own].state == "graded"


def test_the_best_attempt_counts_and_stays_in_the_gradebook(room):
    course = ExchangeCourse(room, FIXTURE_SOURCE, A, min_gap_minutes=0, counted="best", before_deadline="full")
    good = course.submit("osub_fay", solved)
    service = course.service()
    service.poll()
    course.submit("osub_fay", mean_of_three)
    service.poll()

    assert service.counted("osub_fay", A).folder == good
    assert course.gradebook_score("osub_fay") == 5.0
    assert [page.count("Score: ") > 0 for page in course.fetch_feedback("osub_fay")] == [True, True]


def test_arrival_is_the_newest_change_and_not_the_timestamp_a_student_writes(tmp_path):
    folder = tmp_path / "alice+00_fixture+2020-01-01 00:00:00.000000 UTC+abc"
    folder.mkdir()
    (folder / "timestamp.txt").write_text("2020-01-01 00:00:00.000000 UTC")
    os.utime(folder / "timestamp.txt", (0, 0))  # mtime set back; ctime cannot be
    assert arrival(folder) > now() - datetime.timedelta(minutes=5)


def test_a_per_assignment_override_is_checked_like_the_class_default(tmp_path):
    from grader.course import CourseError

    policy = SubmitPolicy(assignments={A: {"before_deadline": "all"}, "b": {"gap": 1}})
    with pytest.raises(CourseError, match="before_deadline"):
        policy.rules(A)
    with pytest.raises(CourseError, match="unknown gap; valid: attempts_per_hour, min_gap_minutes"):
        policy.rules("b")
    assert policy.rules("c").before_deadline == "visible"


def test_what_a_student_can_put_in_the_inbound_folder_is_refused_or_left_alone(room):
    """Everything in inbound is the students' own writing: names, links, files, counts and contents."""
    course = ExchangeCourse(room, FIXTURE_SOURCE, A, min_gap_minutes=0, attempts_per_hour=1, before_deadline="full")
    inbound = course.exchange / "attention" / "inbound"
    honest = course.submit("osub_gus", solved)
    copy = inbound / honest
    user = "osub_gus"
    stamp = "2026-01-01 00:00:00.000000 UTC"

    def entry(name, make):
        path = inbound / name
        make(path)
        for folder, dirs, files in os.walk(path) if path.is_dir() and not path.is_symlink() else ():
            for item in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
                os.lchown(item, *user_ids(user))
        if path.is_symlink() or path.is_file():
            os.lchown(path, *user_ids(user))
        return name

    def like_honest(path, secret=True, extra=None):
        shutil.copytree(copy, path, symlinks=True)
        if not secret:
            (path / "submission_secret.txt").unlink()
        if extra:
            extra(path)

    made = {
        "link": entry(f"{user}+{A}+{stamp}+link", lambda p: p.symlink_to(course.grader.workspace)),
        "file": entry(f"{user}+{A}+{stamp}+file", lambda p: p.write_text("not a folder")),
        "many": entry(f"{user}+{A}+{stamp}+many", lambda p: (p.mkdir(), [
            (p / f"f{i}").touch() for i in range(2_100)])),
        "no_secret": entry(f"{user}+{A}+{stamp}+nosecret", lambda p: like_honest(p, secret=False)),
        "other_assignment": entry(f"{user}+99_none+{stamp}+x", like_honest),
    }
    spam = [entry(f"{user}+{A}+{stamp}+s{i}", like_honest) for i in range(40)]
    course.home("osub_hal")
    user = "osub_hal"  # a first attempt not made by nbgrader submit, with a link to the solutions beside it
    unsigned = entry(f"{user}+{A}+{stamp}+nosecret", lambda p: like_honest(p, secret=False, extra=lambda q: (
        q / "solution.txt").symlink_to(FIXTURE_SOURCE / A / NOTEBOOK)))
    left_alone = [entry(name, like_honest) for name in (f"..+{A}+{stamp}+x", f"{user}+{A}+{stamp}", "a b+c+d+e",
                                                         f"{'x' * 70}+{A}+{stamp}+y")]
    service = course.service()

    graded = service.poll()
    recorded = rows(service)

    # the honest attempt arrived first: graded, and it uses up the hour's one attempt
    assert [(r.student, r.score) for r in graded] == [("osub_gus", 5.0)] and recorded[honest].state == "graded"
    # the policy's limit is checked only after the attempt is a real one: the first two below are refused as such
    assert recorded[made["link"]].reason == "not a folder (nbgrader submit makes a folder)"
    assert recorded[made["file"]].reason == "not a folder (nbgrader submit makes a folder)"
    assert "more than 2,000 files and folders" in recorded[made["many"]].reason
    assert recorded[made["other_assignment"]].reason == "this course has no assignment '99_none'"
    assert all(recorded[name].state == "refused" for name in [*made.values(), *spam] if name in recorded)
    assert recorded[unsigned].reason == ("not made by nbgrader submit (its submission_secret.txt is missing or "
                                         "malformed)")
    refused = [name for name, row in recorded.items() if row.state == "refused"]
    assert len([name for name in refused if name.startswith("osub_gus+")]) == 30, "capped per student and hour"
    assert not any(name in recorded for name in left_alone)
    # the grader's copy carries the arrival time, not the student's timestamp.txt
    taken = (service.copies / honest / A / "timestamp.txt").read_text()
    assert taken == recorded[honest].arrived_at.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    assert not any(path.is_symlink() for path in service.copies.rglob("*"))




def test_with_two_workers_attempts_are_graded_side_by_side_and_each_released(room):
    course = ExchangeCourse(room, FIXTURE_SOURCE, A, workers=2, before_deadline="full")
    users = ("osub_ivy", "osub_jon")
    folders = [course.submit(user, solved) for user in users]
    service = course.service()
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and {rows(service).get(f, None) and rows(service)[f].state
                                               for f in folders} != {"graded"}:
            service.poll(wait=False)  # as the hub's service polls: never blocked by a grading under way
            time.sleep(0.5)
    finally:
        service.close()
    assert [(rows(service)[f].state, rows(service)[f].released) for f in folders] == [("graded", "full")] * 2
    assert [len(course.fetch_feedback(user)) for user in users] == [1, 1]
    assert [course.gradebook_score(user) for user in users] == [5.0, 5.0]


# Tricks aimed at the verdicts and at what the page shows, sent through the on-submit door (the whole
# hostile class goes through `grade` in tests/test_hostile_submissions.py; the door is the same grade_pairs).
ON_SUBMIT_TRICKS = ["trick_forged_outcomes", "trick_alias_patch", "trick_always_equal_result",
                    "trick_display_fake_result", "trick_publish_execute_result", "trick_forged_agent_replies",
                    "trick_read_solutions", "trick_rewrite_gradebook", "trick_write_back_into_test",
                    "trick_named_like_the_grader"]


def test_hostile_attempts_through_the_door_score_the_all_wrong_baseline_and_see_no_hidden_test(room):
    import secrets

    import nbformat

    from tests.hostile_submissions import EXPECTED

    course = ExchangeCourse(room, FIXTURE_SOURCE, A, workers=2, before_deadline="visible")
    inbound = course.exchange / "attention" / "inbound"
    released = nbformat.read(course.grader.workspace / "release" / A / NOTEBOOK, as_version=4)
    source = nbformat.read(FIXTURE_SOURCE / A / NOTEBOOK, as_version=4)
    students = {}
    for number, case in enumerate(ON_SUBMIT_TRICKS):
        user = f"osub_h{number:02d}"
        course.home(user)
        folder = inbound / f"{user}+{A}+2026-01-01 00:00:00.000000 UTC+{secrets.token_urlsafe(6)}"
        EXPECTED[case][0](folder, released, source)
        (folder / "submission_secret.txt").write_text(secrets.token_hex(64))
        for path in [folder, *folder.rglob("*")]:
            os.lchown(path, *user_ids(user))
        students[user] = case
    service = course.service()
    deadline = time.monotonic() + 600
    try:
        while time.monotonic() < deadline and any(
                row.state not in ("graded", "refused", "failed") for row in rows(service).values()):
            service.poll(wait=False)
            time.sleep(0.5)
        service.poll(wait=True)
    finally:
        service.close()
    hidden_code = [line.strip() for c in source.cells if "### BEGIN HIDDEN TESTS" in c.source
                   for line in c.source.split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0].splitlines()
                   if line.strip()]
    found = {row.student: row for row in rows(service).values()}
    assert sorted(found) == sorted(students)
    for user, case in students.items():
        row = found[user]
        assert (row.state, row.score) == ("graded", 0.0), (case, row.state, row.score, row.reason)
        assert course.gradebook_score(user) == 0.0, case
        page = (course.exchange / "attention" / "feedback")
        shown = [p.read_text() for p in page.glob("*.html")]
        assert shown and not any("test_add_hidden" in text or "test_mean_of_hidden" in text for text in shown)
        assert not any(code in text for text in shown for code in hidden_code), case
