import type { AnyModel, Experimental, Host } from "@anywidget/types";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { compact } from "../src/compact";
import createWidget from "../src/index";
import type { AgentEvent, ModelState } from "../src/protocol";
import { MockModel, scriptedTurn, toBatches } from "./fixtures";

type Cleanup = void | (() => unknown);

function widgetFor(model: MockModel) {
  const widget = createWidget();
  const m = model as unknown as AnyModel<ModelState>;
  const experimental = { invoke: vi.fn() } as unknown as Experimental;
  const signal = new AbortController().signal;
  const host = {} as Host; // unused by this widget
  const init = widget.initialize({ model: m, signal, experimental }) as Cleanup;
  const views: HTMLElement[] = [];
  const render = () => {
    const el = document.createElement("div");
    const cleanup = widget.render({ model: m, el, signal, host, experimental }) as Cleanup;
    views.push(el);
    return { el, cleanup: cleanup as () => void };
  };
  return { init: init as () => void, render, views };
}

/** Feed the stream like the kernel: batches, with a transcript commit after each step end. */
function stream(model: MockModel, events: AgentEvent[], sizes: number[]) {
  for (const batch of toBatches(events, sizes)) {
    model.custom(batch);
    vi.advanceTimersByTime(20); // let throttled Markdown renders of the streaming block happen
    const done = events.slice(0, batch.end);
    if (batch.events.some((e) => e.type === "step_end" || e.type === "turn_end")) {
      model.commit({ transcript: compact(done), transcript_n: batch.end });
    }
  }
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.runOnlyPendingTimers();
  vi.useRealTimers();
});

describe("anywidget module", () => {
  it("listens from initialize(), so messages sent before render are shown", () => {
    const model = new MockModel();
    const w = widgetFor(model);
    expect(model.listeners("msg:custom")).toBe(1);
    const events = scriptedTurn();
    for (const b of toBatches(events, [1])) model.custom(b);
    const { el } = w.render();
    expect(el.querySelectorAll(".jb-tool")).toHaveLength(3);
    expect(el.querySelector(".jb-turn-end.jb-status-completed")).not.toBeNull();
    expect(el.querySelector(".jb-user-text")?.textContent?.trim()).toBe("Plot the data");
  });

  it("paints every view of a model from the shared buffer and keeps them in step", () => {
    const model = new MockModel();
    const w = widgetFor(model);
    const events = scriptedTurn();
    const half = Math.floor(events.length / 2);
    const a = w.render();
    stream(model, events.slice(0, half), [3]);
    const b = w.render();
    for (const batch of toBatches(events, [4], 0, half)) model.custom(batch);
    vi.runOnlyPendingTimers();
    expect(a.el.innerHTML).toBe(b.el.innerHTML);
    expect(a.el.querySelector(".jb-turn-end")).not.toBeNull();
  });

  it("replaying the durable transcript renders exactly what the live stream rendered", () => {
    const events = scriptedTurn();
    const renders: string[] = [];
    for (const sizes of [[1], [2, 7, 3], [1000]]) {
      const model = new MockModel();
      const w = widgetFor(model);
      const { el } = w.render();
      stream(model, events, sizes);
      vi.runOnlyPendingTimers();
      renders.push(el.innerHTML);
    }
    const replayed = new MockModel({ transcript: compact(events), transcript_n: events.length });
    const { el } = widgetFor(replayed).render();
    vi.runOnlyPendingTimers();
    expect(renders[0]).toBe(el.innerHTML);
    expect(renders[1]).toBe(el.innerHTML);
    expect(renders[2]).toBe(el.innerHTML);
    expect(el.querySelectorAll(".jb-step")).toHaveLength(2);
  });

  it("ignores a transcript commit that live batches already delivered (no repaint)", () => {
    const model = new MockModel();
    const w = widgetFor(model);
    const { el } = w.render();
    const events = scriptedTurn();
    const firstStepEnd = events.findIndex((e) => e.type === "step_end") + 1;
    for (const b of toBatches(events.slice(0, firstStepEnd), [5])) model.custom(b);
    const step = el.querySelector(".jb-step");
    model.commit({ transcript: compact(events.slice(0, firstStepEnd)), transcript_n: firstStepEnd });
    expect(el.querySelector(".jb-step")).toBe(step);
  });

  it("a model that joined mid-stream waits for the next commit, then catches up", () => {
    const events = scriptedTurn();
    const batches = toBatches(events, [4]);
    const model = new MockModel({ transcript: compact(events.slice(0, 8)), transcript_n: 8 });
    const w = widgetFor(model);
    const { el } = w.render();
    // Batches up to 16 were sent before this front-end connected; it sees the later ones.
    const later = batches.filter((b) => b.start >= 16);
    model.custom(later[0]);
    model.custom(later[1]);
    expect(el.querySelectorAll(".jb-tool")).toHaveLength(0);
    model.commit({ transcript: compact(events.slice(0, 20)), transcript_n: 20 });
    for (const b of later.slice(2)) model.custom(b);
    vi.runOnlyPendingTimers();
    const full = new MockModel({ transcript: compact(events), transcript_n: events.length });
    const ref = widgetFor(full).render();
    vi.runOnlyPendingTimers();
    expect(el.innerHTML).toBe(ref.el.innerHTML);
  });

  it("a new epoch (AgentView.replay/reset) replaces what every view shows", () => {
    const model = new MockModel();
    const w = widgetFor(model);
    const a = w.render();
    stream(model, scriptedTurn(), [5]);
    const b = w.render();
    model.commit({ epoch: 1, transcript: [], transcript_n: 0 });
    expect(a.el.querySelector(".jb-turn")).toBeNull();
    expect(b.el.querySelector(".jb-turn")).toBeNull();
    model.custom({ kind: "events", epoch: 0, start: 999, end: 1000, events: [] }); // stale epoch: ignored
    model.custom({
      kind: "events",
      epoch: 1,
      start: 0,
      end: 1,
      events: [{ type: "turn_start", user_message: "again" }],
    });
    expect(a.el.querySelector(".jb-user-text")?.textContent?.trim()).toBe("again");
    expect(b.el.querySelector(".jb-user-text")?.textContent?.trim()).toBe("again");
  });

  it("cleans up its listeners and views", () => {
    const model = new MockModel();
    const w = widgetFor(model);
    const v = w.render();
    v.cleanup();
    expect(v.el.children).toHaveLength(0);
    w.init();
    expect(model.listeners("msg:custom")).toBe(0);
    expect(model.listeners("change:transcript")).toBe(0);
  });
});

describe("kernel messages", () => {
  it("says ready when the model is created and routes approval clicks to the kernel", () => {
    const model = new MockModel();
    const { render } = widgetFor(model);
    expect(model.sent).toEqual([{ kind: "ready" }]); // before any view renders
    const { el } = render();
    expect(model.sent).toEqual([{ kind: "ready" }]);
    model.custom({
      kind: "events",
      epoch: 0,
      start: 0,
      end: 2,
      events: [
        { type: "turn_start", user_message: "write it" },
        { type: "approval_request", step: 1, call_id: "w1", name: "write_file", effect: "write", arguments: { path: "a.txt" } },
      ],
    });
    (el.querySelector(".jb-deny") as HTMLButtonElement).click();
    expect(model.sent).toEqual([{ kind: "ready" }, { kind: "approval", call_id: "w1", approved: false }]);
  });
});
