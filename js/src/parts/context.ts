// What fed a turn besides the user's message: recalled memories, the context pack's
// passages (folded), a provider fallback, and the answer's sources. All of it is model- or
// file-derived text, so it reaches the DOM as text nodes; only plain http(s) addresses
// become links (new tab, rel=noopener noreferrer).
import { h } from "../dom";
import type { EventOf } from "../protocol";

const str = (v: unknown) => (v === undefined || v === null ? "" : String(v));

function score(v: unknown): HTMLElement | null {
  const n = Number(v);
  return v === undefined || v === null || !Number.isFinite(n) ? null : h("span", "jb-ctx-score", n.toFixed(2));
}

/** "Memories used": one line each (text, source, score), folded after the turn like the rest. */
export function memoryCard(e: EventOf<"memory_recall">): HTMLElement | null {
  const memories = e.memories ?? [];
  if (memories.length === 0) return null;
  return h(
    "details",
    { class: "jb-card jb-memory", open: "" },
    h("summary", "jb-card-title", `Memories used (${memories.length})`),
    h(
      "ul",
      "jb-ctx-list",
      ...memories.map((m) =>
        h("li", "", h("span", "jb-ctx-text", str(m.text)), m.source ? h("span", "jb-card-note", ` · ${str(m.source)}`) : null, score(m.score)),
      ),
    ),
  );
}

/** The context pack's passages, each under its anchor; folded (they can be long). */
export function contextPackCard(e: EventOf<"context_pack">): HTMLElement | null {
  const passages = e.passages ?? [];
  if (passages.length === 0) return null;
  return h(
    "details",
    "jb-card jb-context-pack",
    h("summary", "jb-card-title", `Context: ${passages.length} passage${passages.length === 1 ? "" : "s"} from the workspace`),
    ...passages.map((p) =>
      h(
        "div",
        "jb-passage",
        h("div", "jb-passage-head", h("code", "jb-anchor", str(p.anchor)), score(p.score)),
        h("pre", "jb-passage-text", str(p.text)),
      ),
    ),
  );
}

/** "anthropic failed (overloaded) — continued with openai:gpt-4o". */
export function fallbackLine(e: EventOf<"provider_fallback">): HTMLElement {
  const why = e.kind && e.kind !== "other" ? ` (${e.kind})` : "";
  return h(
    "div",
    { class: "jb-fallback", role: "status", title: e.message ?? "" },
    h("span", "jb-fallback-icon", "⇢"),
    `${e.failed} failed${why} — continued with ${e.next}`,
  );
}

/** A web citation's address as a link, only when it is a plain http(s) URL. */
export function safeHttpUrl(url: unknown): string | null {
  if (typeof url !== "string" || !/^https?:\/\/[^\s<>"']+$/i.test(url.trim())) return null;
  try {
    const u = new URL(url.trim());
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
  } catch {
    return null;
  }
}

/** The "Sources" list under the answer: workspace anchors, then web pages. */
export function sourcesList(e: EventOf<"citations">): HTMLElement | null {
  const items: HTMLElement[] = (e.local ?? []).map((a) => h("li", "jb-source-local", h("code", "jb-anchor", a)));
  for (const w of e.web ?? []) {
    const href = safeHttpUrl(w.url);
    const title = str(w.title).trim() || str(w.url);
    items.push(
      h(
        "li",
        "jb-source-web",
        href ? h("a", { href, target: "_blank", rel: "noopener noreferrer" }, title) : h("span", "", title),
      ),
    );
  }
  if (items.length === 0) return null;
  return h("div", "jb-sources", h("div", "jb-sources-title", "Sources"), h("ul", "jb-ctx-list", ...items));
}
