// lockcmp.mjs LOCK_BEFORE LOCK_AFTER: exit 0 when both npm lockfiles lock the same packages at
// the same versions, integrity hashes and (where both say) tarball URLs; otherwise name the
// first few differences and exit 1.  Fields that npm versions write differently (npm 10's
// "libc", "peer", "license") are not compared: the packages installed are what matters.
import fs from 'node:fs';
const [a, b] = process.argv.slice(2).map((f) => JSON.parse(fs.readFileSync(f, 'utf8')).packages || {});
const diffs = [];
for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
  if (key === '') continue; // the project itself
  const x = a[key], y = b[key];
  if (!x || !y) { diffs.push(`${key}: ${x ? 'dropped' : 'added'}`); continue; }
  for (const f of ['version', 'integrity', 'resolved', 'link'])
    if (x[f] !== undefined && y[f] !== undefined && x[f] !== y[f]) diffs.push(`${key}: ${f} ${x[f]} -> ${y[f]}`);
    else if ((f === 'version' || f === 'integrity') && (x[f] === undefined) !== (y[f] === undefined)) diffs.push(`${key}: ${f} ${x[f]} -> ${y[f]}`);
}
if (diffs.length) {
  console.error(`lockcmp: ${diffs.length} difference(s): ${diffs.slice(0, 5).join('; ')}`);
  process.exit(1);
}
