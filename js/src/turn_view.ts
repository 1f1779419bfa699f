// A finished turn drawn from its output bundle (jupyter_brain/widgets/turn_bundle.py):
// what the JupyterLab extension shows for `application/vnd.jupyter-brain.turn+json`, so a
// saved notebook needs no widget (and no copy of this code) per %%agent cell. The same
// renderer as the live view paints it; there is no kernel behind it, so no approvals.
//
// A figure's bytes are stored once, in the bundle's Markdown fallback: the transcript
// names it by position (`markdown-image:N` in `images`, `markdown_image: N` in `outputs`),
// and `resolveImages` puts the bytes back before painting.
import type { AgentEvent } from "./protocol";
import { AgentRenderer, type FoldMode } from "./renderer";
import "./styles.css";

export const TURN_MIME = "application/vnd.jupyter-brain.turn+json";
export const IMAGE_REF = "markdown-image:";
// As turn_bundle._IMAGE: the inline images `_answer.outputs_markdown` and the transcript write.
const MARKDOWN_IMAGE = /!\[[^\]]*\]\(data:(image\/(?:png|jpeg));base64,([A-Za-z0-9+/=]+)\)/g;

export interface TurnBundle {
  version: number;
  fold?: string;
  session_id?: string;
  turn?: number;
  status?: string;
  transcript: AgentEvent[];
}

type Image = { mime: string; data: string };
type Output = { mime_type?: string; data?: string; markdown_image?: number };

/** The Markdown's inline images, in order. */
export function markdownImages(markdown: string): Image[] {
  return [...markdown.matchAll(MARKDOWN_IMAGE)].map((m) => ({ mime: m[1], data: m[2] }));
}

/** The transcript with every image reference replaced by its bytes (an unknown
 *  reference becomes an empty image, which the renderer leaves out). */
export function resolveImages(transcript: AgentEvent[], markdown: string): AgentEvent[] {
  const images = markdownImages(markdown);
  const at = (i: unknown): Image | undefined => (typeof i === "number" ? images[i] : undefined);
  return transcript.map((e) => {
    const entry = e as AgentEvent & { images?: string[]; outputs?: Output[] };
    if (!entry.images?.length && !entry.outputs?.length) return e;
    const out: Record<string, unknown> = { ...entry };
    if (entry.images?.length) {
      out.images = entry.images.map((url) => {
        if (!url.startsWith(IMAGE_REF)) return url;
        const image = at(Number(url.slice(IMAGE_REF.length)));
        return image ? `data:${image.mime};base64,${image.data}` : "";
      });
    }
    if (entry.outputs?.length) {
      out.outputs = entry.outputs.map((o) => {
        if (o.markdown_image === undefined) return o;
        const { markdown_image, ...rest } = o;
        return { ...rest, data: at(markdown_image)?.data ?? "" };
      });
    }
    return out as unknown as AgentEvent;
  });
}

/** Paint a finished turn into `host`; returns the renderer (dispose it with the host). */
export function renderTurn(host: HTMLElement, bundle: TurnBundle, markdown: string): AgentRenderer {
  const fold: FoldMode = bundle.fold === "never" ? "never" : "auto";
  const view = new AgentRenderer(host, { send: null, fold });
  view.reset(resolveImages(bundle.transcript ?? [], markdown));
  return view;
}
