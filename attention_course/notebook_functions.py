"""Your own functions from an earlier notebook of the course, without copying them.

Notebook 08 scores translations with sacrebleu and, beside it, with the `bleu` you wrote in notebook 01.
`functions_from_notebook` reads that notebook file (your copy, next to this one), runs the answer cells
with the given nbgrader grade_ids in a fresh namespace that has `np`, `math` and `Counter`, and returns
the functions they define. It never runs anything else of that notebook (no setup cell, no training).
Nothing here is an answer: it only finds yours.
"""
import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np

_MARKER = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")


def functions_from_notebook(path, grade_ids) -> dict:
    """{name: function} for the answer cells `grade_ids` of the notebook at `path`, run in that order.

    Raises FileNotFoundError when there is no such notebook (for example while grading, where only this
    notebook is present) and KeyError when one of the cells is missing. A function you have not written
    yet is returned as it is: calling it raises NotImplementedError.
    """
    path = Path(path)
    cells = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id and cell.get("cell_type") == "code":
            source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            cells[grade_id] = "\n".join(line for line in source.splitlines() if not _MARKER.match(line))
    missing = [grade_id for grade_id in grade_ids if grade_id not in cells]
    if missing:
        raise KeyError(f"{path.name} has no answer cell {', '.join(missing)}")
    namespace = {"np": np, "math": math, "Counter": Counter, "__name__": "notebook_functions"}
    for grade_id in grade_ids:
        exec(compile(cells[grade_id], f"{path.name} cell {grade_id}", "exec"), namespace)
    return {grade_id: namespace[grade_id] for grade_id in grade_ids if callable(namespace.get(grade_id))}
