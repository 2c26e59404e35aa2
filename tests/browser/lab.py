"""A JupyterLab server started for one test, headless Chromium, and the clicks a person makes.

The server runs from the project's virtualenv on a free localhost port with a random token, in a
temporary copy of the course, with its own settings folder (no news fetching, every notebook cell
rendered) so nothing in the user's home or in the repo changes. Screenshots go to
test-artifacts/browser/ (git-ignored).
"""
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from grader.course import REPO

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO / "test-artifacts" / "browser"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
INSTALL_HINT = ("Chromium not found at /usr/bin/chromium; the browser tests need it: "
                "`apt-get install chromium` (Debian/Ubuntu, as root), or run .ci/run, which installs it")

# JupyterLab settings for the test server: every cell in the DOM (no virtual scrolling), no news
# or update checks (there is no network), no extension manager (it would query PyPI).
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/extensionmanager-extension/plugin.jupyterlab-settings": {"enabled": False},
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class JupyterLab:
    """`python -m jupyterlab` on 127.0.0.1:<free port> with a token; stop() shuts kernels and server down."""

    def __init__(self, root_dir: Path, config_dir: Path, log_dir: Path, cwd: Path = None):
        self.root_dir = Path(root_dir).resolve()
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        state = Path(tempfile.mkdtemp(prefix="lab-state-", dir=log_dir))
        settings = state / "user-settings"
        for name, value in LAB_SETTINGS.items():
            (settings / name).parent.mkdir(parents=True, exist_ok=True)
            (settings / name).write_text(json.dumps(value))
        env = {k: v for k, v in os.environ.items()
               if k not in ("NBGRADER_EXECUTION", "NBGRADER_VALIDATING", "MPLBACKEND", "JUPYTER_CONFIG_DIR")}
        env.update(JUPYTER_CONFIG_PATH=str(config_dir), JUPYTER_RUNTIME_DIR=str(state / "runtime"),
                   PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
                   PYTHONUNBUFFERED="1")
        self.log_path = state / "jupyterlab.log"
        self._log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={self.port}", "--ip=127.0.0.1",
             "--ServerApp.port_retries=0", "--allow-root", f"--IdentityProvider.token={self.token}",
             f"--ServerApp.root_dir={self.root_dir}", f"--LabApp.user_settings_dir={settings}",
             f"--LabApp.workspaces_dir={state / 'workspaces'}"],
            cwd=str(cwd or self.root_dir), env=env, stdout=self._log, stderr=subprocess.STDOUT)
        self._wait_ready()

    def url(self, path: str = "lab") -> str:
        separator = "&" if "?" in path else "?"
        return f"{self.base}/{path.lstrip('/')}{separator}token={self.token}"

    def api(self, path: str, method: str = "GET", attempts: int = 5):
        """Call the REST API. A GET that meets a server error is asked again: jupyter_server answers
        500 to GET /api/kernels while a kernel is half started (its last_activity not yet set)."""
        request = urllib.request.Request(f"{self.base}/api/{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        for attempt in range(attempts):
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    body = response.read()
                return json.loads(body) if body else None
            except urllib.error.HTTPError as error:
                if method != "GET" or error.code < 500 or attempt == attempts - 1:
                    raise
                time.sleep(0.5)

    def log_tail(self, chars: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]

    def _wait_ready(self, timeout: float = 180):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                self.api("status")
                return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"JupyterLab did not answer on port {self.port} within {timeout:.0f} s:\n{self.log_tail()}")

    def kernels_idle(self) -> bool:
        return all(k.get("execution_state") == "idle" for k in self.api("kernels"))

    def stop(self):
        if self.process.poll() is None:
            try:
                self.api("shutdown", method="POST")  # also shuts the kernels down
                self.process.wait(timeout=30)
            except Exception:
                self.process.send_signal(signal.SIGTERM)
                try:
                    self.process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
        self._log.close()


@contextmanager
def chromium_page(name: str):
    """A fresh headless Chromium (own user-data-dir) and one page; the profile is removed after."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix=f"chromium-{name}-")
    try:
        with sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                profile, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
                viewport={"width": 1440, "height": 1000})
            try:
                page = context.pages[0] if context.pages else context.new_page()
                page.set_default_timeout(90_000)
                yield page
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


class Shots:
    """Numbered screenshots of one test's steps in test-artifacts/browser/<test>/."""

    def __init__(self, test_name: str):
        self.folder = ARTIFACTS / test_name
        if self.folder.exists():
            shutil.rmtree(self.folder)
        self.folder.mkdir(parents=True)
        self.count = 0

    def __call__(self, target, step: str) -> Path:
        """Screenshot the page (or one element) as NN_step.png."""
        self.count += 1
        path = self.folder / f"{self.count:02d}_{step}.png"
        try:
            target.screenshot(path=str(path), timeout=60_000)
        except Exception as error:  # a screenshot must never hide the real failure
            print(f"screenshot {path.name} failed: {error}", file=sys.stderr)
        return path


# -- JupyterLab: notebooks -----------------------------------------------------------------------

CURRENT_TAB = "#jp-main-dock-panel .lm-TabBar-tab.jp-mod-current"


def current_panel(page):
    """The main-area widget of the current tab (found by the tab's data-id, not by visibility)."""
    tab = page.locator(CURRENT_TAB)
    tab.wait_for()
    return page.locator(f"[id='{tab.get_attribute('data-id')}']")


def open_notebook(page, lab: JupyterLab, relative_path: str, cells: int):
    """Open a notebook (its URL on a fresh page, else File > Open from Path…) and wait until all its
    cells are rendered and its kernel is idle."""
    started = time.monotonic()
    if page.url.startswith(lab.base + "/lab"):
        menu(page, "File", "filebrowser:open-path")
        page.locator(".jp-Dialog input").fill(relative_path)
        page.locator(".jp-Dialog .jp-mod-accept").click()
    else:
        page.goto(lab.url(f"lab/tree/{relative_path}"))
    page.locator(f"{CURRENT_TAB}[title*='{relative_path}']").wait_for(timeout=180_000)
    notebook = current_panel(page).locator(".jp-Notebook")
    notebook.wait_for(timeout=180_000)
    shown = time.monotonic()
    deadline = time.monotonic() + 180
    while notebook.locator(".jp-Cell").count() < cells and time.monotonic() < deadline:
        time.sleep(0.5)
    assert notebook.locator(".jp-Cell").count() == cells, (
        f"{relative_path}: JupyterLab shows {notebook.locator('.jp-Cell').count()} cells, the file has {cells}")
    rendered = time.monotonic()
    wait_kernel_idle(page, lab, timeout=300)
    print(f"open {relative_path}: page {shown - started:.0f} s, cells {rendered - shown:.0f} s, "
          f"kernel {time.monotonic() - rendered:.0f} s")
    return notebook


def wait_kernel_idle(page, lab: JupyterLab, timeout: float):
    """Wait for a kernel to exist and be idle (server side) with the toolbar's indicator idle too."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        kernels = lab.api("kernels")
        if kernels and lab.kernels_idle() and current_panel(page).locator(
                ".jp-Notebook-ExecutionIndicator[data-status='idle']").count():
            return
        time.sleep(1)
    raise AssertionError(f"The kernel did not become idle within {timeout:.0f} s: {lab.api('kernels')}")


def set_cell_source(page, notebook, index: int, source: str):
    """Type an answer the way a student pastes it: click the cell's editor, select all, insert."""
    editor = notebook.locator(".jp-Cell").nth(index).locator(".cm-content")
    editor.scroll_into_view_if_needed()
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(source)
    page.keyboard.press("Escape")


def menu(page, top: str, command: str, attempts: int = 5):
    """Click a main-menu entry, e.g. menu(page, "Run", "runmenu:run-all"). A JupyterLab still starting up
    (the launcher opening, a panel restored) can close an open menu before the entry is clicked: open it
    again, a few times."""
    entry = page.locator(f".lm-Menu:visible li[data-command='{command}']").first
    for attempt in range(attempts):
        page.locator(f"#jp-menu-panel .lm-MenuBar-itemLabel:text-is('{top}')").click()
        try:
            entry.wait_for(timeout=10_000)
            entry.click(timeout=10_000)
            return
        except PlaywrightTimeoutError:
            if attempt == attempts - 1:
                raise
            page.keyboard.press("Escape")


def run_all_and_wait(page, lab: JupyterLab, notebook, timeout: float) -> float:
    """Run > Run All Cells (runmenu:run-all), then wait until no cell is queued or running and the kernel is idle."""
    start = time.monotonic()
    notebook.locator(".jp-Cell").first.click()
    menu(page, "Run", "runmenu:run-all")
    prompts = notebook.locator(".jp-CodeCell .jp-InputArea-prompt")
    # Run All marks every cell [*] at once; wait for that, then for the last [*] to go away.
    deadline = start + 60
    while time.monotonic() < deadline and "[*]" not in " ".join(prompts.all_inner_texts()):
        if any(re.fullmatch(r"\[\d+\]:", t.strip()) for t in prompts.all_inner_texts()):
            break  # already done (a very fast notebook)
        time.sleep(0.2)
    deadline = start + timeout
    quiet = 0
    while time.monotonic() < deadline:
        busy = "[*]" in " ".join(prompts.all_inner_texts())
        quiet = 0 if busy or not lab.kernels_idle() else quiet + 1
        if quiet >= 3:
            return time.monotonic() - start
        time.sleep(1)
    raise AssertionError(f"Run All did not finish within {timeout:.0f} s")


def save(page):
    """File > Save Notebook, and wait until the tab is no longer marked as changed."""
    menu(page, "File", "docmanager:save")
    page.locator(f"{CURRENT_TAB}:not(.jp-mod-dirty)").wait_for(timeout=60_000)


def click_validate(page):
    """nbgrader's Validate button in the notebook toolbar; returns the dialog that shows the verdict."""
    current_panel(page).locator("jp-button.validate-button").click()
    dialog = page.locator(".nbgrader-SuccessDialog, .nbgrader-ErrorDialog")
    dialog.first.wait_for(timeout=600_000)
    return dialog.first


def close_dialog(page):
    page.locator(".jp-Dialog button.jp-Dialog-button").last.click()
    page.locator(".jp-Dialog").wait_for(state="detached")
