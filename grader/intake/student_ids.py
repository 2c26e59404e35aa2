"""What a student identifier may be, checked where one enters the grader.

An id comes from student data: a folder's name in a submitted tree, the name an LMS gives an upload in its
zip download, a JupyterHub user's name in the exchange. It becomes a folder in the workspace, a row in the
gradebook, a cell in every CSV file and part of the file globs nbgrader expands ("submitted/{student_id}/...").
So an id is letters and digits (any script), with . _ @ + - inside it: no path separators or "..", no glob
or format characters (* ? [ ] { }), no commas, quotes or spaces for a CSV file to split on, no leading
character a spreadsheet reads as a formula (= + - @), nothing unprintable. An id that is not so is refused
where it enters, with a message that names it (printably) and what is allowed; the rest of the class is
graded. CSV files quote every cell as well (grader/outputs/csv_cells.py).
"""
import re

from grader.limits import FIXED
from grader.intake.safe_copy import printable

MAX_CHARS = FIXED["student_id_characters"].value
# \w is Unicode-aware: a letter or digit of any script, or "_"; the first character is a letter or digit.
STUDENT_ID = re.compile(rf"[^\W_][\w.@+-]{{0,{MAX_CHARS - 1}}}")
ALLOWED = (f"a student id is 1 to {MAX_CHARS} letters or digits, with . _ @ + - allowed after the first "
           "character")


def problem(student: str) -> str:
    """Why `student` cannot be a student id ("" when it can), naming it printably."""
    if isinstance(student, str) and STUDENT_ID.fullmatch(student) and student.isprintable():
        return ""
    return f"{printable(repr(student), 80)} is not a valid student id: {ALLOWED}"
