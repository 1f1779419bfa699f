"""The notebook layer: what ``%%agent``, ``%%compare`` and ``%agent`` do in a kernel.

``jupyter_brain.magics`` registers the magics and delegates here: ``parsers`` (flags built
from ``jupyter_brain.settings``), ``agent_cell`` and ``compare_cell`` (one cell each),
``providers`` (``--provider`` names and variables), ``views`` (widget or text),
``kernel_inputs`` (tools, workspace, approver of a turn), ``user_tools``
(``@jupyter_brain.tool``), ``subcommands/`` (``%agent SUBCOMMAND``), and the kernel
plumbing ``approval``, ``kernel_channel`` and ``interpolate``.

Nothing is imported here, so ``%load_ext`` loads only what it needs.
"""
