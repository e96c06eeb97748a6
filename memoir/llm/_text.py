"""The text of LangChain messages, for the offline and scripted models and the providers."""

from __future__ import annotations

from langchain_core.messages import BaseMessage


def message_text(message: BaseMessage) -> str:
    """The text of a message, whether its content is a string or a list of blocks."""
    content = message.content
    if isinstance(content, str):
        return content
    texts = [block if isinstance(block, str) else block.get("text") for block in content]
    return "\n".join(text for text in texts if isinstance(text, str))
