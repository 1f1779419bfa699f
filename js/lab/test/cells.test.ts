import { describe, expect, it } from 'vitest';

import { applyCells, hashSource, ICellLike, insertIndex, INewCell, META_KEY, planCells } from '../src/cells';
import type { ICellsMessage } from '../src/protocol';

const msg = (cells: string[], turn = 't2'): ICellsMessage => ({
  type: 'cells',
  cell_id: 'agent',
  session: 's1',
  turn,
  cells: cells.map(source => ({ source, outputs: [{ output_type: 'stream', name: 'stdout', text: 'x\n' }] }))
});

const inserted = (id: string, source: string, hash = hashSource(source)): ICellLike => ({
  id,
  source,
  metadata: { [META_KEY]: { session: 's1', turn: 't1', agent_cell: 'agent', hash } }
});

class FakeShared {
  cells: string[];
  transactions = 0;
  constructor(cells: string[]) {
    this.cells = cells;
  }
  transact(fn: () => void) {
    this.transactions++;
    fn();
  }
  deleteCell(i: number) {
    this.cells.splice(i, 1);
  }
  insertCells(i: number, cells: INewCell[]) {
    this.cells.splice(i, 0, ...cells.map(c => c.source));
  }
}

describe('planCells', () => {
  it('puts one marked cell per call right below the agent cell', () => {
    const nb: ICellLike[] = [
      { id: 'a', source: 'import x', metadata: {} },
      { id: 'agent', source: '%%agent --cells\ngo', metadata: {} },
      { id: 'b', source: 'print(1)', metadata: {} }
    ];
    const plan = planCells(nb, msg(['a = 1', 'a + 1']));
    expect(plan.agentIndex).toBe(1);
    expect(plan.previous).toEqual([]);
    expect(plan.cells.map(c => c.source)).toEqual(['a = 1', 'a + 1']);
    expect(plan.cells[0].metadata[META_KEY]).toEqual({
      session: 's1',
      turn: 't2',
      agent_cell: 'agent',
      hash: hashSource('a = 1')
    });
    expect(plan.cells[0].outputs).toHaveLength(1);
    const shared = new FakeShared(nb.map(c => c.source));
    applyCells(shared, plan, true);
    expect(shared.cells).toEqual(['import x', '%%agent --cells\ngo', 'a = 1', 'a + 1', 'print(1)']);
    expect(shared.transactions).toBe(1);
  });

  it('replaces the cells the same agent cell inserted last time, and notices edits', () => {
    const nb: ICellLike[] = [
      { id: 'agent', source: '%%agent --cells\ngo', metadata: {} },
      inserted('o1', 'old = 1'),
      inserted('o2', 'old + 2 # edited', hashSource('old + 2')),
      { id: 'mine', source: 'mine()', metadata: {} },
      { id: 'other', source: 'z', metadata: { [META_KEY]: { agent_cell: 'another', hash: 'x' } } }
    ];
    const plan = planCells(nb, msg(['new = 1']));
    expect(plan.previous).toEqual([1, 2]);
    expect(plan.edited).toEqual([2]);
    const shared = new FakeShared(nb.map(c => c.source));
    applyCells(shared, plan, true);
    expect(shared.cells).toEqual(['%%agent --cells\ngo', 'new = 1', 'mine()', 'z']);
  });

  it('keeps the old cells when asked and adds the new ones below them', () => {
    const nb: ICellLike[] = [{ id: 'agent', source: '%%agent', metadata: {} }, inserted('o1', 'old = 1')];
    const plan = planCells(nb, msg(['new = 1']));
    expect(insertIndex(plan, false)).toBe(2);
    const shared = new FakeShared(nb.map(c => c.source));
    applyCells(shared, plan, false);
    expect(shared.cells).toEqual(['%%agent', 'old = 1', 'new = 1']);
  });

  it('does not find an agent cell that is not in the notebook', () => {
    expect(planCells([{ id: 'x', source: '', metadata: {} }], msg(['a'])).agentIndex).toBe(-1);
  });

  it('hashes differ for different sources', () => {
    expect(hashSource('a = 1')).not.toBe(hashSource('a = 2'));
    expect(hashSource('')).toMatch(/^[0-9a-f]{8}$/);
  });
});
