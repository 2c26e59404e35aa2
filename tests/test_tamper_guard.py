"""The tamper guard flags answers that patch what tests use, and never a real solution."""
import pytest

from grader.preprocessors import FORBIDDEN_MODULES, find_tampering, tampering_problems
from tests.course_files import ASSIGNMENTS, source_notebook

MODULES = {"np", "numpy", "math", "checks", "attention_course", "keras", "tf", "sys"}
FIXED = {"np", "check_close", "check_shape", "math"}
FORBIDDEN = set(FORBIDDEN_MODULES)

CHEATS = {
    "np.allclose = lambda *a, **k: True": "assigns to np.allclose",
    "import attention_course.checks as checks\nchecks.check_close = print": "assigns to checks.check_close",
    "def f():\n    np.testing.assert_allclose = print": "assigns to np.testing.assert_allclose",
    "setattr(np, 'isclose', None)": "calls setattr on np",
    "import builtins\nbuiltins.len = lambda x: 3": "imports builtins",
    "exec('np.allclose = print')": "calls exec()",
    "check_close = lambda *a, **k: None": "redefines check_close",
    "def check_shape(*a, **k):\n    pass": "redefines check_shape",
    "type(np).__setattr__(np, 'isclose', print)": "reaches into __setattr__",
    "sys.modules['numpy'] = None": "assigns to sys.modules['numpy']",
    "from unittest import mock": "imports unittest",
}
HONEST = [
    "import numpy as np\nimport sys\n\ndef add(a, b):\n    print('x', file=sys.stderr)\n    return a + b",
    "class Pool:\n    def build(self):\n        self.w = np.zeros(3)\n        self.w[0] = 1",
    "def f(x):\n    y = np.zeros(3)\n    y[0] = x\n    return y",
    "model.compile(optimizer='adam')",
]


@pytest.mark.parametrize("code, reason", CHEATS.items())
def test_cheat_is_flagged_with_its_line(code, reason):
    problem = find_tampering(code, FIXED, MODULES, FORBIDDEN)
    assert problem and reason in problem, f"{code!r}: got {problem!r}"


@pytest.mark.parametrize("code", HONEST)
def test_honest_code_passes(code):
    assert find_tampering(code, FIXED, MODULES, FORBIDDEN) is None


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_no_solution_answer_is_flagged(assignment):
    assert tampering_problems(source_notebook(assignment)) == {}
