"""Feedback on submit (grader/on_submit.py) through nbgrader's real exchange: students are Unix users who run
`nbgrader fetch_assignment`, `submit` and `fetch_feedback` themselves (runuser), the service grades with the
course's sandboxed pipeline, and the gradebook, the released pages and the refusals are read back."""
import datetime
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from classroom.layout import ensure_user, let_users_run_python
from grader.grading import Grader
from grader.ledger import now
from grader.on_submit import ATTEMPTS, OnSubmit, SubmitPolicy, arrival
from grader.samples import fill_answers
from tests.course_files import FIXTURE_SOURCE, nbgrader_meta

pytestmark = [pytest.mark.slow, pytest.mark.skipif(os.geteuid() != 0, reason="students are Unix users: run as root")]

A = "00_fixture"
NOTEBOOK = f"{A}.ipynb"
# Passes add's tests and mean_of's visible one ([1, 2, 3]); mean_of's hidden tests ([4, 8], [7]) fail.
MEAN_OF_THREE = "def mean_of(values):\n    return math.fsum(values) / 3\n"
HIDDEN_FAILURE = "mean_of"  # the hidden test cell's grade_id starts with it


class Course:
    """A course workspace, an exchange and the students' homes, in `root`."""

    def __init__(self, root, **policy):
        self.root = root
        self.exchange = root / "exchange"
        self.exchange.mkdir()
        self.exchange.chmod(0o1777)
        root.chmod(0o755)
        let_users_run_python()
        self.grader = Grader(root / "service", source=FIXTURE_SOURCE, workers=1, exchange=self.exchange)
        self.grader.generate(A)
        run = self.nbgrader(["release_assignment", A, "--force"], self.grader.workspace)
        assert run.returncode == 0, run.stderr[-2000:]
        self.policy = SubmitPolicy(config=self.grader.config, **policy)

    def service(self, **kwargs) -> OnSubmit:
        return OnSubmit(self.grader, self.exchange, self.policy, log=lambda message: None, **kwargs)

    def nbgrader(self, args, cwd, user=None):
        flags = [f"--Exchange.root={self.exchange}", "--CourseDirectory.course_id=attention"]
        command = [sys.executable, "-m", "nbgrader", *args, *flags]
        env = dict(os.environ)
        if user:
            command = ["runuser", "-u", user, "--", "env", f"HOME={cwd}", f"JUPYTER_CONFIG_PATH={cwd}", *command]
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env)

    def home(self, user: str):
        home = self.root / "homes" / user
        home.parent.mkdir(exist_ok=True)
        home.parent.chmod(0o755)
        ensure_user(user, home)
        return home

    def submit(self, user: str, answer) -> str:
        """`user` fetches the assignment (once), writes `answer(released, source)` and submits; returns the
        inbound folder's name."""
        home = self.home(user)
        if not (home / A).exists():
            run = self.nbgrader(["fetch_assignment", A], home, user)
            assert run.returncode == 0, run.stderr[-2000:]
        released = nbformat.read(home / A / NOTEBOOK, as_version=4)
        source = nbformat.read(FIXTURE_SOURCE / A / NOTEBOOK, as_version=4)
        path = home / A / NOTEBOOK
        nbformat.write(answer(released, source), path)
        shutil.chown(path, user, user)
        inbound = self.exchange / "attention" / "inbound"
        before = set(os.listdir(inbound))
        run = self.nbgrader(["submit", A], home, user)
        assert run.returncode == 0, run.stderr[-2000:]
        [folder] = set(os.listdir(inbound)) - before
        return folder

    def fetch_feedback(self, user: str) -> list:
        """The feedback pages `user`'s own `nbgrader fetch_feedback` brings, newest attempt last."""
        home = self.root / "homes" / user
        run = self.nbgrader(["fetch_feedback", A], home, user)
        assert run.returncode == 0, run.stderr[-2000:]
        return [path.read_text() for path in sorted((home / A / "feedback").glob(f"*/{A}.html"))]

    def gradebook_score(self, student: str) -> float:
        with Gradebook(self.grader.db_url) as gradebook:
            return gradebook.find_submission(A, student).score

    def set_deadline(self, when):
        with Gradebook(self.grader.db_url) as gradebook:
            gradebook.update_or_create_assignment(A, duedate=when)


@pytest.fixture
def room():
    """A folder the students' users may cross (pytest's own tmp_path is root's alone)."""
    root = Path(tempfile.mkdtemp(prefix="on-submit-", dir="/tmp"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


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
    course = Course(room, before_deadline="visible")
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
    course = Course(room, min_gap_minutes=10, before_deadline="full")
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


def test_attempts_per_hour_count_accepted_attempts_only(room):
    course = Course(room, min_gap_minutes=0, attempts_per_hour=2, before_deadline="none")
    folders = [course.submit("osub_cy", mean_of_three) for _ in range(3)]
    service = course.service()

    service.poll()  # records all three (the third refused), grades the first
    service.poll()  # grades the second

    states = [rows(service)[folder].state for folder in folders]
    assert states == ["graded", "graded", "refused"]
    assert "2 attempts per hour" in rows(service)[folders[2]].reason
    feedback = course.exchange / "attention" / "feedback"  # before_deadline="none": nothing released yet
    assert not feedback.exists() or not any(feedback.iterdir())
    assert [a["score"] for a in service.status("osub_cy")[0]["attempts"]] == [None, None, None]


def test_a_folder_named_for_another_student_is_refused_and_nothing_is_graded_twice(room):
    course = Course(room, before_deadline="full")
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
    course = Course(room, min_gap_minutes=0, counted="best", before_deadline="full")
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
    course = Course(room, min_gap_minutes=0, attempts_per_hour=1, before_deadline="full")
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
                os.lchown(item, *course_ids(user))
        if path.is_symlink() or path.is_file():
            os.lchown(path, *course_ids(user))
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


def course_ids(user: str) -> tuple:
    import pwd

    entry = pwd.getpwnam(user)
    return entry.pw_uid, entry.pw_gid
