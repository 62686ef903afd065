"""Drives `lore mcp` with the official Python MCP SDK: lists the tools, checks their schemas and
annotations, calls every tool with valid arguments and some with invalid ones, and prints one
JSON report on stdout. Usage:
  python_client.py stdio LORE_BIN REPO MODE
  python_client.py http URL MODE [TOKEN]
MODE is `auto` (server/discover, protocol 2026-07-28) or `legacy` (the initialize handshake).
Exits non-zero with a message on the first unexpected answer."""

import asyncio
import json
import sys

import httpx2
from mcp import Client, StdioServerParameters
from mcp.types import Implementation
from mcp.client.streamable_http import streamable_http_client

EXPECTED_TOOLS = {
    "context", "recall", "remember", "show", "list", "history", "update", "supersede", "forget",
    "init", "status", "verify", "scan", "namespaces", "namespace_add", "reindex", "review_list",
    "ctx_init", "ctx_branch", "ctx_switch", "ctx_log", "ctx_status", "ctx_commit", "ctx_merge",
    "ctx_show", "ctx_metadata_get", "ctx_metadata_set", "ctx_read", "ctx_update", "ctx_history",
    "ctx_snapshot", "ctx_recall", "sync", "conflicts", "resolve", "sequentialthinking",
    "think_add", "think_score", "think_outcome", "think_done", "think_search", "think_replay",
    "think_diff",
}
READ_ONLY = {"context", "recall", "show", "list", "history", "status", "verify", "scan",
             "namespaces", "review_list", "ctx_status", "ctx_show", "ctx_metadata_get",
             "ctx_read", "ctx_history", "ctx_snapshot", "ctx_recall", "conflicts",
             "think_search", "think_replay", "think_diff"}


def fail(message):
    print(f"python client: {message}", file=sys.stderr)
    sys.exit(1)


def text(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def ok(client, name, args):
    result = await client.call_tool(name, args)
    if result.is_error:
        fail(f"{name}({args}) failed: {text(result)}")
    return text(result)


async def err(client, name, args, needle):
    result = await client.call_tool(name, args)
    if not result.is_error:
        fail(f"{name}({args}) should be a tool error, got {text(result)[:200]}")
    if needle not in text(result):
        fail(f"{name}({args}) error lacks {needle!r}: {text(result)}")
    return text(result)


async def exercise(client):
    report = {"protocol": client.protocol_version,
              "server": client.server_info.name if client.server_info else None,
              "version": client.server_info.version if client.server_info else None}
    listed = await client.list_tools()
    tools = {t.name: t for t in listed.tools}
    if set(tools) != EXPECTED_TOOLS:
        fail(f"tools differ: {sorted(set(tools) ^ EXPECTED_TOOLS)}")
    for name, tool in tools.items():
        if not tool.description or len(tool.description) < 40:
            fail(f"{name}: description too thin")
        if tool.input_schema.get("type") != "object":
            fail(f"{name}: input schema is not an object schema")
        ann = tool.annotations
        if ann is None or ann.read_only_hint is None:
            fail(f"{name}: no read-only annotation")
        if (name in READ_ONLY) != bool(ann.read_only_hint):
            fail(f"{name}: readOnlyHint {ann.read_only_hint}")
    if not tools["forget"].annotations.destructive_hint:
        fail("forget must be marked destructive")
    if "summary" not in tools["remember"].input_schema.get("required", []):
        fail("remember must require summary")
    called = set()

    async def call(name, args):
        called.add(name)
        return await ok(client, name, args)

    written = json.loads(await call("remember", {
        "namespace": "decisions", "summary": "Use SQLite FTS5 for lexical recall",
        "body": "Bundled, no server; BM25 built in.", "tags": ["index"]}))
    mem_id = written["memory"]["id"]
    secret = json.loads(await call("remember", {
        "namespace": "learnings", "summary": "The staging key is AKIAQ7RZ3WJ5TXNB2KDM"}))
    if secret["memory"]["summary"] != "The staging key is [REDACTED:aws-access-key-id]":
        fail(f"secret not redacted over MCP: {secret['memory']['summary']}")
    if secret.get("secrets", {}).get("decision") != "redacted":
        fail("the secret decision is not reported")
    hits = json.loads(await call("recall", {"query": "lexical recall sqlite"}))
    if not hits["hits"] or hits["hits"][0]["memory"]["id"] != mem_id:
        fail(f"recall did not find the memory: {hits}")
    if any("body" in h["memory"] for h in hits["hits"]):
        fail(f"recall without bodies returned a body key (an omitted body is absent): {hits}")
    full = json.loads(await call("recall", {"query": "lexical recall sqlite", "bodies": True}))
    if full["hits"][0]["memory"].get("body", "").strip() != "Bundled, no server; BM25 built in.":
        fail(f"recall with bodies lacks the body: {full}")
    got = json.loads(await call("show", {"memory": mem_id, "level": "summary"}))
    if "body" in got["memory"]:
        fail("summary level returned a body (an omitted body is absent)")
    await call("update", {"memory": mem_id, "add_tags": ["search"]})
    sup = json.loads(await call("supersede", {"memory": mem_id,
                                              "summary": "Use SQLite FTS5 with trigram tokens"}))
    new_id = sup["new"]["memory"]["id"]
    if sup["new"]["memory"]["tags"] != ["index", "search"]:
        fail(f"supersede did not carry the tags over: {sup['new']['memory']['tags']}")
    versions = json.loads(await call("history", {"memory": new_id}))["versions"]
    if not versions:
        fail("no history")
    if len(json.loads(await call("list", {"namespace": "decisions"}))["memories"]) != 2:
        fail("list decisions")
    await call("init", {})
    if json.loads(await call("status", {}))["total"] != 3:
        fail("status total")
    # Text content is JSON, not HTML: markup in stored text comes back as written.
    marked = 'Escape <b>tags</b> & "quotes" in the UI'
    shown_text = await call("show", {"memory": json.loads(await call("remember", {
        "namespace": "learnings", "summary": marked}))["memory"]["id"]})
    if any(e in shown_text for e in ("&lt;", "&gt;", "&amp;", "&quot;")):
        fail(f"the text content is HTML-escaped: {shown_text}")
    if json.loads(shown_text)["memory"]["summary"] != marked:
        fail(f"the summary did not come back as written: {shown_text}")
    await call("verify", {})
    await call("scan", {"history": True})
    await call("namespace_add", {"name": "runbooks", "description": "how to operate"})
    if "runbooks" not in [n["name"] for n in json.loads(await call("namespaces", {}))["namespaces"]]:
        fail("namespace not registered")
    await call("reindex", {})
    # A call that asks for progress gets notifications: in order, ending complete.
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, total, message))

    reindexed = await client.call_tool("reindex", {}, progress_callback=on_progress)
    if reindexed.is_error:
        fail(f"reindex with progress failed: {text(reindexed)}")
    if not seen:
        fail("no progress notifications for reindex")
    if any(b[0] < a[0] for a, b in zip(seen, seen[1:])):
        fail(f"progress went backwards: {seen}")
    if seen[-1][1] is None or seen[-1][0] != seen[-1][1]:
        fail(f"progress did not end complete: {seen}")
    if not any(m and "indexing" in m for _, _, m in seen):
        fail(f"progress lacks the phase: {seen}")
    report["progress_notifications"] = len(seen)
    ctx_text = await call("context", {"query": "trigram", "budget": 800})
    if "trigram" not in ctx_text:
        fail(f"context lacks the new memory: {ctx_text}")
    await call("ctx_init", {"goal": "Fast recall", "todo": ["measure"]})
    await call("ctx_log", {"text": "ran the benchmark", "tool": "bench", "entities": ["fts5"]})
    logged = json.loads(await call("ctx_log", {"text": "set STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc"}))
    if "sk_live" in json.dumps(logged["step"]) or logged["secrets"][0]["decision"] != "redacted":
        fail(f"a secret in a context step was not redacted: {logged}")
    await call("ctx_commit", {"contribution": "Measured FTS5 recall"})
    await call("ctx_branch", {"name": "trigram", "purpose": "Try trigram tokens"})
    await call("ctx_log", {"text": "trigram index is 3x larger", "entities": ["fts5"]})
    await call("ctx_commit", {"contribution": "Sized the trigram index"})
    status = json.loads(await call("ctx_status", {}))
    if status["branch"] != "trigram":
        fail(f"ctx_status: {status}")
    await call("ctx_metadata_set", {"segment": "env", "value": "db: sqlite"})
    if "sqlite" not in json.loads(await call("ctx_metadata_get", {"segment": "env"}))["yaml"]:
        fail("metadata not set")
    await call("ctx_update", {"content": "# Goal\nFast recall with trigrams\n", "message": "refocus"})
    history = json.loads(await call("ctx_history", {}))["versions"]
    if len(history) < 2:
        fail(f"history too short: {history}")
    snap = await call("ctx_snapshot", {"version": str(history[-1]["version"])})
    if "Fast recall" not in snap:
        fail(f"snapshot: {snap}")
    if "trigrams" not in await call("ctx_read", {}):
        fail("ctx_read did not return the update")
    shown = await call("ctx_show", {"log": True})
    if "trigram index is 3x larger" not in shown:
        fail(f"ctx_show log: {shown}")
    await call("ctx_show", {})
    steps = await call("ctx_recall", {"query": "fts5 benchmark", "budget": 256, "all_branches": True})
    if "ran the benchmark" not in steps:
        fail(f"ctx_recall: {steps}")
    # Merge back into main: the result starts with the merged branch's context.
    merged = json.loads(await call("ctx_merge", {"branch": "trigram", "into": "main",
                                                 "prefer": "theirs"}))
    if next(iter(merged)) != "context" or not merged["text"].startswith("# Branch trigram"):
        fail(f"merge did not show the branch first: {json.dumps(merged)[:300]}")
    await call("ctx_switch", {"name": "trigram"})
    queue = json.loads(await call("review_list", {}))
    if queue != {"suggestions": []}:
        fail(f"queue: {queue}")
    await call("forget", {"memory": new_id})
    if json.loads(await call("conflicts", {})) != {"conflicts": []}:
        fail("a store that never synced has no contradictions")
    # No remote in this repository, no contradiction to resolve: clear errors.
    await err(client, "sync", {}, "no_remote")
    called.add("sync")
    await err(client, "resolve", {"conflict": "decisions/nothing", "keep": "ours"}, "no_conflict")
    called.add("resolve")

    # Reasoning trees: sequential thinking, then every thought operation on the same tree (a
    # session per protocol era: the HTTP test runs both against one repository).
    session = "mcp-" + "".join(c for c in str(client.protocol_version) if c.isalnum())
    first = json.loads(await call("sequentialthinking", {
        "thought": "Index the tags", "thoughtNumber": 1, "totalThoughts": 2,
        "nextThoughtNeeded": True, "session": session}))
    second = json.loads(await call("sequentialthinking", {
        "thought": "Index the tags with a trigram table", "thoughtNumber": 2,
        "totalThoughts": 2, "nextThoughtNeeded": False, "session": session, "score": 0.9}))
    if second["parent"] != first["id"]:
        fail(f"sequentialthinking did not chain: {second}")
    other = json.loads(await call("think_add", {
        "session": session, "parent": first["id"], "text": "Index nothing at all", "score": 0.1}))
    await call("think_score", {"id": other["id"][:10], "score": 0.2})
    await call("think_outcome", {"id": other["id"], "outcome": "failed"})
    found = json.loads(await call("think_search", {"query": "trigram tags", "session": session}))["hits"]
    if not found or found[0]["id"] != second["id"]:
        fail(f"think_search: {found}")
    replay = json.loads(await call("think_replay", {"id": second["id"]}))
    if [n["id"] for n in replay["path"]] != [first["id"], second["id"]]:
        fail(f"think_replay: {replay}")
    diff = json.loads(await call("think_diff", {"from": other["id"], "to": second["id"]}))
    if not any(line["origin"] == "+" for line in diff["lines"]):
        fail(f"think_diff: {diff}")
    done = json.loads(await call("think_done", {
        "session": session, "topic": "tag-index",
        "lesson": "Measure the index size before choosing trigrams."}))
    if done["best"] != second["id"] or done["lesson"]["path"] != "lessons/tag-index.md":
        fail(f"think_done: {done}")
    # A revision of a thought the session does not hold is kept, after the newest thought of
    # the main line (think_add wrote one), and flagged.
    lost = json.loads(await call("sequentialthinking", {
        "thought": "x", "thoughtNumber": 3, "totalThoughts": 3, "nextThoughtNeeded": False,
        "session": session, "isRevision": True, "revisesThought": 9}))
    if "revisesThought 9" not in lost.get("unresolved", "") or lost["parent"] != other["id"]:
        fail(f"sequentialthinking with a missing reference: {lost}")
    # Without a session named, the connection has its own.
    own = json.loads(await call("sequentialthinking", {
        "thought": "Alone", "thoughtNumber": 1, "totalThoughts": 1, "nextThoughtNeeded": False}))
    if own["session"] == session or own["thoughtHistoryLength"] != 1:
        fail(f"sequentialthinking without a session: {own}")
    await err(client, "think_add", {"session": session, "text": "x", "score": 2}, "score")

    # Invalid arguments: tool errors, and the server goes on.
    await err(client, "remember", {"namespace": "decisions"}, "summary")
    await err(client, "remember", {"namespace": "no such space", "summary": "x"}, "namespace")
    await err(client, "remember", {"namespace": "decisions", "summary": "s" * 300}, "summary")
    await err(client, "show", {"memory": "zzzzzzzz"}, "not_found")
    await err(client, "show", {"memory": mem_id, "level": "everything"}, "level")
    await err(client, "recall", {"query": 42}, "")
    await err(client, "update", {"memory": mem_id, "mode": "rewrite"}, "mode")
    await err(client, "ctx_snapshot", {"version": "999"}, "")
    await err(client, "ctx_merge", {"branch": "nope"}, "")
    await err(client, "remember", {"namespace": "decisions", "summary": "ok", "unknown": 1}, "unknown")
    await call("recall", {"query": "still alive"})
    report["called"] = sorted(called)
    if called != EXPECTED_TOOLS:
        fail(f"not every tool was called: {sorted(EXPECTED_TOOLS - called)}")
    report["tools"] = len(tools)
    return report


async def main():
    kind = sys.argv[1]
    if kind == "stdio":
        _, _, binary, repo, mode = sys.argv
        server = StdioServerParameters(command=binary, args=["mcp"], cwd=repo)
    else:
        url, mode = sys.argv[2], sys.argv[3]
        token = sys.argv[4] if len(sys.argv) > 4 else None
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        server = streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=60))
    me = Implementation(name="lore-test-python", version="1.0")
    async with Client(server, mode=mode, cache=None, client_info=me) as client:
        report = await exercise(client)
    print(json.dumps(report))


asyncio.run(main())
