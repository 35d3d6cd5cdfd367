// Replays what wgpu-split encodes record, splits and concats (the JSON of
// `cargo run --example webgpu_recordings -- OUT.json`), through Dawn, the
// WebGPU implementation of Chrome, on its Null backend: every WGSL module
// compiled by Tint, every bind group layout, bind group, pipeline, copy,
// pass and dispatch validated under WebGPU's default limits, nothing
// executed. Prints each failing recording with Dawn's messages and a
// summary; exits 1 if any failed.
//
//   node tests/dawn/replay.mjs OUT.json [--verbose]
//
// A fresh adapter and device per recording: node-webgpu 0.6.2 was seen to
// crash after a few modules on one device.

import { readFileSync } from 'node:fs';
import { create, globals } from 'webgpu';

Object.assign(globalThis, globals);

const [path, ...flags] = process.argv.slice(2);
if (!path) {
  console.error('usage: node tests/dawn/replay.mjs OUT.json [--verbose]');
  process.exit(2);
}
const verbose = flags.includes('--verbose');
const doc = JSON.parse(readFileSync(path, 'utf8'));
const gpu = create(['backend=null']);

const USAGE = {
  STORAGE: GPUBufferUsage.STORAGE,
  COPY_SRC: GPUBufferUsage.COPY_SRC,
  COPY_DST: GPUBufferUsage.COPY_DST,
  UNIFORM: GPUBufferUsage.UNIFORM,
};

const align4 = (n) => Math.max(4, Math.ceil(n / 4) * 4);

/// Dawn's compilation messages of a module: errors fail, warnings are shown.
async function compile(device, module) {
  const shader = device.createShaderModule({ code: module.wgsl });
  const info = await shader.getCompilationInfo();
  const errors = info.messages.filter((m) => m.type === 'error').map((m) => `tint: ${m.message} (line ${m.lineNum})`);
  const warnings = info.messages.filter((m) => m.type !== 'error').map((m) => `tint ${m.type}: ${m.message}`);
  const layout = device.createBindGroupLayout({
    entries: module.layout.map((e) => ({
      binding: e.binding,
      visibility: GPUShaderStage.COMPUTE,
      buffer: { type: e.kind, minBindingSize: e.min_binding_size },
    })),
  });
  const pipeline = device.createComputePipeline({
    layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
    compute: { module: shader, entryPoint: module.entry_point },
  });
  return { layout, pipeline, errors, warnings };
}

/// Records and submits one recording; returns Dawn's errors.
async function replay(recording) {
  const adapter = await gpu.requestAdapter();
  const device = await adapter.requestDevice();
  const lost = [];
  device.lost.then((info) => lost.push(info.message));
  device.pushErrorScope('validation');
  device.pushErrorScope('out-of-memory');
  const buffers = recording.buffers.map((b) =>
    device.createBuffer({
      label: b.label,
      size: align4(b.size),
      usage: b.usages.reduce((u, name) => u | USAGE[name], 0),
    }),
  );
  // The recording's modules (a dispatch's `module` indexes this list).
  const compiled = [];
  for (const m of recording.modules) compiled.push(await compile(device, doc.modules[m]));
  // The commands in their recorded order: a copy ends the compute pass
  // (consecutive dispatches share one), as an encode records them.
  const encoder = device.createCommandEncoder();
  let pass = null;
  let current = -1;
  for (const c of recording.commands) {
    if (c.command === 'copy') {
      pass?.end();
      pass = null;
      encoder.copyBufferToBuffer(buffers[c.src], c.src_offset, buffers[c.dst], c.dst_offset, c.size);
      continue;
    }
    if (c.command !== 'dispatch') throw new Error(`${recording.name}: unknown command ${c.command}`);
    if (!pass) {
      pass = encoder.beginComputePass();
      current = -1;
    }
    if (c.module !== current) {
      pass.setPipeline(compiled[c.module].pipeline);
      current = c.module;
    }
    const group = device.createBindGroup({
      layout: compiled[c.module].layout,
      entries: c.bindings.map((b) => ({
        binding: b.binding,
        resource: { buffer: buffers[b.buffer], offset: b.offset, size: b.size },
      })),
    });
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(...c.workgroups);
  }
  pass?.end();
  device.queue.submit([encoder.finish()]);
  await device.queue.onSubmittedWorkDone();
  const errors = [];
  for (const scope of ['out-of-memory', 'validation']) {
    const e = await device.popErrorScope();
    if (e) errors.push(`${scope}: ${e.message}`);
  }
  for (const c of compiled) errors.push(...c.errors);
  const warnings = compiled.flatMap((c) => c.warnings);
  device.destroy();
  return { errors: errors.concat(lost.filter((m) => !m.includes('destroy'))), warnings };
}

let failed = 0;
let dispatchCount = 0;
let copyCount = 0;
/// Per operator (split, concat): recordings replayed and failed.
const operators = {};
const started = Date.now();
for (const recording of doc.recordings) {
  const { errors, warnings } = await replay(recording);
  const op = (operators[recording.operator ?? 'split'] ??= { recordings: 0, failed: 0 });
  op.recordings += 1;
  if (errors.length > 0) op.failed += 1;
  dispatchCount += recording.commands.filter((c) => c.command === 'dispatch').length;
  copyCount += recording.commands.filter((c) => c.command === 'copy').length;
  if (errors.length > 0) {
    failed += 1;
    console.log(`FAIL ${recording.name}`);
    for (const e of errors) console.log(`    ${e.split('\n')[0].slice(0, 400)}`);
  } else if (verbose) {
    console.log(`PASS ${recording.name}`);
  }
  if (verbose) for (const w of warnings) console.log(`    ${w}`);
}
const seconds = ((Date.now() - started) / 1000).toFixed(1);
const ops = Object.entries(operators);
console.log(
  `Dawn (Null backend, WebGPU default limits): ${ops.map(([n, o]) => `${o.recordings} ${n}`).join(' + ')} recordings ` +
    `(${ops.map(([, o]) => o.failed).join(' + ')} failed); ${doc.recordings.length - failed} recordings valid, ${failed} failed; ` +
    `${doc.modules.length} modules compiled by Tint, ${dispatchCount} dispatches and ${copyCount} copies validated in ${seconds} s`,
);
process.exit(failed > 0 ? 1 : 0);
