"""Feedback pages (and the Formgrader's view) show a hostile notebook's text and figures, none of its HTML.

The notebook is rendered by the exporter, template and preprocessors generate_feedback builds from the
course config, without GetGrades (it reads the gradebook; the scores it would add are set here).
"""
import base64
import io
from html.parser import HTMLParser

import matplotlib
import nbformat
import pytest
from nbconvert.exporters import HTMLExporter
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell
from nbgrader.converters import GenerateFeedback
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import GetGrades
from nbgrader.server_extensions.formgrader import handlers

from grader.course import course_config
from grader.preprocessors import HideHiddenTests
from grader.feedback import sanitise_feedback
from grader.feedback.sanitise_feedback import CheckedHTMLExporter, SanitiseFeedback, checked_page, page_problems

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after choosing the backend)

RESOURCES = {"unique_key": "00_fixture", "nbgrader": {
    "student": "mallory", "assignment": "00_fixture", "notebook": "00_fixture",
    "score": 3.0, "max_score": 5.0, "late_penalty": 0}}
ATTACKS_MARKDOWN = """# My answer

My answer is readable and **bold**.

<script>alert('markdown')</script>
<img src=x onerror="alert('img')">
<svg onload="alert('svg')"><circle r="5"></circle></svg>
[click me](javascript:alert('link')) and <a href="JaVaScRiPt:alert('case')">case</a>
<a href="&#106;avascript:alert('entity')">entity</a> <a href="java&#x09;script:alert('tab')">tab</a>
<a href="data:text/html,<script>alert('data')</script>">data</a>
<iframe src="https://example.org/"></iframe>
<object data="javascript:alert('object')"></object><embed src="javascript:alert('embed')">
<form action="javascript:alert('form')"><button>go</button></form>
<math><mtext><img src=x onerror="alert('math')"></mtext></math>
<base href="javascript:alert('base')//">
<meta http-equiv="refresh" content="0;url=javascript:alert('meta')">
<style>body { display: none }</style>
<div style="background:url(javascript:alert('css'))" onmouseover="alert('div')">hover here</div>

![figure](attachment:figure.png)
"""


def real_png() -> str:
    figure, axes = plt.subplots(figsize=(2, 2))
    axes.plot([0, 1, 2], [0, 1, 4])
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode("ascii")


def display(data, **metadata):
    return new_output("display_data", data=data, metadata=metadata)


def hostile_notebook(png: str):
    """Every attack nbformat's schema allows; nbconvert validates after each preprocessor."""
    notebook = new_notebook(metadata={
        "title": "</title><script>alert('title')</script>",
        "language_info": {"name": "<script>alert('language')</script>", "pygments_lexer": "<b>lexer</b>"},
        "kernelspec": {"name": "python3", "display_name": "<script>alert('kernel')</script>"},
        "widgets": {"application/vnd.jupyter.widget-state+json": {
            "state": {"m": {"state": {"value": "</script><script>alert('state')</script>"}}},
            "version_major": 2, "version_minor": 0}},
    })
    markdown = new_markdown_cell(ATTACKS_MARKDOWN, attachments={"figure.png": {"image/png": png}})
    evil_attachment = new_markdown_cell("Attachment: ![evil](attachment:evil.png)", attachments={
        "evil.png": {"image/png": b64("<script>alert('attachment')</script>"),
                     "text/html": "<script>alert('attachment html')</script>"}})
    raw = new_raw_cell("<script>alert('raw')</script>", metadata={"raw_mimetype": "text/html"})
    answer = new_code_cell("def add(a, b):\n    return a + b", metadata={
        "tags": ["x\" onmouseover=\"alert('tag')"], "alt": "\" onerror=\"alert('alt')",
        "magics_language": "<script>", "nbgrader": {
            "grade": True, "solution": True, "grade_id": "add", "points": 2, "score": 1.5,
            "comment": "<script>alert('comment')</script> Good **work**"}})
    answer.outputs = [
        new_output("stream", name="stdout", text="print: <b>plain text</b> & more\n"),
        new_output("execute_result", execution_count=3, data={
            "text/html": "<b>bold html</b><script>alert('html')</script><img src=x onerror=alert('img')>",
            "text/plain": "plain fallback"}),
        display({"application/javascript": "alert('js')"}),
        display({"application/vnd.jupyter.widget-view+json": {"model_id": "m", "x": "</script><script>x()"},
                 "text/plain": "IntSlider(value=3)"}),
        display({"image/png": b64("<html><script>alert('fake png')</script></html>")}),
        display({"image/svg+xml": "<svg onload=\"alert('svg output')\"></svg>"}),
        display({"text/markdown": "*markdown output*\n\n<script>alert('md output')</script>"}),
        display({"text/latex": "</div><script>alert('latex')</script>"}),
        display({"text/html": "<p>isolated</p><script>alert('isolated')</script>"},
                **{"text/html": {"isolated": True}}),
        display({"image/png": png, "text/plain": "<Figure size 200x200>"},
                **{"image/png": {"width": "1 onerror=alert('width')", "height": 150}}),
        new_output("error", ename="<script>alert('ename')</script>", evalue="<img src=x onerror=alert(2)>",
                   traceback=["<script>alert('traceback')</script>"]),
    ]
    forged = new_code_cell("x = 1", metadata={"nbgrader": {
        "grade": True, "solution": False, "grade_id": "x\"><script>alert('grade id')</script>", "points": 1,
        "score": 0}})
    notebook.cells = [markdown, evil_attachment, raw, answer, forged]
    return notebook


def off_schema(notebook):
    """Attacks on what the schema checks, which a hostile kernel's messages can still put in a notebook:
    generate_feedback runs the sanitiser before any validation."""
    answer = notebook.cells[3]
    answer.id = "a\" onclick=\"alert('id')"
    answer.execution_count = "<script>alert('count')</script>"
    answer.outputs += [nbformat.from_dict(output) for output in (
        {"output_type": "stream", "name": "\"><script>alert('stream')</script>", "text": "other stream\n"},
        {"output_type": "<script>alert('kind')</script>"})]
    return notebook


def feedback_exporter(config):
    """The exporter generate_feedback makes from `config`, with its preprocessors but GetGrades."""
    feedback = GenerateFeedback(coursedir=CourseDirectory(config=config), config=config)
    exporter = feedback.exporter_class(parent=feedback, config=feedback.config)
    for preprocessor in feedback.preprocessors:
        if preprocessor is not GetGrades:
            exporter.register_preprocessor(preprocessor)
    return exporter


class Page(HTMLParser):
    """Every element with its attributes, the scripts and the text of a page."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.elements, self.scripts, self.text, self._in_script = [], [], [], None
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = (tuple(sorted(attrs)), [])

    def handle_endtag(self, tag):
        if tag == "script" and self._in_script:
            self.scripts.append((self._in_script[0], "".join(self._in_script[1])))
            self._in_script = None

    def handle_data(self, data):
        (self._in_script[1] if self._in_script else self.text).append(data)

    def all_text(self) -> str:
        return "".join(self.text)

    def images(self) -> list:
        return [attrs for tag, attrs in self.elements if tag == "img"]


def html_inside_math(page: str) -> list:
    """Elements inside a <math> that are not presentation MathML (a browser would parse them as HTML)."""
    found, depth = [], 0

    class Scan(HTMLParser):
        def handle_starttag(self, tag, attrs):
            nonlocal depth
            if depth and tag not in sanitise_feedback.MATH_TAGS:
                found.append(tag)
            depth += tag == "math"

        def handle_endtag(self, tag):
            nonlocal depth
            depth -= tag == "math" and depth > 0

    Scan().feed(page)
    return found


@pytest.fixture(scope="module")
def png():
    return real_png()


@pytest.fixture(scope="module")
def rendered(png):
    exporter = feedback_exporter(course_config())
    page, _ = exporter.from_notebook_node(off_schema(hostile_notebook(png)), resources=RESOURCES)
    empty, _ = exporter.from_notebook_node(new_notebook(), resources=RESOURCES)
    return page, empty


def test_the_course_config_wires_the_sanitiser_and_the_checked_exporter():
    feedback = GenerateFeedback(coursedir=CourseDirectory(config=course_config()), config=course_config())
    assert feedback.preprocessors[-1] is SanitiseFeedback and GetGrades in feedback.preprocessors
    assert feedback.exporter_class is CheckedHTMLExporter
    assert course_config().HTMLExporter.preprocessors == [SanitiseFeedback]


def test_feedback_has_only_the_templates_scripts(rendered):
    page, empty = rendered
    scripts = Page(page).scripts
    assert scripts and set(scripts) <= set(Page(empty).scripts)
    assert "alert(" not in "".join(text for _, text in scripts)


def test_feedback_has_no_event_handler_javascript_url_or_embedded_document(rendered):
    page, _ = rendered
    elements = Page(page).elements
    assert not [(tag, name) for tag, attrs in elements for name in attrs if name.startswith("on")]
    urls = [value.replace("\t", "").strip().lower() for _, attrs in elements for name, value in attrs.items()
            if name in ("href", "src", "action", "data", "formaction") and value]
    assert not [url for url in urls if url.startswith(("javascript:", "vbscript:", "data:text"))]
    assert not {tag for tag, _ in elements} & {"iframe", "object", "embed", "base", "form", "svg"}
    assert html_inside_math(page) == []
    assert not [attrs for tag, attrs in elements if tag == "meta" and "http-equiv" in attrs]
    assert "alert(" not in "".join(str(attrs) for _, attrs in elements)


def test_the_figures_stay_and_the_fake_png_does_not(rendered, png):
    page, _ = rendered
    images = Page(page).images()
    figures = [attrs for attrs in images if attrs.get("src") == f"data:image/png;base64,{png}"]
    assert len(figures) == 2  # the output and the markdown attachment
    assert any(attrs.get("height") == "150" and "width" not in attrs for attrs in figures)
    assert all(attrs["src"].startswith("data:image/png;base64,") for attrs in images if "src" in attrs)
    assert len([attrs for attrs in images if "src" in attrs]) == 2
    assert "[output of type image/png not shown in the feedback]" in Page(page).all_text()


def test_the_students_text_stays_readable_and_escaped(rendered):
    page, _ = rendered
    parsed = Page(page)
    text = parsed.all_text()
    for shown in ("My answer is readable", "<script>alert('markdown')</script>", "hover here",
                  "print: <b>plain text</b> & more", "bold html", "markdown output", "IntSlider(value=3)",
                  "<script>alert('raw')</script>", "</div><script>alert('latex')</script>", "Good",
                  "isolated",
                  "<script>alert('traceback')</script>",
                  "[output of type application/javascript not shown in the feedback]",
                  "[output of type application/vnd.jupyter.widget-view+json not shown in the feedback]",
                  "[output of type image/svg+xml not shown in the feedback]",
                  "[an output of an unknown kind not shown in the feedback]", "def add(a, b)",
                  "other stream"):
        assert shown in text, shown
    tags = [tag for tag, _ in parsed.elements]
    assert "strong" in tags and "em" in tags and "b" in tags  # allowed markdown and HTML still render
    assert "Score: 3.0 / 5.0" in " ".join(text.split())


def test_the_sanitised_page_passes_the_check_after_rendering(rendered):
    page, empty = rendered
    assert page_problems(page, empty) == []
    assert "could not be shown safely" not in page


@pytest.mark.filterwarnings("ignore:No lexer found")  # the unsanitised magics_language names no lexer
def test_a_page_that_fails_the_check_is_replaced_by_a_plain_one(png):
    config = course_config()
    config.HTMLExporter.preprocessors = []  # a sanitiser that lets everything through
    config.GenerateFeedback.preprocessors = [HideHiddenTests]
    exporter = feedback_exporter(config)
    assert isinstance(exporter, CheckedHTMLExporter)
    page, _ = exporter.from_notebook_node(hostile_notebook(png), resources=RESOURCES)
    assert "could not be shown safely" in page and "Score: 3.0 / 5.0" in page
    assert "alert(" not in page and "<script" not in page
    fine = new_notebook(cells=[new_markdown_cell("fine")])
    clean, _ = exporter.from_notebook_node(fine, resources=RESOURCES)
    assert "could not be shown safely" not in clean


@pytest.mark.parametrize("injected", [
    "<script>alert(1)</script>", "<script src=\"https://evil.example/x.js\"></script>", "<script/>",
    "<img src=x onerror=alert(1)>", "<a href=\" java&#x09;script:alert(1)\">x</a>",
    "<a href=\"VBScript:x\">x</a>",
    "<a href=\"data:text/html,x\">x</a>", "<iframe src=\"https://example.org/\"></iframe>", "<embed src=x>",
    "<object data=x></object>", "<base href=\"https://evil.example/\">", "<svg><a xlink:href=x>y</a></svg>",
    "<meta http-equiv=\"Refresh\" content=\"0;url=https://evil.example/\">", "<p><script>",
    "<math><style><img src=x onerror=alert(1)></style></math>", "<math><mtext><img src=x></mtext></math>",
    "<math href=\"javascript:alert(1)\"><mi>x</mi></math>", "<math><mi style=\"x\">x</mi></math>",
    "<math><semantics><annotation-xml encoding=\"text/html\"><b>x</b></annotation-xml></semantics></math>",
])
def test_the_check_finds_what_was_injected_into_a_page(rendered, injected):
    page, empty = rendered
    assert page_problems(page.replace("My answer is readable", "My answer " + injected), empty)


# The Formgrader's HTMLExporter picks its lexer from the student's language_info: only the colours change.
@pytest.mark.filterwarnings("ignore:No lexer found")
def test_the_formgraders_submission_view_is_sanitised_too(png):
    """nbgrader's Formgrader renders the autograded notebook with HTMLExporter(config=...), its template."""
    config = course_config()
    config.HTMLExporter.template_name = "formgrade"
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    exporter = HTMLExporter(config=config)
    resources = {"assignment_id": "00_fixture", "notebook_id": "00_fixture", "submission_id": "1",
                 "index": 0, "total": 1, "base_url": "", "student": "mallory", "last_name": "M",
                 "first_name": "M", "notebook_path": "autograded/mallory/00_fixture/00_fixture.ipynb"}
    page, _ = exporter.from_notebook_node(hostile_notebook(png), resources=dict(resources))
    empty, _ = exporter.from_notebook_node(new_notebook(), resources=dict(resources))
    assert page_problems(page, empty) == page_problems(empty, empty)  # the template's own onclick="..."
    assert "alert(" not in "".join(text for _, text in Page(page).scripts)
    assert "My answer is readable" in Page(page).all_text()


def test_the_sanitised_notebook_is_valid_nbformat(png):
    """The sanitiser builds cells and outputs itself, without nbformat's check per cell: the whole notebook
    must still be valid."""
    nb, _ = SanitiseFeedback().preprocess(off_schema(hostile_notebook(png)), {})
    nbformat.validate(nb)


@pytest.mark.parametrize("injected, problem", [
    ("<!-- a --!><script>alert(1)</script> -->", ""),  # a browser ends the comment at --!>; html.parser does not
    ('<p title="</noscript><img src=x onerror=alert(1)>">x</p>', ""),
    ("<xmp><p title='</xmp><script>alert(1)</script>'></xmp>", ""),
    ('<p "onclick=alert(1)>x</p>', "attribute named"),
    ("<?php echo 1 ?><!ENTITY x 'y'>", ""),
])
def test_the_page_the_browser_gets_is_what_the_scan_read(rendered, injected, problem):
    """The browser is given the page as the scan's parser read it: comments and processing instructions
    dropped, text and attribute values escaped. Nothing the scan read as text or as an attribute value can
    become markup in a browser, and an odd attribute name is a problem."""
    page, empty = rendered
    template_scripts = frozenset(sanitise_feedback.scan_page(empty).scripts)
    written, problems = checked_page(page.replace("My answer is readable", "My answer " + injected),
                                     template_scripts)
    if problem:
        assert any(problem in found for found in problems), problems
        return
    assert problems == []
    again, problems_again = checked_page(written, template_scripts)
    assert problems_again == [] and again == written  # writing it again is a fixed point
    assert "<!--" not in written and "<?" not in written and "<!ENTITY" not in written
    assert "alert(1)" not in "".join(text for _, text in Page(written).scripts)
    assert not [attrs for tag, attrs in Page(written).elements if tag == "img" and "onerror" in attrs]


def test_every_image_gets_alt_text_as_nbconvert_would_give_it(rendered):
    page, _ = rendered
    images = Page(page).images()
    assert images and all(attrs.get("alt") for attrs in images)


def test_pages_rendered_from_the_caches_equal_pages_rendered_afresh(png):
    """A class's pages share prose and code, kept between pages: a second page, and a page rendered with
    every cache emptied, are the same page."""
    exporter = feedback_exporter(course_config())
    first, _ = exporter.from_notebook_node(off_schema(hostile_notebook(png)), resources=RESOURCES)
    second, _ = feedback_exporter(course_config()).from_notebook_node(off_schema(hostile_notebook(png)),
                                                                      resources=RESOURCES)
    for cache in (sanitise_feedback._markdown_html, sanitise_feedback.clean_html):
        cache.cache_clear()
    sanitise_feedback._HIGHLIGHTS.clear()
    sanitise_feedback.COMPILED_TEMPLATES.compiled.clear()
    fresh, _ = feedback_exporter(course_config()).from_notebook_node(off_schema(hostile_notebook(png)),
                                                                     resources=RESOURCES)
    assert first == second == fresh


def test_a_text_too_long_to_keep_is_sanitised_but_not_kept():
    long_text = "<b>x</b>" * (sanitise_feedback.CACHED_TEXT // 8 + 1)
    sanitise_feedback.clean_html.cache_clear()
    assert sanitise_feedback.clean_html(long_text) == long_text
    assert sanitise_feedback.clean_html.cache_info().currsize == 0


FORMULAS = r"""Scaled scores $\frac{QK^\top}{\sqrt{d_k}}$, then

$$\alpha_{t,s} = \operatorname{softmax}(e_{t,s}), \qquad c_t = \sum_s \alpha_{t,s}\, h_s$$
"""
FORMULA_ATTACKS = r"""$\text{</math><script>alert('mathml')</script>}$ and $\text{<mtext><style><img src=x onerror=alert(2)>}$
[a link](https://example.org "$\text{" onmouseover="alert(3)}$") and $$\text{<math><mglyph src=x>}$$
"""


@pytest.fixture(scope="module")
def math_pages():
    exporter = feedback_exporter(course_config())
    pages = [exporter.from_notebook_node(new_notebook(cells=[new_markdown_cell(text)]), resources=RESOURCES)[0]
             for text in (FORMULAS, FORMULA_ATTACKS, "")]
    return pages


def test_formulas_reach_the_feedback_page_as_mathml_not_as_latex(math_pages):
    """The notebook's LaTeX is MathML rendered by the grader: readable in a browser with no script."""
    page, _, empty = math_pages
    assert page_problems(page, empty) == []
    elements = [tag for tag, _ in Page(page).elements]
    assert elements.count("math") == 2 and {"mfrac", "msqrt", "msub", "msup"} <= set(elements)
    text = Page(page).all_text()
    assert "$" not in text and "\\frac" not in text and "\\sqrt" not in text and "softmax" in text


def test_a_formula_carries_no_markup_out_of_its_math(math_pages):
    attacked, empty = math_pages[1], math_pages[2]
    assert page_problems(attacked, empty) == []
    assert not any("alert(" in text for _, text in Page(attacked).scripts)
    template = [tag for tag, _ in Page(empty).elements]
    added = [(tag, attrs) for tag, attrs in Page(attacked).elements if tag not in template or tag == "img"]
    for tag, attrs in added:
        assert tag not in ("script", "style", "img", "mglyph") and not any(name.startswith("on") for name in attrs), \
            (tag, attrs)
    assert "alert(" in Page(attacked).all_text(), "the formulas' text stays readable, as text"


@pytest.mark.parametrize("assignment", ["02_three_stage_attention", "04_self_attention", "06_transformer"])
def test_every_formula_of_a_course_notebook_becomes_mathml(assignment):
    from tests.course_files import source_notebook
    for cell in (c for c in source_notebook(assignment).cells if c.cell_type == "markdown"):
        shown = sanitise_feedback.markdown_html(cell.source)
        outside = Page(shown.replace("<math", "<x-math")).all_text() if "<math" not in shown else \
            "".join(Page(part.split("</math>", 1)[-1]).all_text() for part in shown.split("<math"))
        assert "$" not in outside, f"{assignment}: LaTeX left as text in {cell.source[:80]!r}"


NESTED = "<div>" * 200 + "x" + "</div>" * 200
QUOTED = "\n".join(">" * 80 + " deep" for _ in range(3))


def test_the_pages_work_is_bounded_before_it_starts_and_each_bound_is_said_in_one_line():
    """Markup too long, nested too deep or past the page's allowance is shown as its escaped text with the
    reason; a long code cell is cut with a line saying how much; the course's own prose is all rendered."""
    course = nbformat.read(sanitise_feedback.__file__.replace("grader/feedback/sanitise_feedback.py",
                                                              "notebooks/08_real_translation/08_real_translation.ipynb"), 4)
    prose = sum(1 for cell in course.cells if cell.cell_type == "markdown")
    notebook = nbformat.from_dict(course)
    notebook.cells += [new_markdown_cell(NESTED), new_markdown_cell(QUOTED),
                       new_markdown_cell("*a* " * 6_000),  # 24,000 characters
                       new_code_cell("x = 1\n" * 100_000,
                                     outputs=[display({"text/html": NESTED}), display({"text/markdown": QUOTED})])]
    notebook.cells += [new_markdown_cell(f"**{i}** " + "a " * 9_990) for i in range(25)]  # 20,000 each

    cells, _ = SanitiseFeedback().preprocess(notebook, {})
    cells = cells.cells

    assert not any("[shown as text" in cell.source for cell in cells[:len(course.cells)]), "the course's prose"
    assert sum(1 for cell in cells[:len(course.cells)] if cell.cell_type == "markdown") == prose
    extra = cells[len(course.cells):]
    assert "[shown as text: it nests 200 deep, more than 64]" in extra[0].source and "<div><div>" not in extra[0].source
    assert "[shown as text: it nests 80 deep, more than 64]" in extra[1].source
    assert "[shown as text: it is longer than 20,000 characters]" in extra[2].source
    code = extra[3]
    assert code.source.endswith("# ... [the feedback shows 20,000 of this cell's 600,000 characters]")
    assert len(code.source) < 20_100
    outputs = [output.data["text/html"] for output in code.outputs]
    assert "[shown as text: it nests 200 deep" in outputs[0] and "[shown as text: it nests 80 deep" in outputs[1]
    rendered = [cell for cell in extra[4:] if "[shown as text" not in cell.source]
    spent = sum(len(cell.source) for cell in course.cells if cell.cell_type == "markdown")
    assert len(rendered) == (sanitise_feedback.MAX_NOTEBOOK_MARKUP - spent) // 20_000, len(rendered)
    assert all("<strong>" in cell.source for cell in rendered)
    assert "[shown as text: the page has rendered 250,000 characters of markup]" in extra[-1].source


def test_the_graders_own_summary_is_not_held_to_the_students_allowance():
    """FeedbackSummary's first cell (figures inline) may be long; a student cell with the same text is not it."""
    summary = "<h2>What to do next</h2>" + "<p>a figure</p>" * 2_000  # 30,000 characters
    notebook = new_notebook(cells=[new_markdown_cell(summary), new_markdown_cell(summary)])
    cells = SanitiseFeedback().preprocess(notebook, {sanitise_feedback.GRADER_SUMMARY: summary})[0].cells
    assert "<h2>What to do next</h2>" in cells[0].source and "[shown as text" not in cells[0].source
    assert "[shown as text: it is longer than 20,000 characters]" in cells[1].source
    alone = SanitiseFeedback().preprocess(new_notebook(cells=[new_markdown_cell(summary)]), {})[0].cells
    assert "[shown as text" in alone[0].source, "without the grader's word, the first cell is the student's"
