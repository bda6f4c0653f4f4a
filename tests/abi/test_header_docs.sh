#!/usr/bin/env bash
# Every function a public header declares (LV_EXTERN in include/lancever/**/*.h) documents its
# errors and the ownership of its outputs, in the comment block right before the declaration:
#   1. a comment block ends right before it (only blank space between);
#   2. the block has an "Errors:" statement ("Errors: none" for a function that cannot fail);
#   3. if the function takes an `lv_error *`, the text after "Errors:" names an LV_E* code, or
#      refers to another function's errors ("as lv_x()", "those of lv_x()", where lv_x is a
#      declared function) or to the reading errors that lancever/dataset.h defines;
#   4. if it returns a pointer, or has a `**` or `lv_buf *out` parameter (an output the
#      caller gets), the block says whose it is: "borrowed", "static", "caller's", "free(" or
#      "_dispose(" (the function that releases it).
# PENDING lists functions known to fail, in a header another change is rewriting; each must
# still fail (a pending entry that passes is an error: take it off the list).
#   test_header_docs.sh INCLUDE_DIR
set -euo pipefail
inc=${1:?usage: test_header_docs.sh INCLUDE_DIR}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
PENDING=""
exec "$py" - "$inc" "$PENDING" <<'EOF'
import os, re, sys

inc, pending = sys.argv[1], set(sys.argv[2].split())
headers = sorted(os.path.join(d, f) for d, _, fs in os.walk(inc) for f in fs if f.endswith(".h"))
decl_re = re.compile(r"^[ \t]*LV_EXTERN\b([^;]*);", re.M)
decls = []  # (header, line, name, declaration text, comment block or None)
for h in headers:
    text = open(h, encoding="utf-8").read()
    for m in decl_re.finditer(text):
        d = m.group(1)
        name = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", d)
        if not name:
            continue  # not a function
        before = text[:m.start()].rstrip()
        block = None
        if before.endswith("*/"):
            start = before.rfind("/*")
            block = before[start:] if start >= 0 else None
        line = text.count("\n", 0, m.start()) + 1
        decls.append((h, line, name.group(1), d, block))

declared = {n for _, _, n, _, _ in decls}
failures, pending_seen, passed_pending = [], set(), []
for h, line, name, d, block in decls:
    key = "%s:%s" % (os.path.relpath(h, inc).replace("lancever/", "", 1), name)
    why = []
    if block is None:
        why.append("no comment block right before the declaration")
    else:
        flat = " ".join(l.strip(" \t/*") for l in block.splitlines())
        if "Errors:" not in flat:
            why.append('the comment has no "Errors:" statement')
        elif "lv_error" in d:
            errs = flat[flat.index("Errors:"):]
            refs = re.findall(r"\b(?:as|those of)\s+(lv_[a-z0-9_]+)\(\)", errs)
            if not (re.search(r"\bLV_E[A-Z]+\b", errs) or "the reading errors" in errs
                    or any(r in declared for r in refs)):
                why.append('"Errors:" names no LV_E* code and refers to no declared function')
        ret, params = d[:d.index(name)], d[d.index(name):]
        outputs = (ret.rstrip().endswith("*") or "**" in params
                   or re.search(r"lv_buf\s*\*\s*out\b", params))
        if outputs and not re.search(r"borrowed|static|caller's|free\(|_dispose\(", flat, re.I):
            why.append("an output whose owner the comment does not state")
    if key in pending:
        pending_seen.add(key)
        if why:
            print("pending (%s:%d): %s: %s" % (os.path.relpath(h, inc), line, name, "; ".join(why)))
        else:
            passed_pending.append(key)
    elif why:
        failures.append("%s:%d: %s: %s" % (os.path.relpath(h, inc), line, name, "; ".join(why)))

for f in failures:
    print("FAIL " + f)
for k in passed_pending:
    print("FAIL %s is documented now: take it off PENDING in test_header_docs.sh" % k)
for k in sorted(pending - pending_seen):
    print("FAIL %s is in PENDING but not declared" % k)
print("%d declarations checked in %d headers, %d pending" % (len(decls), len(headers), len(pending_seen)))
if len(decls) < 50:
    print("FAIL fewer declarations than expected: is %s the include directory?" % inc)
    sys.exit(1)
sys.exit(1 if failures or passed_pending or pending - pending_seen else 0)
EOF
