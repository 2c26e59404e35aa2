"""CSV files the instructor opens in a spreadsheet or imports into an LMS, with every cell made inert.

Every CSV the grader writes (grades.csv, the Canvas and Moodle imports, the class report's tables) holds
text that came from students: ids, names, an exercise's failure text. Each file is written with Python's
csv module, which quotes a cell holding a comma, quote or line break, so each stays inside its cell; and a text cell
that a spreadsheet would read as a formula (starting with = + - @, a tab or a carriage return: OWASP's
"CSV injection") gets a leading apostrophe, which spreadsheets show as text. Numbers are written as they are.
"""
import csv

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def inert(value):
    """A cell's value as a spreadsheet should read it: text that would start a formula gets a leading "'"."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def write_rows(path, rows) -> None:
    """Write `rows` (lists of cells) to `path` as CSV, each cell quoted where it must be and made inert."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([inert(cell) for cell in row] for row in rows)
