// The anywidget module of jupyter_brain.widgets.AgentView.
//
// The default export is a factory: anywidget calls it once per model, so the event
// store below is per model. `initialize()` fills it from the durable `transcript` trait
// and subscribes to live batches before any message can be missed (a listener added in
// `render()` misses the first ones); each `render()` paints from the store and follows it.
import type { AnyModel, Initialize, Render } from "@anywidget/types";
import { warmUp } from "./markdown";
import { isBatch, type ModelState } from "./protocol";
import { AgentRenderer } from "./renderer";
import { EventStore } from "./store";
import "./styles.css";

function syncFromModel(store: EventStore, model: AnyModel<ModelState>): void {
  store.load(model.get("transcript") ?? [], model.get("transcript_n") ?? 0, model.get("epoch") ?? 0);
}

export interface AgentWidget {
  initialize: Initialize<ModelState>;
  render: Render<ModelState>;
}

export function createWidget(): AgentWidget {
  let store: EventStore | null = null;

  const initialize: Initialize<ModelState> = ({ model }) => {
    warmUp();
    const s = new EventStore();
    store = s;
    syncFromModel(s, model);
    const onMessage = (msg: unknown) => {
      if (isBatch(msg)) s.receive(msg);
    };
    const onCommit = () => syncFromModel(s, model);
    model.on("msg:custom", onMessage);
    // A widget front-end holds this model: an approval can be asked here. (Said on model
    // creation, not on render: a view scrolled out of sight may render only later.)
    model.send({ kind: "ready" });
    for (const name of ["change:transcript", "change:transcript_n", "change:epoch"] as const) model.on(name, onCommit);
    return () => {
      model.off("msg:custom", onMessage);
      for (const name of ["change:transcript", "change:transcript_n", "change:epoch"] as const) model.off(name, onCommit);
    };
  };

  const render: Render<ModelState> = ({ model, el }) => {
    if (store === null) {
      // Only if a host skipped initialize(): the transcript still gives a complete view.
      store = new EventStore();
      syncFromModel(store, model);
    }
    // Clicks on approval cards go to the kernel, which reads them while the turn waits.
    const fold = model.get("fold") === "never" ? "never" : "auto";
    const view = new AgentRenderer(el, { send: (msg) => model.send(msg), fold });
    view.reset(store.events.slice());
    const unsubscribe = store.subscribe(view);
    return () => {
      unsubscribe();
      view.dispose();
    };
  };

  return { initialize, render };
}

export default createWidget;
