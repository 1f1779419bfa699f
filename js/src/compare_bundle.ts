// A finished comparison drawn from its output bundle (jupyter_brain/widgets/compare_bundle.py):
// what the JupyterLab extension shows for `application/vnd.jupyter-brain.compare+json`, so a
// saved notebook needs no widget for a %%compare cell and reopens in any kernel. The same
// renderer as the live CompareView paints it, each column from its saved transcript.
//
// "Mark best" needs the kernel: the host passes `onMarkBest` (the extension sends it over
// its comm and resolves with an error text, or null once recorded); without one the
// buttons are hidden.
import "./compare/compare.css";
import type { Column, CompareState } from "./compare/protocol";
import { CompareRenderer } from "./compare/view";
import { EventStore } from "./store";

export const COMPARE_MIME = "application/vnd.jupyter-brain.compare+json";

export interface CompareBundle extends Partial<Omit<CompareState, "columns">> {
  version: number;
  columns: Column[];
}

export interface ComparePainterOptions {
  /** Record a winner in the kernel: resolves to null when recorded, else why not. */
  onMarkBest?: (comparisonId: string, strategy: string, run: number) => Promise<string | null>;
  /** The winner was recorded: the host keeps it in the saved output. */
  onWinner?: (strategy: string) => void;
}

export interface ComparePainter {
  dispose(): void;
}

export function isCompareBundle(value: unknown): value is CompareBundle {
  return typeof value === "object" && value !== null && Array.isArray((value as CompareBundle).columns);
}

function stateOf(bundle: CompareBundle): CompareState {
  return {
    columns: bundle.columns,
    epoch: 0,
    runs: bundle.runs ?? 1,
    rows: bundle.rows ?? [],
    summary: bundle.summary ?? [],
    trees: bundle.trees ?? {},
    winner: bundle.winner ?? "",
    comparison_id: bundle.comparison_id ?? "",
    prompt: bundle.prompt ?? "",
    notes: bundle.notes ?? [],
  };
}

/** Paint a finished comparison into `host`; dispose the result with the host. */
export function renderCompare(host: HTMLElement, bundle: CompareBundle, opts: ComparePainterOptions = {}): ComparePainter {
  const stores = new Map<string, EventStore>();
  const storeFor = (key: string): EventStore => {
    let s = stores.get(key);
    if (s === undefined) {
      s = new EventStore();
      stores.set(key, s);
    }
    return s;
  };
  for (const col of bundle.columns) storeFor(col.key).load(col.transcript ?? [], col.n ?? 0, 0);
  const state = stateOf(bundle);
  const markBest = opts.onMarkBest;
  const view = new CompareRenderer(host, storeFor, {
    send: null,
    onMarkBest: markBest && state.comparison_id
      ? (strategy, run) => {
          void markBest(state.comparison_id, strategy, run).then((error) => {
            if (error !== null) {
              view.say(error);
              return;
            }
            state.winner = strategy;
            view.update(state);
            opts.onWinner?.(strategy);
          });
        }
      : undefined,
  });
  view.root.classList.add("jb-compare-saved");
  view.update(state);
  return view;
}
