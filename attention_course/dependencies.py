"""Which earlier exercises a test calls, so that one mistake costs points once.

Every test cell of an exercise starts with

    testing("attention", calls=("scaled_dot_score", "softmax", "masked_softmax"))

naming its exercise and the functions of earlier exercises that it (or the exercise's own answer)
calls. The same line does two things:

- When your work is graded, the test cells run in the grader (grader/trusted/trusted_tests.py), and for the rest
  of the cell the grader's own correct versions of the functions in `calls` stand in for yours: your
  `attention` is graded on its own, whatever your `scaled_dot_score` does. The correct versions run in
  the grader and answer your code's calls only while this test runs; none of their code reaches you.
  A layer (a class) stands in as the course's test double of it (`DOUBLES`), whose arithmetic the
  test knows.
- In your own kernel (Run, Validate), it remembers whether each exercise's test passed, and when a test
  fails it names the earlier function that has not passed its own test: "This check calls your
  `scaled_dot_score`, which fails its own test: fix that first." When a visible test fails exactly as
  one of the course's named mistakes makes it fail, it says so: "This looks like: softmax over queries."
  (`mistake_digests.json` holds only digests of those failures, made by grader/feedback/visible_mistakes.py:
  none of the mistakes' code, nothing of a hidden test.)
"""
import hashlib
import json
import re
import sys
from pathlib import Path

# Earlier exercises whose correct version cannot run in the grader (a Keras layer, or notebook 03's attention step
# called on symbolic tensors, is built in your kernel): while graded, the course's test double of that name in
# attention_course.layer_doubles stands in instead (plain arithmetic, none of the answer).
DOUBLES = {"EncoderLayer": "EncoderLayerDouble", "DecoderLayer": "DecoderLayerDouble", "Encoder": "EncoderDouble",
           "Decoder": "DecoderDouble", "AttentionPooling": "AttentionPoolingDouble",
           "one_step_attention": "one_step_attention_double"}
STAND_IN = None  # while graded: the grader's function that puts its correct versions in place for one test
MISTAKE_DIGESTS = Path(__file__).with_name("mistake_digests.json")
RAISED_IN = "--- raised in your code ---"  # what follows in a message (frames of the student's code) differs by run
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
# TensorFlow names the kernel that raised ("{{function_node __wrapped____MklMatMul_device_/job:...}}"), which
# depends on the machine's CPU and build (oneDNN or not), not on the student's mistake
_TF_KERNEL = re.compile(r"\{\{function_node [^}]*\}\}\s*")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_digests = None  # digest -> the named mistakes that fail a visible test so
last_failure = None  # the exact and number-free digests of the last failing test cell (for grader/feedback/visible_mistakes.py)
_current = None  # (exercise, calls) of the test cell running in this kernel
_results = {}  # exercise -> (passed, the notebook's object of that name when its test ran)
_hooks_installed = False


def testing(exercise: str, calls=()):
    """Declare the exercise this test cell checks and the earlier exercises it calls (see the module)."""
    global _current
    calls = tuple(calls)
    if STAND_IN is not None:
        STAND_IN(calls)
        return
    shell = _shell()
    if shell is None:
        return
    _install_hooks(shell)
    _current = (exercise, calls)
    # Until the cell ends, an error it shows ends with the notes: the dependencies, the named mistake.
    shell.set_custom_exc((Exception,), _show_with_note)


def _shell():
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


def _notebook_object(name: str):
    return sys.modules["__main__"].__dict__.get(name)


def dependency_note() -> str:
    """What a failure of the running test should add: the earlier functions it calls that have not passed
    their own test as they are now ('' when they all have)."""
    notes = []
    for name in (_current[1] if _current else ()):
        record = _results.get(name)
        if record is None:
            notes.append(f"This check calls your `{name}`, whose own test has not run yet: run that test cell "
                         "first.")
        elif not record[0]:
            notes.append(f"This check calls your `{name}`, which fails its own test: fix that first.")
        elif record[1] is not _notebook_object(name):
            notes.append(f"This check calls your `{name}`, which changed after its test passed: run its test "
                         "cell again.")
    return " ".join(notes)


def _install_hooks(shell):
    global _hooks_installed
    if _hooks_installed:
        return
    shell.events.register("pre_run_cell", _before_cell)
    shell.events.register("post_run_cell", _after_cell)
    _hooks_installed = True


def _before_cell(*info):
    global _current
    _current = None


def _after_cell(result):
    """Remember whether the test cell that just ran passed, and stop naming its dependencies."""
    global _current
    if _current is not None:
        exercise = _current[0]
        _results[exercise] = (bool(result.success), _notebook_object(exercise))
        _current = None
        shell = _shell()
        if shell is not None and shell.custom_exceptions == (Exception,):
            shell.set_custom_exc((), None)


def failure_digest(exercise: str, error: BaseException, exact: bool = True) -> str:
    """What identifies a failure of `exercise`'s test: its type and message, without what differs between
    runs (addresses, the frames of the student's code). With exact=False its numbers are left out too, for
    checks whose values depend on the notebook's state (a model's random weights): the same check failing
    with other numbers then gives the same digest."""
    message = _TF_KERNEL.sub("", _ADDRESS.sub("0x", str(error).split(RAISED_IN)[0])).strip()
    text = f"{exercise}\n{type(error).__name__}: {message}"
    if not exact:  # NumPy pads printed numbers to a common width ("0.513  0.487 ]"): every space goes with them
        text = "numbers left out\n" + "".join(_NUMBER.sub("#", text).split())
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def mistake_note(exercise: str, error: BaseException) -> str:
    """'This looks like: <named mistake>.' when the failure is one a named mistake of `exercise` gives: the same
    message, else the same message but for its numbers (then every mistake failing that check so is named)."""
    global _digests
    if _digests is None:
        try:
            stored = json.loads(MISTAKE_DIGESTS.read_text())
            _digests = {digest: names for table in stored["digests"].values() for digest, names in table.items()}
        except (OSError, ValueError, KeyError, AttributeError):
            _digests = {}
    names = _digests.get(failure_digest(exercise, error)) or _digests.get(failure_digest(exercise, error, exact=False))
    return f"This looks like: {' or '.join(names)}." if names else ""


def _show_with_note(shell, kind, error, trace, tb_offset=None):
    global last_failure
    exercise = _current[0] if _current else ""
    last_failure = f"{failure_digest(exercise, error)} {failure_digest(exercise, error, exact=False)}"
    for note in (dependency_note(), mistake_note(exercise, error)):
        if note and note not in getattr(error, "__notes__", ()):
            error.add_note(note)
    shell.showtraceback((kind, error, trace), tb_offset=tb_offset)
    return []
