// The figures a turn's tools made, shown with its answer when the prompt asked for one or
// the answer refers to one ("Plot it.", "the plot below"): above the fold, not only in the
// folded steps (as widgets/_answer.py answer_figures, which the Markdown transcript uses).
import { h } from "../dom";
import { safeImageUrl } from "../format";
import type { EventOf } from "../protocol";

export const FIGURE_WORDS = /\b(?:plot(?:s|ted)?|charts?|graphs?|figures?|histograms?|visuali[sz]e|draw)\b/i;
export const MAX_ANSWER_FIGURES = 4;

export function wantsFigures(prompt: string, answer: string): boolean {
  return FIGURE_WORDS.test(prompt) || FIGURE_WORDS.test(answer);
}

type Output = { mime_type?: string; data?: string };

export class AnswerFigures {
  private readonly figures: { src: string; alt: string }[] = [];

  /** A finished tool call: its figures (`images`) and image outputs, in order. */
  add(e: EventOf<"tool_call_end">): void {
    const urls = (e.images ?? []).map(safeImageUrl).filter((u): u is string => u !== null);
    for (const o of (e.outputs ?? []) as Output[]) {
      if ((o.mime_type === "image/png" || o.mime_type === "image/jpeg") && typeof o.data === "string" && o.data) {
        const url = safeImageUrl(`data:${o.mime_type};base64,${o.data.replace(/\s+/g, "")}`);
        if (url !== null) urls.push(url);
      }
    }
    urls.forEach((src, i) => this.figures.push({ src, alt: `figure ${i + 1} from ${e.name}` }));
  }

  /** The block under the answer, or null when the turn made no figure or nobody asked for one. */
  block(prompt: string, answer: string): HTMLElement | null {
    if (this.figures.length === 0 || !wantsFigures(prompt, answer)) return null;
    return h(
      "div",
      "jb-answer-figures",
      ...this.figures.slice(0, MAX_ANSWER_FIGURES).map((f) => h("img", { class: "jb-answer-figure", src: f.src, alt: f.alt, loading: "lazy" })),
    );
  }
}
