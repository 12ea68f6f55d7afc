"""OpenAI-compatible providers: where they live, which key they read, and their quirks — as data in
:data:`webmcp_nb.core.agent_rules.PROVIDERS`, which the side panel's chat reads too.

Every quirk the agent loop honours is a field of :class:`Provider`; the loop never tests a provider's name.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.agent_rules import PROVIDERS, default_provider, provider_for_url, request_fields
from ..core.errors import ConfigurationError, Hint

__all__ = ["Provider", "PRESETS", "PLACEHOLDER_KEY", "resolve_provider"]

PLACEHOLDER_KEY = "not-needed"
"""The key sent to an endpoint that needs none (local servers, a replay's scripted model): no secret, so never
redacted from a session (it would rewrite every "not-needed" in it)."""


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
    stream_usage: bool = True
    """Ask for token usage in streamed replies (``stream_options: {include_usage: true}``)."""
    hosts: tuple[str, ...] = ()
    """Hosts that identify this provider from a base URL (``host``, or ``host:port``)."""

    @property
    def quirks(self) -> dict[str, Any]:
        """The quirks as ``agent_rules`` spells them."""
        return {
            "tool_choice": self.tool_choice,
            "parallel_tool_calls": self.parallel_tool_calls,
            "send_reasoning": self.send_reasoning,
            "extra_body": self.extra_body,
            "stream_usage": self.stream_usage,
        }

    def request_fields(self, *, tools: bool) -> dict[str, Any]:
        """The JSON fields a request carries besides ``model``, ``messages`` and ``tools``."""
        return request_fields(self.quirks, tools=tools, stream=self.stream)

    def api_key(self, explicit: str | None = None) -> str:
        """The key: ``explicit``, else the environment variable; local servers accept any placeholder."""
        if explicit:
            return explicit
        if self.api_key_env and os.environ.get(self.api_key_env):
            return os.environ[self.api_key_env]
        if self.api_key_env is None:
            return PLACEHOLDER_KEY
        others = ", ".join(
            f"{name} ({preset['api_key_env']})"
            for name, preset in PROVIDERS.items()
            if preset["api_key_env"] and name != self.name
        )
        raise ConfigurationError(
            f"no API key for {self.name}: set {self.api_key_env}. The other presets read {others}; local servers "
            "need none (provider='ollama' or 'vllm', or base_url='…').",
            data={"variable": self.api_key_env},
            hint=Hint("set_key", {"variable": self.api_key_env}),
        )


def _from_rules(name: str, preset: dict[str, Any]) -> Provider:
    quirks = preset["quirks"]
    return Provider(
        name,
        preset["base_url"],
        preset["api_key_env"],
        preset["default_model"],
        parallel_tool_calls=quirks["parallel_tool_calls"],
        tool_choice=quirks["tool_choice"],
        send_reasoning=quirks["send_reasoning"],
        extra_body=dict(quirks["extra_body"]),
        stream_usage=quirks["stream_usage"],
        hosts=tuple(preset["hosts"]),
    )


PRESETS: dict[str, Provider] = {name: _from_rules(name, preset) for name, preset in PROVIDERS.items()}


def resolve_provider(
    provider: str | Provider | None, base_url: str | None, *, prompt_mode: bool | None = None
) -> Provider:
    """The preset named ``provider``; without one, the preset ``base_url``'s host belongs to (``any`` when it
    is none of theirs), or, when neither is given, the preset whose key is set in the environment
    (:func:`~webmcp_nb.core.agent_rules.default_provider`). ``base_url`` overrides the preset's address."""
    if isinstance(provider, Provider):
        chosen = provider
    else:
        name = provider or (provider_for_url(base_url) if base_url else default_provider(os.environ))
        if name not in PRESETS:
            raise ConfigurationError(f"unknown provider {name!r}; the presets are {', '.join(PRESETS)}")
        chosen = PRESETS[name]
    if base_url:
        chosen = replace(chosen, base_url=base_url)
    if prompt_mode is not None:
        chosen = replace(chosen, prompt_mode=prompt_mode)
    if not chosen.base_url:
        raise ConfigurationError("provider 'any' needs base_url=... (the endpoint's OpenAI-compatible address)")
    return chosen
