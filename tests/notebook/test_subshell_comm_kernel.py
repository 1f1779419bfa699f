"""A comm routed to a kernel subshell (``kernel_channel.route_to_subshell``) in a real
ipykernel: its messages are handled while a cell runs, and they do not fire the shell's
``post_execute`` event there, whose inline-matplotlib hook closes every open figure.

Fresh-clone CI lost a ``run_python`` figure that way (#23): the extension's ``ready``
reached the kernel mid-call, the ``comm`` package fired ``post_execute`` around it on the
subshell thread, and matplotlib_inline's ``flush_figures`` closed the figure the agent's
code had just made, before the tool captured it.
"""

from __future__ import annotations

import pytest

from ..kernel_notebooks import drop_keys, printed

pytestmark = pytest.mark.kernel

SETUP = """
import threading
%matplotlib inline
import matplotlib.pyplot as plt
from types import SimpleNamespace
from comm import create_comm
from jupyter_brain.notebook.kernel_channel import route_to_subshell

handled = []
second = threading.Event()
def on_msg(msg):
    handled.append(threading.current_thread().name)
    if len(handled) == 2:
        second.set()

probe = create_comm(target_name="jupyter_brain_test_probe")
probe.on_msg(on_msg)
print("ROUTED", route_to_subshell(SimpleNamespace(comm=probe)), probe.comm_id)
"""

# A figure is open (drawn in interactive mode, so the inline backend would flush it) while
# the cell waits for two messages: the subshell handles messages one after the other, so
# when the second callback runs, the first message's handling, events included, is over.
WAITING_CELL = """
fig = plt.figure()
plt.plot([1, 2, 3])
print("WAITED", second.wait(60), "OPEN", plt.get_fignums(), "ON", sorted(set(handled)))
plt.close("all")
"""


def test_messages_on_the_subshell_leave_the_running_cells_figures_open(tmp_path, monkeypatch):
    from jupyter_client.manager import start_new_kernel

    drop_keys(monkeypatch)
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    try:
        out = printed(kc, kc.execute(SETUP))
        assert "ROUTED True" in out, out  # ipykernel >= 7 (the test environment's)
        comm_id = out.split("ROUTED True", 1)[1].split()[0]
        msg_id = kc.execute(WAITING_CELL)
        for n in range(2):  # what the front-end sends (an approval click, the extension's ready)
            kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"n": n}}))
        out = printed(kc, msg_id)
        assert "WAITED True" in out, out
        assert "OPEN [1]" in out, out  # not closed under the running cell
        assert "MainThread" not in out.split("ON", 1)[1], out  # handled on the subshell
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


# A comm made inside ``comms_routed_from_the_start`` is routed before it opens, and its
# front-end answers at once, before the cell has set a callback (ipywidgets sets it only
# after ``create_comm`` returned; here the gap is made long): the answer is kept on the
# subshell and handed over when the callback is set, in this same cell.
EARLY_ANSWER_CELL = """
import threading
import comm
from jupyter_brain.notebook.kernel_channel import comms_routed_from_the_start

with comms_routed_from_the_start() as routed:
    early = comm.create_comm(target_name="jupyter_brain_test_early")  # as ipywidgets calls it
early.handle_msg.held.wait(60)  # until the answer is held (a bound against hanging)
got = []
early.on_msg(lambda msg: got.append((msg["content"]["data"], threading.current_thread().name)))
print("ROUTED", [c is early for c in routed], "GOT", got)
"""


def test_a_comm_routed_before_it_opens_keeps_an_answer_that_comes_before_its_callback(tmp_path, monkeypatch):
    from jupyter_client.manager import start_new_kernel

    drop_keys(monkeypatch)
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    try:
        def answer(content):
            if content.get("target_name") == "jupyter_brain_test_early":
                kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": content["comm_id"], "data": {"n": 1}}))

        out = printed(kc, kc.execute(EARLY_ANSWER_CELL), on_open=answer)
        # Routed after opening, the answer would queue behind this cell; routed without
        # keeping it, it would be dropped: either way GOT [].
        assert "ROUTED [True] GOT [({'n': 1}, 'MainThread')]" in out, out
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
