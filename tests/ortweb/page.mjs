// In the page: onnxruntime-web (its WebGPU execution provider, JSEP) and
// the crate's recorded plans on ONE GPUDevice, case by case. For each case
// of `webgpu_recordings --timing` (split and concat): a one-node ONNX model
// (onnx.mjs) run by ORT-web with its inputs and outputs in GPU buffers of
// ours (ort.Tensor.fromGpuBuffer, pre-allocated outputs), and our plan;
// both checked against the host path's FNV-1a hashes before anything is
// timed, then timed alternately (ours, theirs, ours, theirs...): GPU time
// from timestamp queries (ORT-web's own profiling, `env.webgpu.profiling`
// `ondata`, first kernel start to last kernel end; ours an empty pass's
// timestamp before the commands and one after, as timing.mjs), and wall
// time from the start of our encode / of `session.run()` to
// `device.queue.onSubmittedWorkDone()`.

import * as ort from '/ort/ort.min.mjs';
import { model, ORT_TYPES } from './onnx.mjs';
import { fnv1a, generated, inputsOf, prepare, read, timed } from './plans.mjs';

/// The element types ORT-web's WebGPU EP (JSEP) takes for Split and
/// Concat; float16 only where the device has shader-f16. Others are tried
/// anyway (with CPU fallback off), so its error is what is reported.
const ORT_WEBGPU_TYPES = ['float', 'int32', 'uint32'];

const kernels = [];
let state = null;

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const align16 = (n) => Math.max(16, Math.ceil(n / 16) * 16);

/// ORT-web's device (made by its first session), with `timestamp-query`
/// added to what it asks for when the adapter has it (it asks for it only
/// where the adapter lacks Chrome's timestamps inside passes).
async function init() {
  ort.env.wasm.numThreads = 1; // no cross-origin isolation, no threads
  ort.env.wasm.wasmPaths = '/ort/';
  ort.env.logLevel = 'error';
  ort.env.webgpu.profiling = { mode: 'default', ondata: (d) => kernels.push(d) };
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error('no WebGPU adapter');
  if (!adapter.features.has('timestamp-query')) throw new Error('the adapter has no timestamp-query');
  ort.env.webgpu.adapter = {
    limits: adapter.limits,
    features: adapter.features,
    info: adapter.info,
    requestDevice: (d = {}) => adapter.requestDevice({ ...d, requiredFeatures: [...new Set([...(d.requiredFeatures ?? []), 'timestamp-query'])] }),
  };
  // The first session makes the device: a float Split of two elements.
  const m = model('init', 'float', { op: 'Split', axis: 0, split: [1, 1], input_shapes: [[2]], output_shapes: [[1], [1]] });
  const s = await ort.InferenceSession.create(m.bytes, { executionProviders: ['webgpu'] });
  await s.release();
  const device = ort.env.webgpu.device;
  if (!device) throw new Error('ORT-web made no device (ort.env.webgpu.device is unset after its first session)');
  const querySet = device.createQuerySet({ type: 'timestamp', count: 2 });
  const resolve = device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const readback = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const info = adapter.info ?? {};
  return {
    device,
    querySet,
    resolve,
    readback,
    f16: device.features.has('shader-f16'),
    adapter: `${info.vendor} ${info.architecture}${info.description ? ` (${info.description})` : ''}`,
    features: [...device.features].sort(),
  };
}

/// Loads the timing's cases; returns what the driver prints and the
/// cases' names, kinds and types.
export async function load(url) {
  const doc = await (await fetch(url)).json();
  const blob = new Uint8Array(await (await fetch(new URL(doc.blob, new URL(url, location.href)))).arrayBuffer());
  const cases = [...doc.cases.map((c) => ({ ...c, kind: 'split' })), ...(doc.concat_cases ?? []).map((c) => ({ ...c, kind: 'concat' }))];
  const g = await init();
  state = { ...g, cases, blob };
  return {
    adapter: g.adapter,
    features: g.features,
    ort: ort.env.versions?.web ?? ort.env.versions?.common ?? '?',
    concat: (doc.concat_cases ?? []).length,
    cases: cases.map((c) => ({ name: c.name, kind: c.kind, type: c.element_type, shape: c.shape, onnx: c.onnx })),
  };
}

/// One timed run of ours: GPU ns between the timestamps of an empty pass
/// before the commands and one after; wall ms from the encode's start to
/// the queue's done.
async function oursOnce(record) {
  const { device, querySet, resolve, readback } = state;
  const { ns, wall } = await timed(device, querySet, resolve, readback, record);
  return { gpu: ns, wall };
}

/// One timed run of ORT-web: GPU ns from its first kernel's start to its
/// last kernel's end (its profiling), wall ms from `run()` to the queue's
/// done. `expect`: how many kernels a run profiles (0: learn it).
async function ortOnce(session, feeds, fetches, expect) {
  const { device } = state;
  const before = kernels.length;
  const t0 = performance.now();
  const out = await session.run(feeds, fetches);
  await device.queue.onSubmittedWorkDone();
  const wall = performance.now() - t0;
  // ORT-web reads its timestamps back after the submit: wait for them.
  const deadline = performance.now() + (expect ? 5000 : 300);
  while (performance.now() < deadline && (expect ? kernels.length - before < expect : true)) await sleep(expect ? 0 : 20);
  const mine = kernels.slice(before);
  if (expect && mine.length !== expect) throw new Error(`ORT-web profiled ${mine.length} kernels, not ${expect}`);
  const gpu = mine.length ? Math.max(...mine.map((k) => Number(k.endTime))) - Math.min(...mine.map((k) => Number(k.startTime))) : NaN;
  return { gpu, wall, out, kernels: mine };
}

/// Runs case `i` on both sides: checks, then `rounds` timed runs of each
/// after 2 warm-up rounds, alternating. Returns the case's row.
export async function runCase(i, rounds) {
  const { device, cases, blob } = state;
  const c = cases[i];
  const row = { name: c.name, kind: c.kind, type: c.element_type, shape: c.shape, ours: { status: 'not run' }, ort: { status: 'not run' } };
  const stray = [];
  device.pushErrorScope('validation');
  device.pushErrorScope('out-of-memory');
  const data = inputsOf(c).map((x) => generated(x.seed, x.len));
  // Ours: prepared and checked.
  let p = null;
  try {
    p = await prepare(device, c, blob, data);
    await oursOnce(p.plan);
    const problems = [...p.errors];
    for (const [k, o] of c.outputs.entries()) {
      const got = fnv1a(await read(device, p.buffers[o.buffer], o.offset, o.len));
      if (got !== o.fnv) problems.push(`output ${k}: FNV-1a ${got.toString(16)}, the host path's ${o.fnv.toString(16)}`);
    }
    row.ours = problems.length ? { status: 'not exact', error: problems.join('; ') } : { status: 'exact', kernel: c.kernel, dispatches: p.dispatches, copies: p.copies };
  } catch (e) {
    row.ours = { status: 'error', error: String(e.message ?? e) };
  }
  // Theirs: a one-node model, GPU-resident inputs and outputs.
  let session = null;
  const ortBuffers = [];
  let feeds = null;
  let fetches = null;
  let expect = 0;
  const type = ORT_TYPES[c.element_type];
  if (!c.onnx?.op) row.ort = { status: 'no model', error: `no one-node ONNX model: ${c.onnx?.why ?? 'no description'}` };
  else if (c.element_type === 'float16' && !state.f16) row.ort = { status: 'skipped', error: 'float16: the device has no shader-f16 (SwiftShader)' };
  else {
    try {
      const m = model(c.name, c.element_type, c.onnx);
      session = await ort.InferenceSession.create(m.bytes, {
        executionProviders: ['webgpu'],
        preferredOutputLocation: 'gpu-buffer',
        // A node the WebGPU EP does not take fails the session instead of
        // running on the CPU (wasm) EP.
        extra: { session: { disable_cpu_ep_fallback: '1' } },
      });
      const buffer = (len) => {
        const b = device.createBuffer({ size: align16(len), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
        ortBuffers.push(b);
        return b;
      };
      feeds = {};
      m.inputs.forEach((name, k) => {
        const b = buffer(data[k].length);
        device.queue.writeBuffer(b, 0, data[k]);
        feeds[name] = ort.Tensor.fromGpuBuffer(b, { dataType: type, dims: c.onnx.input_shapes[k] });
      });
      fetches = {};
      const outs = m.outputs.map((name, k) => {
        const b = buffer(c.outputs[k].len);
        fetches[name] = ort.Tensor.fromGpuBuffer(b, { dataType: type, dims: c.onnx.output_shapes[k] });
        return b;
      });
      const first = await ortOnce(session, feeds, fetches, 0);
      expect = first.kernels.length;
      const problems = [];
      if (expect === 0) problems.push('ORT-web profiled no kernel (did the node run on the GPU?)');
      for (const [k, o] of c.outputs.entries()) {
        const got = fnv1a(await read(device, outs[k], 0, o.len));
        if (got !== o.fnv) problems.push(`output ${k}: FNV-1a ${got.toString(16)}, the host path's ${o.fnv.toString(16)}`);
      }
      const names = [...new Set(first.kernels.map((k) => `${k.kernelType}${k.programName && k.programName !== k.kernelType ? `/${k.programName}` : ''}`))];
      row.ort = problems.length ? { status: 'not exact', error: problems.join('; ') } : { status: 'exact', kernels: expect, names };
      if (!ORT_WEBGPU_TYPES.includes(c.element_type) && c.element_type !== 'float16') row.ort.note = `${c.element_type} ran`;
    } catch (e) {
      row.ort = { status: 'error', error: String(e.message ?? e).split('\n')[0].slice(0, 400) };
    }
  }
  // Timed: only what ran exactly; ours, theirs, ours, theirs...
  const t = { ours: { gpu: [], wall: [] }, ort: { gpu: [], wall: [] } };
  const oursOk = row.ours.status === 'exact';
  const ortOk = row.ort.status === 'exact';
  try {
    for (let r = -2; r < rounds && (oursOk || ortOk); r++) {
      if (oursOk) {
        const x = await oursOnce(p.plan);
        if (r >= 0) t.ours.gpu.push(x.gpu), t.ours.wall.push(x.wall);
      }
      if (ortOk) {
        const x = await ortOnce(session, feeds, fetches, expect);
        if (r >= 0) t.ort.gpu.push(x.gpu), t.ort.wall.push(x.wall);
      }
    }
  } catch (e) {
    const side = ortOk ? row.ort : row.ours;
    side.status = 'error';
    side.error = `while timing: ${e.message ?? e}`;
  }
  for (const scope of ['out-of-memory', 'validation']) {
    const e = await device.popErrorScope();
    if (e) stray.push(`${scope}: ${e.message}`);
  }
  if (stray.length) row.scopeErrors = stray;
  for (const side of ['ours', 'ort']) {
    if (t[side].gpu.length) {
      row[side].gpuUs = median(t[side].gpu) / 1e3;
      row[side].wallMs = median(t[side].wall);
      row[side].runs = t[side].gpu.length;
    }
  }
  p?.release();
  await session?.release();
  ortBuffers.forEach((b) => b.destroy());
  return row;
}
