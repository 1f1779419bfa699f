"""The tools' work: reading, editing and running notebooks, each call through the gate.

``NotebookTools.call(session, name, arguments)`` is the one way in: arguments checked against
the tool's model, the gate asked, the tool run, the call recorded in the notebook folder's
event log. A problem (bad path, index, arguments, a refusal) comes back as
``Rendered(text, is_error=True)``, one line naming it; the server goes on.
"""

from __future__ import annotations

import difflib
import time
from dataclasses import dataclass
from typing import Any

import nbformat
from pydantic import ValidationError

from jupyter_brain.agent.redact import Redactor

from .approvals import Approvals
from .audit import AuditTrail
from .config import JupyterBrainMCP
from .errors import ToolProblem
from .gate import Decision, Gate, OutsideSession, Refused, stamp
from .kernels import Execution, NotebookKernels
from .live_document import NotebookDocument
from .notebooks import NotebookStore, cell_position
from .policy import endpoint_policy
from .previews import approval_request
from .rendering import CELL_FORMAT, Renderer, RenderLimits, cut
from .tool_specs import BY_NAME, Args
from .variables_code import variables_code


@dataclass
class Outcome:
    text: str
    images: list[Any]
    is_error: bool = False


class NotebookTools:
    def __init__(self, store: NotebookStore, kernels: NotebookKernels, settings: JupyterBrainMCP,
                 audit: AuditTrail | None = None, approvals: Approvals | None = None,
                 documents: NotebookDocument | None = None) -> None:
        self.store = store
        self.documents: NotebookDocument = documents or store  # the open document when there is one (#35 §3)
        self.kernels = kernels
        self.settings = settings
        self.redact = Redactor()
        self.audit = audit or AuditTrail(self.redact)
        policy = endpoint_policy(settings.permission)  # the admin's, if any (issue #38)
        self.gate = Gate(policy.permission, settings.max_executions_per_session, policy.closed, approvals)

    def renderer(self, *, overview: bool = False) -> Renderer:
        """read_notebook's (many cells: outputs and figures smaller) or one cell's."""
        s = self.settings
        chars, px = (s.max_output_chars, s.overview_image_px) if overview else (s.max_cell_output_chars, s.image_max_px)
        return Renderer(RenderLimits(chars, s.max_result_bytes, px, s.max_images_per_result), self.redact)

    # the one way in ---------------------------------------------------------------
    async def call(self, session: OutsideSession, name: str, arguments: dict[str, Any] | None) -> Outcome:
        started = time.monotonic()
        session.calls += 1
        spec = BY_NAME.get(name)
        arguments = arguments or {}
        decision = Decision(False, "not checked")
        folder = None
        try:
            if spec is None:
                raise ToolProblem(f"No tool {name!r}; the tools are: {', '.join(BY_NAME)}")
            args = _parse(spec.args, arguments, name)
            api_path = self.store.api_path(args.path) if hasattr(args, "path") else None
            folder = self.store.real_path(api_path).parent if api_path else None
            decision = self.gate.check(session, name, spec.effect)
            if decision.how == "ask":  # the card in JupyterLab: the diff or the code, Approve or Deny
                request = await approval_request(self.documents, session, name, spec.effect, args, api_path or "", self.redact)
                decision = await self.gate.ask(session, request)
            renderer = self.renderer(overview=name == "read_notebook")
            text = await getattr(self, "_" + name)(session, args, api_path, renderer)
            rendered = renderer.result(text)
            outcome = Outcome(rendered.text, list(rendered.images))
        except Refused as refused:
            decision = refused.decision
            outcome = Outcome(str(refused), [], is_error=True)
        except ToolProblem as problem:
            outcome = Outcome(str(problem), [], is_error=True)
        if folder is not None and folder.is_dir():
            summary = outcome.text.splitlines()[0] if outcome.text else ""
            self.audit.record(folder, session, name, arguments, decision.as_dict(),
                              "error" if outcome.is_error else "ok", summary, time.monotonic() - started)
        return outcome

    # reading ----------------------------------------------------------------------
    async def _list_notebooks(self, session: OutsideSession, args: Any, api_path: None, r: Renderer) -> str:
        found = self.store.list(args.folder)
        running = await self.kernels.running_paths()
        if not found:
            return "No notebooks" + (f" under {args.folder!r}" if args.folder else " under the server's root") + "."
        lines = [p + ("  (kernel running)" if p in running else "") for p in found]
        return f"{len(found)} notebook(s):\n" + "\n".join(lines)

    async def _read_notebook(self, session: OutsideSession, args: Any, api_path: str, r: Renderer) -> str:
        nb = await self.documents.read(api_path)
        total = len(nb.cells)
        end = total if args.count is None else min(total, args.start + args.count)
        kernel = nb.metadata.get("kernelspec", {}).get("name", "?")
        head = f"{api_path}: {total} cells, kernel {kernel}"
        if args.start or end < total:
            head += f" (cells {args.start} to {end - 1} shown)"
        head += f"; {CELL_FORMAT}"
        parts = [head] + [r.cell(i, nb.cells[i], outputs=args.outputs) for i in range(args.start, end)]
        return "\n".join(parts)

    async def _read_cell(self, session: OutsideSession, args: Any, api_path: str, r: Renderer) -> str:
        nb = await self.documents.read(api_path)
        position = cell_position(nb, args.index, args.cell_id)
        return r.cell(position, nb.cells[position], max_chars=args.max_chars)

    # editing ------------------------------------------------------------------------
    async def _insert_cell(self, session: OutsideSession, args: Any, api_path: str, r: Renderer) -> str:
        make = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell,
                "raw": nbformat.v4.new_raw_cell}[args.cell_type]
        cell = make(args.source)
        stamp(cell, session, "insert_cell")

        applied: list[int] = []

        def insert(nb: nbformat.NotebookNode) -> tuple[int, int]:
            index = args.index
            if applied and index is not None and index > len(nb.cells):  # applied again, on a shorter file
                index = -1
            position = cell_position(nb, index, None, inserting=True)
            nb.cells.insert(position, cell)
            applied.append(position)
            return position, len(nb.cells)

        position, count = await self.documents.edit(api_path, insert, [cell])
        return f"Inserted a {args.cell_type} cell at index {position} (id {cell['id']}); the notebook has {count} cells."

    async def _edit_cell(self, session: OutsideSession, args: Any, api_path: str, r: Renderer) -> str:
        target = _Target(args.index, args.cell_id)

        def edit(nb: nbformat.NotebookNode) -> tuple[int, Any, str]:
            position = target.find(nb)
            cell = nb.cells[position]
            old = _text(cell.get("source", ""))
            cell["source"] = args.source
            if cell.get("cell_type") == "code":
                cell["outputs"] = []
                cell["execution_count"] = None
            stamp(cell, session, "edit_cell")
            return position, cell.get("id"), old

        position, cell_id, old = await self.documents.edit(api_path, edit)
        diff = "".join(difflib.unified_diff(old.splitlines(True), args.source.splitlines(True), "before", "after", n=1))
        return f"Edited cell {position} (id {cell_id}).\n" + cut(self.redact(diff), 2_000)

    async def _delete_cell(self, session: OutsideSession, args: Any, api_path: str, r: Renderer) -> str:
        target = _Target(args.index, args.cell_id)

        def delete(nb: nbformat.NotebookNode) -> tuple[int, Any, int]:
            position = target.find(nb)
            cell = nb.cells.pop(position)
            return position, cell.get("id"), len(nb.cells)

        position, cell_id, count = await self.documents.edit(api_path, delete)
        return f"Deleted cell {position} (id {cell_id}); the notebook has {count} cells."

    async def _create_notebook(self, session: OutsideSession, args: Any, api_path: str, r: Renderer) -> str:
        specs = (await _maybe_await(self.kernels.specs.get_all_specs())) or {}
        name = args.kernel or self.kernels.kernels.default_kernel_name
        if name not in specs:
            raise ToolProblem(f"No kernel {name!r} on this server (it has: {', '.join(sorted(specs)) or 'none'})")
        spec = specs[name].get("spec", {})
        await self.store.create(api_path, name, spec.get("display_name", name), spec.get("language", "python"))
        return f"Created {api_path} (kernel {name})."

    # running ------------------------------------------------------------------------
    async def _execute_cell(self, session: OutsideSession, args: Any, api_path: str, r: Renderer) -> str:
        nb = await self.documents.read(api_path)
        position = cell_position(nb, args.index, args.cell_id)
        cell = nb.cells[position]
        if cell.get("cell_type") != "code":
            raise ToolProblem(f"Cell {position} is a {cell.get('cell_type')} cell: only code cells run")
        cell_id = cell.get("id")
        kernel_id = await self.kernels.kernel_for(api_path, nb.metadata.get("kernelspec", {}).get("name"))
        run = await self.kernels.execute(kernel_id, _text(cell.get("source", "")), self._timeout(args.timeout))
        ran = nbformat.v4.new_code_cell(outputs=run.outputs, execution_count=run.execution_count)

        def record(nb: nbformat.NotebookNode) -> bool:  # the cell may have moved meanwhile: found by id
            target = next((c for c in nb.cells if c.get("id") == cell_id), None)
            if target is not None:
                target["outputs"] = run.outputs
                target["execution_count"] = run.execution_count
            return target is not None

        found = await self.documents.edit(api_path, record, [ran])
        where = f"cell {position} (id {cell_id})" + ("" if found else " — deleted meanwhile, not saved")
        return self._execution_text(where, run, r)

    async def _execute_code(self, session: OutsideSession, args: Any, api_path: str, r: Renderer) -> str:
        nb = await self.documents.read(api_path)
        kernel_id = await self.kernels.kernel_for(api_path, nb.metadata.get("kernelspec", {}).get("name"))
        run = await self.kernels.execute(kernel_id, args.code, self._timeout(args.timeout))
        return self._execution_text("code", run, r)

    async def _list_variables(self, session: OutsideSession, args: Any, api_path: str, r: Renderer) -> str:
        return await self._variables(api_path, "list_variables", {"pattern": args.pattern})

    async def _inspect_variable(self, session: OutsideSession, args: Any, api_path: str, r: Renderer) -> str:
        return await self._variables(api_path, "inspect_variable", {"name": args.name, "rows": args.rows})

    async def _variables(self, api_path: str, tool: str, arguments: dict[str, Any]) -> str:
        if not await self.store.exists(api_path):
            raise ToolProblem(f"No notebook {api_path!r} under the server's root")
        kernel_id = await self.kernels.running(api_path)
        if kernel_id is None:
            raise ToolProblem(f"{api_path} has no running kernel, so it has no variables yet: run a cell first "
                              "(execute_cell)")
        run = await self.kernels.execute(kernel_id, variables_code(tool, arguments), self._timeout(30),
                                         store_history=False)
        text = "".join(_text(o.get("text", "")) for o in run.outputs if o.get("output_type") == "stream")
        if run.status != "ok":
            errors = [o for o in run.outputs if o.get("output_type") == "error"]
            detail = f"{errors[0].get('ename')}: {errors[0].get('evalue')}" if errors else run.note
            raise ToolProblem(f"{tool} failed in the kernel: {detail}")
        return self.redact(text.rstrip()) or "No output."

    # helpers ----------------------------------------------------------------------------
    def _timeout(self, asked: float | None) -> float:
        return min(asked or self.settings.default_timeout_seconds, self.settings.max_call_seconds)

    def _execution_text(self, what: str, run: Execution, r: Renderer) -> str:
        count = f" [{run.execution_count}]" if run.execution_count is not None else ""
        head = f"Ran {what}{count}: {run.status} in {run.seconds:.2f} s"
        lines = [head, *r.outputs(run.outputs)]
        if not run.outputs:
            lines.append("(no output)")
        if run.note:
            lines.append(run.note)
        return "\n".join(lines)


class _Target:
    """The cell an edit names: by index or id the first time, by the id it had ever after (an
    edit applied again, on a file changed meanwhile, must find the same cell)."""

    def __init__(self, index: int | None, cell_id: str | None) -> None:
        self.index, self.cell_id = index, cell_id

    def find(self, nb: nbformat.NotebookNode) -> int:
        position = cell_position(nb, self.index, self.cell_id)
        self.cell_id = nb.cells[position].get("id") or self.cell_id
        return position


def _parse(model: type[Args], arguments: dict[str, Any], tool: str) -> Any:
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors())
        raise ToolProblem(f"Bad arguments for {tool}: {problems}") from None


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


async def _maybe_await(value: Any) -> Any:
    return await value if hasattr(value, "__await__") else value
