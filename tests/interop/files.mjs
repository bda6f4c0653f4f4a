// Walking a local directory tree, for tests and benchmarks (no peer, no lancever binary: a leaf
// that anything may import).
import fs from 'node:fs';
import path from 'node:path';

// Calls fn(rel, abs, dirent) for every entry under dir that is not a directory, depth first in
// readdir order; rel is the path relative to dir with '/' separators.
export function walkFiles(dir, fn) {
  const walk = (d, rel) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name), r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p, r); else fn(r, p, e);
    }
  };
  walk(dir, '');
}
