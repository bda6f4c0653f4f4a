#!/usr/bin/env bash
# tests/interop/lockcmp.mjs, which setup.sh uses to hold npm to the committed lockfiles:
# a lockfile as Debian 12's npm 9 rewrites it (no "libc" fields) locks the same packages;
# another version or integrity hash of a package, or a package dropped, does not.
set -u
src=${1:?usage: test_lockcmp.sh SOURCE_DIR}
cmp=$src/tests/interop/lockcmp.mjs
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
# mutate LOCK OUT MODE: npm9 (drop every "libc"), version, integrity, dropped (LanceDB's entry)
mutate() {
	node -e '
	  const fs = require("fs"); const [src, dst, mode] = process.argv.slice(1);
	  const j = JSON.parse(fs.readFileSync(src, "utf8"));
	  const k = Object.keys(j.packages).find((p) => p.endsWith("@lancedb/lancedb"));
	  if (mode === "npm9") for (const p of Object.values(j.packages)) delete p.libc;
	  if (mode === "version") j.packages[k].version += "-x";
	  if (mode === "integrity") j.packages[k].integrity = "sha512-x";
	  if (mode === "dropped") delete j.packages[k];
	  fs.writeFileSync(dst, JSON.stringify(j, null, 2));' "$@"
}
fail=0
n=0
for lock in "$src"/tests/interop/peers/*/package-lock.json; do
	n=$((n + 1))
	mutate "$lock" "$t/npm9.json" npm9 || fail=1
	cmp -s "$lock" "$t/npm9.json" && { echo "FAIL: $lock has no libc field to drop"; fail=1; }
	node "$cmp" "$lock" "$t/npm9.json" || { echo "FAIL: $lock: npm 9's rewrite counted as a change"; fail=1; }
	for m in version integrity dropped; do
		mutate "$lock" "$t/$m.json" "$m" || fail=1
		if node "$cmp" "$lock" "$t/$m.json" 2>/dev/null; then
			echo "FAIL: $lock: a changed $m was not noticed"
			fail=1
		fi
	done
done
[ $n -ge 2 ] || { echo "FAIL: expected both peers' lockfiles, found $n"; fail=1; }
[ $fail = 0 ] && echo "test_lockcmp: ok ($n lockfiles)"
exit $fail
