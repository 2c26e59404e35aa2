"""What one assignment needs and may use, declared once in `course/<assignment>/assignment.toml`.

    [budgets]            # what a solved notebook must stay within on 2 idle cores (the benchmark checks)
    run_all_seconds      # Run All of the source notebook, training included
    grading_seconds      # `grade` of one solved student, feedback included
    [limits]             # this assignment's values of grader.limits.GradingLimits, over the class's defaults
    [reads]
    datasets             # the files under datasets/ it opens (data and shipped weights), as SHA256SUMS names them
    [kernel]
    imports              # libraries its setup cell imports that grading imports once per grader process, in the
                         # Python its kernels are forked from (grader/sandbox/zygote.py), e.g. ["tensorflow", "keras"]

An instructor's own setting of a limit (`c.GradingLimits.x` in a config, `grade --x`) wins over the
assignment's: the instructor knows the machine. A course of the instructor's own may have no folder (the
class's defaults apply); tests/test_assignment_settings.py requires one for every assignment here.
Which earlier exercises a test calls is declared where the test is, `testing(exercise, calls=(...))`
(the kernel needs it there; grader/authoring/exercise_calls.py checks it against the code).
"""
import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from attention_course.paths import assignments_dir
from grader.course import CourseError
from grader.limits import GradingLimits

FILE_NAME = "assignment.toml"
KEYS = {"budgets": ("run_all_seconds", "grading_seconds"), "limits": None, "reads": ("datasets",),
        "kernel": ("imports",)}
MODULE_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


@dataclass(frozen=True)
class AssignmentSettings:
    assignment: str
    run_all_seconds: int
    grading_seconds: int
    limits: dict  # GradingLimits trait -> this assignment's value
    datasets: tuple  # paths under datasets/
    kernel_imports: tuple  # module names

    def limit(self, name: str):
        """This assignment's value of a GradingLimits trait (the class default where it sets none)."""
        return self.limits.get(name, getattr(GradingLimits, name).default_value)


def settings_path(assignment: str, course: Path = None) -> Path:
    return (course or assignments_dir()) / assignment / FILE_NAME


def _refuse(path: Path, problem: str):
    raise CourseError(f"{path}: {problem}")


def parse(path: Path, assignment: str) -> AssignmentSettings:
    try:
        table = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as error:
        _refuse(path, f"not valid TOML ({error})")
    for section in sorted(set(table) - set(KEYS)):
        _refuse(path, f"unknown section [{section}]; valid: {', '.join(f'[{name}]' for name in KEYS)}")
    for section, names in KEYS.items():
        if not isinstance(table.get(section, {}), dict):
            _refuse(path, f"[{section}] must be a table")
        valid = names if names is not None else tuple(GradingLimits.class_trait_names(config=True))
        for key in sorted(set(table.get(section, {})) - set(valid)):
            _refuse(path, f"unknown key {key!r} in [{section}]; valid: {', '.join(valid)}")
    budgets, limits, reads = table.get("budgets", {}), table.get("limits", {}), table.get("reads", {})
    for name in KEYS["budgets"]:
        if name not in budgets:
            _refuse(path, f"[budgets] needs {name} (seconds, on 2 idle cores)")
    for section, values in (("budgets", budgets), ("limits", limits)):
        for name, value in values.items():
            trait = getattr(GradingLimits, name, None)
            if section == "limits" and type(trait.default_value) is not int:
                _refuse(path, f"[limits] {name} is a switch of the class, not an assignment's limit")
            if type(value) is not int or value <= 0:
                _refuse(path, f"[{section}] {name} must be a whole number above 0, not {value!r}")
    datasets = reads.get("datasets", [])
    if not isinstance(datasets, list) or not all(isinstance(item, str) and item for item in datasets):
        _refuse(path, "[reads] datasets must be a list of paths under datasets/")
    if len(set(datasets)) != len(datasets):
        _refuse(path, "[reads] datasets names a file twice")
    imports = table.get("kernel", {}).get("imports", [])
    if not isinstance(imports, list) or not all(isinstance(name, str) and MODULE_NAME.fullmatch(name)
                                                for name in imports):
        _refuse(path, '[kernel] imports must be a list of module names, such as ["tensorflow", "keras"]')
    return AssignmentSettings(assignment, budgets["run_all_seconds"], budgets["grading_seconds"], dict(limits),
                              tuple(datasets), tuple(imports))


@functools.lru_cache(maxsize=None)
def assignment_settings(assignment: str, course: Path = None):
    """The assignment's settings, or None where it has no folder (its limits are the class's)."""
    path = settings_path(assignment, course)
    return parse(path, assignment) if path.is_file() else None


def _graded(assignment: str):
    """The settings of the assignment being graded, None outside nbgrader or without a folder."""
    return assignment_settings(assignment) if assignment else None


def limit_overrides(assignment: str, explicit) -> dict:
    """The assignment's limits that the instructor's own configuration (`explicit`, the names set in
    c.GradingLimits) leaves to it."""
    found = _graded(assignment)
    return {name: value for name, value in (found.limits if found else {}).items() if name not in explicit}


def kernel_imports(assignment: str) -> tuple:
    """The libraries the assignment's kernels import that their zygote imports first (none without a folder)."""
    found = _graded(assignment)
    return found.kernel_imports if found else ()
