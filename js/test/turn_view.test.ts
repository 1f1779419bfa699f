// A finished turn's output bundle (jupyter_brain/widgets/turn_bundle.py), drawn without a
// widget: the figure's bytes come back from the Markdown fallback, where they are stored once.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AgentEvent } from "../src/protocol";
import { markdownImages, renderTurn, resolveImages, type TurnBundle } from "../src/turn_view";

const PNG = "iVBORw0KGgoAAAANSUhEUg==";
const JPEG = "/9j/4AAQSkZJRg==";
const MARKDOWN = [
  "### Agent — Turn 1",
  "**March** fell from <span>&#36;</span>135 to <span>&#36;</span>90.",
  `![figure 1 from run_python](data:image/png;base64,${PNG})`,
  `![output of run_python](data:image/jpeg;base64,${JPEG})`,
].join("\n\n");

function turn(): AgentEvent[] {
  return [
    { type: "turn_start", session_id: "s", user_message: "Plot it", provider: "scripted", model: "m", think_level: "off", strategy: "none", max_steps: 6 },
    { type: "step_start", step: 1 },
    { type: "tool_call_start", step: 1, call_id: "c1", name: "run_python" },
    { type: "tool_call_args", step: 1, call_id: "c1", name: "run_python", arguments: { code: "plot()" }, wave: 0 },
    {
      type: "tool_call_end", step: 1, call_id: "c1", name: "run_python", status: "ok", duration_ms: 10,
      images: ["markdown-image:0", "markdown-image:7"],
      outputs: [
        { mime_type: "image/jpeg", data: "", markdown_image: 1, role: "display" },
        { mime_type: "text/html", data: "<table><tr><td>120</td></tr></table>", role: "value" },
      ],
    } as unknown as AgentEvent,
    { type: "step_end", step: 1 },
    { type: "step_start", step: 2 },
    { type: "text_delta", step: 2, text: "**March** fell from $135 to $90." },
    { type: "step_end", step: 2 },
    { type: "turn_end", status: "completed", text: "", steps: 2, tool_calls: 1, reflections: 0, duration_ms: 900, cost_usd: 0 },
  ];
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("finished turn bundle", () => {
  it("finds the Markdown's inline images in order", () => {
    expect(markdownImages(MARKDOWN)).toEqual([{ mime: "image/png", data: PNG }, { mime: "image/jpeg", data: JPEG }]);
    expect(markdownImages("no images, ![a link](https://example.com/x.png)")).toEqual([]);
  });

  it("puts the figures' bytes back where the transcript points at them", () => {
    const events = turn();
    const resolved = resolveImages(events, MARKDOWN);
    const end = resolved[4] as unknown as { images: string[]; outputs: Record<string, unknown>[] };
    expect(end.images).toEqual([`data:image/png;base64,${PNG}`, ""]); // an unknown reference: no image
    expect(end.outputs[0]).toEqual({ mime_type: "image/jpeg", data: JPEG, role: "display" });
    expect(end.outputs[1].data).toContain("<td>120</td>");
    expect(resolved[0]).toBe(events[0]); // entries without images are passed through
    expect((events[4] as unknown as { images: string[] }).images[0]).toBe("markdown-image:0"); // the input is not changed
  });

  it("draws the turn as the live view does, answer first, steps folded, figures shown", () => {
    const host = document.createElement("div");
    const bundle: TurnBundle = { version: 1, fold: "auto", status: "completed", transcript: turn() };
    const view = renderTurn(host, bundle, MARKDOWN);
    vi.runAllTimers(); // a repaint goes in slices
    expect(host.querySelector(".jb-answer")?.textContent).toContain("March fell from $135 to $90.");
    expect((host.querySelector("details.jb-process") as HTMLDetailsElement).open).toBe(false);
    const figures = [`data:image/png;base64,${PNG}`, `data:image/jpeg;base64,${JPEG}`];
    // "Plot it": the figures show with the answer, above the fold (#40), and stay in their tool row.
    const srcs = (sel: string) => [...host.querySelectorAll(sel)].map((i) => i.getAttribute("src"));
    expect(srcs(".jb-answer img")).toEqual(figures);
    expect(srcs(".jb-process img")).toEqual(figures);
    expect(host.querySelector("td")?.textContent).toBe("120");
    expect(host.querySelector(".jb-approval")).toBeNull();
    view.dispose();
  });

  it("leaves the figures in their step when neither the prompt nor the answer asks for one", () => {
    const host = document.createElement("div");
    const events = turn();
    (events[0] as { user_message: string }).user_message = "Which month fell?";
    renderTurn(host, { version: 1, fold: "auto", transcript: events }, MARKDOWN);
    vi.runAllTimers();
    expect(host.querySelectorAll(".jb-answer img").length).toBe(0);
    expect(host.querySelectorAll(".jb-process img").length).toBe(2);
  });

  it("keeps the steps open with fold 'never'", () => {
    const host = document.createElement("div");
    renderTurn(host, { version: 1, fold: "never", transcript: turn() }, MARKDOWN);
    vi.runAllTimers();
    expect((host.querySelector("details.jb-process") as HTMLDetailsElement).open).toBe(true);
  });
});

describe("the header of a turn", () => {
  function header(events: AgentEvent[]): HTMLElement {
    const host = document.createElement("div");
    renderTurn(host, { version: 1, fold: "auto", status: "completed", transcript: events }, "");
    vi.runAllTimers();
    return host.querySelector(".jb-header") as HTMLElement;
  }
  const visible = (el: Element | null) => el !== null && !(el as HTMLElement).hidden;

  it("numbers the turn in its session and names the provider and model", () => {
    const [start, ...rest] = turn();
    const h = header([{ ...start, turn_number: 3 } as AgentEvent, ...rest]);
    expect(h.querySelector(".jb-h-turn")?.textContent).toBe("Turn 3");
    expect(h.querySelector(".jb-h-model")?.textContent).toBe("scripted / m");
    expect(visible(h.querySelector(".jb-h-replayed"))).toBe(false);
  });

  it("says a turn was replayed, naming the model that recorded it once", () => {
    const [start, ...rest] = turn();
    const h = header([{ ...start, provider: "replayed", model: "claude-x" } as AgentEvent, ...rest]);
    expect(h.querySelector(".jb-h-model")?.textContent).toBe("claude-x");
    expect(visible(h.querySelector(".jb-h-replayed"))).toBe(true);
    expect(h.querySelector(".jb-h-replayed")?.textContent).toBe("replayed");
    expect(h.textContent?.match(/replayed/g)?.length).toBe(1);
    expect(h.querySelector(".jb-h-turn")?.textContent).toBe(""); // no number known: none shown
  });

  it("says where a replay went live, and why on hover", () => {
    const [start, ...rest] = turn();
    const why = "the recording of this cell no longer matches at step 2: the result of tool call 1 (run_python) changed";
    const fallback = { type: "provider_fallback", step: 2, failed: "replayed:claude-x", next: "anthropic:claude-x", kind: "changed", message: why };
    const h = header([{ ...start, provider: "replayed", model: "claude-x" } as AgentEvent, rest[0], fallback as AgentEvent, ...rest.slice(1)]);
    const chip = h.querySelector(".jb-h-replayed") as HTMLElement;
    expect(chip.textContent).toBe("live from step 2");
    expect(chip.title).toBe(why);
    expect(h.querySelector(".jb-h-model")?.textContent).toBe("anthropic / claude-x");
  });
});
