"""Broken and hostile submissions of the fixture assignment, each with the score it must get.

The fixture (tests/fixtures/solutions/00_fixture) has two exercises:
`add` (visible 1 + hidden 1 point) and `mean_of` (visible 1 + hidden 2 points); 5 points in all.
Each case writes one student's submission folder; EXPECTED gives (score, text that must appear in
the grader's error for that student, or in the student's feedback, or None).
"""
import itertools
import json

import nbformat

from grader.trusted import cell_outcome
from grader.course import nbgrader_meta
from grader.authoring.samples import fill_answers

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


# --- Tricks: every answer wrong, plus one trick; each must score what the wrong answers alone score (0). ---
WRONG_ADD = "def add(a, b):\n    return a - b"
WRONG_MEAN = "def mean_of(values):\n    return 0.0"


def walk_files(body: str) -> str:
    """Code that runs `body` (with `folder` and `files`) for every folder the kernel can see: how a student
    who has read the repository would look for solutions, gradebooks and other students' work."""
    return ("import os\nfor folder, dirs, files in os.walk('/'):\n"
            "    dirs[:] = [d for d in dirs if d not in ('proc', 'sys', 'dev', 'usr')]\n"
            + "".join(f"    {line}\n" for line in body.splitlines()))
MARKER = "attention-course-hostile-process"


def wrong_with(student, source, trick_add="", trick_mean="", extra_cell=None, answer_add=WRONG_ADD,
               answer_mean=WRONG_MEAN):
    """Both answers wrong; `trick_*` code goes before the answer; `extra_cell` is a new code cell (or a list)."""
    notebook = nbformat.from_dict(student)
    answer_cell(notebook, "add").source = f"{trick_add}\n{answer_add}".strip()
    answer_cell(notebook, "mean_of").source = f"{trick_mean}\n{answer_mean}".strip()
    extra = [extra_cell] if isinstance(extra_cell, str) else list(extra_cell or [])
    index = notebook.cells.index(answer_cell(notebook, "add"))
    for source in reversed(extra):
        notebook.cells.insert(index, nbformat.v4.new_code_cell(source))
    return notebook


TRICKS = {
    # patching what the tests use, by routes a blacklist would miss
    "alias_patch": dict(trick_mean="import math as m\nm.isclose = lambda *a, **k: True"),
    "module_found_through_module": dict(trick_mean="import os\nos.sys.modules['math'].isclose = lambda *a, **k: True"),
    "setter_reached_indirectly": dict(trick_mean="import math\nf = getattr(__import__('builtins'), 'set' + 'attr')\n"
                                                 "f(math, 'isclose', lambda *a, **k: True)"),
    "builtins_patched": dict(trick_add="import builtins\nbuiltins.AssertionError = type('Ignored', (Exception,), {})"),
    "free_cell_patch": dict(extra_cell="import math\nmath.isclose = lambda *a, **k: True"),
    "always_equal_result": dict(answer_add="class Same:\n    def __eq__(self, other):\n        return True\n"
                                           "    def __bool__(self):\n        return True\n\n"
                                           "def add(a, b):\n    return Same()"),
    # IPython's own machinery
    "input_transformer": dict(extra_cell="get_ipython().input_transformers_cleanup.append("
                                         "lambda lines: ['pass\\n'] if any('assert' in l for l in lines) else lines)"),
    "ast_transformer": dict(extra_cell="import ast\nclass Drop(ast.NodeTransformer):\n"
                                       "    def visit_Assert(self, node):\n        return ast.Pass()\n"
                                       "get_ipython().ast_transformers.append(Drop())"),
    "pre_run_callback": dict(extra_cell="def patch(*args):\n    import math\n    math.isclose = lambda *a, **k: True\n"
                                        "get_ipython().events.register('pre_run_cell', patch)"),
    "user_namespace": dict(extra_cell="ns = get_ipython().user_ns\nns['math'] = type('M', (), "
                                      "{'isclose': staticmethod(lambda *a, **k: True)})()"),
    "execute_handler_hijack": dict(extra_cell="k = get_ipython().kernel\nk.shell_handlers['execute_request'] = "
                                              "lambda *a, **kw: None"),
    # reading the expected value out of the test's frame
    "frame_reader": dict(answer_mean="import inspect\ndef mean_of(values):\n    frame = inspect.currentframe().f_back\n"
                                    "    while frame is not None:\n        for v in frame.f_locals.values():\n"
                                    "            if isinstance(v, float):\n                return v\n"
                                    "        frame = frame.f_back\n    return 0.0"),
    # output tricks
    "display_fake_result": dict(trick_add="from IPython.display import display\n"
                                          "display({'text/plain': \"'full marks'\"}, raw=True)"),
    "publish_execute_result": dict(extra_cell="import math\nfrom IPython import get_ipython\n"
                                              "get_ipython().displayhook.write_output_prompt()\n"
                                              "get_ipython().display_pub.publish({'text/plain': '5'})"),
    "stderr_from_wrong_answer": dict(trick_add="import sys\nsys.stderr.write('x' * 1000)"),
    # the grader's agent in the kernel
    "forged_agent_replies": dict(extra_cell="import sys, json\nfrom comm import create_comm\n"
                                            "def serve(text):\n    create_comm(target_name='attention-course-reply', "
                                            "data={'reply': json.dumps({'value': True})}).close()\n"
                                            "for name in list(sys.modules):\n    if 'grading_agent' in name:\n"
                                            "        sys.modules[name].serve = serve"),
    "huge_reply": dict(answer_add="import numpy\ndef add(a, b):\n    return numpy.zeros((60, 1024, 1024))"),
    # the grader's own work on what a kernel sends: an error message of 20 MB, sixty cells of 1.5 MB displays
    "huge_error": dict(answer_add="def add(a, b):\n    raise ValueError('e' * 20_000_000)"),
    "many_full_cells": dict(extra_cell=["from IPython.display import display\n"
                                        "display({'text/plain': 'o' * 1_500_000}, raw=True)"] * 60),
    "deep_reply": dict(answer_add="def add(a, b):\n    x = []\n    for _ in range(500):\n        x = [x]\n    return x"),
    # the filesystem: solutions, the gradebook, other students, the course package
    "read_solutions": dict(trick_add="found = None\n" + walk_files(
        "for f in files:\n    if f.endswith('.ipynb') and 'solutions' in folder:\n        found = os.path.join(folder, f)")
        + "if found:\n    raise SystemExit('found ' + found)"),
    "rewrite_gradebook": dict(extra_cell="import sqlite3\n" + walk_files(
        "if 'gradebook.db' in files:\n    db = sqlite3.connect(os.path.join(folder, 'gradebook.db'))\n"
        "    db.execute('UPDATE grade SET manual_score = 99')\n    db.commit()")),
    "vandalise_other_students": dict(extra_cell=walk_files(
        "for f in files:\n    if f == '00_fixture.ipynb':\n        try:\n"
        "            open(os.path.join(folder, f), 'w').write('{}')\n        except OSError:\n            pass")),
    "poison_course_package": dict(extra_cell="import os, attention_course\n"
                                             "path = os.path.join(os.path.dirname(attention_course.__file__), 'checks.py')\n"
                                             "try:\n    open(path, 'a').write('\\nraise SystemExit\\n')\nexcept OSError:\n    pass"),
    # processes that outlive the kernel
    "detached_process": dict(extra_cell="import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', "
                                        f"'import time; time.sleep(60)  # {MARKER}'], start_new_session=True, "
                                        "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)"),
    "double_fork": dict(extra_cell=f"import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
                                   f"        os.execvp('sleep', ['sleep', '61', '{MARKER}'])\n    os._exit(0)"),
    "network": dict(extra_cell="import socket\ntry:\n    socket.create_connection(('127.0.0.1', 8888), timeout=1)\n"
                               "except OSError:\n    pass"),
    # kernel data written into the test's own objects: the call empties the test's list before the test
    # computes its expected value from it
    "write_back_into_test": dict(answer_mean="def mean_of(values):\n    values[:] = [0.0] * len(values)\n"
                                             "    return 0.0"),
    # budgets: cells that each stay just under the cell timeout, and an agent that answers slowly
    "slow_cells": dict(extra_cell=["import time\ntime.sleep(4.5)"] * 12),
    # (in the second answer cell: the agent is installed when the first test cell runs, after the first answer)
    "slow_agent": dict(trick_mean="import sys, time\n" "for name in list(sys.modules):\n"
                                  "    if 'grading_agent' in name:\n        module = sys.modules[name]\n"
                                  "        original = module._answer\n"  # every request, in a comm handler or not
                                  "        module._answer = lambda *request, original=original, **how: "
                                  "(time.sleep(30), original(*request, **how))[1]"),
    # aggregate limits: files in every writable place, many processes, the kernel's own stderr, huge outputs
    "fill_every_tmpfs": dict(extra_cell="import os\nchunk = b'x' * 2 ** 24\n"
                                        "for folder in ('/tmp', '/dev/shm', os.path.expanduser('~'), '.'):\n"
                                        "    try:\n        with open(os.path.join(folder, 'filler'), 'wb') as f:\n"
                                        "            for _ in range(256):\n                f.write(chunk)\n"
                                        "    except OSError:\n        pass"),
    "fill_socket_folder": dict(extra_cell="import os, sys\nfolder = os.path.dirname(sys.argv[sys.argv.index('-f') + 1])\n"
                                          "try:\n    with open(os.path.join(folder, 'filler'), 'wb') as f:\n"
                                          "        for _ in range(32):\n            f.write(b'z' * 2 ** 24)\n"
                                          "except OSError:\n    pass"),
    "many_processes": dict(extra_cell="import subprocess\nkept = []\ntry:\n    for _ in range(3000):\n"
                                      "        kept.append(subprocess.Popen(['sleep', '120', "
                                      f"'{MARKER}'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))\n"
                                      "except OSError:\n    pass"),
    "flood_kernel_stderr": dict(extra_cell="import os\nblock = b'e' * 2 ** 20\nfor _ in range(200):\n"
                                           "    os.write(2, block)"),
    "huge_display": dict(extra_cell="from IPython.display import display\n"
                                    "display({'text/plain': 'x' * (150 * 2 ** 20)}, raw=True)"),
    "many_displays": dict(extra_cell="from IPython.display import display\nfor _ in range(40):\n"
                                     "    display({'text/plain': 'y' * 2 ** 20}, raw=True)"),
    # the grader's own words: exceptions named like its outcomes, a raised TimeoutError (grader.trusted.cell_outcome)
    "named_like_the_grader": dict(
        answer_add="class GradingBudgetSpent(Exception):\n    pass\n\nclass CellTimeoutError(Exception):\n    pass\n\n"
                   "def add(a, b):\n    raise CellTimeoutError('the test cell ran out of time')\n\n"
                   "raise GradingBudgetSpent('not run: the notebook used up its grading budget of 1 s of wall-clock time')",
        answer_mean="class KernelDied(Exception):\n    pass\n\nclass NotRun(Exception):\n    pass\n\n"
                    "def mean_of(values):\n    raise NotRun('not run: the kernel died 3 times in this notebook')\n\n"
                    "raise KernelDied('the kernel exited (code 3) while running this cell')"),
    "raised_timeout": dict(answer_add="def add(a, b):\n    raise TimeoutError('the test cell ran out of time')",
                           answer_mean="def mean_of(values):\n    raise TimeoutError('timed out')"),
    # privileges: user namespaces inside the sandbox, root's files in the read-only views
    "nested_namespace": dict(extra_cell="import subprocess\nsubprocess.run(['unshare', '-Ur', 'id'], "
                                        "capture_output=True)"),
}


def _trick_builder(options):
    def build(folder, student, source):
        write(folder, wrong_with(student, source, **options))
    return build


def case_wrong_answers(folder, student, source):
    write(folder, wrong_with(student, source))


def case_forged_outcomes(folder, student, source):
    """Wrong answers, every cell claiming the grader's outcome for it (only the grading may write one)."""
    notebook = wrong_with(student, source)
    for cell, outcome in zip(notebook.cells, itertools.cycle(cell_outcome.OUTCOMES)):
        cell.metadata[cell_outcome.KEY] = outcome
    write(folder, notebook)


EXPECTED["wrong_answers"] = (case_wrong_answers, 0.0, None)
EXPECTED["trick_forged_outcomes"] = (case_forged_outcomes, 0.0, None)
for _name, _options in TRICKS.items():
    EXPECTED[f"trick_{_name}"] = (_trick_builder(_options), 0.0, None)
