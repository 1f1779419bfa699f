import { describe, expect, it } from 'vitest';

import { diffLines, renderDiff } from '../src/diff';
import { compactNumber, formatCost, statusText } from '../src/format';
import { renderInspector, totalTokens } from '../src/inspector';
import { PendingRequests } from '../src/protocol';
import type { IInspectReply, IStatusMessage } from '../src/protocol';

const DIFF = '--- In [3] (failing)\n+++ proposed fix\n@@ -1,2 +1,2 @@\n x = 10\n-y = x / 0\n+y = x / 2\n';

describe('diff', () => {
  it('classifies unified diff lines', () => {
    expect(diffLines(DIFF).map(l => l.kind)).toEqual(['file', 'file', 'hunk', 'same', 'del', 'add']);
  });
  it('renders text only', () => {
    const pre = renderDiff('+<img src=x onerror=alert(1)>\n');
    expect(pre.querySelector('img')).toBeNull();
    expect(pre.querySelector('.jb-diff-add')!.textContent).toContain('<img');
  });
});

describe('status bar text', () => {
  const status: IStatusMessage = {
    type: 'status', session: 'default', turns: 2, input_tokens: 12_000, output_tokens: 345,
    cost_usd: 0.0123, estimated: false, context_level: 'warning', context_tokens: 90_000,
    context_ratio: 0.72, context_budget: 125_000
  };
  it('shows session, tokens, cost and context level', () => {
    expect(statusText(status)).toBe('agent default · 12k tokens · $0.01 · context warning 72%');
  });
  it('formats small numbers and unknown costs', () => {
    expect(compactNumber(999)).toBe('999');
    expect(compactNumber(1234)).toBe('1.2k');
    expect(compactNumber(2_500_000)).toBe('2.5M');
    expect(formatCost(null)).toBe('cost n/a');
    expect(formatCost(0.0012, true)).toBe('≈$0.0012');
  });
});

describe('inspector', () => {
  const reply: IInspectReply = {
    type: 'inspect_reply', request_id: 1, turn: 3,
    snapshot: {
      session_id: 's', turn_id: 't', step: 2, provider: 'scripted', model: 'bot', calibration: 1,
      parts: [
        { kind: 'system', tokens: 120, messages: [{ role: 'system', content: 'You are an agent' }] },
        { kind: 'workspace', tokens: 30, messages: [{ role: 'system', content: 'df: DataFrame' }] },
        { kind: 'history', tokens: 50, messages: [
          { role: 'user', content: 'hi <script>window.x=1</script>' },
          { role: 'assistant', content: '', tool_calls: [{ name: 'run_python', arguments: { code: '1' } }] }
        ] }
      ],
      tools: [{ name: 'run_python', tokens: 80, schema: { name: 'run_python' } }]
    }
  };
  it('has one collapsible section per part with its token count', () => {
    const root = renderInspector(reply);
    const sections = [...root.querySelectorAll(':scope > details')] as HTMLDetailsElement[];
    expect(sections.map(s => s.dataset.kind)).toEqual(['system', 'workspace', 'history', 'tools']);
    expect(sections[0].querySelector('summary')!.textContent).toBe('System prompt120 tokens');
    expect(sections[3].querySelector('.jb-inspect-tokens')!.textContent).toBe('80 tokens');
    expect(root.querySelector('script')).toBeNull();
    expect(sections[2].textContent).toContain('→ run_python({"code":"1"})');
    expect(totalTokens(reply.snapshot!)).toBe(280);
    expect(root.querySelector('.jb-inspect-total')!.textContent).toContain('280 tokens');
  });
  it('shows the kernel reason when there is no snapshot', () => {
    const root = renderInspector({ type: 'inspect_reply', request_id: 1, error: 'no turns yet' });
    expect(root.textContent).toBe('no turns yet');
  });
});

describe('PendingRequests', () => {
  it('resolves by id and fails the rest', async () => {
    const pending = new PendingRequests();
    const [a, first] = pending.create();
    const [, second] = pending.create();
    expect(pending.resolve({ type: 'x_reply', request_id: 999 })).toBe(false);
    expect(pending.resolve({ type: 'x_reply', request_id: a, text: 'ok' })).toBe(true);
    expect((await first).text).toBe('ok');
    pending.failAll('gone');
    expect((await second).error).toBe('gone');
    expect(pending.size).toBe(0);
  });
});
