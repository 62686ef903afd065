"""The other side of lore's interop tests: contexa 1.1.2 and git-notes-memory 0.12.0, driven
through their own Python APIs (installed by scripts/setup-clients.sh). Prints JSON.

  contexa-read ROOT        what contexa reads from ROOT/.GCC: per branch its commits, its
                           observation-thought-action records and its metadata
  notes-capture REPO       captures the memories given as a JSON list on stdin
                           ({namespace, summary, content, tags}) with the package's CaptureService
  notes-read REPO          the memories the package reads from REPO's notes: its note parser
                           (collect_notes), then a full reindex and the index's records
"""

import json
import sqlite3
import sys
from pathlib import Path

# git-notes-memory's index loads the sqlite-vec extension; a Python built without extension
# loading gets pysqlite3 (the same API) in its place.
if not hasattr(sqlite3.Connection, "enable_load_extension"):
    import pysqlite3

    sys.modules["sqlite3"] = pysqlite3


def contexa_read(root):
    from contexa import GCCWorkspace

    ws = GCCWorkspace(root)
    ws.load()
    out = {"roadmap": ws.context(k=1).main_roadmap, "branches": {}}
    for name in sorted(ws.list_branches()):
        ctx = ws.context(branch=name, k=1_000_000)
        meta = ctx.metadata
        out["branches"][name] = {
            "commits": [
                {
                    "id": c.commit_id,
                    "timestamp": c.timestamp,
                    "purpose": c.branch_purpose,
                    "previous": c.previous_progress_summary,
                    "contribution": c.this_commit_contribution,
                }
                for c in ctx.commits
            ],
            "records": [
                {
                    "step": r.step,
                    "timestamp": r.timestamp,
                    "observation": r.observation,
                    "thought": r.thought,
                    "action": r.action,
                }
                for r in ctx.ota_records
            ],
            "metadata": None
            if meta is None
            else {
                "name": meta.name,
                "purpose": meta.purpose,
                "created_from": meta.created_from,
                "status": meta.status,
            },
        }
    return out


def notes_capture(repo):
    from git_notes_memory.capture import CaptureService
    from git_notes_memory.git_ops import GitOps

    service = CaptureService(git_ops=GitOps(Path(repo)))
    out = []
    for m in json.load(sys.stdin):
        result = service.capture(
            m["namespace"], m["summary"], m["content"], tags=m.get("tags") or None
        )
        if not result.success:
            raise SystemExit(f"capture failed: {result.warning}")
        out.append({"id": result.memory.id, "content": result.memory.content})
    return out


def notes_read(repo):
    from git_notes_memory.config import get_project_index_path
    from git_notes_memory.recall import RecallService
    from git_notes_memory.sync import SyncService

    sync = SyncService(Path(repo))
    parsed = [
        {
            "namespace": r.namespace,
            "summary": r.summary,
            "body": r.body,
            "tags": list(r.tags or []),
        }
        for r in sync.collect_notes()
    ]
    reindexed = sync.reindex(full=True)
    recall = RecallService(index_path=get_project_index_path(Path(repo)))
    namespaces = sorted({p["namespace"] for p in parsed})
    indexed = [
        {"id": m.id, "namespace": m.namespace, "summary": m.summary, "content": m.content}
        for ns in namespaces
        for m in recall.get_by_namespace(ns)
    ]
    return {"parsed": parsed, "reindexed": reindexed, "indexed": indexed}


def main():
    command, target = sys.argv[1], sys.argv[2]
    run = {"contexa-read": contexa_read, "notes-capture": notes_capture, "notes-read": notes_read}
    json.dump(run[command](target), sys.stdout, indent=1)


if __name__ == "__main__":
    main()
