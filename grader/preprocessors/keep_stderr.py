"""PassingTestsKeepStderr: stderr printed by a test cell that raised nothing is kept as text but no longer
fails the cell (nbgrader's default fails it, which punishes correct answers that log)."""
from nbgrader.preprocessors import NbGraderPreprocessor

from grader.trusted.bridge import mark_stderr
from grader.course import nbgrader_meta


class PassingTestsKeepStderr(NbGraderPreprocessor):
    """In a test cell that raised nothing, stderr text moves to stdout (marked), so it doesn't cost points."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and nbgrader_meta(cell).get("grade"):
            outputs = cell.get("outputs", [])
            if not any(o.output_type == "error" for o in outputs):
                for output in outputs:
                    if output.output_type == "stream" and output.name == "stderr":
                        output.name = "stdout"
                        output.text = mark_stderr(output.text)
        return cell, resources
