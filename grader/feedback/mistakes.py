"""Named typical mistakes, recognised in a student's graded answer.

The catalogue is the one the tests use: course/<assignment>/answers.py gives WRONG = {exercise: {name:
code}} (grader/authoring/assignment_answers.py), and tests/test_mutants.py checks that each loses points. Here each named
mistake is graded once per assignment by the notebook's own test cells, in the grading sandbox and
with the verdicts decided in the grader (grader.preprocessors.SandboxedExecute), right where the
exercise sits in the solved notebook. What its test cells answered (passed, or the failure message)
is its fingerprint. A student whose test cells of that exercise answer exactly the same, on the same
inputs, made (something that behaves like) that mistake.

Only hashes are kept (`course/named_mistakes/<assignment>.json`, keyed by the source notebook and each
mistake's code), so the catalogue holds no hidden test's message. `python -m grader release` (or `python -m
grader mistakes`) makes it for an assignment whose notebook or catalogue changed, and it ships with the course;
a grader that finds it stale grades the missing mistakes before the first feedback page, as before.
"""
import copy
import fcntl
import hashlib
import json
import re
import time
from pathlib import Path

import nbformat

from grader.limits import FIXED
from grader.authoring import assignment_answers
from grader.course import named_mistakes_dir, nbgrader_meta, write_atomically

NOT_ANSWERED = "NotImplementedError"
_RAISED_IN = "--- raised in your code ---"
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
MISTAKE_CELL_SECONDS = FIXED["mistake_cell_seconds"].value
_MARK = "attention_course_mistake"  # cell metadata of the synthetic notebook's test copies


def catalogue(assignment: str) -> dict:
    """{exercise: {name: code}}: the named wrong answers of `assignment` (course/<assignment>/answers.py)."""
    module = assignment_answers.answers(assignment)
    return {exercise: dict(answers) for exercise, answers in module.WRONG.items()} if module is not None else {}


_JOINED = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]) ([A-Za-z])(?![A-Za-z0-9])")


def describe(name: str) -> str:
    """A mistake's name as words: "divide_by_d_k_not_its_root" -> "divide by d_k not its root"."""
    if " " in name or "_" not in name:
        return name
    words = name.replace("_", " ")
    return _JOINED.sub(r"\1_\2", words)  # d_k, W_q, K_T stay symbols


# -- the fingerprint of one exercise, from an autograded notebook's test cells ---------------------
def outcome(cell) -> str:
    """'passed' or the failure of one test cell, without what differs between kernels (addresses, the
    student's traceback)."""
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    if not errors:
        return "passed"
    error = errors[0]
    message = str(error.get("evalue", "")).split(_RAISED_IN)[0]
    return f"{error.get('ename', '')}: {_ADDRESS.sub('0x', message).strip()}"


def fingerprint(test_cells: list) -> str:
    """The hash of what an exercise's test cells answered; '' when they all passed."""
    outcomes = [outcome(cell) for cell in test_cells]
    if all(o == "passed" for o in outcomes):
        return ""
    text = json.dumps([[nbgrader_meta(c).get("grade_id"), o] for c, o in zip(test_cells, outcomes)])
    return hashlib.sha256(text.encode()).hexdigest()


def exercise_layout(nb) -> dict:
    """exercise -> (index of its answer cell, indices of the cells up to its last test, indices of its
    test cells), in notebook order: an exercise's tests are the grade cells after its answer cell."""
    layout, current = {}, None
    for index, cell in enumerate(nb.cells):
        meta = nbgrader_meta(cell)
        if meta.get("solution") and cell.cell_type == "code":
            current = meta["grade_id"]
            layout[current] = (index, [], [])
        elif current is not None and cell.cell_type == "code":
            if meta.get("grade") and not meta.get("solution"):
                layout[current][2].append(index)
            else:
                layout[current][1].append(index)
    # Cells after an exercise's last test belong to what follows, not to the exercise.
    for exercise, (answer, between, tests) in layout.items():
        last = tests[-1] if tests else answer
        layout[exercise] = (answer, [i for i in between if i < last], tests)
    return layout


# -- the cache ---------------------------------------------------------------------------------
def _digest(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def notebook_digest(source_nb) -> str:
    """What every fingerprint of an assignment depends on: its source notebook's cells."""
    return _digest([[c.cell_type, c.source, nbgrader_meta(c)] for c in source_nb.cells])


class Catalogue:
    """The named mistakes of one assignment and their fingerprints (cached in `cache_dir`)."""

    def __init__(self, assignment: str, source_nb, cache_dir: Path = None):
        self.assignment = assignment
        self.mistakes = catalogue(assignment)  # {} where the answers are not here (the course image)
        self.path = Path(cache_dir or named_mistakes_dir()) / f"{assignment}.json"
        self.notebook = notebook_digest(source_nb)
        stored = {}
        if self.path.is_file():
            try:
                stored = json.loads(self.path.read_text())
            except ValueError:
                stored = {}
        current = self.current = stored.get("notebook") == self.notebook
        self.known = stored.get("fingerprints", {}) if current else {}
        # {exercise: {name: key}}: from the answers where they are, else as the file recorded them
        self.keys = ({exercise: {name: self.key(exercise, name) for name in answers}
                      for exercise, answers in self.mistakes.items()} if self.mistakes
                     else stored.get("names", {}) if current else {})

    def key(self, exercise: str, name: str) -> str:
        return _digest(exercise, name, self.mistakes[exercise][name])

    def missing(self, exercises=None) -> dict:
        """{exercise: [names]} of mistakes not fingerprinted yet (of `exercises`, or all)."""
        wanted = self.mistakes if exercises is None else {e: self.mistakes[e] for e in exercises
                                                           if e in self.mistakes}
        found = {}
        for exercise, answers in wanted.items():
            names = [name for name in answers if self.key(exercise, name) not in self.known]
            if names:
                found[exercise] = names
        return found

    def names_for(self, exercise: str, print_: str) -> list:
        """The mistakes of `exercise` whose fingerprint is `print_` (sorted by name)."""
        if not print_:
            return []
        return sorted(name for name, key in self.keys.get(exercise, {}).items() if self.known.get(key) == print_)

    def save(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(self.path, json.dumps({"notebook": self.notebook, "fingerprints": self.known,
                                                "names": self.keys}, indent=1, sort_keys=True))


def mistakes_notebook(solved_nb, mistakes: dict, answers: dict):
    """The solved notebook with, right after each exercise's tests, one block per named mistake: the wrong
    answer, the cells between the answer and its tests, copies of the test cells (marked), then the
    notebook's answer and those cells again, so the next block starts from the solved state."""
    layout = exercise_layout(solved_nb)
    after = {}  # index of a cell -> blocks inserted after it
    for exercise, names in mistakes.items():
        if exercise not in layout or not layout[exercise][2]:
            continue
        answer, between, tests = layout[exercise]
        blocks = []
        for name in names:
            blocks.append(nbformat.v4.new_code_cell(answers["__wrong__"][exercise][name]))
            blocks += [_plain(solved_nb.cells[i]) for i in between]
            for i in tests:
                copied = copy.deepcopy(solved_nb.cells[i])
                copied.outputs = []
                copied.metadata[_MARK] = [exercise, name]
                blocks.append(copied)
            blocks.append(nbformat.v4.new_code_cell(answers["__solved__"][exercise]))
            blocks += [_plain(solved_nb.cells[i]) for i in between]
        after[tests[-1]] = blocks
    cells = []
    for index, cell in enumerate(solved_nb.cells):
        cells.append(cell)
        cells += after.get(index, [])
    built = copy.deepcopy(solved_nb)
    built.cells = cells
    return built


def _plain(cell):
    """A cell copy without nbgrader metadata (run again, never graded)."""
    copied = copy.deepcopy(cell)
    copied.metadata.pop("nbgrader", None)
    if copied.cell_type == "code":
        copied.outputs = []
    return copied


def fingerprint_mistakes(config, db_url: str, assignment: str, source_dir: Path, release_dir: Path,
                         cache_dir: Path = None, log=print) -> "Catalogue":
    """Make sure every named mistake of `assignment` has a fingerprint, grading the missing ones in one
    sandboxed run of the solved notebook (`config`: the course's, for the sandbox and its limits; the
    gradebook at `db_url` holds the test cells); return the catalogue. Graders working side by side
    wait for the one that grades them (a lock beside the cache)."""
    source_nb = nbformat.read(Path(source_dir) / assignment / f"{assignment}.ipynb", as_version=4)
    found = Catalogue(assignment, source_nb, cache_dir)
    if not found.missing():
        return found
    found.path.parent.mkdir(parents=True, exist_ok=True)
    with open(found.path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = Catalogue(assignment, source_nb, cache_dir)  # another grader may have done it meanwhile
        missing = found.missing()
        if missing:
            _grade_mistakes(found, missing, config, db_url, source_nb, Path(release_dir) / assignment, log)
    return found


def _grade_mistakes(found, missing, config, db_url, source_nb, release, log):
    from grader.limits import GradingLimits
    from grader.preprocessors import SandboxedExecute
    from grader.authoring.samples import answers as solved_answers
    from grader.authoring.samples import fill_answers

    assignment = found.assignment
    solved = fill_answers(nbformat.read(release / f"{assignment}.ipynb", as_version=4), source_nb)
    answers = {"__solved__": solved_answers(source_nb), "__wrong__": found.mistakes}
    built = mistakes_notebook(solved, missing, answers)
    started = time.monotonic()
    # Set in the config, so that they win over the assignment's own limits (grader/authoring/assignment_settings.py).
    config = copy.deepcopy(config)
    config.GradingLimits.notebook_seconds = config.GradingLimits.notebook_cpu_seconds = 0  # many blocks: per cell
    cell_seconds = GradingLimits(config=config).cell_seconds
    config.GradingLimits.cell_seconds = min(cell_seconds or MISTAKE_CELL_SECONDS, MISTAKE_CELL_SECONDS)  # a slow mistake
    execute = SandboxedExecute(config=config)
    resources = {"nbgrader": {"db_url": db_url, "assignment": assignment, "notebook": assignment,
                              "student": "_named_mistakes"},
                 "metadata": {"path": str(release)}}
    try:
        built, _ = execute.preprocess(built, resources)
    except Exception as error:  # noqa: BLE001 (grading goes on; the feedback then names no mistake)
        log(f"named mistakes of {assignment} could not be graded: {type(error).__name__}: {error}"[:500])
        return
    tests = {}
    for cell in built.cells:
        mark = cell.metadata.get(_MARK)
        if mark:
            tests.setdefault(tuple(mark), []).append(cell)
    for (exercise, name), cells in tests.items():
        found.known[found.key(exercise, name)] = fingerprint(cells)
    found.save()
    count = sum(len(names) for names in missing.values())
    log(f"named mistakes of {assignment}: {count} graded in {time.monotonic() - started:.0f} s "
        f"(cached in {found.path})")
