"""LMS zip downloads read by the course's own plugins to `nbgrader zip_collect`.

An LMS download (Canvas's "Download Submissions") is one zip whose members the LMS names
<student>_[late_]<user id>_<file id>_<file name>: the student chose only <file name>. nbgrader's own
extractor unzips every member as named, modes included, and unzips archives found inside again, so a
student's upload could name another student, write outside the folder, set a setuid bit or unpack a bomb;
and its collector stops the whole class at the first duplicate. Here, wired in grader/nbgrader_config.py:

- BoundedZipExtractor reads each download with zipfile and never unpacks a member: one that is an archive
  (by its name or its first bytes) is left out, as are one that is not a notebook (nbgrader's collector
  would skip it), one in a folder (not where the LMS puts an upload), one over MAX_NOTEBOOK_BYTES by the
  zip's own record (zipfile never reads past it), and any past the downloads' MAX_MEMBERS or
  MAX_EXTRACTED_BYTES. Members are written as new files, 0o644, named by the LMS's name alone: no member's
  mode, owner, path or link applies.
- The student is the <student> the LMS wrote, checked by grader.intake.student_ids; a member whose name does not
  parse or whose id is not valid is left out, and of two uploads of one file name by one student the
  LMS's later one (the larger file id) is kept. One <student> with two user ids is two people: neither
  is taken.
- LmsFileNameCollector is nbgrader's FileNameCollectorPlugin refusing any student id grader.intake.student_ids
  refuses, for files an instructor put beside the downloads by hand.

What was left out, and why, is logged and kept in NOTES_FILE beside the extracted folder: by student
(`grade` lists them on the student's row of its summary, and grades a student whose uploads were all left
out as "notebook missing") and, for uploads that name no valid student, for the instructor.
"""
import json
import os
import re
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from nbgrader.plugins.zipcollect import ExtractorPlugin, FileNameCollectorPlugin

from grader.limits import FIXED
from grader.intake import student_ids
from grader.intake.submissions import MAX_NOTEBOOK_BYTES
from grader.intake.safe_copy import printable

LMS_NAME = re.compile(r"(?P<student>[^_/]+)_(?:(?i:late)_)?(?P<user_id>\d+)_(?P<file_id>\d+)_(?P<file_name>[^/]+)")
# nbgrader's collector applies its regexp to the extracted file's path; the student is checked after it.
COLLECTOR_REGEXP = r".*/(?P<student_id>[^_/]+)_(?:(?i:late)_)?\d+_\d+_(?P<file_id>[^/]+\.ipynb)$"
MAX_MEMBERS = FIXED["archive_members"].value
MAX_EXTRACTED_BYTES = FIXED["extracted_bytes"].value
# Local file header of a zip, gzip, bzip2, xz, 7z, rar; "ustar" sits at byte 257 of a tar.
ARCHIVE_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"\x1f\x8b", b"BZh", b"\xfd7zXZ", b"7z\xbc\xaf", b"Rar!")
ARCHIVE_SUFFIXES = {".zip", ".gz", ".tgz", ".tar", ".bz2", ".xz", ".7z", ".rar", ".jar", ".whl", ".egg"}
NOTES_FILE = "intake_notes.json"
CHUNK = 1 << 20


def parse(name: str):
    """The parts of an upload's name as the LMS wrote it, or None: {student, user_id, file_id, file_name}."""
    found = LMS_NAME.fullmatch(name)
    return found.groupdict() if found else None


def is_archive(head: bytes) -> bool:
    """Whether a file starting with `head` is an archive, whatever its name says."""
    return head.startswith(ARCHIVE_MAGIC) or head[257:262] == b"ustar"


class _Download:
    """One pass over the downloads: what to write, and the notes on what was left out."""

    def __init__(self):
        self.by_student, self.unattributed = {}, []
        self.chosen = {}  # (student, user id, file name) -> (file id, archive, info)
        self.user_ids = {}  # student -> {user ids}

    def note(self, student, text):
        if student is None:
            self.unattributed.append(printable(text))
        else:
            self.by_student.setdefault(student, []).append(printable(text))

    def read(self, archive: Path):
        try:
            with zipfile.ZipFile(archive) as download:
                members = download.infolist()
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as error:
            self.note(None, f"{archive.name}: not a readable zip file ({error})")
            return
        if len(members) > MAX_MEMBERS:
            self.note(None, f"{archive.name}: more than {MAX_MEMBERS} files: not read")
            return
        for info in members:
            if not info.is_dir():
                self.consider(archive, info)

    def consider(self, archive: Path, info: zipfile.ZipInfo):
        where = f"{archive.name}: {info.filename}"
        if "/" in info.filename or "\\" in info.filename:
            self.note(None, f"{where}: left out: in a folder, not where the LMS puts an upload")
            return
        parts = parse(info.filename)
        if parts is None:
            self.note(None, f"{where}: left out: not named <student>_<user id>_<file id>_<file> by the LMS")
            return
        student = parts["student"]
        problem = student_ids.problem(student)
        if problem:
            self.note(None, f"{where}: left out: {problem}")
            return
        self.user_ids.setdefault(student, set()).add(parts["user_id"])
        name = parts["file_name"]
        if PurePosixPath(name.lower()).suffix in ARCHIVE_SUFFIXES:
            self.note(student, f"{name}: an archive is never unpacked: upload the notebook itself")
            return
        if not name.endswith(".ipynb"):  # nbgrader's collector takes notebooks alone
            self.note(student, f"{name}: left out: only .ipynb notebooks are graded")
            return
        if info.file_size > MAX_NOTEBOOK_BYTES:
            self.note(student, f"{name}: left out: larger than {MAX_NOTEBOOK_BYTES // 1_000_000} MB")
            return
        key = (student, parts["user_id"], name)
        upload = (int(parts["file_id"]), archive, info)
        earlier = self.chosen.get(key)
        if earlier is not None:
            later, dropped = (upload, earlier) if upload[0] > earlier[0] else (earlier, upload)
            self.note(student, f"{name}: uploaded twice: graded file {later[0]}, not file {dropped[0]}")
            upload = later
        self.chosen[key] = upload

    def write(self, extracted: Path, log):
        """Write the chosen uploads into `extracted`/<download>/ and log the notes. A student name with two
        user ids takes no upload."""
        shared = {student for student, ids in self.user_ids.items() if len(ids) > 1}
        for student in sorted(shared):
            self.note(None, f"{student}: one name for {len(self.user_ids[student])} LMS users (user ids "
                            f"{', '.join(sorted(self.user_ids[student]))}): none of their uploads is graded; "
                            "grade them from folders named by their logins")
            self.unattributed += [f"{student}: {text}" for text in self.by_student.pop(student, [])]
        by_archive = {}
        for (student, _, name), (_, archive, info) in sorted(self.chosen.items(), key=lambda item: item[0]):
            if student not in shared:
                by_archive.setdefault(archive, []).append((student, name, info))
        written = 0
        for archive, uploads in sorted(by_archive.items()):
            with zipfile.ZipFile(archive) as download:
                for student, name, info in uploads:
                    if written + info.file_size > MAX_EXTRACTED_BYTES:
                        self.note(student, f"{name}: left out: the downloads hold more than "
                                           f"{MAX_EXTRACTED_BYTES // 1_000_000_000} GB in all")
                        continue
                    target = extracted / archive.stem / info.filename
                    try:
                        written += copy_member(download, info, target)
                    except _Archive:
                        self.note(student, f"{name}: an archive is never unpacked: upload the notebook itself")
                    except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, NotImplementedError,
                            zlib.error) as error:
                        target.unlink(missing_ok=True)
                        self.note(student, f"{name}: left out: unreadable in {archive.name} ({error})")
        for student, notes in sorted(self.by_student.items()):
            for text in notes:
                log.warning("%s: %s", student, text)
        for text in self.unattributed:
            log.warning("%s", text)


def copy_member(download: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path) -> int:
    """Copy one member's bytes (at most its recorded size, which zipfile enforces) to a new file at `target`;
    return how many. A member that is an archive by its first bytes raises _Archive, before any is written."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with download.open(info) as member:
        head = member.read(CHUNK)
        if is_archive(head):
            raise _Archive
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        with open(descriptor, "wb") as copy:
            size = 0
            while head:
                size += len(head)
                if size > MAX_NOTEBOOK_BYTES:  # zipfile stops at the recorded size: this guards that promise
                    raise OSError(f"larger than {MAX_NOTEBOOK_BYTES // 1_000_000} MB")
                copy.write(head)
                head = member.read(CHUNK)
    return size


class _Archive(Exception):
    """A member that is an archive by its first bytes."""


class BoundedZipExtractor(ExtractorPlugin):
    def extract(self, archive_path: str, extracted_path: str) -> None:
        """Read the LMS downloads (regular .zip files) directly in `archive_path` into `extracted_path`."""
        downloads = _Download()
        archives = sorted(entry for entry in Path(archive_path).iterdir()
                          if entry.suffix.lower() == ".zip" and entry.is_file() and not entry.is_symlink())
        if not archives:
            self.log.warning("No zip downloads found in %s", archive_path)
        for archive in archives:
            downloads.read(archive)
        Path(extracted_path).mkdir(parents=True, exist_ok=True)
        downloads.write(Path(extracted_path), self.log)
        notes = {"by_student": downloads.by_student, "unattributed": downloads.unattributed}
        (Path(extracted_path).parent / NOTES_FILE).write_text(json.dumps(notes, indent=1, sort_keys=True))


class LmsFileNameCollector(FileNameCollectorPlugin):
    def collect(self, submitted_file: str):
        found = super().collect(submitted_file)
        if found is not None:
            problem = student_ids.problem(found.get("student_id"))
            if problem:
                self.log.warning("Skipped %s: %s", printable(submitted_file), problem)
                return None
        return found
