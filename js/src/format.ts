// The wording comes from jupyter_brain/widgets/labels.json, which the Python views read too;
// the helpers below have twins in jupyter_brain/widgets/_format.py (keep them alike).
import labels from "../../jupyter_brain/widgets/labels.json";

export const STATUS_LABEL: Record<string, string> = labels.status_label;
export const STATUS_ICON: Record<string, string> = labels.status_icon;
export const TOOL_ICON: Record<string, string> = labels.tool_icon;
export const STRATEGY_LABEL: Record<string, string> = labels.strategy_label;
export const TRIGGER_LABEL: Record<string, string> = labels.trigger_label;
export const ESTIMATED_MARK: string = labels.estimated_mark;

/** `retrying 2/3 after: overloaded` (as _format.retry_text). */
export function retryText(e: { attempt: number; max_attempts: number; reason: string; delay_s?: number }): string {
  const wait = e.delay_s ? ` in ${e.delay_s.toFixed(1)} s` : "";
  return `retrying ${e.attempt}/${e.max_attempts} after: ${e.reason}${wait} (partial output discarded)`;
}

/** Only inline raster/vector images the kernel made; anything else is dropped. */
export function safeImageUrl(url: unknown): string | null {
  return typeof url === "string" && /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+$/.test(url) ? url : null;
}

export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const total = Math.round(s);
  return `${Math.floor(total / 60)} min ${String(total % 60).padStart(2, "0")} s`;
}

export function tokens(n: number): string {
  return n.toLocaleString("en-US");
}

export function cost(usd: number | null | undefined): string {
  if (usd === null || usd === undefined) return "—";
  return usd < 1 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} chars`;
  return `${(n / 1024).toFixed(1)} k chars`;
}

/** Arguments as indented JSON; strings holding JSON are parsed first. */
export function prettyJson(value: unknown): string {
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return value as string;
    }
  }
  if (value === undefined) return "";
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
