"""A collaboration client for tests: a notebook opened as JupyterLab opens it with
jupyter-collaboration (a document session, then the room's websocket speaking the Yjs sync
protocol), holding its own copy of the shared ``YNotebook``.

Written with pycrdt's sync messages and Tornado's websocket client (both there whenever
jupyter-collaboration is), not with a provider class whose home moved between pycrdt
versions. A local edit is sent as the update it made, as a browser tab sends its keystrokes.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from .jupyter import RunningServer

SEEN_WITHIN_S = 30


class SharedNotebook:
    """``path`` open in a collaboration room, as a tab would have it."""

    def __init__(self, server: RunningServer, path: str) -> None:
        from jupyter_ydoc import YNotebook

        self.server, self.path = server, path
        self.notebook = YNotebook()
        self._ws: Any = None
        self._reader: asyncio.Task[None] | None = None
        self.synced = asyncio.Event()

    async def __aenter__(self) -> SharedNotebook:
        import httpx
        from pycrdt import create_sync_message
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        headers = {"Authorization": f"token {self.server.token}"}
        async with httpx.AsyncClient(headers=headers) as http:
            reply = await http.put(f"{self.server.url}api/collaboration/session/{self.path}",
                                   json={"format": "json", "type": "notebook"})
            reply.raise_for_status()
        session = reply.json()
        room = f"{session['format']}:{session['type']}:{session['fileId']}"
        url = f"{self.server.url.replace('http', 'ws', 1)}api/collaboration/room/{room}?sessionId={session['sessionId']}"
        self._ws = await websocket_connect(HTTPRequest(url, headers=headers))
        self._reader = asyncio.get_running_loop().create_task(self._read())
        await self._ws.write_message(create_sync_message(self.notebook.ydoc), binary=True)
        await asyncio.wait_for(self.synced.wait(), SEEN_WITHIN_S)
        await self.until(lambda nb: nb.cell_number > 0, "the document's cells")
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._ws is not None:
            self._ws.close()
        if self._reader is not None:
            self._reader.cancel()

    async def _read(self) -> None:
        from pycrdt import YMessageType, YSyncMessageType, handle_sync_message

        while True:
            message = await self._ws.read_message()
            if message is None:
                return
            if isinstance(message, str) or not message or message[0] != YMessageType.SYNC:
                continue  # awareness and the server's own notices
            answer = handle_sync_message(message[1:], self.notebook.ydoc)
            if answer is not None:
                await self._ws.write_message(answer, binary=True)
            if message[1] == YSyncMessageType.SYNC_STEP2:
                self.synced.set()

    async def change(self, edit: Callable[[Any], None]) -> None:
        """``edit(notebook)`` made here and sent, as a tab sends what its user types."""
        from pycrdt import create_update_message

        state = self.notebook.ydoc.get_state()
        with self.notebook.ydoc.transaction():
            edit(self.notebook)
        await self._ws.write_message(create_update_message(self.notebook.ydoc.get_update(state)), binary=True)

    async def until(self, ready: Callable[[Any], bool], what: str) -> None:
        """Wait (bounded) until ``ready(notebook)`` holds in this client's copy."""
        deadline = time.monotonic() + SEEN_WITHIN_S
        while not ready(self.notebook):
            if time.monotonic() > deadline:
                raise AssertionError(f"the client never saw {what}: {json.dumps(self.notebook.get())[:2000]}")
            await asyncio.sleep(0.05)

    def cells(self) -> list[dict[str, Any]]:
        return [self.notebook.get_cell(i) for i in range(self.notebook.cell_number)]
