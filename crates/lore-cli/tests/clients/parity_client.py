"""Calls lore's MCP tools in order through the official Python MCP SDK over stdio and prints, for
each call, what came back: {"structured": ..., "is_error": bool, "text": ..., "first_text": ...}
(the first text block alone: the result as JSON). Usage:
  parity_client.py LORE_BIN REPO CALLS_JSON
  parity_client.py LORE_BIN REPO --list      (prints the tools' names)
CALLS_JSON is a file holding [{"tool": NAME, "arguments": {...}}, ...]. The server runs as
`lore mcp --agent parity`, so writes record the same agent as the CLI side of the comparison."""

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters
from mcp.types import Implementation


def text(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def main():
    _, binary, repo, calls_file = sys.argv
    calls = None
    if calls_file != "--list":
        with open(calls_file) as f:
            calls = json.load(f)
    server = StdioServerParameters(command=binary, args=["mcp", "--agent", "parity"], cwd=repo)
    me = Implementation(name="lore-parity", version="1.0")
    out = []
    async with Client(server, mode="auto", cache=None, client_info=me) as client:
        if calls is None:
            listed = await client.list_tools()
            print(json.dumps([t.name for t in listed.tools]))
            return
        for call in calls:
            result = await client.call_tool(call["tool"], call["arguments"])
            structured = result.structured_content
            if result.is_error:
                # Errors carry the error object as text (no structured content: the output
                # schema describes success).
                structured = json.loads(text(result))
            texts = [c.text for c in result.content if getattr(c, "type", "") == "text"]
            out.append({"structured": structured, "is_error": bool(result.is_error),
                        "text": text(result), "first_text": texts[0] if texts else None})
    print(json.dumps(out))


asyncio.run(main())
