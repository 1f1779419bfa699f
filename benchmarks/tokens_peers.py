"""The peers' side of ``tokens_vs_peers.py``: run in the peers' venv, not the project's.

    /tmp/peers/bin/python benchmarks/tokens_peers.py smolagents|pydantic-ai BASE_URL

Each framework gets the same two tools, described as briefly as their own examples do:
``read_file(path)`` and ``run_python(code)`` (stdout captured). Prints the answer last.
"""

from __future__ import annotations

import contextlib
import io
import sys

PROMPT = "Which region had the highest total sales in sales.csv? Give the region and its total."


def read_file(path: str) -> str:
    """Read a text file.

    Args:
        path: path of the file to read.
    """
    with open(path, encoding="utf-8") as f:
        return f.read()


def run_python(code: str) -> str:
    """Run Python code and return what it printed.

    Args:
        code: the Python source to run.
    """
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code, {})
    return out.getvalue()


def run_smolagents(base_url: str) -> str:
    from smolagents import OpenAIServerModel, ToolCallingAgent, tool

    model = OpenAIServerModel("gpt-4o", api_base=base_url, api_key="sk-benchmark")
    agent = ToolCallingAgent(tools=[tool(read_file), tool(run_python)], model=model, verbosity_level=0)
    return str(agent.run(PROMPT))


def run_pydantic_ai(base_url: str) -> str:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(base_url=base_url, api_key="sk-benchmark"))
    agent = Agent(model, tools=[read_file, run_python])
    return str(agent.run_sync(PROMPT).output)


if __name__ == "__main__":
    framework, url = sys.argv[1], sys.argv[2]
    print({"smolagents": run_smolagents, "pydantic-ai": run_pydantic_ai}[framework](url))
