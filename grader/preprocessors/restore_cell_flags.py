"""RestoreCellFlags: a test cell whose grade flag or points a student edited gets them back from the gradebook
(nbgrader restores points but stops with "Inconsistent checksums" on a removed flag)."""
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor

from grader.course import nbgrader_meta


class RestoreCellFlags(NbGraderPreprocessor):
    """Put back the grade/solution flags and points the gradebook has for each known grade_id."""

    def preprocess(self, nb, resources):
        notebook, assignment = resources["nbgrader"]["notebook"], resources["nbgrader"]["assignment"]
        with Gradebook(resources["nbgrader"]["db_url"]) as gradebook:
            for cell in nb.cells:
                meta = nbgrader_meta(cell)
                grade_id = meta.get("grade_id")
                if not grade_id:
                    continue
                try:
                    grade_cell = gradebook.find_grade_cell(grade_id, notebook, assignment)
                except MissingEntry:
                    grade_cell = None
                try:
                    gradebook.find_solution_cell(grade_id, notebook, assignment)
                    is_solution = True
                except MissingEntry:
                    is_solution = False
                if grade_cell is None and not is_solution:
                    continue
                edited = (bool(meta.get("grade")) != (grade_cell is not None)
                          or bool(meta.get("solution")) != is_solution)
                if edited:
                    self.log.warning("Cell %s: nbgrader flags were edited; restored", grade_id)
                meta["grade"] = grade_cell is not None
                meta["solution"] = is_solution
                if grade_cell is not None:
                    meta["points"] = grade_cell.max_score
                else:
                    meta.pop("points", None)
        return nb, resources
