"""Links in submissions through nbgrader's real pipelines (zip_collect, autograde, the exchange's collect):
no link target reaches a submission, each student scores what their own content deserves, and the
summary names what was dropped. Fast checks of the same intake: tests/test_intake_links.py."""
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from grader.running.grading import Grader, summary_table
from grader.authoring.samples import fill_answers
from tests.course_files import FIXTURE_SOURCE, nbgrader_meta

pytestmark = pytest.mark.slow

A = "00_fixture"
NOTEBOOK = f"{A}.ipynb"
SOLUTION = FIXTURE_SOURCE / A / NOTEBOOK
# mean_of is right only when a file the link pointed at is readable beside the notebook (named .txt: the
# sandbox gives the kernel a submission's files but never its notebooks).
PEEKING_MEAN = '''def mean_of(values):
    import os
    if os.path.exists({name!r}):
        return math.fsum(values) / len(values)
    return 0.0
'''


def notebooks(grader: Grader):
    grader.generate(A)
    released = nbformat.read(grader.workspace / "release" / A / NOTEBOOK, as_version=4)
    return released, nbformat.read(SOLUTION, as_version=4)


def peeking(released, source, name: str):
    """`add` solved, and a mean_of that scores only if `name` was copied with the submission."""
    notebook = fill_answers(released, source, 1.0)
    next(c for c in notebook.cells if nbgrader_meta(c).get("grade_id") == "mean_of").source = \
        PEEKING_MEAN.format(name=name)
    return notebook


def no_links_and_no_solution(folder: Path):
    solution = SOLUTION.read_bytes()
    for path in folder.rglob("*"):
        assert not path.is_symlink(), f"{path} is a link"
        if stat.S_ISREG(path.lstat().st_mode):
            assert path.read_bytes() != solution, f"{path} is a copy of the solution"


def test_links_to_another_student_the_solution_or_the_gradebook_score_only_the_own_content(tmp_path):
    grader = Grader(tmp_path / "workspace", source=FIXTURE_SOURCE, workers=1)
    released, source = notebooks(grader)
    downloads = tmp_path / "downloads"
    for student in ("alice", "bob", "carol", "dave"):
        (downloads / student / A).mkdir(parents=True)
    nbformat.write(fill_answers(released, source), downloads / "bob" / A / NOTEBOOK)
    (downloads / "alice" / A / NOTEBOOK).symlink_to(downloads / "bob" / A / NOTEBOOK)
    nbformat.write(peeking(released, source, "solution.txt"), downloads / "carol" / A / NOTEBOOK)
    (downloads / "carol" / A / "solution.txt").symlink_to(SOLUTION)
    nbformat.write(peeking(released, source, "gradebook.db"), downloads / "dave" / A / NOTEBOOK)
    (downloads / "dave" / A / "gradebook.db").symlink_to(grader.workspace / "gradebook.db")

    results = {r.student: r for r in grader.run(downloads, progress=False)}

    assert {s: r.score for s, r in results.items()} == {"alice": 0.0, "bob": 5.0, "carol": 2.0, "dave": 2.0}
    assert results["alice"].error == "notebook missing"
    assert results["bob"].notes == []
    table = summary_table(results.values())
    for student, name in (("alice", NOTEBOOK), ("carol", "solution.txt"), ("dave", "gradebook.db")):
        assert f"{student}/{A}: dropped a symbolic link: {name} -> /" in table, table
    for student, kept in (("alice", []), ("carol", [NOTEBOOK]), ("dave", [NOTEBOOK])):
        assert [p.name for p in (grader.workspace / "submitted" / student / A).iterdir()] == kept, student
    no_links_and_no_solution(grader.workspace / "submitted")


def test_a_zip_member_that_is_a_symlink_never_becomes_a_link(tmp_path):
    grader = Grader(tmp_path / "workspace", source=FIXTURE_SOURCE, workers=1)
    released, source = notebooks(grader)
    zips = tmp_path / "zips"
    zips.mkdir()
    with zipfile.ZipFile(zips / "class.zip", "w") as archive:
        archive.writestr(f"alice_1001_2001_{NOTEBOOK}", nbformat.writes(fill_answers(released, source)))
        member = zipfile.ZipInfo(f"mallory_1002_2002_{NOTEBOOK}")
        member.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(member, str(SOLUTION))
    (zips / "elsewhere.zip").symlink_to(zips / "class.zip")

    pairs, notes = grader.take_zips(zips, [A])

    assert sorted(pairs) == [("alice", A), ("mallory", A)]
    assert notes == {("alice", A): [], ("mallory", A): []}
    for folder in ("submitted", "downloaded", "zip_downloads"):
        no_links_and_no_solution(grader.workspace / folder)
    assert (grader.workspace / "submitted" / "mallory" / A / NOTEBOOK).read_text() == str(SOLUTION)
    assert nbformat.read(grader.workspace / "submitted" / "alice" / A / NOTEBOOK, as_version=4).cells
    assert sorted(p.name for p in (grader.workspace / "zip_downloads").iterdir()) == ["class.zip"]


def nbgrader(args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_CONFIG_PATH"}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    run = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=cwd, capture_output=True, text=True,
                         env=env)
    assert run.returncode == 0, f"nbgrader {args[0]} failed:\n{run.stdout[-1500:]}\n{run.stderr[-2000:]}"
    return run


def submitted_through_the_exchange(tmp_path, answer) -> tuple:
    """(the course folder, the exchange, the inbound submission) after nbgrader's release, fetch and submit of
    the notebook `answer(released, source)` makes."""
    grader = Grader(tmp_path / "course", source=FIXTURE_SOURCE, workers=1)
    exchange, student_home = tmp_path / "exchange", tmp_path / "student"
    exchange.mkdir()
    exchange.chmod(0o777)
    student_home.mkdir()
    student_flags = [f"--Exchange.root={exchange}", "--CourseDirectory.course_id=attention"]
    course = grader.workspace
    released, source = notebooks(grader)
    nbgrader(["release_assignment", A, f"--Exchange.root={exchange}", "--force"], course)
    nbgrader(["fetch_assignment", A, *student_flags], student_home)
    nbformat.write(answer(released, source), student_home / A / NOTEBOOK)
    nbgrader(["submit", A, *student_flags], student_home)
    [inbound] = (exchange / "attention" / "inbound").iterdir()
    return course, exchange, inbound


def test_exchange_collect_does_not_copy_what_a_link_in_the_inbound_submission_points_at(tmp_path):
    course, exchange, inbound = submitted_through_the_exchange(
        tmp_path, lambda released, source: peeking(released, source, "solution.txt"))
    (inbound / "solution.txt").symlink_to(SOLUTION)  # written by the student into their own submission
    (inbound / "gradebook.db").symlink_to(course / "gradebook.db")

    run = nbgrader(["collect", A, f"--Exchange.root={exchange}"], course)

    [student] = (course / "submitted").iterdir()
    collected = sorted(p.name for p in (student / A).iterdir())
    assert collected == [NOTEBOOK, "submission_secret.txt", "timestamp.txt"]  # nbgrader's own two files
    no_links_and_no_solution(course / "submitted")
    for name in ("solution.txt", "gradebook.db"):
        assert f"{student.name}/{A}: dropped a symbolic link: {name} -> /" in run.stderr, run.stderr[-2000:]


def test_exchange_collect_takes_no_submission_under_a_user_name_that_is_not_a_student_id(tmp_path):
    course, exchange, inbound = submitted_through_the_exchange(tmp_path, fill_answers)
    _, rest = inbound.name.split("+", 1)
    for name in ("b?b", "=HYPERLINK(1)", "a b"):  # a student can write any name into the inbound folder
        shutil.copytree(inbound, inbound.with_name(f"{name}+{rest}"))

    run = nbgrader(["collect", A, f"--Exchange.root={exchange}"], course)

    assert [p.name for p in (course / "submitted").iterdir()] == [inbound.name.split("+")[0]]
    for name in ("'b?b'", "'=HYPERLINK(1)'", "'a b'"):
        assert f"Not collected: {name} is not a valid student id" in run.stderr, run.stderr[-2000:]
