/** A unified diff (from ``ProposedFix.diff()`` in the kernel) as classified lines. */

export type DiffKind = 'add' | 'del' | 'hunk' | 'file' | 'same';

export function diffLines(diff: string): { kind: DiffKind; text: string }[] {
  return diff
    .replace(/\n$/, '')
    .split('\n')
    .map(text => {
      let kind: DiffKind = 'same';
      if (text.startsWith('+++') || text.startsWith('---')) {
        kind = 'file';
      } else if (text.startsWith('@@')) {
        kind = 'hunk';
      } else if (text.startsWith('+')) {
        kind = 'add';
      } else if (text.startsWith('-')) {
        kind = 'del';
      }
      return { kind, text };
    });
}

/** The diff as a ``<pre>`` of coloured lines (text only: no HTML from the model). */
export function renderDiff(diff: string, doc: Document = document): HTMLElement {
  const pre = doc.createElement('pre');
  pre.className = 'jb-diff';
  for (const line of diffLines(diff)) {
    const span = doc.createElement('span');
    span.className = `jb-diff-${line.kind}`;
    span.textContent = line.text + '\n';
    pre.appendChild(span);
  }
  return pre;
}
