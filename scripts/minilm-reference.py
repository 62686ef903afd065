#!/usr/bin/env python3
"""Reference all-MiniLM-L6-v2 sentence vectors, computed without lore's code.

A plain numpy BERT forward pass and a pure-Python BERT uncased tokenizer, written from the
model's published architecture (sentence-transformers: 256-token truncation, mean pooling,
L2 normalisation). lore's `minilm` tier (candle) must agree with these vectors (cosine >= 0.999);
the output is checked in as crates/lore-lib/tests/data/minilm-reference.json.

Usage: python3 scripts/minilm-reference.py MODEL_DIR SENTENCES.txt > minilm-reference.json
Needs: numpy, safetensors (pip install numpy safetensors).
"""

import json
import math
import sys
import unicodedata

import numpy as np
from safetensors.numpy import load_file


def is_punct(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def basic_tokens(text):
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or (unicodedata.category(ch).startswith("C") and ch not in "\t\n\r"):
            continue
        if ch in "\t\n\r" or unicodedata.category(ch) == "Zs":
            out.append(" ")
        elif is_cjk(cp):
            out.append(" " + ch + " ")
        else:
            out.append(ch)
    text = "".join(out).lower()
    text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    words = []
    for chunk in text.split():
        word = ""
        for ch in chunk:
            if is_punct(ch):
                if word:
                    words.append(word)
                    word = ""
                words.append(ch)
            else:
                word += ch
        if word:
            words.append(word)
    return words


def wordpiece(words, vocab):
    ids = []
    for word in words:
        if len(word) > 100:
            ids.append(vocab["[UNK]"])
            continue
        pieces, start, bad = [], 0, False
        while start < len(word):
            end, found = len(word), None
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in vocab:
                    found = vocab[piece]
                    break
                end -= 1
            if found is None:
                bad = True
                break
            pieces.append(found)
            start = end
        ids.extend([vocab["[UNK]"]] if bad else pieces)
    return ids


def layer_norm(x, w, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu(x):
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def encode(ids, t, cfg):
    n = len(ids)
    h = t["embeddings.word_embeddings.weight"][ids]
    h = h + t["embeddings.position_embeddings.weight"][:n]
    h = h + t["embeddings.token_type_embeddings.weight"][0]
    h = layer_norm(h, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])
    heads = cfg["num_attention_heads"]
    size = cfg["hidden_size"] // heads
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        lin = lambda x, name: x @ t[p + name + ".weight"].T + t[p + name + ".bias"]
        q = lin(h, "attention.self.query").reshape(n, heads, size).transpose(1, 0, 2)
        k = lin(h, "attention.self.key").reshape(n, heads, size).transpose(1, 0, 2)
        v = lin(h, "attention.self.value").reshape(n, heads, size).transpose(1, 0, 2)
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(size)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores = scores / scores.sum(-1, keepdims=True)
        ctx = (scores @ v).transpose(1, 0, 2).reshape(n, heads * size)
        h = layer_norm(lin(ctx, "attention.output.dense") + h,
                       t[p + "attention.output.LayerNorm.weight"], t[p + "attention.output.LayerNorm.bias"])
        inner = gelu(lin(h, "intermediate.dense"))
        h = layer_norm(lin(inner, "output.dense") + h, t[p + "output.LayerNorm.weight"], t[p + "output.LayerNorm.bias"])
    pooled = h.mean(0)
    return pooled / np.linalg.norm(pooled)


def main():
    model_dir, sentences_file = sys.argv[1], sys.argv[2]
    cfg = json.load(open(f"{model_dir}/config.json"))
    vocab = {}
    for i, line in enumerate(open(f"{model_dir}/vocab.txt", encoding="utf-8")):
        vocab.setdefault(line.rstrip("\n"), i)
    tensors = {k.removeprefix("bert."): v.astype(np.float64) for k, v in load_file(f"{model_dir}/model.safetensors").items()}
    out = []
    for sentence in open(sentences_file, encoding="utf-8").read().split("\n"):
        if not sentence.strip() or sentence.startswith("#"):
            continue
        sentence = sentence.replace("\\n", "\n")
        ids = [vocab["[CLS]"]] + wordpiece(basic_tokens(sentence), vocab)[:254] + [vocab["[SEP]"]]
        vec = encode(ids, tensors, cfg)
        out.append({"text": sentence, "ids": ids, "vector": [round(float(x), 7) for x in vec]})
    json.dump({"model": "all-MiniLM-L6-v2", "sentences": out}, sys.stdout, indent=None)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
