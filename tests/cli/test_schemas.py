#!/usr/bin/env python3
"""Every --json output against its JSON Schema (docs/schemas/, draft 2020-12).

    test_schemas.py LANCEVER DEMO_DATASET SOURCE_DIR

Runs each command with --json on a scratch copy of DEMO_DATASET (live versions, then cleaned-up
ones, a branch, a tag) and validates its stdout against docs/schemas/<name>.schema.json.  The
validator is written here (the pinned test requirements hold no jsonschema): it knows the
keywords the schemas use and refuses any other, so a schema cannot say more than is checked.
Also: every command whose synopsis (lancever help) has --json has a schema, every schema says
draft 2020-12, and the validator rejects broken records (it can fail).
"""
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

DRAFT = "https://json-schema.org/draft/2020-12/schema"
KNOWN = {"$schema", "$defs", "$ref", "title", "description", "type", "properties", "required",
         "additionalProperties", "items", "enum", "minimum", "pattern", "anyOf", "allOf"}
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


class Validator:
    def __init__(self, schema_dir):
        self.dir = schema_dir
        self.files = {}

    def load(self, name):
        if name not in self.files:
            with open(os.path.join(self.dir, name), encoding="utf-8") as f:
                self.files[name] = json.load(f)
        return self.files[name]

    def resolve(self, ref, base):
        name, _, pointer = ref.partition("#")
        name = name or base
        node = self.load(name)
        for part in filter(None, pointer.split("/")):
            node = node[part]
        return node, name

    def is_type(self, value, t):
        if t == "integer":
            return isinstance(value, int) and not isinstance(value, bool)
        if t == "number":
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        return isinstance(value, TYPES[t])

    def errors(self, value, schema, base, where="$"):
        """The list of reasons `value` does not match `schema` (empty: it does)."""
        unknown = set(schema) - KNOWN
        if unknown:
            return [f"{base}: unknown keyword(s) {sorted(unknown)} (the validator would ignore them)"]
        out = []
        if "$ref" in schema:
            target, name = self.resolve(schema["$ref"], base)
            out += self.errors(value, target, name, where)
        if "type" in schema:
            types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(self.is_type(value, t) for t in types):
                return out + [f"{where}: {json.dumps(value)[:60]} is not {types}"]
        if "enum" in schema and value not in schema["enum"]:
            out.append(f"{where}: {value!r} not in {schema['enum']}")
        if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
            out.append(f"{where}: {value} < {schema['minimum']}")
        if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
            out.append(f"{where}: {value!r} does not match /{schema['pattern']}/")
        for sub in schema.get("allOf", []):
            out += self.errors(value, sub, base, where)
        if "anyOf" in schema and all(self.errors(value, s, base, where) for s in schema["anyOf"]):
            out.append(f"{where}: matches none of anyOf")
        if isinstance(value, dict):
            props = schema.get("properties", {})
            out += [f"{where}: missing '{k}'" for k in schema.get("required", []) if k not in value]
            extra = schema.get("additionalProperties", True)
            for k, v in value.items():
                if k in props:
                    out += self.errors(v, props[k], base, f"{where}.{k}")
                elif extra is False:
                    out.append(f"{where}: unexpected key '{k}'")
                elif isinstance(extra, dict):
                    out += self.errors(v, extra, base, f"{where}.{k}")
        if isinstance(value, list) and "items" in schema:
            for i, v in enumerate(value):
                out += self.errors(v, schema["items"], base, f"{where}[{i}]")
        return out


def main():
    lv, demo, src = sys.argv[1:4]
    schemas = os.path.join(src, "docs", "schemas")
    fix = os.path.join(src, "tests", "fixtures")
    val = Validator(schemas)
    passed = failed = 0

    def ok(cond, what):
        nonlocal passed, failed
        if cond:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {what}")

    # the schemas themselves
    names = sorted(f[: -len(".schema.json")] for f in os.listdir(schemas) if f.endswith(".schema.json"))
    for n in names:
        ok(val.load(n + ".schema.json").get("$schema") == DRAFT, f"{n}: $schema is draft 2020-12")
    help_text = subprocess.run([lv, "help"], capture_output=True, text=True, check=True).stdout
    synopses, cur = {}, None
    for line in help_text.split("commands:")[1].split("\n\n")[0].splitlines():
        m = re.match(r"^  ([a-z]+) ", line)
        if m:
            cur = m.group(1)
            synopses[cur] = line
        elif cur and line.startswith("   ") and line.strip().startswith("["):
            synopses[cur] += line
    with_json = sorted(c for c, s in synopses.items() if "[--json]" in s)
    ok(len(with_json) >= 10, f"the help lists the commands with --json: {with_json}")
    ok(sorted(set(names) - {"common", "cleanup-explain"}) == with_json,
       f"one schema per command with --json: schemas {names}, commands {with_json}")

    tmp = tempfile.mkdtemp(prefix="lv-schemas.")
    try:
        ds = os.path.join(tmp, "ds.lance")
        shutil.copytree(demo, ds)
        # a branch (tags --json lists it)
        os.makedirs(os.path.join(ds, "tree", "feat", "_versions"))
        os.makedirs(os.path.join(ds, "_refs", "branches"), exist_ok=True)
        for n in ("18446744073709551613", "18446744073709551614"):
            shutil.copy(os.path.join(demo, "_versions", n + ".manifest"),
                        os.path.join(ds, "tree", "feat", "_versions"))
        with open(os.path.join(ds, "_refs", "branches", "feat.json"), "w") as f:
            f.write('{"parentBranch":null,"parentVersion":2,"createAt":1796232072991,"manifestSize":501}')

        def run(schema, *args, status=0):
            r = subprocess.run([lv, *args], capture_output=True, text=True)
            what = f"{' '.join(args[:1] + args[2:])} against {schema}.schema.json"
            ok(r.returncode == status, f"{what}: exit {r.returncode}: {r.stderr[:300]}")
            try:
                j = json.loads(r.stdout)
            except ValueError as e:
                ok(False, f"{what}: not JSON ({e}): {r.stdout[:200]}")
                return None
            errs = val.errors(j, val.load(schema + ".schema.json"), schema + ".schema.json")
            ok(not errs, f"{what}: {errs[:5]}")
            return j

        v = run("versions", "versions", ds, "--json")
        run("versions", "versions", ds, "--json", "--reverse", "--limit", "2", "--since", "indexed")
        run("history", "history", ds, "--json")
        run("show", "show", ds, "3", "--json")
        run("asof", "asof", ds, "2026-12-02T17:21:13.003Z", "--json")
        run("diff", "diff", ds, "1", "latest", "--json")
        run("tags", "tags", ds, "--json")
        run("info", "info", ds, "--json")
        run("cleanup", "cleanup", ds, "--dry-run", "--json", "--before-version", "4")
        run("cleanup-explain", "cleanup", ds, "--explain", "--json", "--before-version", "4")
        run("expire", "expire", ds, "--dry-run", "--json", "--before-version", "4")
        run("checkpoint", "checkpoint", ds, "--json")
        # cleaned-up versions: records from the checkpoint, nulls where unknown
        run("cleanup", "cleanup", ds, "--json", "--before-version", "3")
        run("history", "history", ds, "--json")
        run("show", "show", ds, "1", "--json")
        run("check", "check", ds, "--json")
        run("info", "info", ds, "--json")
        run("inspect", "inspect", "--json", os.path.join(fix, "lance12", "numeric_2_2.lance"))
        run("inspect", "inspect", "--json", os.path.join(fix, "lance14", "nested_2_2.lance"), status=1)

        # the validator fails on what the schemas refuse
        if v and isinstance(v[0], dict) and "metadata" in v[0]:
            rec = v[0]
            bad = [copy.deepcopy(rec) for _ in range(6)]
            del bad[0]["metadata"]
            bad[1]["timestamp"] = rec["timestamp_millis"]
            bad[2]["metadata"]["total_rows"] = int(rec["metadata"]["total_rows"])
            bad[3]["rows"] = 5
            bad[4]["tags"] = [1]
            bad[5]["version"] = -1
            for i, b in enumerate(bad):
                ok(val.errors([b], val.load("versions.schema.json"), "versions.schema.json"),
                   f"a broken record ({i}) is refused")
            ok(val.errors({"x": 1}, {"type": "object", "minProperties": 1}, "-"),
               "an unknown keyword is refused, not ignored")
    finally:
        shutil.rmtree(tmp)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
