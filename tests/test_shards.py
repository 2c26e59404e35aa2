"""A class graded as concurrent shards into one PostgreSQL gradebook, and graders killed mid-notebook
(SIGKILL) then started again: every submission graded exactly once, no gradebook row duplicated or
half-written, and grades.csv and the feedback equal to those of one uninterrupted `grade`.

Each submission holds a cell that runs `sleep 1.5NN` (NN: the student's number) in its kernel, so the test
sees from the process table which notebook a grader is in the middle of, and kills it there.
"""
import csv
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from sqlalchemy import create_engine, text

from grader.running.grading import Grader
from grader.running.ledger import Ledger, parse_shard, shard_of
from grader.authoring.samples import fill_answers
from grader.course import CourseError
from tests.course_files import FIXTURE_SOURCE, REPO
from tests.test_postgres_gradebook import postgres_url  # noqa: F401 (the throwaway server, a fixture)

ASSIGNMENT = "00_fixture"
SHARDS = 3
# Three students in each share (the first names whose hash falls in it), so the shards take equal time.
STUDENTS = sorted(sum(([name for name in (f"s{index:02d}" for index in range(100))
                        if shard_of(name, ASSIGNMENT, SHARDS) == k][:3] for k in range(SHARDS)), []))
FRACTIONS = (1.0, 0.5, 0.0)


def sleep_arg(student: str) -> str:
    return f"1.5{student[1:]}"  # unique per student: the process table says whose notebook is running


def write_class(folder: Path, released: Path):
    student_nb = nbformat.read(released, as_version=4)
    source_nb = nbformat.read(FIXTURE_SOURCE / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    for index, student in enumerate(STUDENTS):
        notebook = fill_answers(student_nb, source_nb, FRACTIONS[index % len(FRACTIONS)])
        notebook.cells.insert(4, nbformat.v4.new_code_cell(
            f"import subprocess\nsubprocess.run(['sleep', '{sleep_arg(student)}'], check=True)"))
        (folder / student / ASSIGNMENT).mkdir(parents=True)
        nbformat.write(notebook, folder / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")


@pytest.fixture(scope="module")
def graded_once(tmp_path_factory):
    """The class, and one uninterrupted `grade` of it with the SQLite gradebook (the reference)."""
    root = tmp_path_factory.mktemp("shards")
    grader = Grader(root / "once", source=FIXTURE_SOURCE, workers=2)
    grader.generate(ASSIGNMENT)
    write_class(root / "class", grader.workspace / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    results = grader.run(root / "class", progress=False)
    assert sorted(r.student for r in results) == STUDENTS and not any(r.error for r in results)
    return root, grader


def env() -> dict:
    variables = {k: v for k, v in os.environ.items() if k not in ("JUPYTER_CONFIG_PATH", "GRADER_DB_URL")}
    variables["PATH"] = str(Path(sys.executable).parent) + os.pathsep + variables.get("PATH", "")
    return variables


def grade(root: Path, workspace: str, *options, db_url: str = None) -> subprocess.Popen:
    command = [sys.executable, "-m", "grader", "grade", str(root / "class"),
               "--workspace", str(root / workspace), "--source", str(FIXTURE_SOURCE), "--no-progress",
               *options]
    if db_url:
        command += ["--db-url", db_url]
    return subprocess.Popen(command, cwd=REPO, env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def parent_of(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        pid = parent_of(pid)
    return False


def sleeping(grader: int = None) -> set:
    """The students whose notebook is in its sleeping cell right now: on this machine, or under the process
    `grader` (another test running beside this one may grade a class of its own)."""
    found = set()
    for status in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = status.read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[0] == b"sleep" and len(argv) > 1 and (grader is None
                                                         or descends_from(int(status.parent.name), grader)):
            found |= {s for s in STUDENTS if argv[1] == sleep_arg(s).encode()}
    return found


def kill_when_sleeping(process: subprocess.Popen, students: set, not_in=frozenset(), timeout=240) -> str:
    """SIGKILL `process` once one of `students` (not in `not_in`) is in its sleeping cell; return who."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        caught = (sleeping(process.pid) & students) - set(not_in)
        if caught:
            process.send_signal(signal.SIGKILL)
            process.wait()
            return caught.pop()
        assert process.poll() is None, f"the grader ended unkilled:\n{process.stdout.read()[-3000:]}"
        time.sleep(0.05)
    process.kill()
    raise AssertionError("no notebook of the grader reached its sleeping cell")


def finished(process: subprocess.Popen, timeout=300) -> str:
    output, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, output[-3000:]
    return output


def assert_nothing_left(students: set):
    deadline = time.monotonic() + 15
    while sleeping() & students and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not sleeping() & students, "a killed grader's kernel is still running"


def reference(grader: Grader) -> tuple:
    scores = {(r.student, r.assignment): r.score for r in grader.class_results()}
    pages = {s: grader.feedback_path(s, ASSIGNMENT).read_bytes() for s in STUDENTS}
    return scores, (grader.workspace / "grades.csv").read_bytes(), pages


def assert_graded_exactly_once(db_url: str, killed: list):
    """One done ledger row per submission, finished once; started again only where a grader was killed;
    one gradebook submission per student, each with all four test cells scored."""
    rows = Ledger(db_url).rows()
    assert sorted(rows) == [(s, ASSIGNMENT) for s in STUDENTS]
    for (student, _), row in rows.items():
        assert (row.state, row.completions, row.attempts) == ("done", 1, 1 + killed.count(student)), student
    with create_engine(db_url).connect() as connection:
        submissions = connection.execute(text(
            "SELECT student.id, COUNT(*) FROM submitted_assignment JOIN student ON student.id = "
            "submitted_assignment.student_id GROUP BY student.id")).all()
        assert sorted(submissions) == [(s, 1) for s in STUDENTS]
        grades = connection.execute(text(
            "SELECT COUNT(*), COUNT(grade.auto_score) FROM grade")).one()
        assert tuple(grades) == (4 * len(STUDENTS), 4 * len(STUDENTS)), "a grade row is missing or unscored"


def test_a_share_is_stable_disjoint_and_covers_the_class():
    pairs = [(f"student{i}", f"{a:02d}_x") for i in range(300) for a in range(7)]
    shares = [[p for p in pairs if shard_of(*p, 4) == k] for k in range(4)]
    assert sorted(sum(shares, [])) == sorted(pairs) and all(len(share) > 300 for share in shares)
    assert shard_of("alice", "01_encoder_decoder", 4) == 3  # the same on every machine and Python
    assert parse_shard("2/4") == (2, 4)
    for wrong in ("4/4", "-1/3", "1", "a/b", "0/0"):
        with pytest.raises(CourseError):
            parse_shard(wrong)


@pytest.mark.slow
def test_three_concurrent_shards_one_killed_twice_equal_one_grade(graded_once, postgres_url):  # noqa: F811
    root, once = graded_once
    scores, grades_csv, pages = reference(once)
    share = {student for student in STUDENTS if shard_of(student, ASSIGNMENT, SHARDS) == 0}
    started = time.monotonic()
    others = [grade(root, f"machine{k}", "--shard", f"{k}/{SHARDS}", "--workers", "1", db_url=postgres_url)
              for k in range(1, SHARDS)]
    first = grade(root, "machine0", "--shard", f"0/{SHARDS}", "--workers", "1", db_url=postgres_url)
    killed = [kill_when_sleeping(first, share)]  # in the middle of its first notebook
    assert_nothing_left(share)
    missing = Grader(root / "early-finish", source=FIXTURE_SOURCE, db_url=postgres_url).finish(root / "class")
    assert (killed[0], ASSIGNMENT) in missing, "a half-graded submission counted as graded"
    second = grade(root, "machine0", "--shard", f"0/{SHARDS}", "--workers", "1", db_url=postgres_url)
    killed.append(kill_when_sleeping(second, share, not_in={killed[0]}))  # the first done, mid-second
    assert_nothing_left(share)
    finished(grade(root, "machine0", "--shard", f"0/{SHARDS}", "--workers", "1", db_url=postgres_url))
    for process in others:
        finished(process)
    print(f"\n3 shards of {len(STUDENTS)} notebooks, one killed twice: {time.monotonic() - started:.0f} s")

    assert_graded_exactly_once(postgres_url, killed)
    for (student, assignment), row in Ledger(postgres_url).rows().items():
        assert row.graded_by.endswith(f"shard {shard_of(student, assignment, SHARDS)}/{SHARDS}")
        assert row.score == scores[student, assignment], student
    finished(grade(root, "finisher", "--finish", db_url=postgres_url))
    assert (root / "finisher" / "grades.csv").read_bytes() == grades_csv
    for student in STUDENTS:
        page = root / "finisher" / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html"
        assert page.read_bytes() == pages[student], f"{student}: feedback differs from the uninterrupted run"


@pytest.mark.slow
def test_plain_grade_killed_and_rerun_equals_one_grade(graded_once):
    root, once = graded_once
    scores, grades_csv, pages = reference(once)
    killed = [kill_when_sleeping(grade(root, "plain", "--workers", "2"), set(STUDENTS))]
    assert_nothing_left(set(STUDENTS))
    db_url = f"sqlite:///{root / 'plain' / 'gradebook.db'}"
    done = {student for (student, _), row in Ledger(db_url).rows().items() if row.state == "done"}
    killed.append(kill_when_sleeping(grade(root, "plain", "--workers", "2"), set(STUDENTS),
                                     not_in=done | {killed[0]}))
    assert_nothing_left(set(STUDENTS))
    finished(grade(root, "plain", "--workers", "2"))
    rows = Ledger(db_url).rows()
    # Two workers: a notebook the other worker was in when the grader died was started again too.
    interrupted = [student for (student, _), row in rows.items() for _ in range(row.attempts - 1)]
    assert set(killed) <= set(interrupted)
    assert_graded_exactly_once(db_url, interrupted)
    assert {pair: row.score for pair, row in rows.items()} == scores
    assert (root / "plain" / "grades.csv").read_bytes() == grades_csv
    assert {s: (root / "plain" / "feedback" / s / ASSIGNMENT / f"{ASSIGNMENT}.html").read_bytes()
            for s in STUDENTS} == pages
    again = finished(grade(root, "plain", "--workers", "2"))  # nothing missing: nothing graded
    assert all(row.completions == 1 for row in Ledger(db_url).rows().values()), again[-2000:]
    rows = csv.DictReader(open(root / "plain" / "grades.csv"))
    assert sorted(row["student_id"] for row in rows) == STUDENTS

    # A student who submits again (here: the solved notebook replaced by the released one) is graded again.
    shutil.copytree(root / "class", root / "resubmitted")
    solved = next(s for s in STUDENTS if scores[s, ASSIGNMENT] == 5.0)
    released = once.workspace / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    shutil.copy(released, root / "resubmitted" / solved / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    regrader = Grader(root / "plain", source=FIXTURE_SOURCE, workers=1)
    results = regrader.run(root / "resubmitted", progress=False)
    expected = {**{s: scores[s, ASSIGNMENT] for s in STUDENTS}, solved: 0.0}
    assert {r.student: r.score for r in results} == expected
    assert {s: row.completions for (s, _), row in Ledger(db_url).rows().items()} == {
        s: 1 + (s == solved) for s in STUDENTS}


@pytest.mark.slow
def test_a_task_keeps_the_class_s_shard_count_finish_writes_nothing_half_done_and_counts_say_what_ran(
        graded_once):
    root, _ = graded_once
    db_url = f"sqlite:///{root / 'counted' / 'gradebook.db'}"
    first = Grader(root / "counted", source=FIXTURE_SOURCE, workers=2, db_url=db_url)
    share = first.run(root / "class", progress=False, shard=(0, SHARDS))
    assert len(share) == 3 and all(result.graded_now for result in share)
    # A task submitted alone with another count (Slurm's count of a one-task array) is refused by name.
    with pytest.raises(CourseError, match=rf"this class is being graded in {SHARDS} shards .* K/{SHARDS}"):
        Grader(root / "other", source=FIXTURE_SOURCE, db_url=db_url).run(root / "class", progress=False,
                                                                          shard=(0, 1))
    # Shards 1 and 2 have not run: finish writes nothing and names them.
    finisher = Grader(root / "counted_finisher", source=FIXTURE_SOURCE, db_url=db_url)
    missing = finisher.finish(root / "class")
    assert sorted({shard_of(*pair, SHARDS) for pair in missing}) == [1, 2]
    assert not (root / "counted_finisher" / "grades.csv").exists()
    assert not (root / "counted_finisher" / "feedback").exists()
    run = grade(root, "counted_finisher", "--finish", db_url=db_url)
    output, _ = run.communicate(timeout=300)
    assert run.returncode == 1 and f"nothing was written; rerun shards 1, 2 of {SHARDS}" in output, output[-2000:]
    # The same task again grades nothing and says so.
    again = finished(grade(root, "counted", "--shard", f"0/{SHARDS}", db_url=db_url))
    assert f"shard 0/{SHARDS}: 0 submissions graded by this run, 3 graded before" in again, again[-2000:]
    for k in (1, 2):
        Grader(root / f"counted{k}", source=FIXTURE_SOURCE, db_url=db_url).run(root / "class", progress=False,
                                                                                shard=(k, SHARDS))
    assert finisher.finish(root / "class") == [] and (root / "counted_finisher" / "grades.csv").exists()
    assert Ledger(db_url).recorded_shard_count() is None, "a finished class may be sharded anew"
