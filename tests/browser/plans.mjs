// In the page: a recorded plan of `webgpu_recordings --timing` made ready
// to encode (a split case's one input or a concat case's several), and the
// helpers every timing page uses: the inputs' generator, FNV-1a, reading a
// buffer back, one timed run. The browser timing (`timing.mjs`) and the
// onnxruntime-web comparison (`tests/ortweb`) both import it.

export const align4 = (n) => Math.ceil(n / 4) * 4;

/// `len` bytes of xorshift32 from `seed`, as the generator
/// (`webgpu_recordings`'s `Rng`) makes them, padded to a word.
export function generated(seed, len) {
  const words = new Uint32Array(Math.ceil(len / 4));
  let x = seed >>> 0 || 1;
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    words[i] = x;
  }
  return new Uint8Array(words.buffer);
}

/// 32-bit FNV-1a.
export function fnv1a(bytes) {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 0x01000193) >>> 0;
  return h >>> 0;
}

/// The case's inputs: a split case's one, a concat case's several
/// (`{buffer, offset, len, seed}` each).
export const inputsOf = (c) => c.inputs ?? [c.input];

/// The bytes of `buffer` from `offset`, `len` of them.
export async function read(device, buffer, offset, len) {
  const start = offset - (offset % 4);
  const size = Math.max(4, align4(offset + len) - start);
  const staging = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(buffer, start, staging, 0, size);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const bytes = new Uint8Array(staging.getMappedRange()).slice(offset - start, offset - start + len);
  staging.destroy();
  return bytes;
}

/// Everything the plan of case `c` needs to be encoded: its buffers (the
/// inputs written), pipelines and bind groups made before anything is
/// timed; `plan(encoder)` records its commands in their recorded order.
/// `data`: the inputs' bytes, by input.
export async function prepare(device, c, blob, data) {
  const U = GPUBufferUsage;
  const usage = { STORAGE: U.STORAGE, COPY_SRC: U.COPY_SRC, COPY_DST: U.COPY_DST, UNIFORM: U.UNIFORM };
  const errors = [];
  const buffers = c.buffers.map((b) =>
    device.createBuffer({ label: b.label, size: Math.max(4, align4(b.size)), usage: b.usages.reduce((u, n) => u | usage[n], 0) | U.COPY_SRC | U.COPY_DST }),
  );
  inputsOf(c).forEach((x, k) => {
    if (x.len > 0) device.queue.writeBuffer(buffers[x.buffer], x.offset, data[k], 0, align4(x.len));
  });
  const [at, from, len] = c.table;
  const table = new Uint8Array(align4(len));
  table.set(blob.subarray(from, from + len));
  if (len > 0) device.queue.writeBuffer(buffers[c.buffers.length - 2], at, table);
  const modules = [];
  for (const m of c.modules) {
    const module = device.createShaderModule({ code: m.wgsl });
    const info = await module.getCompilationInfo();
    errors.push(...info.messages.filter((x) => x.type === 'error').map((x) => `compilation: ${x.message}`));
    const layout = device.createBindGroupLayout({
      entries: m.layout.map((e) => ({ binding: e.binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: e.kind, minBindingSize: e.min_binding_size } })),
    });
    const pipeline = device.createComputePipeline({ layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }), compute: { module, entryPoint: m.entry_point } });
    modules.push({ layout, pipeline });
  }
  const dispatch = (d) => ({
    pipeline: modules[d.module].pipeline,
    group: device.createBindGroup({
      layout: modules[d.module].layout,
      entries: d.bindings.map((b) => ({ binding: b.binding, resource: { buffer: buffers[b.buffer], offset: b.offset, size: b.size } })),
    }),
    workgroups: d.workgroups,
  });
  const steps = c.commands.map((x) => {
    if (x.command === 'copy') return { copy: x };
    if (x.command === 'dispatch') return { dispatch: dispatch(x) };
    throw new Error(`${c.name}: unknown command ${x.command}`);
  });
  // As an encode records them: each copy outside compute passes,
  // consecutive dispatches in one pass (a copy between them ends it).
  const plan = (encoder) => {
    let pass = null;
    for (const { copy: x, dispatch: d } of steps) {
      if (x) {
        pass?.end();
        pass = null;
        encoder.copyBufferToBuffer(buffers[x.src], x.src_offset, buffers[x.dst], x.dst_offset, x.size);
        continue;
      }
      pass ??= encoder.beginComputePass();
      pass.setPipeline(d.pipeline);
      pass.setBindGroup(0, d.group);
      pass.dispatchWorkgroups(...d.workgroups);
    }
    pass?.end();
  };
  return {
    buffers,
    plan,
    errors,
    release: () => buffers.forEach((b) => b.destroy()),
    dispatches: steps.filter((x) => x.dispatch).length,
    copies: steps.filter((x) => x.copy).length,
  };
}

/// One timed run of `record`: nanoseconds between the timestamps of an
/// empty pass before it and one after it, the raw values, and the wall
/// milliseconds from the encoder's creation to the queue's done.
export async function timed(device, querySet, resolve, readback, record) {
  const t0 = performance.now();
  const encoder = device.createCommandEncoder();
  encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 0 } }).end();
  record(encoder);
  encoder.beginComputePass({ timestampWrites: { querySet, endOfPassWriteIndex: 1 } }).end();
  encoder.resolveQuerySet(querySet, 0, 2, resolve, 0);
  encoder.copyBufferToBuffer(resolve, 0, readback, 0, 16);
  device.queue.submit([encoder.finish()]);
  await device.queue.onSubmittedWorkDone();
  const wall = performance.now() - t0;
  await readback.mapAsync(GPUMapMode.READ);
  const [a, b] = new BigUint64Array(readback.getMappedRange().slice(0));
  readback.unmap();
  return { ns: Number(b - a), raw: [a, b], wall };
}
