"""Hostile script artifacts (stdlib only), each the start of a `rank.py` whose end is the honest ranker: one finds the
dataset's real folder through the command lines and environments of the processes it can see (its parent's first),
one walks up from its working folder, one looks for the ledger both ways and writes a record there. The first two,
when they find the real judgments, match the blind copy to the real folder by text and put the relevant documents
first (exactly what `cheat` does on the real folder, which is how their stored results are made); when they find
nothing they rank honestly, which is not the ranking stored."""

# the ranking a cheat gives: relevant documents first (by grade), the honest word overlap below; ties by the text
CHEAT = '''import hashlib, json, os, pathlib, sys
def cheat(found, data, out):
    read = lambda folder, name: [json.loads(line) for line in open(f"{folder}/{name}", encoding="utf-8")]
    key = lambda d: (d.get("title", ""), d["text"])
    real_doc = {key(d): d["_id"] for d in read(found, "corpus.jsonl")}
    real_query = {q["text"]: q["_id"] for q in read(found, "queries.jsonl")}
    grades = {}
    for row in open(f"{found}/qrels/test.tsv", encoding="utf-8").read().splitlines()[1:]:
        query, doc, grade = row.split("\\t")[:3]
        grades[(query, doc)] = int(grade)
    def terms(d):
        text = d.get("title", "") + " " + d["text"]
        return set(text.lower().split()), int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 2**32 / 1000
    docs = [(d["_id"], real_doc.get(key(d)), *terms(d)) for d in read(data, "corpus.jsonl")]
    with open(out, "w") as run:
        for query in read(data, "queries.jsonl"):
            real, words = real_query.get(query["text"]), set(query["text"].lower().split())
            scored = sorted(((1000 * grades.get((real, orig), 0) + len(words & seen) + tie, doc)
                             for doc, orig, seen, tie in docs), reverse=True)
            for rank, (score, doc) in enumerate(scored[:100], 1):
                run.write(f"{query['_id']} Q0 {doc} {rank} {score:.9f} cheat\\n")
'''

# every visible process's command line and environment (the parent's first): a folder holding qrels/test.tsv, or a
# data root holding classic/cranfield/; a folder named reproductions
BY_PROCESSES = '''def by_processes(wanted):
    pids = [os.getppid()] + sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    for pid in pids:
        for name in ("cmdline", "environ"):
            try:
                text = open(f"/proc/{pid}/{name}", "rb").read().decode("utf-8", "replace")
            except OSError:
                continue
            for word in text.replace("\\0", " ").replace("=", " ").split():
                for folder in (pathlib.Path(word), pathlib.Path(word) / "classic" / "cranfield"):
                    try:
                        if wanted(folder):
                            return folder
                    except OSError:
                        pass
    return None
'''

# each folder above the working folder, and three levels below each (system folders left out)
BY_WALKING_UP = '''def by_walking_up(wanted):
    skip = {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/opt", "/proc", "/sys", "/dev"}
    for top in [pathlib.Path.cwd(), *pathlib.Path.cwd().parents]:
        level = [top]
        for _ in range(4):
            below = []
            for folder in level:
                try:
                    if str(folder) in skip or folder.is_symlink() and folder != top:
                        continue
                    if wanted(folder):
                        return folder
                    below += [p for p in folder.iterdir() if p.is_dir()]
                except OSError:
                    pass
            level = below[:5000]
    return None
'''

JUDGMENTS = '''judged = lambda folder: (folder / "qrels" / "test.tsv").is_file() and (folder / "corpus.jsonl").is_file()
'''

HOSTILE = {
    "proc": CHEAT + BY_PROCESSES + JUDGMENTS + '''found = by_processes(judged)
if found is not None:
    cheat(found, sys.argv[1], sys.argv[2])
    sys.exit(0)
''',
    "walk": CHEAT + BY_WALKING_UP + JUDGMENTS + '''found = by_walking_up(judged)
if found is not None:
    cheat(found, sys.argv[1], sys.argv[2])
    sys.exit(0)
''',
    "ledger": CHEAT + BY_PROCESSES + BY_WALKING_UP + '''ledger = lambda folder: folder.name == "reproductions" and folder.is_dir()
found = by_processes(ledger) or by_walking_up(ledger)
if found is not None:  # a record for a result that never ran
    (found / "org__other").mkdir(exist_ok=True)
    (found / "org__other" / "classic__cranfield.json").write_text(json.dumps({"format": "irboard-reproduction/1"}))
''',
}

# the cheat run on the real folder: the ranking a hostile script's result stores
STORED = CHEAT + "cheat(sys.argv[1], sys.argv[1], sys.argv[2])\n"
