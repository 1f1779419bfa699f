// Markdown → sanitized HTML: marked parses, highlight.js colours code (core + a few
// languages, to keep the bundle small), DOMPurify removes anything executable.
import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import diff from "highlight.js/lib/languages/diff";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import { Marked, type Tokens } from "marked";

const LANGUAGES = { bash, diff, javascript, json, markdown, python, shell, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, lang);
hljs.registerAliases(["py", "ipython", "python3"], { languageName: "python" });
hljs.registerAliases(["sh", "zsh"], { languageName: "bash" });
hljs.registerAliases(["console"], { languageName: "shell" });

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const marked = new Marked({
  gfm: true,
  renderer: {
    code({ text, lang }: Tokens.Code): string {
      const name = (lang ?? "").match(/^\S*/)?.[0]?.toLowerCase() ?? "";
      const known = name !== "" && hljs.getLanguage(name) !== undefined;
      const body = known ? hljs.highlight(text, { language: name, ignoreIllegals: true }).value : escapeHtml(text);
      const cls = known ? ` class="hljs language-${escapeHtml(name)}"` : "";
      return `<pre class="jb-code"><code${cls}>${body}\n</code></pre>\n`;
    },
  },
});

const purify = DOMPurify();
// Markup that could restyle or overlay the page, or post forms, has no place in an answer.
const PURIFY_CONFIG = {
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "option", "dialog"],
  FORBID_ATTR: ["style"],
  ALLOW_DATA_ATTR: false,
};
purify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.getAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

export function sanitize(html: string): string {
  return purify.sanitize(html, PURIFY_CONFIG) as string;
}

export function renderMarkdown(src: string): string {
  return sanitize(marked.parse(src, { async: false }) as string);
}

/** Python source as highlighted HTML (highlight.js escapes the text it does not colour). */
export function highlightPython(code: string): string {
  return hljs.highlight(code, { language: "python", ignoreIllegals: true }).value;
}

/** The first Markdown render of a page compiles marked's, DOMPurify's and highlight.js's
 *  regexes and code (tens of ms, more on a busy machine). Do that ahead, one library per
 *  task while the page is idle, so the first streamed answer does not pay it in one task. */
let warmed = false;

export function warmUp(): void {
  if (warmed) return;
  warmed = true;
  const later = (fn: () => void) =>
    typeof requestIdleCallback === "function" ? requestIdleCallback(() => fn(), { timeout: 500 }) : setTimeout(fn, 0);
  const steps = [
    () => marked.parse("# a\n\n**b** _c_ `d` [e](https://f.org)\n\n- g\n\n> h\n\n| i | j |\n|---|---|\n| k | l |\n", { async: false }),
    () => sanitize('<p><a href="https://f.org">a</a> <strong>b</strong></p><pre><code>c</code></pre>'),
    () => highlightPython("def f(x):\n    return [x * 2 for x in range(3)]  # c\n"),
  ];
  const next = (): void => {
    const step = steps.shift();
    if (step === undefined) return;
    try {
      step();
    } catch {
      // Only a warm-up: the real render reports its own errors.
    }
    later(next);
  };
  later(next);
}
