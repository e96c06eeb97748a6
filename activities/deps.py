"""What activities need, built once per worker."""

from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel

from memoir.embeddings import Embedder, get_embedder
from memoir.settings import Settings
from memoir.stores import Stores
from memoir.tools import ToolRegistry


@dataclass(frozen=True)
class Deps:
    settings: Settings
    stores: Stores
    llm: BaseChatModel
    tools: ToolRegistry
    # None: the embedder the settings name (MEMOIR_EMBEDDING_PROVIDER), one per process.
    embedder: Embedder | None = None

    def embedding_model(self) -> Embedder:
        """The worker's embedder: memories, message records and the memory context use it."""
        return self.embedder if self.embedder is not None else get_embedder(self.settings)
