"""A real JupyterLab on 127.0.0.1 and Debian's headless Chromium driven by Playwright.

One JupyterLab server and one browser serve every browser test of the session; each test
gets its own notebook and its own kernel, which is shut down after the test, in the tab the
last test left tidy (its documents closed) or else a fresh browser context (``page``). The
server runs from ``$JUPYTER_BRAIN_LAB_PYTHON`` when set: scripts/test.sh points it at a
fresh virtualenv where the *wheel* was installed
(scripts/check_wheel.py), so the JupyterLab extension is the one ``pip install
jupyter-brain`` gives. Its own ``python3`` kernel runs there too; the notebooks of the
other tests use the kernel ``TEST_KERNEL``, the test environment's Python (pandas,
matplotlib, the scripted models). Without the variable both are this Python.

The server gets a fresh root, workspace and settings folder, an empty token, and
``expose_app_in_browser`` so tests can drive ``window.jupyterapp``.

Waiting: every wait is on a condition (a DOM state, a kernel status, a promise the page
keeps, a MutationObserver's record), never on the clock. ``WAIT_S`` only bounds each wait
so that a hang fails instead of blocking; it is the page's default timeout, so no test
names its own. Screenshots go to ``test-artifacts/screenshots/`` (git-ignored) for
review; a failed test leaves ``test-artifacts/failures/<test>.png``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
FAILURES = ROOT / "test-artifacts" / "failures"
NOTEBOOKS = ROOT / "notebooks"

# A bound against hanging, not a schedule: every wait returns as soon as its condition
# holds, and a busy 2-core machine may take long before that.
WAIT_S = 300
WAIT_MS = WAIT_S * 1000
# A whole browser test (its waits, and the shared server's start in the first one).
TEST_TIMEOUT_S = 3 * WAIT_S

# The test environment's Python as a kernel of the (possibly other) server's Python.
TEST_KERNEL = "jb-test-env"


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.timeout(TEST_TIMEOUT_S))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.stash[CALL_FAILED] = report.failed
    return report


CALL_FAILED = pytest.StashKey[bool]()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _http(method: str, url: str):
    req = urllib.request.Request(url, method=method)
    with urllib.request.urlopen(req, timeout=WAIT_S) as r:
        body = r.read()
    return json.loads(body) if body else None


@dataclass
class LabServer:
    base: str
    root: Path
    settings: Path
    python: str
    _extension: bool | None = field(default=None, repr=False)
    _shutdown: threading.Thread | None = field(default=None, repr=False)
    _shutdown_error: Exception | None = field(default=None, repr=False)

    def extension_enabled(self) -> bool:
        """The server's Lab page loads jupyter-brain's extension (its page config lists it
        among the prebuilt extensions, and not as disabled)."""
        if self._extension is None:
            with urllib.request.urlopen(f"{self.base}/lab", timeout=WAIT_S) as r:
                html = r.read().decode()
            config = json.loads(re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                                          html, re.S).group(1))
            names = {e["name"] for e in config.get("federated_extensions", [])}
            disabled = config.get("disabledExtensions") or []
            self._extension = "jupyter-brain" in names and not any(d.split(":")[0] == "jupyter-brain" for d in disabled)
        return self._extension

    def reset(self) -> None:
        """After a test: the theme back to the default (the setting persists on the server),
        and its kernels shut down. The shutdown (the server waits for each kernel to exit)
        runs while the next test opens its page; the session's end waits for the last one.
        Notebooks stay; each test writes its own."""
        (self.settings / "@jupyterlab" / "apputils-extension" / "themes.jupyterlab-settings").unlink(missing_ok=True)
        self.wait_shutdown()
        sessions = _http("GET", f"{self.base}/api/sessions")
        kernels = [k["id"] for k in _http("GET", f"{self.base}/api/kernels")]
        self._shutdown = threading.Thread(target=self._shut_down, args=(sessions, kernels), daemon=True)
        self._shutdown.start()

    def _shut_down(self, sessions: list[dict], kernels: list[str]) -> None:
        try:
            for session in sessions:
                _http("DELETE", f"{self.base}/api/sessions/{session['id']}")
            left = {k["id"] for k in _http("GET", f"{self.base}/api/kernels")}
            for kernel in left & set(kernels):
                _http("DELETE", f"{self.base}/api/kernels/{kernel}")
        except Exception as exc:  # noqa: BLE001 - reported when the next test waits for it
            self._shutdown_error = exc

    def wait_shutdown(self) -> None:
        if self._shutdown is not None:
            self._shutdown.join(WAIT_S)
            assert not self._shutdown.is_alive(), f"the last test's kernels did not stop within {WAIT_S} s"
            self._shutdown = None
        error, self._shutdown_error = self._shutdown_error, None
        if error is not None:
            raise error


def serve_lab(python: str, tmp_path_factory, prefix: str, extra_args: tuple[str, ...] = (), *, rtc: bool = False):
    """Start ``python -m jupyterlab`` on a fresh root folder (``extra_args`` added to its command
    line); yields a ``LabServer`` once it answers, and stops it afterwards. No keys in its
    environment, no news toast; the kernel ``TEST_KERNEL`` runs this (the test environment's) Python.
    Real-time collaboration is off unless ``rtc`` (where jupyter-collaboration is installed, the
    test venv: every other test sees JupyterLab as a user without it does)."""
    root = tmp_path_factory.mktemp(f"{prefix}-root")
    workspaces = tmp_path_factory.mktemp(f"{prefix}-workspaces")
    settings = tmp_path_factory.mktemp(f"{prefix}-settings")
    data = tmp_path_factory.mktemp(f"{prefix}-data")
    # No "Jupyter news?" toast over the screenshots.
    news = settings / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    spec = data / "kernels" / TEST_KERNEL
    spec.mkdir(parents=True)
    # The same display name as ipykernel's own spec, so screenshots show what users see.
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ipykernel)", "language": "python",
    }))
    port = _free_port()
    extra_args = (*extra_args, *_own_labextension(tmp_path_factory, prefix))
    log = open(tmp_path_factory.mktemp(f"{prefix}-log") / "lab.log", "w")
    env = {**os.environ, "JUPYTER_PLATFORM_DIRS": "1",
           "JUPYTER_PATH": os.pathsep.join(filter(None, [str(data), os.environ.get("JUPYTER_PATH")]))}
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "JUPYTER_BRAIN_BASE_URL"):
        env.pop(var, None)
    proc = subprocess.Popen(
        [
            python, "-m", "jupyterlab", "--no-browser", "--allow-root",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            "--IdentityProvider.token=", "--ServerApp.password=",
            "--ServerApp.disable_check_xsrf=True",
            "--LabApp.expose_app_in_browser=True", f"--LabApp.workspaces_dir={workspaces}",
            f"--LabApp.user_settings_dir={settings}",
            f"--ServerApp.root_dir={root}", "--LabApp.news_url=", "--LabServerApp.announcements_url=",
            *(() if rtc else ("--YDocExtension.disable_rtc=True",)), *extra_args,
        ],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root,
    )
    base = f"http://127.0.0.1:{port}"
    # The server has no event to wait on: ask until it answers (or exits, or the bound passes).
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"jupyter lab exited early; see {log.name}")
        try:
            with urllib.request.urlopen(f"{base}/api/status", timeout=5) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.2)
    else:
        proc.terminate()
        pytest.fail(f"jupyter lab did not answer within {WAIT_S} s; see {log.name}")
    server = LabServer(base, root, settings, python)
    yield server
    server.wait_shutdown()
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def _own_labextension(tmp_path_factory, prefix: str) -> tuple[str, ...]:
    """``$JUPYTER_BRAIN_LABEXTENSION`` (a built ``jupyter_brain/labextension``, e.g. a worktree's)
    served in place of the one installed beside the server's Python: an extra labextensions
    folder, which JupyterLab reads before its installed ones. Unset: the installed one."""
    built = os.environ.get("JUPYTER_BRAIN_LABEXTENSION")
    if not built:
        return ()
    if not (Path(built) / "package.json").is_file():
        pytest.fail(f"JUPYTER_BRAIN_LABEXTENSION={built} holds no built extension (package.json)")
    folder = tmp_path_factory.mktemp(f"{prefix}-labextensions")
    (folder / "jupyter-brain").symlink_to(Path(built).resolve(), target_is_directory=True)
    return (f"--LabApp.extra_labextensions_path={folder}",)


ENDPOINT_EXTENSIONS = "{'jupyterlab': True, 'jupyter_brain.server': True}"
COLLABORATION_EXTENSIONS = ENDPOINT_EXTENSIONS[:-1] + ", 'jupyter_server_ydoc': True, 'jupyter_server_fileid': True}"


@dataclass(frozen=True)
class LabEndpoint:
    """A served JupyterLab's MCP endpoint in the shape tests/server's clients take (``call_tools``,
    ``run_claude``): ``endpoint``, ``token``, ``root``."""

    endpoint: str
    token: str
    root: Path


def endpoint_of(lab: LabServer) -> LabEndpoint:
    """``lab``'s endpoint. The lab has no token, so any one passes; an empty one would make an
    illegal ``Authorization`` header value."""
    return LabEndpoint(lab.base + "/jupyter-brain/mcp", "none-needed", lab.root)


def serve_endpoint_lab(tmp_path_factory, prefix: str, *extra_args: str, rtc: bool = False, autosave: bool = True):
    """A JupyterLab of its own (this Python) serving jupyter-brain's MCP endpoint (#35), with
    jupyter-collaboration's server parts when ``rtc``; ``autosave=False`` where a tab's autosave
    would race an agent's edits to the file (JupyterLab's model does not hold them)."""
    extensions = COLLABORATION_EXTENSIONS if rtc else ENDPOINT_EXTENSIONS
    server_gen = serve_lab(sys.executable, tmp_path_factory, prefix,
                           (f"--ServerApp.jpserver_extensions={extensions}", *extra_args), rtc=rtc)
    server = next(server_gen)
    if not autosave:
        docmanager = server.settings / "@jupyterlab" / "docmanager-extension"
        docmanager.mkdir(parents=True, exist_ok=True)
        (docmanager / "plugin.jupyterlab-settings").write_text('{"autosave": false}')
    yield server
    server.reset()
    next(server_gen, None)


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory):
    """The session's one JupyterLab (``$JUPYTER_BRAIN_LAB_PYTHON``, else this Python)."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("Debian chromium is missing in CI (scripts/test.sh installs it)")
        pytest.skip("needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")
    python = os.environ.get("JUPYTER_BRAIN_LAB_PYTHON") or sys.executable
    yield from serve_lab(python, tmp_path_factory, "lab")


@pytest.fixture()
def lab(lab_server):
    """(base_url, root_dir) of the shared JupyterLab; the test's kernels stop afterwards."""
    yield lab_server.base, lab_server.root
    lab_server.reset()


@pytest.fixture(scope="package")
def browser():
    """One Chromium for the browser tests, stopped after the last of them: Playwright's sync API
    keeps an asyncio loop running on the main thread while it is open, and the kernel step's
    later tests (the MCP endpoint's clients, nbval's kernel client) run loops of their own there."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=WAIT_MS)
    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run",
                  "--disable-quic", "--disable-dev-shm-usage"],
        )
        yield b
        b.close()


# One tab for the tests of the shared ``lab``, kept between them: a JupyterLab page load costs
# Chromium about 7 CPU-seconds (half of the browser checks' CPU time was Chromium's, #39 §4),
# so each test opens its notebook in the JupyterLab the last one left (``open_notebook``), as a
# user opens the next file, once that tab is tidy: its documents closed, no dialog, the default
# theme back, no script of ``record_states``. Anything else (a failed test too) closes the tab, and
# the next test starts in a fresh one.
_KEPT: dict[str, Any] = {}  # "page" -> the kept tab
_LOADS_EACH: weakref.WeakSet = weakref.WeakSet()  # tabs that open each notebook in a page load, never kept
_TIDY_JS = """async () => {
    const app = window.jupyterapp;
    if (!app) return 'no JupyterLab';
    if (document.querySelector('.jp-Dialog')) return 'a dialog is open';
    for (const w of [...app.shell.widgets('main')]) w.dispose();
    const light = () => document.body.dataset.jpThemeName === 'JupyterLab Light';
    if (!light()) {  // the default theme back, as a page load would show it
        await app.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'});
        await new Promise(done => {  // until the body says so (bounded: a hang fails, not blocks)
            const seen = new MutationObserver(() => light() && (seen.disconnect(), done()));
            seen.observe(document.body, {attributes: true, attributeFilter: ['data-jp-theme-name']});
            if (light()) { seen.disconnect(); done(); }
            setTimeout(() => { seen.disconnect(); done(); }, 30000);
        });
        if (!light()) return 'the theme stayed ' + document.body.dataset.jpThemeName;
    }
    return '';
}"""


@pytest.fixture()
def page(browser, request):
    """A 1280×1400 tab: the one the last test left tidy, else a fresh one (its own context)."""
    pg = _KEPT.pop("page", None)
    if pg is None or pg.is_closed():
        pg = new_context(browser, 1280, 1400).new_page()
    yield pg
    if request.node.stash.get(CALL_FAILED, False):
        FAILURES.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^\w.-]+", "_", request.node.name)
        try:
            pg.screenshot(path=str(FAILURES / f"{name}.png"), timeout=30_000)
        except Exception as exc:  # noqa: BLE001 - the failure itself is what the report shows
            print(f"no failure screenshot: {exc}")
    elif pg not in _LOADS_EACH and not pg.is_closed() and _tidy(pg) == "":
        _KEPT["page"] = pg
        return
    pg.context.close()


def load_each_notebook(page) -> None:
    """From now on the tab opens each notebook in a page load, which reads the server's settings
    and runs the scripts added to the page, and it is not kept after the test."""
    _LOADS_EACH.add(page)


def _tidy(pg) -> str:
    """Close the tab's documents; why the tab cannot be kept ('' when it can)."""
    try:
        return pg.evaluate(_TIDY_JS)
    except Exception as exc:  # noqa: BLE001 - a page that cannot answer is not kept
        return str(exc)


def new_context(browser, width: int, height: int):
    """A browser context (a fresh profile) with a ``width``×``height`` screen and the tests' wait."""
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(WAIT_MS)
    return context


def write_notebook(root: Path, name: str, cells: list[str], *, kernel: str = TEST_KERNEL) -> Path:
    """A notebook of code cells, written where the lab server can open it."""
    nb = {
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                   "source": src} for src in cells],
        "metadata": {"kernelspec": {"name": kernel, "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }
    path = root / name
    path.write_text(json.dumps(nb))
    return path


def copy_notebook(src: Path, root: Path, name: str) -> Path:
    """One of the project's notebooks, to run with the test environment's kernel."""
    nb = json.loads(src.read_text())
    nb["metadata"]["kernelspec"] = {**nb["metadata"].get("kernelspec", {}), "name": TEST_KERNEL}
    path = root / name
    path.write_text(json.dumps(nb))
    return path


# Each animation frame: are the boxes of `sel` what they were the frame before (twice in a
# row), all images in them decoded, the fonts loaded, the Lab shell shown (a theme change
# hides it for a frame) and no splash screen?
# An image that is not displayed or off-screen does not count: the view's figures load
# lazily (loading="lazy"), so one in a folded step or below the fold stays incomplete for
# as long as it is not shown, and it is not in the screenshot either. Lazy images are also
# switched to eager loading here: fresh-clone run AE (three CI runs at once, load 74-85)
# waited 300 s on one the check counted as on screen and the browser never loaded.
_ON_SCREEN_JS = """const __jbOnScreen = (i) => {
    const r = i.getBoundingClientRect();
    return i.getClientRects().length > 0 && r.bottom > 0 && r.top < innerHeight && r.right > 0 && r.left < innerWidth;
};"""
_STABLE_JS = """(sel) => {
    """ + _ON_SCREEN_JS + """
    const state = (window.__jbStable ??= {});
    const shell = document.querySelector('.jp-LabShell');
    const els = [...document.querySelectorAll(sel)];
    // A lazy image the browser has not started (it judges it out of sight, e.g. clipped by
    // a scrolling parent) would keep the wait going: load every one now.
    els.forEach(e => e.querySelectorAll('img[loading="lazy"]').forEach(i => { i.loading = 'eager'; }));
    const boxes = JSON.stringify(els.map(e => {
        const r = e.getBoundingClientRect();
        return [r.x, r.y, r.width, r.height];
    }));
    const ready = document.fonts.status === 'loaded' && !document.getElementById('jupyterlab-splash')
        && !!shell && shell.getClientRects().length > 0 && !shell.classList.contains('lm-mod-hidden')
        && els.every(e => [...e.querySelectorAll('img')].every(i => i.complete || !__jbOnScreen(i)));
    const last = state[sel];
    const same = ready && last && last.boxes === boxes ? last.same + 1 : 0;
    state[sel] = {boxes, same};
    return same >= 2;
}"""


def wait_layout_stable(page, selector: str = ".jp-Cell") -> None:
    """Until the boxes of ``selector`` are equal on consecutive animation frames (and images,
    fonts and the shell are ready): the layout to measure or screenshot, not a guess at time."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.evaluate("sel => { if (window.__jbStable) delete window.__jbStable[sel]; }", selector)
    try:
        page.wait_for_function(_STABLE_JS, arg=selector, polling="raf")
    except PlaywrightTimeout:  # say which condition never held: what moved, or what was not ready
        raise AssertionError(f"the layout of {selector!r} never settled: "
                             f"{page.evaluate(_UNSTABLE_JS, selector)}") from None


# Why _STABLE_JS does not hold: each readiness condition, and the boxes that differ
# between two animation frames (index, before, after).
_UNSTABLE_JS = """async (sel) => {
    """ + _ON_SCREEN_JS + """
    const shell = document.querySelector('.jp-LabShell');
    const boxes = () => [...document.querySelectorAll(sel)].map(e => {
        const r = e.getBoundingClientRect();
        return [r.x, r.y, r.width, r.height].map(Math.round);
    });
    const before = boxes();
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    const after = boxes();
    const moved = after.map((b, i) => [i, before[i], b]).filter(([i, a, b]) => JSON.stringify(a) !== JSON.stringify(b));
    return JSON.stringify({
        fonts: document.fonts.status, splash: !!document.getElementById('jupyterlab-splash'),
        shell: !!shell && shell.getClientRects().length > 0, shellHidden: !!shell && shell.classList.contains('lm-mod-hidden'),
        loadingImages: [...document.querySelectorAll(sel)].flatMap(e => [...e.querySelectorAll('img')])
            .filter(i => !i.complete && __jbOnScreen(i)).map(i => String(i.src).slice(0, 60)),
        count: [before.length, after.length], moved: moved.slice(0, 5),
    });
}"""


def screenshot(page, name: str, *, stable: str = ".jp-Cell") -> Path:
    wait_layout_stable(page, stable)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


def record_states(page, selector: str, state_js: str) -> None:
    """Before the page loads: a MutationObserver writes each new value of ``state_js(el)`` for
    the first ``selector`` element into ``window.__jbStates`` (in order, repeats dropped),
    after every DOM change in it. A record of every state the page showed, not samples.
    The tab then opens each notebook in a page load, and is not kept after the test."""
    load_each_notebook(page)
    page.add_init_script(f"""(() => {{
        window.__jbStates = [];
        let last;
        const state = {state_js};
        const record = (records) => {{
            const el = document.querySelector({json.dumps(selector)});
            if (!el || !records.some(r => el.contains(r.target) || r.target.contains(el))) return;
            const now = state(el);
            const key = JSON.stringify(now);
            if (key !== last) {{ last = key; window.__jbStates.push(now); }}
        }};
        new MutationObserver(record).observe(document, {{
            subtree: true, childList: true, characterData: true,
            attributes: true, attributeFilter: ['open', 'class', 'hidden'],
        }});
    }})()""")


_KERNEL_READY_JS = """() => {
    const app = window.jupyterapp;
    const w = app && app.shell.currentWidget;
    const ctx = w && w.sessionContext;
    const k = ctx && ctx.session && ctx.session.kernel;
    const shown = w && w.node.querySelector('.jp-Notebook-ExecutionIndicator');
    return !!(k && ctx.isReady && w.content && w.content.model && k.connectionStatus === 'connected'
              && k.status === 'idle' && (!shown || shown.dataset.status === 'idle'));
}"""


def open_notebook(page, base: str, name: str, *, reset: bool = True) -> None:
    """Open a notebook and wait until its kernel is ready (connected and idle, in the toolbar too):
    in the JupyterLab of ``base`` the tab already shows (``page``'s tidy tab), else in a page load.
    ``reset=False`` always loads the page, with the workspace as it was saved."""
    if reset and page not in _LOADS_EACH and page.url.startswith(f"{base}/lab") and page.evaluate(_OPEN_JS, name):
        wait_kernel_ready(page)
        return
    # ?reset: an empty workspace, not the tabs earlier tests left open (they take focus).
    page.goto(f"{base}/lab/tree/{name}" + ("?reset" if reset else ""))
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started !== undefined")
    page.evaluate("() => window.jupyterapp.restored")
    wait_kernel_ready(page)


# In a started JupyterLab whose documents ``_TIDY_JS`` closed: close what opened since (the
# launcher JupyterLab shows in an empty main area), open ``path`` as the file browser does, and
# show the folder's new files; false where there is no JupyterLab.
_OPEN_JS = """async (path) => {
    const app = window.jupyterapp;
    if (!app) return false;
    await app.restored;
    for (const w of [...app.shell.widgets('main')]) w.dispose();
    await app.commands.execute('docmanager:open', {path});
    if (app.commands.hasCommand('filebrowser:refresh')) await app.commands.execute('filebrowser:refresh');
    return true;
}"""


def wait_kernel_ready(page) -> None:
    page.wait_for_function(_KERNEL_READY_JS)


_RUN = """(command) => {
    const run = window.__jbRun = {done: false, error: null};
    window.jupyterapp.commands.execute(command).then(
        () => { run.done = true; }, e => { run.done = true; run.error = String(e); });
}"""


def run_command(page, command: str) -> None:
    """Start a run command (``notebook:run-all-cells``, ``notebook:run-cell``) without waiting
    for it; ``wait_idle_after_run`` waits for the promise it returns."""
    page.evaluate(_RUN, command)


def run_cell(page, index: int) -> None:
    """Start running the cell at ``index`` (from 0) of the open notebook, as its Run button
    does, without waiting for it; ``wait_idle_after_run`` waits for it."""
    page.evaluate(f"""() => {{
        const nb = window.jupyterapp.shell.currentWidget.content;
        nb.activeCellIndex = {index};
        nb.mode = 'command';
    }}""")
    run_command(page, "notebook:run-cell")


# Run code in the open notebook's kernel (not in a cell) and return what it printed or showed.
_KERNEL_READ = """async (code) => {
    const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
    const future = k.requestExecute({code, silent: false, store_history: false});
    let out = '';
    future.onIOPub = msg => {
        const t = msg.header.msg_type;
        if (t === 'stream') out += msg.content.text;
        else if (t === 'execute_result' || t === 'display_data') out += msg.content.data['text/plain'] || '';
        else if (t === 'error') out += msg.content.ename + ': ' + msg.content.evalue;
    };
    await future.done;
    return out;
}"""


def kernel_output(page, code: str) -> str:
    """What ``code`` prints when run in the open notebook's kernel, outside any cell."""
    return page.evaluate(_KERNEL_READ, code)


LAB_TRAIL = ("print('\\n'.join(get_ipython().magics_manager.registry['AgentMagics'].lab.trail))")


def lab_trail(page) -> str:
    """The kernel's record of its comm with the extension (``LabChannel.trail``), for a
    failure message: when ``ready`` came, whether a wait timed out, why ``--cells`` fell back."""
    try:
        return kernel_output(page, LAB_TRAIL)
    except Exception as exc:  # noqa: BLE001 - a diagnostic must not hide the failure it explains
        return f"(no trail: {exc})"


def open_and_run(page, base: str, name: str) -> None:
    """Open a notebook, wait for its kernel to be ready, run all cells (without awaiting them)."""
    open_notebook(page, base, name)
    run_command(page, "notebook:run-all-cells")


def wait_idle_after_run(page) -> None:
    """Until the last run command has finished (JupyterLab's promise: every cell it ran got
    its reply), no cell is still executing, the kernel is idle, and the views are painted:
    each widget output shows its view (a finished turn re-publishes its output, and the new
    view renders after the reply) with no turn still running in it, and no view still
    painting a backlog in slices (``aria-busy``, renderer.ts)."""
    page.wait_for_function(
        """() => {
            const w = window.jupyterapp.shell.currentWidget;
            const run = window.__jbRun;
            if (!run || !run.done || !w.sessionContext) return false;
            const k = w.sessionContext.session.kernel;
            const busy = w.content.widgets.some(c => c.model.type === 'code'
                && (c.model.executionState === 'running' || (c.promptNode && c.promptNode.textContent.includes('*'))));
            const widgets = [...w.node.querySelectorAll('.jp-OutputArea-output.lm-Panel:not([data-mime-type])')];
            const bundles = [...w.node.querySelectorAll('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter-brain.turn+json"], '
                + '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter-brain.compare+json"]')];
            const painted = [...widgets, ...bundles].every(o => o.querySelector('.jb-agent-view, .jb-compare-view'))
                && !w.node.querySelector('.jb-turn.jb-running, .jb-agent-view[aria-busy="true"]');
            return k.status === 'idle' && !busy && painted;
        }""",
    )
    error = page.evaluate("() => window.__jbRun.error")
    assert error is None, f"the run command failed: {error}"


def run_compare(page, base: str, root: Path, name: str, cells: list[str], *, rows: int = 4):
    """Write and run a notebook whose ``%%compare`` cell fills ``rows`` summary rows; the
    (first) compare view once the kernel is idle."""
    write_notebook(root, name, cells)
    open_and_run(page, base, name)
    view = page.locator(".jb-compare-view").first
    view.wait_for()
    wait_idle_after_run(page)
    page.wait_for_function(f"document.querySelectorAll('.jb-compare-table tbody tr').length === {rows}")
    return view


def copy_tree(src: Path, dst: Path) -> None:
    if not dst.exists():
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
