// A thinking block: open while it streams, collapsed when ThinkingEnd arrives.
import { h, setText } from "../dom";

export class ThinkingBlock {
  readonly el: HTMLDetailsElement;
  private readonly summary: HTMLElement;
  private readonly body: Text;
  private chars = 0;
  ended = false;

  constructor() {
    this.summary = h("summary", "jb-thinking-summary", "Thinking…");
    this.body = document.createTextNode("");
    this.el = h("details", "jb-thinking jb-streaming", this.summary, h("div", "jb-thinking-text", this.body));
    this.el.open = true;
  }

  append(delta: string): void {
    this.body.appendData(delta);
    this.chars += delta.length;
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.el.open = false;
    this.el.classList.remove("jb-streaming");
    const words = this.body.data.trim().split(/\s+/).filter(Boolean).length;
    setText(this.summary, `Thought · ${words} word${words === 1 ? "" : "s"}`);
  }
}
