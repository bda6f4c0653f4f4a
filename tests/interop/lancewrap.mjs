// A Lance file that LanceDB did not write, made readable by LanceDB (docs/lance-reference.md, "The LanceDB peers"):
// wrapLanceFile() makes it the only data file of a new dataset whose version 1 manifest is
// written here by hand (protobuf: schema fields, one fragment, version 1, V2 manifest name).
// Also the checkpoint file's 15 columns (CP_FIELDS) and their manifest schema (CP_SCHEMA),
// for tests that have LanceDB read a checkpoint or an archive segment, and the protobuf encoder
// (u, bytes, packed, field, manifestBytes) for tests that write a manifest by hand.
import fs from 'node:fs';
import path from 'node:path';

// The hand-written protobuf encoder (also for tests that write a manifest of their own):
// u = varint field, bytes = length-delimited field, packed = packed varints, field = a schema field.
const vint = (n) => { n = BigInt.asUintN(64, BigInt(n)); const o = [];
  do { let b = Number(n & 0x7fn); n >>= 7n; if (n) b |= 0x80; o.push(b); } while (n); return Buffer.from(o); };
export const u = (f, v) => Buffer.concat([vint(f << 3), vint(v)]);
export const bytes = (f, b) => { b = Buffer.from(b); return Buffer.concat([vint((f << 3) | 2), vint(b.length), b]); };
export const packed = (f, a) => bytes(f, Buffer.concat(a.map(vint)));
export const field = (name, id, type, nullable) => bytes(1, Buffer.concat([bytes(2, name),
  id ? u(3, id) : Buffer.alloc(0), u(4, -1), bytes(5, type), nullable ? u(6, 1) : Buffer.alloc(0)]));
// manifest file = u32 len | Manifest | u64 0 | u16 0 | u16 2 | "LANC"
const FOOTER = (() => { const t = Buffer.alloc(16); t.writeUInt16LE(2, 10); t.write('LANC', 12, 'latin1'); return t; })();
export const manifestBytes = (pb) => { const len = Buffer.alloc(4); len.writeUInt32LE(pb.length); return Buffer.concat([len, pb, FOOTER]); };

// The 15 per-version columns of a checkpoint, in file order.
export const CP_FIELDS = ['version', 'timestamp_millis', 'total_fragments', 'total_data_files',
  'total_files_size', 'total_deletion_files', 'total_data_file_rows', 'total_deletion_file_rows',
  'total_rows', 'is_tagged', 'is_cleaned_up', 'transaction_uuid', 'read_version', 'operation_type',
  'transaction_properties'];
export const CP_U64_FIELDS = new Set(['version', 'total_fragments', 'total_data_files', 'total_files_size',
  'total_deletion_files', 'total_data_file_rows', 'total_deletion_file_rows', 'total_rows',
  'read_version']);
export const CP_SCHEMA = CP_FIELDS.map((name) => ({
  name,
  type: name === 'timestamp_millis' ? 'int64' : name.startsWith('is_') ? 'bool'
    : CP_U64_FIELDS.has(name) ? 'uint64' : 'string',
  nullable: ['transaction_uuid', 'read_version', 'operation_type'].includes(name),
}));

// Makes `dir` a dataset of version 1 whose only data file is `file` (copied to data/<name>,
// file format 2.<minor>) with `nrows` rows and the columns `fields` ([{ name, type, nullable }],
// field id = position).
export function wrapLanceFile(dir, file, { name = 'f.lance', fields, nrows, minor = 1 }) {
  fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
  fs.mkdirSync(path.join(dir, '_versions'), { recursive: true });
  fs.copyFileSync(file, path.join(dir, 'data', name));
  const idx = fields.map((_, i) => i);
  const df = Buffer.concat([bytes(1, name), packed(2, idx), packed(3, idx), u(4, 2), u(5, minor),
    u(6, fs.statSync(file).size)]);
  const pb = Buffer.concat([...fields.map((f, i) => field(f.name, i, f.type, f.nullable)),
    bytes(2, Buffer.concat([bytes(2, df), u(4, nrows)])), u(3, 1), u(11, 0)]);
  fs.writeFileSync(path.join(dir, '_versions', '18446744073709551614.manifest'), manifestBytes(pb));
}
