#!/usr/bin/env python3
"""Writes the `.GCC/` workspace lore's GCC import tests read, with contexa 1.1.2 (a published
implementation of the Git-Context-Controller layout):

    python3 -m venv /tmp/contexa && /tmp/contexa/bin/pip install contexa==1.1.2
    /tmp/contexa/bin/python scripts/gcc-fixture.py crates/lore-cli/tests/fixtures/gcc/contexa

The workspace: main and one branch, three commits (one on main, one on the branch, the merge),
three observation-thought-action records (two on main, one on the branch, which the merge
copies to main under a "Merged from" header). Timestamps are contexa's own (the moment it ran).
"""

import shutil
import sys
from pathlib import Path

from contexa import GCCWorkspace

out = Path(sys.argv[1])
if out.exists():
    shutil.rmtree(out)
out.mkdir(parents=True)
ws = GCCWorkspace(str(out))
ws.init("Make the report page load in under a second.")
ws.log_ota("The report page takes 4 s to load",
           "Each row may query the database on its own",
           "Profile the page with query logging on")
ws.log_ota("Query log shows 300 selects per page",
           "That is the N+1 pattern",
           "Look for the loop that loads authors")
ws.commit("Found the N+1 query in the report loop.")
ws.branch("batch-loads", "Try loading all authors in one query")
ws.log_ota("Batched query returns 300 authors in 12 ms",
           "One query is enough",
           "Replace the per-row load with the batch")
ws.commit("Batched the author loads: page renders in 0.6 s.")
ws.merge("batch-loads")
(out / ".GCC" / ".lock").unlink(missing_ok=True)
print(f"wrote {out / '.GCC'}")
