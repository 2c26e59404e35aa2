"""Student content reaches feedback pages and the Formgrader only through an allow-list (wired in
grader/nbgrader_config.py).

nbconvert's templates interpolate markdown, outputs, metadata and cell ids without escaping, and
everything in an autograded notebook came from the student or the student's kernel.

- SanitiseFeedback: before rendering, rebuilds the notebook from what is safe to show: markdown as
  sanitised HTML (bleach, an allow-list of tags and attributes), outputs as text, validated PNG/JPEG
  and sanitised HTML (anything else is left out with a note), nbgrader's validated cell metadata only,
  fresh cell ids and fixed Python notebook metadata. The markdown's LaTeX ($...$, $$...$$, \\begin{...})
  becomes MathML here (latex2mathml), cleaned by an allow-list of presentation MathML, so the page
  shows formulas without a script. MathML passes only by that allow-list, a student's own too; on the page,
  the check refuses any element or attribute inside <math> that is not on it (a browser parses HTML there).
- CheckedHTMLExporter: generate_feedback's exporter. Each page it renders is parsed once and written
  again from what the parser read (text and attribute values escaped, comments dropped); a page holding
  a script its template does not emit, an on* attribute, a javascript: URL or an iframe-like element is
  replaced by a plain page saying the feedback could not be shown safely.

A class's pages repeat the same prose and code: the markdown, HTML and highlighting of a text are kept
(bounded caches, pure functions of the text), so the students after the first cost little.
"""
import base64
import binascii
import copy
import functools
import html
import json
import math
import re
import secrets
from html.parser import HTMLParser

import bleach
from bleach.html5lib_shim import Filter
import jinja2
import nbformat
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from latex2mathml.converter import convert as latex_to_mathml
from nbgrader.preprocessors import NbGraderPreprocessor

from grader.limits import FIXED

TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "cite", "code", "col", "colgroup", "dd", "del",
    "details", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
    "i", "img", "input", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span",
    "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul",
    "var",
})
# Presentation MathML as latex2mathml writes it: no href, no mglyph or maction, no annotation-xml (which may hold HTML).
MATH_TAGS = frozenset({
    "math", "menclose", "mfenced", "mfrac", "mi", "mn", "mo", "mover", "mpadded", "mphantom", "mroot", "mrow", "ms",
    "mspace", "msqrt", "mstyle", "msub", "msubsup", "msup", "mtable", "mtd", "mtext", "mtr", "munder", "munderover",
})
MATH_ATTRIBUTES = frozenset({
    "accent", "accentunder", "align", "close", "columnalign", "columnlines", "columnspacing", "depth", "display",
    "displaystyle", "equalcolumns", "equalrows", "fence", "form", "frame", "framespacing", "height", "largeop",
    "linethickness", "lspace", "mathvariant", "maxsize", "minsize", "movablelimits", "notation", "open", "rowalign",
    "rowlines", "rowspacing", "rspace", "scriptlevel", "separator", "separators", "stretchy", "symmetric", "width",
})
CLEANED_TAG = re.compile(r"<(?:[^\"'>]|\"[^\"]*\"|'[^']*')*>")  # a tag as bleach writes it, quoted values may hold '>'
MATH_VALUE = re.compile(r"[A-Za-z0-9.%#+ -]{0,60}")  # words, numbers, lengths: nothing a browser fetches or runs
# bleach checks every URL's scheme against this list too; "data" is narrowed to images below.
PROTOCOLS = frozenset({"http", "https", "mailto", "data"})
IMAGE_SIGNATURES = {"image/png": b"\x89PNG\r\n\x1a\n", "image/jpeg": b"\xff\xd8\xff", "image/gif": b"GIF8"}
OUTPUT_IMAGES = ("image/png", "image/jpeg")
DATA_IMAGE = re.compile(r"data:(image/(?:png|jpeg|gif));base64,(.*)", re.S)
LINK = re.compile(r"(https?://|mailto:|#)", re.I)
CLASS_NAMES = re.compile(r"[A-Za-z0-9_-]{1,20}( [A-Za-z0-9_-]{1,20})*")  # pygments' token classes
NUMBER = re.compile(r"[0-9]{1,5}")
GRADE_ID = re.compile(r"[A-Za-z0-9_-]+")  # what nbgrader itself accepts
MIMETYPE = re.compile(r"[\w.+-]{1,60}/[\w.+-]{1,60}")
URL_NOISE = re.compile(r"[\x00-\x20\x7f-\xa0]+")  # browsers ignore these in a URL's scheme
CACHED_TEXT = FIXED["cached_text_characters"].value
# The page's work is bounded before it starts: sanitising markup costs more than linear time in its length
# and nesting (nested elements: 22 KB took 2.5 s, 88 KB 19 s), highlighting is linear in the code.
MAX_MARKUP_CHARACTERS = FIXED["markup_characters"].value
MAX_MARKUP_DEPTH = FIXED["markup_depth"].value
MAX_NOTEBOOK_MARKUP = FIXED["notebook_markup_characters"].value
MAX_CODE_CHARACTERS = FIXED["code_characters"].value
MAX_NOTEBOOK_CODE = FIXED["notebook_code_characters"].value
TAG = re.compile(r"<(/?)([A-Za-z][\w-]*)[^<>]*?(/?)>")
# Where grader.feedback.feedback_summary leaves the source of the summary cell it put first: the grader's own page,
# its student text bounded where it was made, so the page's allowance does not apply to it.
GRADER_SUMMARY = "grader_feedback_summary"
CACHED_TEXTS = FIXED["cached_texts"].value

SAFE_METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python", "pygments_lexer": "ipython3", "file_extension": ".py",
                      "mimetype": "text/x-python"},
}


def as_text(value) -> str:
    """nbformat's multiline strings, and whatever else a hostile kernel put there, as one string."""
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return "" if value is None else str(value)


def image_bytes(value, mimetype: str):
    """The decoded image when `value` is base64 of a `mimetype` image, else None."""
    if mimetype not in IMAGE_SIGNATURES or not isinstance(value, str):
        return None
    try:
        data = base64.b64decode("".join(value.split()), validate=True)
    except (binascii.Error, ValueError):
        return None
    return data if data.startswith(IMAGE_SIGNATURES[mimetype]) else None


def _allowed_attribute(tag: str, name: str, value: str) -> bool:
    if tag in MATH_TAGS:
        return name in MATH_ATTRIBUTES and bool(MATH_VALUE.fullmatch(value))
    url = URL_NOISE.sub("", html.unescape(value))
    if tag == "a":
        return name == "title" or (name == "href" and bool(LINK.match(url)))
    if tag == "img":
        if name == "src":
            image = DATA_IMAGE.fullmatch(url)
            return bool(image) and image_bytes(image.group(2), image.group(1)) is not None
        return name in ("alt", "title") or (name in ("width", "height") and bool(NUMBER.fullmatch(value)))
    if tag == "input":  # markdown's task lists: a checkbox outside any form
        return (name == "type" and value == "checkbox") or name in ("checked", "disabled")
    if name == "class":  # the colours of highlighted code blocks, nothing a page's script acts on
        return bool(CLASS_NAMES.fullmatch(value)) if tag == "span" else tag == "div" and value == "highlight"
    return ((tag in ("td", "th") and name in ("colspan", "rowspan")) or (tag == "ol" and name == "start")) \
        and bool(NUMBER.fullmatch(value))


class OnlyMathInsideMath(Filter):
    """Inside <math>, an element that is not presentation MathML becomes its name as text: a browser would parse
    HTML there (MathML's <mtext> holds HTML), which neither this cleaner nor the page's check should have to."""

    def __iter__(self):
        depth = 0
        for token in super().__iter__():
            if token["type"] in ("StartTag", "EmptyTag", "EndTag"):
                closing = token["type"] == "EndTag"
                if depth and token["name"] not in MATH_TAGS:
                    yield {"type": "Characters", "data": f"<{'/' if closing else ''}{token['name']}>"}
                    continue
                if token["name"] == "math" and token["type"] != "EmptyTag":
                    depth = max(depth - 1, 0) if closing else depth + 1
            yield token


# Disallowed tags are escaped, not stripped: the student's text stays readable, and so does an attempt. MathML
# passes (the grader's from LaTeX, and so a page cleaned twice is cleaned once) by MathML's allow-list alone.
CLEANER = bleach.Cleaner(tags=TAGS | MATH_TAGS, attributes=_allowed_attribute, protocols=PROTOCOLS, strip=False,
                         filters=[OnlyMathInsideMath])


def kept_for_its_text(function):
    """`function` of one string, remembered for the texts a class shares (a bounded cache)."""
    cached = functools.lru_cache(maxsize=CACHED_TEXTS)(function)

    @functools.wraps(function)
    def call(text: str) -> str:
        return cached(text) if len(text) <= CACHED_TEXT else function(text)
    call.cache_clear, call.cache_info = cached.cache_clear, cached.cache_info
    return call


@kept_for_its_text
def clean_html(fragment: str) -> str:
    return CLEANER.clean(fragment)


def markdown_html(source: str, attachments: dict = None) -> str:
    """Markdown rendered by nbconvert's renderer, then sanitised."""
    return _render_markdown(source, attachments) if attachments else _markdown_html(source)


@kept_for_its_text
def _markdown_html(source: str) -> str:
    return _render_markdown(source, None)


def _render_markdown(source: str, attachments) -> str:
    renderer = MathMLRenderer(escape=False, exclude_anchor_links=True, attachments=attachments or {})
    try:
        rendered = MarkdownWithMath(renderer=renderer).render(source)
    except Exception:  # noqa: BLE001 (a missing attachment, markdown mistune chokes on: show the text)
        return clean_html(f"<pre>{html.escape(source)}</pre>")
    return renderer.fill_formulas(clean_html(rendered))


class MathMLRenderer(IPythonRenderer):
    """nbconvert's markdown renderer with each formula left as a placeholder (a word no text can guess, made
    anew for every rendering) that `fill_formulas` replaces with MathML after the HTML is cleaned."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.formulas, self._nonce = [], secrets.token_hex(12)

    def _placeholder(self, latex: str, display: str) -> str:
        self.formulas.append((mathml(f"{display}:{latex}"), html.escape(latex)))
        return f"mathml{self._nonce}x{len(self.formulas) - 1}x"

    def block_math(self, body: str) -> str:
        return self._placeholder(body, "block")

    def latex_environment(self, name: str, body: str) -> str:
        return self._placeholder(f"\\begin{{{name}}}{body}\\end{{{name}}}", "block")

    def inline_math(self, body: str) -> str:
        return self._placeholder(body, "inline")

    def fill_formulas(self, cleaned: str) -> str:
        """The cleaned HTML with each placeholder in text replaced by its MathML; one inside a tag (a link's
        title) by its LaTeX, escaped, since markup there would leave the attribute."""
        placeholder = re.compile(f"mathml{self._nonce}x([0-9]+)x")
        parts, end = [], 0
        for tag in CLEANED_TAG.finditer(cleaned):
            parts.append(placeholder.sub(lambda m: self.formulas[int(m.group(1))][0], cleaned[end:tag.start()]))
            parts.append(placeholder.sub(lambda m: self.formulas[int(m.group(1))][1], tag.group(0)))
            end = tag.end()
        parts.append(placeholder.sub(lambda m: self.formulas[int(m.group(1))][0], cleaned[end:]))
        return "".join(parts)


@kept_for_its_text
def mathml(formula: str) -> str:
    """'inline:<LaTeX>' or 'block:<LaTeX>' as cleaned MathML; LaTeX the converter cannot read stays as code."""
    display, latex = formula.split(":", 1)
    try:
        converted = latex_to_mathml(latex, display=display)
    except Exception:  # noqa: BLE001 (any LaTeX the converter rejects: show it as written)
        return f"<code>{html.escape(latex)}</code>"
    return CLEANER.clean(converted)


def html_block(fragment: str) -> str:
    """Sanitised HTML as markdown that the templates' markdown2html passes on unchanged: one line inside a
    <div> is one raw HTML block (newlines become &#10;, which renders the same)."""
    lines = fragment.replace("\r\n", "\n").replace("\r", "\n")
    return "<div>" + lines.replace("\n", "&#10;") + "</div>"


def safe_attachments(attachments) -> dict:
    """A markdown cell's attachments that are real PNG, JPEG or GIF images, re-encoded."""
    kept = {}
    for name, bundle in (attachments.items() if isinstance(attachments, dict) else []):
        bundle = bundle if isinstance(bundle, dict) else {}
        images = {mimetype: image_bytes(bundle.get(mimetype), mimetype) for mimetype in IMAGE_SIGNATURES}
        images = {mimetype: base64.b64encode(data).decode("ascii") for mimetype, data in images.items()
                  if data}
        if images:
            kept[str(name)] = images
    return kept


def markup_depth(text: str) -> int:
    """How deep `text` nests: HTML elements (void and self-closed ones aside), quotes (">") and list items."""
    depth = deepest = 0
    for found in TAG.finditer(text):
        closing, name, self_closed = found.groups()
        if closing:
            depth = max(depth - 1, 0)
        elif not self_closed and name.lower() not in VOID_ELEMENTS:
            depth += 1
            deepest = max(deepest, depth)
    for line in text.splitlines():
        stripped = line.lstrip(" >\t-*+")
        deepest = max(deepest, line[:len(line) - len(stripped)].count(">"), (len(line) - len(line.lstrip(" "))) // 2)
    return deepest


class RenderBudget:
    """What one notebook's page may still cost: markup rendered and code highlighted, in characters."""

    def __init__(self):
        self.markup_left, self.code_left = MAX_NOTEBOOK_MARKUP, MAX_NOTEBOOK_CODE

    def markup_refused(self, text: str) -> str:
        """Why `text` is shown as text rather than rendered ("" when it is rendered, and then paid for)."""
        if len(text) > MAX_MARKUP_CHARACTERS:
            return f"it is longer than {MAX_MARKUP_CHARACTERS:,} characters"
        if len(text) > self.markup_left:
            return f"the page has rendered {MAX_NOTEBOOK_MARKUP:,} characters of markup"
        depth = markup_depth(text)
        if depth > MAX_MARKUP_DEPTH:
            return f"it nests {depth} deep, more than {MAX_MARKUP_DEPTH}"
        self.markup_left -= len(text)
        return ""

    def code(self, source: str) -> str:
        """The part of a code cell's source the page shows, and a line saying what was cut."""
        shown = min(len(source), MAX_CODE_CHARACTERS, self.code_left)
        self.code_left -= shown
        if shown == len(source):
            return source
        return f"{source[:shown]}\n# ... [the feedback shows {shown:,} of this cell's {len(source):,} characters]"


def as_text_block(text: str, why: str) -> str:
    """Markup shown as its escaped text (linear in its length), with the reason in one line."""
    return f"<pre>{html.escape(text)}</pre><p><em>[shown as text: {html.escape(why)}]</em></p>"


def _output(kind: str, **fields):
    """An output as nbformat.v4.new_output makes it, without its schema check per output (every field is
    built here; tests/test_sanitise_feedback.py validates whole notebooks)."""
    if kind in ("display_data", "execute_result"):
        fields.setdefault("metadata", {})
    return nbformat.from_dict({"output_type": kind, **fields})


def _cell(kind: str, source: str, metadata: dict, **fields):
    """A cell as nbformat.v4.new_*_cell makes it, without the schema check (as _output)."""
    return nbformat.from_dict({"cell_type": kind, "metadata": metadata, "source": source, **fields})


def _note(what: str):
    return _output("display_data", data={"text/plain": f"[{what} not shown in the feedback]"})


def _mimetype_name(mimetype) -> str:
    return mimetype if isinstance(mimetype, str) and MIMETYPE.fullmatch(mimetype) else "an unknown type"


def safe_data(data, budget: RenderBudget) -> tuple:
    """(the shown part of a mime bundle, the mimetypes left out)."""
    data = data if isinstance(data, dict) else {}
    kept, used = {}, set()
    for mimetype in OUTPUT_IMAGES:
        image = image_bytes(data.get(mimetype), mimetype)
        if image:
            kept[mimetype] = base64.b64encode(image).decode("ascii")
            used.add(mimetype)
    for mimetype, convert in (("text/html", clean_html), ("text/markdown", markdown_html)):
        if mimetype not in data:
            continue
        used.add(mimetype)
        if "text/html" not in kept:
            text = as_text(data[mimetype])
            refused = budget.markup_refused(text)
            kept["text/html"] = as_text_block(text, refused) if refused else convert(text)
    for mimetype in ("text/plain", "text/latex"):  # LaTeX is shown as its source
        if mimetype in data:
            kept.setdefault("text/plain", as_text(data[mimetype]))
            used.add(mimetype)
    return kept, [_mimetype_name(mimetype) for mimetype in data if mimetype not in used]


def _size(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 100_000


def safe_image_metadata(metadata, data: dict) -> dict:
    """Only integer width and height of the images kept (the templates write them unquoted)."""
    metadata = metadata if isinstance(metadata, dict) else {}
    kept = {}
    for mimetype in OUTPUT_IMAGES:
        given = metadata.get(mimetype)
        if mimetype in data and isinstance(given, dict):
            size = {key: given[key] for key in ("width", "height") if _size(given.get(key))}
            if size:
                kept[mimetype] = size
    return kept


def execution_count(value):
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def safe_outputs(outputs, budget: RenderBudget) -> list:
    kept = []
    for output in outputs if isinstance(outputs, list) else []:
        kind = output.get("output_type") if isinstance(output, dict) else None
        if kind == "stream":
            name = "stderr" if output.get("name") == "stderr" else "stdout"
            kept.append(_output("stream", name=name, text=as_text(output.get("text"))))
        elif kind == "error":
            traceback = output.get("traceback")
            kept.append(_output(
                "error", ename=as_text(output.get("ename")), evalue=as_text(output.get("evalue")),
                traceback=[as_text(line) for line in traceback] if isinstance(traceback, list) else []))
        elif kind in ("execute_result", "display_data"):
            data, dropped = safe_data(output.get("data"), budget)
            if data:
                extra = {"execution_count": execution_count(output.get("execution_count"))} \
                    if kind == "execute_result" else {}
                metadata = safe_image_metadata(output.get("metadata"), data)
                kept.append(_output(kind, data=data, metadata=metadata, **extra))
            if dropped:
                kept.append(_note("output of type " + ", ".join(sorted(set(dropped)))))
        else:
            kept.append(_note("an output of an unknown kind"))
    return kept


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def safe_nbgrader(meta) -> dict:
    """nbgrader's cell metadata, each field checked; {} for a cell without a valid grade_id."""
    if not isinstance(meta, dict) or not isinstance(meta.get("grade_id"), str) \
            or not GRADE_ID.fullmatch(meta["grade_id"]):
        return {}
    flags = ("grade", "solution", "locked", "task")
    kept = {key: meta[key] for key in flags if isinstance(meta.get(key), bool)}
    kept.update({key: float(meta[key]) for key in ("points", "score") if _number(meta.get(key))})
    kept["grade_id"] = meta["grade_id"]
    if isinstance(meta.get("schema_version"), int):
        kept["schema_version"] = meta["schema_version"]
    if isinstance(meta.get("comment"), str):  # the gradebook's comment: the templates render it as markdown
        kept["comment"] = html_block(markdown_html(meta["comment"]))
    return kept


def safe_cell(cell, index: int, budget: RenderBudget, grader_made: bool = False):
    metadata = cell.get("metadata")
    nbgrader = safe_nbgrader(metadata.get("nbgrader") if isinstance(metadata, dict) else None)
    metadata = {"nbgrader": nbgrader} if nbgrader else {}
    source = as_text(cell.get("source"))
    if cell.get("cell_type") == "code":
        safe = _cell("code", budget.code(source), metadata, outputs=safe_outputs(cell.get("outputs"), budget),
                     execution_count=execution_count(cell.get("execution_count")))
    elif cell.get("cell_type") == "markdown":
        refused = "" if grader_made else budget.markup_refused(source)
        shown = as_text_block(source, refused) if refused else \
            markdown_html(source, safe_attachments(cell.get("attachments")))
        safe = _cell("markdown", html_block(shown), metadata)
    else:  # raw and unknown cells: their text, escaped
        shown = f"<pre>{html.escape(source)}</pre>"
        safe = _cell("markdown", html_block(shown), metadata)
    safe.id = f"cell-{index}"
    return safe


class SanitiseFeedback(NbGraderPreprocessor):
    """Rebuild the notebook from what is safe to show (see the module's docstring)."""

    def preprocess(self, nb, resources):
        budget, summary = RenderBudget(), resources.get(GRADER_SUMMARY)
        nb.cells = [safe_cell(cell, index, budget, grader_made=index == 0 and summary is not None
                              and cell.get("cell_type") == "markdown" and cell.get("source") == summary)
                    for index, cell in enumerate(nb.cells)]
        nb.metadata = nbformat.from_dict(SAFE_METADATA)
        nb.nbformat, nb.nbformat_minor = 4, 5
        return nb, resources


FORBIDDEN_ELEMENTS = frozenset({"iframe", "frame", "frameset", "object", "embed", "applet", "base", "form",
                                "svg"})
URL_ATTRIBUTES = frozenset({"href", "src", "action", "formaction", "xlink:href", "data", "background",
                            "poster", "cite", "codebase"})


VOID_ELEMENTS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
                           "source", "track", "wbr"})
ELEMENT_NAME = re.compile(r"[a-z][a-z0-9-]*")  # html.parser gives names in lower case
ATTRIBUTE_NAME = re.compile(r"[a-z_:][a-z0-9_:.-]*")
IMAGE_ALT = "A figure from the notebook"  # what nbconvert's own pass would add: no image without alt text


class _PageScan(HTMLParser):
    """The scripts of a page, what in it could run code or take the page elsewhere, and the page written
    again from what this parser read: text and attribute values escaped, comments, processing instructions
    and odd declarations dropped, every image with alt text. The browser is given that page, so whatever
    html.parser and a browser would read differently never reaches the browser unscanned."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.scripts, self.problems, self._script, self.written = [], [], None, []
        self._math = 0  # open <math> elements: inside, only presentation MathML (a browser parses it otherwise)

    def handle_starttag(self, tag, attrs):
        self._check(tag, attrs)
        self._math += tag == "math"
        self._write_start(tag, attrs, closed=False)
        if tag == "script":
            self._script = (tuple(sorted((name, value or "") for name, value in attrs)), [])

    def handle_startendtag(self, tag, attrs):
        self._check(tag, attrs)
        self._write_start(tag, attrs, closed=True)
        if tag == "script":  # a browser opens a script at <script/>; html.parser does not
            self.problems.append("a self-closed <script/>")

    def handle_data(self, data):
        if self._script:
            self._script[1].append(data)
        # Inside <script> and <style> html.parser keeps the text as it is, as a browser does.
        self.written.append(data if self.cdata_elem else html.escape(data, quote=False))

    def handle_endtag(self, tag):
        self._end_script(tag)
        if tag == "math":
            self._math = max(self._math - 1, 0)
        if ELEMENT_NAME.fullmatch(tag) and tag not in VOID_ELEMENTS:
            self.written.append(f"</{tag}>")

    def _end_script(self, tag):
        if tag == "script" and self._script:
            self.scripts.append((self._script[0], "".join(self._script[1])))
            self._script = None

    def handle_decl(self, decl):
        if decl.lower() == "doctype html":
            self.written.append("<!DOCTYPE html>")

    def close(self):
        super().close()
        self._end_script("script")  # a script left open at the end of the page still counts

    def page(self) -> str:
        return "".join(self.written)

    def _write_start(self, tag, attrs, closed: bool):
        if not ELEMENT_NAME.fullmatch(tag):
            self.problems.append(f"an element named {tag[:20]!r}")
            return
        parts = [tag]
        for name, value in attrs:
            if not ATTRIBUTE_NAME.fullmatch(name):
                self.problems.append(f"an attribute named {name[:20]!r} on <{tag}>")
            elif value is None:
                parts.append(name)
            else:
                parts.append(f'{name}="{html.escape(value)}"')
        if tag == "img" and not any(name == "alt" for name, _ in attrs):
            parts.append(f'alt="{IMAGE_ALT}"')
        self.written.append(f"<{' '.join(parts)}>" + (f"</{tag}>" if closed and tag not in VOID_ELEMENTS else ""))

    def _check(self, tag, attrs):
        if tag in FORBIDDEN_ELEMENTS:
            self.problems.append(f"a <{tag}> element")
        if self._math or tag == "math":
            if tag not in MATH_TAGS:
                self.problems.append(f"a <{tag[:20]}> element inside <math>")
            for name, value in attrs:
                if name not in MATH_ATTRIBUTES or not MATH_VALUE.fullmatch(value or ""):
                    self.problems.append(f"an attribute {name[:20]!r} on <{tag[:20]}> inside <math>")
        for name, value in attrs:
            url = URL_NOISE.sub("", value or "").lower()
            if name.startswith("on"):
                self.problems.append(f"an {name} attribute on <{tag}>")
            elif name in URL_ATTRIBUTES and url.startswith(("javascript:", "vbscript:")):
                self.problems.append(f"a {url.split(':')[0]}: URL in {name} of <{tag}>")
            elif name in ("href", "action", "formaction") and url.startswith("data:"):
                self.problems.append(f"a data: URL in {name} of <{tag}>")
            elif tag == "meta" and name == "http-equiv" and url == "refresh":
                self.problems.append("a <meta> refresh")


def scan_page(page: str) -> _PageScan:
    scan = _PageScan()
    scan.feed(page)
    scan.close()
    return scan


def checked_page(page: str, template_scripts: frozenset) -> tuple:
    """(`page` as written again by the scan, what in it could run code or navigate beyond the scripts of
    `template_scripts`)."""
    scan = scan_page(page)
    extra = [script for script in scan.scripts if script not in template_scripts]
    problems = scan.problems + ([f"{len(extra)} <script> element(s) the template does not emit"] if extra else [])
    return scan.page(), problems


def page_problems(page: str, template_page: str) -> list:
    """What in `page` could run code or navigate, beyond the scripts `template_page` (the same template
    rendered for an empty notebook) has."""
    return checked_page(page, frozenset(scan_page(template_page).scripts))[1]


def refusal_page(info: dict) -> str:
    """A plain page in place of feedback that failed the check: the notebook's name and score, escaped."""
    name = html.escape(str(info.get("notebook", "notebook")))
    score = ""
    if _number(info.get("score")) and _number(info.get("max_score")):
        score = f"<p>Score: {round(float(info['score']), 2)} / {round(float(info['max_score']), 2)}</p>\n"
    return ("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\" />\n"
            f"<title>{name}</title>\n</head>\n<body>\n<h1>{name}</h1>\n{score}"
            "<p>The feedback on this notebook could not be shown safely, so it was left out. "
            "Ask your instructor for it.</p>\n</body>\n</html>\n")


class _CompiledTemplates(jinja2.BytecodeCache):
    """Jinja's compiled templates kept in memory: each feedback page has a new exporter, whose templates
    would otherwise be compiled again (Jinja checks each template's source against what it keeps)."""

    def __init__(self):
        self.compiled = {}

    def load_bytecode(self, bucket):
        if bucket.key in self.compiled:
            bucket.bytecode_from_string(self.compiled[bucket.key])

    def dump_bytecode(self, bucket):
        self.compiled[bucket.key] = bucket.bytecode_to_string()


COMPILED_TEMPLATES = _CompiledTemplates()


class _KeptHighlight:
    """A highlight_code filter that keeps what it made for the code cells a class shares."""

    def __init__(self, highlight):
        self.highlight = highlight
        self.kept = functools.lru_cache(maxsize=CACHED_TEXTS)(self._made)

    def _made(self, source, language, metadata_json):
        return self.highlight(source, language, json.loads(metadata_json))

    def __call__(self, source, language=None, metadata=None):
        if len(source) > CACHED_TEXT:
            return self.highlight(source, language, metadata)
        return self.kept(source, language, json.dumps(metadata or {}, sort_keys=True, default=str))


_HIGHLIGHTS = {}  # (lexer, formatter options) -> _KeptHighlight, for every exporter of the process


class CheckedHTMLExporter(HTMLExporter):
    """HTMLExporter whose pages carry only the template's own scripts (see checked_page); any other page is
    replaced by refusal_page and logged. generate_feedback writes what this returns: the page as the scan
    wrote it again, which takes the place of HTMLExporter's BeautifulSoup pass (alt text on images)."""

    def _create_environment(self):
        environment = super()._create_environment()
        environment.bytecode_cache = COMPILED_TEMPLATES
        return environment

    def from_notebook_node(self, nb, resources=None, **kw):
        # HTMLExporter picks the code's lexer from language_info before any preprocessor runs.
        nb = copy.deepcopy(nb)
        nb.metadata["language_info"] = nbformat.from_dict(SAFE_METADATA["language_info"])
        # What HTMLExporter.from_notebook_node does before rendering; its parse of the page afterwards is
        # the scan's (one parse a page instead of three).
        lexer = SAFE_METADATA["language_info"]["pygments_lexer"]
        highlight = self.filters.get("highlight_code") or Highlight2HTML(pygments_lexer=lexer, parent=self)
        if isinstance(highlight, Highlight2HTML):
            key = (highlight.pygments_lexer, repr(sorted(highlight.extra_formatter_options.items())))
            highlight = _HIGHLIGHTS.setdefault(key, _KeptHighlight(highlight))
        resources = self._init_resources(resources)
        self.register_filter("highlight_code", highlight)
        self.register_filter("filter_data_type", WidgetsDataTypeFilter(
            notebook_metadata=self._nb_metadata, parent=self, resources=resources))
        page, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        page, problems = checked_page(page, self._template_scripts(resources))
        if problems:
            info = resources.get("nbgrader", {})
            self.log.error("Feedback for %s on %s replaced by a plain page: it had %s", info.get("student"),
                           info.get("notebook"), "; ".join(problems[:5]))
            page = refusal_page(info)
        return page, resources

    def _template_scripts(self, resources) -> frozenset:
        """The scripts of this template's page for an empty notebook."""
        template_page = self.template.render(nb=nbformat.v4.new_notebook(), resources=resources)
        return frozenset(scan_page(template_page).scripts)
