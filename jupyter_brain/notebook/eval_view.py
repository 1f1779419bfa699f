"""What ``%agent eval`` shows: a progress bar with the rows streaming into a table while it
runs; then the per-config success rates (95 % Wilson interval) with mean tokens, cost and
time, the success-rate-vs-cost figure with its Pareto front, and the failed runs' reasons.

In a kernel the progress is one display (HTML ``<progress>`` and a table, a text fallback),
updated in place by its display id: JupyterLab redraws it, nbclient and nbconvert save its
last state. Without a kernel (terminal IPython) each finished run is one printed line.
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
    why = f" — {row['reason']}" if row["passed"] is False and row["reason"] else ""
    return one_line(f"[{index}/{total}] {row['task']} × {row['config']} #{row['repeat']}: {RESULT[row['passed']]} "
                    f"({row['status']}, {_tokens(row['input_tokens'])}/{_tokens(row['output_tokens'])} tokens){why}",
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
    """The kernel's live display: a progress bar and the rows so far, updated in place."""

    STYLE = ("<style>.jb-eval table{border-collapse:collapse;font-size:12px}.jp-RenderedHTMLCommon .jb-eval td,"
             ".jp-RenderedHTMLCommon .jb-eval th,.jb-eval td,.jb-eval th{padding:2px 8px;"
             "border-bottom:1px solid #ddd;text-align:left;white-space:nowrap}.jb-eval .fail{color:#b00020}"
             ".jb-eval .pass{color:#1b7f3b}.jb-eval progress{width:240px;vertical-align:middle}</style>")

    def __init__(self, result: Any) -> None:
        from IPython.display import display

        self.result = result
        self.handle = display(self._bundle(), raw=True, display_id=True)

    def _bundle(self, done: bool = False) -> dict[str, Any]:
        r = self.result
        count, total = len(r.rows), r.planned
        state = stop_notice(r) or ("finished" if done else "running")
        head = (f"<div class='jb-eval' aria-busy='{str(not done).lower()}'>{self.STYLE}"
                f"<b>eval {html.escape(r.name)}</b> <progress value='{count}' max='{total}'></progress> "
                f"{count}/{total} runs · {html.escape(state)}")
        rows = "".join(
            "<tr>" + _cell(x["task"]) + _cell(x["config"]) + _cell(x["repeat"]) + _cell(x["status"])
            + _cell(RESULT[x["passed"]], {True: "pass", False: "fail"}.get(x["passed"], ""))
            + _cell(_tokens(x["input_tokens"])) + _cell(_tokens(x["output_tokens"])) + _cell(x["reason"] or "")
            + "</tr>" for x in r.rows)
        table = ("<table><tr><th>task</th><th>config</th><th>run</th><th>status</th><th>result</th>"
                 f"<th>tokens in</th><th>tokens out</th><th>why it failed</th></tr>{rows}</table></div>")
        bar = "#" * round(20 * count / total) if total else ""
        text = f"eval {r.name}: {count}/{total} runs [{bar:<20}] {state}"
        return {"text/html": head + table, "text/plain": text}

    def row(self, row: dict[str, Any]) -> None:
        self.handle.update(self._bundle(), raw=True)

    def finish(self, result: Any, metadata: dict[str, Any] | None = None) -> None:
        from IPython.display import display

        self.handle.update(self._bundle(done=True), raw=True, metadata=metadata or {})
        notice = stop_notice(result)
        if notice:
            print(notice)
        display(summary_bundle(result), raw=True)
        _show_figure(result)
        display(failures_bundle(result), raw=True)


def summary_bundle(result: Any) -> dict[str, Any]:
    rows = "".join(
        "<tr>" + _cell(s["config"]) + _cell(rate_text(s)) + _cell(_tokens(s["input_tokens"]))
        + _cell(_tokens(s["output_tokens"]))
        + _cell(_money(s["cost_usd"]) + ("" if s["seconds"] is None else f" · {duration(1000 * s['seconds'])}"))
        + "</tr>" for s in result.summary())
    table = (f"<div class='jb-eval'>{EvalDisplay.STYLE}<b>success rate per config</b> (95 % Wilson interval; "
             f"means per run)<table><tr><th>config</th><th>success</th><th>tokens in</th><th>tokens out</th>"
             f"<th>cost · time</th></tr>{rows}</table></div>")
    plain = "\n".join(f"{s['config']}: {rate_text(s)}" for s in result.summary())
    return {"text/html": table, "text/plain": plain}


def failures_bundle(result: Any) -> dict[str, Any]:
    failed = result.failures()
    if not failed:
        return {"text/plain": "no failed runs", "text/html": "<div class='jb-eval'><b>no failed runs</b></div>"}
    items = "".join(f"<tr>{_cell(f['task'])}{_cell(f['config'] + ' #' + str(f['repeat']))}{_cell(f['reason'], 'fail')}"
                    "</tr>" for f in failed)
    return {"text/plain": "failures by task:\n" + failures_text(result),
            "text/html": f"<div class='jb-eval'>{EvalDisplay.STYLE}<b>failures by task</b><table><tr><th>task</th>"
                         f"<th>run</th><th>why</th></tr>{items}</table></div>"}


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
