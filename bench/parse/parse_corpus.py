"""Share of real public CUDA files that warpwise's libclang parse accepts (issue 12 item 2).

Reads bench/parse/corpus.txt (repo, path, commit), takes each repository at that commit from a local
mirror (``MIRROR/<owner>+<name>/repo`` bare git folders, or ``MIRROR/<owner>/<name>`` clones), extracts
it into a temporary folder (so a file's own headers are beside it, as in a checkout) and parses every
listed file twice, side by side: with the real CUDA headers (the default) and with the small shim
(``WARPWISE_CUDA_HEADERS=shim``, the previous parser). Nothing fetched is kept.

    python bench/parse/parse_corpus.py --mirror /work/.mirror [--corpus bench/parse/corpus.txt] [--json out.json]
        [--modes cuda,cuda-noprescan,shim] [--only TEXT,...]

Counted per file: clean = no error diagnostic in the file itself; usable = no *blocking* error (what the
rewrites require: parse.blocking_errors tolerates name-lookup errors in host-only code, e.g. a header of
the project's build that is not found); legacy_api = parsed with the declarations of APIs CUDA 12/13
removed (parse.LEGACY_HEADER: texture references..., brought in only when the first parse fails on them).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path


def _git_dir(mirror: Path, repo: str) -> Path:
    owner, name = repo.split("/")
    for cand in (mirror / f"{owner}+{name}" / "repo", mirror / owner / name / ".git", mirror / owner / name):
        if cand.exists():
            return cand
    raise SystemExit(f"{repo}: not in the mirror {mirror} (expected {mirror}/{owner}+{name}/repo)")


#: What a parse can read: sources and headers (a mirror may lack large binary files, which are skipped).
SOURCE_EXTS = (".cu", ".cuh", ".h", ".hpp", ".hh", ".hxx", ".c", ".cc", ".cpp", ".cxx", ".inc", ".inl", ".def")


def _extract(git: Path, commit: str, dest: Path) -> None:
    listing = subprocess.run(["git", "--git-dir", str(git), "ls-tree", "-r", "-z", commit], check=True,
                             capture_output=True, timeout=300).stdout.decode("utf-8", "replace")
    entries = []
    for rec in listing.split("\0"):
        if not rec or "\t" not in rec:
            continue
        meta, path = rec.split("\t", 1)
        _mode, kind, sha = meta.split()
        if kind == "blob" and path.lower().endswith(SOURCE_EXTS):
            entries.append((sha, path))
    batch = subprocess.run(["git", "--git-dir", str(git), "cat-file", "--batch"], input="".join(
        f"{sha}\n" for sha, _ in entries).encode(), capture_output=True, timeout=300).stdout
    pos = 0
    for _sha, path in entries:
        end = batch.index(b"\n", pos)
        head = batch[pos:end].split()
        pos = end + 1
        if len(head) < 3 or head[1] == b"missing":
            continue
        size = int(head[2])
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[pos:pos + size])
        pos += size + 1


def _one(path: Path) -> dict[str, object]:
    from warpwise.analysis.rewrite.parse import blocking_errors, parse

    t = time.perf_counter()
    p = parse(path.read_text(encoding="utf-8", errors="replace"), str(path))
    blocking = blocking_errors(p)
    first = p.errors[0] if p.errors else None
    return {"headers": p.headers, "seconds": round(time.perf_counter() - t, 3), "errors": len(p.errors),
            "legacy_api": p.legacy_api,
            "blocking": len(blocking),
            "first": f"{first.line}:{first.column}: {first.message}" if first else "",
            "first_blocking": f"{blocking[0].line}:{blocking[0].column}: {blocking[0].message}" if blocking else ""}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirror", required=True, type=Path)
    ap.add_argument("--corpus", type=Path, default=Path(__file__).with_name("corpus.txt"))
    ap.add_argument("--json", type=Path)
    ap.add_argument("--modes", default="cuda,shim",
                    help="comma-separated: cuda (real headers), cuda-noprescan (real headers, project includes "
                    "resolved only after a failed parse: the previous behaviour), shim")
    ap.add_argument("--only", help="only the corpus rows whose path contains one of these comma-separated texts")
    args = ap.parse_args()
    modes = tuple(m for m in args.modes.split(",") if m)
    rows = [ln.split("\t") for ln in args.corpus.read_text().splitlines() if ln and not ln.startswith("#")]
    if args.only:
        rows = [r for r in rows if any(o in r[1] for o in args.only.split(","))]
    from warpwise.analysis.rewrite import parse as P

    results: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="warpwise-corpus-") as tmp:
        trees: dict[tuple[str, str], Path] = {}
        for repo, path, commit in rows:
            if (repo, commit) not in trees:
                dest = Path(tmp) / repo.replace("/", "+")
                _extract(_git_dir(args.mirror, repo), commit, dest)
                trees[(repo, commit)] = dest
            f = trees[(repo, commit)] / path
            row: dict[str, object] = {"repo": repo, "path": path}
            # modes alternate their order file by file: the second parse of a file finds it in the OS cache
            for mode in (modes if len(results) % 2 == 0 else modes[::-1]):
                if mode == "shim":
                    os.environ["WARPWISE_CUDA_HEADERS"] = "shim"
                else:
                    os.environ.pop("WARPWISE_CUDA_HEADERS", None)
                P.PRESCAN_INCLUDES = mode != "cuda-noprescan"
                P._memo.__dict__.clear()  # each mode parses afresh (parse() keeps a per-thread memo)
                row[mode] = _one(f)
            results.append(row)
            c = row[modes[0]]
            assert isinstance(c, dict)
            print(f"{'ok ' if not c['errors'] else ('use' if not c['blocking'] else 'ERR')} {c['seconds']:6.2f}s "
                  f"{repo}:{path} {c['first_blocking'] or c['first']}", file=sys.stderr)
    n = len(results)
    summary: dict[str, object] = {"files": n}
    for mode in modes:
        rs = [r[mode] for r in results]
        clean = sum(1 for r in rs if isinstance(r, dict) and not r["errors"])
        usable = sum(1 for r in rs if isinstance(r, dict) and not r["blocking"])
        secs = sorted(float(r["seconds"]) for r in rs if isinstance(r, dict))
        legacy = sum(1 for r in rs if isinstance(r, dict) and r.get("legacy_api"))
        summary[mode] = {"clean": clean, "clean_share": round(clean / n, 3), "usable": usable,
                         "usable_share": round(usable / n, 3), "legacy_api": legacy, "median_s": secs[n // 2],
                         "p90_s": secs[int(0.9 * n)], "max_s": secs[-1]}
    if "cuda" in modes:
        first_msgs = Counter(str(r["cuda"]["first_blocking"]).split(": ", 1)[-1]  # type: ignore[index]
                             for r in results if r["cuda"]["blocking"])  # type: ignore[index]
        summary["cuda_blocking_messages"] = first_msgs.most_common(10)
        summary["cuda_unclean"] = [f"{r['repo']}:{r['path']} {r['cuda']['first']}"  # type: ignore[index]
                                   for r in results if r["cuda"]["errors"]]  # type: ignore[index]
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "files": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
