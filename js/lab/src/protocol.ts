/**
 * The messages between the kernel (jupyter_brain/notebook/lab_channel.py) and this
 * extension. Plain JSON; the kernel masks secrets before anything reaches here.
 */

export const FRONTEND_TARGET = 'jupyter_brain.lab'; // registered here; the kernel opens it at %load_ext
export const KERNEL_TARGET = 'jupyter_brain.kernel'; // registered by the kernel; opened here on reconnect
export const VERSION = '0.1.0';

export interface INbOutput {
  output_type: string;
  [key: string]: unknown;
}

export interface ICellsMessage {
  type: 'cells';
  cell_id: string;
  session: string;
  turn: string;
  cells: { source: string; outputs: INbOutput[] }[];
}

export interface IStatusMessage {
  type: 'status';
  session: string;
  turns: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
  estimated: boolean;
  context_level: string;
  context_tokens: number;
  context_ratio: number;
  context_budget: number;
}

export interface IRequestPart {
  kind: string;
  tokens: number;
  messages: Record<string, unknown>[];
}

export interface ISnapshot {
  session_id: string;
  turn_id: string;
  step: number;
  provider: string;
  model: string;
  parts: IRequestPart[];
  tools: { name: string; tokens: number; schema: Record<string, unknown> }[];
  calibration: number;
}

export interface IReply {
  type: string;
  request_id: number;
  error?: string;
  [key: string]: unknown;
}

export interface IFixReply extends IReply {
  cell_id?: string;
  execution_count?: number;
  error_type?: string;
  original?: string;
  fixed?: string;
  diff?: string;
  explanation?: string;
}

export interface IInspectReply extends IReply {
  snapshot?: ISnapshot;
  total_tokens?: number;
  turn?: number;
}

/** Request ids and the promises waiting for their replies. */
export class PendingRequests {
  private _next = 1;
  private _waiting = new Map<number, (reply: IReply) => void>();

  create(): [number, Promise<IReply>] {
    const id = this._next++;
    const promise = new Promise<IReply>(resolve => this._waiting.set(id, resolve));
    return [id, promise];
  }

  /** True when the reply answered a request of ours. */
  resolve(reply: IReply): boolean {
    const done = this._waiting.get(reply.request_id);
    if (!done) {
      return false;
    }
    this._waiting.delete(reply.request_id);
    done(reply);
    return true;
  }

  /** Every waiting request gets ``error`` (the comm closed, the kernel restarted). */
  failAll(error: string): void {
    for (const [id, done] of this._waiting) {
      done({ type: 'error', request_id: id, error });
    }
    this._waiting.clear();
  }

  get size(): number {
    return this._waiting.size;
  }
}
