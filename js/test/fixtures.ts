// A scripted turn exercising every event type, and a kernel simulator that batches it
// the way jupyter_brain/widgets/agent_view.py does.
import { compact } from "../src/compact";
import type { BranchData } from "../src/parts/tot_tree";
import type { AgentEvent, Batch } from "../src/protocol";

let clock = 1_700_000_000;
const ts = () => (clock += 0.01);

export function tokensOf(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

export function scriptedTurn(): AgentEvent[] {
  const ev: AgentEvent[] = [];
  ev.push({
    type: "turn_start",
    session_id: "default",
    turn_id: "t1",
    user_message: "Plot the data",
    provider: "scripted",
    model: "demo-1",
    think_level: "medium",
    strategy: "react",
    max_steps: 6,
    ts: ts(),
  });
  ev.push({ type: "compaction", step: 0, strategy: "summarize", tokens_before: 12000, tokens_after: 3000, ts: ts() });
  ev.push({ type: "step_start", step: 1, ts: ts() });
  for (const t of tokensOf("I should look at the dataframe first.")) ev.push({ type: "thinking_delta", step: 1, text: t, ts: ts() });
  ev.push({ type: "thinking_end", step: 1, ts: ts() });
  for (const t of tokensOf("Let me **inspect** it:\n\n```python\ndf.head()\n```\n"))
    ev.push({ type: "text_delta", step: 1, text: t, ts: ts() });
  ev.push({ type: "strategy_step", step: 1, strategy: "react", data: { kind: "thought", text: "inspect df" }, ts: ts() });
  ev.push({ type: "strategy_step", step: 1, strategy: "react", data: { kind: "action", tool: "python", args: { code: "df.head()" } }, ts: ts() });
  ev.push({ type: "tool_call_start", step: 1, call_id: "c1", name: "python", ts: ts() });
  for (const t of ['{"code": ', '"df.head()"}']) ev.push({ type: "tool_call_args_delta", step: 1, call_id: "c1", delta: t, ts: ts() });
  ev.push({ type: "tool_call_start", step: 1, call_id: "c2", name: "list_variables", ts: ts() });
  ev.push({ type: "tool_call_args", step: 1, call_id: "c1", name: "python", arguments: { code: "df.head()" }, wave: 1, ts: ts() });
  ev.push({ type: "tool_call_args", step: 1, call_id: "c2", name: "list_variables", arguments: {}, wave: 1, ts: ts() });
  ev.push({ type: "tool_call_start", step: 1, call_id: "c3", name: "read_file", ts: ts() });
  ev.push({ type: "tool_call_args", step: 1, call_id: "c3", name: "read_file", arguments: '{"path": "a.csv"}', wave: 2, repaired: true, ts: ts() });
  ev.push({ type: "tool_call_end", step: 1, call_id: "c2", name: "list_variables", status: "ok", duration_ms: 12, wave: 1, result_preview: "df: DataFrame", ts: ts() });
  ev.push({ type: "tool_call_end", step: 1, call_id: "c1", name: "python", status: "ok", duration_ms: 1234, wave: 1, result_preview: "   a  b\n0  1  2", ts: ts() });
  ev.push({ type: "tool_call_end", step: 1, call_id: "c3", name: "read_file", status: "error", duration_ms: 3, wave: 2, error: "FileNotFoundError: a.csv", ts: ts() });
  ev.push({ type: "reflection", step: 1, reflection: "The file is missing; use `df`.", confidence: 0.8, trigger: "tool_error", suggested_action: "plot df", ts: ts() });
  ev.push({ type: "usage", step: 1, input_tokens: 1000, output_tokens: 50, cache_read_tokens: 800, cache_creation_tokens: 100, cost_usd: 0.01, ts: ts() });
  ev.push({ type: "step_end", step: 1, stop_reason: "tool_use", tool_calls: 3, ts: ts() });
  ev.push({ type: "step_start", step: 2, ts: ts() });
  ev.push({ type: "error", step: 2, kind: "rate_limit", message: "429 Too Many Requests, retrying", recoverable: true, ts: ts() });
  ev.push({ type: "reflection", step: 2, reflection: "[budget exhausted]", skipped: true, ts: ts() });
  for (const t of tokensOf("Here is the plot of `df`.\n\n- a\n- b\n"))
    ev.push({ type: "text_delta", step: 2, text: t, ts: ts() });
  ev.push({ type: "strategy_step", step: 2, strategy: "react", data: { kind: "final_answer", text: "plotted" }, ts: ts() });
  ev.push({ type: "usage", step: 2, input_tokens: 1200, output_tokens: 30, cost_usd: 0.012, ts: ts() });
  ev.push({ type: "step_end", step: 2, stop_reason: "end_turn", ts: ts() });
  ev.push({
    type: "turn_end",
    session_id: "default",
    turn_id: "t1",
    status: "completed",
    text: "Here is the plot of `df`.",
    steps: 2,
    tool_calls: 3,
    reflections: 2,
    input_tokens: 2200,
    output_tokens: 80,
    cache_read_tokens: 800,
    cache_creation_tokens: 100,
    cost_usd: 0.022,
    duration_ms: 4321,
    ts: ts(),
  });
  return ev;
}

/** Split `events` into batches of the given sizes (cycled), merged as the kernel does. */
export function toBatches(events: AgentEvent[], sizes: number[], epoch = 0, offset = 0): Batch[] {
  const out: Batch[] = [];
  let i = offset;
  let k = 0;
  while (i < events.length) {
    const n = Math.max(1, sizes[k++ % sizes.length]);
    const chunk = events.slice(i, i + n);
    out.push({ kind: "events", epoch, start: i, end: i + chunk.length, events: compact(chunk) });
    i += chunk.length;
  }
  return out;
}

type Handler = (...args: unknown[]) => void;

/** Just enough of anywidget's model proxy: get/set/on/off and custom messages. */
export class MockModel {
  state: Record<string, unknown>;
  private handlers = new Map<string, Set<Handler>>();
  widget_manager = { get_model: async () => this };

  constructor(state: Record<string, unknown> = {}) {
    this.state = { transcript: [], transcript_n: 0, epoch: 0, ...state };
  }
  get(key: string): unknown {
    return this.state[key];
  }
  set(key: string, value: unknown): void {
    this.state[key] = value;
    this.emit(`change:${key}`, this, value);
  }
  on(name: string, cb: Handler): void {
    if (!this.handlers.has(name)) this.handlers.set(name, new Set());
    this.handlers.get(name)!.add(cb);
  }
  off(name?: string | null, cb?: Handler | null): void {
    if (!name) this.handlers.clear();
    else if (!cb) this.handlers.delete(name);
    else this.handlers.get(name)?.delete(cb);
  }
  save_changes(): void {}
  sent: unknown[] = [];
  send(msg: unknown): void {
    this.sent.push(msg);
  }
  listeners(name: string): number {
    return this.handlers.get(name)?.size ?? 0;
  }
  emit(name: string, ...args: unknown[]): void {
    for (const cb of [...(this.handlers.get(name) ?? [])]) cb(...args);
  }
  /** A kernel custom message. */
  custom(msg: unknown): void {
    this.emit("msg:custom", msg, []);
  }
  /** A kernel state update under hold_sync: all keys set first, then change events (Backbone order). */
  commit(update: Record<string, unknown>): void {
    Object.assign(this.state, update);
    for (const [k, v] of Object.entries(update)) this.emit(`change:${k}`, this, v);
  }
}

/** Two Tree-of-Thoughts decision points as the parser emits them: three candidates, then the
 *  selection (the same id again, selected), then the next point's candidates and selection. */
export const totBranches: BranchData[] = [
  { branch_id: 1, thought: "groupby", score: 0.8, decision_point: 1, selected: false },
  { branch_id: 2, thought: "loop", score: 0.3, decision_point: 1, selected: false },
  { branch_id: 3, thought: "sql", score: 0.5, decision_point: 1, selected: false },
  { branch_id: 1, thought: "groupby", score: 0.8, decision_point: 1, selected: true },
  { branch_id: 1, thought: "plot bars", score: 0.35, decision_point: 2, selected: false },
  { branch_id: 2, thought: "plot line", score: 0.7, decision_point: 2, selected: false },
  { branch_id: 2, thought: "", score: 0.7, decision_point: 2, selected: true },
];
