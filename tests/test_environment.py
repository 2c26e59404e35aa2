"""The pip pins, the conda environment and the course's required versions agree."""
import re

from grader.course import REPO

PIN = re.compile(r"^\s*(?:-\s+)?([A-Za-z0-9_.\-]+)==([^\s#]+)")


def pins(lines) -> dict:
    return {m.group(1).lower(): m.group(2) for m in map(PIN.match, lines) if m}


def test_environment_yml_matches_requirements():
    pip_pins = pins((REPO / "requirements.txt").read_text().splitlines())
    yml = (REPO / "environment.yml").read_text()
    conda_pins = pins(yml.split("- pip:", 1)[1].splitlines())
    assert conda_pins == pip_pins, (
        f"environment.yml and requirements.txt differ: only in yml {set(conda_pins.items()) - set(pip_pins.items())}, "
        f"only in requirements {set(pip_pins.items()) - set(conda_pins.items())}"
    )
    assert re.search(r"^\s*-\s*python=3\.11\s*$", yml, re.M), "environment.yml must pin python=3.11"


def test_required_versions_are_pinned():
    pip_pins = pins((REPO / "requirements.txt").read_text().splitlines())
    assert pip_pins["tensorflow"].startswith("2.21"), pip_pins["tensorflow"]
    assert pip_pins["keras"].startswith("3."), pip_pins["keras"]
    assert pip_pins["jupyterlab"].startswith("4.6"), pip_pins["jupyterlab"]
    assert tuple(int(x) for x in pip_pins["nbgrader"].split(".")[:3]) >= (0, 9, 6), pip_pins["nbgrader"]
    for name in ("numpy", "matplotlib", "faker", "babel"):
        assert name in pip_pins, f"{name} is not pinned in requirements.txt"


def test_installed_versions_match_pins():
    from importlib.metadata import version
    for name, pinned in pins((REPO / "requirements.txt").read_text().splitlines()).items():
        assert version(name) == pinned, f"{name}: requirements.txt pins {pinned}, installed {version(name)}; run make install"
