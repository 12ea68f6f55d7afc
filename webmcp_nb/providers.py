"""OpenAI-compatible providers: where they live, which key they read, and their quirks — in one place.

Every quirk the agent loop honours is a field of :class:`Provider`; the loop never tests a provider's name.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

from .errors import InvalidArgumentsError

__all__ = ["Provider", "PRESETS", "resolve_provider"]


@dataclass(frozen=True)
class Provider:
    """An endpoint and how to talk to it."""

    name: str
    base_url: str
    api_key_env: str | None
    """Environment variable holding the key (``None``: no key needed, e.g. a local server)."""
    default_model: str
    parallel_tool_calls: bool | None = None
    """Send ``parallel_tool_calls`` with this value; ``None`` leaves the parameter out."""
    tool_choice: str | None = "auto"
    """``tool_choice`` to send with tools; ``None`` leaves it out (providers that reject it)."""
    send_reasoning: bool = False
    """Keep ``reasoning_content`` in the assistant messages sent back (DeepSeek rejects it; others need it)."""
    prompt_mode: bool = False
    """No native function calling: tools are described in the system prompt and calls parsed from text."""
    stream: bool = True
    extra_body: dict[str, Any] = field(default_factory=dict)
    """Provider-specific request fields (e.g. Qwen's ``enable_search``)."""

    def api_key(self, explicit: str | None = None) -> str:
        """The key: ``explicit``, else the environment variable; local servers accept any placeholder."""
        if explicit:
            return explicit
        if self.api_key_env and os.environ.get(self.api_key_env):
            return os.environ[self.api_key_env]
        if self.api_key_env is None:
            return "not-needed"
        raise InvalidArgumentsError(
            f"no API key for {self.name}: set {self.api_key_env} in the kernel's environment or pass api_key=...",
            field="api_key",
        )


PRESETS: dict[str, Provider] = {
    p.name: p
    for p in (
        # DeepSeek: limited tool_choice support; deepseek-reasoner returns reasoning_content and rejects it
        # when it comes back in the history.
        Provider("deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "deepseek-chat", tool_choice=None),
        # Qwen through DashScope's OpenAI-compatible mode: built-in search conflicts with tools.
        Provider(
            "qwen",
            "https://dashscope.aliyuncs.com/compatible-mode/v1",
            "DASHSCOPE_API_KEY",
            "qwen-plus",
            parallel_tool_calls=False,
            extra_body={"enable_search": False},
        ),
        # GLM (Zhipu): may return tool-call arguments as an object; wants them back as a string.
        Provider("glm", "https://open.bigmodel.cn/api/paas/v4", "ZHIPUAI_API_KEY", "glm-4-plus"),
        # Moonshot (Kimi): parallel tool calls are unreliable, so they are turned off; reasoning models
        # need their reasoning_content back in the history.
        Provider(
            "moonshot",
            "https://api.moonshot.cn/v1",
            "MOONSHOT_API_KEY",
            "kimi-k2-0905-preview",
            parallel_tool_calls=False,
            send_reasoning=True,
        ),
        Provider("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "gpt-4o-mini"),
        # Local servers: tool-call ids are sometimes missing (the loop makes them up).
        Provider("ollama", "http://127.0.0.1:11434/v1", None, "llama3.1"),
        Provider("vllm", "http://127.0.0.1:8000/v1", None, "default"),
        Provider("any", "", None, ""),
    )
}


def resolve_provider(
    provider: str | Provider | None, base_url: str | None, *, prompt_mode: bool | None = None
) -> Provider:
    """The preset named ``provider`` (default ``any``), with ``base_url`` overriding its address."""
    if isinstance(provider, Provider):
        chosen = provider
    else:
        name = provider or ("any" if base_url else "openai")
        if name not in PRESETS:
            raise InvalidArgumentsError(f"unknown provider {name!r}; presets: {', '.join(PRESETS)}", field="provider")
        chosen = PRESETS[name]
    if base_url:
        chosen = replace(chosen, base_url=base_url)
    if prompt_mode is not None:
        chosen = replace(chosen, prompt_mode=prompt_mode)
    if not chosen.base_url:
        raise InvalidArgumentsError("provider 'any' needs base_url=...", field="base_url")
    return chosen
