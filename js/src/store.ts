// Per-model event buffer. Filled from `initialize()` (so no live message is missed,
// per DESIGN.md); every view of the model paints from it and follows its updates.
import { appendCompact } from "./compact";
import type { AgentEvent, Batch } from "./protocol";

export interface StoreListener {
  /** Events that extend what the listener already has. */
  append(events: AgentEvent[]): void;
  /** Start over from these events (a replay, or a resync after missed batches). */
  reset(events: AgentEvent[]): void;
}

export class EventStore {
  /** Compact events (delta runs merged), everything applied so far. */
  readonly events: AgentEvent[] = [];
  epoch = -1;
  /** Raw kernel events applied (the `end` of the last batch, or `transcript_n`). */
  applied = 0;
  private waiting: Batch[] = [];
  private listeners = new Set<StoreListener>();

  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The durable transcript trait. Ignored when live batches already covered it. */
  load(transcript: AgentEvent[], n: number, epoch: number): void {
    if (epoch === this.epoch && n <= this.applied) return;
    if (epoch < this.epoch) return;
    this.epoch = epoch;
    this.applied = n;
    this.events.length = 0;
    for (const e of transcript) appendCompact(this.events, e);
    this.waiting = this.waiting.filter((b) => b.epoch === epoch && b.end > n);
    this.drain();
    for (const l of this.listeners) l.reset(this.events.slice());
  }

  /** A live batch. Out-of-order batches (a view that joined mid-stream) wait for the
   *  next transcript commit, which always lands on a batch boundary. */
  receive(batch: Batch): void {
    if (batch.epoch < this.epoch || (batch.epoch === this.epoch && batch.end <= this.applied)) return;
    if (batch.epoch === this.epoch && batch.start === this.applied) {
      const applied = this.apply(batch);
      this.notify(applied);
      this.notify(this.drain());
      return;
    }
    this.waiting.push(batch);
  }

  private apply(batch: Batch): AgentEvent[] {
    for (const e of batch.events) appendCompact(this.events, e);
    this.applied = batch.end;
    return batch.events;
  }

  /** Apply waiting batches that now continue the stream; returns their events. */
  private drain(): AgentEvent[] {
    const out: AgentEvent[] = [];
    for (;;) {
      const next = this.waiting.find((b) => b.epoch === this.epoch && b.start === this.applied);
      if (next === undefined) break;
      this.waiting = this.waiting.filter((b) => b !== next);
      out.push(...this.apply(next));
    }
    this.waiting = this.waiting.filter((b) => b.epoch > this.epoch || b.end > this.applied);
    return out;
  }

  private notify(events: AgentEvent[]): void {
    if (events.length === 0) return;
    for (const l of this.listeners) l.append(events);
  }
}
