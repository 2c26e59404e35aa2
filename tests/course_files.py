"""The course's assignments and notebooks, for the tests."""
import re
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS = REPO / "solutions"
NOTEBOOKS = REPO / "notebooks"
FIXTURE_SOURCE = REPO / "tests" / "fixtures" / "solutions"
ASSIGNMENTS = sorted(p.name for p in SOLUTIONS.iterdir() if p.is_dir()) if SOLUTIONS.is_dir() else []
HEADING = re.compile(r"^#{2,4}\s*Exercise\s+\d+\b.*\((\d+(?:\.\d+)?)\s+points?\)", re.M)


def source_notebook(assignment: str):
    return nbformat.read(SOLUTIONS / assignment / f"{assignment}.ipynb", as_version=4)


def student_notebook(assignment: str):
    return nbformat.read(NOTEBOOKS / assignment / f"{assignment}.ipynb", as_version=4)


def nbgrader_meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})
