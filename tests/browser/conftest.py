"""A real JupyterLab server on 127.0.0.1 and Debian's headless Chromium driven by Playwright.

The server gets a fresh root folder and workspace folder per test session, an empty
token, and ``expose_app_in_browser`` so tests can drive ``window.jupyterapp``.
Screenshots go to ``test-artifacts/screenshots/`` (git-ignored) for review.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """(base_url, root_dir) of a running JupyterLab."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("Debian chromium is missing in CI (scripts/test.sh installs it)")
        pytest.skip("needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)")
    yield from serve_lab(sys.executable, tmp_path_factory, "lab")


def serve_lab(python: str, tmp_path_factory, prefix: str):
    """Start ``python -m jupyterlab`` on a fresh root folder; yields (base_url, root_dir)
    once it answers, and stops it afterwards. No keys in its environment, no news toast."""
    root = tmp_path_factory.mktemp(f"{prefix}-root")
    workspaces = tmp_path_factory.mktemp(f"{prefix}-workspaces")
    settings = tmp_path_factory.mktemp(f"{prefix}-settings")
    # No "Jupyter news?" toast over the screenshots.
    news = settings / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    port = _free_port()
    log = open(tmp_path_factory.mktemp(f"{prefix}-log") / "lab.log", "w")
    env = {**os.environ, "JUPYTER_PLATFORM_DIRS": "1"}
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
        ],
        stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"jupyter lab exited early; see {log.name}")
        try:
            with urllib.request.urlopen(f"{base}/api/status", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.3)
    else:
        proc.terminate()
        pytest.fail("jupyter lab did not start within 90 s")
    yield base, root
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

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


@pytest.fixture()
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 1400})
    pg = context.new_page()
    yield pg
    context.close()


def write_notebook(root: Path, name: str, cells: list[str]) -> Path:
    """A notebook of code cells, written where the lab server can open it."""
    nb = {
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                   "source": src} for src in cells],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }
    path = root / name
    path.write_text(json.dumps(nb))
    return path


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


def open_and_run(page, base: str, name: str, *, timeout_s: float = 120) -> None:
    """Open a notebook, wait for an idle kernel, run all cells (without awaiting the command)."""
    # ?reset: an empty workspace, not the tabs earlier tests left open (they take focus).
    page.goto(f"{base}/lab/tree/{name}?reset")
    page.wait_for_function("window.jupyterapp && window.jupyterapp.started !== undefined", timeout=timeout_s * 1000)
    page.evaluate("window.jupyterapp.started")
    page.wait_for_function(
        """() => {
            const w = window.jupyterapp.shell.currentWidget;
            const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
            return k && k.status === 'idle';
        }""",
        timeout=timeout_s * 1000,
    )
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")


def wait_idle_after_run(page, *, timeout_s: float = 120) -> None:
    page.wait_for_function(
        """() => {
            const w = window.jupyterapp.shell.currentWidget;
            const k = w.sessionContext.session.kernel;
            const cells = w.content.widgets;
            const pending = cells.some(c => c.model.type === 'code' && c.promptNode && c.promptNode.textContent.includes('*'));
            return k.status === 'idle' && !pending;
        }""",
        timeout=timeout_s * 1000,
    )


def run_compare(page, base: str, root: Path, name: str, cells: list[str], *, rows: int = 4):
    """Write and run a notebook whose ``%%compare`` cell fills ``rows`` summary rows; the
    (first) compare view once the kernel is idle."""
    write_notebook(root, name, cells)
    open_and_run(page, base, name)
    view = page.locator(".jb-compare-view").first
    view.wait_for(timeout=120_000)
    wait_idle_after_run(page)
    page.wait_for_function(
        f"document.querySelectorAll('.jb-compare-table tbody tr').length === {rows}", timeout=60_000)
    return view
