/**
 * "Code as cells": where the cells of a ``%%agent --cells`` turn go, and which cells of the
 * last run of the same agent cell they replace. Pure functions over a list of cells, so
 * the rules are tested without JupyterLab; ``applyCells`` does the edit on the model.
 */
import type { ICellsMessage, INbOutput } from './protocol';

export const META_KEY = 'jupyter_brain';

export interface ICellLike {
  id: string;
  source: string;
  metadata: Record<string, unknown>;
}

export interface IInsertedMark {
  session: string;
  turn: string;
  agent_cell: string;
  hash: string; // of the source as inserted: a different hash means the user edited it
}

export interface INewCell {
  cell_type: 'code';
  source: string;
  metadata: Record<string, unknown>;
  outputs: INbOutput[];
  execution_count: null;
}

export interface ICellPlan {
  agentIndex: number; // -1: the agent cell is not in this notebook
  previous: number[]; // indices of the cells the same agent cell inserted last time
  edited: number[]; // those of them the user changed since
  cells: INewCell[];
}

/** FNV-1a of the source: cheap, stable, enough to notice an edit. */
export function hashSource(source: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < source.length; i++) {
    h ^= source.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

export function markOf(cell: ICellLike): IInsertedMark | null {
  const mark = cell.metadata?.[META_KEY] as IInsertedMark | undefined;
  return mark && typeof mark === 'object' && typeof mark.agent_cell === 'string' ? mark : null;
}

export function planCells(cells: ICellLike[], msg: ICellsMessage): ICellPlan {
  const agentIndex = cells.findIndex(c => c.id === msg.cell_id);
  const previous: number[] = [];
  const edited: number[] = [];
  cells.forEach((cell, i) => {
    const mark = markOf(cell);
    if (mark && mark.agent_cell === msg.cell_id) {
      previous.push(i);
      if (mark.hash !== hashSource(cell.source)) {
        edited.push(i);
      }
    }
  });
  const newCells: INewCell[] = msg.cells.map(c => ({
    cell_type: 'code',
    source: c.source,
    metadata: {
      [META_KEY]: { session: msg.session, turn: msg.turn, agent_cell: msg.cell_id, hash: hashSource(c.source) }
    },
    outputs: c.outputs ?? [],
    execution_count: null
  }));
  return { agentIndex, previous, edited, cells: newCells };
}

/** Where the new cells go once ``removed`` cells are deleted: right below the agent cell,
 *  or (when the old ones are kept) below the last of them. */
export function insertIndex(plan: ICellPlan, replace: boolean): number {
  if (replace) {
    const above = plan.previous.filter(i => i < plan.agentIndex).length;
    return plan.agentIndex - above + 1;
  }
  return Math.max(plan.agentIndex, ...plan.previous) + 1;
}

/** The part of a notebook's shared model this needs (``YNotebook``). */
export interface ISharedCells {
  transact(fn: () => void): void;
  deleteCell(index: number): void;
  insertCells(index: number, cells: INewCell[]): void;
}

export function applyCells(shared: ISharedCells, plan: ICellPlan, replace: boolean): number {
  const at = insertIndex(plan, replace);
  shared.transact(() => {
    if (replace) {
      [...plan.previous].sort((a, b) => b - a).forEach(i => shared.deleteCell(i));
    }
    shared.insertCells(at, plan.cells);
  });
  return at;
}
