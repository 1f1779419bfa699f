"""Episodic memory (see ``base``)."""

from .base import Memory, MemoryExtractor, MemoryRetriever

__all__ = ["Memory", "MemoryExtractor", "MemoryRetriever"]
