"""The widgets' front-end code goes to the browser once per kernel, not once per view (issue #40).

A view's ``_esm`` is a small loader (``LOADER``, ~2 KB) naming the bundle by its digest. The
first drawn view of a bundle in a kernel also carries the bundle itself (``_code_js`` and
``_code_css``, synced traits); later views carry none. In the browser the loader keeps the
compiled module per digest on ``globalThis`` (one page: every notebook of a JupyterLab,
Notebook 7 or VS Code window), so a later view reuses it. Where the page has not seen it (a
reload, a second browser on the same kernel) the loader asks the view's kernel for it
(``{"kind": "need_code"}`` → ``{"kind": "code", ...}``): an agent view's comm is routed to a
subshell (``notebook/kernel_channel.py``), so the answer comes while its cell runs.
Works without the JupyterLab extension: everything goes through anywidget's own comm.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anywidget
import traitlets as t

__all__ = ["NO_CODE_ESM", "BundleMissingError", "FrontEndCode", "SharedCodeWidget", "bundle_text"]

STATIC = Path(__file__).resolve().parent.parent / "static"
NO_CODE_ESM = "export default {};"  # a valid module that draws nothing


class BundleMissingError(RuntimeError):
    """The front-end bundle was not built (a source checkout without ``npm run build``)."""


def bundle_text(name: str, static: Path | None = None) -> str:
    path = (static or STATIC) / name
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BundleMissingError(
            f"jupyter-brain's widget front-end is missing ({path}). In a source checkout run "
            "`npm install && npm run build` in js/ (or `pip install -e .`, which builds it); "
            "otherwise reinstall jupyter-brain. Without a widget front-end, use "
            "jupyter_brain.widgets.TextView."
        ) from None


@dataclass(frozen=True)
class FrontEndCode:
    """One bundle (``agent_view``, ``compare_view``): its JS, its CSS and their digest."""

    name: str
    js: str
    css: str
    digest: str

    @property
    def loader(self) -> str:
        """The ``_esm`` every drawn view of this bundle carries."""
        return _LOADER.replace("__DIGEST__", json.dumps(self.digest)).replace("__NAME__", json.dumps(self.name))

    def message(self) -> dict[str, Any]:
        """The answer to a loader's ``need_code``."""
        return {"kind": "code", "digest": self.digest, "js": self.js, "css": self.css}


_lock = threading.Lock()
_cache: dict[tuple[str, Path], tuple[tuple[int, int, int, int], FrontEndCode]] = {}
_sent: set[str] = set()  # digests a drawn view of this kernel has carried


def frontend_code(name: str, static: Path | None = None) -> FrontEndCode:
    """The bundle as built now (read again only when its files change)."""
    folder = static or STATIC
    stamp = tuple(_stamp(folder / f"{name}.{ext}") for ext in ("js", "css"))
    key = (name, folder)
    with _lock:
        known = _cache.get(key)
        if known is not None and known[0] == (*stamp[0], *stamp[1]):
            return known[1]
    js, css = bundle_text(f"{name}.js", folder), bundle_text(f"{name}.css", folder)
    digest = hashlib.sha256(js.encode() + b"\0" + css.encode()).hexdigest()[:16]
    code = FrontEndCode(name, js, css, digest)
    with _lock:
        _cache[key] = ((*stamp[0], *stamp[1]), code)
    return code


def _stamp(path: Path) -> tuple[int, int]:
    try:
        info = path.stat()
    except FileNotFoundError:
        return (-1, -1)
    return (info.st_mtime_ns, info.st_size)


def claim_first(code: FrontEndCode) -> bool:
    """True once per kernel and bundle: the caller's view carries the code."""
    with _lock:
        if code.digest in _sent:
            return False
        _sent.add(code.digest)
        return True


def forget_sent() -> None:
    """Forget which bundles were sent (tests; a kernel restart does it by itself)."""
    with _lock:
        _sent.clear()


class SharedCodeWidget(anywidget.AnyWidget):
    """An anywidget whose front-end code is ``FrontEndCode`` of ``_bundle``, sent once per kernel.

    ``drawn=False``: no front-end will draw it (a headless kernel), so it carries no code at all.
    """

    _bundle = ""  # the bundle's name, set by each subclass
    _code_js = t.Unicode("").tag(sync=True)
    _code_css = t.Unicode("").tag(sync=True)

    @property
    def _esm(self) -> str:  # read by AnyWidget.__init__ (so a missing bundle fails there, clearly)
        code = getattr(self, "_frontend", None)
        return code.loader if code is not None else NO_CODE_ESM

    @property
    def _css(self) -> str:  # the loader adds the CSS once per page
        return ""

    def __init__(self, *, drawn: bool = True, static: Path | None = None, **kwargs: Any) -> None:
        self._drawn = drawn
        self._frontend: FrontEndCode | None = frontend_code(self._bundle, static) if drawn else None
        first = self._frontend is not None and claim_first(self._frontend)
        if first and self._frontend is not None:
            kwargs = {**kwargs, "_code_js": self._frontend.js, "_code_css": self._frontend.css}
        try:
            super().__init__(**kwargs)
        except BaseException:
            if first and self._frontend is not None:
                with _lock:
                    _sent.discard(self._frontend.digest)
            raise

    def answer_code_request(self, content: Any) -> bool:
        """Send the bundle if ``content`` is a loader's ``need_code`` for it (True: it was)."""
        code = self._frontend
        if not (isinstance(content, dict) and content.get("kind") == "need_code") or code is None:
            return False
        if content.get("digest") == code.digest:
            self.send(code.message())
        return True

    def drop_code(self) -> None:
        """Empty the code traits (under the caller's ``hold_sync``): nbclient and papermill keep a
        closed model's last state in the notebook."""
        self.set_trait("_esm", NO_CODE_ESM)  # a valid module: anywidget reloads on change
        self.set_trait("_css", "")
        self._code_js = ""
        self._code_css = ""


# The loader: anywidget calls the default export once per model, and the bundle's own default
# export (a factory) keeps per-model state, so it is called per model too. anywidget (0.11)
# delivers no comm message to a model before its ``initialize`` returns.
LOADER = """\
const DIGEST = __DIGEST__, NAME = __NAME__, WAIT_MS = 120000;
const shared = (globalThis.__jupyterBrainCode ??= {});
function compile(js, css) {
  if (css && !document.querySelector(`style[data-jupyter-brain='${DIGEST}']`)) {
    const style = document.createElement('style');
    style.dataset.jupyterBrain = DIGEST;
    style.textContent = css;
    document.head.appendChild(style);
  }
  const url = URL.createObjectURL(new Blob([js], { type: 'text/javascript' }));
  return import(/* webpackIgnore: true */ url).finally(() => URL.revokeObjectURL(url));
}
function askKernel(model) {
  return new Promise((resolve, reject) => {
    const done = (fn, value) => { clearTimeout(timer); model.off('msg:custom', heard); fn(value); };
    const heard = (msg) => { if (msg && msg.kind === 'code' && msg.digest === DIGEST) done(resolve, msg); };
    const timer = setTimeout(() => done(reject, new Error(
      `jupyter-brain: no kernel sent the ${NAME} front-end code; re-run the cell`)), WAIT_MS);
    model.on('msg:custom', heard);
    model.send({ kind: 'need_code', digest: DIGEST });
  });
}
function bundle(model) {
  let slot = shared[DIGEST];
  if (!slot) {
    slot = shared[DIGEST] = { state: 'empty' };
    slot.promise = new Promise((resolve, reject) => Object.assign(slot, { resolve, reject }));
  }
  const js = model.get('_code_js');
  if (js && (slot.state === 'empty' || slot.state === 'asking')) {
    slot.state = 'compiling';
    compile(js, model.get('_code_css')).then((mod) => { slot.state = 'done'; slot.resolve(mod); }, slot.reject);
  } else if (slot.state === 'empty') {
    slot.state = 'asking';
    askKernel(model).then(
      (msg) => { if (slot.state === 'asking') { slot.state = 'compiling'; return compile(msg.js, msg.css).then((mod) => { slot.state = 'done'; slot.resolve(mod); }); } },
    ).catch((err) => { if (shared[DIGEST] === slot && slot.state !== 'done') delete shared[DIGEST]; slot.reject(err); });
  }
  return slot.promise;
}
export default () => {
  let widget = null, ready = null, cleanup = null;
  const get = (model) => (widget ??= bundle(model).then((mod) =>
    typeof mod.default === 'function' ? mod.default() : mod.default));
  return {
    initialize(ctx) {
      ready = get(ctx.model).then(async (w) => { cleanup = await w.initialize?.(ctx); return w; });
      const dispose = () => { ready.then(() => typeof cleanup === 'function' && cleanup()); };
      // anywidget holds a model's comm messages until initialize is done: code asked of the
      // kernel would never arrive, so then the bundle initializes later, on its own.
      return shared[DIGEST]?.state === 'asking' ? dispose : ready.then(() => dispose);
    },
    async render(ctx) { return (await (ready ?? get(ctx.model))).render?.(ctx); },
  };
};
"""

_LOADER = "\n".join(line.strip() for line in LOADER.splitlines())  # sent with every view: no indents
