// Merge runs of deltas, with the same rules as jupyter_brain/widgets/_fold.py, so the
// store keeps one entry per text/thinking/arguments block instead of one per batch (and
// of a run of one tool call's progress notifications, the latest).
import type { AgentEvent } from "./protocol";

export function blockKey(e: AgentEvent): string | null {
  switch (e.type) {
    case "text_delta":
    case "thinking_delta":
      return `${e.type}:${e.step}`;
    case "tool_call_args_delta":
      return `${e.type}:${e.step}:${e.call_id}`;
    default:
      return null;
  }
}

/** Append `e` to `list`, concatenating it into the last entry when both belong to one block.
 *  Entries are copied, never edited in place (callers may still hold the originals). */
export function appendCompact(list: AgentEvent[], e: AgentEvent): void {
  const last = list[list.length - 1];
  if (last?.type === "tool_progress" && e.type === "tool_progress" && last.call_id === e.call_id) {
    list[list.length - 1] = { ...e }; // a run of one call's progress: only the latest counts
    return;
  }
  const key = blockKey(e);
  if (last !== undefined && key !== null && blockKey(last) === key) {
    if (last.type === "tool_call_args_delta" && e.type === "tool_call_args_delta") {
      list[list.length - 1] = { ...last, delta: last.delta + e.delta };
      return;
    }
    if ((last.type === "text_delta" || last.type === "thinking_delta") && last.type === e.type) {
      list[list.length - 1] = { ...last, text: last.text + e.text };
      return;
    }
  }
  list.push({ ...e });
}

export function compact(events: Iterable<AgentEvent>): AgentEvent[] {
  const out: AgentEvent[] = [];
  for (const e of events) appendCompact(out, e);
  return out;
}
