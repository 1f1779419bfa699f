// A tool call's arguments by kind, so a reader sees what the call does, not its JSON:
// code (run_python) as highlighted Python, file writes as a diff (edit_file) or the new
// content (write_file), anything else as a compact key/value list. Long values are
// clipped with a "show all" button. Model-written values only reach the DOM as text, or
// through highlight.js (which escapes what it does not colour).
import { h, setText } from "../dom";
import { highlightPython } from "../markdown";

/** Values longer than this (characters or lines) are clipped until "show all". */
export const CLIP_CHARS = 600;
export const CLIP_LINES = 12;

export type ArgsKind = "python" | "write" | "edit" | "kv" | "raw";

function asObject(value: unknown): Record<string, unknown> | null {
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

const str = (v: unknown): v is string => typeof v === "string";

/** Which rendering a call's arguments get (by tool name and argument names). */
export function argsKind(name: string, args: unknown): ArgsKind {
  const o = asObject(args);
  if (o === null) return args === undefined || args === null || args === "" ? "kv" : "raw";
  if (str(o.code) && (/python|exec|code/i.test(name) || Object.keys(o).length === 1)) return "python";
  if (str(o.path) && str(o.old) && str(o.new)) return "edit";
  if (str(o.path) && str(o.content) && /write|create|save/i.test(name)) return "write";
  return "kv";
}

/** `text`, clipped to CLIP_LINES lines / CLIP_CHARS characters, with "show all". The
 *  full text is rendered by `render` (called again with the whole text on click). */
export function clipped(text: string, render: (shown: string) => HTMLElement, what = "lines"): HTMLElement {
  const lines = text.split("\n");
  const long = lines.length > CLIP_LINES || text.length > CLIP_CHARS;
  if (!long) return render(text);
  let head = lines.slice(0, CLIP_LINES).join("\n");
  if (head.length > CLIP_CHARS) head = head.slice(0, CLIP_CHARS);
  const box = h("div", "jb-clip jb-clipped");
  const more = lines.length > CLIP_LINES ? `${lines.length} ${what}` : `${text.length.toLocaleString("en-US")} characters`;
  const button = h("button", { class: "jb-show-all", type: "button", "aria-expanded": "false" }, `show all (${more})`);
  let body = render(`${head}…`);
  box.append(body, button);
  button.addEventListener("click", () => {
    const open = box.classList.toggle("jb-clipped");
    const next = render(open ? `${head}…` : text);
    body.replaceWith(next);
    body = next;
    button.setAttribute("aria-expanded", String(!open));
    setText(button, open ? `show all (${more})` : "show less");
  });
  return box;
}

export function pythonBlock(code: string): HTMLElement {
  const codeEl = h("code", "hljs language-python");
  codeEl.innerHTML = highlightPython(code);
  return h("pre", "jb-code jb-tool-code", codeEl);
}

/** A unified diff's lines, coloured by their first character (text nodes only). */
export function diffView(diff: string): HTMLElement {
  const pre = h("pre", "jb-diff");
  for (const line of diff.replace(/\n$/, "").split("\n")) {
    const cls = line.startsWith("+++") || line.startsWith("---")
      ? "jb-diff-file"
      : line.startsWith("@@")
        ? "jb-diff-hunk"
        : line.startsWith("+")
          ? "jb-diff-add"
          : line.startsWith("-")
            ? "jb-diff-del"
            : "jb-diff-ctx";
    pre.append(h("span", cls, `${line}\n`));
  }
  return pre;
}

/** old → new as diff lines: the common head and tail as context (3 lines), the rest -/+. */
export function lineDiff(oldText: string, newText: string): string {
  const a = oldText.split("\n");
  const b = newText.split("\n");
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const ctx = 3;
  const out = [
    ...a.slice(Math.max(0, start - ctx), start).map((l) => ` ${l}`),
    ...a.slice(start, endA).map((l) => `-${l}`),
    ...b.slice(start, endB).map((l) => `+${l}`),
    ...a.slice(endA, Math.min(a.length, endA + ctx)).map((l) => ` ${l}`),
  ];
  return out.join("\n");
}

function compactValue(v: unknown): string {
  if (typeof v === "string") return v;
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

function kvList(o: Record<string, unknown>): HTMLElement {
  const dl = h("dl", "jb-kv");
  for (const [k, v] of Object.entries(o)) {
    const text = compactValue(v);
    dl.append(h("dt", "", k), h("dd", "", clipped(text, (s) => h("span", "jb-kv-value", s))));
  }
  return dl;
}

function pathLine(path: string, note: string): HTMLElement {
  return h("div", "jb-args-path", h("code", "", path), note ? h("span", "jb-card-note", ` ${note}`) : null);
}

/** The rendered arguments of one call (empty element when there are none). */
export function renderArgs(name: string, args: unknown): HTMLElement {
  const kind = argsKind(name, args);
  const o = asObject(args) ?? {};
  const box = h("div", { class: `jb-tool-args jb-args-${kind}` });
  if (kind === "python") {
    box.append(clipped(o.code as string, pythonBlock));
    const rest = Object.fromEntries(Object.entries(o).filter(([k]) => k !== "code"));
    if (Object.keys(rest).length) box.append(kvList(rest));
  } else if (kind === "edit") {
    box.append(pathLine(o.path as string, "edit"), clipped(lineDiff(o.old as string, o.new as string), diffView));
  } else if (kind === "write") {
    const content = o.content as string;
    const body = (s: string) =>
      /\.py$/i.test(o.path as string) ? pythonBlock(s) : diffView(s.split("\n").map((l) => `+${l}`).join("\n"));
    const lines = content.split("\n").length;
    box.append(pathLine(o.path as string, `new content · ${lines} line${lines === 1 ? "" : "s"}`), clipped(content, body));
  } else if (kind === "raw") {
    box.append(clipped(String(args), (s) => h("pre", "", s)));
  } else if (Object.keys(o).length) {
    box.append(kvList(o));
  }
  return box;
}

/** The value of `"key": "…` in partial JSON, decoded as far as it goes (for live code). */
export function partialJsonString(src: string, key: string): string | null {
  const m = new RegExp(`"${key}"\\s*:\\s*"`).exec(src);
  if (m === null) return null;
  let out = "";
  for (let i = m.index + m[0].length; i < src.length; i++) {
    const c = src[i];
    if (c === '"') return out;
    if (c !== "\\") {
      out += c;
      continue;
    }
    const n = src[i + 1];
    if (n === undefined) break;
    const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f", '"': '"', "\\": "\\", "/": "/" };
    if (n in simple) {
      out += simple[n];
      i++;
    } else if (n === "u" && i + 5 < src.length) {
      out += String.fromCharCode(parseInt(src.slice(i + 2, i + 6), 16) || 0xfffd);
      i += 5;
    } else {
      break;
    }
  }
  return out;
}
