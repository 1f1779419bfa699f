// What travels between the kernel (jupyter_brain/widgets/agent_view.py) and this view.
import type { AgentEvent } from "./generated/events";

export type { AgentEvent };
export type EventType = AgentEvent["type"];
export type EventOf<T extends EventType> = Extract<AgentEvent, { type: T }>;

/** One live custom message: every event since the previous batch, deltas merged.
 *  `start`/`end` count raw kernel events, so a transcript commit (`transcript_n`)
 *  tells which batches it already contains. */
export interface Batch {
  kind: "events";
  epoch: number;
  start: number;
  end: number;
  events: AgentEvent[];
}

/** Synced traits the view reads (the header traits are for kernel-side users). */
export interface ModelState {
  transcript: AgentEvent[];
  transcript_n: number;
  epoch: number;
  /** AgentMagics.fold: "auto" folds a finished turn's steps, "never" keeps them open. */
  fold?: string;
}

export function isBatch(msg: unknown): msg is Batch {
  if (typeof msg !== "object" || msg === null) return false;
  const m = msg as Partial<Batch>;
  return (
    m.kind === "events" &&
    typeof m.epoch === "number" &&
    typeof m.start === "number" &&
    typeof m.end === "number" &&
    Array.isArray(m.events)
  );
}
