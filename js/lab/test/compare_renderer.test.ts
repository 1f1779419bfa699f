// The extension's renderer of finished %%compare outputs (application/vnd.jupyter-brain.compare+json):
// it wins over the Markdown fallback, works in untrusted notebooks, draws the comparison with
// the live view's renderer, and keeps a recorded winner in the output's data.
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { beforeAll, describe, expect, it } from 'vitest';

(globalThis as { DragEvent?: unknown }).DragEvent ??= class extends Event {};
let COMPARE_MIME = '';
let compareRendererFactory: (markBest?: unknown) => IRenderMime.IRendererFactory;
beforeAll(async () => {
  ({ COMPARE_MIME, compareRendererFactory } = (await import('../src/compare_renderer')) as any);
});

const transcript = [
  { type: 'turn_start', session_id: 's', user_message: 'q', provider: 'scripted', model: 'm', think_level: 'off', strategy: 'react', max_steps: 6 },
  { type: 'turn_end', status: 'completed', text: '**July**', steps: 1, tool_calls: 0, reflections: 0, duration_ms: 10, cost_usd: 0 }
];

function bundle() {
  return {
    version: 1,
    columns: [{ key: 'react#1', strategy: 'react', run: 1, transcript, n: 2 }],
    runs: 1,
    rows: [{ strategy: 'react', run: 1, status: 'completed', steps: 1 }],
    comparison_id: 'cmp-1',
    prompt: 'Which `month`?'
  };
}

describe('compare renderer', () => {
  it('is preferred over Markdown and safe for untrusted output', () => {
    const factory = compareRendererFactory();
    expect(factory.mimeTypes).toEqual([COMPARE_MIME]);
    expect(factory.safe).toBe(true);
    expect(factory.defaultRank).toBeLessThan(60);
  });

  it('draws the saved comparison and keeps a recorded winner in the output', async () => {
    const saved: Record<string, unknown>[] = [];
    const data: Record<string, unknown> = { [COMPARE_MIME]: bundle(), 'text/markdown': '**Strategy comparison**' };
    const model = {
      data,
      metadata: {},
      trusted: false,
      setData: (options: { data: Record<string, unknown> }) => saved.push(options.data)
    } as unknown as IRenderMime.IMimeModel;
    const renderer = compareRendererFactory(async () => null).createRenderer({} as IRenderMime.IRendererOptions);
    await renderer.renderModel(model);
    expect(renderer.node.dataset.mimeType).toBe(COMPARE_MIME);
    expect(renderer.node.querySelector('.jb-compare-title code')?.textContent).toBe('month');
    expect(renderer.node.querySelectorAll('.jb-compare-column')).toHaveLength(1);
    (renderer.node.querySelector('.jb-mark-best') as HTMLButtonElement).click();
    await new Promise(resolve => setTimeout(resolve, 0));
    expect((saved[0][COMPARE_MIME] as { winner: string }).winner).toBe('react');
    expect(saved[0]['text/markdown']).toBe('**Strategy comparison**');
    renderer.dispose();
  });

  it('says so when the bundle is unreadable', async () => {
    const renderer = compareRendererFactory().createRenderer({} as IRenderMime.IRendererOptions);
    await renderer.renderModel({ data: { [COMPARE_MIME]: { version: 99 } }, metadata: {}, trusted: false } as any);
    expect(renderer.node.textContent).toContain('cannot read');
  });
});
