"""grader.intake.submissions and the exchange's collect: links in a submission are never followed, limits hold, and
every dropped thing is reported (fast: no grading; tests/test_link_submissions.py grades)."""
import logging
import stat
import zipfile
from pathlib import Path

import pytest
from nbgrader.coursedir import CourseDirectory

from grader.intake import submissions as intake
from grader.intake.exchange_collect import SafeExchangeCollect
from grader.outputs.gradebook import Result, summary_table
from grader.intake.submissions import rescue_renamed_notebook, take_tree, zips_by_assignment
from grader.intake.safe_copy import LINK_TARGET_CHARS, printable

A = "00_fixture"
NOTEBOOK = f"{A}.ipynb"
SECRET = b"SECRET-5b21e0: the solution"


def link_note(relative: str, target) -> str:
    return f"dropped a symbolic link: {relative} -> {printable(str(target), LINK_TARGET_CHARS)}"


def files(folder: Path) -> dict:
    """relative path -> file type (lstat) of everything under `folder`."""
    return {str(p.relative_to(folder)): stat.S_IFMT(p.lstat().st_mode) for p in folder.rglob("*")}


@pytest.fixture
def solution(tmp_path) -> Path:
    path = tmp_path / "solutions" / A / NOTEBOOK
    path.parent.mkdir(parents=True)
    path.write_bytes(SECRET)
    return path


def submission(root: Path, student: str, notebook: bytes = b"{}") -> Path:
    folder = root / student / A
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).write_bytes(notebook)
    return folder


def test_a_link_as_notebook_or_folder_leaves_an_empty_submission_and_a_note(tmp_path, solution, capsys):
    downloads, submitted = tmp_path / "downloads", tmp_path / "submitted"
    bob = submission(downloads, "bob", b"bob's own")
    (downloads / "alice" / A).mkdir(parents=True)
    (downloads / "alice" / A / NOTEBOOK).symlink_to(bob / NOTEBOOK)
    (downloads / "carol" / A).mkdir(parents=True)
    (downloads / "carol" / A / "data").symlink_to(solution.parent)
    (downloads / "carol" / A / NOTEBOOK).write_text("carol's own")
    (downloads / "dave").mkdir()
    (downloads / "dave" / A).symlink_to(bob)
    (downloads / "erin").symlink_to(downloads / "bob")

    pairs, notes = take_tree(downloads, [A], submitted, 5_000)

    assert sorted(pairs) == [(s, A) for s in ("alice", "bob", "carol", "dave", "erin")]
    assert notes == {("alice", A): [link_note(NOTEBOOK, bob / NOTEBOOK)], ("bob", A): [],
                     ("carol", A): [link_note("data", solution.parent)],
                     ("dave", A): [link_note(A, bob)], ("erin", A): [link_note("erin", downloads / "bob")]}
    folders = {path: stat.S_IFDIR for student in ("alice", "bob", "carol", "dave", "erin")
               for path in (student, f"{student}/{A}")}
    assert files(submitted) == {**folders, f"bob/{A}/{NOTEBOOK}": stat.S_IFREG,
                                f"carol/{A}/{NOTEBOOK}": stat.S_IFREG}
    assert (submitted / "carol" / A / NOTEBOOK).read_text() == "carol's own"
    stderr = capsys.readouterr().err
    assert f"alice/{A}: dropped a symbolic link: {NOTEBOOK} -> " in stderr and f"erin/{A}: dropped" in stderr


def test_a_notebook_has_its_own_limit_and_the_submission_a_total(tmp_path, monkeypatch):
    monkeypatch.setattr(intake, "MAX_NOTEBOOK_BYTES", 3_000)
    monkeypatch.setattr(intake, "MAX_SUBMISSION_BYTES", 5_000)
    downloads, submitted = tmp_path / "downloads", tmp_path / "submitted"
    submission(downloads, "big", b"x" * 3_001)
    kept = submission(downloads, "kept", b"x" * 2_500)  # over the 2 KB per file, within the notebook limit
    (kept / "a.csv").write_bytes(b"y" * 1_500)
    (kept / "b.csv").write_bytes(b"y" * 1_500)  # 2,500 + 1,500 + 1,500 > 5,000 in all
    pairs, notes = take_tree(downloads, [A], submitted, 2)
    assert notes == {("big", A): [f"left out {NOTEBOOK}: larger than 3 KB"],
                     ("kept", A): ["left out b.csv and the rest: over 5 KB in all"]}
    assert sorted(files(submitted / "kept" / A)) == [NOTEBOOK, "a.csv"]
    assert not (submitted / "big" / A / NOTEBOOK).exists()


def test_empty_and_unrecognised_folders_keep_their_messages(tmp_path):
    (tmp_path / "downloads" / "alice" / "homework1").mkdir(parents=True)
    expected = "No submissions found .* for one of 00_fixture; found alice/homework1"
    with pytest.raises(intake.CourseError, match=expected):
        take_tree(tmp_path / "downloads", [A], tmp_path / "submitted", 5_000)


def test_a_renamed_notebook_is_rescued_but_never_a_link(tmp_path, solution):
    folder = tmp_path / "alice" / A
    folder.mkdir(parents=True)
    (folder / f"{A} (1).ipynb").symlink_to(solution)
    rescue_renamed_notebook(folder, A)
    assert not (folder / NOTEBOOK).exists() and (folder / f"{A} (1).ipynb").is_symlink()
    (folder / f"{A} (1).ipynb").unlink()
    (folder / "Copy1.ipynb").write_text("mine")
    rescue_renamed_notebook(folder, A)
    assert (folder / NOTEBOOK).read_text() == "mine"


def test_zip_downloads_are_read_from_copies_and_links_to_archives_are_not(tmp_path, capsys):
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    with zipfile.ZipFile(downloads / "class.zip", "w") as archive:
        archive.writestr(f"alice_1_2_{A}.ipynb", "{}")
    with zipfile.ZipFile(tmp_path / "elsewhere.zip", "w") as archive:
        archive.writestr(f"mallory_1_2_{A}.ipynb", "{}")
    (downloads / "linked.zip").symlink_to(tmp_path / "elsewhere.zip")
    copies = tmp_path / "workspace" / "zip_downloads"
    assert zips_by_assignment(downloads, [A], copies) == {A: [copies / "class.zip"]}
    assert files(copies) == {"class.zip": stat.S_IFREG}
    assert f"dropped a symbolic link: linked.zip -> {tmp_path}" in capsys.readouterr().err


def test_the_summary_lists_what_was_left_out_under_the_table():
    results = [Result("alice", A, 0.0, 5.0, error="notebook missing",
                      notes=["dropped a symbolic link: x -> y"]),
               Result("bob", A, 5.0, 5.0)]
    table = summary_table(results)
    assert "alice    00_fixture  0 / 5  notebook missing" in table
    assert table.endswith("Notes (what intake left out, grading stopped early):\n  alice/00_fixture: "
                          "dropped a symbolic link: x -> y")
    assert "Notes" not in summary_table(results[1:])


def collector(tmp_path, **course) -> SafeExchangeCollect:
    return SafeExchangeCollect(coursedir=CourseDirectory(root=str(tmp_path), **course), authenticator=None,
                               log=logging.getLogger("collect-test"))


def test_exchange_collect_copies_without_links_and_keeps_nbgrader_ignore_and_groupshared(tmp_path, solution,
                                                                                         caplog):
    inbound = tmp_path / "inbound" / f"alice+{A}+2026-01-01 00:00:00.000000 UTC+abc"
    (inbound / "__pycache__").mkdir(parents=True)
    (inbound / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (inbound / NOTEBOOK).symlink_to(solution)
    (inbound / "mine.py").write_text("mine")
    dest = tmp_path / "submitted" / "alice" / A
    with caplog.at_level(logging.WARNING, logger="collect-test"):
        collector(tmp_path, groupshared=True).do_copy(str(inbound), str(dest))
    assert files(dest) == {"mine.py": stat.S_IFREG}
    assert stat.S_IMODE(dest.stat().st_mode) == 0o2775
    assert stat.S_IMODE((dest / "mine.py").stat().st_mode) == 0o664
    assert [r.getMessage() for r in caplog.records] == [f"alice/{A}: {link_note(NOTEBOOK, solution)}"]


def test_exchange_collect_refuses_an_inbound_submission_that_is_a_link(tmp_path, solution):
    inbound = tmp_path / "inbound" / f"alice+{A}+2026-01-01 00:00:00.000000 UTC+abc"
    inbound.parent.mkdir()
    inbound.symlink_to(solution.parent)
    dest = tmp_path / "submitted" / "alice" / A
    collector(tmp_path).do_copy(str(inbound), str(dest))
    assert dest.is_dir() and files(dest) == {}
