// Executes what wgpu-split's encodes record, splits and concats (the JSON
// and bytes of `cargo run --example webgpu_recordings -- OUT.json`), in
// headless Chromium: WGSL compiled by Tint, run by the SwiftShader Vulkan
// that Chromium bundles, under Chrome's WebGPU validation, on a device
// with WebGPU's default limits. Each recording is first validated against
// exactly its recorded usages, then run in its recorded order; every byte
// of every buffer is read back and compared with the host path's; prints
// each failing recording with the buffer and the first differing byte,
// then the counts; exits 1 on any failure (a missing browser is a failure,
// never a skip).
//
//   node --experimental-websocket tests/browser/run.mjs OUT.json [--batch N] [--verbose]
//   node --experimental-websocket tests/browser/run.mjs --timing TIMING.json [--rounds N]
//
// The timing mode runs `webgpu_recordings --timing`'s cases: each plan and
// a plain vec4 copy of the same bytes, timed with timestamp queries.

import { createServer } from 'node:http';
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Browser, chromiumPath, within } from './chromium.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const PAGE_FILES = { '/index.html': 'text/html', '/suite.mjs': 'text/javascript', '/timing.mjs': 'text/javascript', '/plans.mjs': 'text/javascript' };

/// The timing's extra flag: WebGPU's developer features, without which
/// Chrome may quantize timestamps (not seen with --enable-unsafe-webgpu;
/// the page reports the resolution either way).
const TIMING_FLAGS = ['--enable-webgpu-developer-features'];

function parseArgs(argv) {
  const args = { batch: 100, rounds: 15, verbose: false, timing: false, path: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--batch') args.batch = Number(argv[++i]);
    else if (a === '--rounds') args.rounds = Number(argv[++i]);
    else if (a === '--verbose') args.verbose = true;
    else if (a === '--timing') args.timing = true;
    else if (!a.startsWith('--') && !args.path) args.path = a;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!args.path || !(args.batch > 0) || !(args.rounds > 0)) {
    console.error('usage: node --experimental-websocket tests/browser/run.mjs [--timing] DATA.json [--batch N] [--rounds N] [--verbose]');
    process.exit(2);
  }
  return args;
}

/// Serves the page's files and the data (the JSON and the blob it names)
/// on 127.0.0.1 (a secure context, so WebGPU is exposed).
async function serve(dataPath) {
  const data = resolve(dataPath);
  const doc = JSON.parse(readFileSync(data, 'utf8'));
  const files = new Map(Object.entries(PAGE_FILES).map(([url, type]) => [url, { path: join(here, url.slice(1)), type }]));
  files.set(`/data/${basename(data)}`, { path: data, type: 'application/json' });
  if (doc.blob) files.set(`/data/${doc.blob}`, { path: join(dirname(data), doc.blob), type: 'application/octet-stream' });
  for (const f of files.values()) statSync(f.path);
  const server = createServer((req, res) => {
    const f = files.get(new URL(req.url, 'http://x').pathname);
    if (!f || req.method !== 'GET') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': f.type, 'cache-control': 'no-store' });
    res.end(readFileSync(f.path));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { server, origin: `http://127.0.0.1:${server.address().port}`, dataUrl: `/data/${basename(data)}`, doc };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const { path, version } = chromiumPath();
  const { server, origin, dataUrl } = await serve(args.path);
  const browser = await Browser.launch(path, { flags: args.timing ? TIMING_FLAGS : [] });
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      browser.child.kill('SIGKILL');
      process.exit(1);
    });
  }
  const pageLog = [];
  let code = 1;
  try {
    // Anything the page throws or logs as an error or warning fails.
    const page = await browser.open(`${origin}/index.html`, (method, params) => {
      if (method === 'Runtime.exceptionThrown') pageLog.push(`page exception: ${params.exceptionDetails.exception?.description ?? params.exceptionDetails.text}`);
      else if (method === 'Runtime.consoleAPICalled' && ['error', 'warning', 'assert'].includes(params.type)) {
        pageLog.push(`console.${params.type}: ${params.args.map((a) => a.value ?? a.description).join(' ')}`);
      } else if (method === 'Inspector.targetCrashed') pageLog.push('the page crashed');
    });
    await within(page.evaluate('new Promise((r) => { const t = () => (window.ready ? r(true) : setTimeout(t, 10)); t(); })'), 30000, 'loading the page');
    console.log(`${version}, launched and loaded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    code = args.timing ? await timing(page, dataUrl, args) : await suite(page, dataUrl, args);
  } catch (e) {
    console.log(`FAIL: ${e.message}`);
    code = 1;
  } finally {
    for (const line of pageLog) console.log(line);
    if (pageLog.length > 0) code = 1;
    await browser.close();
    server.close();
  }
  console.log(`browser step: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(code);
}

async function suite(page, dataUrl, args) {
  const loaded = await within(page.evaluate(`suite.load(${JSON.stringify(dataUrl)})`), 120000, 'loading the recordings');
  const a = loaded.adapter;
  console.log(
    `adapter: ${a.vendor} ${a.architecture}${a.description ? ` (${a.description})` : ''}, fallback ${a.fallback}; ` +
      `device: default limits (maxStorageBuffersPerShaderStage ${a.maxStorageBuffersPerShaderStage}, minStorageBufferOffsetAlignment ${a.minStorageBufferOffsetAlignment}); ` +
      `${loaded.recordings} recordings, ${loaded.modules} modules, ${loaded.blobBytes} bytes of data`,
  );
  const total = { recordings: 0, operators: {}, dispatches: 0, copies: 0, compared: 0, invalid: 0, failed: [], warnings: new Set(), modules: new Set(), times: [], compileMs: 0 };
  const t0 = Date.now();
  for (let from = 0; from < loaded.recordings; from += args.batch) {
    const to = Math.min(from + args.batch, loaded.recordings);
    let r;
    try {
      r = await within(page.evaluate(`suite.run(${from}, ${to})`), 300000, `recordings ${from} to ${to}`);
    } catch (e) {
      const running = await within(page.evaluate('suite.current'), 5000, 'asking the page').catch(() => null);
      throw new Error(`${e.message}${running ? ` (running: ${running})` : ''}`);
    }
    total.recordings += r.recordings;
    for (const [name, op] of Object.entries(r.operators)) {
      const t = (total.operators[name] ??= { recordings: 0, failed: 0 });
      t.recordings += op.recordings;
      t.failed += op.failed;
    }
    total.dispatches += r.dispatches;
    total.copies += r.copies;
    total.compared += r.compared;
    total.invalid += r.invalid;
    total.failed.push(...r.failed);
    r.warnings.forEach((w) => total.warnings.add(w));
    r.modules.forEach((m) => total.modules.add(m));
    total.times.push(...r.times);
    total.compileMs += r.compileMs;
    for (const f of r.failed) {
      console.log(`FAIL ${f.name}`);
      for (const line of f.failures) console.log(`    ${line.split('\n')[0].slice(0, 500)}`);
    }
    if (args.verbose) console.log(`  ${to} of ${loaded.recordings} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
  for (const w of total.warnings) console.log(`warning: ${w}`);
  if (args.verbose) {
    console.log('slowest recordings (the first to run a module compiles it):');
    for (const [ms, name] of total.times.sort((x, y) => y[0] - x[0]).slice(0, 15)) console.log(`  ${ms.toFixed(0)} ms  ${name}`);
  }
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);
  // "3404 split + 1821 concat recordings (0 + 0 failed)".
  const ops = Object.entries(total.operators);
  const perOperator = `${ops.map(([n, o]) => `${o.recordings} ${n}`).join(' + ')} recordings (${ops.map(([, o]) => o.failed).join(' + ')} failed)`;
  console.log(
    `Chromium WebGPU (${a.vendor} ${a.architecture}, default limits): ${perOperator}; ${total.recordings - total.failed.length} of ${total.recordings} recordings exact, ` +
      `${total.failed.length} failed (${total.invalid} of them in the validation with their recorded usages); ${total.modules.size} modules, ${total.dispatches} dispatches, ${total.copies} copies executed, ` +
      `${total.compared} bytes compared in ${seconds} s (${(total.compileMs / 1000).toFixed(1)} s of it compiling)`,
  );
  return total.failed.length > 0 || total.recordings === 0 ? 1 : 0;
}

async function timing(page, dataUrl, args) {
  const r = await within(page.evaluate(`timing.run(${JSON.stringify(dataUrl)}, ${args.rounds})`), 1800000, 'the timing');
  console.log(r.report);
  return r.failed ? 1 : 0;
}

await main();
