"""One hostile student of the fixture assignment, graded for real (sandboxed kernel, nbgrader's autograde and
generate_feedback): the feedback page shows the student's text and figures and none of the student's HTML."""
import nbformat
import pytest
from nbformat.v4 import new_markdown_cell, new_notebook

from grader.course import course_config
from grader.running.grading import Grader
from grader.authoring.samples import fill_answers
from tests.course_files import FIXTURE_SOURCE
from tests.hostile_submissions import ASSIGNMENT, NOTEBOOK, answer_cell
from tests.test_sanitise_feedback import ATTACKS_MARKDOWN, RESOURCES, Page, feedback_exporter, html_inside_math, real_png

pytestmark = pytest.mark.slow

# The answer is right; around it, everything a kernel can display.
HOSTILE_ANSWER = '''import base64, io
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from IPython.display import HTML, SVG, Image, Javascript, Markdown, display

def add(a, b):
    return a + b

figure, axes = plt.subplots(figsize=(2, 2))
axes.plot([0, 1, 2], [0, 1, 4])
buffer = io.BytesIO()
figure.savefig(buffer, format="png")
png = base64.b64encode(buffer.getvalue()).decode()
display(Image(buffer.getvalue()))
display({"image/png": png}, raw=True, metadata={"image/png": {"width": "1 onerror=alert('width')"}})
display({"image/png": base64.b64encode(b"<script>alert('fake png')</script>").decode()}, raw=True)
display(HTML("<b>bold html</b><script>alert('html')</script><img src=x onerror=alert('img')>"))
display(Javascript("alert('js')"))
display(Markdown("*markdown output*\\n\\n<script>alert('md')</script>"))
display(SVG('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>'))
print("<script>alert('print')</script> readable print")
'''


@pytest.fixture(scope="module")
def feedback(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile_feedback")
    grader = Grader(root / "workspace", source=FIXTURE_SOURCE, cell_seconds=60, workers=1)
    grader.generate(ASSIGNMENT)
    student = nbformat.read(grader.workspace / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    notebook = fill_answers(student, nbformat.read(FIXTURE_SOURCE / ASSIGNMENT / NOTEBOOK, as_version=4))
    answer = answer_cell(notebook, "add")
    answer.source = HOSTILE_ANSWER
    answer.metadata["tags"] = ["x\" onmouseover=\"alert('tag')"]
    notebook.cells.insert(notebook.cells.index(answer) + 1, new_markdown_cell(
        ATTACKS_MARKDOWN, attachments={"figure.png": {"image/png": real_png()}}))
    notebook.metadata["title"] = "</title><script>alert('title')</script>"
    folder = root / "class" / "mallory" / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / NOTEBOOK)
    [result] = grader.run(root / "class", progress=False)
    return result, grader.feedback_path("mallory", ASSIGNMENT).read_text()


def test_the_hostile_student_is_graded_and_gets_a_feedback_page(feedback):
    result, page = feedback
    assert result.score == 5.0, (result.failed, result.error)
    assert "Score: 5.0 / 5.0" in " ".join(Page(page).all_text().split())
    assert "could not be shown safely" not in page


def test_the_feedback_page_runs_nothing_of_the_students(feedback):
    _, page = feedback
    empty, _ = feedback_exporter(course_config()).from_notebook_node(new_notebook(), resources=RESOURCES)
    parsed = Page(page)
    assert set(parsed.scripts) <= set(Page(empty).scripts)
    assert not [(tag, name) for tag, attrs in parsed.elements for name in attrs if name.startswith("on")]
    assert not [value for _, attrs in parsed.elements for name, value in attrs.items()
                if name in ("href", "src") and value and value.strip().lower().startswith("javascript:")]
    assert not {tag for tag, _ in parsed.elements} & {"iframe", "object", "embed", "base", "svg"}
    assert html_inside_math(page) == []
    assert "alert(" not in "".join(str(attrs) for _, attrs in parsed.elements)


def test_the_feedback_page_keeps_the_figures_and_the_text(feedback):
    _, page = feedback
    parsed = Page(page)
    figures = [attrs for attrs in parsed.images()
               if attrs.get("src", "").startswith("data:image/png;base64,")]
    assert len(figures) == 3  # Image(), the raw PNG (its forged width dropped), the markdown attachment
    assert not [attrs for attrs in figures if "width" in attrs]
    text = parsed.all_text()
    for shown in ("<script>alert('print')</script> readable print", "My answer is readable", "bold html",
                  "<script>alert('html')</script>", "markdown output",
                  "[output of type application/javascript not shown in the feedback]",
                  "[output of type image/png not shown in the feedback]"):
        assert shown in text, shown
