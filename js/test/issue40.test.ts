// #40 and #39 in the AgentView: the answer without "Final Answer:", a reflection card that
// says each thing once, and a replayed turn's footer with what it cost when recorded.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { reflectionBody } from "../src/parts/cards";
import { splitFinalAnswer } from "../src/parts/strategy";
import type { AgentEvent } from "../src/protocol";
import { AgentRenderer } from "../src/renderer";

const start: AgentEvent = { type: "turn_start", session_id: "s", user_message: "Which runs failed?", provider: "p", model: "m", ts: 1 };

function make() {
  const host = document.createElement("div");
  const renderer = new AgentRenderer(host, { throttleMs: 0 });
  // The renderer paints in time slices: run them all before looking.
  const r = { append: (events: AgentEvent[]) => { renderer.append(events); vi.advanceTimersByTime(100); } };
  return { host, r, q: (s: string) => host.querySelector(s) as HTMLElement | null };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("the answer is the answer", () => {
  it("splits a Final Answer label written without a strategy", () => {
    expect(splitFinalAnswer("I looked.\n**Final Answer:** 7 rows")).toEqual({ before: "I looked.", answer: "7 rows" });
    expect(splitFinalAnswer("No label here.")).toBeNull();
    expect(splitFinalAnswer("Final Answer:")).toBeNull();
    expect(splitFinalAnswer("Final Answer: **cot** fails")?.answer).toBe("**cot** fails"); // its bold stays
  });

  it("shows the answer without its label, and the text before it in the step", () => {
    const { r, q, host } = make();
    r.append([
      start,
      { type: "step_start", step: 1 },
      { type: "text_delta", step: 1, text: "I listed them.\nFinal Answer: **cot** fails every task." },
      { type: "step_end", step: 1 },
      { type: "turn_end", status: "completed", text: "**cot** fails every task.", steps: 1 },
    ]);
    expect(q(".jb-answer")?.textContent?.trim()).toBe("cot fails every task.");
    expect(host.textContent).not.toContain("Final Answer");
    expect(q(".jb-process .jb-text")?.textContent?.trim()).toBe("I listed them.");
  });
});

describe("the reflection card says each thing once", () => {
  it("leaves the confidence and next-step lines to the bar and the Suggested line", () => {
    expect(reflectionBody("The plot is drawn.\nConfidence: 0.9\n**Next:** write the answer")).toBe("The plot is drawn.");
    expect(reflectionBody("Confidence: 0.9")).toBe("Confidence: 0.9"); // nothing else: kept
    const { r, host } = make();
    r.append([
      start,
      { type: "step_start", step: 1 },
      { type: "reflection", step: 1, reflection: "The plot is drawn.\nConfidence: 0.9\nNext: write the answer", confidence: 0.9, suggested_action: "write the answer", trigger: "periodic" },
    ]);
    const text = host.querySelector(".jb-reflection")?.textContent ?? "";
    expect(text.split("write the answer").length - 1).toBe(1);
    expect(text.split("0.9").length - 1).toBe(0); // shown once, as "confidence 90%"
    expect(text).toContain("confidence 90%");
  });
});

describe("a replayed turn's footer", () => {
  const end = (extra: Record<string, unknown>): AgentEvent =>
    ({ type: "turn_end", status: "completed", text: "done", steps: 1, cost_usd: 0, ...extra }) as AgentEvent;

  it("shows what the turn cost when it was recorded, marked replayed", () => {
    const { r, q } = make();
    r.append([{ ...start, provider: "replayed" }, end({ recorded: { input_tokens: 1234, output_tokens: 56, cost_usd: 0.0042, calls: 1 } })]);
    const footer = q(".jb-footer")?.textContent ?? "";
    expect(footer).toContain("replayed · recorded:");
    expect(footer).toContain("1,234");
    expect(footer).toContain("$0.0042");
    expect(footer).not.toContain("$0.0000");
  });

  it("shows a live turn's own figures, unmarked", () => {
    const { r, q } = make();
    r.append([start, end({ input_tokens: 1234, output_tokens: 56, cost_usd: 0.0042 })]);
    const footer = q(".jb-footer")?.textContent ?? "";
    expect(footer).not.toContain("replayed");
    expect(footer).toContain("$0.0042");
  });
});
