// The anywidget module of jupyter_brain.widgets.CompareView. Like the AgentView module:
// per-model event stores (one per column) filled in initialize(), so no live batch is
// missed; render() paints from them and follows the synced traits.
import type { AnyModel, Initialize, Render } from "@anywidget/types";
import { EventStore } from "../store";
import "../styles.css";
import "./compare.css";
import { type CompareState, isCompareMessage } from "./protocol";
import { CompareRenderer } from "./view";

const TRAITS = ["columns", "rows", "summary", "trees", "winner", "runs", "prompt", "comparison_id", "notes"] as const;

function stateOf(model: AnyModel<CompareState>): CompareState {
  return {
    columns: model.get("columns") ?? [],
    epoch: model.get("epoch") ?? 0,
    runs: model.get("runs") ?? 1,
    rows: model.get("rows") ?? [],
    summary: model.get("summary") ?? [],
    trees: model.get("trees") ?? {},
    winner: model.get("winner") ?? "",
    comparison_id: model.get("comparison_id") ?? "",
    prompt: model.get("prompt") ?? "",
    notes: model.get("notes") ?? [],
  };
}

export function createCompareWidget() {
  const stores = new Map<string, EventStore>();
  const storeFor = (key: string): EventStore => {
    let s = stores.get(key);
    if (s === undefined) {
      s = new EventStore();
      stores.set(key, s);
    }
    return s;
  };
  const syncColumns = (model: AnyModel<CompareState>) => {
    const epoch = model.get("epoch") ?? 0;
    for (const col of model.get("columns") ?? []) storeFor(col.key).load(col.transcript, col.n, epoch);
  };

  const initialize: Initialize<CompareState> = ({ model }) => {
    syncColumns(model);
    const onMessage = (msg: unknown) => {
      if (!isCompareMessage(msg)) return;
      for (const [key, batch] of Object.entries(msg.batches)) storeFor(key).receive(batch);
    };
    const onColumns = () => syncColumns(model);
    model.on("msg:custom", onMessage);
    model.on("change:columns", onColumns);
    return () => {
      model.off("msg:custom", onMessage);
      model.off("change:columns", onColumns);
    };
  };

  const render: Render<CompareState> = ({ model, el }) => {
    if (stores.size === 0) syncColumns(model);
    const view = new CompareRenderer(el, storeFor, {
      onMarkBest: (strategy, run) => model.send({ kind: "mark_best", strategy, run }),
    });
    const paint = () => view.update(stateOf(model));
    paint();
    for (const name of TRAITS) model.on(`change:${name}`, paint);
    return () => {
      for (const name of TRAITS) model.off(`change:${name}`, paint);
      view.dispose();
    };
  };

  return { initialize, render };
}

export default createCompareWidget;
