// Proves the browser suite can fail: plants seven faults into a few
// recordings of a suite (an expected output byte, an expected guard byte, a
// WGSL module that does not parse, one whose entry point returns at once,
// a concat's module that returns at once, a copy recorded after the
// dispatches it must precede, and a copy from a buffer without COPY_SRC),
// runs `run.mjs` on them beside untouched splits and concats, and checks
// that exactly the planted recordings fail, each with its kind of message.
// Exits 1 otherwise.
//
//   node --experimental-websocket tests/browser/self_check.mjs OUT.json

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const [path] = process.argv.slice(2);
if (!path) {
  console.error('usage: node --experimental-websocket tests/browser/self_check.mjs OUT.json');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(path, 'utf8'));
const blob = readFileSync(join(dirname(path), doc.blob));
const added = [];
let blobEnd = blob.length;
/// Appends `bytes` to the blob file; returns their offset.
const addBlob = (bytes) => {
  added.push(bytes);
  blobEnd += bytes.length;
  return blobEnd - bytes.length;
};

const recs = doc.recordings;
const taken = new Set();
const disjoint = (r, modules) => r.modules.every((m) => !modules.has(m));
/// The first recording not taken yet that `test` accepts.
function pick(test, what) {
  const r = recs.find((x) => !taken.has(x) && test(x));
  if (!r) throw new Error(`the suite has no recording for ${what}`);
  taken.add(r);
  return r;
}
const outputSegment = (r, b) => r.contents[b].after.find(([at]) => r.regions.some((g) => g.what.startsWith('output') && g.buffer === b && g.offset === at && g.size > 0));
/// Where a copy of the spare buffer's zeros over the start of an output
/// would change expected bytes: an output at a word, in a buffer of outputs
/// only, of a recording of dispatches that leave the spare (all zeros)
/// alone; its buffer, offset and the copy's size, or null.
function zeroedOutput(r) {
  const spare = r.buffers.length - 1;
  const dispatches = r.commands.filter((c) => c.command === 'dispatch');
  if (dispatches.length === 0 || dispatches.length !== r.commands.length || r.contents[spare].before.length > 0) return null;
  if (dispatches.some((d) => d.bindings.some((b) => b.buffer === spare))) return null;
  for (const g of r.regions) {
    if (!g.what.startsWith('output') || g.offset % 4 !== 0 || g.buffer >= spare - 1) continue;
    if (!r.regions.every((x) => x.buffer !== g.buffer || /^(output|destination) /.test(x.what))) continue;
    const size = Math.min(g.size, r.buffers[spare].size) & ~3;
    const after = Buffer.alloc(r.buffers[g.buffer].size);
    for (const [at, from, len] of r.contents[g.buffer].after) blob.copy(after, at, from, from + len);
    if (size > 0 && after.subarray(g.offset, g.offset + size).some((x) => x !== 0)) return { buffer: g.buffer, offset: g.offset, size };
  }
  return null;
}

// 1. An expected output byte: byte 0 of the first output in a page.
const r1 = pick((r) => r.name.endsWith('page at 4') && outputSegment(r, 1), 'an output in a page');
const s1 = outputSegment(r1, 1);
const flipped = Buffer.from(blob.subarray(s1[1], s1[1] + s1[2]));
flipped[0] ^= 0x01;
s1[1] = addBlob(flipped);
// 2. An expected guard byte: byte 3 of a page, before its first region.
const r2 = pick((r) => r.name.endsWith('page at 16') && r.modules.length > 0, 'a page with dispatches');
const guard = r2.contents[1].after[0];
r2.contents[1].after.push([3, addBlob(Buffer.from([blob[guard[1] + 3] ^ 0x80])), 1]);
// 3 and 4. Two modules no other planted or clean recording runs.
const used = new Set([...r1.modules, ...r2.modules]);
const r3 = pick((r) => r.modules.length === 1 && disjoint(r, used), 'a third module');
used.add(r3.modules[0]);
const r4 = pick((r) => r.modules.length === 1 && disjoint(r, used), 'a fourth module');
used.add(r4.modules[0]);
const m3 = doc.modules[r3.modules[0]];
m3.wgsl = m3.wgsl.replace(/fn\s+\w+\s*\(/, (f) => `${f};`);
/// Makes module `index`'s entry point return at once.
function returnAtOnce(index) {
  const m = doc.modules[index];
  const entry = new RegExp(`fn\\s+${m.entry_point}\\s*\\([^{]*\\{`);
  if (!entry.test(m.wgsl)) throw new Error(`no entry point ${m.entry_point} in module ${index}`);
  m.wgsl = m.wgsl.replace(entry, (f) => `${f}\n    return;`);
}
returnAtOnce(r4.modules[0]);
// 5. A concat's module: its output keeps the guard bytes.
const r5 = pick((r) => r.operator === 'concat' && r.modules.length === 1 && disjoint(r, used), 'a concat module');
used.add(r5.modules[0]);
returnAtOnce(r5.modules[0]);
// 6. The order: a recording that needs its copy before its dispatches,
// planted with the copy after them. No recording mixes copies and
// dispatches, so one is made: a split whose dispatches leave the spare
// buffer alone gets a copy of the spare's zeros over the start of an
// output, first (the dispatches then write the output: the expected bytes
// stand). Moved after the dispatches, the zeros stay, but only where the
// recorded order is kept: encoding copies first would hide it.
const r6 = pick((r) => r.operator === 'split' && disjoint(r, used) && zeroedOutput(r), 'a split to reorder');
const z = zeroedOutput(r6);
r6.buffers[z.buffer].usages.push('COPY_DST');
r6.commands.push({ command: 'copy', src: r6.buffers.length - 1, src_offset: 0, dst: z.buffer, dst_offset: z.offset, size: z.size });
// 7. The usages: a copy whose source lacks COPY_SRC. A buffer needs some
// usage (none at all would fail at its creation, not at the copy), so
// COPY_DST takes its place; the execution adds COPY_SRC back to read every
// buffer, so only the validation with the recorded usages sees it.
const r7 = pick((r) => r.modules.length === 0 && r.commands.length > 0, 'a recording of copies');
const source = r7.buffers[r7.commands[0].src];
source.usages = source.usages.filter((u) => u !== 'COPY_SRC');
if (source.usages.length === 0) source.usages.push('COPY_DST');
const clean = [0, 1, 2].map(() => pick((r) => disjoint(r, used), 'an untouched recording'));
clean.push(pick((r) => r.operator === 'concat' && disjoint(r, used), 'an untouched concat'));
// Copies validated with their recorded usages pass.
clean.push(pick((r) => r.modules.length === 0 && r.commands.length > 0, 'an untouched recording of copies'));
const expected = new Map([
  [r1.name, /\(output \d+, byte \d+\)/],
  [r2.name, /guard byte/],
  [r3.name, /compilation error/],
  [r4.name, /\(output \d+, byte \d+\)/],
  [r5.name, /\(the output, byte \d+\)/],
  [r6.name, /\(output \d+, byte \d+\)/],
  [r7.name, /validation against the recorded usages failed: .*CopySrc/],
]);
doc.recordings = [r1, r2, r3, r4, r5, r6, r7, ...clean];

const dir = mkdtempSync(join(tmpdir(), 'wgpu-split-self-check-'));
let ok = false;
try {
  doc.blob = 'planted.bin';
  writeFileSync(join(dir, 'planted.bin'), Buffer.concat([blob, ...added]));
  writeFileSync(join(dir, 'planted.json'), JSON.stringify(doc));
  const run = spawnSync(process.execPath, [...process.execArgv, join(here, 'run.mjs'), join(dir, 'planted.json')], { encoding: 'utf8' });
  const out = run.stdout;
  const failed = [...out.matchAll(/^FAIL (.*)$/gm)].map((m) => m[1]);
  const problems = [];
  if (run.status !== 1) problems.push(`run.mjs exited ${run.status}, not 1`);
  for (const [name, message] of expected) {
    const block = out.split(/^FAIL /m).find((b) => b.startsWith(`${name}\n`));
    if (!block) problems.push(`planted fault not reported: ${name}`);
    else if (!message.test(block)) problems.push(`${name}: reported without ${message}:\n${block}`);
  }
  for (const name of failed) if (!expected.has(name)) problems.push(`an untouched recording failed: ${name}`);
  // Two fail the validation: the copy without COPY_SRC, and the module
  // that does not parse (a dispatch with no pipeline).
  if (!/7 failed \(2 of them in the validation/.test(out)) problems.push('the summary does not count 7 failures, 2 of them in the validation');
  ok = problems.length === 0;
  // What the driver said of the planted faults.
  for (const line of out.split('\n')) if (/^(FAIL|    |Chromium WebGPU)/.test(line)) console.log(`  ${line}`);
  console.log(ok ? `self-check: the 7 planted faults fail their recordings (${[...expected.keys()].join('; ')}), the ${clean.length} untouched pass` : `self-check FAILED:\n${problems.join('\n')}\n--- run.mjs said:\n${out}${run.stderr}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);
