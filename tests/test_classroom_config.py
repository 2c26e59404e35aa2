"""The classroom's files that need no running hub: the Kubernetes configuration in deploy/jupyter/ is what
the local classroom writes, the image never receives solutions, and the proxy is pinned."""
import json
import re

from classroom.layout import STUDENT_HIDDEN_PLUGINS, write_server_config
from grader.course import REPO

DEPLOY = REPO / "deploy" / "jupyter"


def files(folder):
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_deploy_config_is_what_the_local_classroom_writes(tmp_path):
    write_server_config(tmp_path, "attention", "/srv/nbgrader/exchange")
    assert files(DEPLOY) == files(tmp_path), "deploy/jupyter/ differs from classroom.layout.write_server_config: regenerate it"
    hidden = json.loads((DEPLOY / "students" / "labconfig" / "page_config.json").read_text())["disabledExtensions"]
    assert all(hidden.get(plugin) for plugin in STUDENT_HIDDEN_PLUGINS)


def test_the_image_gets_no_solutions_tests_or_gradebook():
    copied = re.findall(r"^COPY\s+(.+?)\s+\S+$", (REPO / "Dockerfile").read_text(), re.M)
    sources = " ".join(copied)
    for secret in ("solutions", "tests", "_grading", "gradebook", ". "):
        assert secret not in sources + " ", f"the Dockerfile copies {secret!r}: {copied}"
    for source in sources.split():
        assert list(REPO.glob(source.rstrip("/"))), f"the Dockerfile copies {source}, which does not exist"


def test_the_proxy_is_pinned_and_locked():
    wanted = json.loads((REPO / "classroom" / "package.json").read_text())["dependencies"]["configurable-http-proxy"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", wanted), f"configurable-http-proxy is not pinned: {wanted}"
    lock = json.loads((REPO / "classroom" / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/configurable-http-proxy"]["version"] == wanted
