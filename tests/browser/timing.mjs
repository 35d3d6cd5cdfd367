// In the page: the timing mode. For each case of `webgpu_recordings
// --timing` (split_bench's cases under WebGPU's default limits) it runs the
// plan and a plain vec4 compute copy of as many bytes as the split moves,
// alternating, each bracketed by timestamp queries (an empty compute pass
// before and after, so copies count too). Outputs are checked against the
// host path's hashes before anything is timed. Reported, not targeted.

import { fnv1a, generated, prepare as preparePlan, read, timed } from './plans.mjs';

const COPY_SHADER = `
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@compute @workgroup_size(256)
fn copy(@builtin(workgroup_id) group: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
  let i = (group.y * groups.x + group.x) * 256u + lane;
  if (i < arrayLength(&dst)) {
    dst[i] = src[i];
  }
}`;

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const gcd = (a, b) => (b === 0n ? a : gcd(b, a % b));

/// Everything a case runs: its plan's encode and the copy's.
async function prepare(device, c, blob) {
  const U = GPUBufferUsage;
  const p = await preparePlan(device, c, blob, [generated(c.input.seed, c.input.len)]);
  // The copy: as many bytes as the split moves, padded to a vec4.
  const size = Math.ceil(c.moved / 16) * 16;
  const src = device.createBuffer({ size, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
  const dst = device.createBuffer({ size, usage: U.STORAGE | U.COPY_SRC });
  const copyData = generated(c.input.seed ^ 0xffff, size);
  device.queue.writeBuffer(src, 0, copyData);
  const copyModule = device.createShaderModule({ code: COPY_SHADER });
  const copyPipeline = device.createComputePipeline({ layout: 'auto', compute: { module: copyModule, entryPoint: 'copy' } });
  const copyGroup = device.createBindGroup({
    layout: copyPipeline.getBindGroupLayout(0),
    entries: [
      { binding: 0, resource: { buffer: src } },
      { binding: 1, resource: { buffer: dst } },
    ],
  });
  const groups = Math.ceil(size / 16 / 256);
  const rows = Math.ceil(groups / 65535);
  const copy = (encoder) => {
    const pass = encoder.beginComputePass();
    pass.setPipeline(copyPipeline);
    pass.setBindGroup(0, copyGroup);
    pass.dispatchWorkgroups(Math.ceil(groups / rows), rows);
    pass.end();
  };
  const release = () => {
    p.release();
    [src, dst].forEach((b) => b.destroy());
  };
  return { ...p, copy, check: { src: fnv1a(copyData), dst }, release };
}

/// Times every case; returns the report's text and whether anything failed.
export async function run(url, rounds) {
  const doc = await (await fetch(url)).json();
  const blob = new Uint8Array(await (await fetch(new URL(doc.blob, new URL(url, location.href)))).arrayBuffer());
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter.features.has('timestamp-query')) return { report: 'FAIL: the adapter has no timestamp-query', failed: true };
  const device = await adapter.requestDevice({ requiredFeatures: ['timestamp-query'] });
  const stray = [];
  device.addEventListener('uncapturederror', (e) => stray.push(e.error.message));
  const querySet = device.createQuerySet({ type: 'timestamp', count: 2 });
  const resolve = device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const readback = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const info = adapter.info ?? {};
  const lines = [`adapter: ${info.vendor} ${info.architecture}; device: default limits + timestamp-query; ${rounds} rounds after 2 warm-up rounds, plan and copy alternating`];
  lines.push('case | kernel | MB moved | dispatches | copies | plan ms | copy ms | plan GB/s | copy GB/s | plan/copy speed (median of rounds)');
  let failed = false;
  let quantum = 0n;
  const raws = [];
  for (const c of doc.cases) {
    device.pushErrorScope('validation');
    device.pushErrorScope('out-of-memory');
    const p = await prepare(device, c, blob);
    // Checked before timed: every output's hash, the copy's bytes.
    const problems = [...p.errors];
    const first = await timed(device, querySet, resolve, readback, p.plan);
    raws.push(...first.raw);
    for (const [k, o] of c.outputs.entries()) {
      const got = fnv1a(await read(device, p.buffers[o.buffer], o.offset, o.len));
      if (got !== o.fnv) problems.push(`output ${k}: FNV-1a ${got.toString(16)}, the host path's ${o.fnv.toString(16)}`);
    }
    await timed(device, querySet, resolve, readback, p.copy);
    const copied = fnv1a(await read(device, p.check.dst, 0, Math.ceil(c.moved / 16) * 16));
    if (copied !== p.check.src) problems.push('the vec4 copy differs from its source');
    const plan = [];
    const copy = [];
    const ratios = [];
    for (let r = -2; r < rounds && problems.length === 0; r++) {
      const order = r % 2 === 0 ? [p.plan, p.copy] : [p.copy, p.plan];
      const t = [];
      for (const record of order) t.push(await timed(device, querySet, resolve, readback, record));
      for (const x of t) raws.push(...x.raw);
      const [tp, tc] = r % 2 === 0 ? [t[0].ns, t[1].ns] : [t[1].ns, t[0].ns];
      if (r < 0) continue;
      plan.push(tp);
      copy.push(tc);
      ratios.push(tc / tp);
    }
    for (const scope of ['out-of-memory', 'validation']) {
      const e = await device.popErrorScope();
      if (e) problems.push(`${scope}: ${e.message}`);
    }
    problems.push(...stray.splice(0));
    p.release();
    if (problems.length > 0) {
      failed = true;
      lines.push(`FAIL ${c.name}: ${problems.join('; ')}`);
      continue;
    }
    const bytes = 2 * c.moved;
    const [mp, mc] = [median(plan), median(copy)];
    lines.push(
      `${c.name} | ${c.kernel} | ${(c.moved / 1e6).toFixed(1)} | ${p.dispatches} | ${p.copies} | ${(mp / 1e6).toFixed(3)} | ${(mc / 1e6).toFixed(3)} | ` +
        `${(bytes / mp).toFixed(2)} | ${(bytes / mc).toFixed(2)} | ${median(ratios).toFixed(2)}`,
    );
  }
  for (const v of raws) quantum = gcd(v - raws[0] < 0n ? raws[0] - v : v - raws[0], quantum);
  lines.push(`timestamp resolution: the raw values are multiples of ${quantum} ns apart (${raws.length} values)`);
  device.destroy();
  return { report: lines.join('\n'), failed };
}
