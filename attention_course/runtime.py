"""The one grading flag of the course.

nbgrader sets NBGRADER_EXECUTION while it autogrades or validates a notebook. Notebooks read it once,
in their setup cell (`GRADING = grading_run()`), and skip long training or shrink measurements then,
so that grading stays fast; the shipped weights in `datasets/` stand in for the training.
"""
import os


def grading_run() -> bool:
    """True while nbgrader autogrades or validates this notebook."""
    return bool(os.environ.get("NBGRADER_EXECUTION"))
