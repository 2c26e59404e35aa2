"""Copy a submission folder without ever following a link.

Everything in a submission is student data, copied with the grader's rights: a symbolic link could
bring the solutions, the gradebook or another student's notebook into it, a FIFO or a device could
stall or flood the copy. `copy_tree` walks with directory descriptors opened O_NOFOLLOW and lstat
(never a stat through a link), opens each regular file O_NOFOLLOW and checks the open descriptor, and
reads at most the limit, so a file swapped for something else after the listing is still refused.
"""
import errno
import os
import stat
from pathlib import Path

from grader.limits import FIXED

READ_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO swapped in for a file must not block the open waiting for a writer.
READ_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
WRITE_FILE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
KINDS = {stat.S_IFLNK: "a symbolic link", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket",
         stat.S_IFCHR: "a device", stat.S_IFBLK: "a device"}
MAX_DEPTH = FIXED["folder_depth"].value
NOTE_CHARS = FIXED["note_characters"].value
LINK_TARGET_CHARS = FIXED["link_target_characters"].value
CHUNK = 1 << 20


def printable(text: str, limit: int = NOTE_CHARS) -> str:
    """Student-chosen text (a name, a link's target) fit for a one-line note: no control characters."""
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


class _Full(Exception):
    """The submission reached max_files or max_total_bytes: what is left is not copied."""


class TreeCopy:
    """Copies (see copy_tree) that share their totals and their notes: a caller that copies a folder's
    notebooks and its other files under different per-file limits keeps one submission's limits."""

    def __init__(self, max_total_bytes: int, max_files: int):
        self.max_total_bytes, self.max_files = max_total_bytes, max_files
        self.max_file_bytes, self.skip = 0, None
        self.entries = self.bytes = 0
        self.full = False
        self.notes = []

    def copy(self, source: Path, target: Path, max_file_bytes: int, skip=None) -> bool:
        """Copy `source` into `target` as copy_tree does; False if `source` was refused (not a folder)."""
        source, target = Path(source), Path(target)
        self.max_file_bytes, self.skip = max_file_bytes, skip
        try:
            source_fd = os.open(source, READ_FOLDER)
        except OSError as error:
            if error.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            self.drop(str(source), Path(source.name), os.lstat(source).st_mode, otherwise="not a folder")
            return False
        try:
            target.mkdir(parents=True, exist_ok=True)
            target_fd = os.open(target, READ_FOLDER)
            try:
                if not self.full:
                    self.folder(source_fd, target_fd, Path(), 0)
            except _Full as full:
                self.full = True
                self.note(str(full))
            finally:
                os.close(target_fd)
        finally:
            os.close(source_fd)
        return True

    def note(self, text: str):
        self.notes.append(printable(text))

    def drop(self, name: str, relative: Path, mode: int, dir_fd=None, otherwise="it changed while copied"):
        kind = KINDS.get(stat.S_IFMT(mode))
        if kind is None:  # a file or folder where a moment ago there was something else
            self.note(f"left out {relative}: {otherwise}")
        elif stat.S_ISLNK(mode):
            target = printable(os.readlink(name, dir_fd=dir_fd), LINK_TARGET_CHARS)
            self.note(f"dropped {kind}: {relative} -> {target}")
        else:
            self.note(f"dropped {kind}: {relative}")

    def too_large(self, relative: Path) -> str:
        return f"left out {relative}: larger than {self.max_file_bytes // 1000} KB"

    def over_total(self, relative: Path) -> str:
        return f"left out {relative} and the rest: over {self.max_total_bytes // 1000} KB in all"

    def drop_changed(self, name: str, relative: Path, dir_fd):
        self.drop(name, relative, os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode, dir_fd)

    def folder(self, source_fd: int, target_fd: int, relative: Path, depth: int):
        with os.scandir(source_fd) as listing:
            names = sorted(entry.name for entry in listing)
        entries = []
        for name in names:
            path = relative / name
            try:
                if self.skip is None or not self.skip(path):
                    mode = os.stat(name, dir_fd=source_fd, follow_symlinks=False).st_mode
                    entries.append((name, path, mode))
            except OSError as error:
                self.note(f"left out {path}: {error.strerror or error}")
        # A folder's own files before its subfolders: the caps keep what sits beside the notebook.
        for name, path, mode in sorted(entries, key=lambda entry: (stat.S_ISDIR(entry[2]), entry[0])):
            if self.entries >= self.max_files:
                raise _Full(f"left out {path} and the rest: more than {self.max_files} files and folders")
            self.entries += 1
            try:
                if stat.S_ISDIR(mode):
                    self.subfolder(source_fd, target_fd, name, path, depth)
                elif stat.S_ISREG(mode):
                    self.file(source_fd, target_fd, name, path)
                else:
                    self.drop(name, path, mode, source_fd)
            except OSError as error:
                self.note(f"left out {path}: {error.strerror or error}")

    def subfolder(self, source_fd: int, target_fd: int, name: str, relative: Path, depth: int):
        if depth >= MAX_DEPTH:
            self.note(f"left out {relative}: folders nested more than {MAX_DEPTH} deep")
            return
        try:
            inner = os.open(name, READ_FOLDER, dir_fd=source_fd)
        except OSError as error:
            if error.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            self.drop_changed(name, relative, source_fd)
            return
        try:
            try:
                os.mkdir(name, 0o755, dir_fd=target_fd)
            except FileExistsError:
                pass  # a second copy into the same target (notebooks first, then the rest)
            inner_target = os.open(name, READ_FOLDER, dir_fd=target_fd)
            try:
                self.folder(inner, inner_target, relative, depth + 1)
            finally:
                os.close(inner_target)
        finally:
            os.close(inner)

    def file(self, source_fd: int, target_fd: int, name: str, relative: Path):
        try:
            descriptor = os.open(name, READ_FILE, dir_fd=source_fd)
        except OSError as error:
            if error.errno not in (errno.ELOOP, errno.ENXIO):  # now a link; now a socket
                raise
            self.drop_changed(name, relative, source_fd)
            return
        with open(descriptor, "rb", buffering=0) as source:
            status = os.fstat(descriptor)
            if not stat.S_ISREG(status.st_mode):
                self.drop(name, relative, status.st_mode)
                return
            if status.st_size > self.max_file_bytes:
                self.note(self.too_large(relative))
                return
            budget = min(self.max_file_bytes, self.max_total_bytes - self.bytes)
            if status.st_size > budget:
                raise _Full(self.over_total(relative))
            copied = 0
            # The size above was only a first look: the file may grow, so read at most budget + 1 bytes.
            with open(os.open(name, WRITE_FILE, 0o644, dir_fd=target_fd), "wb") as target:
                while copied <= budget:
                    chunk = source.read(min(CHUNK, budget + 1 - copied))
                    if not chunk:
                        break
                    copied += len(chunk)
                    target.write(chunk)
        if copied > budget:
            os.unlink(name, dir_fd=target_fd)
            if copied > self.max_file_bytes:
                self.note(self.too_large(relative))
                return
            raise _Full(self.over_total(relative))
        self.bytes += copied


def copy_tree(source: Path, target: Path, *, max_file_bytes: int, max_total_bytes: int, max_files: int,
              skip=None) -> list[str]:
    """Copy the folder `source` to `target` (created) without following links; return what was left out.

    Only folders and regular files are copied: symbolic links, FIFOs, sockets and devices are dropped, as
    are files over `max_file_bytes`; once `max_files` entries or `max_total_bytes` are reached the rest is
    left out. `skip(relative_path)` leaves out names silently. A `source` that is itself a link is refused
    and `target` is not created. Each note names a path relative to `source`, in under 200 characters.
    """
    copy = TreeCopy(max_total_bytes, max_files)
    copy.copy(source, target, max_file_bytes, skip)
    return copy.notes
