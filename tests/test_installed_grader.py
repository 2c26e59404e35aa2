"""The grader as the course image has it: a regular (not editable) install of the package in a Python
environment, no clone of the repository (no tests/, no solutions/, no answers), the data and the assignment
folders where the image's variables say, and the instructor's source notebooks on their own volume.

The environment is this one's, hard-linked (no copy of TensorFlow), with the editable install of the course
replaced by the wheel `pip` builds from the repository's files."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from attention_course.paths import ASSIGNMENTS_VARIABLE, DATA_VARIABLE
from grader.authoring.assignment_answers import answers
from grader.authoring.samples import fill_answers
from grader.sandbox.bubblewrap import sandbox_problem
from tests.course_files import REPO, nbgrader_meta, source_notebook

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(bool(sandbox_problem()), reason=f"no sandbox here: {sandbox_problem()}")]

ASSIGNMENT = "02_three_stage_attention"
PACKAGES = ("attention_course/", "grader/", "course_build/", "classroom/")
# What the image holds of course/ (.dockerignore leaves out the answers: they include correct ones).
IMAGE_COURSE = ("*/assignment.toml", "named_mistakes/*.json")


def tracked(prefixes) -> list:
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    return [name for name in files if name.startswith(prefixes)]


def installed_environment(root: Path) -> Path:
    """A Python environment with the course installed as `pip install .` does it (site-packages, no link back
    to the repository); returns its python."""
    source = root / "package"
    for name in tracked(PACKAGES) + ["pyproject.toml"]:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(source),
                    "-w", str(root / "wheel")], check=True, capture_output=True)
    environment = root / "venv"
    # Hard links: removing or adding a file here never touches this environment's files.
    subprocess.run(["cp", "-al", sys.prefix, str(environment)], check=True)
    site = Path(sys.prefix).resolve() / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / \
        "site-packages"
    site = environment / site.relative_to(Path(sys.prefix).resolve())
    for editable in list(site.glob("__editable__*attention_course*")) + list(site.glob("attention_course-*")):
        shutil.rmtree(editable) if editable.is_dir() else editable.unlink()
    python = environment / "bin" / "python"
    wheel, = (root / "wheel").glob("*.whl")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True,
                   capture_output=True)
    return python


def image_course(root: Path) -> Path:
    course = root / "opt" / "course"
    for pattern in IMAGE_COURSE:
        for path in (REPO / "course").glob(pattern):
            (course / path.relative_to(REPO / "course")).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, course / path.relative_to(REPO / "course"))
    return course


def test_the_image_ships_the_assignment_folders_without_their_answers():
    dockerfile = (REPO / "Dockerfile").read_text()
    ignored = (REPO / ".dockerignore").read_text().split()
    assert "COPY course/ course/" in dockerfile and f"{ASSIGNMENTS_VARIABLE}=/opt/course/course" in dockerfile
    assert {"course/*/answers.py", "course/*/all_wrong.py", "tests", "solutions"} <= set(ignored)


def test_an_installed_grader_grades_in_the_sandbox_and_names_mistakes_without_the_repository(tmp_path):
    python = installed_environment(tmp_path)
    course = image_course(tmp_path)
    data = tmp_path / "opt" / "datasets"
    subprocess.run(["cp", "-al", str(REPO / "datasets"), str(data)], check=True)
    source = tmp_path / "instructor" / "source"
    shutil.copytree(REPO / "solutions" / ASSIGNMENT, source / ASSIGNMENT)

    release = source_notebook(ASSIGNMENT)
    student = fill_answers(nbformat.read(REPO / "notebooks" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4),
                           release)
    for cell in student.cells:
        if nbgrader_meta(cell).get("grade_id") == "scaled_dot_score":
            cell.source = answers(ASSIGNMENT).WRONG["scaled_dot_score"]["divide_by_d_k_not_its_root"].strip()
    # Where the sandboxed kernel finds the course package and its data.
    student.cells.append(nbformat.v4.new_code_cell(
        "import attention_course, attention_course.paths\n"
        "print('package in', attention_course.__file__)\nprint('data in', attention_course.paths.datasets_dir())"))
    (tmp_path / "in" / "ada" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(student, tmp_path / "in" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")

    env = {name: value for name, value in os.environ.items() if name not in ("JUPYTER_CONFIG_PATH", "PYTHONPATH")}
    env.update({DATA_VARIABLE: str(data), ASSIGNMENTS_VARIABLE: str(course),
                "PATH": f"{python.parent}{os.pathsep}{env.get('PATH', '')}"})
    home = tmp_path / "home"
    home.mkdir()
    where = subprocess.run([str(python), "-c", "import grader, attention_course; print(grader.__file__); "
                            "print(attention_course.__file__)"], cwd=home, env=env, capture_output=True, text=True)
    assert all(line.startswith(str(tmp_path / "venv")) for line in where.stdout.split()), where.stdout + where.stderr

    done = subprocess.run([str(python), "-m", "grader", "grade", str(tmp_path / "in"), "-a", ASSIGNMENT,
                           "--source", str(source), "--workspace", str(tmp_path / "ws"), "--no-progress"],
                          cwd=home, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "24 / 26" in done.stdout, (done.stdout, done.stderr[-3000:])
    page = (tmp_path / "ws" / "feedback" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "This looks like: divide by d_k not its root" in page
    graded = nbformat.read(tmp_path / "ws" / "autograded" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    printed = "".join(output.get("text", "") for output in graded.cells[-1].outputs)
    assert f"package in {(tmp_path / 'venv').resolve()}" in printed and f"data in {data.resolve()}" in printed, printed
    assert not (course / "named_mistakes" / f"{ASSIGNMENT}.lock").exists(), "grading rebuilt the shipped catalogue"
