"""Which earlier exercises a test calls, so that one mistake costs points once.

Every test cell of an exercise starts with

    testing("attention", calls=("scaled_dot_score", "softmax", "masked_softmax"))

naming its exercise and the functions of earlier exercises that it (or the exercise's own answer)
calls. The same line does two things:

- When your work is graded, the test cells run in the grader (grader/trusted_tests.py), and for the rest
  of the cell the grader's own correct versions of the functions in `calls` stand in for yours: your
  `attention` is graded on its own, whatever your `scaled_dot_score` does. The correct versions run in
  the grader and answer your code's calls only while this test runs; none of their code reaches you.
  A layer (a class) stands in as the course's test double of it (`DOUBLES`), whose arithmetic the
  test knows.
- In your own kernel (Run, Validate), it remembers whether each exercise's test passed, and when a test
  fails it names the earlier function that has not passed its own test: "This check calls your
  `scaled_dot_score`, which fails its own test: fix that first."
"""
import sys

# Earlier exercises whose correct version cannot run in the grader (a Keras layer, or notebook 03's attention step
# called on symbolic tensors, is built in your kernel): while graded, the course's test double of that name in
# attention_course.layer_doubles stands in instead (plain arithmetic, none of the answer).
DOUBLES = {"EncoderLayer": "EncoderLayerDouble", "DecoderLayer": "DecoderLayerDouble", "Encoder": "EncoderDouble",
           "Decoder": "DecoderDouble", "AttentionPooling": "AttentionPoolingDouble",
           "one_step_attention": "one_step_attention_double"}
STAND_IN = None  # while graded: the grader's function that puts its correct versions in place for one test
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
    if calls:  # until the cell ends, an error it shows ends with the dependency note (if any)
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


def _show_with_note(shell, kind, error, trace, tb_offset=None):
    note = dependency_note()
    if note and note not in getattr(error, "__notes__", ()):
        error.add_note(note)
    shell.showtraceback((kind, error, trace), tb_offset=tb_offset)
    return []
