"""Randomised fault scenarios for whole sessions, shared by ``test_faults.py`` and
``benchmarks/faults.py``.

A scenario is a multi-turn session (2–4 turns, each a few steps with tool calls) run
through the real ``AgentHarness`` and a real SDK-backed provider (Anthropic or
OpenAI-compatible) against the local mock servers, streaming on or off, with faults at
chosen points:

* model calls: HTTP 429 / 500 / 529 or a connection closed before any response
  (once: the SDK retries it; twice: it surfaces),
  an ``error`` event mid-stream, a dropped connection mid-stream, a body that ends
  cleanly but early (truncated);
* tools: malformed argument JSON, a tool that raises, a tool that hangs past its timeout;
* interrupts: the turn's ``cancel`` event set mid-stream, ``KeyboardInterrupt`` raised
  from the ``on_event`` callback mid-stream (Ctrl-C while the view is drawing), or raised
  at any event of a step (``ctrl_c_any``: also while tools run, at the step's end, at the
  turn's start or end — a kernel interrupt can land anywhere).

Anthropic replies carry signed (and sometimes redacted) thinking, so signature integrity
is checked across turns. After every turn the checks in ``_Run._check_turn`` run; a
scenario ends with one more turn against a healthy server, then the event log is
reopened from disk. ``build_scenario(pick)`` draws every choice through ``pick(lo, hi)``,
so the same generator serves hypothesis (``st.integers``) and a seeded ``random.Random``.
"""

from __future__ import annotations

import io
import json
import re
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mock_servers import Count, Hangup, HttpError, MockAnthropic, MockOpenAI, MockServer, Reply, ToolUse

from jupyter_brain.agent.events import EventLog
from jupyter_brain.agent.harness import AgentHarness, TurnResult
from jupyter_brain.agent.history import history_problems, signatures
from jupyter_brain.agent.retry import RetryPolicy
from jupyter_brain.agent.tools import AgentToolRegistry, tool
from jupyter_brain.providers import anthropic as anthropic_wire
from jupyter_brain.providers import openai_compat as openai_wire
from jupyter_brain.providers.anthropic import AnthropicProvider
from jupyter_brain.providers.openai_compat import OpenAICompatProvider
from jupyter_brain.session import SessionManager
from jupyter_brain.widgets import AgentView, TextView
from jupyter_brain.widgets import _format as fmt
from jupyter_brain.widgets._fold import fold

MAX_RETRIES = 1  # SDK retries per request: one HTTP error is absorbed, two surface
# The harness tries a step's model call again after a transient failure mid-stream
# (#12 item 8: overloaded, a dropped or truncated stream): here every attempt meets the
# same fault, so such a turn still ends "error" — after RetryEvents, with no sleeps.
HARNESS_ATTEMPTS = 3
HANG_TIMEOUT_S = 0.05
HANG_SLEEP_S = 0.4
SESSION = "faults"

HTTP_FAULTS = {"http_429": 429, "http_500": 500, "http_529": 529, "conn_reset": 0}  # 0: hang up, no response
HTTP_KIND = {429: "rate_limit", 500: "server", 529: "overloaded", 0: "connection"}
STREAM_FAULTS = ("stream_error", "drop", "truncate")
INTERRUPTS = ("cancel", "ctrl_c", "ctrl_c_any")
STEP_FAULTS = (*HTTP_FAULTS, *STREAM_FAULTS, *INTERRUPTS)
TOOL_FAULTS = {"malformed": "malformed_json", "boom": "tool_raises", "hang": "tool_hangs"}
FAULT_KINDS = (*STEP_FAULTS, *TOOL_FAULTS.values())
TOOL_CHOICES = ("add", "add", "echo", "echo", "boom", "hang", "malformed")
MALFORMED = (
    '{"a": 1, "b": ',
    "{a: 1, b: 2}",
    "not json at all",
    "[1, 2]",
    '{"a": "one", "b": 2}',
    '{"a": 1, "b": 2}}',
)
DELTAS = ("text_delta", "thinking_delta", "tool_call_args_delta")

Pick = Callable[[int, int], int]


# ── tools ────────────────────────────────────────────────────────────────────


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first addend
        b: second addend
    """
    return a + b


@tool
def echo(text: str) -> str:
    """Say a text back."""
    return f"echo: {text}"


@tool
def boom(reason: str = "") -> str:
    """A tool that always fails."""
    raise RuntimeError(f"tool exploded ({reason})")


@tool(tool_timeout_s=HANG_TIMEOUT_S, retry_on_timeout=False)
def hang() -> str:
    """A tool that never answers in time."""
    time.sleep(HANG_SLEEP_S)
    return "too late"


TOOLS = (add, echo, boom, hang)


# ── scenarios ────────────────────────────────────────────────────────────────


@dataclass
class StepPlan:
    """One model call of a turn: what the reply holds and the fault on the call, if any."""

    calls: list[str]  # tool kinds (TOOL_CHOICES); empty on the final answer
    text: bool = True
    thinking: bool = False
    redacted: bool = False  # Anthropic: a redacted_thinking block too
    fault: str | None = None  # one of STEP_FAULTS
    count: int = 1  # HTTP faults: consecutive errors before the reply
    at: float = 0.0  # where in the stream (stream faults) or which delta (interrupts)
    error_type: str = "overloaded_error"  # stream_error: the error event's type
    malformed: int = 0  # which MALFORMED argument text

    def describe(self) -> str:
        parts = ["answer" if not self.calls else "[" + ",".join(self.calls) + "]"]
        if self.thinking:
            parts.append("think" + ("+redacted" if self.redacted else ""))
        if self.fault:
            detail = {
                **{k: f"x{self.count}" for k in HTTP_FAULTS},
                "stream_error": f"@{self.at:.2f}:{self.error_type}",
                "drop": f"@{self.at:.2f}",
                "truncate": f"@{self.at:.2f}",
                "cancel": f"@{self.at:.2f}",
                "ctrl_c": f"@{self.at:.2f}",
                "ctrl_c_any": f"@{self.at:.2f}",
            }[self.fault]
            parts.append(f"{self.fault}{detail}")
        if "malformed" in self.calls:
            parts.append(f"json#{self.malformed}")
        return " ".join(parts)


@dataclass
class Scenario:
    provider: str  # "anthropic" | "openai"
    stream: bool
    think: bool  # think level low (Anthropic: the request asks for extended thinking)
    turns: list[list[StepPlan]]
    seed: int | None = None

    def describe(self) -> str:
        head = f"{self.provider} stream={self.stream} think={self.think}"
        turns = " | ".join(f"T{t + 1}: " + "; ".join(s.describe() for s in steps) for t, steps in enumerate(self.turns))
        return f"{head} || {turns}"

    def planned(self) -> Counter:
        counts: Counter = Counter()
        for steps in self.turns:
            for step in steps:
                if step.fault:
                    counts[step.fault] += 1
                for call in step.calls:
                    if call in TOOL_FAULTS:
                        counts[TOOL_FAULTS[call]] += 1
        return counts


def build_scenario(pick: Pick, seed: int | None = None) -> Scenario:
    """A scenario from ``pick(lo, hi)`` (inclusive) draws."""
    provider = ("anthropic", "openai")[pick(0, 1)]
    stream = bool(pick(0, 1))
    think = provider == "anthropic" and bool(pick(0, 1))
    turns: list[list[StepPlan]] = []
    for _ in range(pick(2, 4)):
        n_tool_steps = pick(1, 3)
        steps: list[StepPlan] = []
        for s in range(n_tool_steps + 1):
            final = s == n_tool_steps
            calls = [] if final else [TOOL_CHOICES[pick(0, len(TOOL_CHOICES) - 1)] for _ in range(pick(1, 3))]
            step = StepPlan(calls=calls, text=final or bool(pick(0, 1)), thinking=bool(pick(0, 1)))
            if provider == "anthropic" and step.thinking:
                step.redacted = pick(0, 3) == 0
            if "malformed" in calls:
                step.malformed = pick(0, len(MALFORMED) - 1)
            if pick(0, 3) == 0:
                step.fault = STEP_FAULTS[pick(0, len(STEP_FAULTS) - 1)]
                if step.fault in HTTP_FAULTS:
                    step.count = pick(1, MAX_RETRIES + 1)
                else:
                    step.at = pick(0, 99) / 100
                if step.fault == "stream_error":
                    step.error_type = ("overloaded_error", "api_error")[pick(0, 1)]
                if step.fault in INTERRUPTS:
                    step.text = True  # something streams, so the interrupt lands mid-stream
            steps.append(step)
        turns.append(steps)
    return Scenario(provider, stream, think, turns, seed)


def random_scenario(seed: int) -> Scenario:
    import random

    rng = random.Random(seed)
    return build_scenario(rng.randint, seed)


def single_fault(fault: str | None, *, provider: str = "anthropic", stream: bool = True, at: float = 0.5,
                 count: int = MAX_RETRIES + 1, error_type: str = "overloaded_error", step: int = 2,
                 calls: tuple[str, ...] = ("add", "echo"), malformed: int = 0, think: bool = True) -> Scenario:
    """A two-turn scenario (regressions): the first turn's first step calls ``calls``; a
    step fault goes on its step ``step`` (1–3; 3 is the final answer)."""
    first = [
        StepPlan(calls=list(calls), thinking=True, malformed=malformed),
        StepPlan(calls=["add"], thinking=True),
        StepPlan(calls=[], thinking=True),
    ]
    if fault in STEP_FAULTS:
        target = first[step - 1]
        target.fault, target.count, target.at, target.error_type = fault, count, at, error_type
    second = [StepPlan(calls=["echo"], thinking=True), StepPlan(calls=[])]
    return Scenario(provider, stream, think and provider == "anthropic", [first, second])


def expected_outcome(plan: list[StepPlan], stream: bool, fired: dict[int, bool]) -> tuple[str, str | None, int]:
    """(status, error kind, last step reached) that a turn with this plan must end with."""
    for s, step in enumerate(plan, 1):
        fault = step.fault
        if fault in HTTP_FAULTS and step.count > MAX_RETRIES:
            return "error", HTTP_KIND[HTTP_FAULTS[fault]], s
        if fault == "stream_error":
            return "error", ("overloaded" if step.error_type == "overloaded_error" else "stream"), s
        if fault in ("drop", "truncate"):
            return "error", "connection", s
        if fault == "ctrl_c_any" and fired.get(s) not in (None, "turn_end"):
            return "interrupted", None, s  # (at the turn's end the turn is over: nothing to stop)
        if fault in ("cancel", "ctrl_c") and fired.get(s):
            if fault == "ctrl_c" or stream or step.calls:
                return "interrupted", None, s
            return "completed", None, s  # cancel after a complete non-streamed answer: it stands
    return "completed", None, len(plan)


def steps_started_text(events: list[Any]) -> str:
    """The answer text streamed in the turn's last step, as a viewer saw it."""
    last = max((e.step for e in events if e.type == "step_start"), default=0)
    return "".join(e.text for e in events if e.type == "text_delta" and e.step == last)


def final_text(plan: list[StepPlan], t: int) -> str:
    return "".join(_text(len(plan), t, final=True))


def _text(s: int, t: int, *, final: bool) -> list[str]:
    return ["The answer ", f"for turn {t} ", "is 42."] if final else [f"Step {s} ", f"of turn {t}: ", "working."]


# ── wire checks: what the real APIs would reject ────────────────────────────


def anthropic_body_problems(body: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    msgs = body.get("messages") or []
    if not msgs or msgs[0].get("role") != "user":
        problems.append("the messages do not start with a user message")
    if msgs and msgs[-1].get("role") != "user":
        problems.append("the messages do not end with a user message")
    pending: set[str] = set()
    seen: set[str] = set()
    prev = None
    for i, m in enumerate(msgs):
        role, content = m.get("role"), m.get("content")
        if role == prev:
            problems.append(f"message {i}: two {role} messages in a row")
        prev = role
        if not isinstance(content, list) or not content:
            problems.append(f"message {i}: empty content")
            continue
        for b in content:
            if b.get("type") == "text" and not str(b.get("text", "")).strip():
                problems.append(f"message {i}: a text block without text")
        if role == "assistant":
            if pending:
                problems.append(f"message {i}: tool_use {sorted(pending)} not answered")
            kinds = [b.get("type") for b in content]
            first_other = next((k for k, kind in enumerate(kinds) if kind not in ("thinking", "redacted_thinking")), len(kinds))
            if any(kind in ("thinking", "redacted_thinking") for kind in kinds[first_other:]):
                problems.append(f"message {i}: a thinking block after text or tool_use")
            for b in content:
                if b.get("type") == "thinking" and not b.get("signature"):
                    problems.append(f"message {i}: thinking without a signature")
                if b.get("type") == "redacted_thinking" and not b.get("data"):
                    problems.append(f"message {i}: redacted_thinking without data")
                if b.get("type") == "tool_use":
                    tid = b.get("id") or ""
                    if not re.fullmatch(r"[a-zA-Z0-9_-]+", tid):
                        problems.append(f"message {i}: bad tool_use id {tid!r}")
                    if tid in seen:
                        problems.append(f"message {i}: duplicate tool_use id {tid!r}")
                    if not isinstance(b.get("input"), dict):
                        problems.append(f"message {i}: tool_use input is not an object")
                    seen.add(tid)
                    pending.add(tid)
        elif role == "user":
            results = [b for b in content if b.get("type") == "tool_result"]
            ids = {b.get("tool_use_id") for b in results}
            if ids != pending:
                problems.append(f"message {i}: tool_result ids {sorted(map(str, ids))} do not answer tool_use {sorted(pending)}")
            if content[: len(results)] != results:
                problems.append(f"message {i}: tool_result blocks are not first")
            pending = set()
        else:
            problems.append(f"message {i}: role {role!r}")
    if pending:
        problems.append(f"end: tool_use {sorted(pending)} not answered")
    for b in body.get("system") or []:
        if not str(b.get("text", "")).strip():
            problems.append("an empty system block")
    return problems


def openai_body_problems(body: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    msgs = body.get("messages") or []
    pending: set[str] = set()
    seen: set[str] = set()
    for i, m in enumerate(msgs):
        role = m.get("role")
        if role == "system" and i != 0:
            problems.append(f"message {i}: a system message that is not first")
        if role == "tool":
            if m.get("tool_call_id") not in pending:
                problems.append(f"message {i}: tool message {m.get('tool_call_id')!r} answers no call")
            pending.discard(m.get("tool_call_id"))
            if not isinstance(m.get("content"), str):
                problems.append(f"message {i}: tool content is not a string")
            continue
        if pending:
            problems.append(f"message {i}: {role} message before the results of {sorted(pending)}")
            pending = set()
        if role == "assistant":
            calls = m.get("tool_calls") or []
            if not calls and not isinstance(m.get("content"), str):
                problems.append(f"message {i}: assistant message without content or tool calls")
            for c in calls:
                cid = c.get("id") or ""
                if not cid or cid in seen:
                    problems.append(f"message {i}: missing or duplicate tool call id {cid!r}")
                seen.add(cid)
                pending.add(cid)
                try:
                    args = json.loads(c["function"]["arguments"])
                except (KeyError, TypeError, ValueError):
                    problems.append(f"message {i}: tool call arguments are not JSON")
                else:
                    if not isinstance(args, dict):
                        problems.append(f"message {i}: tool call arguments are not an object")
        elif role == "user":
            if not isinstance(m.get("content"), str) or not m["content"]:
                problems.append(f"message {i}: empty user message")
        elif role != "system":
            problems.append(f"message {i}: role {role!r}")
    if pending:
        problems.append(f"end: tool calls {sorted(pending)} not answered")
    if msgs and msgs[-1].get("role") not in ("user", "tool"):
        problems.append("the messages end with neither a user nor a tool message")
    return problems


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


# ── the rig: mock servers and providers, shared by many runs ─────────────────


def _auto_count(path: str, body: Any) -> Any:
    """count_tokens calls (compaction) get an answer without taking a scripted reply."""
    return Count(64) if path.endswith("/count_tokens") else None


def _fast_retries(client: Any) -> None:
    """Cap the SDK's retry backoff at 5 ms. HTTP errors carry ``retry-after-ms: 1``; a
    connection reset has no response to carry it, and the default backoff is ~0.5 s."""
    original = client._calculate_retry_timeout
    client._calculate_retry_timeout = lambda *args, **kwargs: min(original(*args, **kwargs), 0.005)


class FaultRig:
    """Both mock servers and one provider for each, with low retries and fast backoff."""

    def __init__(self) -> None:
        self.servers: dict[str, MockServer] = {"anthropic": MockAnthropic().start(), "openai": MockOpenAI().start()}
        self.servers["anthropic"].auto = _auto_count
        self.providers = {
            "anthropic": AnthropicProvider(api_key="sk-test", base_url=self.servers["anthropic"].url,
                                           max_retries=MAX_RETRIES, timeout=20.0),
            "openai": OpenAICompatProvider("mock-model", preset="vllm", base_url=self.servers["openai"].url + "/v1",
                                           max_retries=MAX_RETRIES, timeout=20.0),
        }
        for provider in self.providers.values():
            _fast_retries(provider._client)

    def close(self) -> None:
        for server in self.servers.values():
            server.stop()

    def __enter__(self) -> FaultRig:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# ── running ──────────────────────────────────────────────────────────────────


@dataclass
class RunReport:
    scenario: Scenario
    problems: list[str] = field(default_factory=list)
    planned: Counter = field(default_factory=Counter)
    reached: Counter = field(default_factory=Counter)
    statuses: Counter = field(default_factory=Counter)
    turns: int = 0
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    def reason(self) -> str:
        return "; ".join(self.problems[:3]) + (f" (+{len(self.problems) - 3} more)" if len(self.problems) > 3 else "")


class _Injector:
    """The turn's ``on_event``: feeds the views, then fires the planned interrupts."""

    def __init__(self, plan: list[StepPlan], stream: bool, cancel: threading.Event, sinks: list[Callable[[Any], Any]]):
        self.cancel = cancel
        self.sinks = sinks
        self.targets: dict[int, tuple[str, int]] = {}
        for s, step in enumerate(plan, 1):
            if step.fault == "ctrl_c_any":  # the k-th event of the step (roughly estimated)
                calls = len(step.calls)
                n = (6 + 3 * step.thinking + 5 * calls) if stream else (4 + 2 * step.thinking + 4 * calls)
                self.targets[s] = (step.fault, 1 + int(step.at * n))
            elif step.fault in INTERRUPTS:  # the k-th delta of the step's stream
                n = (3 + 2 * step.thinking) if stream else (1 + step.thinking)
                self.targets[s] = (step.fault, 1 + min(n - 1, int(step.at * n)))
        self.fired: dict[int, str] = {}  # step -> type of the event it fired at
        self.step = 0
        self.count = 0
        self.events: list[Any] = []

    def __call__(self, event: Any) -> None:
        self.events.append(event)
        for sink in self.sinks:
            sink(event)
        etype = event.type
        if etype == "step_start":
            if event.step != 1:  # the turn's start counts as step 1's first event
                self.count = 0
            self.step = event.step
        current = self.step or 1
        target = self.targets.get(current)
        if target is None or current in self.fired or (target[0] != "ctrl_c_any" and etype not in DELTAS):
            return
        self.count += 1
        if self.count >= target[1]:
            self.fired[current] = etype
            if target[0] == "cancel":
                self.cancel.set()
            else:
                raise KeyboardInterrupt


class _Run:
    def __init__(self, rig: FaultRig, scenario: Scenario, data_dir: Path) -> None:
        self.rig = rig
        self.sc = scenario
        self.server = rig.servers[scenario.provider]
        self.provider = rig.providers[scenario.provider]
        self.data_dir = data_dir
        self.report = RunReport(scenario, planned=scenario.planned())
        self.signed: dict[str, tuple[str, str]] = {}  # thinking text -> (text, signature) sent
        self.redacted: set[str] = set()
        self.unsigned_thinking: list[str] = []  # OpenAI reasoning texts (never sent back)
        self.nonce = f"{id(self) & 0xFFFFFF:06x}{time.perf_counter_ns() & 0xFFFFFF:06x}"

    # script ----------------------------------------------------------------
    def _reply(self, t: int, s: int, step: StepPlan, final: bool) -> Reply:
        tag = f"t{t}s{s}"
        calls = []
        for k, kind in enumerate(step.calls):
            cid = f"{'toolu' if self.sc.provider == 'anthropic' else 'call'}_{self.nonce}_{tag}c{k}"
            if kind == "add":
                calls.append(ToolUse("add", {"a": 40 + k, "b": 2}, id=cid, pieces=2))
            elif kind == "echo":
                calls.append(ToolUse("echo", {"text": f"hello {tag}"}, id=cid, pieces=2))
            elif kind == "boom":
                calls.append(ToolUse("boom", {"reason": tag}, id=cid, pieces=2))
            elif kind == "hang":
                calls.append(ToolUse("hang", {}, id=cid, pieces=2))
            else:
                calls.append(ToolUse("add", id=cid, raw=MALFORMED[step.malformed], pieces=2))
        reply = Reply(text=_text(s, t, final=final) if step.text else "", tool_calls=calls,
                      input_tokens=100 + s, output_tokens=10 + s)
        if step.thinking:
            thought = [f"Thinking {tag} {self.nonce}: ", "what next?"]
            reply.thinking = thought
            if self.sc.provider == "anthropic":
                sig = f"sig-{tag}-{self.nonce}-EqQBCkgIARAB"
                reply.signature = sig
                self.signed["".join(thought)] = ("".join(thought), sig)
                if step.redacted:
                    data = f"redacted-{tag}-{self.nonce}"
                    reply.redacted_thinking = data
                    self.redacted.add(data)
            else:
                self.unsigned_thinking.append("".join(thought))
        return reply

    def _frames(self, reply: Reply) -> int:
        if isinstance(self.server, MockAnthropic):
            return len(self.server.events(reply, "m"))
        return len(self.server.chunks(reply, "m")) + 1  # + [DONE]

    def _items(self, t: int, s: int, step: StepPlan, final: bool) -> list[Any]:
        reply = self._reply(t, s, step, final)
        fault = step.fault
        if fault in HTTP_FAULTS:
            code = HTTP_FAULTS[fault]
            fast = {"retry-after-ms": "1"}
            if code == 0:
                return [Hangup() for _ in range(step.count)] + [reply]
            return [HttpError(code, f"mock HTTP {code}", headers=fast) for _ in range(step.count)] + [reply]
        if fault in STREAM_FAULTS:
            # Never past the last frame that completes the answer (finish / message_stop).
            pos = int(step.at * (self._frames(reply) - 2))
            faulty = []
            for _ in range(HARNESS_ATTEMPTS):  # each retry meets the fault again
                if fault == "stream_error":
                    reply.error_after, reply.error_type = pos, step.error_type
                elif fault == "drop":
                    reply.drop_after = pos
                else:
                    reply.truncate_after = pos
                faulty.append(reply)
                reply = self._reply(t, s, step, final)
            return faulty  # (unused attempts are cleared by the server's reset after the turn)
        return [reply]

    # run -------------------------------------------------------------------
    def run(self) -> RunReport:
        started = time.perf_counter()
        sc = self.sc
        self.server.reset()
        manager = SessionManager(self.data_dir)
        self.log = manager.event_log
        self.session = manager.use(SESSION)
        self.harness = AgentHarness(
            self.provider, AgentToolRegistry(list(TOOLS)), self.log,
            max_steps=8, timeout_s=60, stream=sc.stream, think_level="low" if sc.think else "off",
            reflect_on_tool_error=False, reflect_on_uncertainty=False,
        )
        self.harness.retry = RetryPolicy(max_attempts=HARNESS_ATTEMPTS, wait=lambda s, cancel: False)
        self.view = AgentView()
        self.text_out = io.StringIO()
        self.text_view = TextView(self.text_out)
        results: list[TurnResult] = []
        healthy = [StepPlan(calls=["add"], thinking=True), StepPlan(calls=[], thinking=sc.provider == "anthropic")]
        try:
            for t, plan in enumerate([*sc.turns, healthy], 1):
                problems, result = self._turn(t, plan)
                self.report.turns += 1
                if result is not None:
                    results.append(result)
                    self.report.statuses[result.status] += 1
                if problems:
                    self.report.problems += [f"turn {t}: {p}" for p in problems]
                    break
            if not self.report.problems:
                self.report.problems += self._check_reopened(results)
        except Exception:  # noqa: BLE001 - a crash of the runner is a failure of the run
            self.report.problems.append("runner crashed: " + traceback.format_exc(limit=6))
        finally:
            self.view.close()
            self.log.close()
            self.server.reset()
        self.report.duration_s = time.perf_counter() - started
        return self.report

    def _turn(self, t: int, plan: list[StepPlan]) -> tuple[list[str], TurnResult | None]:
        for s, step in enumerate(plan, 1):
            self.server.push(*self._items(t, s, step, final=s == len(plan)))
        prev_history = [dict(m) for m in self.session.history]
        prev_text = len(self.text_out.getvalue())
        prev_entries = len(self.view.entries)
        cancel = threading.Event()
        injector = _Injector(plan, self.sc.stream, cancel, [self.view.handle, self.text_view.handle])
        prompt = f"Question {t}: what is x + 1?"
        try:
            result = self.session.run(prompt, self.harness, on_event=injector, cancel=cancel)
        except BaseException as exc:  # noqa: BLE001 - the harness must never raise
            self.server.reset()
            return [f"run_turn raised {type(exc).__name__}: {exc}"], None
        path = "/v1/messages" if self.sc.provider == "anthropic" else "/v1/chat/completions"
        bodies = [r.body for r in list(self.server.requests) if r.method == "POST" and r.path == path]
        self.server.reset()
        for s, fired in injector.fired.items():
            if fired:
                self.report.reached[plan[s - 1].fault] += 1
        problems = self._check_turn(t, plan, prompt, result, bodies, prev_history, injector,
                                    self.text_out.getvalue()[prev_text:], prev_entries)
        return problems, result

    # checks ----------------------------------------------------------------
    def _check_turn(self, t, plan, prompt, result, bodies, prev_history, injector, text, prev_entries) -> list[str]:
        p: list[str] = []
        sc = self.sc
        if not isinstance(result, TurnResult):
            return [f"run_turn returned {type(result).__name__}, not a TurnResult"]
        status, kind, reached = expected_outcome(plan, sc.stream, injector.fired)
        if result.status != status:
            p.append(f"status {result.status!r} (error: {result.error}), expected {status!r}")
        if status == "completed" and result.text != final_text(plan, t):
            p.append(f"final text {result.text!r}")
        if result.status == "error" and (kind or "") not in result.text:
            p.append(f"the turn's closing note does not name the error: {result.text!r}")
        if result.new_messages != result.messages[len(prev_history):]:
            p.append("new_messages is not the tail of messages")
        if result.status == "interrupted" and steps_started_text(injector.events):
            seen = steps_started_text(injector.events)
            last = next((m for m in reversed(result.messages) if m.get("role") == "assistant"), {})
            if seen not in str(last.get("content", "")) and not any(
                seen == str(m.get("content", "")) for m in result.new_messages if m.get("role") == "assistant"
            ):
                p.append(f"the text streamed before the interrupt is lost: {seen!r}")
        steps_started = [e.step for e in injector.events if e.type == "step_start"]
        if steps_started and steps_started[-1] != reached and result.status == status:
            p.append(f"the turn reached step {steps_started[-1]}, expected {reached}")
        for s, step in enumerate(plan[:reached], 1):
            if step.fault and step.fault not in INTERRUPTS:
                self.report.reached[step.fault] += 1

        # history
        problems = history_problems(result.messages, require_final_assistant=True)
        if problems:
            p.append(f"history problems {problems}")
        if self.session.history != result.messages:
            p.append("the session's history is not the turn's messages")
        if result.messages[: len(prev_history)] != prev_history:
            p.append("the turn changed the history of earlier turns")

        # thinking signatures: never altered, never lost, never invented
        sigs = signatures(result.messages)
        prev_sigs = signatures(prev_history)
        if sigs[: len(prev_sigs)] != prev_sigs:
            p.append("signed thinking of earlier turns changed")
        sent_pairs = set(self.signed.values())
        for pair in sigs:
            if pair not in sent_pairs:
                p.append(f"signed thinking not as sent: {pair}")
        for rec in result.steps:
            for text_, pair in self.signed.items():
                if text_ in rec.thinking and pair not in sigs:
                    p.append(f"signed thinking of step {rec.step} missing from the history")
        for m in result.messages:
            for b in m.get("thinking") or []:
                if b.get("redacted") and b.get("data") not in self.redacted:
                    p.append(f"redacted thinking not as sent: {b.get('data')!r}")
        if sc.provider != "anthropic" and sigs:
            p.append("signatures in an OpenAI-compatible history")

        # request bodies as the server received them
        if not bodies and result.steps:
            p.append("no request reached the server")
        for i, body in enumerate(bodies):
            if sc.provider == "anthropic":
                wrong = anthropic_body_problems(body)
                for m in body.get("messages", []):
                    for b in m.get("content", []):
                        if b.get("type") == "thinking" and (b.get("thinking"), b.get("signature")) not in sent_pairs:
                            wrong.append(f"thinking block not as sent: {b.get('signature')!r}")
                        if b.get("type") == "redacted_thinking" and b.get("data") not in self.redacted:
                            wrong.append("redacted_thinking not as sent")
            else:
                wrong = openai_body_problems(body)
                dumped = json.dumps(body)
                wrong += [f"reasoning text sent back: {r!r}" for r in self.unsigned_thinking if r in dumped]
            p += [f"request {i + 1}: {w}" for w in wrong]
        if bodies:
            neutral = [{"role": "system", "content": result.system_prompt}, *prev_history,
                       {"role": "user", "content": prompt}]
            if sc.provider == "anthropic":
                system, wire = anthropic_wire.to_wire(neutral)
                same = _jsonable(wire) == bodies[0].get("messages") and _jsonable(system) == bodies[0].get("system")
            else:
                same = _jsonable(openai_wire.to_wire(neutral)) == bodies[0].get("messages")
            if not same:
                p.append("the first request of the turn does not carry the session's history")

        # event log
        records = {r.turn_id: r for r in self.log.turns(SESSION)}
        record = records.get(result.turn_id)
        if record is None:
            p.append("the turn is not in the event log")
        elif record.status != result.status or record.ended is None:
            p.append(f"the log's turn row says {record.status!r}, ended={record.ended}")
        events = self.log.events(turn_id=result.turn_id)
        types = [e.type for e in events]
        seqs = [e.seq for e in events]
        if seqs != sorted(set(seqs)):
            p.append("logged events are out of order")
        if not types or types[0] != "turn_start" or types[-1] != "turn_end":
            p.append(f"the logged turn runs {types[:1]} … {types[-1:]}")
        retries = [e for e in events if e.type == "retry"]
        if len(retries) > HARNESS_ATTEMPTS - 1:
            p.append(f"{len(retries)} retries of a model call, at most {HARNESS_ATTEMPTS - 1} allowed")
        for e in retries:
            fault = plan[e.step - 1].fault if e.step <= len(plan) else None
            if fault not in ("stream_error", "drop", "truncate"):
                p.append(f"step {e.step} retried after {e.reason!r} without a mid-stream fault ({fault})")
        if retries and result.status == "error" and "attempts" not in result.text:
            p.append(f"a retried step failed without saying it gave up: {result.text!r}")
        errors = [e for e in events if e.type == "error"]
        if result.status == "error":
            if not errors:
                p.append("a failed turn without an error event")
            elif errors[-1].kind != kind or not errors[-1].message.strip():
                p.append(f"error event {errors[-1].kind!r}: {errors[-1].message!r}, expected kind {kind!r}")
        elif errors:
            p.append(f"error events in a turn that ended {result.status!r}: {[e.message for e in errors]}")
        if len(events) != len(injector.events):
            merged = sum(1 for e in injector.events if e.type in ("text_delta", "thinking_delta"))
            if len(events) > len(injector.events) or len(injector.events) - len(events) > merged:
                p.append(f"{len(events)} events logged, {len(injector.events)} emitted")
        if self.log.load_history(SESSION) != self.session.history:
            p.append("EventLog.load_history differs from the session's history")

        # views
        entries = self.view.entries[prev_entries:]
        if self.view.status != result.status:
            p.append(f"the AgentView's status is {self.view.status!r}")
        if self.view.transcript != self.view.entries:
            p.append("the AgentView's synced transcript is not committed at the turn's end")
        if entries != fold(events):
            p.append("the live AgentView transcript differs from a replay of the event log")
        cards = [e for e in entries if e["type"] == "error"]
        if result.status == "error":
            if not cards or cards[-1]["kind"] != kind or not cards[-1]["message"].strip():
                p.append(f"no clear error card in the AgentView: {cards}")
            if f"⚠ error [{kind}]" not in text:
                p.append("TextView shows no error line")
        label = fmt.STATUS_LABEL.get(result.status, result.status)
        if label not in text:
            p.append(f"TextView shows no {label!r} status line")

        # every tool call ends once, and the model reads what really happened
        ends = {}
        for e in events:
            if e.type == "tool_call_end":
                if e.call_id in ends:
                    p.append(f"tool call {e.call_id} ended twice ({ends[e.call_id].status}, {e.status})")
                ends[e.call_id] = e
        for m in result.new_messages:
            if m.get("role") == "tool":
                end = ends.get(m.get("tool_call_id"))
                if end is None:
                    p.append(f"tool result {m.get('tool_call_id')} without a tool_call_end event")
                elif (end.status == "interrupted") != str(m.get("content", "")).startswith("[not run"):
                    p.append(f"tool call {end.call_id} ended {end.status!r} but the model reads {m.get('content')!r:.80}")

        # tool faults that ran
        for s, step in enumerate(plan[:reached], 1):
            for k, kind_ in enumerate(step.calls):
                cid = f"{'toolu' if sc.provider == 'anthropic' else 'call'}_{self.nonce}_t{t}s{s}c{k}"
                end = ends.get(cid)
                if kind_ in TOOL_FAULTS and end is not None and end.status != "interrupted":
                    self.report.reached[TOOL_FAULTS[kind_]] += 1
                    want = {"boom": ("error", "blocked"), "hang": ("timeout", "blocked"),
                            "malformed": ("ok", "invalid", "blocked")}[kind_]
                    if end.status not in want:
                        p.append(f"{kind_} call ended {end.status!r}")
        return p

    def _check_reopened(self, results: list[TurnResult]) -> list[str]:
        """After closing: the log on disk restores the same session."""
        p: list[str] = []
        history = self.session.history
        self.log.close()
        reopened = EventLog(self.data_dir / "events.sqlite")
        try:
            if reopened.load_history(SESSION) != history:
                p.append("reopened log: history differs")
            statuses = [r.status for r in reopened.turns(SESSION)]
            if statuses != [r.status for r in results]:
                p.append(f"reopened log: turn statuses {statuses}")
        finally:
            reopened.close()
        manager = SessionManager(self.data_dir)
        try:
            restored = manager.use(SESSION).history
            if restored != history:
                p.append("SessionManager.use does not restore the history")
            problems = history_problems(restored, require_final_assistant=True)
            if problems:
                p.append(f"restored history problems {problems}")
        finally:
            manager.event_log.close()
        return p


def run_scenario(rig: FaultRig, scenario: Scenario, data_dir: Path | None = None) -> RunReport:
    """Run one scenario in ``data_dir`` (a fresh temporary folder by default)."""
    if data_dir is not None:
        return _Run(rig, scenario, Path(data_dir)).run()
    with tempfile.TemporaryDirectory(prefix="jb-faults-") as tmp:
        return _Run(rig, scenario, Path(tmp)).run()
