// The binding-wall probe: every case of wall.mjs (Split and Concat of
// float32 with 8..64 outputs / inputs, Concat of 128..1,024 inputs) through
// onnxruntime-web 1.30.0 and 1.31.1, each with its JavaScript WebGPU EP
// (JSEP) and its C++ WebGPU EP, in headless Chromium. Each (version,
// provider) runs in its own page (a fresh tab), so the two builds never
// share globals; every case is a one-node model with CPU fallback off, run
// on CPU-side inputs, every output element compared exactly. Prints
//   case | 1.30.0 JSEP | 1.30.0 C++ | 1.31.1 JSEP | 1.31.1 C++
// with each cell exact, wrong (all zeros / k of N outputs) or error
// (footnoted with the error's first line).
//
//   (cd web && npm ci)
//   mkdir -p -m700 /tmp/xdg && export XDG_RUNTIME_DIR=/tmp/xdg
//   node --experimental-websocket web/ortweb/wall_probe.mjs [--json OUT] [--only SUBSTR,..]
//        [--pages 1.30.0:jsep,1.31.1:cpp,..] [--case-timeout S] [--fresh]
//
// Cases run one after another in one page per (version, provider), as an
// application would run models; --fresh runs each case in a page of its
// own instead (a first run: ORT's buffer pool empty). The difference
// matters for JSEP's wrong outputs: all zeros in fresh buffers, stale
// data (earlier runs' tensors) in recycled ones.
//
// Served from 127.0.0.1 only: web/ at /, each version's dist at
// /ort/VERSION/ (web/serve.mjs), the page web/ortweb/wall.html. Exit status 1
// when the probe itself fails (no browser, no or another node_modules, a
// page that cannot load ORT); what ORT-web returns is reported, never a
// failure.

import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Browser, chromiumPath, within } from '../../tests/browser/chromium.mjs';
import { serve } from '../serve.mjs';
import { ORT_BUILDS, ORT_VERSIONS, WALL_CASES } from './wall.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const webRoot = join(here, '..');
/// Each version's package directory (package.json's aliases).
const PACKAGES = { '1.30.0': 'onnxruntime-web-1.30', '1.31.1': 'onnxruntime-web' };

function parseArgs(argv) {
  const args = { json: null, only: null, pages: null, caseTimeout: 60, fresh: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--json') args.json = argv[++i];
    else if (a === '--only') args.only = argv[++i].split(',');
    else if (a === '--pages') args.pages = argv[++i].split(',');
    else if (a === '--case-timeout') args.caseTimeout = Number(argv[++i]);
    else if (a === '--fresh') args.fresh = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (args.json === undefined || args.only?.includes(undefined) || !(args.caseTimeout > 0)) {
    console.error('usage: node --experimental-websocket web/ortweb/wall_probe.mjs [--json OUT] [--only SUBSTR,..] [--pages VERSION:jsep|cpp,..] [--case-timeout S] [--fresh]');
    process.exit(2);
  }
  return args;
}

/// Each version's dist folder, checked: installed, the pinned version, the
/// files of both builds present.
function distFolders() {
  const out = {};
  for (const [version, name] of Object.entries(PACKAGES)) {
    const pkg = join(webRoot, 'node_modules', name, 'package.json');
    if (!existsSync(pkg)) throw new Error(`no ${name} in web/node_modules: run 'npm ci' in web`);
    const installed = JSON.parse(readFileSync(pkg, 'utf8')).version;
    if (installed !== version) throw new Error(`web/node_modules/${name} is ${installed}, ${version} pinned: run 'npm ci' in web`);
    const dist = join(dirname(pkg), 'dist');
    for (const b of Object.values(ORT_BUILDS)) {
      for (const f of [b.module, b.wasm, b.wasm.replace(/\.wasm$/, '.mjs')]) statSync(join(dist, f));
    }
    out[version] = dist;
  }
  return out;
}

/// Opens a fresh page of (version, provider) and loads ORT in it.
async function openPage(browser, origin, version, provider, events) {
  const page = await within(
    browser.open(`${origin}/ortweb/wall.html?ort=${version}&provider=${provider}`, (method, params) => {
      if (method === 'Runtime.exceptionThrown') events.push(`page exception: ${params.exceptionDetails.exception?.description ?? params.exceptionDetails.text}`.slice(0, 400));
      else if (method === 'Runtime.consoleAPICalled' && ['error', 'assert'].includes(params.type)) {
        events.push(`console.${params.type}: ${params.args.map((a) => a.value ?? a.description).join(' ')}`.slice(0, 400));
      } else if (method === 'Inspector.targetCrashed') events.push('the page crashed');
    }),
    30000,
    'opening the page',
  );
  await within(page.evaluate('new Promise((r) => { const t = () => (window.ready ? r(true) : setTimeout(t, 10)); t(); })'), 30000, 'loading wall.mjs');
  const info = await within(page.evaluate(`wall.pageInit(${JSON.stringify(version)}, ${JSON.stringify(provider)})`), 120000, `loading onnxruntime-web ${version} (${provider})`);
  return { page, info };
}

async function closePage(page) {
  try {
    await within(page.send('Page.close'), 5000, 'closing the page');
  } catch {
    // A stuck or crashed page: the browser's close ends it.
  }
}

/// Runs `cases` in pages of (version, provider): a fresh page after a case
/// that timed out, or after every case with `fresh`.
async function runPages(browser, origin, version, provider, cases, caseTimeout, fresh) {
  const events = [];
  const rows = [];
  let info = null;
  let page = null;
  let i = 0;
  try {
    while (i < cases.length) {
      if (!page) {
        const opened = await openPage(browser, origin, version, provider, events);
        page = opened.page;
        info ??= opened.info;
        if (opened.info.warmUp.status !== 'exact') throw new Error(`the warm-up (a 2-element Split) was not exact: ${opened.info.warmUp.status}: ${opened.info.warmUp.detail}`);
      }
      const c = cases[i];
      let row;
      try {
        row = await within(page.evaluate(`wall.pageRun(${JSON.stringify(c.name)}, ${caseTimeout * 1000})`), (caseTimeout + 15) * 1000, `case ${c.name}`);
      } catch (e) {
        row = { case: c.name, status: 'error', detail: `probe: ${e.message.split('\n')[0]}`, zeros: false, stuck: true };
      }
      rows.push(row);
      process.stdout.write(`  ${version} ${ORT_BUILDS[provider].label} ${c.name}: ${row.status}${row.status === 'exact' ? '' : ` (${row.detail.slice(0, 120)})`} ${row.ms ?? '-'} ms\n`);
      i++;
      if (row.stuck || fresh) {
        await closePage(page);
        page = null;
      }
    }
  } finally {
    if (page) await closePage(page);
  }
  return { info, rows, events };
}

/// An error's text for a footnote: ORT's build paths and C++ signatures
/// dropped, per-case counts and WGSL positions generalized.
function noteText(text) {
  return text
    .replace(/\s+/g, ' ')
    .replace(/\/\S*?\/onnxruntime\/(\S+:\d+) .*? was false\. /, 'onnxruntime/$1: ')
    .replace(/ This adapter supports a higher .*$/, '')
    .replace(/storage buffers \(\d+\)/g, 'storage buffers (n)')
    .replace(/Current: \d+/g, 'Current: n')
    .replace(/:\d+:\d+ error:/g, ':L:C error:');
}

function footnote(notes, text) {
  const t = noteText(text);
  if (!notes.has(t)) notes.set(t, notes.size + 1);
  return `[${notes.get(t)}]`;
}

/// A cell: exact; wrong: all zeros / k of N (z zeros, s stale), with the
/// WebGPU error the device reported; error (n > max) [footnote].
function cell(row, notes) {
  if (!row) return '-';
  if (row.status === 'exact') return row.webgpuError ? `exact ${footnote(notes, `WebGPU error: ${row.webgpuError}`)}` : 'exact';
  if (row.status === 'wrong') {
    const note = row.webgpuError ? ` ${footnote(notes, `WebGPU error, no throw: ${row.webgpuError}`)}` : '';
    if (row.zeros) return `wrong: all zeros${note}`;
    if (row.outputs === undefined) return `wrong${note}`;
    const stale = row.wrongOutputs - row.zeroOutputs;
    return `wrong: ${row.wrongOutputs}/${row.outputs} (${[row.zeroOutputs && `${row.zeroOutputs} zeros`, stale && `${stale} stale`].filter(Boolean).join(', ')})${note}`;
  }
  const m = /Current: (\d+), Max is (\d+)/.exec(row.detail);
  return `error${m ? ` (${m[1]} > ${m[2]})` : ''} ${footnote(notes, row.detail)}`;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const started = Date.now();
  let browser = null;
  let server = null;
  let code = 1;
  try {
    const dists = distFolders();
    const { path, version: chromium } = chromiumPath();
    const cases = args.only ? WALL_CASES.filter((c) => args.only.some((s) => c.name.includes(s))) : WALL_CASES;
    if (cases.length === 0) throw new Error(`no case matches ${args.only.join(',')}`);
    const pages = (args.pages ?? ORT_VERSIONS.flatMap((v) => Object.keys(ORT_BUILDS).map((p) => `${v}:${p}`))).map((s) => {
      const [v, p] = s.split(':');
      if (!PACKAGES[v] || !ORT_BUILDS[p]) throw new Error(`--pages: ${s} is not VERSION:PROVIDER (${Object.keys(PACKAGES).join(', ')}; ${Object.keys(ORT_BUILDS).join(', ')})`);
      return { version: v, provider: p };
    });
    const served = await serve();
    server = served.server;
    browser = await Browser.launch(path, { flags: ['--enable-webgpu-developer-features'] });
    for (const signal of ['SIGINT', 'SIGTERM']) {
      process.on(signal, () => {
        browser.child.kill('SIGKILL');
        process.exit(1);
      });
    }
    console.log(`${chromium}; ${cases.length} cases${args.fresh ? ', each in a fresh page' : ''}; pages: ${pages.map((p) => `${p.version} ${ORT_BUILDS[p.provider].label}`).join(', ')}`);
    const results = [];
    const failures = [];
    for (const { version, provider } of pages) {
      const t0 = Date.now();
      try {
        const r = await runPages(browser, served.origin, version, provider, cases, args.caseTimeout, args.fresh);
        const i = r.info;
        console.log(
          `${version} ${ORT_BUILDS[provider].label}: ${i.moduleUrl}, loaded ${i.loaded.filter((n) => n.endsWith('.wasm')).join(', ')}; ORT reports ${i.ort}; ` +
            `adapter ${i.adapter}, maxStorageBuffersPerShaderStage ${i.adapterMaxStorageBuffersPerShaderStage}; ORT's device ${i.ortDeviceExposed ? i.deviceMaxStorageBuffersPerShaderStage : 'not exposed'} (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
        );
        if (i.ort !== version) failures.push(`${version} ${provider}: the page's ORT reports ${i.ort}`);
        const wasm = i.loaded.filter((n) => n.endsWith('.wasm'));
        if (wasm.length !== 1 || !wasm[0].endsWith(`/${ORT_BUILDS[provider].wasm}`)) failures.push(`${version} ${provider}: loaded ${wasm.join(', ') || 'no wasm'}, not ${ORT_BUILDS[provider].wasm}`);
        results.push({ version, provider, label: ORT_BUILDS[provider].label, ...r });
      } catch (e) {
        failures.push(`${version} ${provider}: ${e.message.split('\n')[0]}`);
        results.push({ version, provider, label: ORT_BUILDS[provider].label, info: null, rows: [], events: [], error: e.message });
      }
    }
    // The table.
    const notes = new Map();
    const header = ['case', ...results.map((r) => `${r.version} ${r.label}`)];
    const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
    for (const c of cases) lines.push(`| ${[`${c.name} (${c.op} ${c.n}, axis ${c.axis})`, ...results.map((r) => cell(r.rows.find((x) => x.case === c.name), notes))].join(' | ')} |`);
    console.log(`\n${lines.join('\n')}\n`);
    for (const [text, k] of notes) console.log(`[${k}] ${text}`);
    const info = results.find((r) => r.info)?.info ?? {};
    console.log(`\n${chromium}; adapter ${info.adapter}; adapter maxStorageBuffersPerShaderStage ${info.adapterMaxStorageBuffersPerShaderStage}; ` +
      `ORT's device: ${results.map((r) => `${r.version} ${r.label} ${r.info ? (r.info.ortDeviceExposed ? r.info.deviceMaxStorageBuffersPerShaderStage : 'not exposed') : '-'}`).join(', ')}`);
    // Chromium logs every WebGPU error no one prevented to the console; the
    // rows already carry them.
    for (const r of results) {
      const webgpu = r.events.filter((e) => e.includes('An uncaught WebGPU validation error'));
      if (webgpu.length) console.log(`${r.version} ${r.label} page: ${webgpu.length} uncaught WebGPU errors logged (in the rows' details)`);
      for (const e of [...new Set(r.events.filter((e) => !webgpu.includes(e)))].slice(0, 5)) console.log(`${r.version} ${r.label} page: ${e}`);
    }
    if (args.json) {
      const doc = {
        date: new Date().toISOString(),
        chromium,
        adapter: info.adapter,
        adapterMaxStorageBuffersPerShaderStage: info.adapterMaxStorageBuffersPerShaderStage,
        adapterMaxBindingsPerBindGroup: info.adapterMaxBindingsPerBindGroup,
        ort: ORT_VERSIONS,
        freshPagePerCase: args.fresh,
        builds: ORT_BUILDS,
        cases: cases.map(({ name, group, op, axis, n, inputShapes, outputShapes }) => ({ name, group, op, axis, n, inputShapes: inputShapes.length > 1 ? `${inputShapes.length} x [${inputShapes[0]}]` : inputShapes, outputShapes: outputShapes.length > 1 ? `${outputShapes.length} x [${outputShapes[0]}]` : outputShapes })),
        pages: results.map((r) => ({ version: r.version, provider: r.provider, label: r.label, info: r.info, error: r.error, events: [...new Set(r.events)] })),
        rows: results.flatMap((r) => r.rows.map((row) => ({ version: r.version, provider: r.provider, ...row }))),
        notes: Object.fromEntries([...notes].map(([t, k]) => [k, t])),
        failures,
      };
      writeFileSync(args.json, JSON.stringify(doc, null, 1));
      console.log(`results: ${args.json}`);
    }
    for (const f of failures) console.log(`FAIL ${f}`);
    code = failures.length ? 1 : 0;
  } catch (e) {
    console.log(`FAIL: ${e.message}`);
  } finally {
    await browser?.close();
    server?.close();
  }
  console.log(`${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(code);
}

await main();
