import { describe, expect, it } from "vitest";
import { renderMarkdown } from "../src/markdown";

function dom(html: string): HTMLElement {
  const div = document.createElement("div");
  div.innerHTML = html;
  return div;
}

describe("renderMarkdown", () => {
  it("renders Markdown", () => {
    const d = dom(renderMarkdown("# Title\n\nSome **bold** and `code`.\n\n- a\n- b"));
    expect(d.querySelector("h1")?.textContent).toBe("Title");
    expect(d.querySelector("strong")?.textContent).toBe("bold");
    expect(d.querySelectorAll("li")).toHaveLength(2);
  });

  it("removes script tags", () => {
    const html = renderMarkdown("hello <script>window.pwned = 1</script> world\n\n<script src=x></script>");
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toContain("pwned");
    expect(dom(html).textContent).toContain("hello");
  });

  it("removes event-handler attributes", () => {
    const html = renderMarkdown('<img src="x" onerror="alert(1)"> <div onclick="alert(2)" onmouseover="x()">hi</div>');
    const d = dom(html);
    expect(html).not.toMatch(/onerror|onclick|onmouseover|alert/i);
    expect(d.querySelector("img")).not.toBeNull();
    for (const el of d.querySelectorAll("*")) {
      for (const attr of el.getAttributeNames()) expect(attr.startsWith("on")).toBe(false);
    }
  });

  it("removes javascript: URLs, in Markdown and raw HTML links", () => {
    const html = renderMarkdown(
      '[click](javascript:alert(1)) <a href="javascript:alert(2)">x</a> <a href=" JaVaScRiPt:alert(3)">y</a> [ok](https://example.org)',
    );
    const hrefs = [...dom(html).querySelectorAll("a")].map((a) => a.getAttribute("href") ?? "");
    expect(hrefs.some((h) => /javascript:/i.test(h))).toBe(false);
    expect(hrefs).toContain("https://example.org");
  });

  it("drops style and form markup that could take over the page", () => {
    const html = renderMarkdown(
      '<style>body{display:none}</style><form action="/x"><input name=a><button>go</button></form><p style="position:fixed">p</p><iframe src="https://x"></iframe>',
    );
    expect(html).not.toMatch(/<style|<form|<input|<button|<iframe|position:fixed/i);
  });

  it("opens links in a new tab without an opener", () => {
    const a = dom(renderMarkdown("[site](https://example.org)")).querySelector("a")!;
    expect(a.getAttribute("target")).toBe("_blank");
    expect(a.getAttribute("rel")).toBe("noopener noreferrer");
  });

  it("highlights code blocks of known languages and escapes the rest", () => {
    const d = dom(renderMarkdown("```python\ndef f(x):\n    return 'a'\n```\n\n```weird\n<b>raw</b>\n```"));
    const blocks = d.querySelectorAll("pre code");
    expect(blocks).toHaveLength(2);
    expect(blocks[0].classList.contains("language-python")).toBe(true);
    expect(blocks[0].querySelector(".hljs-keyword")?.textContent).toBe("def");
    expect(blocks[1].querySelector("b")).toBeNull();
    expect(blocks[1].textContent).toContain("<b>raw</b>");
  });
});
