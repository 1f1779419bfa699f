// The streaming answer block: raw deltas grow one text node at once; the Markdown
// re-render of this block only is throttled, and final when the block closes.
import { h } from "../dom";

export type MarkdownFn = (src: string) => string;

const VOID_TAGS = new Set(["BR", "HR", "IMG", "INPUT"]);

/** The innermost last element, where trailing raw text reads as a continuation. */
function lastLeaf(root: HTMLElement): HTMLElement {
  let node: HTMLElement = root;
  for (;;) {
    const child = node.lastElementChild as HTMLElement | null;
    if (child === null || VOID_TAGS.has(child.tagName)) return node;
    node = child;
  }
}

export class TextBlock {
  readonly el: HTMLDivElement;
  private readonly rendered: HTMLDivElement;
  private readonly tail: Text;
  private text = "";
  private renderedLength = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  closed = false;

  constructor(
    private readonly markdown: MarkdownFn,
    private readonly throttleMs: number,
  ) {
    this.rendered = h("div", "jb-md-body");
    this.tail = document.createTextNode("");
    this.el = h("div", "jb-text jb-md", this.rendered);
    this.rendered.append(this.tail);
  }

  /** The Markdown source streamed so far. */
  get source(): string {
    return this.text;
  }

  append(delta: string): void {
    this.text += delta;
    this.tail.appendData(delta);
    if (this.timer === null && !this.closed) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.render();
      }, this.throttleMs);
    }
  }

  /** Render now and stop streaming into this block. */
  close(): void {
    this.closed = true;
    this.render();
    this.tail.remove();
  }

  private render(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.renderedLength === this.text.length) return;
    this.rendered.innerHTML = this.markdown(this.text);
    this.renderedLength = this.text.length;
    this.tail.data = "";
    if (!this.closed) lastLeaf(this.rendered).append(this.tail);
  }

  dispose(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
