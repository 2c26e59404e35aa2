"""grades.csv as nbgrader's CsvExportPlugin lays it out, written through grader.outputs.csv_cells.

nbgrader's plugin joins each row's values with commas unquoted: a student's name or id holding a comma
shifts every later column (a CSV reader then sees another score), and one starting with "=" is a formula.
This plugin keeps nbgrader's columns, order and values (a missing submission scores 0, the late penalty is
taken off) and writes each row with the csv module. Wired as the export plugin of `nbgrader export`
(grader/nbgrader_config.py) and used by `grade` (grader/outputs/gradebook.py).
"""
from nbgrader.api import MissingEntry
from nbgrader.plugins import CsvExportPlugin

from grader.outputs.csv_cells import write_rows

COLUMNS = ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email", "raw_score",
           "late_submission_penalty", "score", "max_score"]


def _text(value) -> str:
    return "" if value is None else str(value)


class QuotedCsvExportPlugin(CsvExportPlugin):
    def export(self, gradebook) -> None:
        destination = self.to or "grades.csv"
        students = {str(item) for item in self.student}
        assignments = {str(item) for item in self.assignment}
        self.log.info("Exporting grades to %s", destination)
        rows = [COLUMNS]
        for assignment in gradebook.assignments:
            if assignments and assignment.name not in assignments:
                continue
            for student in gradebook.students:
                if students and student.id not in students:
                    continue
                try:
                    submission = gradebook.find_submission(assignment.name, student.id)
                except MissingEntry:
                    timestamp, raw, penalty, score = "", 0.0, 0.0, 0.0
                else:
                    timestamp, raw = submission.timestamp, submission.score
                    penalty = submission.late_submission_penalty
                    score = max(0.0, raw - penalty)
                rows.append([_text(value) for value in (
                    assignment.name, assignment.duedate, timestamp, student.id, student.last_name,
                    student.first_name, student.email, raw, penalty, score, assignment.max_score)])
        write_rows(destination, rows)
