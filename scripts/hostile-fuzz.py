#!/usr/bin/env python3
"""Mutation fuzzing of `conformance check` as a hostile contributor would.

usage: scripts/hostile-fuzz.py [--runs N] [--seed S] [--strace] [--bin PATH] REPO...

Each run copies one of the REPOs (real GitOps repositories, e.g. those of
../shared/corpus), applies a few mutations (byte flips, tabs, control
characters, BOMs and UTF-16, directives, deleted or duplicated lines,
hostile remote bases, escapes and symlinks towards a sentinel directory
outside the tree, odd replacement indexes and patches), and runs
`conformance check --fetch-remote` with every --output format, a `pwn`
program first on PATH (it creates a marker file) and a private cache.

A run fails when:
  * the exit status is not 0, 1 or 2, or a panic is printed;
  * with 0 or 1: the JSON or SARIF does not parse, the JUnit is not
    well-formed XML, or a human/markdown/github report holds a raw control
    character;
  * a command ran (the marker exists), or the sentinel's secret appears in
    any output;
  * a file of the repository copy changed;
  * with --strace: a successful open of a path under the sentinel, or an
    execve of anything but git, ssh, kubectl and kustomize;
  * the run exits 0 although `kubectl kustomize` refuses a mutated
    kustomization directory with a YAML or decoding error (listed for
    review: kubectl is kustomize 5.5, Flux runs 5.8).

Prints one line per failure and a summary; exits 1 when any run failed.
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SECRET = "SENTINEL-SECRET-4f1c9a"

HOSTILE_LINES = [
    '  - "file:///nonexistent//dir?ref=--upload-pack=pwn"',
    '  - "https://127.0.0.1:1/org/repo//x?ref=-c+core.sshCommand=pwn"',
    '  - "git@-oProxyCommand=pwn:org/repo.git//x"',
    '  - "ext::pwn"',
    '  - "ssh://-oProxyCommand=pwn/org/repo//x"',
    "  - ../../../../../../../../{sentinel}/secret.yaml",
    "  - file://{sentinel}//x",
    "  - {sentinel}/secret.yaml",
    "  - http://169.254.169.254/latest/meta-data/x.yaml",
]

KUSTOMIZATION_SNIPPETS = [
    "replacements:\n- source: {kind: ConfigMap, name: x, fieldPath: data.a}\n  targets:\n  - select: {kind: Deployment}\n    fieldPaths: [spec.template.spec.containers.0.args.9]\n",
    "replacements:\n- source: {kind: ConfigMap, name: x}\n  targts: []\n",
    "patches:\n- patch: \"\"\n  target: {kind: ConfigMap}\n",
    "patches:\n- path: /etc/passwd\n",
    "patches:\n- patch: '[{\"op\": \"add\", \"path\": \"/a\", \"value\": 1}]'\n  targt: {kind: ConfigMap}\n",
    "configMapGenerator:\n- name: g\n  files: [../../../../{sentinel}/secret.yaml]\n",
    "images:\n- name: nginx\n  newTg: x\n",
    "kind: [Kustomization]\n",
]


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()


def snapshot(root):
    out = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x != ".git"]
        for f in files:
            p = os.path.join(d, f)
            if os.path.islink(p) or not os.path.isfile(p):
                out[os.path.relpath(p, root)] = "special"
                continue
            out[os.path.relpath(p, root)] = sha(p)
    return out


def mutate(root, rng, sentinel):
    """Applies 1 to 4 mutations; returns the directories touched."""
    files = []
    for d, dirs, fs in os.walk(root):
        dirs[:] = [x for x in dirs if x != ".git"]
        for f in fs:
            if f.endswith((".yaml", ".yml", ".sh", "Taskfile.yml", ".md")) or f == "justfile":
                files.append(os.path.join(d, f))
    kustomizations = [f for f in files if os.path.basename(f) == "kustomization.yaml"]
    touched = set()
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(
            ["flip", "tab", "control", "bom", "utf16", "directive", "dots", "delete",
             "duplicate", "hostile", "snippet", "symlink", "symlink-config", "truncate"]
        )
        if kind in ("hostile", "snippet") and kustomizations:
            target = rng.choice(kustomizations)
        elif files:
            target = rng.choice(files)
        else:
            return touched
        if os.path.islink(target) or not os.path.isfile(target):
            continue
        with open(target, "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        i = rng.randrange(max(1, len(lines)))
        if kind == "flip" and data:
            b = bytearray(data)
            b[rng.randrange(len(b))] = rng.randrange(256)
            data = bytes(b)
        elif kind == "tab":
            lines.insert(i, rng.choice([b"\t", b"\t  # c", b"  \t", b"-\tx"]))
            data = b"\n".join(lines)
        elif kind == "control":
            lines[i] = lines[i] + rng.choice([b"\x1b[31m", b"\x00", b"\x07", b"\r", "\u202e".encode()])
            data = b"\n".join(lines)
        elif kind == "bom":
            data = b"\xef\xbb\xbf" + data
        elif kind == "utf16":
            try:
                data = b"\xff\xfe" + data.decode("utf-8").encode("utf-16-le")
            except UnicodeDecodeError:
                pass
        elif kind == "directive":
            data = rng.choice([b"%YAML 1.2\n---\n", b"%TAG ! x:\n---\n"]) + data
        elif kind == "dots":
            data = data + b"\n...\n...\n"
        elif kind == "delete" and len(lines) > 1:
            del lines[i]
            data = b"\n".join(lines)
        elif kind == "duplicate" and lines:
            lines.insert(i, lines[i])
            data = b"\n".join(lines)
        elif kind == "truncate" and data:
            data = data[: rng.randrange(len(data))]
        elif kind == "hostile":
            line = rng.choice(HOSTILE_LINES).replace("{sentinel}", sentinel).encode()
            text = data.replace(b"resources:\n", b"resources:\n" + line + b"\n", 1)
            data = text if text != data else data + b"\nresources:\n" + line + b"\n"
        elif kind == "snippet":
            data = data + b"\n" + rng.choice(KUSTOMIZATION_SNIPPETS).replace("{sentinel}", sentinel).encode()
        elif kind == "symlink":
            link = os.path.join(os.path.dirname(target), "zz-link.yaml")
            if not os.path.lexists(link):
                os.symlink(os.path.join(sentinel, "secret.yaml"), link)
            touched.add(os.path.dirname(target))
            continue
        elif kind == "symlink-config":
            link = os.path.join(root, "conformance.yaml")
            if os.path.lexists(link):
                os.remove(link)
            os.symlink(os.path.join(sentinel, "secret.yaml"), link)
            continue
        with open(target, "wb") as f:
            f.write(data)
        touched.add(os.path.dirname(target))
    return touched


def raw_control(text):
    return any((ord(c) < 32 and c not in "\n\t") or ord(c) == 127 or 0x80 <= ord(c) <= 0x9F
               or c == "\u202e" for c in text)


def kubectl_refuses(directory):
    if not os.path.isfile(os.path.join(directory, "kustomization.yaml")):
        return None
    try:
        out = subprocess.run(["kubectl", "kustomize", directory], capture_output=True, text=True,
                             timeout=30, env={**os.environ, "GIT_ALLOW_PROTOCOL": "none"})
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode == 0:
        return None
    err = out.stderr
    decoding = ["MalformedYAMLError", "unknown field", "cannot unmarshal", "yaml:", "invalid Kustomization",
                "must specify", "unable to find field", "index "]
    network = ["dial tcp", "no such host", "ext::", "git", "fetch", "http", "protocol", "must resolve to a file"]
    if any(d in err for d in decoding) and not any(n in err for n in network):
        return err.strip().splitlines()[-1][:300]
    return None


def run_once(n, repo, args, rng, bin_dir, work):
    sentinel = os.path.join(work, "sentinel")
    tree = os.path.join(work, f"run-{n}")
    cache = os.path.join(work, f"cache-{n}")
    out_dir = os.path.join(work, f"out-{n}")
    marker = os.path.join(bin_dir, "PWNED")
    shutil.copytree(repo, tree, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    os.makedirs(out_dir)
    touched = mutate(tree, rng, sentinel)
    before = snapshot(tree)
    outputs = {f: os.path.join(out_dir, f"report.{f}") for f in ("sarif", "junit", "markdown", "github", "human")}
    cmd = [args.bin, "check", "--fetch-remote", "--format", "json", "--repo", tree]
    for fmt, path in outputs.items():
        cmd += ["--output", f"{fmt}={path}"]
    env = {"PATH": bin_dir + ":" + os.environ["PATH"], "HOME": work, "CONFORMANCE_CACHE_DIR": cache}
    trace = os.path.join(out_dir, "strace")
    if args.strace:
        cmd = ["strace", "-f", "-qq", "-e", "trace=openat,execve", "-o", trace] + cmd
    try:
        proc = subprocess.run(cmd, capture_output=True, env=env, timeout=120)
    except subprocess.TimeoutExpired:
        return [f"run {n}: timed out"], None
    problems = []
    code = proc.returncode
    stdout = proc.stdout.decode("utf-8", "replace")
    stderr = proc.stderr.decode("utf-8", "replace")
    if code not in (0, 1, 2):
        problems.append(f"exit status {code}: {stderr[-300:]}")
    if "panicked at" in stderr:
        problems.append(f"panic: {stderr[-300:]}")
    if os.path.exists(marker):
        problems.append("a command ran (the marker exists)")
        os.remove(marker)
    texts = [stdout, stderr]
    if code in (0, 1):
        try:
            json.loads(stdout)
        except ValueError as e:
            problems.append(f"stdout is not JSON: {e}")
        for fmt, path in outputs.items():
            if not os.path.exists(path):
                problems.append(f"--output {fmt} not written")
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            texts.append(text)
            if fmt == "sarif":
                try:
                    json.loads(text)
                except ValueError as e:
                    problems.append(f"SARIF is not JSON: {e}")
            elif fmt == "junit":
                try:
                    ET.fromstring(text)
                except ET.ParseError as e:
                    problems.append(f"JUnit is not well-formed: {e}")
            elif raw_control(text):
                problems.append(f"{fmt} holds a raw control character")
    if raw_control(stderr):
        problems.append("stderr holds a raw control character")
    if any(SECRET in t for t in texts):
        problems.append("the sentinel's secret reached an output")
    after = snapshot(tree)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    if changed:
        problems.append(f"repository files changed: {changed[:5]}")
    if args.strace and os.path.exists(trace):
        with open(trace, errors="replace") as f:
            for line in f:
                if "execve(" in line and "= 0" in line:
                    prog = line.split('execve("', 1)[1].split('"', 1)[0]
                    if os.path.basename(prog) not in ("conformance", "git", "ssh", "kubectl", "kustomize",
                                                      "git-remote-http", "git-remote-https", "git-upload-pack"):
                        problems.append(f"executed {prog}")
                if "openat(" in line and sentinel in line and "= -1" not in line:
                    problems.append(f"read outside: {line.strip()[:200]}")
    if code == 0:
        for d in sorted(touched):
            why = kubectl_refuses(d)
            if why:
                problems.append(f"exit 0, but kubectl kustomize refuses {os.path.relpath(d, tree)}: {why}")
    shutil.rmtree(tree, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(out_dir, ignore_errors=True)
    return [f"run {n} ({os.path.basename(repo)}, exit {code}): {p}" for p in problems], code


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--strace", action="store_true")
    parser.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "conformance"))
    parser.add_argument("repos", nargs="+")
    args = parser.parse_args()
    args.bin = os.path.abspath(args.bin)
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="hostile-fuzz-")
    bin_dir = os.path.join(work, "bin")
    os.makedirs(bin_dir)
    os.makedirs(os.path.join(work, "sentinel"))
    with open(os.path.join(work, "sentinel", "secret.yaml"), "w") as f:
        f.write(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {SECRET}\n  namespace: default\ndata:\n  key: {SECRET}\n")
    with open(os.path.join(bin_dir, "pwn"), "w") as f:
        f.write(f"#!/bin/sh\ntouch '{os.path.join(bin_dir, 'PWNED')}'\n")
    os.chmod(os.path.join(bin_dir, "pwn"), 0o755)
    failures, codes = [], {}
    for n in range(args.runs):
        repo = args.repos[n % len(args.repos)]
        problems, code = run_once(n, repo, args, rng, bin_dir, work)
        codes[code] = codes.get(code, 0) + 1
        for p in problems:
            print(p, flush=True)
        failures.extend(problems)
    shutil.rmtree(work, ignore_errors=True)
    print(f"{args.runs} runs (seed {args.seed}{', under strace' if args.strace else ''}): exit statuses "
          f"{dict(sorted(codes.items()))}; {len(failures)} problems")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
