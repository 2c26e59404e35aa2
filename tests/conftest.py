"""Fixtures shared by the test modules, how `make test` spreads the tests over its workers, and the record of a
whole green run that the manual reads (results/tests.json)."""
import time

import pytest

from tests.notebook_kernel import NotebookKernel

# Files whose tests are parametrized by assignment and share nothing but a per-assignment kernel (the `kernels`
# fixture): pytest-xdist may give each assignment's tests to another worker.
SPLIT_BY_ASSIGNMENT = {"test_mutants.py", "test_course_notebooks.py"}
# Files that must not run beside each other: both grade tests/test_shards.py's class and read the process table
# for its notebooks' sleeping cells, so one would see the other's kernels.
SAME_WORKER = {"test_slurm_cluster.py": "test_shards.py"}


# Seconds a group takes on 2 busy cores (the longest tests of a clean-clone run, 2026-12-05, --durations); a
# group not listed counts one second a test. The longest groups go first, so that neither worker is left with
# one of them while the other has finished (make test passes --no-loadscope-reorder, which keeps this order).
GROUP_SECONDS = {
    "test_classroom_load.py": 310, "test_mutants.py:08_real_translation": 300, "test_shards.py": 270,
    "test_hostile_submissions.py": 230, "test_course_notebooks.py:08_real_translation": 215,
    "test_student_path.py": 210, "test_mutants.py:06_transformer": 200, "test_grading_pipeline.py": 190,
    "test_course_notebooks.py:01_encoder_decoder": 180, "test_on_submit.py": 170,
    "test_course_notebooks.py:05_attention_in_models": 150, "test_course_notebooks.py:06_transformer": 140,
    "test_lti_classroom.py": 125, "test_classroom_term.py": 120, "test_course_notebooks.py:03_date_translation": 110,
    "test_course_notebooks.py:07_attention_applications": 100, "test_reproducible_grading.py": 95,
    "test_all_wrong.py": 90, "test_nb08_real_translation.py": 70, "test_on_submit_service.py": 70,
}


def group_of(item) -> str:
    group = SAME_WORKER.get(item.path.name, item.path.name)
    params = item.callspec.params if hasattr(item, "callspec") else {}
    if group in SPLIT_BY_ASSIGNMENT and "assignment" in params:
        group = f"{group}:{params['assignment']}"
    return group


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items):
    """Under `pytest -n N --dist loadgroup` (make test) every test file runs whole in one worker, so its module
    fixtures are made once (SAME_WORKER: two files in one), except SPLIT_BY_ASSIGNMENT, which is one group per
    assignment. Groups are queued longest first (GROUP_SECONDS), each in the order of its file."""
    groups = {id(item): group_of(item) for item in items}
    count = {}
    for group in groups.values():
        count[group] = count.get(group, 0) + 1
    cost = {group: max(GROUP_SECONDS.get(group, 0), tests) for group, tests in count.items()}
    order = {id(item): index for index, item in enumerate(items)}
    items.sort(key=lambda item: (-cost[groups[id(item)]], groups[id(item)], order[id(item)]))
    for item in items:
        item.add_marker(pytest.mark.xdist_group(groups[id(item)]))


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, absent under -p no:xdist
def pytest_xdist_node_collection_finished(node, ids):
    """Under --dist loadgroup, pytest-xdist marks each test's node id with its group; a pytest whose node ids it
    cannot mark (pytest 9.2, pytest-xdist#1386) would spread every file over the workers silently, each building
    its module fixtures again (the hostile class graded twice, notebook 08 autograded twice)."""
    if node.config.getvalue("dist") == "loadgroup" and any("@" not in nodeid for nodeid in ids):
        raise pytest.UsageError("pytest-xdist could not group the tests by file (--dist loadgroup): this pytest "
                                "changes node ids in a way pytest-xdist 3.8 cannot mark; install the pinned "
                                "versions (make install)")


def pytest_sessionstart(session):
    session.config.stash[STARTED] = time.monotonic()


STARTED = pytest.StashKey[float]()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    """A green run of the whole suite (no paths, -m or -k given: `make test`) records how many tests passed and
    how long it took in results/tests.json, which docs/testing.md shows."""
    config = session.config
    whole = (config.args_source == pytest.Config.ArgsSource.TESTPATHS and not config.option.markexpr
             and not config.option.keyword and not getattr(config.option, "lf", False)
             and not config.option.deselect)
    if hasattr(config, "workerinput") or not whole or exitstatus != pytest.ExitCode.OK:
        return
    from course_build import results

    stats = config.pluginmanager.get_plugin("terminalreporter").stats
    count = {outcome: sum(1 for report in stats.get(outcome, []) if report.when in ("call", "setup"))
             for outcome in ("passed", "skipped")}
    results.record("tests", "The whole test suite", passed=count["passed"], skipped=count["skipped"],
                   workers=config.getoption("numprocesses", None) or 1,
                   run_seconds=round(time.monotonic() - config.stash[STARTED]))


KEPT_KERNELS = 2  # each a TensorFlow process of about 1 GB; the tests ask for one assignment after another


@pytest.fixture(scope="session")
def kernels():
    """kernels(assignment): a kernel that ran the solution notebook, started once per test session and kept
    while it is one of the KEPT_KERNELS last asked for (started again if asked for after that)."""
    started = {}  # assignment -> kernel, the last asked for last

    def get(assignment):
        if assignment in started:
            started[assignment] = started.pop(assignment)
        else:
            while len(started) >= KEPT_KERNELS:
                started.pop(next(iter(started))).close()
            kernel = NotebookKernel(assignment)
            kernel.run_all()
            started[assignment] = kernel
        return started[assignment]

    yield get
    for kernel in started.values():
        kernel.close()


@pytest.fixture
def db_url(tmp_path):
    """A gradebook of one assignment "a": notebook "nb" with tests test_f (3 points) and test_g (2)."""
    from nbgrader.api import Gradebook
    from grader.course import prepare_environment
    prepare_environment()  # nbgrader runs alembic from the environment's bin folder
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gradebook:
        gradebook.add_assignment("a")
        gradebook.add_notebook("nb", "a")
        gradebook.add_grade_cell("test_f", "nb", "a", max_score=3, cell_type="code")
        gradebook.add_grade_cell("test_g", "nb", "a", max_score=2, cell_type="code")
    return url
