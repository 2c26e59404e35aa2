"""A test cell that ran fewer checks than it was written to run fails.

The grader rewrites each test cell before running it: every check site (an `assert`, or a call of a
function whose name starts with `check`) first reports that it ran. A site that never ran, though
nothing raised, means the cell was cut short by data from the student's side: a loop over a
sequence that reports three items and yields none, an answer that was empty. Sites inside an `if`,
an `except`, a loop's `else` or a filtered comprehension may legitimately not run and are not
required.
"""
import ast

RAN = "_grader_check_ran"  # the name the rewritten cell calls; it lives in the grader's namespace only


class ChecksNotRun(AssertionError):
    """Raised for a test cell whose required checks did not all run."""


def _is_check_call(node) -> bool:
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return name.startswith("check")


class _Instrument(ast.NodeTransformer):
    def __init__(self):
        self.sites = {}  # number -> (line, required)
        self._optional = 0

    def _site(self, node) -> int:
        number = len(self.sites)
        self.sites[number] = (getattr(node, "lineno", 0), self._optional == 0)
        return number

    def _visit_optional(self, nodes):
        self._optional += 1
        try:
            return [self.visit(node) for node in nodes]
        finally:
            self._optional -= 1

    def _flatten(self, nodes):
        flat = []
        for node in nodes:
            flat.extend(node if isinstance(node, list) else [node])
        return flat

    def visit_If(self, node):
        node.test = self.visit(node.test)
        node.body = self._flatten(self._visit_optional(node.body))
        node.orelse = self._flatten(self._visit_optional(node.orelse))
        return node

    def visit_IfExp(self, node):
        node.test = self.visit(node.test)
        node.body, node.orelse = self._visit_optional([node.body, node.orelse])
        return node

    def visit_Try(self, node):
        node.body = self._flatten([self.visit(n) for n in node.body])
        node.handlers = self._visit_optional(node.handlers)
        node.orelse = self._flatten(self._visit_optional(node.orelse))
        node.finalbody = self._flatten(self._visit_optional(node.finalbody))
        return node

    def _visit_loop(self, node):
        self.generic_visit_fields(node, exclude=("orelse",))
        node.orelse = self._flatten(self._visit_optional(node.orelse))
        return node

    visit_For = visit_AsyncFor = visit_While = _visit_loop

    def generic_visit_fields(self, node, exclude=()):
        for field, value in ast.iter_fields(node):
            if field in exclude:
                continue
            if isinstance(value, list):
                visited = [self.visit(v) if isinstance(v, ast.AST) else v for v in value]
                setattr(node, field, self._flatten(visited))
            elif isinstance(value, ast.AST):
                setattr(node, field, self.visit(value))

    def visit_comprehension(self, node):
        return self.generic_visit(node)

    def _visit_comprehension_owner(self, node):
        filtered = any(generator.ifs for generator in node.generators)
        node.generators = [self.visit(g) for g in node.generators]
        elements = [name for name in ("elt", "key", "value") if hasattr(node, name)]
        if filtered:
            self._optional += 1
        try:
            for name in elements:
                setattr(node, name, self.visit(getattr(node, name)))
        finally:
            if filtered:
                self._optional -= 1
        return node

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _visit_comprehension_owner

    def visit_Assert(self, node):
        self.generic_visit(node)
        mark = ast.Expr(ast.Call(ast.Name(RAN, ast.Load()), [ast.Constant(self._site(node))], []))
        return [ast.copy_location(mark, node), node]

    def visit_Call(self, node):
        self.generic_visit(node)
        if _is_check_call(node):
            marked = ast.Call(ast.Name(RAN, ast.Load()), [ast.Constant(self._site(node)), node.func], [])
            node.func = ast.copy_location(marked, node.func)
        return node

    def generic_visit(self, node):
        self.generic_visit_fields(node)
        return node


class CheckCoverage:
    """Rewrites one test cell's syntax tree and tells afterwards which required checks never ran."""

    def __init__(self, tree: ast.Module):
        instrument = _Instrument()
        self.tree = ast.fix_missing_locations(instrument.visit(tree))
        self.sites = instrument.sites
        self.ran = set()

    def mark(self, number, function=None):
        """What the rewritten cell calls at each site: record it, hand the check function back."""
        self.ran.add(number)
        return function

    def verify(self):
        required = {number: line for number, (line, needed) in self.sites.items() if needed}
        missing = sorted(line for number, line in required.items() if number not in self.ran)
        if missing:
            lines = ", ".join(str(line) for line in sorted(set(missing)))
            ran = len(required) - len(missing)
            raise ChecksNotRun(
                f"this test ran {ran} of the {len(required)} checks it was written to run (the check on line "
                f"{lines} never ran): something your code returned cut it short, e.g. a sequence that reports "
                "items it does not give, or an empty answer")
