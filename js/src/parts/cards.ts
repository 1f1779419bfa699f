// One-shot blocks: reflection cards, error cards, compaction and retry markers, the
// thinking-phase card and the refusal card.
import { h } from "../dom";
import { plural, retryText, tokens, TRIGGER_LABEL } from "../format";
import type { EventOf } from "../protocol";
import type { MarkdownFn } from "./text";

function markdownDiv(markdown: MarkdownFn, cls: string, src: string): HTMLDivElement {
  const div = h("div", `jb-md ${cls}`);
  div.innerHTML = markdown(src);
  return div;
}

// A reflection's "Confidence: 0.9" and "Next: …" lines (as widgets/_format.py reflection_body).
const FIELD_LINE = /^\s*(?:[-*>]\s+)?[*_]*(?:confidence|next|suggested action)[*_]*\s*[:=][^\n]*(?:\n|$)/gim;

/** The reflection's text without the lines its confidence and next step were read from: the
 *  card shows them once, as its bar and its "Suggested" line. */
export function reflectionBody(text: string): string {
  const body = text.replace(FIELD_LINE, "").trim();
  return body || text.trim();
}

export function reflectionCard(e: EventOf<"reflection">, markdown: MarkdownFn): HTMLElement {
  const trigger = TRIGGER_LABEL[e.trigger ?? "periodic"] ?? TRIGGER_LABEL.periodic;
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
    markdownDiv(markdown, "jb-card-body", reflectionBody(e.reflection)),
    e.suggested_action ? h("div", "jb-card-note", "Suggested: ", e.suggested_action) : null,
  );
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

/** A thinking phase between tool cycles: one folded line (strategy, tokens saved), its
 * insights and next action inside. */
export function thinkingPhaseCard(e: EventOf<"thinking_phase">): HTMLElement {
  const before = e.tokens_before ?? 0;
  const after = e.tokens_after ?? 0;
  const saved = Math.max(0, before - after);
  const calls = e.model_calls ? ` · ${plural(e.model_calls, "model call")} (${tokens(e.thinking_tokens ?? 0)} tokens)` : "";
  const head = before
    ? `Thinking phase (${e.strategy ?? ""}): ${tokens(saved)} tokens saved · history ${tokens(before)} → ${tokens(after)}${calls}`
    : `Thinking phase (${e.strategy ?? ""}) skipped`;
  const insights = e.insights ?? [];
  return h(
    "details",
    { class: "jb-card jb-thinking-phase", "data-strategy": e.strategy ?? "" },
    h("summary", "jb-card-title", head),
    insights.length ? h("ul", "jb-thinking-insights", ...insights.map((i) => h("li", "", i))) : null,
    e.next_actions ? h("div", "jb-card-note", "Next: ", e.next_actions) : null,
    e.fallback ? h("div", "jb-card-note jb-compaction-fallback", e.fallback) : null,
  );
}

/** A retried model call: what its failed attempt showed above is struck as discarded. */
export function retryMarker(e: EventOf<"retry">): HTMLElement {
  return h(
    "div",
    { class: "jb-retry", role: "status", "data-attempt": String(e.attempt) },
    h("span", "jb-retry-icon", "↻"),
    h("span", "jb-retry-text", retryText(e)),
    e.message ? h("span", "jb-card-note", ` · ${e.message}`) : null,
  );
}

/** The model declined: its reason (or a short note), as the turn's answer. */
export function refusalCard(e: EventOf<"turn_end">): HTMLElement {
  return h(
    "div",
    { class: "jb-card jb-refusal", role: "alert" },
    h("div", "jb-card-head", h("span", "jb-card-title", "⊘ Refused"), h("span", "jb-card-note", "the model declined to answer")),
    h("div", "jb-refusal-text", (e.text ?? "").trim() || "No reason was given."),
  );
}
