"""`make lab`, the README's first command, opens the course, also as root (as in many containers)."""
import os
import secrets
import signal
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from grader.course import REPO
from tests.browser.lab import free_port

pytestmark = pytest.mark.slow


def test_make_lab_serves_the_lab_page(tmp_path):
    port, token = free_port(), secrets.token_hex(8)
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"), JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"))
    server = subprocess.Popen(["make", "lab", f"LAB_ARGS=--no-browser --port={port} --IdentityProvider.token={token}"],
                              cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline, page = time.monotonic() + 120, ""
        while time.monotonic() < deadline and server.poll() is None:
            try:
                page = urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token={token}", timeout=5).read().decode()
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.5)
        output = "" if server.poll() is None else server.stdout.read().decode()[-2000:]
        assert "JupyterLab" in page, f"make lab did not serve the lab page: {output}"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
