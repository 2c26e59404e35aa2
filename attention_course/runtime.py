"""The one grading flag of the course, and the one clock reading a notebook prints.

nbgrader sets NBGRADER_EXECUTION while it autogrades or validates a notebook. Notebooks read it once,
in their setup cell (`GRADING = grading_run()`), and skip long training or shrink measurements then,
so that grading stays fast; the shipped weights in `datasets/` stand in for the training.

What a notebook prints about time goes through `seconds_since`: in a grading run it prints no clock
reading, so the same submission graded twice gives the same feedback page, byte for byte.
"""
import os
import time

NOT_TIMED = "- (not timed in a grading run)"


def grading_run() -> bool:
    """True while nbgrader autogrades or validates this notebook."""
    return bool(os.environ.get("NBGRADER_EXECUTION"))


def seconds_since(start: float, digits: int = 0) -> str:
    """The time since `start` (a time.perf_counter() reading) as printed text, e.g. '12 s'; in a grading run
    NOT_TIMED instead."""
    if grading_run():
        return NOT_TIMED
    return f"{time.perf_counter() - start:.{digits}f} s"
