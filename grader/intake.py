"""Intake of submissions: a folder tree or LMS zip downloads, copied into a grading workspace."""
import os
import shutil
import sys
import zipfile
from pathlib import Path

from grader.course import CourseError

TREE_LAYOUT = "<folder>/<student>/<assignment>/<assignment>.ipynb"
ZIP_LAYOUT = "<folder>/*.zip holding <student>_<number>_<number>_<assignment>.ipynb files (LMS download)"


def take_tree(folder: Path, assignments: list, submitted: Path, max_kb: int) -> list:
    """Copy <folder>/<student>/<assignment>/ to <submitted>/<student>/<assignment>/; return the pairs.

    Files over `max_kb` KB are left out (a student's stray dataset, a core dump).
    """
    pairs, ignored = [], []
    for student_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        for assignment_dir in sorted(p for p in student_dir.iterdir() if p.is_dir()):
            if assignment_dir.name not in assignments:
                ignored.append(f"{student_dir.name}/{assignment_dir.name}")
                continue
            target = submitted / student_dir.name / assignment_dir.name
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(assignment_dir, target, ignore=lambda where, names: oversized_files(where, names, max_kb))
            rescue_renamed_notebook(target, assignment_dir.name)
            pairs.append((student_dir.name, assignment_dir.name))
    if not pairs:
        found = ", ".join(ignored[:5]) or "no <student>/<assignment> folders"
        raise CourseError(
            f"No submissions found in {folder}: expected {TREE_LAYOUT} or {ZIP_LAYOUT} "
            f"for one of {', '.join(assignments)}; found {found}"
        )
    if ignored:
        print(f"Skipped folders that are not assignments: {', '.join(ignored)}", file=sys.stderr)
    return pairs


def oversized_files(folder: str, names: list, max_kb: int) -> list:
    """Files over `max_kb` KB (CourseDirectory.max_file_size) are left out of grading (nbgrader would copy them)."""
    limit = max_kb * 1024
    skipped = [n for n in names if os.path.isfile(os.path.join(folder, n)) and os.path.getsize(os.path.join(folder, n)) > limit]
    for name in skipped:
        print(f"Skipped {os.path.join(folder, name)}: larger than {max_kb} KB", file=sys.stderr)
    return skipped


def rescue_renamed_notebook(folder: Path, assignment: str):
    """A lone notebook under another name ("01_topic (1).ipynb", "Copy1") is graded as the assignment."""
    expected = folder / f"{assignment}.ipynb"
    others = sorted(p for p in folder.glob("*.ipynb") if p != expected)
    if not expected.exists() and len(others) == 1:
        others[0].rename(expected)
        print(f"{folder.parent.name}/{assignment}: graded {others[0].name} as {expected.name}", file=sys.stderr)


def zips_by_assignment(folder: Path, assignments: list) -> dict:
    """assignment -> the zip files in `folder` that hold a notebook of it (unreadable zips are skipped)."""
    zips = sorted(folder.glob("*.zip"))
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
