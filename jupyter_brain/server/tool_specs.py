"""The tools as an outside agent sees them: names, one-line descriptions, argument models.

Names follow jupyter-mcp-server's where a tool does the same job, so an agent that knows
one knows the other. Every notebook is named by ``path``, relative to the server's root.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from .gate import Effect

Path = Annotated[str, Field(description="notebook path relative to the server's root, e.g. 'work/analysis.ipynb'")]
Index = Annotated[int | None, Field(description="cell position, 0-based; -1 is the last cell")]
CellId = Annotated[str | None, Field(description="the cell's id (read_notebook shows it); instead of index")]
Timeout = Annotated[float | None, Field(gt=0, description="seconds before the kernel is interrupted (default 60)")]


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ListNotebooks(Args):
    folder: Annotated[str, Field(description="only notebooks under this folder")] = ""


class ReadNotebook(Args):
    path: Path
    start: Annotated[int, Field(ge=0, description="first cell to show")] = 0
    count: Annotated[int | None, Field(ge=1, description="how many cells (default: all)")] = None
    outputs: Annotated[bool, Field(description="include cell outputs")] = True


class ReadCell(Args):
    path: Path
    index: Index = None
    cell_id: CellId = None
    max_chars: Annotated[int | None, Field(ge=100, le=200_000, description="characters of each output shown")] = None


class InsertCell(Args):
    path: Path
    source: str
    index: Annotated[int, Field(description="position of the new cell; -1 appends")] = -1
    cell_type: Literal["code", "markdown", "raw"] = "code"


class EditCell(Args):
    path: Path
    source: Annotated[str, Field(description="the cell's new source (replaces the old)")]
    index: Index = None
    cell_id: CellId = None


class DeleteCell(Args):
    path: Path
    index: Index = None
    cell_id: CellId = None


class ExecuteCell(Args):
    path: Path
    index: Index = None
    cell_id: CellId = None
    timeout: Timeout = None


class ExecuteCode(Args):
    path: Annotated[str, Field(description="the notebook whose kernel runs the code")]
    code: str
    timeout: Timeout = None


class ListVariables(Args):
    path: Annotated[str, Field(description="the notebook whose kernel's variables to list")]
    pattern: Annotated[str | None, Field(description="glob (df*) or substring filter on names")] = None


class InspectVariable(Args):
    path: Annotated[str, Field(description="the notebook whose kernel holds the variable")]
    name: Annotated[str, Field(description="variable, with literal lookups: df.columns, d['k'], xs[0]")]
    rows: Annotated[int, Field(ge=1, le=50, description="preview rows")] = 5


class CreateNotebook(Args):
    path: Path
    kernel: Annotated[str | None, Field(description="kernelspec name (default: the server's default)")] = None


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    args: type[Args]
    effect: Effect


SPECS = [
    ToolSpec("list_notebooks", "List the notebooks under the server's root (or a folder), marking those with a "
             "running kernel.", ListNotebooks, "read"),
    ToolSpec("read_notebook", "Read a notebook's cells with ids and outputs: text as text, figures as images, "
             "long outputs cut with a note. Page with start/count.", ReadNotebook, "read"),
    ToolSpec("read_cell", "Read one cell (by index or cell_id) with its outputs in full up to max_chars.",
             ReadCell, "read"),
    ToolSpec("insert_cell", "Insert a cell at index (-1 appends); returns its index and id. Does not run it.",
             InsertCell, "write"),
    ToolSpec("edit_cell", "Replace a cell's source (by index or cell_id); its outputs are cleared.", EditCell, "write"),
    ToolSpec("delete_cell", "Delete a cell (by index or cell_id).", DeleteCell, "write"),
    ToolSpec("execute_cell", "Run a cell in the notebook's own kernel (started if none); its outputs are saved in "
             "the notebook and returned.", ExecuteCell, "execute"),
    ToolSpec("execute_code", "Run code in the notebook's kernel without adding a cell; returns its outputs.",
             ExecuteCode, "execute"),
    ToolSpec("list_variables", "List the variables in the notebook's kernel: type and summary (shape, columns, "
             "length). Needs a running kernel.", ListVariables, "read"),
    ToolSpec("inspect_variable", "Show one variable of the notebook's kernel in detail (DataFrame dtypes and head, "
             "array stats, dict keys). Needs a running kernel.", InspectVariable, "read"),
    ToolSpec("create_notebook", "Create an empty notebook at path with a kernelspec.", CreateNotebook, "write"),
]
BY_NAME = {spec.name: spec for spec in SPECS}
