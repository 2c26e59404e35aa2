"""Every solution notebook runs top to bottom, and nbgrader grades the real assignments right:
a solved notebook gets full marks and an untouched one 0."""
import json
import time

import nbformat
import pytest
from nbclient import NotebookClient

from grader.authoring.assignment_settings import assignment_settings
from grader.running.grading import Grader
from grader.authoring.samples import write_samples
from tests.course_files import ASSIGNMENTS, NOTEBOOKS, SOLUTIONS, source_notebook

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not ASSIGNMENTS, reason="no assignments in solutions/")]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solution_notebook_runs_top_to_bottom(assignment, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = source_notebook(assignment)
    # After the setup cell (which every graded kernel runs), the modules imported; last, which checked data files the
    # run opened (attention_course.datafiles): what the assignment declares.
    setup = next(index for index, cell in enumerate(notebook.cells)
                 if cell.metadata.get("nbgrader", {}).get("grade_id", "").startswith("setup"))
    notebook.cells.insert(setup + 1, nbformat.v4.new_code_cell("import json, sys\nprint(json.dumps(sorted(sys.modules)))"))
    notebook.cells.append(nbformat.v4.new_code_cell(
        "import json, attention_course.datafiles as _datafiles\nprint(json.dumps(sorted(_datafiles._verified)))"))
    client = NotebookClient(notebook, timeout=900, kernel_name="python3",
                            resources={"metadata": {"path": str(SOLUTIONS / assignment)}})
    start = time.perf_counter()
    client.execute()  # raises CellExecutionError on the first failing cell
    seconds, budget = time.perf_counter() - start, assignment_settings(assignment).run_all_seconds
    print(f"{assignment}: Run All {seconds:.1f} s, budget {budget} s{' (OVER BUDGET)' if seconds > budget else ''}")
    # A graded run opens shipped weights in place of training (notebook 05), so Run All may open fewer.
    opened = json.loads(notebook.cells.pop().outputs[0].text)
    imported = json.loads(notebook.cells.pop(setup + 1).outputs[0].text)
    settings = assignment_settings(assignment)
    undeclared = sorted(set(opened) - set(settings.datasets))
    assert not undeclared, (f"{assignment} opens {undeclared}, which course/{assignment}/assignment.toml does not "
                            "declare under [reads] datasets")
    # The zygote its graded kernels are forked from imports what it declares: nothing the setup cell does not, and
    # TensorFlow (3 s a kernel otherwise) where the setup cell does.
    unused = sorted(set(settings.kernel_imports) - set(imported))
    assert not unused, f"{assignment} declares [kernel] imports {unused}, which its setup cell does not import"
    assert ("tensorflow" in imported) == ("tensorflow" in settings.kernel_imports), (
        f"{assignment}'s setup cell {'imports' if 'tensorflow' in imported else 'does not import'} TensorFlow: the "
        "[kernel] imports of its assignment.toml should say so")
    red = [(index, output.text[:200]) for index, cell in enumerate(notebook.cells) if cell.cell_type == "code"
           for output in cell.outputs if output.output_type == "stream" and output.name == "stderr"]
    assert not red, f"{assignment}: Run All prints to stderr (red in JupyterLab), cell index and text: {red}"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """graded(assignment)[(student, assignment)]: a solved and an untouched copy of `assignment` autograded in a
    workspace of their own, once per assignment (so that the assignments' tests can run in separate workers)."""
    done = {}

    def get(assignment):
        if assignment not in done:
            root = tmp_path_factory.mktemp(f"course_grading_{assignment}")
            write_samples(NOTEBOOKS, SOLUTIONS, [assignment], root / "submissions", {"solved": 1.0, "untouched": 0.0})
            results = Grader(root / "workspace").run(root / "submissions", progress=False)
            done[assignment] = {(r.student, r.assignment): r for r in results}
        return done[assignment]

    return get


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solved_notebook_gets_full_marks(graded, assignment):
    result = graded(assignment)[("solved", assignment)]
    assert result.max_score > 0
    assert result.score == result.max_score, f"{assignment}: solved notebook lost points on {result.failed} {result.error}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_untouched_notebook_scores_zero(graded, assignment):
    result = graded(assignment)[("untouched", assignment)]
    assert result.score == 0, f"{assignment}: untouched notebook got {result.score}; passing tests: check which"
    assert not result.error, result.error
