"""Source notebooks follow the nbgrader conventions of docs/authoring.md; student notebooks leak nothing."""
import ast
import re

import pytest

from tests.course_files import (ASSIGNMENTS, HEADING, NOTEBOOKS, SOLUTIONS, nbgrader_meta, source_notebook,
                                student_notebook)

NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                "ten": 10, "eleven": 11, "twelve": 12}
pytestmark = pytest.mark.skipif(not ASSIGNMENTS, reason="no assignments in solutions/")


def test_every_assignment_is_one_notebook_in_its_own_folder():
    for assignment in ASSIGNMENTS:
        files = sorted(p.name for p in (SOLUTIONS / assignment).iterdir() if p.name != ".ipynb_checkpoints")
        assert files == [f"{assignment}.ipynb"], (
            f"solutions/{assignment}/ holds {files}: nbgrader copies every extra file to the students"
        )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_source_notebook_is_committed_clean(assignment):
    notebook = source_notebook(assignment)
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{assignment} cell {index} has outputs"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_graded_cells_have_complete_metadata_and_unique_ids(assignment):
    notebook = source_notebook(assignment)
    ids = []
    for index, cell in enumerate(notebook.cells):
        meta = nbgrader_meta(cell)
        if not meta:
            continue
        assert meta.get("schema_version") == 3, f"{assignment} cell {index}: nbgrader schema_version must be 3"
        assert meta.get("grade_id"), f"{assignment} cell {index}: nbgrader cell without grade_id"
        ids.append(meta["grade_id"])
        if meta.get("grade"):
            assert meta.get("points", 0) > 0, f"{assignment} {meta['grade_id']}: a test cell needs points"
            assert meta.get("locked") and not meta.get("solution"), f"{assignment} {meta['grade_id']}: tests are locked"
        if meta.get("solution"):
            assert "### BEGIN SOLUTION" in cell.source, f"{assignment} {meta['grade_id']}: no solution region"
    duplicates = {i for i in ids if ids.count(i) > 1}
    assert not duplicates, f"{assignment}: duplicate grade_ids {duplicates}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_exercise_heading_states_the_points_of_its_tests(assignment):
    notebook = source_notebook(assignment)
    sections, current = [], None
    for cell in notebook.cells:
        match = HEADING.search(cell.source) if cell.cell_type == "markdown" else None
        if match:
            current = {"heading": match.group(0), "points": float(match.group(1)), "tests": [], "answers": []}
            sections.append(current)
        meta = nbgrader_meta(cell)
        if current is not None and meta.get("grade"):
            current["tests"].append((meta["grade_id"], meta["points"]))
        if current is not None and meta.get("solution"):
            current["answers"].append(meta["grade_id"])
    answers = [nbgrader_meta(c)["grade_id"] for c in notebook.cells if nbgrader_meta(c).get("solution")]
    assert sections, f"{assignment}: no '### Exercise N — ... (P points)' headings"
    assert sum(len(s["answers"]) for s in sections) == len(answers), f"{assignment}: an answer cell sits before the first exercise heading"
    for section in sections:
        stated, actual = section["points"], sum(points for _, points in section["tests"])
        assert stated == actual, f"{assignment}: heading {section['heading']!r} says {stated:g} points, its tests give {actual:g}"
        for answer in section["answers"]:
            names = [grade_id for grade_id, _ in section["tests"]]
            assert f"test_{answer}_visible" in names, f"{assignment}: {answer} has no visible test cell"
            assert f"test_{answer}_hidden" in names, f"{assignment}: {answer} has no hidden test cell"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_student_notebook_has_no_solution_code_or_hidden_tests(assignment):
    student = student_notebook(assignment)
    text = "\n".join(cell.source for cell in student.cells)
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
        assert marker not in text, f"notebooks/{assignment} contains {marker!r}"
    for cell in source_notebook(assignment).cells:
        for region in re.findall(r"### BEGIN (SOLUTION|HIDDEN TESTS)\n(.*?)### END \1", cell.source, re.S):
            for line in region[1].splitlines():
                line = line.strip()
                # A hidden test's testing(...) line is the visible test's first line: a declaration, no secret.
                if len(line) > 25 and not line.startswith(("#", "testing(")):
                    assert line not in text, f"notebooks/{assignment} leaks solution/hidden line: {line!r}"


def test_notebooks_folder_holds_only_released_assignments():
    released = sorted(p.name for p in NOTEBOOKS.iterdir()) if NOTEBOOKS.is_dir() else []
    assert released == ASSIGNMENTS, f"notebooks/ holds {released}, solutions/ has {ASSIGNMENTS}"
    for assignment in ASSIGNMENTS:
        files = sorted(p.name for p in (NOTEBOOKS / assignment).iterdir() if p.name != ".ipynb_checkpoints")
        assert files == [f"{assignment}.ipynb"], f"stray files in notebooks/{assignment}: {files}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_setup_cell_is_first_and_locked(assignment):
    """The tamper guard protects the names the locked setup cell binds; an unlocked one protects nothing."""
    first = next(c for c in source_notebook(assignment).cells if c.cell_type == "code")
    meta = nbgrader_meta(first)
    assert meta.get("grade_id") == "setup" and meta.get("locked") and not meta.get("solution"), (
        f"{assignment}: the first code cell must be the locked setup cell (grade_id 'setup'), got {meta}"
    )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_test_cells_do_not_end_in_an_expression(assignment):
    """nbgrader reads a number left as a test cell's value as partial credit; tests must end in a statement."""
    import ast
    for cell in source_notebook(assignment).cells:
        meta = nbgrader_meta(cell)
        if meta.get("grade") and cell.cell_type == "code":
            body = ast.parse(cell.source).body
            if body and isinstance(body[-1], ast.Expr):
                call = body[-1].value
                assert isinstance(call, ast.Call), f"{assignment} {meta['grade_id']}: ends in a bare expression"


SECTION = re.compile(r"^## (?!Summary$|What you will)(.*)$", re.M)
NUMBERED = re.compile(r"^\d+ — [A-Z]")  # "## 3 — Build the model": number, em dash, a title starting with a verb


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_sections_are_numbered_alike(assignment):
    titles = [m.group(1) for cell in source_notebook(assignment).cells if cell.cell_type == "markdown"
              for m in SECTION.finditer(cell.source)]
    odd = [title for title in titles if not NUMBERED.match(title)]
    assert titles and not odd, f"{assignment}: section headings not in the '## N — Title' style: {odd}"
    numbers = [int(title.split(" ", 1)[0]) for title in titles]
    assert numbers == list(range(1, len(numbers) + 1)), f"{assignment}: sections numbered {numbers}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_one_grading_flag_and_one_setup_cell_layout(assignment):
    """start_tensorflow() before the first Keras/TensorFlow import; NOTEBOOK_START,
    GRADING = grading_run() where the notebook needs it, the seed; one print of versions."""
    cells = source_notebook(assignment).cells
    text = "\n".join(cell.source for cell in cells)
    assert "NBGRADER_EXECUTION" not in text, (
        f"{assignment} reads NBGRADER_EXECUTION itself: use GRADING = grading_run() in the setup cell")
    setup = next(cell.source for cell in cells if nbgrader_meta(cell).get("grade_id") == "setup")
    if "GRADING" in text:
        assert "GRADING = grading_run()" in setup, f"{assignment}: the setup cell must bind GRADING = grading_run()"
    imports_tensorflow = [index for index, cell in enumerate(cells) if cell.cell_type == "code"
                          and re.search(r"^\s*(import|from) (keras|tensorflow)\b", cell.source, re.M)]
    if imports_tensorflow:  # start_tensorflow() before the first Keras import drops TensorFlow's red start-up notices
        first = cells[imports_tensorflow[0]].source
        call = re.search(r"^\s*start_tensorflow\(\)", first, re.M)
        keras_import = re.search(r"^\s*(import|from) (keras|tensorflow)\b", first, re.M)
        assert call and call.start() < keras_import.start(), (
            f"{assignment}: call start_tensorflow() (attention_course.tensorflow_start) before the first Keras import")
    assert "TF_CPP_MIN_LOG_LEVEL" not in setup, f"{assignment}: start_tensorflow() sets TF_CPP_MIN_LOG_LEVEL"
    flags = [setup.index(name) for name in ("NOTEBOOK_START =", "GRADING =", "rng = set_seed(") if name in setup]
    assert flags == sorted(flags) and "NOTEBOOK_START =" in setup, f"{assignment}: NOTEBOOK_START, GRADING, then the seed"
    assert setup.count("print(") == 1 and "__version__" in setup, f"{assignment}: one print of the versions"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_run_time_is_printed_not_typed(assignment):
    cells = source_notebook(assignment).cells
    prose = "\n".join(cell.source for cell in cells if cell.cell_type == "markdown")
    typed = re.findall(r"about (?:a|\d+) (?:seconds?|minutes?)|\d+\s*(?:s|seconds|minutes) on \d+", prose)
    assert not typed, f"{assignment}: a run time typed by hand: {typed}"
    last = [cell.source for cell in cells if cell.cell_type == "code"][-1]
    assert "Run All took {seconds_since(NOTEBOOK_START" in last, (
        f"{assignment}: the last cell prints the Run All time through seconds_since (no clock on a graded page)")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_student_facing_text_cites_sources_not_our_notes(assignment):
    for notebook in (source_notebook(assignment), student_notebook(assignment)):
        for cell in notebook.cells:
            if cell.cell_type == "markdown":
                found = re.findall(r"\bseeds?\b(?! of)|\bthe survey\b|\bthe article\b|\(00\d\b|\bself attention\b",
                                   cell.source, re.I)
                assert not found, f"{assignment}: {found} in a markdown cell; cite authors, titles and years"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_test_cell_declares_its_exercise_and_the_earlier_ones_it_calls(assignment):
    """One mistake costs once (docs/authoring.md): a visible test starts with testing(exercise, calls=...),
    a hidden one has that line right after BEGIN HIDDEN TESTS when it calls earlier exercises, and `calls` is
    what the code calls (grader/authoring/exercise_calls.py)."""
    from grader.authoring.exercise_calls import exercise_calls, testing_line
    from grader.feedback.mistakes import exercise_layout
    notebook = source_notebook(assignment)
    calls = exercise_calls(notebook)
    for exercise, (_, _, tests) in exercise_layout(notebook).items():
        expected = testing_line(exercise, calls[exercise])
        for index in tests:
            cell = notebook.cells[index]
            lines = cell.source.splitlines()
            hidden = "### BEGIN HIDDEN TESTS"
            where = lines.index(hidden) + 1 if hidden in lines else 0
            declared = [line for line in lines if line.startswith("testing(")]
            grade_id = nbgrader_meta(cell)["grade_id"]
            if where and not calls[exercise]:
                assert not declared, f"{assignment} {grade_id}: a hidden test that calls no earlier exercise says so"
            else:
                assert lines[where] == expected and declared == [expected], (
                    f"{assignment} {grade_id}: line {where + 1} must be {expected!r}, found {declared}")


CODE_NAME = re.compile(r"`([A-Za-z_]\w*)\.([A-Za-z_]\w*)`")
COUNT = re.compile(r"\b(\w+) (?:graded )?(?:exercises|graded functions), (\d+) points\b")


def classes_and_members(notebook) -> dict:
    """Each class the notebook's code defines -> the methods it defines and the attributes it sets on self."""
    classes = {}
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # a cell with IPython magics defines no class
            continue
        for node in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            members = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            members |= {t.attr for n in ast.walk(node) if isinstance(n, ast.Assign) for t in n.targets
                        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}
            classes[node.name] = members
    return classes


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_method_the_prose_names_exists(assignment):
    """`RecurrentTranslator.decode_step` in the overview of a notebook whose graded method is `attend` misleads."""
    notebook = source_notebook(assignment)
    classes = classes_and_members(notebook)
    for cell in (c for c in notebook.cells if c.cell_type == "markdown"):
        for owner, member in CODE_NAME.findall(cell.source):
            if owner in classes:
                assert member in classes[owner], (
                    f"{assignment}: the text names `{owner}.{member}`, which the notebook's {owner} does not define "
                    f"(it has {sorted(classes[owner])})")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_overview_names_every_exercise_and_counts_them_right(assignment):
    notebook = source_notebook(assignment)
    answers = [nbgrader_meta(c)["grade_id"] for c in notebook.cells if nbgrader_meta(c).get("solution")]
    points = sum(nbgrader_meta(c).get("points", 0) for c in notebook.cells if nbgrader_meta(c).get("grade"))
    intro = "\n".join([c.source for c in notebook.cells if c.cell_type == "markdown"][:3])
    counts = COUNT.findall(intro)
    for count, stated_points in counts:
        assert NUMBER_WORDS.get(count.lower(), count) in (len(answers), str(len(answers))), (
            f"{assignment}: the overview says {count} exercises, the notebook has {len(answers)}")
        assert int(stated_points) == points, f"{assignment}: the overview says {stated_points} points, the tests give {points:g}"
    if counts or "**Build:**" in intro:
        named = set(re.findall(r"`([A-Za-z_]\w*)", intro))
        assert not set(answers) - named, f"{assignment}: the overview does not name {sorted(set(answers) - named)}"
    for owner, member in CODE_NAME.findall(intro):  # a graded class's method named as the exercise: one you write
        if owner in answers:
            written = answered_methods(notebook, owner)
            assert member in written, (f"{assignment}: the overview names `{owner}.{member}`; the methods the "
                                       f"exercise has you write are {sorted(written)}")


def answered_methods(notebook, class_name: str) -> set:
    """The methods of an answer cell's class that hold a solution region (what the student writes)."""
    cell = next(c for c in notebook.cells if nbgrader_meta(c).get("grade_id") == class_name)
    tree = ast.parse(cell.source)
    lines = cell.source.splitlines()
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
            and any("### BEGIN SOLUTION" in line for line in lines[node.lineno - 1:node.end_lineno])}
