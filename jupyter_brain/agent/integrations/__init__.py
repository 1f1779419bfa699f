"""The built-in integrations: each a plug-in of the turn through ``agent/hooks.py``.

One folder each, with its own ``hook.py``. An integration imports neither the loop, nor
``harness.py``, nor another integration; ``AgentHarness`` registers each with one line,
so deleting a folder and its line leaves the rest working. The libraries they attach
(``agent/memory``, ``agent/web``, ``agent/tracing`` …) stay where they are: the notebook
layer uses them without a turn.
"""
