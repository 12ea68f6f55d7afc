"""The chat-site bridge: MCP servers' tools (and other tabs' page tools) in a web chat the user already uses —
DeepSeek, Kimi, ChatGPT, any — with no API key. The chat is told about the tools in the user's message, its
assistant's replies are read for calls with the agent's prompt-mode parser, calls run here under the agent's
policy and limits, and their results go back into the chat as data. Site support is data (``chat_sites/*.json``);
the page side is ``extension/page/user-script/chat-bridge.js``.

Uses: core, link, browser, recording, agent, mcp.
"""
