// Types of compare_bundle.js, which `npm run build` in js/ writes here (esbuild bundle of
// js/src/compare_bundle.ts: the live CompareView's renderer, drawing a finished comparison).
export declare const COMPARE_MIME: string;

export interface CompareBundle {
  version: number;
  columns: unknown[];
  [key: string]: unknown;
}

export interface ComparePainterOptions {
  onMarkBest?: (comparisonId: string, strategy: string, run: number) => Promise<string | null>;
  onWinner?: (strategy: string) => void;
}

export interface ComparePainter {
  dispose(): void;
}

export declare function isCompareBundle(value: unknown): value is CompareBundle;
export declare function renderCompare(host: HTMLElement, bundle: CompareBundle, opts?: ComparePainterOptions): ComparePainter;
