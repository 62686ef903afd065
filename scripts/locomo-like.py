#!/usr/bin/env python3
"""Builds a file in LoCoMo's schema (locomo10.json) from a LongMemEval file, for `lore eval locomo`.

LoCoMo's own data is not used to tune lore (it is kept for figures lore has not seen). This file
has its shape: conversations of a few hundred short turns between two speakers over dozens of
dated sessions, questions whose evidence is a list of turns (`D<session>:<turn>`), often spread
over several sessions (LongMemEval's multi-session questions become multi-hop ones).

Each conversation takes a share of the questions: their answer sessions, plus sessions from their
haystacks as filler, sorted by date. Every question's sessions are moved in time so that it is
asked at the conversation's end (relative questions such as "a week ago" keep their meaning when
"now" is the last turn). The user is "Sam", the assistant "Alex"; "I"/"my"/"me" in a question
become Sam. Assistant turns are cut to their first sentences unless they hold evidence. Evidence
is every turn marked `has_answer` in a question's answer sessions. Categories: multi-session 1
(multi-hop), temporal-reasoning 2, knowledge-update 3, single-session-* 4; abstention questions
are dropped. The output depends only on the input and --seed.

usage: scripts/locomo-like.py LONGMEMEVAL.json[.gz] OUT.json [--conversations 10] [--filler 1.0]
"""

import argparse
import datetime as dt
import gzip
import json
import random
import re

CATEGORY = {
    "multi-session": 1,
    "temporal-reasoning": 2,
    "knowledge-update": 3,
    "single-session-user": 4,
    "single-session-assistant": 4,
    "single-session-preference": 4,
}
USER, ASSISTANT = "Sam", "Alex"


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def parse_date(s):
    # "2023/05/20 (Sat) 07:47"
    day, _, clock = s.split(" ")
    return dt.datetime.strptime(f"{day} {clock}", "%Y/%m/%d %H:%M")


def locomo_date(t):
    hour = t.hour % 12 or 12
    half = "am" if t.hour < 12 else "pm"
    return f"{hour}:{t.minute:02d} {half} on {t.day} {t.strftime('%B')}, {t.year}"


def shorten(text, limit=240):
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    return cut[: end + 1] if end > 40 else cut.rstrip() + "…"


def third_person(question):
    q = re.sub(r"\bI'm\b", f"{USER} is", question)
    q = re.sub(r"\bI've\b", f"{USER} has", q)
    q = re.sub(r"\bI'd\b", f"{USER} would", q)
    q = re.sub(r"\b[Mm]y\b", f"{USER}'s", q)
    q = re.sub(r"\b(I|me|myself)\b", USER, q)
    return q


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("--conversations", type=int, default=10)
    ap.add_argument("--filler", type=float, default=1.0,
                    help="filler sessions per answer session")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    questions = [q for q in read(args.source)
                 if not q["question_id"].endswith("_abs") and q["question_type"] in CATEGORY]
    questions.sort(key=lambda q: q["question_id"])
    rng.shuffle(questions)
    end = dt.datetime(2024, 6, 28, 18, 0)
    samples = []
    for c in range(args.conversations):
        share = questions[c :: args.conversations]
        sessions = {}  # session id -> (date, turns)
        for q in share:
            shift = end - parse_date(q["question_date"])
            by_id = dict(zip(q["haystack_session_ids"],
                             zip(q["haystack_dates"], q["haystack_sessions"])))
            answers = [s for s in q["answer_session_ids"] if s in by_id]
            others = [s for s in q["haystack_session_ids"] if s not in answers]
            rng.shuffle(others)
            fill = others[: round(len(answers) * args.filler)]
            for sid in answers + fill:
                if sid not in sessions:
                    date, turns = by_id[sid]
                    sessions[sid] = (parse_date(date) + shift, turns)
        order = sorted(sessions, key=lambda s: (sessions[s][0], s))
        conversation = {"speaker_a": USER, "speaker_b": ASSISTANT}
        dia = {}  # (session id, turn index) -> dia_id
        for n, sid in enumerate(order, start=1):
            date, turns = sessions[sid]
            conversation[f"session_{n}_date_time"] = locomo_date(date)
            out = []
            for t, turn in enumerate(turns):
                if not turn["content"].strip():
                    continue
                dia_id = f"D{n}:{len(out) + 1}"
                dia[(sid, t)] = dia_id
                user = turn["role"] == "user"
                text = turn["content"] if user or turn.get("has_answer") else shorten(turn["content"])
                out.append({"speaker": USER if user else ASSISTANT, "dia_id": dia_id,
                            "text": " ".join(text.split())})
            conversation[f"session_{n}"] = out
        qa = []
        for q in share:
            evidence = [dia[(sid, t)]
                        for sid in q["answer_session_ids"] if sid in sessions
                        for t, turn in enumerate(sessions[sid][1])
                        if turn.get("has_answer") and (sid, t) in dia]
            if evidence:
                qa.append({"question": third_person(q["question"]), "answer": str(q.get("answer", "")),
                           "evidence": sorted(evidence, key=lambda d: tuple(
                               int(x) for x in d[1:].split(":"))),
                           "category": CATEGORY[q["question_type"]]})
        samples.append({"sample_id": f"lme-conv-{c + 1}", "conversation": conversation, "qa": qa})
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(samples, f)
    turns = sum(len(v) for s in samples for k, v in s["conversation"].items()
                if k.startswith("session_") and not k.endswith("date_time"))
    print(f"{len(samples)} conversations, {turns} turns, {sum(len(s['qa']) for s in samples)} questions")


if __name__ == "__main__":
    main()
