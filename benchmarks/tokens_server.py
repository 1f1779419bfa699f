"""The scripted OpenAI-compatible server of ``tokens_vs_peers.py``, its task, and o200k offline.

Each framework talks to ``http://127.0.0.1:PORT/<framework>/v1``; the server keeps every
request body per framework and answers from one script for all (``STEPS``). The scripted
model calls the tool a step names when the request offers it; when it does not but a
tool loader is offered (``find_tools``), it calls the loader with the tool's name first.
Streamed (SSE) and plain answers are both served.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PROMPT = "Which region had the highest total sales in sales.csv? Give the region and its total."
CSV = "region,month,sales\n" + "\n".join(
    f"{region},{month},{sales}" for region, month, sales in (
        ("North", "Jan", 120), ("South", "Jan", 95), ("East", "Jan", 130), ("West", "Jan", 310),
        ("North", "Feb", 140), ("South", "Feb", 105), ("East", "Feb", 125), ("West", "Feb", 360),
        ("North", "Mar", 150), ("South", "Mar", 110), ("East", "Mar", 135), ("West", "Mar", 380),
    )) + "\n"
CODE = ("import csv\nfrom collections import Counter\n\ntotals = Counter()\n"
        "with open('sales.csv') as f:\n    for row in csv.DictReader(f):\n"
        "        totals[row['region']] += float(row['sales'])\nprint(totals.most_common(1))")
ANSWER = "West had the highest total sales: 1,050."
LOADERS = ("find_tools",)  # tools that make deferred tools available

# (tool, arguments) per step; the last step is the answer (smolagents answers with its
# final_answer tool).
STEPS: list[tuple[str, dict[str, Any]]] = [("read_file", {"path": "sales.csv"}), ("run_python", {"code": CODE})]
FINAL_TOOL = {"smolagents": "final_answer"}


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [str(t.get("function", t).get("name", "")) for t in body.get("tools") or []]


class _Script:
    """One framework's place in the script."""

    def __init__(self, framework: str) -> None:
        self.framework = framework
        self.step = 0
        self.ids = itertools.count(1)

    def answer(self, body: dict[str, Any]) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
        """(text, tool calls) for this request."""
        offered = _tool_names(body)
        if self.step < len(STEPS):
            name, arguments = STEPS[self.step]
            if name in offered:
                self.step += 1
                return "", [(name, arguments)]
            loader = next((n for n in LOADERS if n in offered), None)
            if loader is None:
                raise RuntimeError(f"{self.framework}: the request offers neither {name} nor a loader: {offered}")
            return "", [(loader, {"query": name})]
        final = FINAL_TOOL.get(self.framework)
        if final:
            return "", [(final, {"answer": ANSWER})]
        return ANSWER, []


class ScriptServer:
    """``with ScriptServer() as s: ... s.url("name") ... s.bodies["name"]``."""

    def __init__(self) -> None:
        self.bodies: dict[str, list[dict[str, Any]]] = {}
        self._scripts: dict[str, _Script] = {}
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                framework = self.path.strip("/").split("/")[0]
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                with server._lock:
                    server.bodies.setdefault(framework, []).append(body)
                    script = server._scripts.setdefault(framework, _Script(framework))
                    text, calls = script.answer(body)
                    calls_out = [(f"call_{framework[:2]}{next(script.ids)}", n, a) for n, a in calls]
                self._reply(body, text, calls_out)

            def _reply(self, body: dict[str, Any], text: str, calls: list[tuple[str, str, dict[str, Any]]]) -> None:
                finish = "tool_calls" if calls else "stop"
                tool_calls = [{"id": cid, "type": "function",
                               "function": {"name": name, "arguments": json.dumps(args)}}
                              for cid, name, args in calls]
                usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
                base = {"id": "chatcmpl-bench", "created": 0, "model": body.get("model", "bench")}
                if not body.get("stream"):
                    message: dict[str, Any] = {"role": "assistant", "content": text or None}
                    if tool_calls:
                        message["tool_calls"] = tool_calls
                    payload = {**base, "object": "chat.completion", "usage": usage,
                               "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
                    data = json.dumps(payload).encode()
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                delta: dict[str, Any] = {"role": "assistant", "content": text}
                if tool_calls:
                    delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(tool_calls)]
                chunks = [
                    {**base, "object": "chat.completion.chunk",
                     "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                    {**base, "object": "chat.completion.chunk",
                     "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                    {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage},
                ]
                data = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, framework: str) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/{framework}/v1"

    def __enter__(self) -> ScriptServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
JS_TIKTOKEN = "js-tiktoken@1.0.21"


def o200k() -> Any:
    """tiktoken's o200k_base, offline: its table rebuilt from js-tiktoken's copy (npm) into
    tiktoken's cache, where tiktoken checks it against the published sha256."""
    import tiktoken

    cache = Path(os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(Path(tempfile.gettempdir()) / "tiktoken-o200k")))
    target = cache / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if not target.exists():
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as work:
            subprocess.run(["npm", "pack", JS_TIKTOKEN, "--silent"], cwd=work, check=True, capture_output=True)
            tgz = next(Path(work).glob("js-tiktoken-*.tgz"))
            subprocess.run(["tar", "xzf", tgz.name, "package/dist/ranks/o200k_base.js"], cwd=work, check=True)
            source = (Path(work) / "package/dist/ranks/o200k_base.js").read_text(encoding="utf-8")
        ranks = json.loads(source.removeprefix("export default ").rstrip().rstrip(";"))["bpe_ranks"]
        pairs: list[tuple[int, str]] = []
        for line in filter(None, ranks.split("\n")):
            _, offset, *tokens = line.split(" ")
            pairs += [(int(offset) + i, token) for i, token in enumerate(tokens)]
        target.write_text("".join(f"{token} {rank}\n" for rank, token in sorted(pairs)), encoding="utf-8")
    return tiktoken.get_encoding("o200k_base")
