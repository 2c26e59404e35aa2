"""Gradebook CSV files an LMS imports: Canvas's Gradebook "Import" and Moodle's "CSV file" grade import.

- Canvas (Instructor Guide, "How do I import grades in the Gradebook?"): the columns of Canvas's own
  export, Student, ID, SIS User ID, SIS Login ID, Section, then one column per assignment named
  "Assignment name (assignment id)"; Canvas matches students by ID (the Canvas user id), and a column
  without a known id becomes a new assignment. Its export's second row, "Points Possible", is kept.
  The Canvas user id comes from the zip downloads' file names ("<student>_<user id>_<file id>_<name>"),
  recorded in the workspace when `grade` reads them (record_zip_ids).
- Moodle (MoodleDocs, "Grade import"): a CSV with an identifying column that the import maps to a
  user field (username, ID number or email address) and one column per grade item, mapped on the
  import's preview page.
"""
import json
import zipfile
from pathlib import Path

from nbgrader.api import Gradebook

from grader.intake import lms_archives, student_ids
from grader.outputs.csv_cells import write_rows

CANVAS_STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_STUDENT_COLUMNS = ["Username", "ID number", "Email address"]
IDS_FILE = "lms_ids.json"


def record_zip_ids(folder: Path, workspace: Path) -> dict:
    """{student: Canvas user id} from the names of the notebooks in the zips of `folder`, saved in the
    workspace (merged with what earlier runs recorded)."""
    path = Path(workspace) / IDS_FILE
    ids = json.loads(path.read_text()) if path.is_file() else {}
    for archive in sorted(Path(folder).glob("*.zip")):
        try:
            names = zipfile.ZipFile(archive).namelist()
        except (zipfile.BadZipFile, OSError):
            continue
        for name in names:
            found = lms_archives.parse(name)
            if found and name.endswith(".ipynb") and not student_ids.problem(found["student"]):
                ids[found["student"]] = found["user_id"]
    path.write_text(json.dumps(ids, indent=1, sort_keys=True))
    return ids


def _grades(db_url: str) -> tuple:
    """(students as (id, first, last, email), assignments as (name, max score),
    {(student, assignment): score})."""
    with Gradebook(db_url) as gradebook:
        students = [(s.id, s.first_name or "", s.last_name or "", s.email or "") for s in gradebook.students]
        assignments = [(a.name, a.max_score) for a in gradebook.assignments]
        scores = {}
        for name, _ in assignments:
            for submission in gradebook.assignment_submissions(name):
                scores[(submission.student.id, name)] = submission.score
    return sorted(students), sorted(assignments), scores


def _number(value) -> str:
    return "" if value is None else f"{value:g}"


def export_canvas(db_url: str, workspace: Path, path: Path, assignment_ids: dict = None) -> Path:
    """Canvas's gradebook import CSV (see the module's docstring); `assignment_ids` maps an assignment to its
    Canvas id, so the column updates that assignment instead of making a new one."""
    students, assignments, scores = _grades(db_url)
    ids_path = Path(workspace) / IDS_FILE
    user_ids = json.loads(ids_path.read_text()) if ids_path.is_file() else {}
    assignment_ids = assignment_ids or {}
    columns = [f"{name} ({assignment_ids[name]})" if name in assignment_ids else name
               for name, _ in assignments]
    rows = [CANVAS_STUDENT_COLUMNS + columns,
            ["    Points Possible", "", "", "", ""] + [_number(points) for _, points in assignments]]
    for student, first, last, _ in students:
        name = f"{last}, {first}" if first and last else student
        user_id = user_ids.get(student, "")  # without it Canvas can match the login (a tree's folder)
        rows.append([name, user_id, "", "" if user_id else student, ""]
                    + [_number(scores.get((student, a))) for a, _ in assignments])
    write_rows(path, rows)
    return path


def export_moodle(db_url: str, path: Path) -> Path:
    """Moodle's CSV grade import (see the module's docstring): map "Username" to the username field."""
    students, assignments, scores = _grades(db_url)
    write_rows(path, [MOODLE_STUDENT_COLUMNS + [name for name, _ in assignments]]
               + [[student, student, email] + [_number(scores.get((student, a))) for a, _ in assignments]
                  for student, _, _, email in students])
    return path


def export(kind: str, db_url: str, workspace: Path, assignment_ids: dict = None) -> Path:
    """grades_<kind>.csv in the workspace, for kind canvas or moodle."""
    path = Path(workspace) / f"grades_{kind}.csv"
    if kind == "canvas":
        return export_canvas(db_url, workspace, path, assignment_ids)
    if kind == "moodle":
        return export_moodle(db_url, path)
    raise ValueError(f"unknown LMS {kind!r}: canvas or moodle")
