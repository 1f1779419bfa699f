"""The package's version (as ``pyproject.toml`` says), below every layer: the parts that
report it (tracing, MCP, the JupyterLab channel) read it here, not from the package's
``__init__``, which loads the extension."""

__version__ = "0.1.0"
