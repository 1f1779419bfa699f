"""What ``%agent eval`` shows: a progress bar with the latest rows streaming into a table
while it runs; then, in reading order (issue #40), the per-config success rates (95 % Wilson
interval) with mean tokens, cost and time, the success-rate-vs-cost figure with its Pareto
front, the failed runs' reasons (each once), and every run's row folded away.

In a kernel the progress is one display (HTML ``<progress>`` and a table, a text fallback),
updated in place by its display id, and at the end replaced by the summary: JupyterLab
redraws it, nbclient and nbconvert save its last state. Every display is plain HTML and
text (no widget), so a saved notebook reads the same anywhere, trusted or not. Without a
kernel (terminal IPython) each finished run is one printed line.
"""

from __future__ import annotations

import base64
import html
import io
import sys
from typing import Any

from ..evals.checks import one_line
from ..widgets._format import duration

RESULT = {True: "pass", False: "FAIL", None: "–"}
LIVE_ROWS = 10  # the rows a running eval shows (the latest); all of them are in the DataFrame


def eval_view(shell: Any, result: Any) -> Any:
    """The kernel's progress display, or lines on stdout."""
    return EvalDisplay(result) if getattr(shell, "kernel", None) is not None else EvalText(result)


def _money(value: float | None) -> str:
    return "–" if value is None else f"${value:.4f}"


def _tokens(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def rate_text(entry: dict[str, Any]) -> str:
    """``3/5 · 60 % (23–88 %)``: passed of judged runs, the rate and its 95 % interval."""
    if not entry["checked"]:
        return "–"
    return (f"{entry['passed']}/{entry['checked']} · {100 * entry['rate']:.0f} % "
            f"({100 * entry['low']:.0f}–{100 * entry['high']:.0f} %)")


def stop_notice(result: Any) -> str:
    """One line when the eval stopped early, else ""."""
    if not result.stopped:
        return ""
    return (f"eval stopped early ({result.stopped}): {len(result.rows)} of {result.planned} runs are in the "
            "DataFrame, the last one marked")


def row_line(index: int, total: int, row: dict[str, Any]) -> str:
    """One finished run; why it failed is said once, in the failures at the end."""
    return one_line(f"[{index}/{total}] {row['task']} × {row['config']} #{row['repeat']}: {RESULT[row['passed']]} "
                    f"({row['status']}, {_tokens(row['input_tokens'])}/{_tokens(row['output_tokens'])} tokens)",
                    300)


def summary_text(result: Any) -> str:
    lines = [f"{'config':<16} {'success':<26} {'tokens in':>10} {'tokens out':>10} {'cost':>9} {'time':>8}"]
    for s in result.summary():
        time = "–" if s["seconds"] is None else f"{s['seconds']:.2f} s"
        lines.append(f"{s['config']:<16} {rate_text(s):<26} {_tokens(s['input_tokens']):>10} "
                     f"{_tokens(s['output_tokens']):>10} {_money(s['cost_usd']):>9} {time:>8}")
    return "\n".join(lines)


def failures_text(result: Any) -> str:
    failed = result.failures()
    if not failed:
        return "no failed runs"
    by_task: dict[str, list[str]] = {}
    for f in failed:
        by_task.setdefault(f["task"], []).append(f"{f['config']} #{f['repeat']}: {f['reason']}")
    return "\n".join(f"{task}:\n" + "\n".join(f"  {line}" for line in lines) for task, lines in by_task.items())


class EvalText:
    """Plain lines: one per finished run, then the summary and the failures."""

    def __init__(self, result: Any, out: Any = None) -> None:
        self.result, self.out = result, out or sys.stdout

    def row(self, row: dict[str, Any]) -> None:
        print(row_line(len(self.result.rows), self.result.planned, row), file=self.out, flush=True)

    def finish(self, result: Any, metadata: dict[str, Any] | None = None) -> None:
        for line in (stop_notice(result), summary_text(result), "failures by task:", failures_text(result)):
            if line:
                print(line, file=self.out)
        _show_figure(result)


def _cell(value: Any, cls: str = "") -> str:
    attr = f' class="{cls}"' if cls else ""
    return f"<td{attr}>{html.escape(str(value))}</td>"


class EvalDisplay:
    """The kernel's live display: a progress bar and the latest rows, updated in place; at
    the end the summary takes its place, then the figure, the failures and every run."""

    STYLE = ("<style>.jb-eval table{border-collapse:collapse;font-size:12px}.jp-RenderedHTMLCommon .jb-eval td,"
             ".jp-RenderedHTMLCommon .jb-eval th,.jb-eval td,.jb-eval th{padding:2px 8px;"
             "border-bottom:1px solid #ddd;text-align:left;white-space:nowrap}.jb-eval .fail{color:#b00020}"
             ".jp-RenderedHTMLCommon .jb-eval td.why,.jb-eval td.why{white-space:normal;min-width:16em}"
             ".jb-eval .pass{color:#1b7f3b}.jb-eval progress{width:240px;vertical-align:middle}"
             ".jb-eval summary{cursor:pointer}</style>")

    def __init__(self, result: Any) -> None:
        from IPython.display import display

        self.result = result
        self.handle = display(self._bundle(), raw=True, display_id=True)

    def _head(self, done: bool) -> tuple[str, str]:
        r = self.result
        count, total = len(r.rows), r.planned
        state = stop_notice(r) or ("finished" if done else "running")
        bar = "#" * round(20 * count / total) if total else ""
        html_head = (f"<b>eval {html.escape(r.name)}</b> <progress value='{count}' max='{total}'></progress> "
                     f"{count}/{total} runs · {html.escape(state)}")
        return html_head, f"eval {r.name}: {count}/{total} runs [{bar:<20}] {state}"

    def _bundle(self) -> dict[str, Any]:
        """While it runs: the progress and the latest ``LIVE_ROWS`` rows."""
        rows = self.result.rows
        head, text = self._head(done=False)
        latest = rows[-LIVE_ROWS:]
        earlier = f"<p>… and {len(rows) - len(latest)} earlier runs</p>" if len(rows) > len(latest) else ""
        table = ("<table><tr><th>task</th><th>config</th><th>run</th><th>status</th><th>result</th>"
                 f"<th>tokens in</th><th>tokens out</th><th>why it failed</th></tr>{_run_rows(latest, True)}</table>")
        return {"text/html": f"<div class='jb-eval' aria-busy='true'>{self.STYLE}{head}{table}{earlier}</div>",
                "text/plain": text}

    def row(self, row: dict[str, Any]) -> None:
        self.handle.update(self._bundle(), raw=True)

    def finish(self, result: Any, metadata: dict[str, Any] | None = None) -> None:
        from IPython.display import display

        notice = stop_notice(result)
        if notice:
            print(notice)
        head, text = self._head(done=True)
        summary = summary_bundle(result, head, text)
        self.handle.update(summary, raw=True, metadata=metadata or {})
        _show_figure(result)
        display(failures_bundle(result), raw=True)
        if result.rows:
            display(runs_bundle(result), raw=True)


def _run_rows(rows: list[dict[str, Any]], why: bool) -> str:
    return "".join(
        "<tr>" + _cell(x["task"]) + _cell(x["config"]) + _cell(x["repeat"]) + _cell(x["status"])
        + _cell(RESULT[x["passed"]], {True: "pass", False: "fail"}.get(x["passed"], ""))
        + _cell(_tokens(x["input_tokens"])) + _cell(_tokens(x["output_tokens"]))
        + (_cell(one_line(x["reason"] or "", 160), "why") if why else "") + "</tr>" for x in rows)


def summary_bundle(result: Any, head: str = "", head_text: str = "") -> dict[str, Any]:
    """The eval's first output once it ends: its progress line, then each config's success."""
    rows = "".join(
        "<tr>" + _cell(s["config"]) + _cell(rate_text(s)) + _cell(_tokens(s["input_tokens"]))
        + _cell(_tokens(s["output_tokens"]))
        + _cell(_money(s["cost_usd"]) + ("" if s["seconds"] is None else f" · {duration(1000 * s['seconds'])}"))
        + "</tr>" for s in result.summary())
    lead = f"{head}<br>" if head else ""
    table = (f"<div class='jb-eval' aria-busy='false'>{EvalDisplay.STYLE}{lead}<b>success rate per config</b> "
             f"(95 % Wilson interval; means per run)<table><tr><th>config</th><th>success</th><th>tokens in</th>"
             f"<th>tokens out</th><th>cost · time</th></tr>{rows}</table></div>")
    plain = "\n".join([*([head_text] if head_text else []),
                       *(f"{s['config']}: {rate_text(s)}" for s in result.summary())])
    return {"text/html": table, "text/plain": plain}


def failures_bundle(result: Any) -> dict[str, Any]:
    failed = result.failures()
    if not failed:
        return {"text/plain": "no failed runs", "text/html": "<div class='jb-eval'><b>no failed runs</b></div>"}
    items = "".join(f"<tr>{_cell(f['task'])}{_cell(f['config'] + ' #' + str(f['repeat']))}"
                    f"{_cell(f['reason'], 'fail why')}</tr>" for f in failed)
    return {"text/plain": "failures by task:\n" + failures_text(result),
            "text/html": f"<div class='jb-eval'>{EvalDisplay.STYLE}<b>failures by task</b> ({len(failed)} of "
                         f"{len(result.rows)} runs)<table><tr><th>task</th><th>run</th><th>why</th></tr>{items}"
                         "</table></div>"}


def runs_bundle(result: Any) -> dict[str, Any]:
    """Every run, folded: the DataFrame holds the same rows (why one failed: the failures)."""
    table = ("<table><tr><th>task</th><th>config</th><th>run</th><th>status</th><th>result</th>"
             f"<th>tokens in</th><th>tokens out</th></tr>{_run_rows(result.rows, False)}</table>")
    n = len(result.rows)
    return {"text/html": f"<div class='jb-eval'>{EvalDisplay.STYLE}<details><summary>every run ({n}): task × config"
                         f" × run</summary>{table}</details></div>",
            "text/plain": f"every run ({n}): the rows of the DataFrame this cell returns"}


def _show_figure(result: Any) -> None:
    """The success-rate-vs-cost figure, when any run was judged and matplotlib is there."""
    if not any(s["checked"] for s in result.summary()):
        return
    from IPython.display import display

    from ..evals.plot import rate_cost_figure

    try:
        figure = rate_cost_figure(result.summary(), f"{result.name}: success rate vs cost")
    except ImportError:  # matplotlib is optional (the examples extra)
        print("(pip install matplotlib for the success-rate-vs-cost plot)")
        return
    png = io.BytesIO()  # drawn here: a Figure made without pyplot has no inline formatter in a kernel
    figure.savefig(png, format="png", dpi=100)
    configs = sum(1 for s in result.summary() if s["checked"])
    display({"image/png": base64.b64encode(png.getvalue()).decode("ascii"),
             "text/plain": f"<figure: {result.name}: success rate vs cost, {configs} config(s)>"}, raw=True)
