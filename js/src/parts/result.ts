// What a tool call returned, inside its row: the text (clipped, with "show all"), the
// figures (`images`) and the rich outputs of run_python (`outputs`: a DataFrame's HTML
// table, Markdown, displayed images). HTML and Markdown go through DOMPurify (via
// markdown.ts); images only as data:image URLs of raster types.
import { h } from "../dom";
import { safeImageUrl } from "../format";
import { renderMarkdown, sanitize } from "../markdown";
import type { EventOf } from "../protocol";
import { clipped } from "./args";

type Output = { mime_type?: string; data?: string; role?: string };

function outputEl(o: Output, name: string, index: number): HTMLElement | null {
  const data = typeof o.data === "string" ? o.data : "";
  if (!data) return null;
  switch (o.mime_type) {
    case "text/html": {
      const div = h("div", "jb-output jb-output-html");
      div.innerHTML = sanitize(data);
      return div;
    }
    case "text/markdown": {
      const div = h("div", "jb-output jb-md");
      div.innerHTML = renderMarkdown(data);
      return div;
    }
    case "image/png":
    case "image/jpeg": {
      const src = safeImageUrl(`data:${o.mime_type};base64,${data}`);
      return src ? h("img", { class: "jb-tool-image", src, alt: `output ${index + 1} of ${name}`, loading: "lazy" }) : null;
    }
    case "text/plain":
      return clipped(data, (s) => h("pre", "jb-output jb-output-text", s));
    default:
      return null;
  }
}

/** The result text without the `Out: …` repr when the value's rich form is shown instead. */
export function resultText(preview: string, hasRichValue: boolean): string {
  if (!hasRichValue) return preview;
  if (preview.startsWith("Out: ")) return "";
  const at = preview.lastIndexOf("\nOut: ");
  return at >= 0 ? preview.slice(0, at) : preview;
}

/** The result part of a finished call's row (error, text, figures, outputs, artifact). */
export function resultView(e: EventOf<"tool_call_end">): HTMLElement[] {
  const out: HTMLElement[] = [];
  if (e.error) out.push(clipped(e.error, (s) => h("pre", "jb-tool-error", s)));
  const outputs = (e.outputs ?? []) as Output[];
  const text = resultText(e.result_preview ?? "", outputs.some((o) => o.role === "value" && o.mime_type !== "text/plain"));
  if (text && text !== e.error) {
    out.push(h("div", "jb-tool-result", clipped(text, (s) => h("pre", "jb-tool-result-text", s))));
  }
  const rich = h("div", "jb-tool-outputs");
  for (const [i, src] of (e.images ?? []).map(safeImageUrl).entries()) {
    if (src !== null) rich.append(h("img", { class: "jb-tool-image", src, alt: `figure ${i + 1} from ${e.name}`, loading: "lazy" }));
  }
  outputs.forEach((o, i) => {
    const el = outputEl(o, e.name, i);
    if (el !== null) rich.append(el);
  });
  if (rich.childElementCount) out.push(rich);
  if (e.artifact) out.push(h("div", "jb-tool-artifact", "full output stored as ", h("code", "", e.artifact)));
  return out;
}
