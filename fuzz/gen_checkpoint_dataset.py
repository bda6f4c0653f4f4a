# Writes fuzz/checkpoint_dataset.inc: the files of tests/fixtures/lance8/t.lance that
# history needs (manifests, transactions, the tag), as C arrays.
import os, sys
root = 'tests/fixtures/lance8/t.lance'
files = []
for d in ('_versions', '_transactions', '_refs/tags'):
    for n in sorted(os.listdir(os.path.join(root, d))):
        if n.endswith('.manifest') or n.endswith('.txn') or (d == '_refs/tags' and n.endswith('.json')):
            files.append(d + '/' + n)
out = ['/* Generated from tests/fixtures/lance8/t.lance (LanceDB 0.31 / Lance 8.0.0): the manifests,',
       ' * transactions and tag that history() reads; regenerate with python3 fuzz/gen_checkpoint_dataset.py from the repository root. */']
for i, f in enumerate(files):
    b = open(os.path.join(root, f), 'rb').read()
    out.append('static const unsigned char ds_file%d[%d] = {' % (i, len(b)))
    for k in range(0, len(b), 16):
        out.append('\t' + ', '.join('0x%02x' % c for c in b[k:k + 16]) + ',')
    out.append('};')
out.append('static const struct ds_file {\n\tconst char *path;\n\tconst unsigned char *data;\n\tsize_t len;\n} ds_files[] = {')
for i, f in enumerate(files):
    out.append('\t{ "%s", ds_file%d, sizeof ds_file%d },' % (f, i, i))
out.append('};')
open('fuzz/checkpoint_dataset.inc', 'w').write('\n'.join(out) + '\n')
