"""The grader's structure (docs/layout.md): one subpackage per role, no import cycle, no product code that
imports the test tree (the course image ships no tests/)."""
import ast
import re
import subprocess
from pathlib import Path

import pytest

from grader.limits import FIXED, limits_page

REPO = Path(__file__).resolve().parents[1]
GRADER = REPO / "grader"
ROLES = {"cli", "intake", "sandbox", "trusted", "preprocessors", "feedback", "outputs", "running", "authoring"}
TOP_LEVEL = {"__init__", "__main__", "course", "limits", "nbgrader_config"}  # shared by every role
PRODUCT = ["grader", "attention_course", "course_build", "classroom", "course"]


def python_files(folder: Path):
    return sorted(path for path in folder.rglob("*.py") if ".ipynb_checkpoints" not in path.parts)


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_level_imports(path: Path, known: set) -> set:
    """The grader modules `path` imports when it is imported (imports inside functions are left out: they
    run later and cannot make a cycle at import time)."""
    found, todo = set(), list(ast.parse(path.read_text()).body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in known else node.module
                      for alias in node.names}
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            todo += [child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt)]
            for handler in getattr(node, "handlers", []):
                todo += handler.body
    return {name for name in found if name in known}


def test_every_grader_module_lives_in_a_role_subpackage():
    top = {path.stem for path in GRADER.glob("*.py")}
    assert top == TOP_LEVEL, f"grader/ holds modules outside a role: {sorted(top - TOP_LEVEL)}"
    packages = {path.name for path in GRADER.iterdir() if path.is_dir() and (path / "__init__.py").exists()}
    assert packages == ROLES, f"expected the role subpackages {sorted(ROLES)}, found {sorted(packages)}"
    for role in ROLES:
        docstring = ast.get_docstring(ast.parse((GRADER / role / "__init__.py").read_text()))
        assert docstring, f"grader/{role}/__init__.py says nothing of its role"
        assert not any(True for path in (GRADER / role).iterdir() if path.is_dir() and (path / "__init__.py").exists()), \
            f"grader/{role}/ nests a package: one level of roles"


def test_docs_name_every_role():
    layout = (REPO / "docs" / "layout.md").read_text()
    for role in ROLES:
        assert f"`{role}/`" in layout, f"docs/layout.md does not describe grader/{role}/"


def test_no_import_cycle_in_the_grader():
    files = {module_name(path): path for path in python_files(GRADER)}
    graph = {name: module_level_imports(path, set(files)) - {name} for name, path in files.items()}
    state, cycles = {}, []

    def visit(name, stack):
        state[name] = "open"
        for other in sorted(graph[name]):
            if state.get(other) == "open":
                cycles.append(stack[stack.index(other):] + [other])
            elif other not in state:
                visit(other, stack + [other])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


@pytest.mark.parametrize("folder", PRODUCT)
def test_product_code_never_imports_the_tests(folder):
    offenders = []
    for path in python_files(REPO / folder):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f"{path.relative_to(REPO)}: {name}" for name in names if name.split(".")[0] == "tests"]
    assert not offenders, f"{folder}/ imports the test tree, which the course image does not ship: {offenders}"


def test_the_cycle_check_sees_a_cycle(tmp_path):
    """The reader of imports is what the cycle test relies on: two modules importing each other are seen."""
    (tmp_path / "a.py").write_text("from grader.running import ledger\n")
    known = {"grader.running.ledger", "grader.running"}
    assert module_level_imports(tmp_path / "a.py", known) == {"grader.running.ledger"}
    (tmp_path / "b.py").write_text("def later():\n    from grader.running import ledger\n")
    assert module_level_imports(tmp_path / "b.py", known) == set()


LIMIT_NAME = re.compile(r"^(MAX_[A-Z_]+|[A-Z_]+_(SECONDS|BYTES|CHARS|CHARACTERS|FILES|ITEMS|DEPTH|PER_HOUR|ENTRIES))$")


def literal_limits(path: Path, root: Path = REPO) -> list:
    """Module-level constants named like a limit and set to a number written in the module."""
    found = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            numbers_only = all(isinstance(n, (ast.Constant, ast.BinOp, ast.operator, ast.UnaryOp, ast.unaryop))
                               for n in ast.walk(node.value))
            if LIMIT_NAME.match(name) and numbers_only:
                found.append(f"{path.relative_to(root)}: {name}")
    return found


def test_every_limit_is_declared_in_one_place():
    """The grader's limits are set in grader/limits.py (the wire format's two in wire.py, which also runs in
    the student's kernel); a module names its limit's value from there."""
    allowed = {GRADER / "limits.py", GRADER / "trusted" / "wire.py"}
    written = [hit for path in python_files(GRADER) if path not in allowed for hit in literal_limits(path)]
    assert not written, f"limits set outside grader/limits.py: {written}"
    for key, limit in FIXED.items():
        text = (REPO / limit.where).read_text()
        assert f'FIXED["{key}"]' in text, f"{limit.where} does not read the limit {key} it is said to apply"


def test_the_limits_check_sees_a_limit_written_in_a_module(tmp_path):
    module = tmp_path / "grader" / "m.py"
    module.parent.mkdir()
    module.write_text("MAX_THINGS = 10\nSTART_SECONDS = 2 * 60\nMAX_NAME = FIXED['x'].value\nNAME = 'MAX'\n")
    assert [hit.split(": ")[1] for hit in literal_limits(module, tmp_path)] == ["MAX_THINGS", "START_SECONDS"]


def test_the_limits_page_is_current():
    page = (REPO / "docs" / "limits.md").read_text()
    assert page == limits_page(), "docs/limits.md is out of date: python -m grader.limits > docs/limits.md"


NAMED_PATH = re.compile(r"(?<![\w./-])((?:grader|course_build|attention_course|classroom|tests|course|deploy|docs)/"
                        r"[\w/.-]+\.(?:py|md|toml|yaml|sbatch))\b")


def named_paths(text: str) -> set:
    return set(NAMED_PATH.findall(text))


def test_every_file_the_repository_names_exists():
    """A docstring, comment or page that names a file of the repository names one that exists (a module that
    moved takes its mentions with it)."""
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    missing = []
    for name in tracked:
        if name.startswith(("datasets/", "course/named_mistakes/")) or not name.endswith(
                (".py", ".md", ".toml", ".yaml", ".yml", ".sbatch", ".cfg", "Makefile", "Dockerfile", "run")):
            continue
        path = REPO / name
        if path.is_file():
            missing += [f"{name}: {found}" for found in named_paths(path.read_text(errors="replace"))
                        if not (REPO / found).exists()]
    assert not missing, f"files named but not in the repository: {missing}"


def test_the_path_check_reads_names_in_prose():
    assert named_paths("see grader/intake/safe_copy.py, and test-artifacts/classroom/load.json") == \
        {"grader/intake/safe_copy.py"}
