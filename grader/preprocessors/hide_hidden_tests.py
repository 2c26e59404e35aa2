"""HideHiddenTests: feedback shows hidden tests' results and messages, never their code."""
import re

from nbgrader.preprocessors import NbGraderPreprocessor

HIDDEN_REGION = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS\n?", re.S)


class HideHiddenTests(NbGraderPreprocessor):
    """Feedback: hidden test code is replaced by a note; failures keep only their message."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and "### BEGIN HIDDEN TESTS" in cell.source:
            cell.source = HIDDEN_REGION.sub("# (hidden tests: their code is not shown)\n", cell.source)
            for output in cell.get("outputs", []):
                if output.output_type == "error":
                    output.traceback = [f"{output.ename}: {output.evalue}"]
        return cell, resources
