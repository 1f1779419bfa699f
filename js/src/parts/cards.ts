// One-shot blocks: reflection cards, strategy chips, error cards, compaction markers,
// the end-of-turn banner.
import { h } from "../dom";
import { duration, plural, STATUS_ICON, STATUS_LABEL, strategyText, tokens } from "../format";
import type { EventOf } from "../protocol";
import type { MarkdownFn } from "./text";

function markdownDiv(markdown: MarkdownFn, cls: string, src: string): HTMLDivElement {
  const div = h("div", `jb-md ${cls}`);
  div.innerHTML = markdown(src);
  return div;
}

export function reflectionCard(e: EventOf<"reflection">, markdown: MarkdownFn): HTMLElement {
  const trigger =
    e.trigger === "tool_error" ? "after a tool error" : e.trigger === "uncertainty" ? "on uncertainty" : "periodic";
  if (e.skipped) {
    return h(
      "div",
      { class: "jb-card jb-reflection jb-skipped", "data-trigger": e.trigger ?? "periodic" },
      h("span", "jb-card-title", "Reflection skipped"),
      h("span", "jb-card-note", ` (${trigger}): ${e.reflection}`),
    );
  }
  const confidence = Math.round((e.confidence ?? 0.7) * 100);
  const meter = h("span", "jb-confidence-bar");
  meter.append(h("span", { class: "jb-confidence-fill", style: `width:${Math.max(0, Math.min(100, confidence))}%` }));
  return h(
    "div",
    { class: "jb-card jb-reflection", "data-trigger": e.trigger ?? "periodic" },
    h(
      "div",
      "jb-card-head",
      h("span", "jb-card-title", "Reflection"),
      h("span", `jb-chip jb-chip-trigger jb-trigger-${e.trigger ?? "periodic"}`, trigger),
      h("span", "jb-confidence", meter, `confidence ${confidence}%`),
    ),
    markdownDiv(markdown, "jb-card-body", e.reflection),
    e.suggested_action ? h("div", "jb-card-note", "Suggested: ", e.suggested_action) : null,
  );
}

export function strategyRow(e: EventOf<"strategy_step">): HTMLElement {
  const kind = String(e.data.kind ?? "step");
  const [label, text] = strategyText(e.data);
  const row = h(
    "div",
    { class: `jb-sstep jb-kind-${kind.replace(/[^a-z_]/gi, "")}`, "data-kind": kind },
    h("span", `jb-chip jb-chip-${kind.replace(/[^a-z_]/gi, "")}`, label),
    h("span", "jb-sstep-text", text),
  );
  if (kind === "branch" && e.data.selected) row.classList.add("jb-selected");
  return row;
}

export function errorCard(e: EventOf<"error">): HTMLElement {
  const recoverable = e.recoverable ?? true;
  return h(
    "div",
    { class: `jb-card jb-error${recoverable ? "" : " jb-fatal"}`, role: "alert" },
    h("div", "jb-card-head", h("span", "jb-card-title", "⚠ Error"), h("code", "jb-error-kind", e.kind)),
    h("div", "jb-error-message", e.message),
    h(
      "div",
      "jb-card-note",
      recoverable
        ? "The agent continues."
        : "The turn stopped. The session keeps its history and is ready for the next cell.",
    ),
  );
}

export function compactionMarker(e: EventOf<"compaction">): HTMLElement {
  const msgs =
    e.messages_before || e.messages_after ? ` · ${e.messages_before ?? 0} → ${e.messages_after ?? 0} messages` : "";
  const budget = e.budget_tokens ? ` of a ${tokens(e.budget_tokens)} budget` : "";
  return h(
    "div",
    { class: "jb-compaction", "data-strategy": e.strategy },
    h(
      "span",
      "",
      `History compacted (${e.strategy}): ${tokens(e.tokens_before)} → ${tokens(e.tokens_after)} tokens${budget}${msgs}`,
      e.fallback ? h("span", "jb-compaction-fallback", ` · ${e.fallback}`) : null,
    ),
  );
}

export function turnEndBanner(e: EventOf<"turn_end">): HTMLElement {
  const parts = [plural(e.steps ?? 0, "step")];
  if (e.tool_calls) parts.push(plural(e.tool_calls, "tool call"));
  if (e.reflections) parts.push(plural(e.reflections, "reflection"));
  parts.push(duration(e.duration_ms ?? 0));
  return h(
    "div",
    { class: `jb-turn-end jb-status-${e.status}`, role: e.status === "completed" ? "status" : "alert" },
    h("span", "jb-turn-end-icon", STATUS_ICON[e.status] ?? "■"),
    h("span", "jb-turn-end-label", STATUS_LABEL[e.status] ?? e.status),
    h("span", "jb-turn-end-detail", parts.join(" · ")),
  );
}
