"""Hostile LMS downloads through nbgrader's real zip_collect with the course's extractor and collector
(grader/intake/lms_archives.py): nothing nested is unpacked, no member's mode, path or name beyond the LMS's own
decides anything, sizes are bounded before reading, and one student's bad upload is that student's alone."""
import io
import json
import resource
import stat
import zipfile
from pathlib import Path

import nbformat
import pytest

from grader.running.grading import Grader, summary_table
from grader.intake.lms_archives import MAX_NOTEBOOK_BYTES, NOTES_FILE, parse
from grader.authoring.samples import fill_answers
from tests.course_files import FIXTURE_SOURCE

pytestmark = pytest.mark.slow

A = "00_fixture"
NOTEBOOK = f"{A}.ipynb"


def solved(grader: Grader) -> str:
    grader.generate(A)
    released = nbformat.read(grader.workspace / "release" / A / NOTEBOOK, as_version=4)
    source = nbformat.read(FIXTURE_SOURCE / A / NOTEBOOK, as_version=4)
    return nbformat.writes(fill_answers(released, source, 1.0))


def nested_zip(members: dict) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as inner:
        for name, text in members.items():
            inner.writestr(name, text)
    return buffer.getvalue()


def member(name: str, mode: int = 0o644) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFREG | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def hostile_download(folder: Path, notebook: str) -> Path:
    folder.mkdir()
    with zipfile.ZipFile(folder / "submissions.zip", "w") as download:
        download.writestr(member(f"alice_1001_2001_{NOTEBOOK}"), notebook)
        # mallory's upload is an archive holding "bob's" submission and one named to climb out of the folder
        download.writestr(member(f"mallory_1002_2002_{A}.zip"),
                          nested_zip({f"bob_1003_2003_{NOTEBOOK}": notebook, f"../../../{NOTEBOOK}": notebook}))
        # an archive named as a notebook
        download.writestr(member(f"oscar_1004_2004_{NOTEBOOK}"), nested_zip({f"bob_1003_2003_{NOTEBOOK}": notebook}))
        # a bomb: 30 MB of zeros in about 30 KB
        download.writestr(member(f"carol_1005_2005_{NOTEBOOK}"), b"\0" * 30_000_000)
        # setuid and world-writable
        download.writestr(member(f"dave_1006_2006_{NOTEBOOK}", 0o4777), notebook)
        # two uploads of one notebook: the later (larger file id) is graded, the class goes on
        download.writestr(member(f"erin_1007_2007_{NOTEBOOK}"), "not a notebook")
        download.writestr(member(f"erin_1007_2008_{NOTEBOOK}"), notebook)
        # one LMS name for two users: neither is taken as the other
        download.writestr(member(f"frank_1008_2009_{NOTEBOOK}"), notebook)
        download.writestr(member(f"frank_1009_2010_{NOTEBOOK}"), notebook)
        # ids that are markup, a glob or a path; a member in a folder; absolute paths
        for name in ("a,26,26_1010_2011_", "=HYPERLINK(1)_1011_2012_", "b?b_1012_2013_", ".._1013_2014_",
                     "x/grace_1014_2015_", "/tmp/heidi_1015_2016_"):
            download.writestr(member(name + NOTEBOOK), notebook)
    return folder


def test_a_hostile_download_grades_each_student_from_their_own_upload_only(tmp_path):
    grader = Grader(tmp_path / "workspace", source=FIXTURE_SOURCE, workers=1)
    notebook = solved(grader)
    downloads = hostile_download(tmp_path / "downloads", notebook)
    before = {who: resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)}

    pairs, notes = grader.take_zips(downloads, [A])

    students = sorted(student for student, _ in pairs)
    assert students == ["alice", "carol", "dave", "erin", "mallory", "oscar"], students
    submitted = grader.workspace / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == students  # no bob, frank, markup, "..", folders
    assert not (grader.workspace / NOTEBOOK).exists() and not (tmp_path / NOTEBOOK).exists()
    assert notes["alice", A] == []
    assert notes["mallory", A] == [f"{A}.zip: an archive is never unpacked: upload the notebook itself"]
    assert notes["oscar", A] == [f"{NOTEBOOK}: an archive is never unpacked: upload the notebook itself"]
    assert notes["carol", A] == [f"{NOTEBOOK}: left out: larger than {MAX_NOTEBOOK_BYTES // 1_000_000} MB"]
    assert notes["erin", A] == [f"{NOTEBOOK}: uploaded twice: graded file 2008, not file 2007"]
    assert (submitted / "erin" / A / NOTEBOOK).read_text() == notebook
    for student in ("mallory", "oscar", "carol"):
        assert list((submitted / student / A).iterdir()) == [], student
    # the bomb was never expanded in the grader's process or its children (peaks in KB, this process's since it
    # started: it may have run other tests before)
    for who, peak in before.items():
        assert resource.getrusage(who).ru_maxrss - peak < 200_000, who
    for path in grader.workspace.rglob("*"):
        mode = path.lstat().st_mode
        assert not path.is_symlink() and not mode & (stat.S_ISUID | stat.S_ISGID | stat.S_IWOTH), path
        if stat.S_ISREG(mode):
            assert path.stat().st_size <= MAX_NOTEBOOK_BYTES, path
    left_out = json.loads((grader.workspace / "downloaded" / A / NOTES_FILE).read_text())["unattributed"]
    for text in ("frank: one name for 2 LMS users (user ids 1008, 1009)", "'a,26,26' is not a valid student id",
                 "'=HYPERLINK(1)' is not a valid student id", "'b?b' is not a valid student id",
                 "'..' is not a valid student id", "x/grace_1014_2015_00_fixture.ipynb: left out: in a folder",
                 "/tmp/heidi_1015_2016_00_fixture.ipynb: left out: in a folder"):
        assert any(text in line for line in left_out), (text, left_out)


def test_a_hostile_download_does_not_stop_the_class_and_says_why_on_the_summary(tmp_path, capsys):
    grader = Grader(tmp_path / "workspace", source=FIXTURE_SOURCE, workers=1)
    downloads = hostile_download(tmp_path / "downloads", solved(grader))

    results = {r.student: r for r in grader.run(downloads, progress=False)}

    assert {s: r.score for s, r in results.items()} == {
        "alice": 5.0, "carol": 0.0, "dave": 5.0, "erin": 5.0, "mallory": 0.0, "oscar": 0.0}
    table = summary_table(results.values())
    assert f"mallory/{A}: {A}.zip: an archive is never unpacked" in table, table
    err = capsys.readouterr().err
    assert f"Not graded ({A}): frank: one name for 2 LMS users" in err
    assert "'=HYPERLINK(1)' is not a valid student id" in err
    grades = (grader.workspace / "grades.csv").read_text()
    assert "bob" not in grades and "frank" not in grades and "HYPERLINK" not in grades


@pytest.mark.parametrize("name, expected", [
    (f"ann-lee_1001_2001_{NOTEBOOK}", ("ann-lee", "1001", "2001", NOTEBOOK)),
    (f"bob_late_1002_2002_{NOTEBOOK}", ("bob", "1002", "2002", NOTEBOOK)),
    (f"bob_LATE_1002_2002_{NOTEBOOK}", ("bob", "1002", "2002", NOTEBOOK)),
    # the student chose the file name: a name inside it never becomes the student
    (f"eve_1003_2003_bob_1002_2002_{NOTEBOOK}", ("eve", "1003", "2003", f"bob_1002_2002_{NOTEBOOK}")),
    (NOTEBOOK, None), (f"dir/eve_1_2_{NOTEBOOK}", None), (f"eve_x_2_{NOTEBOOK}", None),
])
def test_the_student_is_the_name_the_lms_wrote(name, expected):
    found = parse(name)
    assert (found and (found["student"], found["user_id"], found["file_id"], found["file_name"])) == expected
