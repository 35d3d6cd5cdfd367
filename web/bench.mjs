// The bench page: the crate's wasm (web/build.sh) runs split_bench's cases
// on this browser's GPU; onnxruntime-web (its JavaScript WebGPU provider,
// the newest version installed in web/node_modules) runs each case that is
// one ONNX Split or Concat node on the same GPUDevice. Every side is
// checked byte for byte against the crate's host path before it is timed;
// a side that is not exact is not timed. Then the binding wall: the crate
// on wall.mjs's shapes, and each onnxruntime-web build and provider in an
// iframe of its own.
//
// `window.benchDone` resolves to { device, rows, wall } (web/check_bench.mjs
// reads it in CI).

import init, { Bench } from './pkg/wgpu_split_web.js';
import { model, ORT_TYPES } from './ortweb/onnx_model.mjs';
import { ORT_BUILDS, ORT_VERSIONS, WALL_CASES } from './ortweb/wall.mjs';

const q = new URLSearchParams(location.search);
const quick = q.has('quick');
const calibrate = q.has('calibrate');
const rounds = Number(q.get('rounds') ?? (quick ? 5 : 15));
const only = q.get('only')?.split(',');
const status = document.getElementById('status');
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const say = (text) => {
  status.textContent = text;
  console.log(text);
};

/// ORT's device is ours: an adapter whose `requestDevice` gives the
/// crate's GPUDevice (JSEP makes its device through it).
async function loadOrt(device) {
  const versions = (await (await fetch('/ort/versions.json')).json()).sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  const version = versions.at(-1);
  if (!version) return { error: 'onnxruntime-web is not installed (npm ci in web/)' };
  const ort = await import(`/ort/${version}/${ORT_BUILDS.jsep.module}`);
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.wasmPaths = new URL(`/ort/${version}/`, location.href).href;
  ort.env.logLevel = 'error';
  const kernels = [];
  ort.env.webgpu.profiling = { mode: 'default', ondata: (d) => kernels.push(d) };
  const adapter = await navigator.gpu.requestAdapter();
  ort.env.webgpu.adapter = { limits: device.limits, features: device.features, info: adapter.info, requestDevice: async () => device };
  return { ort, version, kernels };
}

/// A GPU buffer on `device` holding `bytes` (padded to 16).
function upload(device, bytes, extra = 0) {
  const b = device.createBuffer({ size: Math.max(16, Math.ceil((bytes.length + extra) / 16) * 16), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
  const padded = new Uint8Array(Math.ceil(bytes.length / 4) * 4);
  padded.set(bytes);
  device.queue.writeBuffer(b, 0, padded);
  return b;
}

async function readBack(device, buffer, len) {
  const size = Math.ceil(len / 4) * 4;
  const staging = device.createBuffer({ size: Math.max(4, size), usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const e = device.createCommandEncoder();
  e.copyBufferToBuffer(buffer, 0, staging, 0, size);
  device.queue.submit([e.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Uint8Array(staging.getMappedRange()).slice(0, len);
  staging.destroy();
  return out;
}

const sameBytes = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

/// Ours: exact, then GPU time per run (timestamps, repeated until a
/// timed submission spans 2 ms) and the copy's, alternating; without
/// timestamps the page's clock around submit-to-done.
async function timeOurs(bench, info) {
  const once = async (copy, k) => {
    if (bench.has_timestamps()) return (await bench.time(copy, k)) / k;
    const t0 = performance.now();
    await bench.submit(copy, k);
    return (performance.now() - t0) / 1e3 / k;
  };
  const first = await once(false, 1);
  const k = Math.max(1, Math.min(64, Math.ceil(2e-3 / Math.max(first, 1e-6))));
  const ours = [];
  const copy = [];
  for (let r = -1; r < rounds; r++) {
    const a = await once(false, k);
    const b = await once(true, k);
    if (r >= 0) ours.push(a), copy.push(b);
  }
  return { ours: median(ours), copy: median(copy), repeats: k, timing: bench.has_timestamps() ? 'timestamps' : 'wall' };
}

/// ORT: the case's one-node model on our device, inputs and outputs in
/// GPU buffers; exact, then GPU time from its profiling (first kernel's
/// start to last kernel's end).
async function runOrt(o, device, bench, info) {
  if (o.error) return { status: 'n/a', detail: o.error };
  if (!info.onnx?.op) return { status: 'n/a', detail: info.onnx?.why ?? 'no one-node model' };
  const type = ORT_TYPES[info.element_type];
  if (!type || ['uint4', 'int4'].includes(info.element_type)) return { status: 'n/a', detail: `ONNX's ${info.onnx.op} takes no ${info.element_type} on the WebGPU provider` };
  if (info.element_type === 'float16' && !device.features.has('shader-f16')) return { status: 'n/a', detail: 'float16: the device has no shader-f16' };
  const { ort, kernels } = o;
  const buffers = [];
  let session = null;
  try {
    const m = model(info.name, info.element_type, info.onnx);
    session = await ort.InferenceSession.create(m.bytes, { executionProviders: ['webgpu'], extra: { session: { disable_cpu_ep_fallback: '1' } } });
    const feeds = {};
    m.inputs.forEach((name, k) => {
      const b = upload(device, bench.input(k));
      buffers.push(b);
      feeds[name] = ort.Tensor.fromGpuBuffer(b, { dataType: type, dims: info.onnx.input_shapes[k] });
    });
    const fetches = {};
    const expected = m.outputs.map((_, k) => bench.expected(k));
    const outs = m.outputs.map((name, k) => {
      const b = upload(device, new Uint8Array(0), expected[k].length);
      buffers.push(b);
      fetches[name] = ort.Tensor.fromGpuBuffer(b, { dataType: type, dims: info.onnx.output_shapes[k] });
      return b;
    });
    const run = async () => {
      const before = kernels.length;
      const t0 = performance.now();
      await session.run(feeds, fetches);
      await device.queue.onSubmittedWorkDone();
      const wall = (performance.now() - t0) / 1e3;
      const deadline = performance.now() + 2000;
      while (kernels.length === before && performance.now() < deadline) await new Promise((r) => setTimeout(r, 0));
      const mine = kernels.slice(before);
      const gpu = mine.length ? (Math.max(...mine.map((x) => Number(x.endTime))) - Math.min(...mine.map((x) => Number(x.startTime)))) / 1e9 : NaN;
      return { gpu, wall };
    };
    await run();
    for (const [k, b] of outs.entries()) {
      const got = await readBack(device, b, expected[k].length);
      if (!sameBytes(got, expected[k])) {
        const zeros = got.every((x) => x === 0);
        return { status: 'not exact', detail: `output ${k} differs from the host path's${zeros ? ' (all zeros)' : ''}` };
      }
    }
    const gpu = [];
    for (let r = -1; r < rounds; r++) {
      const t = await run();
      if (r >= 0) gpu.push(Number.isFinite(t.gpu) ? t.gpu : t.wall);
    }
    return { status: 'exact', seconds: median(gpu) };
  } catch (e) {
    return { status: 'error', detail: String(e?.message ?? e).split('\n')[0].slice(0, 300) };
  } finally {
    await session?.release().catch(() => {});
    buffers.forEach((b) => b.destroy());
  }
}

function cell(tr, text, cls = '') {
  const td = document.createElement('td');
  td.textContent = text;
  if (cls) td.className = cls;
  tr.append(td);
  return td;
}

function addRow(row) {
  const tr = document.createElement('tr');
  const gbps = (s) => (row.moved * 2) / s / 1e9;
  cell(tr, row.name);
  cell(tr, row.kind, 'text');
  cell(tr, row.element_type, 'text');
  cell(tr, fmt(row.moved / 1e6, 2));
  cell(tr, fmt(row.ours * 1e6));
  cell(tr, fmt(row.copy * 1e6));
  cell(tr, fmt(gbps(row.ours)));
  cell(tr, fmt(row.copy / row.ours, 2));
  cell(tr, fmt(row.ort.seconds * 1e6));
  cell(tr, fmt(row.ort.seconds / row.ours, 2));
  cell(tr, row.check, row.check === 'exact' ? 'exact' : 'bad');
  const ort = cell(tr, row.ort.status, row.ort.status === 'exact' ? 'exact' : row.ort.status === 'n/a' ? 'na' : 'bad');
  if (row.ort.detail) ort.title = row.ort.detail;
  document.querySelector('#cases tbody').append(tr);
}

/// GB/s of each case (a log scale): ours, the vec4 copy, ORT-web, and
/// the ratios ours / copy and ours / ORT (an SVG of bars).
function plot(rows) {
  const timed = rows.filter((r) => Number.isFinite(r.ours));
  const bar = 7;
  const rowH = 3 * bar + 8;
  const left = 230;
  const width = 980;
  const plotW = width - left - 200;
  const gb = (r, s) => (r.moved * 2) / s / 1e9;
  const values = timed.flatMap((r) => [r.ours, r.copy, r.ort.seconds].filter(Number.isFinite).map((s) => gb(r, s)));
  const lo = Math.pow(10, Math.floor(Math.log10(Math.max(1e-3, Math.min(...values)))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...values, lo * 10))));
  const x = (v) => (plotW * Math.log10(Math.max(v, lo) / lo)) / Math.log10(hi / lo);
  const colors = { ours: '#1f77b4', copy: '#999', ort: '#ff7f0e' };
  const height = timed.length * rowH + 50;
  let svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">`;
  svg += `<text x="${left}" y="14">GB/s, read + written, log scale: <tspan fill="${colors.ours}">■ wgpu-split</tspan> <tspan fill="${colors.copy}">■ vec4 shader copy</tspan> <tspan fill="${colors.ort}">■ onnxruntime-web</tspan>; right: ours / copy, ours / ORT (time ratios, > 1: ours faster)</text>`;
  for (let d = lo; d <= hi; d *= 10) {
    svg += `<line x1="${left + x(d)}" y1="20" x2="${left + x(d)}" y2="${height - 20}" stroke="#eee"/><text x="${left + x(d)}" y="${height - 6}" text-anchor="middle">${d >= 1 ? d : d.toPrecision(1)}</text>`;
  }
  timed.forEach((r, i) => {
    const y = 26 + i * rowH;
    svg += `<text x="${left - 6}" y="${y + 2 * bar}" text-anchor="end">${r.name}</text>`;
    [['ours', r.ours], ['copy', r.copy], ['ort', r.ort.seconds]].forEach(([k, s], j) => {
      if (!Number.isFinite(s)) return;
      svg += `<rect x="${left}" y="${y + j * bar}" width="${Math.max(1, x(gb(r, s)))}" height="${bar - 1}" fill="${colors[k]}"/>`;
    });
    const ratios = [`${fmt(r.copy / r.ours, 2)}x copy`, Number.isFinite(r.ort.seconds) ? `${fmt(r.ort.seconds / r.ours, 2)}x ORT` : ''].filter(Boolean).join(', ');
    svg += `<text x="${left + plotW + 8}" y="${y + 2 * bar}">${ratios}</text>`;
  });
  svg += '</svg>';
  document.getElementById('plot').innerHTML = svg;
}

/// The binding wall: ours here, each ORT build and provider in an iframe.
async function wall(bench, versions) {
  const head = document.querySelector('#wall thead tr');
  const builds = versions.flatMap((v) => Object.keys(ORT_BUILDS).map((p) => ({ version: v, provider: p })));
  for (const b of builds) {
    const th = document.createElement('th');
    th.textContent = `ORT ${b.version} ${ORT_BUILDS[b.provider].label}`;
    head.append(th);
  }
  const rows = new Map();
  for (const c of WALL_CASES) {
    const tr = document.createElement('tr');
    cell(tr, c.name);
    const split = c.op === 'Split';
    const r = JSON.parse(await bench.wall_case(c.inputShapes[0], c.axis, split ? c.split : [], split ? 0 : c.inputShapes.length));
    cell(tr, `${r.status} (${r.dispatches} dispatches${r.copies ? `, ${r.copies} copies` : ''})`, r.status === 'exact' ? 'exact' : 'bad');
    const cells = builds.map(() => cell(tr, '…', 'na'));
    rows.set(c.name, { case: c.name, ours: r, ort: {}, cells });
    document.querySelector('#wall tbody').append(tr);
  }
  for (const [j, b] of builds.entries()) {
    say(`the binding wall: onnxruntime-web ${b.version} ${ORT_BUILDS[b.provider].label}…`);
    const frame = document.createElement('iframe');
    frame.style.display = 'none';
    const done = new Promise((resolve) => {
      const listen = (e) => {
        const m = e.data;
        if (m?.version !== b.version || m?.provider !== b.provider) return;
        if (m.type === 'wall-row') {
          const row = rows.get(m.row.case);
          if (!row) return;
          row.ort[`${b.version} ${b.provider}`] = m.row;
          const td = row.cells[j];
          const why = /Too many storage buffers[^.]*/.exec(m.row.detail)?.[0] ?? /exceeds the maximum per-stage limit \(\d+\)/.exec(m.row.detail)?.[0] ?? m.row.detail.slice(0, 60);
          td.textContent = m.row.status + (m.row.zeros ? ' (all zeros)' : m.row.status !== 'exact' ? ` (${why})` : '');
          td.title = m.row.detail;
          td.className = m.row.status === 'exact' ? 'exact' : 'bad';
        } else if (m.type === 'wall') {
          window.removeEventListener('message', listen);
          resolve(m);
        }
      };
      window.addEventListener('message', listen);
    });
    frame.src = `./ortweb/wall.html?version=${b.version}&provider=${b.provider}&auto`;
    document.body.append(frame);
    const m = await Promise.race([done, new Promise((r) => setTimeout(() => r({ error: 'no answer in 600 s' }), 600000))]);
    frame.remove();
    if (m.error) for (const row of rows.values()) row.ort[`${b.version} ${b.provider}`] ??= { status: 'error', detail: m.error };
  }
  return [...rows.values()].map(({ cells, ...r }) => r);
}

async function main() {
  say('loading the crate (wasm)…');
  await init();
  if (calibrate) say('calibrating (Calibration::measure_async)…');
  const bench = await Bench.create(quick, calibrate);
  const device = bench.gpu_device();
  const adapter = await navigator.gpu.requestAdapter();
  const info = adapter.info ?? {};
  const deviceLine = `${info.vendor ?? ''} ${info.architecture ?? ''} ${info.description ?? ''}`.trim() + `; ${bench.has_timestamps() ? 'timestamp queries' : 'no timestamp queries (the page clock times submit to done)'}; ${quick ? 'quick sizes' : 'full sizes'}, ${rounds} rounds; plans: ${bench.model()}`;
  document.getElementById('device').textContent = `${new Date().toISOString().slice(0, 10)}, ${navigator.userAgent.match(/Chrom\S+|Firefox\S+|Safari\S+/)?.[0] ?? ''}: ${deviceLine}`;
  const o = await loadOrt(device).catch((e) => ({ error: `onnxruntime-web: ${e.message ?? e}` }));
  const rows = [];
  const names = bench.names();
  for (const [i, name] of names.entries()) {
    if (only && !only.includes(name)) continue;
    say(`${name} (${i + 1} of ${names.length})…`);
    const caseInfo = JSON.parse(bench.prepare(i));
    const row = { ...caseInfo, check: await bench.check(), ours: NaN, copy: NaN, ort: { status: 'n/a' } };
    if (row.check === 'exact') Object.assign(row, await timeOurs(bench, caseInfo));
    row.ort = await runOrt(o, device, bench, caseInfo);
    bench.release();
    rows.push(row);
    addRow(row);
  }
  plot(rows);
  const wallRows = q.has('nowall') ? [] : await wall(bench, o.error ? [] : (await (await fetch('/ort/versions.json')).json()).filter((v) => ORT_VERSIONS.includes(v)));
  const bad = rows.filter((r) => r.check !== 'exact').length + wallRows.filter((r) => r.ours.status !== 'exact').length;
  say(`done: ${rows.length} cases, ${rows.filter((r) => r.check === 'exact').length} exact on our side; onnxruntime-web ${o.version ?? '–'}: ${rows.filter((r) => r.ort.status === 'exact').length} exact, ${rows.filter((r) => ['not exact', 'error'].includes(r.ort.status)).length} not`);
  return { device: deviceLine, ort: o.version ?? null, rows, wall: wallRows, bad };
}

window.benchDone = main().catch((e) => {
  say(`error: ${e?.message ?? e}`);
  throw e;
});
