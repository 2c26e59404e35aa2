"""MkDocs hook (mkdocs.yml `hooks:`): `{{ results NAME }}` in a page becomes results/NAME.json's table,
`{{ results NAME.fact }}` one of its figures and `{{ results NAME:measured }}` when it was measured
(course_build/results.py). A name or fact that was never recorded stops the (strict) build."""
import re

from mkdocs.exceptions import PluginError

from course_build import results

REFERENCE = re.compile(r"\{\{\s*results\s+([\w-]+)(?:\.(\w+)|:(\w+))?\s*\}\}")


def render(markdown: str, where: str = "") -> str:
    def replace(match):
        name, fact, field = match.groups()
        try:
            data = results.read(name)
        except KeyError as error:
            raise PluginError(f"{where}: {error.args[0]}") from None
        if field:
            if field not in data:
                raise PluginError(f"{where}: results/{name}.json has no {field!r}")
            return results.figure(data[field])
        if fact:
            if fact not in data["facts"]:
                raise PluginError(f"{where}: results/{name}.json has no fact {fact!r}; it has "
                                  f"{', '.join(sorted(data['facts'])) or 'none'}")
            return results.figure(data["facts"][fact], fact)
        return results.table(data)

    return REFERENCE.sub(replace, markdown)


def on_page_markdown(markdown, page, config, files):
    return render(markdown, page.file.src_path)
