// MCP on the tool timeline: a tool's progress on its row, server log lines folded under
// their step, a sampling request's approval card under the tool call waiting for it.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { compact } from "../src/compact";
import type { AgentEvent } from "../src/protocol";
import { AgentRenderer } from "../src/renderer";

const start: AgentEvent = { type: "turn_start", session_id: "s", user_message: "go", provider: "p", model: "m", ts: 1 };
const call: AgentEvent[] = [
  { type: "step_start", step: 1 },
  { type: "tool_call_start", step: 1, call_id: "c1", name: "everything__slow" },
  { type: "tool_call_args", step: 1, call_id: "c1", name: "everything__slow", arguments: { steps: 5 }, wave: 1 },
];

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

function make(send?: (m: unknown) => void) {
  const host = document.createElement("div");
  // (fake timers: the clock stands still, so each append paints in one slice)
  const r = new AgentRenderer(host, send ? { send } : {});
  return { r, q: (sel: string) => host.querySelector(sel) as HTMLElement | null, all: (sel: string) => [...host.querySelectorAll(sel)] as HTMLElement[] };
}

describe("tool progress", () => {
  it("shows the latest notification on its row, with a bar when the total is known, gone at the end", () => {
    const { r, q } = make();
    r.append([start, ...call, { type: "tool_progress", step: 1, call_id: "c1", progress: 1, total: 5 }]);
    expect(q('.jb-tool[data-call-id="c1"] .jb-progress-text')?.textContent).toBe("1/5");
    r.append([{ type: "tool_progress", step: 1, call_id: "c1", progress: 3, total: 5, message: "<b>indexing</b>" }]);
    expect(q(".jb-progress-text")?.textContent).toBe("3/5 · <b>indexing</b>"); // server text stays text
    expect(q(".jb-progress-fill")?.style.width).toBe("60%");
    expect(q(".jb-progress-bar")?.hidden).toBe(false);
    r.append([{ type: "tool_progress", step: 1, call_id: "c1", progress: 7 }]);
    expect(q(".jb-progress-text")?.textContent).toBe("7");
    expect(q(".jb-progress-bar")?.hidden).toBe(true);
    r.append([{ type: "tool_call_end", step: 1, call_id: "c1", name: "everything__slow", status: "ok", duration_ms: 900, wave: 1 }]);
    expect(q(".jb-tool-progress")).toBeNull();
    // a notification after the end changes nothing
    r.append([{ type: "tool_progress", step: 1, call_id: "c1", progress: 8, total: 10 }]);
    expect(q(".jb-tool-progress")).toBeNull();
  });

  it("a run of one call's notifications compacts to the latest, another call's stays", () => {
    const events = compact([
      { type: "tool_progress", step: 1, call_id: "a", progress: 1, total: 3 },
      { type: "tool_progress", step: 1, call_id: "a", progress: 2, total: 3 },
      { type: "tool_progress", step: 1, call_id: "b", progress: 1 },
      { type: "tool_progress", step: 1, call_id: "a", progress: 3, total: 3 },
    ]);
    expect(events.map((e) => (e.type === "tool_progress" ? `${e.call_id}${e.progress}` : e.type))).toEqual(["a2", "b1", "a3"]);
  });
});

describe("a call the turn gave up", () => {
  it("says interrupted, without a duration it never measured", () => {
    const { r, q } = make();
    r.append([start, ...call, { type: "tool_progress", step: 1, call_id: "c1", progress: 1, total: 2, message: "started" }]);
    r.append([{ type: "tool_call_end", step: 1, call_id: "c1", name: "everything__slow", status: "interrupted", error: "the turn ended" }]);
    expect(q(".jb-tool-meta")?.textContent).toBe("interrupted");
    expect(q(".jb-tool-progress")).toBeNull();
  });
});

describe("server log", () => {
  it("folds a step's lines under one closed summary that counts warnings", () => {
    const { r, q, all } = make();
    r.append([start, ...call,
      { type: "server_log", step: 1, call_id: "c1", server: "everything", level: "info", message: "started" },
      { type: "server_log", step: 1, server: "everything", level: "warning", logger: "db", message: "slow disk" }]);
    const box = q("details.jb-server-log") as HTMLDetailsElement;
    expect(box.open).toBe(false);
    expect(q(".jb-server-log-summary")?.textContent).toBe("MCP server log (everything) · 2 lines · 1 warning or worse");
    expect(all(".jb-log-line").map((l) => l.textContent)).toEqual(["everything info: started", "everything (db) warning: slow disk"]);
    expect(all(".jb-log-warning")).toHaveLength(1);
    expect(all("details.jb-server-log")).toHaveLength(1);
  });
});

describe("sampling approval", () => {
  it("puts the card under the waiting tool's row, keeps its arguments, and a denial leaves it running", () => {
    const sent: unknown[] = [];
    const { r, q, all } = make((m) => sent.push(m));
    r.append([start, ...call, {
      type: "approval_request", step: 1, call_id: "c1~sampling1", name: "everything sampling", effect: "sampling",
      arguments: { server: "everything", messages: [{ role: "user", text: "say hi" }], max_tokens: 20 },
      preview: { parent_call_id: "c1", summary: "a model completion the server asks for" }, timeout_s: 300,
    }]);
    const row = q('.jb-tool[data-call-id="c1"]') as HTMLElement;
    expect(row.querySelector(".jb-approval")).not.toBeNull();
    expect(all(".jb-tool")).toHaveLength(1); // no row of its own
    expect(row.classList.contains("jb-tool-has-approval")).toBe(false); // the tool's own arguments stay shown
    expect(row.querySelector(".jb-tool-meta")?.textContent).toBe("waiting for approval…");
    (row.querySelector(".jb-deny") as HTMLButtonElement).click();
    expect(sent).toEqual([{ kind: "approval", call_id: "c1~sampling1", approved: false }]);
    r.append([{ type: "approval_decision", step: 1, call_id: "c1~sampling1", approved: false, by: "user", channel: "widget" }]);
    expect(row.querySelector(".jb-tool-meta")?.textContent).toBe("running…");
  });
});

describe("elicitation card", () => {
  const form = {
    mode: "form", server: "everything", message: "Please provide inputs:", required: ["name"],
    fields: {
      name: { type: "string", title: "Name", description: "<i>legal</i> name" },
      check: { type: "boolean", title: "Agree" },
      integer: { type: "integer", title: "Integer", default: 42 },
      hero: { type: "string", oneOf: [{ const: "hero-1", title: "Superman" }, { const: "hero-2", title: "Wonder Woman" }], default: "hero-1" },
      fish: { type: "array", items: { anyOf: [{ const: "f1", title: "Tuna" }, { const: "f2", title: "Salmon" }] }, default: ["f1"] },
    },
  };
  const ask = (preview: Record<string, unknown>): AgentEvent => ({
    type: "approval_request", step: 1, call_id: "c1~elicitation1", name: "everything asks", effect: "elicitation",
    arguments: { message: "m" }, preview: { parent_call_id: "c1", ...preview }, timeout_s: 300,
  });

  it("shows the schema's fields under the waiting row and sends the typed values on Accept", () => {
    const sent: unknown[] = [];
    const { r, q } = make((m) => sent.push(m));
    r.append([start, ...call, ask({ elicitation: form })]);
    const card = q('.jb-tool[data-call-id="c1"] .jb-elicitation') as HTMLElement;
    expect(card.querySelector(".jb-elicit-message")?.textContent).toBe("Please provide inputs:");
    expect([...card.querySelectorAll(".jb-btn")].map((b) => b.textContent)).toEqual(["Accept", "Decline", "Cancel"]);
    expect(card.querySelector(".jb-elicit-help")?.textContent).toBe("<i>legal</i> name"); // text, not HTML
    (card.querySelector('input[name="name"]') as HTMLInputElement).value = "Ada";
    (card.querySelector('input[name="check"]') as HTMLInputElement).checked = true;
    expect((card.querySelector('select[name="hero"]') as HTMLSelectElement).selectedOptions[0].textContent).toBe("Superman");
    (card.querySelector(".jb-approve") as HTMLButtonElement).click();
    expect(sent).toEqual([{ kind: "elicitation", call_id: "c1~elicitation1", action: "accept",
      content: { name: "Ada", check: true, integer: 42, hero: "hero-1", fish: ["f1"] } }]);
    r.append([{ type: "approval_decision", step: 1, call_id: "c1~elicitation1", approved: true, by: "user",
      channel: "widget", action: "accept" }]);
    expect(card.querySelector(".jb-card-title")?.textContent).toBe("✓ Accepted");
    expect(card.querySelector(".jb-btn")).toBeNull();
  });

  it("a URL request is a link card naming the server; Cancel sends cancel", () => {
    const sent: unknown[] = [];
    const { r, q } = make((m) => sent.push(m));
    r.append([start, ...call, ask({ elicitation: { mode: "url", server: "everything", message: "Sign in.", url: "https://example.org/x" } })]);
    const card = q(".jb-elicitation") as HTMLElement;
    expect(card.textContent).toContain("The MCP server 'everything' asks you to open this link");
    const link = card.querySelector("a") as HTMLAnchorElement;
    expect([link.href, link.rel, link.target]).toEqual(["https://example.org/x", "noopener noreferrer", "_blank"]);
    (card.querySelector(".jb-cancel") as HTMLButtonElement).click();
    expect(sent).toEqual([{ kind: "elicitation", call_id: "c1~elicitation1", action: "cancel" }]);
  });

  it("never makes a link of a non-web URL", () => {
    const { r, q } = make(() => undefined);
    r.append([start, ...call, ask({ elicitation: { mode: "url", server: "s", message: "m", url: "javascript:alert(1)" } })]);
    expect(q(".jb-elicitation a")).toBeNull();
    expect(q(".jb-elicit-url code")?.textContent).toBe("javascript:alert(1)");
  });
});
