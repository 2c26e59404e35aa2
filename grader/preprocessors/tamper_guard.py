"""GuardAgainstTampering: feedback, not a barrier. After an answer cell that patches what the tests rely on
(library functions, builtins, the course's check helpers), a note names the line; it changes no score."""
import ast

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import List, Unicode

from grader.course import nbgrader_meta


# Modules an answer may not import at all.
FORBIDDEN_MODULES = ("builtins", "importlib", "unittest", "ctypes")


class GuardAgainstTampering(NbGraderPreprocessor):
    """Feedback, not a barrier: after an answer cell that patches what tests use, a note says what was seen.

    The answer still runs and is graded as it is: the tests run in the grader, out of the student's
    reach (SandboxedExecute), so a patch changes nothing but the student's own kernel.
    """

    protected_modules = List(
        Unicode(), list(FORBIDDEN_MODULES), help="Modules an answer should not import or touch"
    ).tag(config=True)

    def preprocess(self, nb, resources):
        problems = tampering_problems(nb, set(self.protected_modules))
        cells = []
        for cell in nb.cells:
            cells.append(cell)
            problem = problems.get(nbgrader_meta(cell).get("grade_id"))
            if problem and nbgrader_meta(cell).get("solution"):
                self.log.warning("Answer %s: %s", nbgrader_meta(cell)["grade_id"], problem)
                cells.append(nbformat.v4.new_markdown_cell(
                    f"**Grader's note on the answer above:** {problem}. Tests run in the grader, outside "
                    "your kernel, so this changed nothing but your own kernel; your answer was graded as "
                    "written."))
        nb.cells = cells
        return nb, resources


def tampering_problems(nb, forbidden_modules=frozenset(FORBIDDEN_MODULES)) -> dict:
    """grade_id -> why, for every answer cell that patches what the tests use.

    Protected: the names the locked setup cell binds, and every module the notebook imports.
    """
    fixed = set()
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        locked_code = cell.cell_type == "code" and meta.get("locked")
        if locked_code and not meta.get("grade") and not meta.get("solution"):
            fixed |= _bound_names(cell.source)
    modules = set(forbidden_modules) | _module_names(nb)
    problems = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and nbgrader_meta(cell).get("solution"):
            problem = find_tampering(cell.source, fixed, modules, set(forbidden_modules))
            if problem:
                problems[nbgrader_meta(cell)["grade_id"]] = problem
    return problems


# Ways to patch an object without naming it in an assignment.
_INTROSPECTION = {"__setattr__", "__delattr__", "__dict__", "__globals__", "__builtins__", "__code__",
                  "__subclasses__", "__closure__", "__defaults__", "__kwdefaults__"}


def _module_names(nb) -> set:
    names = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                names |= {a.asname or a.name for a in node.names}
    return names


def _bound_names(source: str) -> set:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _root_name(node):
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def find_tampering(source: str, fixed: set, modules: set, forbidden_modules: set):
    """A sentence naming the first line that patches what the tests use, or None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None  # the syntax error itself fails the exercise
    for node in ast.walk(tree):
        line = getattr(node, "lineno", "?")
        targets = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, (ast.Attribute, ast.Subscript)) and _root_name(target) in modules:
                return f"line {line} assigns to {ast.unparse(target)}, part of a module the tests use"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            for name in names:
                if name.split(".")[0] in forbidden_modules:
                    return f"line {line} imports {name}, which answers may not use"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in {"setattr", "delattr"} and node.args and _root_name(node.args[0]) in modules:
                return f"line {line} calls {node.func.id} on {ast.unparse(node.args[0])}"
            if node.func.id in {"exec", "eval", "compile", "__import__", "globals", "vars"}:
                return f"line {line} calls {node.func.id}(), which answers may not use"
        if isinstance(node, ast.Name) and node.id in {"__builtins__", "builtins"}:
            return f"line {line} uses {node.id}"
        if isinstance(node, ast.Attribute) and node.attr in _INTROSPECTION:
            return f"line {line} reaches into {node.attr}, which answers may not use"
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue  # importing again what the setup cell imported is harmless
        redefined = _bound_names(ast.unparse(node)) & fixed
        if redefined:
            return f"line {node.lineno} redefines {', '.join(sorted(redefined))} from the locked setup cell"
    return None
