"""Episodic memory (see ``base``): the SQLite store (``sqlite``), the model's extraction of
durable facts (``extractor``) and what a turn recalls (``recall``); the turn uses them
through the memory integration (``agent/integrations/memory``)."""

from .base import Memory, MemoryExtractor, MemoryRetriever
from .extractor import ModelMemoryExtractor
from .sqlite import SQLiteMemory

__all__ = ["Memory", "MemoryExtractor", "MemoryRetriever", "ModelMemoryExtractor", "SQLiteMemory"]
