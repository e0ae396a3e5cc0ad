"""The ``econarena`` inspect model provider (registered by the package's ``inspect_ai`` entry point,
so ``--model econarena/...`` resolves before a task is loaded):

* ``econarena/nash``, ``econarena/level2``, ``econarena/human``, ... : the built-in players of the
  registry (``registry/completion_fns``), played in-process by ``games.builtin``, the same objects
  the plugin's completion fns wrap; ``-M`` args are their completion args (``-M tau=2``).
* ``econarena/chat/MODEL``: MODEL at any OpenAI-compatible endpoint (``--model-base-url`` or
  ``OPENAI_BASE_URL``; ``OPENAI_API_KEY``), each seat call paced, retried and stopped by the plugin's
  call engine (``endpoint``); inspect retries none of them itself.
"""
from __future__ import annotations

from typing import Any, Optional

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from ..calls.policy import CallPolicy
from ..core.prompts import prompt_text
from .cells import PROVIDER, builtin_player
from .endpoint import Endpoint

NO_CONFIG = GenerateConfig()
CHAT = "chat/"


def stop_reason(finish_reason: Optional[str]) -> str:
    """inspect's stop reason for an OpenAI finish_reason: a reply cut off at the token limit is ``max_tokens``."""
    return {"length": "max_tokens", "content_filter": "content_filter"}.get(str(finish_reason), "stop")


@modelapi(name=PROVIDER)
class EconArenaModels(ModelAPI):
    def __init__(self, model_name: str, base_url: Optional[str] = None, api_key: Optional[str] = None,
                 config: GenerateConfig = NO_CONFIG, **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, ["OPENAI_API_KEY"], config)
        self.player: Any = None
        self.endpoint: Optional[Endpoint] = None
        if model_name.startswith(CHAT):
            policy_args = {k: model_args.pop(k) for k in list(model_args) if k in CallPolicy.__dataclass_fields__}
            self.endpoint = Endpoint(model_name[len(CHAT):], base_url, self.api_key, CallPolicy(**policy_args),
                                     **model_args)
            self.base_url = self.endpoint.base_url  # the endpoint played, for the report's row label
        else:
            self.player = builtin_player(model_name, model_args)

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        messages = [{"role": m.role, "content": m.text} for m in input]
        if self.player is not None:  # the plugin's player: prompt text and the call's seed decide its answer
            return ModelOutput.from_content(model=self.model_name, content=self.player.reply(prompt_text(messages),
                                                                                             config.seed))
        assert self.endpoint is not None
        sampling = {"temperature": config.temperature, "max_tokens": config.max_tokens, "seed": config.seed}
        reply = await self.endpoint.ask(messages, **sampling)
        usage = reply.usage
        return ModelOutput(
            model=reply.model,
            choices=[ChatCompletionChoice(message=ChatMessageAssistant(content=reply.text, model=reply.model),
                                          stop_reason=stop_reason(reply.finish_reason))],
            usage=None if usage is None else ModelUsage(
                input_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                output_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
                total_tokens=int(getattr(usage, "total_tokens", 0) or 0)),
        )

    def max_connections(self) -> int:
        # the plugin's cap on calls in flight; the lanes pace an endpoint's below it
        return CallPolicy.max_concurrency

    def connection_key(self) -> str:
        return "players" if self.endpoint is None else repr(self.endpoint.lane)

    def should_retry(self, ex: Exception) -> bool:
        return False  # the call engine retried already, as the call policy says
