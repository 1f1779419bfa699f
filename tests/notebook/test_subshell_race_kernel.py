"""Creating the widget subshell while a front-end uses the kernel's control channel, in a
real ipykernel: each side gets the answer to its own request.

``%load_ext`` once printed, now and then, ``the kernel refused a subshell: {'status': 'ok'}``
(#40). ipykernel's control thread hands every ``create``/``delete``/``list_subshell_request``
to the shell channel thread through one inproc PAIR socket and reads the answer back from
it; kernel_channel used to send its own ``create`` on that same socket from the main
thread. A PAIR socket answers in order to whoever reads first, so when JupyterLab (which
opens and deletes subshells for its comms) had a request in flight, the main thread could
read the control thread's answer (a delete's ``{'status': 'ok'}``) and the control thread
ours. Here a client keeps the control channel busy with subshell requests while the
kernel creates its widget subshell over and over.
"""

from __future__ import annotations

import queue
import threading

import pytest

from ..kernel_notebooks import drop_keys, printed

pytestmark = pytest.mark.kernel

ROUNDS = 40

# Each round forgets the subshell kernel_channel made, so that it asks for a new one; each
# id it gets must name a live subshell (then it is deleted again, as a front-end would).
CREATE_MANY = f"""
import logging, threading
from jupyter_brain.notebook import kernel_channel
kernel = get_ipython().kernel
manager = kernel.shell_channel_thread.manager
logged = []
class Keep(logging.Handler):
    def emit(self, record):
        logged.append(record.getMessage())
logging.getLogger("jupyter_brain").addHandler(Keep())
wrong = []
for _ in range({ROUNDS}):
    kernel_channel._subshells.clear()
    made = kernel_channel._subshell_id(kernel)
    if not isinstance(made, str) or made not in manager.list_subshell():
        wrong.append(made)
    else:
        done = threading.Event()
        kernel.shell_channel_thread.io_loop.add_callback(lambda: (manager._delete_subshell(made), done.set()))
        done.wait(10)
print("WRONG", len(wrong), wrong[:3])
print("LOGGED", logged[:3])
"""


def test_the_widget_subshell_and_a_front_ends_subshell_requests_each_get_their_own_answer(tmp_path, monkeypatch):
    from jupyter_client.manager import start_new_kernel

    drop_keys(monkeypatch)
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    replies: list[dict] = []
    unanswered: list[str] = []
    stop = threading.Event()

    def front_end() -> None:  # JupyterLab's comms over subshells: requests on the control channel
        while not stop.is_set():
            kc.control_channel.send(kc.session.msg("list_subshell_request", {}))
            try:
                replies.append(kc.control_channel.get_msg(timeout=10))
            except queue.Empty:  # its answer was read by someone else: the control thread waits on
                unanswered.append("list_subshell_request")
                return

    try:
        busy = threading.Thread(target=front_end, daemon=True)
        busy.start()
        out = printed(kc, kc.execute(CREATE_MANY))
        stop.set()
        busy.join(15)
        assert "WRONG 0 []" in out, out
        assert unanswered == []
        assert "LOGGED []" in out, out
        assert replies, "the front-end's requests were answered"
        not_a_list = [r["content"] for r in replies if not isinstance(r["content"].get("subshell_id"), list)]
        assert not_a_list == [], not_a_list[:3]  # no list request got a create's answer
    finally:
        stop.set()
        kc.stop_channels()
        km.shutdown_kernel(now=True)
