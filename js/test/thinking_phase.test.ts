// #17 in the AgentView: each thinking phase is one folded card (tokens saved), with its
// insights and next action inside, rendered as text.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AgentEvent } from "../src/protocol";
import { AgentRenderer } from "../src/renderer";

const start: AgentEvent = { type: "turn_start", session_id: "s", user_message: "go", provider: "p", model: "m", ts: 1 };

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("thinking phase card", () => {
  it("is folded, says what it saved, and shows insights as text", () => {
    const host = document.createElement("div");
    const r = new AgentRenderer(host, { markdown: (s: string) => `<p>${s}</p>`, throttleMs: 0 });
    r.append([
      start,
      { type: "step_start", step: 2 },
      {
        type: "thinking_phase", step: 2, strategy: "summary", tokens_before: 5200, tokens_after: 900,
        model_calls: 1, thinking_tokens: 640, next_actions: "plot the drop",
        insights: ["March revenue is 41,200", "<img src=x onerror=alert(1)>"],
      },
      { type: "turn_end", status: "completed", text: "done", steps: 2 },
    ]);
    const card = host.querySelector("details.jb-thinking-phase") as HTMLDetailsElement;
    expect(card).not.toBeNull();
    expect(card.open).toBe(false);
    expect(card.querySelector("summary")?.textContent).toContain("4,300 tokens saved");
    const items = [...card.querySelectorAll(".jb-thinking-insights li")].map((li) => li.textContent);
    expect(items).toEqual(["March revenue is 41,200", "<img src=x onerror=alert(1)>"]);
    expect(card.querySelector("img")).toBeNull();
    expect(card.textContent).toContain("Next: plot the drop");
  });
});
