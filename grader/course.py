"""Where the course's pieces are, and nbgrader configured for a grading workspace."""
import os
import sys
from pathlib import Path

import nbformat
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from attention_course.paths import REPO_ROOT, assignments_dir

REPO = REPO_ROOT
GRADER_DIR = Path(__file__).resolve().parent  # its nbgrader_config.py, wherever the package is installed
# Defaults in a clone of the repository; the command line names others (the course image has neither).
SOLUTIONS = REPO / "solutions"
NOTEBOOKS = REPO / "notebooks"
STATE = REPO / "_grading"


def named_mistakes_dir() -> Path:
    """The fingerprints of the named mistakes (grader/feedback/mistakes.py), made when an assignment is released and
    shipped with the course (course/named_mistakes), so that no grading waits for them: hashes and names only,
    nothing of a test's or an answer's text."""
    return assignments_dir() / "named_mistakes"


def source_notebook(assignment: str):
    """The solution notebook of `assignment` (solutions/), as nbformat reads it."""
    return nbformat.read(SOLUTIONS / assignment / f"{assignment}.ipynb", as_version=4)


def nbgrader_meta(cell) -> dict:
    """A cell's nbgrader metadata ({} for a cell nbgrader does not track)."""
    return cell.get("metadata", {}).get("nbgrader", {})


def write_atomically(path: Path, text: str):
    """Parallel workers rewrite the same files at start-up; never let one read a half-written file."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(text)
    os.replace(temporary, path)


class CourseError(Exception):
    """A mistake in the instructor's input; the command line prints it as one line."""


def assignments(source: Path = SOLUTIONS) -> list:
    return sorted(p.name for p in source.iterdir() if p.is_dir() and (p / f"{p.name}.ipynb").is_file())


def check_assignments(names, source: Path = SOLUTIONS) -> list:
    """Return the requested assignments (all when none are named); reject unknown names."""
    valid = assignments(source)
    unknown = [name for name in names if name not in valid]
    if unknown:
        raise CourseError(
            f"Unknown assignment {', '.join(repr(n) for n in unknown)}; valid assignments: {', '.join(valid)}"
        )
    return list(names) or valid


def prepare_environment():
    """nbgrader runs helper executables (alembic) from the environment's bin folder."""
    bin_dir = str(Path(sys.executable).parent)
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    os.environ.setdefault("MPLBACKEND", "Agg")
    # The test cells run in the grader (grader/trusted/trusted_tests.py) and import TensorFlow: quiet its C++ notices.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def course_config() -> Config:
    """grader/nbgrader_config.py as a traitlets Config."""
    return PyFileConfigLoader("nbgrader_config.py", path=str(GRADER_DIR)).load_config()


def workspace_config(workspace: Path, source: Path = SOLUTIONS, db_url: str = None) -> Config:
    """The course config with all grading state (release copy, submissions, gradebook) in `workspace`."""
    workspace = Path(workspace).resolve()
    config = course_config()
    course = config.CourseDirectory
    course.root = str(workspace)
    course.source_directory = str(Path(source).resolve())
    course.release_directory = str(workspace / "release")
    course.submitted_directory = "submitted"
    course.autograded_directory = "autograded"
    course.feedback_directory = "feedback"
    config.ZipCollectApp.downloaded_directory = "downloaded"
    # Parallel workers share one SQLite gradebook: wait up to a minute for its write lock.
    config.CourseDirectory.db_url = db_url or f"sqlite:///{workspace / 'gradebook.db'}?timeout=60"
    config.Exchange.root = str(workspace / "exchange")
    return config


def write_workspace_config(workspace: Path, source: Path = SOLUTIONS, db_url: str = None) -> Path:
    """An nbgrader_config.py in `workspace`, so plain `nbgrader` commands run there see the same setup."""
    workspace = Path(workspace).resolve()
    workspace.mkdir(parents=True, exist_ok=True)
    overrides = workspace_config(workspace, source, db_url)
    lines = [
        "# Written by `python -m grader`: the course config with this folder as the grading workspace.",
        f"load_subconfig({str(GRADER_DIR / 'nbgrader_config.py')!r})",
        "c = get_config()",
    ]
    for section in ("CourseDirectory", "Exchange", "ZipCollectApp"):
        for key in ("root", "source_directory", "release_directory", "submitted_directory",
                    "autograded_directory", "feedback_directory", "db_url", "downloaded_directory"):
            if key in overrides[section]:
                lines.append(f"c.{section}.{key} = {overrides[section][key]!r}")
    path = workspace / "nbgrader_config.py"
    write_atomically(path, "\n".join(lines) + "\n")
    return path
