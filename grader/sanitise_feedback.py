"""Student content reaches feedback pages and the Formgrader only through an allow-list (wired in
grader/nbgrader_config.py).

nbconvert's templates interpolate markdown, outputs, metadata and cell ids without escaping, and
everything in an autograded notebook came from the student or the student's kernel.

- SanitiseFeedback: before rendering, rebuilds the notebook from what is safe to show: markdown as
  sanitised HTML (bleach, an allow-list of tags and attributes), outputs as text, validated PNG/JPEG
  and sanitised HTML (anything else is left out with a note), nbgrader's validated cell metadata only,
  fresh cell ids and fixed Python notebook metadata.
- CheckedHTMLExporter: generate_feedback's exporter. Each page it renders is parsed; a page holding a
  script its template does not emit, an on* attribute, a javascript: URL or an iframe-like element is
  replaced by a plain page saying the feedback could not be shown safely.
"""
import base64
import binascii
import copy
import html
import math
import re
from html.parser import HTMLParser

import bleach
import nbformat
from nbconvert.exporters import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbgrader.preprocessors import NbGraderPreprocessor

TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "cite", "code", "col", "colgroup", "dd", "del",
    "details", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
    "i", "img", "input", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span",
    "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul",
    "var",
})
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


# Disallowed tags are escaped, not stripped: the student's text stays readable, and so does an attempt.
CLEANER = bleach.Cleaner(tags=TAGS, attributes=_allowed_attribute, protocols=PROTOCOLS, strip=False)


def clean_html(fragment: str) -> str:
    return CLEANER.clean(fragment)


def markdown_html(source: str, attachments: dict = None) -> str:
    """Markdown rendered by nbconvert's renderer, then sanitised."""
    renderer = IPythonRenderer(escape=False, exclude_anchor_links=True, attachments=attachments or {})
    try:
        rendered = MarkdownWithMath(renderer=renderer).render(source)
    except Exception:  # noqa: BLE001 (a missing attachment, markdown mistune chokes on: show the text)
        rendered = f"<pre>{html.escape(source)}</pre>"
    return clean_html(rendered)


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


def _note(what: str):
    return nbformat.v4.new_output("display_data", data={"text/plain": f"[{what} not shown in the feedback]"})


def _mimetype_name(mimetype) -> str:
    return mimetype if isinstance(mimetype, str) and MIMETYPE.fullmatch(mimetype) else "an unknown type"


def safe_data(data) -> tuple:
    """(the shown part of a mime bundle, the mimetypes left out)."""
    data = data if isinstance(data, dict) else {}
    kept, used = {}, set()
    for mimetype in OUTPUT_IMAGES:
        image = image_bytes(data.get(mimetype), mimetype)
        if image:
            kept[mimetype] = base64.b64encode(image).decode("ascii")
            used.add(mimetype)
    for mimetype, convert in (("text/html", clean_html), ("text/markdown", markdown_html)):
        if mimetype in data:
            kept.setdefault("text/html", convert(as_text(data[mimetype])))
            used.add(mimetype)
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


def safe_outputs(outputs) -> list:
    kept = []
    for output in outputs if isinstance(outputs, list) else []:
        kind = output.get("output_type") if isinstance(output, dict) else None
        if kind == "stream":
            name = "stderr" if output.get("name") == "stderr" else "stdout"
            kept.append(nbformat.v4.new_output("stream", name=name, text=as_text(output.get("text"))))
        elif kind == "error":
            traceback = output.get("traceback")
            kept.append(nbformat.v4.new_output(
                "error", ename=as_text(output.get("ename")), evalue=as_text(output.get("evalue")),
                traceback=[as_text(line) for line in traceback] if isinstance(traceback, list) else []))
        elif kind in ("execute_result", "display_data"):
            data, dropped = safe_data(output.get("data"))
            if data:
                extra = {"execution_count": execution_count(output.get("execution_count"))} \
                    if kind == "execute_result" else {}
                metadata = safe_image_metadata(output.get("metadata"), data)
                kept.append(nbformat.v4.new_output(kind, data=data, metadata=metadata, **extra))
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


def safe_cell(cell, index: int):
    metadata = cell.get("metadata")
    nbgrader = safe_nbgrader(metadata.get("nbgrader") if isinstance(metadata, dict) else None)
    metadata = {"nbgrader": nbgrader} if nbgrader else {}
    source = as_text(cell.get("source"))
    if cell.get("cell_type") == "code":
        safe = nbformat.v4.new_code_cell(source, metadata=metadata,
                                         outputs=safe_outputs(cell.get("outputs")),
                                         execution_count=execution_count(cell.get("execution_count")))
    elif cell.get("cell_type") == "markdown":
        shown = markdown_html(source, safe_attachments(cell.get("attachments")))
        safe = nbformat.v4.new_markdown_cell(html_block(shown), metadata=metadata)
    else:  # raw and unknown cells: their text, escaped
        shown = f"<pre>{html.escape(source)}</pre>"
        safe = nbformat.v4.new_markdown_cell(html_block(shown), metadata=metadata)
    safe.id = f"cell-{index}"
    return safe


class SanitiseFeedback(NbGraderPreprocessor):
    """Rebuild the notebook from what is safe to show (see the module's docstring)."""

    def preprocess(self, nb, resources):
        nb.cells = [safe_cell(cell, index) for index, cell in enumerate(nb.cells)]
        nb.metadata = nbformat.from_dict(SAFE_METADATA)
        nb.nbformat, nb.nbformat_minor = 4, 5
        return nb, resources


FORBIDDEN_ELEMENTS = frozenset({"iframe", "frame", "frameset", "object", "embed", "applet", "base", "form",
                                "svg", "math"})
URL_ATTRIBUTES = frozenset({"href", "src", "action", "formaction", "xlink:href", "data", "background",
                            "poster", "cite", "codebase"})


class _PageScan(HTMLParser):
    """The scripts of a page, and what in it could run code or take the page elsewhere."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.scripts, self.problems, self._script = [], [], None

    def handle_starttag(self, tag, attrs):
        self._check(tag, attrs)
        if tag == "script":
            self._script = (tuple(sorted((name, value or "") for name, value in attrs)), [])

    def handle_startendtag(self, tag, attrs):
        self._check(tag, attrs)
        if tag == "script":  # a browser opens a script at <script/>; html.parser does not
            self.problems.append("a self-closed <script/>")

    def handle_data(self, data):
        if self._script:
            self._script[1].append(data)

    def handle_endtag(self, tag):
        if tag == "script" and self._script:
            self.scripts.append((self._script[0], "".join(self._script[1])))
            self._script = None

    def close(self):
        super().close()
        self.handle_endtag("script")  # a script left open at the end of the page still counts

    def _check(self, tag, attrs):
        if tag in FORBIDDEN_ELEMENTS:
            self.problems.append(f"a <{tag}> element")
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


def page_problems(page: str, template_page: str) -> list:
    """What in `page` could run code or navigate, beyond the scripts `template_page` (the same template
    rendered for an empty notebook) has."""
    template_scripts = set(scan_page(template_page).scripts)
    scan = scan_page(page)
    extra = [script for script in scan.scripts if script not in template_scripts]
    if extra:
        return scan.problems + [f"{len(extra)} <script> element(s) the template does not emit"]
    return scan.problems


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


class CheckedHTMLExporter(HTMLExporter):
    """HTMLExporter whose pages carry only the template's own scripts (see page_problems); any other page is
    replaced by refusal_page and logged. generate_feedback writes what this returns."""

    def from_notebook_node(self, nb, resources=None, **kw):
        # HTMLExporter picks the code's lexer from language_info before any preprocessor runs.
        nb = copy.deepcopy(nb)
        nb.metadata["language_info"] = nbformat.from_dict(SAFE_METADATA["language_info"])
        page, resources = super().from_notebook_node(nb, resources, **kw)
        template_page = self.template.render(nb=nbformat.v4.new_notebook(), resources=resources)
        problems = page_problems(page, template_page)
        if problems:
            info = resources.get("nbgrader", {})
            self.log.error("Feedback for %s on %s replaced by a plain page: it had %s", info.get("student"),
                           info.get("notebook"), "; ".join(problems[:5]))
            page = refusal_page(info)
        return page, resources
