// Tiny DOM helpers: every node is built with textContent, never innerHTML, except the
// sanitized Markdown output.
type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> | string = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (typeof attrs === "string") {
    if (attrs) el.className = attrs;
  } else {
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "class") el.className = v;
      else el.setAttribute(k, v);
    }
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return el;
}

export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}
