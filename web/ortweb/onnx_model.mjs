// One-node ONNX models (a Split with its lengths as an int64 initializer,
// or a Concat), encoded by hand: no protobuf library, no Python. Runs in
// the page and in Node: the bench page, the binding wall and tests/ortweb
// (which serves this file as its /onnx.mjs; `run.mjs --write-models DIR`
// writes the models for `onnx.checker`).
//
//   model(name, elementType, onnx, opset = 13) -> { bytes, inputs, outputs }
//   onnx: {op: 'Split', axis, split: [lengths], input_shapes: [shape], output_shapes}
//       | {op: 'Concat', axis, input_shapes, output_shapes: [shape]}

/// ONNX's TensorProto.DataType codes, by the crate's element type names.
export const ONNX_TYPES = {
  float: 1, uint8: 2, int8: 3, uint16: 4, int16: 5, int32: 6, int64: 7, bool: 9,
  float16: 10, double: 11, uint32: 12, uint64: 13, bfloat16: 16, uint4: 21, int4: 22,
};

/// onnxruntime-web's tensor type names, by the crate's element type names.
export const ORT_TYPES = {
  float: 'float32', uint8: 'uint8', int8: 'int8', uint16: 'uint16', int16: 'int16', int32: 'int32',
  int64: 'int64', bool: 'bool', float16: 'float16', double: 'float64', uint32: 'uint32', uint64: 'uint64',
  uint4: 'uint4', int4: 'int4',
};

// Protobuf wire format: varints (BigInt, so int64 fits), length-delimited.
function varint(v) {
  let x = BigInt.asUintN(64, BigInt(v));
  const out = [];
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x > 0n) b |= 0x80;
    out.push(b);
  } while (x > 0n);
  return out;
}
const tag = (field, wire) => varint((field << 3) | wire);
const int = (field, v) => [...tag(field, 0), ...varint(v)];
const bytes = (field, b) => [...tag(field, 2), ...varint(b.length), ...b];
const str = (field, s) => bytes(field, [...new TextEncoder().encode(s)]);
const msg = (field, parts) => bytes(field, parts.flat());

/// ValueInfoProto of a tensor: name, type (elem_type, shape).
function valueInfo(field, name, type, shape) {
  const dims = shape.map((d) => msg(1, [int(1, d)]));
  const tensorType = msg(1, [int(1, type), msg(2, dims)]);
  return msg(field, [str(1, name), msg(2, [tensorType])]);
}

/// The model's bytes, and its input and output names (x0.., y0..).
export function model(name, elementType, onnx, opset = 13) {
  const type = ONNX_TYPES[elementType];
  if (type === undefined) throw new Error(`${name}: no ONNX type for ${elementType}`);
  if (!onnx || !onnx.op) throw new Error(`${name}: no one-node ONNX model (${onnx?.why ?? 'no description'})`);
  // int4 Split and Concat are opset 21's.
  const version = ['int4', 'uint4'].includes(elementType) ? Math.max(opset, 21) : opset;
  const inputs = onnx.input_shapes.map((_, k) => `x${k}`);
  const outputs = onnx.output_shapes.map((_, k) => `y${k}`);
  const graph = [];
  const initializers = [];
  let nodeInputs = inputs;
  if (onnx.op === 'Split') {
    // TensorProto: dims, data_type INT64, int64_data (packed), name.
    const packed = onnx.split.flatMap((v) => varint(v));
    initializers.push(msg(5, [int(1, onnx.split.length), int(2, 7), bytes(7, packed), str(8, 'split')]));
    nodeInputs = [...inputs, 'split'];
  } else if (onnx.op !== 'Concat') throw new Error(`${name}: unknown op ${onnx.op}`);
  // AttributeProto: name, i, type INT.
  const axis = msg(5, [str(1, 'axis'), int(3, onnx.axis), int(20, 2)]);
  graph.push(msg(1, [...nodeInputs.map((n) => str(1, n)), ...outputs.map((n) => str(2, n)), str(3, onnx.op.toLowerCase()), str(4, onnx.op), axis]));
  graph.push(str(2, name));
  graph.push(...initializers);
  onnx.input_shapes.forEach((s, k) => graph.push(valueInfo(11, inputs[k], type, s)));
  onnx.output_shapes.forEach((s, k) => graph.push(valueInfo(12, outputs[k], type, s)));
  // ModelProto: ir_version 10, producer_name, graph, opset_import.
  const bytesOut = [...int(1, 10), ...str(2, 'wgpu-split'), ...msg(7, graph), ...msg(8, [str(1, ''), int(2, version)])];
  return { bytes: new Uint8Array(bytesOut), inputs, outputs };
}
