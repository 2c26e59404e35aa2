"""LimitOutputSize: each cell's printed text capped in characters (nbgrader's LimitOutput counts lines)."""
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer


class LimitOutputSize(NbGraderPreprocessor):
    """Cap each cell's printed text (nbgrader's LimitOutput counts lines, not characters)."""

    max_characters = Integer(20_000, help="Characters of stream output kept per cell").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code":
            budget = self.max_characters
            for output in cell.get("outputs", []):
                if output.output_type == "stream":
                    if len(output.text) > budget:
                        kept = output.text[:max(budget, 0)]
                        output.text = kept + "\n... [output truncated by the grader]\n"
                    budget -= len(output.text)
        return cell, resources
