"""What activities need, built once per worker."""

from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel

from memoir.settings import Settings
from memoir.stores import Stores
from memoir.tools import ToolRegistry


@dataclass(frozen=True)
class Deps:
    settings: Settings
    stores: Stores
    llm: BaseChatModel
    tools: ToolRegistry
