"""In the student's own kernel, a test that fails because an earlier exercise is wrong says so by name
(attention_course.dependencies), and the notebook's defaults follow a swapped global
(attention_course.kernel_side.set_globals)."""
import pytest
from jupyter_client.manager import start_new_kernel

from attention_course import kernel_side


@pytest.fixture(scope="module")
def kernel():
    manager, client = start_new_kernel(kernel_name="python3")
    yield client
    client.stop_channels()
    manager.shutdown_kernel(now=True)


def run(client, code) -> str:
    """The text of the cell's error (its traceback, notes included), '' when it passed."""
    errors = []

    def hook(message):
        if message["msg_type"] == "error":
            errors.append("\n".join(message["content"]["traceback"]) + message["content"]["evalue"])
    client.execute_interactive(code, output_hook=hook, timeout=60)
    return "".join(errors)


def test_a_failure_names_the_earlier_function_that_fails_its_own_test(kernel):
    run(kernel, "from attention_course.dependencies import testing\n"
                "def double(x):\n    return 3 * x\n\ndef quadruple(x):\n    return double(double(x))")
    not_run = run(kernel, "testing('quadruple', calls=('double',))\nassert quadruple(1) == 4, 'quadruple'")
    assert "This check calls your `double`, whose own test has not run yet" in not_run, not_run
    assert "double" in run(kernel, "testing('double')\nassert double(2) == 4, 'double'")
    failed = run(kernel, "testing('quadruple', calls=('double',))\nassert quadruple(1) == 4, 'quadruple'")
    assert "This check calls your `double`, which fails its own test: fix that first." in failed, failed
    assert run(kernel, "def double(x):\n    return 2 * x\n\ntesting('double')\nassert double(2) == 4") == ""
    fixed = run(kernel, "testing('quadruple', calls=('double',))\nassert quadruple(1) == 5, 'quadruple itself'")
    assert "quadruple itself" in fixed and "This check calls" not in fixed, "a passed dependency is not blamed"
    run(kernel, "def double(x):\n    return 2.0 * x")
    changed = run(kernel, "testing('quadruple', calls=('double',))\nassert quadruple(1) == 5, 'q'")
    assert "which changed after its test passed" in changed, changed
    other = run(kernel, "1 / 0")
    assert "ZeroDivisionError" in other and "This check calls" not in other, "only the test cell gets the note"


def test_a_swapped_global_reaches_the_defaults_that_captured_it():
    import sys
    main = sys.modules["__main__"].__dict__
    exec("def score(q):\n    return q\n\ndef attend(q, score_fn=score, *, also=score, size=3):\n"
         "    return score_fn(q), also(q), size", main)
    try:
        number = kernel_side.set_globals({"score": lambda q: -q, "size": 7})
        assert main["attend"](2) == (-2, -2, 3), "defaults that captured the function follow it; numbers do not"
        kernel_side.restore_globals(number)
        assert main["attend"](2) == (2, 2, 3) and main["score"](5) == 5
    finally:
        for name in ("score", "attend"):
            main.pop(name, None)
