"""Each assignment's folder (course/<assignment>/) has every part, and its settings file is read once, by one
loader, strictly; the grader grades each assignment within its own limits, where the instructor set none."""
import pytest
from traitlets.config import Config

from attention_course.datafiles import read_checksums
from attention_course.paths import assignments_dir, datasets_dir
from grader.authoring.assignment_settings import assignment_settings, limit_overrides, parse
from grader.course import CourseError, named_mistakes_dir
from grader.limits import GradingLimits
from grader.preprocessors import SandboxedExecute
from tests.course_files import ASSIGNMENTS

VALID = """
[budgets]
run_all_seconds = 60
grading_seconds = 20

[limits]
cell_seconds = 90
notebook_seconds = 600

[reads]
datasets = ["dates/train.tsv"]

[kernel]
imports = ["tensorflow", "keras"]
"""


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_assignment_has_its_folder(assignment):
    """Adding an assignment means its source notebook plus this folder: wrong and correct answers, all-wrong answers, settings,
    and the shipped catalogue of named mistakes (docs/authoring.md)."""
    folder = assignments_dir() / assignment
    assert (folder / "answers.py").is_file(), f"{folder} has no answers.py (WRONG and CORRECT answers)"
    assert (folder / "all_wrong.py").is_file(), f"{folder} has no all_wrong.py (a wrong answer per answer cell)"
    assert (named_mistakes_dir() / f"{assignment}.json").is_file(), f"no catalogue; run python -m grader mistakes {assignment}"
    settings = assignment_settings(assignment)
    assert settings is not None, f"{folder} has no assignment.toml"
    listed = read_checksums(datasets_dir())
    unknown = [name for name in settings.datasets if name not in listed]
    assert not unknown, f"{assignment} declares files that datasets/SHA256SUMS does not list: {unknown}"
    # The course-wide ceilings the prose promises: 3 minutes of Run All, 60 s to grade a solved student.
    assert settings.run_all_seconds <= 180 and settings.grading_seconds <= 60
    # A solved notebook's grading fits well inside its hard limits (a slow but correct answer still gets graded).
    assert settings.limit("notebook_seconds") >= 10 * settings.grading_seconds
    assert settings.limit("cell_seconds") <= settings.limit("notebook_seconds")


def write(tmp_path, text):
    path = tmp_path / "assignment.toml"
    path.write_text(text)
    return path


def test_a_settings_file_is_read_with_its_units(tmp_path):
    settings = parse(write(tmp_path, VALID), "demo")
    assert (settings.run_all_seconds, settings.grading_seconds) == (60, 20)
    assert settings.limits == {"cell_seconds": 90, "notebook_seconds": 600}
    assert settings.datasets == ("dates/train.tsv",)
    assert settings.kernel_imports == ("tensorflow", "keras")
    assert settings.limit("cell_seconds") == 90
    assert settings.limit("memory_mb") == GradingLimits.memory_mb.default_value


@pytest.mark.parametrize("text, said", [
    (VALID + "\n[grading]\nx = 1\n", "unknown section [grading]; valid: [budgets], [limits], [reads], [kernel]"),
    (VALID.replace("cell_seconds", "cell_timeout"), "unknown key 'cell_timeout' in [limits]; valid: "),
    (VALID.replace("grading_seconds = 20", "grading_secs = 20"), "unknown key 'grading_secs' in [budgets]"),
    (VALID.replace("grading_seconds = 20\n", ""), "[budgets] needs grading_seconds"),
    (VALID.replace("= 600", "= 0"), "[limits] notebook_seconds must be a whole number above 0, not 0"),
    (VALID.replace("= 600", "= 6.5"), "must be a whole number above 0, not 6.5"),
    (VALID.replace("= 600", "= true"), "must be a whole number above 0, not True"),
    (VALID.replace("cell_seconds = 90", "sandbox = 0"), "[limits] sandbox is a switch of the class"),
    (VALID.replace('["dates/train.tsv"]', '"dates/train.tsv"'), "[reads] datasets must be a list"),
    (VALID.replace('["dates/train.tsv"]', '["a", "a"]'), "names a file twice"),
    (VALID.replace('"keras"]', '"keras; import os"]'), "[kernel] imports must be a list of module names"),
    (VALID.replace('["tensorflow", "keras"]', '"tensorflow"'), "[kernel] imports must be a list of module names"),
    (VALID.replace('imports =', 'preload ='), "unknown key 'preload' in [kernel]; valid: imports"),
    ("[budgets\n", "not valid TOML"),
])
def test_a_wrong_settings_file_is_refused_with_what_is_allowed(tmp_path, text, said):
    path = write(tmp_path, text)
    with pytest.raises(CourseError) as raised:
        parse(path, "demo")
    assert said in str(raised.value) and str(path) in str(raised.value)


def test_valid_limit_names_are_listed_when_one_is_wrong(tmp_path):
    with pytest.raises(CourseError) as raised:
        parse(write(tmp_path, VALID.replace("cell_seconds", "cel_seconds")), "demo")
    for name in GradingLimits.class_trait_names(config=True):
        if name != "sandbox":
            assert name in str(raised.value)


def real_override():
    """An assignment of the course that sets a limit of its own, and that limit."""
    for assignment in ASSIGNMENTS:
        found = assignment_settings(assignment)
        if found and found.limits:
            name, value = sorted(found.limits.items())[0]
            return assignment, name, value
    pytest.skip("no assignment sets a limit of its own")


def test_the_grader_grades_an_assignment_within_its_own_limits():
    assignment, name, value = real_override()
    assert value != getattr(GradingLimits, name).default_value
    execute = SandboxedExecute()
    limits = execute._assignment_limits({"nbgrader": {"assignment": assignment}})
    assert getattr(limits, name) == value
    # The other limits stay the class's; another assignment (or none) gets the class's.
    others = [other for other in GradingLimits.class_trait_names(config=True) if other not in
              assignment_settings(assignment).limits]
    assert all(getattr(limits, other) == getattr(execute._class_limits, other) for other in others)
    assert getattr(execute._assignment_limits({"nbgrader": {"assignment": "no_such"}}), name) == \
        getattr(GradingLimits, name).default_value
    assert getattr(execute._assignment_limits(None), name) == getattr(GradingLimits, name).default_value


def test_the_instructors_own_setting_wins_over_the_assignments():
    assignment, name, value = real_override()
    config = Config()
    setattr(config.GradingLimits, name, value + 7)
    limits = SandboxedExecute(config=config)._assignment_limits({"nbgrader": {"assignment": assignment}})
    assert getattr(limits, name) == value + 7
    assert name not in limit_overrides(assignment, explicit={name})
    assert limit_overrides(assignment, explicit=set())[name] == value
