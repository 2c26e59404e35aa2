"""Where the course's data and assignment folders live: beside the package in a clone of the repository,
or where an environment variable says (a regular install, e.g. the course image)."""
import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
# The settings that move them, each with its default beside the package.
DATA_VARIABLE = "ATTENTION_COURSE_DATA"  # default: datasets/
ASSIGNMENTS_VARIABLE = "ATTENTION_COURSE_ASSIGNMENTS"  # default: course/


def _folder(variable: str, default: Path, what: str) -> Path:
    override = os.environ.get(variable)
    path = Path(override) if override else default
    if not path.is_dir():
        raise FileNotFoundError(
            f"{what} folder {path} not found. Run from a clone of the course repository "
            f"or set {variable} to the folder that holds {what.lower()}."
        )
    return path


def datasets_dir() -> Path:
    """The `datasets/` folder; ATTENTION_COURSE_DATA points elsewhere (e.g. on a JupyterHub)."""
    return _folder(DATA_VARIABLE, REPO_ROOT / "datasets", "The course's datasets")


def assignments_dir() -> Path:
    """The `course/` folder of assignment folders (settings, named mistakes' fingerprints, and in the
    instructor's copy the wrong answers); ATTENTION_COURSE_ASSIGNMENTS points elsewhere (the course image)."""
    return _folder(ASSIGNMENTS_VARIABLE, REPO_ROOT / "course", "The course's assignment folders")
