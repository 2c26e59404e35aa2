"""grader.intake.safe_copy.copy_tree: a submission is copied without following a link, within its limits."""
import os
import socket
import stat
from pathlib import Path

import pytest

from grader.intake import safe_copy
from grader.intake.safe_copy import LINK_TARGET_CHARS, copy_tree, printable

SECRET = b"SECRET-7f3a9c: not the student's"
LIMITS = {"max_file_bytes": 5_000_000, "max_total_bytes": 50_000_000, "max_files": 1_000}


def copy(source: Path, target: Path, **limits) -> list:
    return copy_tree(source, target, **{**LIMITS, **limits})


def link_note(relative: str, target) -> str:
    """The note on a dropped link: its target, student text, is clipped (long temporary paths here)."""
    return f"dropped a symbolic link: {relative} -> {printable(str(target), LINK_TARGET_CHARS)}"


def everything(folder: Path) -> dict:
    """relative path -> file type of every entry under `folder`, from lstat."""
    return {str(p.relative_to(folder)): stat.S_IFMT(p.lstat().st_mode) for p in folder.rglob("*")}


def assert_only_own_content(target: Path):
    for path in target.rglob("*"):
        assert not path.is_symlink() and (path.is_dir() or stat.S_ISREG(path.lstat().st_mode)), path
        if path.is_file():
            assert SECRET not in path.read_bytes(), f"{path} holds a link target's bytes"


@pytest.fixture
def secrets(tmp_path) -> Path:
    """Files and a folder outside the submission: the solutions, another student's notebook."""
    outside = tmp_path / "outside"
    (outside / "solutions").mkdir(parents=True)
    (outside / "solutions" / "answer.ipynb").write_bytes(SECRET)
    (outside / "bob.ipynb").write_bytes(SECRET)
    return outside


def test_links_to_files_folders_nowhere_and_system_files_are_dropped_with_notes(tmp_path, secrets):
    submission = tmp_path / "alice"
    (submission / "data").mkdir(parents=True)
    (submission / "data" / "points.csv").write_text("1,2\n")
    (submission / "notes.txt").write_text("mine")
    (submission / "01_topic.ipynb").symlink_to(secrets / "bob.ipynb")
    (submission / "solutions").symlink_to(secrets / "solutions")
    (submission / "data" / "answer.ipynb").symlink_to(secrets / "solutions" / "answer.ipynb")
    (submission / "gone").symlink_to(tmp_path / "missing")
    (submission / "shadow").symlink_to("/etc/shadow")
    (submission / "zero").symlink_to("/dev/zero")

    notes = copy(submission, tmp_path / "copy")

    assert sorted(notes) == sorted([
        link_note("01_topic.ipynb", secrets / "bob.ipynb"),
        link_note("solutions", secrets / "solutions"),
        link_note("data/answer.ipynb", secrets / "solutions" / "answer.ipynb"),
        link_note("gone", tmp_path / "missing"),
        "dropped a symbolic link: shadow -> /etc/shadow",
        "dropped a symbolic link: zero -> /dev/zero",
    ])
    assert everything(tmp_path / "copy") == {"data": stat.S_IFDIR, "data/points.csv": stat.S_IFREG,
                                             "notes.txt": stat.S_IFREG}
    assert (tmp_path / "copy" / "notes.txt").read_text() == "mine"
    assert_only_own_content(tmp_path / "copy")


def test_fifos_and_sockets_are_dropped_without_blocking(tmp_path):
    submission = tmp_path / "s"
    (submission / "run").mkdir(parents=True)
    os.mkfifo(submission / "pipe")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(submission / "run" / "sock"))
    try:
        notes = copy(submission, tmp_path / "copy")
    finally:
        server.close()
    assert sorted(notes) == ["dropped a FIFO: pipe", "dropped a socket: run/sock"]
    assert everything(tmp_path / "copy") == {"run": stat.S_IFDIR}


def test_a_device_node_is_dropped(tmp_path):
    submission = tmp_path / "s"
    submission.mkdir()
    try:
        os.mknod(submission / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("only root can make a device node")
    assert copy(submission, tmp_path / "copy") == ["dropped a device: null"]
    assert everything(tmp_path / "copy") == {}


@pytest.mark.parametrize("swap", ["link", "fifo", "folder link"])
def test_an_entry_swapped_between_listing_and_open_is_refused(tmp_path, secrets, monkeypatch, swap):
    """The walk lstat()s a file (or folder), then the student swaps it before the grader opens it."""
    submission = tmp_path / "s"
    (submission / "folder").mkdir(parents=True)
    (submission / "answer.txt").write_text("mine")
    real_open = os.open

    def swapping_open(path, flags, *args, dir_fd=None, **kwargs):
        if path == {"folder link": "folder"}.get(swap, "answer.txt") and dir_fd is not None \
                and flags & os.O_WRONLY == 0:
            os.replace(path, f"{path}.gone", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            if swap == "fifo":
                os.mkfifo(path, dir_fd=dir_fd)
            else:
                os.symlink(secrets / "solutions" / "answer.ipynb", path, dir_fd=dir_fd)
        return real_open(path, flags, *args, dir_fd=dir_fd, **kwargs)

    monkeypatch.setattr(safe_copy.os, "open", swapping_open)
    notes = copy(submission, tmp_path / "copy")
    monkeypatch.undo()
    expected = {"link": link_note("answer.txt", secrets / "solutions" / "answer.ipynb"),
                "fifo": "dropped a FIFO: answer.txt",
                "folder link": link_note("folder", secrets / "solutions" / "answer.ipynb")}
    assert notes == [expected[swap]]
    assert_only_own_content(tmp_path / "copy")


def test_a_file_over_the_limit_is_left_out_even_if_it_grows_after_the_open(tmp_path, monkeypatch):
    submission = tmp_path / "s"
    submission.mkdir()
    with open(submission / "big.bin", "wb") as handle:
        handle.truncate(6_000_000)  # sparse: no 6 MB written to disk
    (submission / "grows.bin").write_bytes(b"x" * 6_000_000)
    (submission / "small.bin").write_bytes(b"y" * 1000)
    real_fstat = os.fstat

    def looks_small(descriptor):  # grows.bin was small when fstat looked and grew before the read
        status = real_fstat(descriptor)
        if status.st_size == 6_000_000 and status.st_blocks > 0:
            return os.stat_result((*status[:6], 10, *status[7:]))
        return status

    monkeypatch.setattr(safe_copy.os, "fstat", looks_small)
    notes = copy(submission, tmp_path / "copy")
    assert notes == ["left out big.bin: larger than 5000 KB", "left out grows.bin: larger than 5000 KB"]
    assert everything(tmp_path / "copy") == {"small.bin": stat.S_IFREG}


def test_once_the_total_size_is_reached_the_rest_is_left_out(tmp_path):
    submission = tmp_path / "s"
    (submission / "z_folder").mkdir(parents=True)
    for name in ("a.bin", "b.bin", "c.bin"):
        (submission / name).write_bytes(b"x" * 400)
    (submission / "z_folder" / "d.bin").write_bytes(b"x" * 10)
    notes = copy(submission, tmp_path / "copy", max_total_bytes=1000)
    assert notes == ["left out c.bin and the rest: over 1 KB in all"]
    assert everything(tmp_path / "copy") == {"a.bin": stat.S_IFREG, "b.bin": stat.S_IFREG}


def test_once_the_file_count_is_reached_the_rest_is_left_out(tmp_path):
    submission = tmp_path / "s"
    (submission / "folder").mkdir(parents=True)
    for index in range(5):
        (submission / f"f{index}.txt").write_text(str(index))
        (submission / "folder" / f"g{index}.txt").write_text(str(index))
    notes = copy(submission, tmp_path / "copy", max_files=7)
    assert notes == ["left out folder/g1.txt and the rest: more than 7 files and folders"]
    copied = sorted(everything(tmp_path / "copy"))
    assert copied == [*(f"f{i}.txt" for i in range(5)), "folder", "folder/g0.txt"]


def test_a_source_that_is_itself_a_link_is_refused_whole(tmp_path, secrets):
    (tmp_path / "alice").symlink_to(secrets / "solutions")
    assert copy(tmp_path / "alice", tmp_path / "copy") == [
        link_note("alice", secrets / "solutions")]
    assert not (tmp_path / "copy").exists()


def test_skip_leaves_names_out_silently(tmp_path):
    submission = tmp_path / "s"
    (submission / "sub").mkdir(parents=True)
    for path in ("a.ipynb", "a.py", "sub/b.ipynb", "sub/b.txt"):
        (submission / path).write_text(path)
    assert copy(submission, tmp_path / "copy", skip=lambda path: path.suffix == ".ipynb") == []
    assert sorted(everything(tmp_path / "copy")) == ["a.py", "sub", "sub/b.txt"]


def test_notes_are_short_one_line_and_relative(tmp_path):
    submission = tmp_path / "s"
    submission.mkdir()
    (submission / "evil\nname\x1b[2J").symlink_to("/" + "x\r" * 500)
    (submission / ("long" * 60)).symlink_to("/etc")
    notes = copy(submission, tmp_path / "copy")
    assert len(notes) == 2
    for note in notes:
        assert len(note) < 200 and note.isprintable() and str(tmp_path) not in note, note
    assert notes[0].startswith("dropped a symbolic link: evil?name?[2J -> /x?x?")


def test_folders_nested_too_deep_are_left_out(tmp_path):
    submission = tmp_path / "s"
    deep = submission.joinpath(*["d"] * (safe_copy.MAX_DEPTH + 3))
    deep.mkdir(parents=True)
    (deep / "file.txt").write_text("deep")
    notes = copy(submission, tmp_path / "copy")
    assert notes == [f"left out {'/'.join(['d'] * (safe_copy.MAX_DEPTH + 1))}: folders nested more than "
                     f"{safe_copy.MAX_DEPTH} deep"]


def test_copies_sharing_a_tree_copy_share_its_totals(tmp_path):
    submission = tmp_path / "s"
    submission.mkdir()
    for name in ("a.ipynb", "b.ipynb", "c.txt"):
        (submission / name).write_bytes(b"x" * 400)
    shared = safe_copy.TreeCopy(max_total_bytes=10_000, max_files=1)
    assert shared.copy(submission, tmp_path / "copy", 1_000, skip=lambda path: path.suffix != ".ipynb")
    assert shared.copy(submission, tmp_path / "copy", 100, skip=lambda path: path.suffix == ".ipynb")
    assert shared.notes == ["left out b.ipynb and the rest: more than 1 files and folders"]
    assert everything(tmp_path / "copy") == {"a.ipynb": stat.S_IFREG}
