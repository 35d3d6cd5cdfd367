// In the page: executes the recordings of `webgpu_recordings` on the
// browser's WebGPU device (requested with the default limits), each in its
// recorded order after validating it once against exactly its recorded
// usages, and compares every byte of every buffer with what the host path
// expects.
//
// The data: `NAME.json` holds the modules (WGSL, entry point, bind group
// layout) and the recordings (operator, buffers, modules, commands, and per
// buffer the bytes it holds before and after the split or concat as
// segments of `NAME.bin`);
// `NAME.bin` holds the bytes the segments name (guard bytes, inputs, host
// outputs, tables).

const align4 = (n) => Math.max(4, Math.ceil(n / 4) * 4);

let doc = null;
let blob = null;
let device = null;
let adapterInfo = null;
/// Per module index, on this device: { errors, warnings, layout, pipeline }.
let compiled = new Map();
/// Errors no scope caught (uncapturederror, device loss), to the recording
/// that was running.
let stray = [];
/// The recording running now (the driver reads it after a timeout).
export let current = null;

/// Fetches the recordings and their bytes.
export async function load(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  doc = await response.json();
  const binUrl = new URL(doc.blob, new URL(url, location.href));
  const bin = await fetch(binUrl);
  if (!bin.ok) throw new Error(`${binUrl}: HTTP ${bin.status}`);
  blob = new Uint8Array(await bin.arrayBuffer());
  await newDevice();
  return {
    recordings: doc.recordings.length,
    modules: doc.modules.length,
    blobBytes: blob.length,
    adapter: adapterInfo,
  };
}

/// A device with WebGPU's default limits and no optional feature.
async function newDevice() {
  const adapter = await navigator.gpu?.requestAdapter();
  if (!adapter) throw new Error('navigator.gpu.requestAdapter() gave no adapter');
  const info = adapter.info ?? {};
  adapterInfo = {
    vendor: info.vendor,
    architecture: info.architecture,
    description: info.description,
    fallback: info.isFallbackAdapter ?? adapter.isFallbackAdapter ?? null,
  };
  device = await adapter.requestDevice();
  adapterInfo.maxStorageBuffersPerShaderStage = device.limits.maxStorageBuffersPerShaderStage;
  adapterInfo.minStorageBufferOffsetAlignment = device.limits.minStorageBufferOffsetAlignment;
  compiled = new Map();
  const mine = device;
  device.addEventListener('uncapturederror', (e) => stray.push(`uncaptured ${e.error.constructor.name}: ${e.error.message}`));
  device.lost.then((info) => {
    if (mine === device) stray.push(`device lost (${info.reason}): ${info.message}`);
  });
}

const USAGE = () => ({
  STORAGE: GPUBufferUsage.STORAGE,
  COPY_SRC: GPUBufferUsage.COPY_SRC,
  COPY_DST: GPUBufferUsage.COPY_DST,
  UNIFORM: GPUBufferUsage.UNIFORM,
});

/// Writes `segments` ([at, blob offset, length]) into `bytes`.
function fill(bytes, segments) {
  for (const [at, from, len] of segments) bytes.set(blob.subarray(from, from + len), at);
}

/// Compiles the modules `indices` not yet compiled on this device, all at
/// once (`createComputePipelineAsync`, so the browser may compile them in
/// parallel): per module its compilation errors and warnings, layout and
/// pipeline, or the errors that stopped it.
async function compile(indices) {
  const pending = [];
  for (const index of new Set(indices)) {
    if (compiled.has(index)) continue;
    const m = doc.modules[index];
    const c = { errors: [], warnings: [], layout: null, pipeline: null };
    compiled.set(index, c);
    device.pushErrorScope('validation');
    const module = device.createShaderModule({ label: `module ${index}`, code: m.wgsl });
    c.layout = device.createBindGroupLayout({
      label: `module ${index} layout`,
      entries: m.layout.map((e) => ({
        binding: e.binding,
        visibility: GPUShaderStage.COMPUTE,
        buffer: { type: e.kind, minBindingSize: e.min_binding_size },
      })),
    });
    const pipeline = device
      .createComputePipelineAsync({
        label: `module ${index} pipeline`,
        layout: device.createPipelineLayout({ bindGroupLayouts: [c.layout] }),
        compute: { module, entryPoint: m.entry_point },
      })
      .then((p) => {
        c.pipeline = p;
      })
      .catch((e) => c.errors.push(`module ${index}: pipeline: ${e.message}`));
    const scope = device.popErrorScope().then((e) => {
      if (e) c.errors.push(`module ${index}: validation error: ${e.message}`);
    });
    const info = module.getCompilationInfo().then((info) => {
      for (const x of info.messages) {
        const line = `module ${index}: compilation ${x.type} at line ${x.lineNum}: ${x.message}`;
        (x.type === 'error' ? c.errors : c.warnings).push(line);
      }
    });
    pending.push(pipeline, scope, info);
  }
  await Promise.all(pending);
}

/// Where byte `at` of buffer `b` lies, by the recording's regions (the
/// caller's buffers come first, then the table and the spare buffer).
function whereIs(rec, b, at) {
  if (b >= rec.buffers.length - 2) return `${rec.buffers[b].label}, byte ${at}`;
  for (const r of rec.regions) {
    if (r.buffer === b && at >= r.offset && at < r.offset + r.size) return `${r.what}, byte ${at - r.offset}`;
  }
  return 'outside every region: a guard byte';
}

const hex = (x) => `0x${x.toString(16).padStart(2, '0')}`;

/// The recording's buffers, each filled with its bytes before the split.
/// For the execution, its usages plus `COPY_SRC` (to read it back);
/// `exact` (the validation): exactly its recorded usages and size, so that
/// a copy or binding the recorded usages forbid fails as it would in wgpu.
function createBuffers(rec, exact = false) {
  const usage = USAGE();
  return rec.buffers.map((b, k) => {
    const size = exact ? b.size : align4(b.size);
    // Mapping at creation needs a multiple of 4 bytes (every recorded size
    // is one); a buffer left unfilled still validates the same.
    const mapped = size % 4 === 0;
    const buffer = device.createBuffer({
      label: b.label,
      size,
      usage: b.usages.reduce((u, name) => u | usage[name], 0) | (exact ? 0 : usage.COPY_SRC),
      mappedAtCreation: mapped,
    });
    if (mapped) {
      fill(new Uint8Array(buffer.getMappedRange()), rec.contents[k].before);
      buffer.unmap();
    }
    return buffer;
  });
}

/// Records the recording's commands in their recorded order, as an encode
/// does: each copy outside compute passes, consecutive dispatches in one
/// pass (a copy between dispatches ends it, and a later dispatch opens
/// another), so a recording whose order matters runs in its order.
function encode(rec, buffers, modules) {
  const encoder = device.createCommandEncoder();
  let pass = null;
  let bound = -1;
  for (const c of rec.commands) {
    if (c.command === 'copy') {
      pass?.end();
      pass = null;
      encoder.copyBufferToBuffer(buffers[c.src], c.src_offset, buffers[c.dst], c.dst_offset, c.size);
      continue;
    }
    // A command this suite does not know would otherwise be left out.
    if (c.command !== 'dispatch') throw new Error(`${rec.name}: unknown command ${c.command}`);
    if (!pass) {
      pass = encoder.beginComputePass();
      // A new pass has no pipeline set.
      bound = -1;
    }
    const m = modules[c.module];
    if (c.module !== bound) {
      // A module that failed to compile has no pipeline: the pass is
      // invalid, which the validation scope reports.
      if (m.pipeline) pass.setPipeline(m.pipeline);
      bound = c.module;
    }
    pass.setBindGroup(0, device.createBindGroup({
      layout: m.layout,
      entries: c.bindings.map((b) => ({
        binding: b.binding,
        resource: { buffer: buffers[b.buffer], offset: b.offset, size: b.size },
      })),
    }));
    pass.dispatchWorkgroups(...c.workgroups);
  }
  pass?.end();
  return encoder.finish();
}

/// Validates the recording once against exactly its recorded usages: its
/// commands encoded in order and submitted on buffers created as recorded
/// (the execution adds `COPY_SRC` to every buffer, which would let a copy
/// from a buffer without it pass). Nothing is read back; returns the
/// scope's answer, a failure or null, as a promise.
function validate(rec, modules) {
  device.pushErrorScope('validation');
  const buffers = createBuffers(rec, true);
  device.queue.submit([encode(rec, buffers, modules)]);
  // Destroying after the submit lets the submitted work finish.
  for (const b of buffers) b.destroy();
  return device.popErrorScope().then((e) => (e ? `validation against the recorded usages failed: ${e.message}` : null));
}

/// Copies every buffer into one readable buffer, in a submit of its own
/// (an invalid recording leaves the buffers as they were, and the
/// comparison says so); returns it and each buffer's offset in it.
function readBack(buffers) {
  const offsets = [];
  let total = 0;
  for (const b of buffers) {
    offsets.push(total);
    total += b.size;
  }
  const readback = device.createBuffer({ label: 'readback', size: total, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  buffers.forEach((b, k) => encoder.copyBufferToBuffer(b, 0, readback, offsets[k], b.size));
  device.queue.submit([encoder.finish()]);
  return { readback, offsets };
}

/// Compares buffer `k`'s bytes (`actual`) with what it must hold after the
/// split; returns the failure, or null.
function compare(rec, k, actual) {
  const expected = new Uint8Array(actual.length);
  fill(expected, rec.contents[k].after);
  let first = -1;
  let differing = 0;
  for (let i = 0; i < expected.length; i++) {
    if (actual[i] !== expected[i]) {
      if (first < 0) first = i;
      differing++;
    }
  }
  if (first < 0) return null;
  return (
    `buffer ${k} (${rec.buffers[k].label}): byte ${first} (${whereIs(rec, k, first)}) is ${hex(actual[first])}, ` +
    `expected ${hex(expected[first])}; ${differing} of ${expected.length} bytes differ`
  );
}

/// Validates and executes one recording; returns its counts and failures.
async function execute(rec) {
  const failures = [];
  stray = [];
  device.pushErrorScope('internal');
  device.pushErrorScope('out-of-memory');
  device.pushErrorScope('validation');
  const buffers = createBuffers(rec);
  // Compiled for the batch already, unless a lost device took them.
  await compile(rec.modules);
  const modules = rec.modules.map((m) => compiled.get(m));
  for (const c of modules) failures.push(...c.errors);
  // Its own scope, inside the execution's: its errors are counted apart.
  const validation = validate(rec, modules);
  device.queue.submit([encode(rec, buffers, modules)]);
  const { readback, offsets } = readBack(buffers);
  const invalid = await validation;
  if (invalid) failures.push(invalid);
  for (const scope of ['validation', 'out-of-memory', 'internal']) {
    const e = await device.popErrorScope();
    if (e) failures.push(`${scope} error: ${e.message}`);
  }
  let compared = 0;
  try {
    await readback.mapAsync(GPUMapMode.READ);
    const got = new Uint8Array(readback.getMappedRange());
    buffers.forEach((b, k) => {
      const failure = compare(rec, k, got.subarray(offsets[k], offsets[k] + b.size));
      compared += b.size;
      if (failure) failures.push(failure);
    });
    readback.unmap();
  } catch (e) {
    failures.push(`reading the buffers back failed: ${e.message}`);
  }
  for (const b of [...buffers, readback]) b.destroy();
  // An uncaptured error or a loss surfaces by now at the latest.
  failures.push(...stray);
  if (stray.some((x) => x.startsWith('device lost'))) await newDevice();
  return {
    failures,
    warnings: modules.flatMap((m) => m.warnings),
    dispatches: rec.commands.filter((x) => x.command === 'dispatch').length,
    copies: rec.commands.filter((x) => x.command === 'copy').length,
    compared,
    invalid: invalid ? 1 : 0,
  };
}

/// Executes recordings `from` to `to` (exclusive); returns the counts and
/// every failure with its recording's name.
export async function run(from, to) {
  const out = { recordings: 0, operators: {}, dispatches: 0, copies: 0, compared: 0, invalid: 0, failed: [], warnings: [], times: [] };
  const seenModules = new Set();
  const batch = doc.recordings.slice(from, to);
  const compiling = performance.now();
  await compile(batch.flatMap((rec) => rec.modules));
  out.compileMs = performance.now() - compiling;
  for (const rec of batch) {
    current = rec.name;
    const started = performance.now();
    const r = await execute(rec);
    out.times.push([performance.now() - started, rec.name]);
    out.recordings += 1;
    // Per operator (split, concat): recordings run and failed.
    const op = (out.operators[rec.operator ?? 'split'] ??= { recordings: 0, failed: 0 });
    op.recordings += 1;
    if (r.failures.length > 0) op.failed += 1;
    out.dispatches += r.dispatches;
    out.copies += r.copies;
    out.compared += r.compared;
    out.invalid += r.invalid;
    rec.modules.forEach((m) => seenModules.add(m));
    if (r.failures.length > 0) out.failed.push({ name: rec.name, failures: r.failures });
    for (const w of r.warnings) if (!out.warnings.includes(w)) out.warnings.push(w);
  }
  current = null;
  out.modules = [...seenModules];
  return out;
}
