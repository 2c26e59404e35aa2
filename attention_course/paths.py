"""Where the course's data lives."""
import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def datasets_dir() -> Path:
    """The `datasets/` folder; ATTENTION_COURSE_DATA points elsewhere (e.g. on a JupyterHub)."""
    override = os.environ.get("ATTENTION_COURSE_DATA")
    path = Path(override) if override else REPO_ROOT / "datasets"
    if not path.is_dir():
        raise FileNotFoundError(
            f"Course data folder {path} not found. Run from a clone of the course repository "
            "or set ATTENTION_COURSE_DATA to the folder that holds the course's datasets."
        )
    return path
