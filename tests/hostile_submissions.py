"""Broken and hostile submissions of the fixture assignment, each with the score it must get.

The fixture (tests/fixtures/solutions/00_fixture) has two exercises:
`add` (visible 1 + hidden 1 point) and `mean_of` (visible 1 + hidden 2 points); 5 points in all.
Each case writes one student's submission folder; EXPECTED gives (score, text that must appear in
the grader's error for that student, or in the student's feedback, or None).
"""
import json

import nbformat

from grader.course import nbgrader_meta
from grader.samples import fill_answers

ASSIGNMENT = "00_fixture"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"


def answer_cell(notebook, grade_id):
    return next(c for c in notebook.cells if nbgrader_meta(c).get("grade_id") == grade_id)


def solved(student, source):
    return fill_answers(student, source, 1.0)


def write(folder, notebook, name=NOTEBOOK):
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / name)


def with_answer(student, source, grade_id, code, others_solved=True):
    notebook = fill_answers(student, source, 1.0 if others_solved else 0.0)
    answer_cell(notebook, grade_id).source = code
    return notebook


def case_solved(folder, student, source):
    write(folder, solved(student, source))


def case_blank(folder, student, source):
    write(folder, student)


def case_invalid_json(folder, student, source):
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).write_text("{ this is not a notebook")


def case_missing_notebook(folder, student, source):
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("I forgot to upload my notebook")


def case_renamed_notebook(folder, student, source):
    write(folder, solved(student, source), name=f"{ASSIGNMENT} (1).ipynb")


def case_syntax_error(folder, student, source):
    write(folder, with_answer(student, source, "add", "def add(a, b)\n    return a + b"))


def case_exception_at_import(folder, student, source):
    write(folder, with_answer(student, source, "add", "import module_that_does_not_exist\n\ndef add(a, b):\n    return a + b"))


def case_infinite_loop(folder, student, source):
    write(folder, with_answer(student, source, "mean_of", "def mean_of(values):\n    while True:\n        pass"))


def case_kernel_exit(folder, student, source):
    write(folder, with_answer(student, source, "add", "import os\n\ndef add(a, b):\n    os._exit(3)"))


def case_memory_bomb(folder, student, source):
    code = "hoard = bytearray(64 * 1024 ** 3)\n\ndef mean_of(values):\n    return sum(values) / len(values)"
    write(folder, with_answer(student, source, "mean_of", code))


def case_huge_output(folder, student, source):
    code = "print('x' * 5_000_000)\nfor i in range(100_000):\n    print(i)\n\ndef add(a, b):\n    return a + b"
    write(folder, with_answer(student, source, "add", code))


def case_deleted_test_cells(folder, student, source):
    notebook = nbformat.from_dict(student)
    notebook.cells = [c for c in notebook.cells if not nbgrader_meta(c).get("grade")]
    write(folder, notebook)


def case_edited_test_cells(folder, student, source):
    notebook = nbformat.from_dict(student)
    for cell in notebook.cells:
        if nbgrader_meta(cell).get("grade"):
            cell.source = "pass  # no more asserts"
    write(folder, notebook)


def case_edited_metadata(folder, student, source):
    notebook = fill_answers(student, source, 0.5)  # add solved, mean_of not
    for cell in notebook.cells:
        meta = nbgrader_meta(cell)
        if meta.get("grade_id") == "test_add_visible":
            meta["points"] = 100
        if meta.get("grade_id", "").startswith("test_mean_of"):
            meta["grade"] = False
            cell.source = "pass"
    write(folder, notebook)


def case_patched_helpers(folder, student, source):
    code = "math.isclose = lambda *args, **kwargs: True\n\ndef mean_of(values):\n    return 0"
    write(folder, with_answer(student, source, "mean_of", code))


def case_patched_with_setattr(folder, student, source):
    code = "setattr(math, 'isclose', lambda *args, **kwargs: True)\n\ndef mean_of(values):\n    return 0"
    write(folder, with_answer(student, source, "mean_of", code))


def case_redefined_setup_name(folder, student, source):
    code = "class FakeMath:\n    def isclose(self, *args, **kwargs):\n        return True\n\nmath = FakeMath()\n\ndef mean_of(values):\n    return 0"
    write(folder, with_answer(student, source, "mean_of", code))


def case_hard_coded(folder, student, source):
    notebook = nbformat.from_dict(student)
    answer_cell(notebook, "add").source = "def add(a, b):\n    return 3"
    answer_cell(notebook, "mean_of").source = "def mean_of(values):\n    return 2"
    write(folder, notebook)


def case_stderr_noise(folder, student, source):
    code = "import sys\n\ndef add(a, b):\n    print('debug: adding', a, b, file=sys.stderr)\n    return a + b"
    write(folder, with_answer(student, source, "add", code))


def case_large_extra_file(folder, student, source):
    write(folder, solved(student, source))
    with open(folder / "dataset_copy.bin", "wb") as handle:
        handle.truncate(20 * 1024 * 1024)


# case -> (builder, score, text expected in the grader's error or the student's feedback)
EXPECTED = {
    "solved": (case_solved, 5.0, None),
    "blank": (case_blank, 0.0, None),
    "invalid_json": (case_invalid_json, 0.0, "not a valid notebook"),
    "missing_notebook": (case_missing_notebook, 0.0, "notebook missing"),
    "renamed_notebook": (case_renamed_notebook, 5.0, None),
    "syntax_error": (case_syntax_error, 3.0, "SyntaxError"),
    "exception_at_import": (case_exception_at_import, 3.0, "ModuleNotFoundError"),
    "infinite_loop": (case_infinite_loop, 2.0, "CellTimeoutError"),
    "kernel_exit": (case_kernel_exit, 3.0, "the kernel exited (code 3)"),
    "memory_bomb": (case_memory_bomb, 2.0, "MemoryError"),
    "huge_output": (case_huge_output, 5.0, "output truncated by the grader"),
    "deleted_test_cells": (case_deleted_test_cells, 0.0, None),
    "edited_test_cells": (case_edited_test_cells, 0.0, None),
    "edited_metadata": (case_edited_metadata, 2.0, None),
    "patched_helpers": (case_patched_helpers, 2.0, "assigns to math.isclose"),
    "patched_with_setattr": (case_patched_with_setattr, 2.0, "calls setattr on math"),
    "redefined_setup_name": (case_redefined_setup_name, 2.0, "redefines math"),
    "hard_coded": (case_hard_coded, 2.0, None),
    "stderr_noise": (case_stderr_noise, 5.0, "[stderr] debug: adding"),
    "large_extra_file": (case_large_extra_file, 5.0, None),
}


def write_all(target, student, source):
    for name, (builder, _, _) in EXPECTED.items():
        builder(target / name / ASSIGNMENT, student, source)
    return list(EXPECTED)


def json_size(path) -> int:
    return len(json.dumps(json.loads(path.read_text())))
