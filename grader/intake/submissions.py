"""Intake of submissions: a folder tree or LMS zip downloads, copied into a grading workspace.

Every copy goes through grader.intake.safe_copy.copy_tree: no link in a submission is followed, and devices,
FIFOs and files over the limits below are left out, each with a note that reaches the instructor.
"""
import os
import shutil
import sys
import zipfile
from pathlib import Path

from grader.limits import FIXED
from grader.intake import student_ids
from grader.course import CourseError
from grader.intake.safe_copy import TreeCopy, copy_tree

TREE_LAYOUT = "<folder>/<student>/<assignment>/<assignment>.ipynb"
ZIP_LAYOUT = "<folder>/*.zip holding <student>_<number>_<number>_<assignment>.ipynb files (LMS download)"
# One submission (a student's assignment folder): its notebooks, other files up to
# CourseDirectory.max_file_size each, and a total size and file count (grader/limits.py).
MAX_NOTEBOOK_BYTES = FIXED["notebook_bytes"].value
MAX_SUBMISSION_BYTES = FIXED["submission_bytes"].value
MAX_SUBMISSION_FILES = FIXED["submission_files"].value
MAX_ZIP_BYTES = FIXED["zip_bytes"].value
MAX_ZIP_FILES = FIXED["zip_files"].value


def copy_submission(source: Path, target: Path, max_file_kb: int, skip=None) -> list:
    """Copy one submission folder with safe_copy; return the notes on what was left out.

    Its notebooks go first, up to MAX_NOTEBOOK_BYTES each, then its other files, up to `max_file_kb` KB
    each (1 KB = 1000 bytes, as nbgrader counts), all within the submission's totals. A `source` that is a
    link is refused: `target` is then an empty folder, which grades as "notebook missing".
    """
    extra = skip or (lambda path: False)

    def notebook(path: Path) -> bool:
        return len(path.parts) == 1 and path.suffix == ".ipynb"

    copy = TreeCopy(MAX_SUBMISSION_BYTES, MAX_SUBMISSION_FILES)
    if copy.copy(source, target, MAX_NOTEBOOK_BYTES, skip=lambda path: not notebook(path) or extra(path)):
        copy.copy(source, target, max_file_kb * 1000, skip=lambda path: notebook(path) or extra(path))
    else:
        target.mkdir(parents=True)
    return copy.notes


def take_submission(source: Path, submitted: Path, student: str, assignment: str, max_kb: int) -> list:
    """Copy `source` to <submitted>/<student>/<assignment>/; print and return what was left out."""
    target = submitted / student / assignment
    if target.exists():
        shutil.rmtree(target)
    notes = copy_submission(source, target, max_kb)
    rescue_renamed_notebook(target, assignment)
    for note in notes:
        print(f"{student}/{assignment}: {note}", file=sys.stderr)
    return notes


def folders(path) -> list:
    """The folders in `path`, and the links there that may stand for one (never followed), by name."""
    with os.scandir(path) as entries:
        return sorted((e for e in entries if e.is_dir(follow_symlinks=False) or e.is_symlink()),
                      key=lambda entry: entry.name)


def student_folders(path) -> list:
    """folders(path) whose names are valid student ids (grader.intake.student_ids); each other one is named on
    stderr, with why, and not graded."""
    chosen = []
    for entry in folders(path):
        problem = student_ids.problem(entry.name)
        if problem:
            print(f"Not graded: the folder {problem}", file=sys.stderr)
        else:
            chosen.append(entry)
    return chosen


def take_tree(folder: Path, assignments: list, submitted: Path, max_kb: int) -> tuple:
    """Copy <folder>/<student>/<assignment>/ to <submitted>/<student>/<assignment>/.

    Returns the (student, assignment) pairs and, by pair, the notes on what was left out (links,
    devices, files over the limits). A student's or an assignment's folder that is a link is not
    followed: those submissions are empty and grade as "notebook missing". A folder whose name is not a
    valid student id is named on stderr and not graded.
    """
    pairs, ignored, notes = [], [], {}
    for student in student_folders(folder):
        if student.is_symlink():
            chosen = [(Path(student.path), assignment) for assignment in assignments]
        else:
            chosen = []
            for entry in folders(student.path):
                if entry.name in assignments:
                    chosen.append((Path(entry.path), entry.name))
                else:
                    ignored.append(f"{student.name}/{entry.name}")
        for source, assignment in chosen:
            notes[student.name, assignment] = take_submission(source, submitted, student.name, assignment,
                                                              max_kb)
            pairs.append((student.name, assignment))
    if not pairs:
        found = ", ".join(ignored[:5]) or "no <student>/<assignment> folders"
        raise CourseError(
            f"No submissions found in {folder}: expected {TREE_LAYOUT} or {ZIP_LAYOUT} "
            f"for one of {', '.join(assignments)}; found {found}"
        )
    if ignored:
        print(f"Skipped folders that are not assignments: {', '.join(ignored)}", file=sys.stderr)
    return pairs, notes


def rescue_renamed_notebook(folder: Path, assignment: str):
    """A lone notebook under another name ("01_topic (1).ipynb", "Copy1") is graded as the assignment."""
    expected = folder / f"{assignment}.ipynb"
    # Never a link: renamed, it would be graded as this student's notebook.
    others = sorted(p for p in folder.glob("*.ipynb") if p != expected and not p.is_symlink())
    if not expected.exists() and len(others) == 1:
        others[0].rename(expected)
        print(f"{folder.parent.name}/{assignment}: graded {others[0].name} as {expected.name}",
              file=sys.stderr)


def zips_by_assignment(folder: Path, assignments: list, copies: Path) -> dict:
    """assignment -> the zip files of `folder` that hold a notebook of it, as copies in `copies`.

    The zips are copied with copy_tree first and read from the copies, so an archive that is a link (or
    a FIFO, ...) is never read; unreadable zips are skipped.
    """
    if copies.exists():
        shutil.rmtree(copies)
    for note in copy_tree(folder, copies, max_file_bytes=MAX_ZIP_BYTES, max_total_bytes=MAX_ZIP_BYTES,
                          max_files=MAX_ZIP_FILES,
                          skip=lambda path: len(path.parts) > 1 or path.suffix != ".zip"):
        print(f"Skipped in {folder}: {note}", file=sys.stderr)
    zips = sorted(path for path in copies.glob("*.zip") if path.is_file())
    found = {}
    for archive in zips:
        try:
            names = zipfile.ZipFile(archive).namelist()
        except zipfile.BadZipFile:
            print(f"Skipped {archive.name}: not a readable zip file", file=sys.stderr)
            continue
        for assignment in assignments:
            if any(name.endswith(f"_{assignment}.ipynb") for name in names):
                found.setdefault(assignment, []).append(archive)
    if not found:
        raise CourseError(
            f"None of the {len(zips)} zip files in {folder} holds a notebook named like {ZIP_LAYOUT} "
            f"for one of {', '.join(assignments)}"
        )
    return found


def take_collected(submitted: Path, assignment: str, aside: Path, max_kb: int) -> tuple:
    """After `nbgrader zip_collect`: each <submitted>/<student>/<assignment>/ is moved to `aside` and copied
    back with copy_submission, so nothing it extracted stays a link, a device or over the limits.
    Returns the (student, assignment) pairs and the notes by pair, like take_tree."""
    if aside.exists():
        shutil.rmtree(aside)
    aside.mkdir(parents=True)
    pairs, notes = [], {}
    for collected in sorted(submitted.glob(f"*/{assignment}")):
        student = collected.parent.name
        os.rename(collected, aside / student)
        notes[student, assignment] = take_submission(aside / student, submitted, student, assignment, max_kb)
        pairs.append((student, assignment))
    return pairs, notes
