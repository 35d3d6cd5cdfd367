// The binding wall: onnxruntime-web's WebGPU providers put a Split's input
// and every output (a Concat's every input and its output) in one shader,
// so past the device's maxStorageBuffersPerShaderStage a one-node model
// either throws or returns wrong data. This module (a browser ES module,
// no dependency but ./onnx_model.mjs) holds the shapes and runs them on an
// already-loaded `ort` module:
//
//   WALL_CASES                 the shapes (name, op, axis, n, inputShapes,
//                              outputShapes, split, onnx)
//   caseInputs(c)              deterministic Float32Array inputs (never 0)
//   caseExpected(c, inputs)    the exact outputs, computed here
//   checkOutputs(c, outputs)   {status: 'exact' | 'wrong', detail, zeros}
//   caseModel(c)               the one-node ONNX model (opset 13)
//   ORT_BUILDS, ortUrls()      which dist files select which provider
//   loadOrt(moduleUrl, ...)    imports an ORT build and sets its env
//   runWallCase(ort, c)        {status: 'exact' | 'wrong' | 'error', detail, zeros, ms, ..}
//   runWall(ort, cases, onRow) every case, one after another
//   pageInit, pageRun          what wall_probe.mjs evaluates in its pages
//
// Load ONE ORT build per page (two builds in one page could share
// globals). wall_probe.mjs drives this in headless Chromium, one page per
// (version, provider); the bench page imports it next to the crate's rows.

import { model } from './onnx_model.mjs';

const prod = (s) => s.reduce((a, b) => a * b, 1);

/// A Split of `inputShape` into `split` lengths along `axis`.
function splitCase(name, group, inputShape, axis, split) {
  const outputShapes = split.map((l) => inputShape.map((d, i) => (i === axis ? l : d)));
  return {
    name, group, op: 'Split', axis, n: split.length, elementType: 'float',
    inputShapes: [inputShape], outputShapes, split,
    onnx: { op: 'Split', axis, split, input_shapes: [inputShape], output_shapes: outputShapes },
  };
}

/// A Concat of `n` inputs of `inputShape` along `axis`.
function concatCase(name, group, inputShape, axis, n) {
  const inputShapes = Array.from({ length: n }, () => [...inputShape]);
  const outputShape = inputShape.map((d, i) => (i === axis ? d * n : d));
  return {
    name, group, op: 'Concat', axis, n, elementType: 'float',
    inputShapes, outputShapes: [outputShape], split: null,
    onnx: { op: 'Concat', axis, input_shapes: inputShapes, output_shapes: [outputShape] },
  };
}

/// The counts around the wall: WebGPU's default limit is 8 storage
/// buffers per stage (JSEP keeps it), SwiftShader's adapter allows 10.
export const WALL_COUNTS = [8, 9, 10, 16, 32, 64];
/// Concat only: far past any adapter's limit.
export const WALL_BIG_COUNTS = [128, 256, 512, 1024];
/// The control below the wall: 7 outputs + 1 input (7 inputs + 1 output)
/// fill WebGPU's default 8 exactly.
export const WALL_CONTROL_COUNTS = [7];

/// The shapes, float32 throughout (N = 7, a control, then WALL_COUNTS).
/// Every output (every Concat input) has 16 elements in the N-way cases,
/// 4 in the big Concats:
/// - split_last_xN:   [2, 4, 2N] -> N x [2, 4, 2] on axis 2 (the last: inner)
/// - split_axis1_xN:  [2, 2N, 4] -> N x [2, 2, 4] on axis 1 (outer)
/// - concat_last_xN / concat_axis1_xN: the same shapes the other way
/// - concat_1x4_axis0_xN / concat_1x4_axis1_xN (N in 128..1024): N x [1, 4] on axis 0 / 1
/// - split_2x64x8_axis1_xN: the reported shape, [2, 64, 8] into N on axis 1
///   (N = 10: lengths 7,7,7,7,6,6,6,6,6,6)
export const WALL_CASES = [
  ...[...WALL_CONTROL_COUNTS, ...WALL_COUNTS].flatMap((n) => [
    splitCase(`split_last_x${n}`, n < 8 ? 'split (control)' : 'split', [2, 4, 2 * n], 2, Array(n).fill(2)),
    splitCase(`split_axis1_x${n}`, n < 8 ? 'split (control)' : 'split', [2, 2 * n, 4], 1, Array(n).fill(2)),
  ]),
  ...[10, 16, 32, 64].map((n) =>
    splitCase(`split_2x64x8_axis1_x${n}`, 'split (reported shape)', [2, 64, 8], 1, Array.from({ length: n }, (_, k) => Math.floor(64 / n) + (k < 64 % n ? 1 : 0))),
  ),
  ...[...WALL_CONTROL_COUNTS, ...WALL_COUNTS].flatMap((n) => [
    concatCase(`concat_last_x${n}`, n < 8 ? 'concat (control)' : 'concat', [2, 4, 2], 2, n),
    concatCase(`concat_axis1_x${n}`, n < 8 ? 'concat (control)' : 'concat', [2, 2, 4], 1, n),
  ]),
  ...WALL_BIG_COUNTS.flatMap((n) => [
    concatCase(`concat_1x4_axis0_x${n}`, 'concat (big)', [1, 4], 0, n),
    concatCase(`concat_1x4_axis1_x${n}`, 'concat (big)', [1, 4], 1, n),
  ]),
];

/// The case's inputs: element i of the inputs taken in order (input 0's
/// elements, then input 1's...) is i + 1. Never 0, all exact in float32
/// (under 2^24), each distinct, so a zeroed or misplaced element shows.
export function caseInputs(c) {
  let next = 1;
  return c.inputShapes.map((s) => {
    const a = new Float32Array(prod(s));
    for (let i = 0; i < a.length; i++) a[i] = next++;
    return a;
  });
}

/// The exact outputs of the case on `inputs`, row-major.
export function caseExpected(c, inputs = caseInputs(c)) {
  const axis = c.axis;
  if (c.op === 'Split') {
    const s = c.inputShapes[0];
    const outer = prod(s.slice(0, axis));
    const inner = prod(s.slice(axis + 1));
    const x = inputs[0];
    let offset = 0;
    return c.split.map((len) => {
      const y = new Float32Array(outer * len * inner);
      for (let o = 0; o < outer; o++) y.set(x.subarray((o * s[axis] + offset) * inner, (o * s[axis] + offset + len) * inner), o * len * inner);
      offset += len;
      return y;
    });
  }
  const out = c.outputShapes[0];
  const outer = prod(out.slice(0, axis));
  const inner = prod(out.slice(axis + 1));
  const y = new Float32Array(prod(out));
  let offset = 0;
  c.inputShapes.forEach((s, k) => {
    const len = s[axis];
    for (let o = 0; o < outer; o++) y.set(inputs[k].subarray(o * len * inner, (o + 1) * len * inner), (o * out[axis] + offset) * inner);
    offset += len;
  });
  return [y];
}

/// Compares `outputs` (array-likes, in the case's output order) with the
/// expected ones element by element: {status, detail, zeros}. `zeros`:
/// every element of every output is 0 (the expected values never are).
export function checkOutputs(c, outputs, expected = caseExpected(c)) {
  let wrongOutputs = 0;
  let zeroOutputs = 0;
  let allZero = true;
  let first = null;
  let stale = null;
  expected.forEach((want, k) => {
    const got = outputs[k];
    let bad = false;
    let zero = true;
    if (!got || got.length !== want.length) {
      bad = true;
      zero = false;
      first ??= `output ${k}: ${got ? got.length : 'no'} elements, ${want.length} expected`;
    } else {
      for (let i = 0; i < want.length; i++) {
        // Exact: bit equality would also do (no NaN or -0 among these).
        if (got[i] !== 0) zero = false;
        if (got[i] !== want[i]) {
          if (!bad) first ??= `output ${k}[${i}] = ${got[i]}, expected ${want[i]}`;
          bad = true;
        }
      }
    }
    if (bad) wrongOutputs++;
    if (bad && !zero && got?.length === want.length) stale ??= `output ${k} holds ${Array.from(got.subarray(0, 6)).join(',')}${got.length > 6 ? ',..' : ''}`;
    if (zero) zeroOutputs++;
    if (!zero) allZero = false;
  });
  const counts = { outputs: expected.length, wrongOutputs, zeroOutputs };
  if (wrongOutputs === 0) return { status: 'exact', detail: `${expected.length} output${expected.length > 1 ? 's' : ''} exact`, zeros: false, ...counts };
  const detail = allZero
    ? `all zeros (${expected.length} of ${expected.length} outputs)`
    : `${wrongOutputs} of ${expected.length} outputs wrong${zeroOutputs ? `, ${zeroOutputs} all zeros` : ''}; first: ${first}${stale ? `; ${stale}` : ''}`;
  return { status: 'wrong', detail, zeros: allZero, ...counts };
}

/// The case's one-node model: {bytes, inputs: ['x0'..], outputs: ['y0'..]}.
export function caseModel(c, opset = 13) {
  return model(c.name, c.elementType, c.onnx, opset);
}

/// Which dist files select which WebGPU provider (checked for 1.30.0 and
/// 1.31.1: each bundle names one wasm module, see docs/journal/2026-12-06-the-web.md).
/// jsep: the JavaScript WebGPU EP (JSEP); cpp: the C++ WebGPU EP (the
/// asyncify build; `ort.jspi.min.mjs` + the jspi wasm is the same EP with
/// JSPI instead of asyncify, not probed here).
export const ORT_BUILDS = {
  jsep: { label: 'JSEP', module: 'ort.min.mjs', wasm: 'ort-wasm-simd-threaded.jsep.wasm' },
  cpp: { label: 'C++', module: 'ort.webgpu.min.mjs', wasm: 'ort-wasm-simd-threaded.asyncify.wasm' },
};
export const ORT_VERSIONS = ['1.30.0', '1.31.1'];

/// The module URL and wasmPaths of (version, provider) under `prefix`
/// (the probe serves each version's dist at /ort/VERSION/).
export function ortUrls(version, provider, prefix = '/ort/') {
  const build = ORT_BUILDS[provider];
  if (!build) throw new Error(`unknown provider ${provider} (${Object.keys(ORT_BUILDS).join(', ')})`);
  const wasmPaths = `${prefix}${version}/`;
  return { moduleUrl: `${wasmPaths}${build.module}`, wasmPaths };
}

/// Imports an ORT build and sets its env: one thread (no cross-origin
/// isolation needed), the wasm from `wasmPaths`, errors-only logging.
export async function loadOrt(moduleUrl, wasmPaths, { logLevel = 'error' } = {}) {
  const ort = await import(new URL(moduleUrl, location.href).href);
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.wasmPaths = new URL(wasmPaths, location.href).href;
  ort.env.logLevel = logLevel;
  return ort;
}

/// The GPUDevice ORT made (after its first session), or null where the
/// build does not expose one.
export async function ortDevice(ort) {
  try {
    const d = await ort.env.webgpu.device;
    return d && typeof d.createBuffer === 'function' ? d : null;
  } catch {
    return null;
  }
}

/// `promise`, or a rejection after `ms`.
function within(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`${what}: no answer in ${ms / 1000} s`), { stuck: true })), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const firstLine = (e) => String(e?.message ?? e).split('\n').find((l) => l.trim()) ?? String(e);

/// WebGPU errors ORT's device reports without throwing (JSEP's validation
/// errors), collected per device.
const uncaptured = new WeakMap();
function watch(device) {
  if (!device || uncaptured.has(device)) return;
  const log = [];
  uncaptured.set(device, log);
  device.addEventListener('uncapturederror', (e) => log.push(e.error?.message ?? String(e.error)));
}

/// Runs case `c` on `ort` (already loaded): a session of the one-node
/// model on ['webgpu'] with CPU fallback off, CPU-side ort.Tensor inputs,
/// every output element compared exactly. Returns {status: 'exact' |
/// 'wrong' | 'error', detail, zeros, ms, outputs?, wrongOutputs?,
/// zeroOutputs?, webgpuErrors?, webgpuError?, stage?, stuck?}: `detail` is the
/// error's first line (prefixed with the stage that threw: create, run)
/// or what was wrong; WebGPU errors the device reported without a throw
/// are appended; `stuck`: a timeout, the page should be reloaded.
export async function runWallCase(ort, c, { timeoutMs = 60000 } = {}) {
  const t0 = performance.now();
  const inputs = caseInputs(c);
  const expected = caseExpected(c, inputs);
  let session = null;
  let stage = 'model';
  let row;
  const device0 = await ortDevice(ort);
  const before = device0 ? uncaptured.get(device0)?.length ?? 0 : 0;
  try {
    const m = caseModel(c);
    stage = 'create';
    session = await within(
      ort.InferenceSession.create(m.bytes, {
        executionProviders: ['webgpu'],
        // A node the WebGPU EP does not take fails the session instead of
        // running on the CPU (wasm) EP.
        extra: { session: { disable_cpu_ep_fallback: '1' } },
      }),
      timeoutMs,
      'InferenceSession.create',
    );
    watch(await ortDevice(ort));
    stage = 'run';
    const feeds = {};
    m.inputs.forEach((name, k) => (feeds[name] = new ort.Tensor('float32', inputs[k], c.inputShapes[k])));
    const out = await within(session.run(feeds), timeoutMs, 'session.run');
    stage = 'read';
    const outputs = [];
    const shapes = [];
    for (const [k, name] of m.outputs.entries()) {
      const t = out[name];
      if (!t) {
        outputs.push(null);
        continue;
      }
      const data = t.location && t.location !== 'cpu' ? await within(t.getData(), timeoutMs, 'getData') : t.data;
      outputs.push(data);
      if (t.dims.join('x') !== c.outputShapes[k].join('x')) shapes.push(`output ${k}: dims ${t.dims.join('x')}, expected ${c.outputShapes[k].join('x')}`);
    }
    row = checkOutputs(c, outputs, expected);
    if (shapes.length) row = { ...row, status: 'wrong', detail: `${shapes[0]}; ${row.detail}` };
  } catch (e) {
    row = { status: 'error', detail: `${stage}: ${firstLine(e).slice(0, 1000)}`, zeros: false, stage };
    if (e?.stuck) row.stuck = true;
  }
  // Let the device's error events (validation) arrive.
  await new Promise((r) => setTimeout(r, 20));
  const device = await ortDevice(ort);
  const log = device ? uncaptured.get(device) : null;
  if (log && log.length > before) {
    const mine = log.slice(before);
    row.webgpuErrors = mine.length;
    // The root error, not those of the objects it invalidated.
    row.webgpuError = firstLine(mine.find((m) => !/invalid due to a previous error/.test(m)) ?? mine[0]).slice(0, 400);
    row.detail += ` [WebGPU errors x${mine.length}, the first: ${row.webgpuError.slice(0, 200)}]`;
  }
  if (!row.stuck) {
    try {
      await session?.release();
    } catch {
      // Nothing more to learn.
    }
  }
  row.ms = Math.round(performance.now() - t0);
  return row;
}

/// Runs `cases` on `ort` one after another, `onRow(row, c)` after each;
/// stops at a stuck case (a timeout). Returns the rows ({case, status,
/// detail, zeros, ms}).
export async function runWall(ort, cases = WALL_CASES, onRow = () => {}, options = {}) {
  const rows = [];
  for (const c of cases) {
    const row = { case: c.name, ...(await runWallCase(ort, c, options)) };
    rows.push(row);
    await onRow(row, c);
    if (row.stuck) break;
  }
  return rows;
}

/// What the page knows of the adapter, ORT and ORT's device: run after a
/// first session (`warmUp`) so that ORT has made its device.
export async function describe(ort) {
  const adapter = await navigator.gpu?.requestAdapter();
  const info = adapter?.info ?? {};
  const device = await ortDevice(ort);
  const wasm = performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.endsWith('.wasm') || /ort.*\.mjs$/.test(n));
  return {
    ort: ort.env.versions?.web ?? ort.env.versions?.common ?? null,
    adapter: adapter ? `${info.vendor ?? ''} ${info.architecture ?? ''}${info.description ? ` (${info.description})` : ''}`.trim() : null,
    adapterMaxStorageBuffersPerShaderStage: adapter?.limits.maxStorageBuffersPerShaderStage ?? null,
    adapterMaxBindingsPerBindGroup: adapter?.limits.maxBindingsPerBindGroup ?? null,
    deviceMaxStorageBuffersPerShaderStage: device?.limits.maxStorageBuffersPerShaderStage ?? null,
    ortDeviceExposed: !!device,
    loaded: wasm.map((n) => new URL(n).pathname),
  };
}

/// A first session (a float Split of two elements, checked), so that ORT
/// has made its device before `describe`.
export async function warmUp(ort, options = {}) {
  return runWallCase(ort, splitCase('warm_up', 'warm-up', [2], 0, [1, 1]), options);
}

/// For a page driven over DevTools (wall_probe.mjs): loads (version,
/// provider) from `prefix`, warms up, describes. Keeps the module for
/// `pageRun`.
let pageOrt = null;
export async function pageInit(version, provider, prefix = '/ort/') {
  const { moduleUrl, wasmPaths } = ortUrls(version, provider, prefix);
  pageOrt = await loadOrt(moduleUrl, wasmPaths);
  const warm = await warmUp(pageOrt);
  return { version, provider, moduleUrl, wasmPaths, warmUp: warm, ...(await describe(pageOrt)) };
}

/// For the probe: case `name` on the page's ORT.
export async function pageRun(name, timeoutMs = 60000) {
  const c = WALL_CASES.find((x) => x.name === name);
  if (!c) throw new Error(`no case ${name}`);
  if (!pageOrt) throw new Error('pageInit first');
  return { case: name, ...(await runWallCase(pageOrt, c, { timeoutMs })) };
}
