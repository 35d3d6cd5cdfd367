// wgpu-split's recorded plans against onnxruntime-web's WebGPU execution
// provider, in one headless Chromium page on one GPUDevice (issue 40,
// items 1-3). For every case of `webgpu_recordings --timing` (split_bench's
// split and concat cases under WebGPU's default limits) it runs a one-node
// ONNX model of the case in ORT-web (inputs and outputs in GPU buffers)
// and our plan, checks both bit for bit against the host path's FNV-1a
// hashes, then times both alternately (GPU time by timestamp queries, wall
// time to the queue's done; medians). Prints a table; cases ORT-web cannot
// run are listed with its error.
//
//   (cd tests/ortweb && npm ci)
//   cargo run --example webgpu_recordings -- --timing /tmp/ortweb/timing.json
//   node --experimental-websocket tests/ortweb/run.mjs /tmp/ortweb/timing.json [--rounds N] [--json OUT]
//
//   cargo run --example webgpu_recordings -- --timing --quick /tmp/ortweb/quick.json
//   node --experimental-websocket tests/ortweb/run.mjs /tmp/ortweb/quick.json --quick
//
// --quick: the four cases of QUICK (a concat, multi-output f32 splits), 3
// rounds: exits 1 unless both sides ran every one of them exactly. Either
// way it exits 1 when our plan is not exact on a case, when ORT-web's
// output differs from the host path's, on a page exception, and when the
// browser or node_modules is missing (never a skip). ORT-web failing to
// run a case is a failure only in --quick. --write-models DIR also writes
// each case's .onnx model there. Figures are reported, not targeted.

import { createServer } from 'node:http';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Browser, chromiumPath, within } from '../browser/chromium.mjs';
import { model } from '../../web/ortweb/onnx_model.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const ORT_VERSION = '1.31.1';
const ORT_DIST = join(here, 'node_modules', 'onnxruntime-web', 'dist');
const PAGE_FILES = ['index.html', 'page.mjs'];
/// ort.min.mjs: the JSEP build (WebGPU EP in JavaScript, with
/// env.webgpu.profiling's ondata). 1.31's ort.webgpu.min.mjs is the C++
/// WebGPU EP (asyncify wasm), which has no per-kernel GPU times.
const ORT_FILES = ['ort.min.mjs', 'ort-wasm-simd-threaded.jsep.mjs', 'ort-wasm-simd-threaded.jsep.wasm'];
const TYPES = { '.html': 'text/html', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

/// The quick mode's cases: both sides must run each exactly.
export const QUICK = ['f32_1x84x8400_yolo', 'f32_64x1024x256_axis1_4', 'f32_1x8400x85_yolov5', 'cat_f32_1x64x80x80_x3_c2f'];

function parseArgs(argv) {
  const args = { rounds: null, quick: false, json: null, models: null, only: null, path: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--rounds') args.rounds = Number(argv[++i]);
    else if (a === '--quick') args.quick = true;
    else if (a === '--json') args.json = argv[++i];
    else if (a === '--write-models') args.models = argv[++i];
    else if (a === '--only') args.only = argv[++i].split(',');
    else if (!a.startsWith('--') && !args.path) args.path = a;
    else throw new Error(`unknown argument ${a}`);
  }
  args.rounds ??= args.quick ? 3 : 15;
  if (!args.path || !(args.rounds > 0) || (args.json === undefined) || (args.models === undefined)) {
    console.error('usage: node --experimental-websocket tests/ortweb/run.mjs TIMING.json [--quick] [--rounds N] [--json OUT] [--write-models DIR] [--only A,B]');
    process.exit(2);
  }
  return args;
}

/// ORT-web's files, or why not (a failure, never a skip).
function checkOrt() {
  const pkg = join(here, 'node_modules', 'onnxruntime-web', 'package.json');
  if (!existsSync(pkg)) throw new Error(`no onnxruntime-web in ${join(here, 'node_modules')}: run 'npm ci' in tests/ortweb`);
  const version = JSON.parse(readFileSync(pkg, 'utf8')).version;
  if (version !== ORT_VERSION) throw new Error(`onnxruntime-web ${version} installed, ${ORT_VERSION} pinned: run 'npm ci' in tests/ortweb`);
  for (const f of ORT_FILES) if (!existsSync(join(ORT_DIST, f))) throw new Error(`onnxruntime-web ${version} has no dist/${f}`);
  return version;
}

/// Serves the page, ORT-web's dist files and the data on 127.0.0.1.
async function serve(dataPath) {
  const data = resolve(dataPath);
  const doc = JSON.parse(readFileSync(data, 'utf8'));
  const files = new Map(PAGE_FILES.map((f) => [`/${f}`, join(here, f)]));
  // The one-node model encoder is the bench page's (web/ortweb).
  files.set('/onnx.mjs', join(here, '..', '..', 'web', 'ortweb', 'onnx_model.mjs'));
  files.set('/plans.mjs', join(here, '../browser/plans.mjs'));
  for (const f of ORT_FILES) files.set(`/ort/${f}`, join(ORT_DIST, f));
  files.set(`/data/${basename(data)}`, data);
  if (doc.blob) files.set(`/data/${doc.blob}`, join(dirname(data), doc.blob));
  for (const f of files.values()) statSync(f);
  const server = createServer((req, res) => {
    const f = files.get(new URL(req.url, 'http://x').pathname);
    if (!f || req.method !== 'GET') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(f)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    res.end(readFileSync(f));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { server, origin: `http://127.0.0.1:${server.address().port}`, dataUrl: `/data/${basename(data)}`, doc };
}

const fmt = (v, digits = 0) => (v === undefined || Number.isNaN(v) ? '-' : v.toFixed(digits));

function table(rows) {
  const lines = ['case | op | shape/type | ours GPU µs | ORT GPU µs | ORT/ours GPU | ours wall ms | ORT wall ms | ORT/ours wall | exact ours/ORT | ours kernel; ORT kernels'];
  for (const r of rows) {
    const yes = (s) => (s.status === 'exact' ? 'yes' : s.status === 'no model' || s.status === 'skipped' ? '-' : 'NO');
    const ratio = (a, b) => (a !== undefined && b !== undefined ? (a / b).toFixed(2) : '-');
    lines.push(
      [
        r.name,
        r.kind,
        `${r.shape.join('x')} ${r.type}`,
        fmt(r.ours.gpuUs),
        fmt(r.ort.gpuUs),
        ratio(r.ort.gpuUs, r.ours.gpuUs),
        fmt(r.ours.wallMs, 2),
        fmt(r.ort.wallMs, 2),
        ratio(r.ort.wallMs, r.ours.wallMs),
        `${yes(r.ours)}/${yes(r.ort)}`,
        `${r.ours.kernel ?? '-'}${r.ours.kernel ? ` (${r.ours.dispatches}d ${r.ours.copies}c)` : ''}; ${r.ort.names?.join(',') ?? '-'}`,
      ].join(' | '),
    );
  }
  return lines.join('\n');
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const started = Date.now();
  let code = 1;
  let browser = null;
  let server = null;
  const pageLog = [];
  try {
    const ortVersion = checkOrt();
    const { path, version } = chromiumPath();
    const served = await serve(args.path);
    server = served.server;
    const { doc } = served;
    if (args.models) {
      mkdirSync(args.models, { recursive: true });
      for (const c of [...doc.cases, ...(doc.concat_cases ?? [])].filter((c) => c.onnx?.op)) {
        writeFileSync(join(args.models, `${c.name}.onnx`), model(c.name, c.element_type, c.onnx).bytes);
      }
      console.log(`models written to ${args.models}`);
    }
    browser = await Browser.launch(path, { flags: ['--enable-webgpu-developer-features'] });
    for (const signal of ['SIGINT', 'SIGTERM']) {
      process.on(signal, () => {
        browser.child.kill('SIGKILL');
        process.exit(1);
      });
    }
    const page = await browser.open(`${served.origin}/index.html`, (method, params) => {
      if (method === 'Runtime.exceptionThrown') pageLog.push({ fatal: true, text: `page exception: ${params.exceptionDetails.exception?.description ?? params.exceptionDetails.text}` });
      else if (method === 'Runtime.consoleAPICalled' && ['error', 'warning', 'assert'].includes(params.type)) {
        pageLog.push({ fatal: params.type === 'assert', text: `console.${params.type}: ${params.args.map((a) => a.value ?? a.description).join(' ').slice(0, 400)}` });
      } else if (method === 'Inspector.targetCrashed') pageLog.push({ fatal: true, text: 'the page crashed' });
    });
    await within(page.evaluate('new Promise((r) => { const t = () => (window.ready ? r(true) : setTimeout(t, 10)); t(); })'), 30000, 'loading the page');
    const loaded = await within(page.evaluate(`ortweb.load(${JSON.stringify(served.dataUrl)})`), 120000, 'loading the cases and ORT-web');
    console.log(`${version}; onnxruntime-web ${ortVersion} (JSEP, ort.min.mjs); adapter ${loaded.adapter}; ORT-web's device, shared: ${loaded.features.join(', ')}`);
    if (loaded.concat === 0) console.log('note: the timing JSON has no concat_cases (an older webgpu_recordings): splits only');
    let wanted = loaded.cases.map((c, i) => ({ ...c, i }));
    const expected = args.quick ? QUICK : args.only;
    if (expected) {
      const missing = expected.filter((n) => !wanted.some((c) => c.name === n));
      if (missing.length) throw new Error(`cases not in ${args.path}: ${missing.join(', ')}`);
      wanted = wanted.filter((c) => expected.includes(c.name));
    }
    if (wanted.length === 0) throw new Error(`no cases in ${args.path}`);
    console.log(`${wanted.length} cases, ${args.rounds} timed rounds each after 2 warm-up rounds, ours and ORT-web alternating; GPU: medians of timestamp spans; wall: medians, run start to onSubmittedWorkDone`);
    const rows = [];
    for (const c of wanted) {
      const t0 = Date.now();
      const row = await within(page.evaluate(`ortweb.runCase(${c.i}, ${args.rounds})`), 600000, `case ${c.name}`);
      rows.push(row);
      console.log(`  ${c.name}: ours ${row.ours.status}, ORT-web ${row.ort.status} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    }
    console.log(table(rows));
    const cannot = rows.filter((r) => r.ort.status !== 'exact');
    if (cannot.length) {
      console.log('ORT-web did not run exactly:');
      for (const r of cannot) console.log(`  ${r.name} (${r.shape.join('x')} ${r.type}): ${r.ort.status}: ${r.ort.error}`);
    }
    const failures = [];
    for (const r of rows) {
      if (r.ours.status !== 'exact') failures.push(`${r.name}: our plan ${r.ours.status}: ${r.ours.error}`);
      if (r.ort.status === 'not exact') failures.push(`${r.name}: ORT-web not exact: ${r.ort.error}`);
      else if (args.quick && r.ort.status !== 'exact') failures.push(`${r.name}: ORT-web ${r.ort.status}: ${r.ort.error}`);
      if (r.scopeErrors) failures.push(`${r.name}: ${r.scopeErrors.join('; ')}`);
    }
    for (const l of pageLog.filter((l) => l.fatal)) failures.push(l.text);
    if (args.json) {
      writeFileSync(args.json, JSON.stringify({ chromium: version, ort: ortVersion, adapter: loaded.adapter, features: loaded.features, rounds: args.rounds, quick: args.quick, rows, failures }, null, 1));
      console.log(`results: ${args.json}`);
    }
    for (const f of failures) console.log(`FAIL ${f}`);
    const both = rows.filter((r) => r.ours.status === 'exact' && r.ort.status === 'exact').length;
    console.log(`${rows.length} cases: ours exact on ${rows.filter((r) => r.ours.status === 'exact').length}, ORT-web exact on ${rows.filter((r) => r.ort.status === 'exact').length}, both on ${both}; ${failures.length} failures`);
    code = failures.length ? 1 : 0;
  } catch (e) {
    console.log(`FAIL: ${e.message}`);
    code = 1;
  } finally {
    for (const l of pageLog) console.log(l.text);
    await browser?.close();
    server?.close();
  }
  console.log(`${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(code);
}

await main();
