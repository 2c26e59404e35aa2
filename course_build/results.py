"""The figures that change with every run (test counts, timings, ratios), kept where the manual reads them.

Each benchmark and the full test suite write `results/<name>.json`: what was measured (a table's columns and
rows, and named facts), when, on how many cores, with which command. The manual never types these figures:
its pages say `{{ results NAME }}` for the table and `{{ results NAME.fact }}` for one figure
(course_build/manual_results.py, an MkDocs hook), so a page shows the last recorded run.
"""
import datetime
import json
import os
import sys
from pathlib import Path

from attention_course.paths import REPO_ROOT

RESULTS = REPO_ROOT / "results"


def record(name: str, title: str, columns: list = (), rows: list = (), **facts) -> Path:
    """Write results/<name>.json (rows: lists as long as `columns`; facts: numbers or short strings)."""
    if any(len(row) != len(columns) for row in rows):
        raise ValueError(f"{name}: every row needs {len(columns)} cells")
    data = {
        "title": title,
        "command": " ".join(["python", "-m", *_module_argv()]),
        "measured": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cores": os.cpu_count(),
        "load_average_at_end": round(os.getloadavg()[0], 2),
        "columns": list(columns),
        "rows": [list(row) for row in rows],
        "facts": facts,
    }
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return path


def _module_argv() -> list:
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name:
        return [spec.name.removesuffix(".__main__"), *sys.argv[1:]]
    return [Path(sys.argv[0]).name, *sys.argv[1:]]


def read(name: str) -> dict:
    path = RESULTS / f"{name}.json"
    if not path.is_file():
        valid = ", ".join(sorted(p.stem for p in RESULTS.glob("*.json"))) or "none"
        raise KeyError(f"no results/{name}.json (recorded: {valid})")
    return json.loads(path.read_text())


def figure(value, fact: str = "") -> str:
    """A recorded value as the manual prints it: 1,289; 28 min 35 s for a fact named *_seconds; 2.05."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if fact.endswith("_seconds") and value >= 60:
        minutes, seconds = divmod(round(value), 60)
        return f"{minutes} min {seconds} s"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.2f}" if abs(value) < 10 else f"{value:,.1f}"


def table(data: dict) -> str:
    """The recorded table in Markdown, then when and how it was measured."""
    lines = ["| " + " | ".join(data["columns"]) + " |", "|" + "---|" * len(data["columns"])]
    lines += ["| " + " | ".join(figure(cell) for cell in row) + " |" for row in data["rows"]]
    lines += ["", f"*Measured {data['measured']} on {data['cores']} cores (load average {data['load_average_at_end']} "
              f"at the end) with `{data['command']}`; recorded in results/.*"]
    return "\n".join(lines)
