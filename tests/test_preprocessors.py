"""Each of the grader's preprocessors on a small in-memory notebook and gradebook (fast: `make test-fast`)."""
import os

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from nbgrader.api import Gradebook

from grader.sandbox import cgroups
from grader.course import prepare_environment
from grader.limits import GradingLimits
from grader.preprocessors import (GuardAgainstTampering, HideHiddenTests, LimitOutputSize, PassingTestsKeepStderr,
                                  RestoreCellFlags, SandboxedExecute, trusted_sources)
from grader.preprocessors.sandboxed_execute import join_streams
from grader.sandbox.bubblewrap import BOX_PREFIX, GradingKernelManager, boxes_folder, sandbox_problem

SETUP = "import math"
ANSWER = "def f():\n    return 2"
TEST = "assert f() == 1, 'f() should be 1'"


def cell(source, grade_id=None, **flags):
    made = new_code_cell(source)
    if grade_id:
        made.metadata["nbgrader"] = {"grade_id": grade_id, "schema_version": 3, "grade": False, "solution": False,
                                     "locked": False, **flags}
    return made


def notebook(test_source=TEST, answer=ANSWER):
    return new_notebook(cells=[cell(SETUP, "setup", locked=True), cell(answer, "f", solution=True),
                               cell(test_source, "test_f", grade=True, locked=True, points=2)])


@pytest.fixture
def resources(tmp_path):
    prepare_environment()  # nbgrader runs alembic from the environment's bin folder
    db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(db_url) as gradebook:
        gradebook.add_assignment("a")
        gradebook.add_notebook("nb", "a")
        gradebook.add_source_cell("setup", "nb", "a", cell_type="code", locked=True, source=SETUP, checksum="x")
        gradebook.add_solution_cell("f", "nb", "a")
        gradebook.add_source_cell("f", "nb", "a", cell_type="code", locked=False, source=ANSWER, checksum="y")
        gradebook.add_grade_cell("test_f", "nb", "a", max_score=2, cell_type="code")
        gradebook.add_source_cell("test_f", "nb", "a", cell_type="code", locked=True, source=TEST, checksum="z")
    return {"nbgrader": {"db_url": db_url, "notebook": "nb", "assignment": "a", "student": "s"},
            "metadata": {"path": str(tmp_path)}}


def test_trusted_sources_come_from_the_gradebook_not_the_submission(resources):
    assert trusted_sources(resources) == {"setup": [SETUP], "tests": {"test_f": TEST}}


@pytest.mark.skipif(bool(sandbox_problem()), reason="no sandbox here")
def test_a_test_cell_the_student_emptied_runs_as_the_gradebook_has_it(resources):
    executed, _ = SandboxedExecute(limits=GradingLimits(cell_seconds=30)).preprocess(notebook(test_source="pass"), resources)
    error = [o for o in executed.cells[2].outputs if o.output_type == "error"]
    assert error and error[0].evalue == "f() should be 1"


@pytest.mark.skipif(bool(sandbox_problem()), reason="no sandbox here")
def test_a_cell_the_student_flags_as_a_test_runs_in_the_kernel_not_the_grader(resources):
    nb = notebook(answer="def f():\n    return 1")
    nb.cells.append(cell("import os\nprint(os.getuid())", "invented_test", grade=True, points=5))
    executed, _ = SandboxedExecute(limits=GradingLimits(cell_seconds=30)).preprocess(nb, resources)
    assert executed.cells[2].outputs == []  # the real test passes
    assert executed.cells[3].outputs[0].text.strip() == "65534"  # the invented one ran sandboxed


@pytest.mark.skipif(bool(sandbox_problem()), reason="no sandbox here")
def test_a_graded_cell_keeps_no_clock_and_its_printing_is_one_output_per_stream(resources):
    """What the clock decides stays out of the autograded notebook: nbclient's execution timestamps (and the
    student's own, submitted in the cell's metadata), and how printed text split into messages."""
    nb = notebook()
    nb.cells[1].metadata["execution"] = {"iopub.status.busy": "2026-12-01T10:00:00.000000Z"}
    nb.cells.insert(2, cell("import sys, time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.05)\n"
                            "    print('e', i, file=sys.stderr, flush=True)\nprint('end', flush=True)"))
    executed, _ = SandboxedExecute(limits=GradingLimits(cell_seconds=30)).preprocess(nb, resources)
    assert not any("execution" in c.metadata for c in executed.cells)
    streams = [(o.name, o.text) for o in executed.cells[2].outputs]
    assert "".join(text for name, text in streams if name == "stdout") == "0\n1\n2\nend\n"
    assert all(a[0] != b[0] for a, b in zip(streams, streams[1:])), f"two outputs of one stream in a row: {streams}"


def test_join_streams_joins_only_neighbours_of_one_stream():
    outputs = [new_output("stream", name="stdout", text="a"), new_output("stream", name="stdout", text="b"),
               new_output("stream", name="stderr", text="c"), new_output("execute_result", data={"text/plain": "1"}),
               new_output("stream", name="stdout", text="d"), new_output("stream", name="stdout", text="e")]
    joined = new_code_cell("", outputs=outputs)
    join_streams(joined)
    assert [(o.output_type, o.get("name"), o.get("text")) for o in joined.outputs] == [
        ("stream", "stdout", "ab"), ("stream", "stderr", "c"), ("execute_result", None, None),
        ("stream", "stdout", "de")]


def test_passing_tests_keep_stderr_as_marked_text_and_failing_ones_keep_it_as_is():
    passing = cell("", "t", grade=True)
    passing.outputs = [new_output("stream", name="stderr", text="debug\n")]
    failing = cell("", "u", grade=True)
    failing.outputs = [new_output("stream", name="stderr", text="debug\n"), new_output("error", ename="E", evalue="", traceback=[])]
    keep = PassingTestsKeepStderr()
    assert keep.preprocess_cell(passing, {}, 0)[0].outputs[0] == new_output("stream", name="stdout", text="[stderr] debug\n")
    assert keep.preprocess_cell(failing, {}, 0)[0].outputs[0].name == "stderr"


def test_limit_output_size_truncates_by_characters():
    loud = cell("")
    loud.outputs = [new_output("stream", name="stdout", text="x" * 50)]
    cut = LimitOutputSize(max_characters=10).preprocess_cell(loud, {}, 0)[0]
    assert cut.outputs[0].text.startswith("x" * 10 + "\n... [output truncated by the grader]")


def test_hidden_tests_show_their_message_not_their_code():
    hidden = cell("# visible comment\n### BEGIN HIDDEN TESTS\nassert secret()\n### END HIDDEN TESTS\n", "t", grade=True)
    hidden.outputs = [new_output("error", ename="AssertionError", evalue="wrong", traceback=["assert secret()", "..."])]
    shown = HideHiddenTests().preprocess_cell(hidden, {}, 0)[0]
    assert "secret" not in shown.source and shown.outputs[0].traceback == ["AssertionError: wrong"]


def test_tamper_guard_adds_a_note_and_leaves_the_answer_alone():
    nb = notebook(answer="math.isclose = lambda *a: True\n" + ANSWER)
    guarded, _ = GuardAgainstTampering().preprocess(nbformat.from_dict(nb), {})
    assert guarded.cells[1].source == nb.cells[1].source
    assert guarded.cells[2].cell_type == "markdown" and "assigns to math.isclose" in guarded.cells[2].source
    honest, _ = GuardAgainstTampering().preprocess(notebook(), {})
    assert len(honest.cells) == 3


def test_restore_cell_flags_puts_back_points_and_the_grade_flag(resources):
    nb = notebook()
    nb.cells[2].metadata.nbgrader.update(grade=False, points=100)
    nb.cells.insert(0, new_markdown_cell("notes"))
    restored, _ = RestoreCellFlags().preprocess(nb, resources)
    assert restored.cells[3].metadata.nbgrader["grade"] is True and restored.cells[3].metadata.nbgrader["points"] == 2


def _own_boxes():
    return sorted(box.name for box in boxes_folder().glob(f"{BOX_PREFIX}*")
                  if (box / "owner").is_file() and (box / "owner").read_text() == str(os.getpid()))


@pytest.mark.skipif(bool(sandbox_problem()), reason="no sandbox here")
def test_a_dead_kernels_folder_and_cgroups_go_before_the_next_kernel_starts(resources, monkeypatch):
    """A kernel that filled its private folder and died: its folder (on the host's /dev/shm) and its cgroups are
    gone when the replacement starts, and nothing is left when the notebook is done."""
    seen_at_start, groups = [], []
    original = GradingKernelManager._async_pre_start_kernel

    async def recording(self, **kw):
        seen_at_start.append(_own_boxes())
        made = await original(self, **kw)
        groups.append(self.group)
        return made

    monkeypatch.setattr(GradingKernelManager, "_async_pre_start_kernel", recording)
    dies = ("import os, sys\nrun = os.path.dirname(sys.argv[sys.argv.index('-f') + 1])\n"
            "open(os.path.join(run, 'ballast'), 'wb').write(b'x' * 2 ** 24)\nos._exit(3)")
    nb = notebook(answer=dies)
    nb.cells.append(cell("print('after the replay')"))
    executed, _ = SandboxedExecute(limits=GradingLimits(cell_seconds=30)).preprocess(nb, resources)
    assert "after the replay" in executed.cells[3].outputs[0].text
    assert seen_at_start == [[], []], "the dead kernel's private folder outlived it"
    assert _own_boxes() == []
    if not cgroups.problem():
        assert len(groups) == 2 and not any(path.exists() for group in groups for path in group.paths.values())
