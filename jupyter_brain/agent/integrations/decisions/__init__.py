"""Decisions in a turn: each finished turn's record (``agent/decisions``), and the learner
of tool use, which ranks the tools of the next turns."""

from .hook import DecisionRecording, ToolLearning

__all__ = ["DecisionRecording", "ToolLearning"]
