// Types of turn_view.js, which `npm run build` in js/ writes here (esbuild bundle of
// js/src/turn_view.ts: the live view's renderer, drawing a finished turn's bundle).
export declare const TURN_MIME: string;

export interface TurnBundle {
  version: number;
  fold?: string;
  session_id?: string;
  turn?: number;
  status?: string;
  transcript: unknown[];
}

export interface TurnPainter {
  dispose(): void;
}

export declare function renderTurn(host: HTMLElement, bundle: TurnBundle, markdown: string): TurnPainter;
