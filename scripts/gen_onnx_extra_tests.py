#!/usr/bin/env python3
"""Generates extra ONNX node-test directories in tests/data/onnx-extra/ that the
upstream tests do not cover. Split: opsets 1, 2 and 11, negative axes, every
element type, lengths from an attribute, a graph input or an initializer,
Split-18 uneven num_outputs and fewer declared outputs, SplitToSequence scalar
splits and empty sequences. Concat: opsets 1 (the default axis), 4, 11 and 13,
negative axes, every element type, inputs from initializers, zero-length and
zero-size inputs, more inputs than a shader stage binds; ConcatFromSequence
concatenating and stacking (sequence inputs stored as SequenceProto in
input_0.pb, as SplitToSequence's outputs are). Tensors are stored in raw_data
or in the typed *_data fields.

Expected outputs come from onnx.reference (ReferenceEvaluator) where it has
the operator version, and from numpy slicing otherwise (it has no Split-1 and
returns extra outputs where a Split-18 node declares fewer than num_outputs;
it refuses Concat-1 without an axis, whose default is 1); reference results
are cross-checked against numpy (slicing, concatenate, stack). Both are
independent of this crate.

    pip install onnx==1.22.0
    python3 scripts/gen_onnx_extra_tests.py
"""
import pathlib
import shutil

import numpy as np
import onnx
from onnx import SequenceProto, TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

ROOT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "onnx-extra"
RNG = np.random.default_rng(20261122)

T = TensorProto


def random_array(dtype: int, shape):
    np_dtype = helper.tensor_dtype_to_np_dtype(dtype)
    count = int(np.prod(shape))
    if dtype == T.STRING:
        words = ["", "a", "bc", "déf", "ghij", "\u00e9\u4e2d"]
        return np.array([words[i] for i in RNG.integers(0, len(words), count)], dtype=object).reshape(shape)
    if dtype == T.BOOL:
        return RNG.integers(0, 2, count).astype(bool).reshape(shape)
    if dtype in (T.COMPLEX64, T.COMPLEX128):
        re = RNG.standard_normal(count)
        im = RNG.standard_normal(count)
        return (re + 1j * im).astype(np_dtype).reshape(shape)
    if dtype in (T.INT4, T.UINT4, T.INT2, T.UINT2):
        bits = 4 if dtype in (T.INT4, T.UINT4) else 2
        lo = -(1 << (bits - 1)) if dtype in (T.INT4, T.INT2) else 0
        hi = (1 << (bits - 1)) if dtype in (T.INT4, T.INT2) else (1 << bits)
        return RNG.integers(lo, hi, count).astype(np_dtype).reshape(shape)
    if np.issubdtype(np.dtype(np_dtype), np.integer):
        info = np.iinfo(np_dtype)
        return RNG.integers(info.min, info.max, count, dtype=np.int64 if info.min < 0 else np.uint64, endpoint=True).astype(np_dtype).reshape(shape) if info.bits < 64 else RNG.integers(info.min, info.max, count, dtype=np_dtype, endpoint=True).reshape(shape)
    # floats, including float8/float4/bfloat16 through ml_dtypes
    return (RNG.standard_normal(count) * 3).astype(np_dtype).reshape(shape)


def tensor_proto(name: str, array, dtype: int, typed: bool):
    """raw_data by default; the typed *_data field when `typed` and onnx
    round-trips it exactly."""
    if dtype == T.STRING:
        return helper.make_tensor(name, dtype, array.shape, [s.encode() for s in array.flatten()])
    raw = numpy_helper.from_array(array, name)
    if not typed:
        return raw
    try:
        t = helper.make_tensor(name, dtype, array.shape, array.flatten().tolist(), raw=False)
    except Exception:
        return raw
    back = numpy_helper.to_array(t)
    same = back.shape == array.shape and back.tobytes() == array.tobytes()
    return t if same and not t.HasField("raw_data") else raw


def slices(array, axis, lengths):
    out, start = [], 0
    for n in lengths:
        index = [slice(None)] * array.ndim
        index[axis] = slice(start, start + n)
        out.append(np.ascontiguousarray(array[tuple(index)]))
        start += n
    return out


def write(name, model, inputs, outputs, sequence=False, sequence_input=False):
    d = ROOT / name
    (d / "test_data_set_0").mkdir(parents=True)
    onnx.save(model, d / "model.onnx")
    if sequence_input:
        seq = helper.make_sequence("seq", SequenceProto.TENSOR, inputs)
        inputs = [seq]
    for i, t in enumerate(inputs):
        (d / "test_data_set_0" / f"input_{i}.pb").write_bytes(t.SerializeToString())
    if sequence:
        seq = helper.make_sequence("output_0", SequenceProto.TENSOR, outputs)
        (d / "test_data_set_0" / "output_0.pb").write_bytes(seq.SerializeToString())
    else:
        for i, t in enumerate(outputs):
            (d / "test_data_set_0" / f"output_{i}.pb").write_bytes(t.SerializeToString())
    print(name)


def split_case(name, opset, dtype, shape, n_out, *, axis=None, split_attr=None, split_input=None,
               split_source="input", split_dtype=T.INT64, num_outputs=None, expected_lengths=None,
               typed=False, use_reference=True):
    data = random_array(dtype, shape)
    attrs = {}
    if axis is not None:
        attrs["axis"] = axis
    if split_attr is not None:
        attrs["split"] = split_attr
    if num_outputs is not None:
        attrs["num_outputs"] = num_outputs
    node_inputs = ["data"]
    graph_inputs = [helper.make_tensor_value_info("data", dtype, shape)]
    feeds = [tensor_proto("data", data, dtype, typed)]
    initializers = []
    feed_arrays = {"data": data}
    if split_input is not None:
        node_inputs.append("split")
        split_np = np.array(split_input, dtype=helper.tensor_dtype_to_np_dtype(split_dtype))
        split_t = numpy_helper.from_array(split_np, "split")
        if split_source == "initializer":
            initializers.append(split_t)
        else:
            graph_inputs.append(helper.make_tensor_value_info("split", split_dtype, list(split_np.shape)))
            feeds.append(split_t)
            feed_arrays["split"] = split_np
    outs = [f"out_{i}" for i in range(n_out)]
    node = helper.make_node("Split", node_inputs, outs, **attrs)
    graph = helper.make_graph([node], name, graph_inputs,
                              [helper.make_tensor_value_info(o, dtype, None) for o in outs],
                              initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    ax = axis if axis is not None else 0
    if use_reference:
        results = ReferenceEvaluator(model).run(None, feed_arrays)
        # Cross-check the reference against plain numpy slicing.
        assert all(r.tobytes() == e.tobytes() for r, e in zip(results, slices(data, ax, expected_lengths))), name
    else:
        results = slices(data, ax, expected_lengths)
    assert len(results) == n_out, name
    write(name, model, feeds, [tensor_proto(o, r, dtype, typed) for o, r in zip(outs, results)])


def sequence_case(name, opset, dtype, shape, *, axis=0, keepdims=None, split=None, split_dtype=T.INT64,
                  typed=False):
    data = random_array(dtype, shape)
    attrs = {"axis": axis}
    if keepdims is not None:
        attrs["keepdims"] = keepdims
    inputs = ["data"]
    graph_inputs = [helper.make_tensor_value_info("data", dtype, shape)]
    feeds = [tensor_proto("data", data, dtype, typed)]
    feed_arrays = {"data": data}
    if split is not None:
        split_np = np.array(split, dtype=helper.tensor_dtype_to_np_dtype(split_dtype))
        inputs.append("split")
        graph_inputs.append(helper.make_tensor_value_info("split", split_dtype, list(split_np.shape)))
        feeds.append(numpy_helper.from_array(split_np, "split"))
        feed_arrays["split"] = split_np
    node = helper.make_node("SplitToSequence", inputs, ["seq"], **attrs)
    out = helper.make_tensor_sequence_value_info("seq", dtype, None)
    graph = helper.make_graph([node], name, graph_inputs, [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    (results,) = ReferenceEvaluator(model).run(None, feed_arrays)
    write(name, model, feeds, [tensor_proto(f"seq_{i}", r, dtype, typed) for i, r in enumerate(results)],
          sequence=True)



def same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def concat_case(name, opset, dtype, shapes, *, axis=None, typed=False, use_reference=True,
                initializers=()):
    """A Concat node of len(shapes) inputs; those whose index is in
    `initializers` are initializers, the others graph inputs."""
    arrays = [random_array(dtype, s) for s in shapes]
    names = [f"x{i}" for i in range(len(shapes))]
    attrs = {} if axis is None else {"axis": axis}
    node = helper.make_node("Concat", names, ["y"], **attrs)
    graph_inputs = [helper.make_tensor_value_info(n, dtype, s)
                    for i, (n, s) in enumerate(zip(names, shapes)) if i not in initializers]
    inits = [tensor_proto(names[i], arrays[i], dtype, typed) for i in initializers]
    graph = helper.make_graph([node], name, graph_inputs, [helper.make_tensor_value_info("y", dtype, None)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    expected = np.concatenate(arrays, axis=1 if axis is None else axis)
    if use_reference:
        feeds = {n: a for i, (n, a) in enumerate(zip(names, arrays)) if i not in initializers}
        (result,) = ReferenceEvaluator(model).run(None, feeds)
        assert same(result, expected), name
    feeds = [tensor_proto(n, a, dtype, typed) for i, (n, a) in enumerate(zip(names, arrays))
             if i not in initializers]
    write(name, model, feeds, [tensor_proto("y", expected, dtype, typed)])


def sequence_concat_case(name, dtype, shapes, *, axis, new_axis=None, typed=False):
    arrays = [random_array(dtype, s) for s in shapes]
    attrs = {"axis": axis}
    if new_axis is not None:
        attrs["new_axis"] = new_axis
    node = helper.make_node("ConcatFromSequence", ["seq"], ["y"], **attrs)
    graph = helper.make_graph([node], name, [helper.make_tensor_sequence_value_info("seq", dtype, None)],
                              [helper.make_tensor_value_info("y", dtype, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 8
    (result,) = ReferenceEvaluator(model).run(None, {"seq": arrays})
    stacked = new_axis == 1
    expected = np.stack(arrays, axis=axis) if stacked else np.concatenate(arrays, axis=axis)
    assert same(result, expected), name
    feeds = [tensor_proto(f"seq_{i}", a, dtype, typed) for i, a in enumerate(arrays)]
    write(name, model, feeds, [tensor_proto("y", result, dtype, typed)], sequence_input=True)


ALL_TYPES = [
    (T.FLOAT, "float"), (T.UINT8, "uint8"), (T.INT8, "int8"), (T.UINT16, "uint16"), (T.INT16, "int16"),
    (T.INT32, "int32"), (T.INT64, "int64"), (T.STRING, "string"), (T.BOOL, "bool"), (T.FLOAT16, "float16"),
    (T.DOUBLE, "double"), (T.UINT32, "uint32"), (T.UINT64, "uint64"), (T.COMPLEX64, "complex64"),
    (T.COMPLEX128, "complex128"), (T.BFLOAT16, "bfloat16"), (T.FLOAT8E4M3FN, "float8e4m3fn"),
    (T.FLOAT8E4M3FNUZ, "float8e4m3fnuz"), (T.FLOAT8E5M2, "float8e5m2"), (T.FLOAT8E5M2FNUZ, "float8e5m2fnuz"),
    (T.UINT4, "uint4"), (T.INT4, "int4"), (T.FLOAT4E2M1, "float4e2m1"), (T.FLOAT8E8M0, "float8e8m0"),
    (T.UINT2, "uint2"), (T.INT2, "int2"),
]


def concat_cases():
    # Opset 1: the default axis 1 (numpy is the oracle), an explicit and a negative axis.
    concat_case("concat1_default_axis_float", 1, T.FLOAT, [[2, 3], [2, 1], [2, 2]], use_reference=False)
    concat_case("concat1_axis0_float16", 1, T.FLOAT16, [[1, 3], [2, 3]], axis=0, typed=True)
    concat_case("concat1_negative_axis_double", 1, T.DOUBLE, [[2, 2, 1], [2, 2, 3]], axis=-1)
    # Opset 4: axis required; negative axes accepted (decision).
    concat_case("concat4_int64", 4, T.INT64, [[3, 1], [3, 4]], axis=1, typed=True)
    concat_case("concat4_negative_axis_uint8", 4, T.UINT8, [[2, 5], [3, 5]], axis=-2)
    concat_case("concat11_negative_axis_int16_rank4", 11, T.INT16, [[2, 1, 3, 2], [2, 4, 3, 2]], axis=-3,
                typed=True)
    # Opset 13: every element type, on an inner axis with odd lengths.
    for dtype, tag in ALL_TYPES:
        concat_case(f"concat13_{tag}", 13, dtype, [[3, 3], [3, 0], [3, 2]], axis=1, typed=True)
    concat_case("concat13_initializer_input_int4", 13, T.INT4, [[1, 5], [2, 5], [3, 5]], axis=0,
                initializers=(1,))
    concat_case("concat13_zero_size_output", 13, T.FLOAT, [[0, 2], [0, 3]], axis=1)
    concat_case("concat13_single_input_uint2", 13, T.UINT2, [[2, 7]], axis=1)
    concat_case("concat13_nine_inputs_float16", 13, T.FLOAT16, [[2, i, 3] for i in range(1, 10)], axis=1)
    concat_case("concat13_axis0_rank5_bool", 13, T.BOOL, [[1, 2, 1, 2, 3], [2, 2, 1, 2, 3]], axis=0)
    concat_case("concat13_last_axis_complex128", 13, T.COMPLEX128, [[2, 2, 1], [2, 2, 2]], axis=2,
                typed=True)
    # ConcatFromSequence: concatenating (new_axis absent and 0) and stacking (new_axis 1).
    sequence_concat_case("cfs11_concat_axis1_float", T.FLOAT, [[2, 3], [2, 1], [2, 0]], axis=1)
    sequence_concat_case("cfs11_concat_new_axis0_int4", T.INT4, [[3, 3], [1, 3]], axis=-2, new_axis=0,
                         typed=True)
    sequence_concat_case("cfs11_stack_axis0_int32", T.INT32, [[2, 3]] * 3, axis=0, new_axis=1, typed=True)
    sequence_concat_case("cfs11_stack_last_axis_uint4", T.UINT4, [[3, 1]] * 3, axis=-1, new_axis=1)
    sequence_concat_case("cfs11_stack_middle_axis_string", T.STRING, [[2, 2]] * 2, axis=1, new_axis=1)
    sequence_concat_case("cfs11_stack_scalars_double", T.DOUBLE, [[]] * 4, axis=0, new_axis=1)
    sequence_concat_case("cfs11_single_tensor_bool", T.BOOL, [[2, 3]], axis=1, new_axis=1)
    sequence_concat_case("cfs11_stack_empty_float16", T.FLOAT16, [[0, 3]] * 2, axis=1, new_axis=1)

def main():
    if onnx.__version__ != "1.22.0":
        raise SystemExit(f"need onnx==1.22.0, found {onnx.__version__}")
    if ROOT.exists():
        shutil.rmtree(ROOT)
    # Opsets 1, 2, 11: lengths from the attribute (and Split-1's float input).
    split_case("split1_attr_axis1_float", 1, T.FLOAT, [3, 5], 2, axis=1, split_attr=[1, 4],
               expected_lengths=[1, 4], use_reference=False)
    split_case("split1_float_input_float16", 1, T.FLOAT16, [6, 2], 3, split_input=[1.0, 2.0, 3.0],
               split_dtype=T.FLOAT16, expected_lengths=[1, 2, 3], use_reference=False, typed=True)
    split_case("split1_equal_no_axis_double", 1, T.DOUBLE, [4, 3], 2, expected_lengths=[2, 2],
               use_reference=False, typed=True)
    split_case("split2_attr_int64", 2, T.INT64, [7, 2], 2, axis=0, split_attr=[3, 4],
               expected_lengths=[3, 4], typed=True)
    split_case("split11_negative_axis_uint8", 11, T.UINT8, [2, 9, 3], 3, axis=-2, split_attr=[2, 0, 7],
               expected_lengths=[2, 0, 7], typed=True)
    # Opset 13: lengths from a graph input or an initializer.
    split_case("split13_initializer_bfloat16", 13, T.BFLOAT16, [2, 3, 8], 2, axis=2, split_input=[5, 3],
               split_source="initializer", expected_lengths=[5, 3], typed=True)
    split_case("split13_input_int16_rank6", 13, T.INT16, [2, 1, 3, 2, 4, 5], 2, axis=-3, split_input=[1, 1],
               expected_lengths=[1, 1], typed=True)
    split_case("split13_equal_uint64", 13, T.UINT64, [3, 6], 3, axis=1, expected_lengths=[2, 2, 2], typed=True)
    split_case("split13_complex64", 13, T.COMPLEX64, [4, 3], 2, split_input=[3, 1], expected_lengths=[3, 1],
               typed=True)
    split_case("split13_complex128", 13, T.COMPLEX128, [2, 5], 2, axis=1, split_input=[2, 3],
               expected_lengths=[2, 3], typed=True)
    split_case("split13_string", 13, T.STRING, [3, 4], 2, axis=1, split_input=[3, 1], expected_lengths=[3, 1])
    split_case("split13_zero_size_input", 13, T.FLOAT, [0, 4], 2, axis=1, split_input=[1, 3],
               expected_lengths=[1, 3])
    # Opset 18: num_outputs, uneven and with fewer declared outputs; sub-byte and 8-bit types.
    split_case("split18_uneven_int4", 18, T.INT4, [3, 7], 3, axis=1, num_outputs=3,
               expected_lengths=[3, 3, 1], typed=True)
    split_case("split18_uneven_uint4_raw", 18, T.UINT4, [5, 3], 2, axis=0, num_outputs=2,
               expected_lengths=[3, 2])
    split_case("split18_float4e2m1", 18, T.FLOAT4E2M1, [2, 9], 2, axis=-1, split_input=[4, 5],
               expected_lengths=[4, 5], typed=True)
    split_case("split18_uint2", 18, T.UINT2, [3, 5], 2, axis=1, split_input=[2, 3], expected_lengths=[2, 3])
    split_case("split18_int2", 18, T.INT2, [10], 4, num_outputs=4, expected_lengths=[3, 3, 3, 1],
               typed=True)
    split_case("split18_fewer_outputs_int32", 18, T.INT32, [10, 2], 2, num_outputs=3,
               expected_lengths=[4, 4], use_reference=False, typed=True)
    split_case("split18_bool", 18, T.BOOL, [4, 4], 2, axis=1, num_outputs=2, expected_lengths=[2, 2],
               typed=True)
    split_case("split18_int8", 18, T.INT8, [5, 3], 2, split_input=[0, 5], expected_lengths=[0, 5], typed=True)
    split_case("split18_uint16", 18, T.UINT16, [3, 3], 3, axis=1, num_outputs=3, expected_lengths=[1, 1, 1],
               typed=True)
    split_case("split18_uint32", 18, T.UINT32, [2, 7], 2, axis=1, num_outputs=2, expected_lengths=[4, 3],
               typed=True)
    for dtype, tag in [(T.FLOAT8E4M3FN, "float8e4m3fn"), (T.FLOAT8E4M3FNUZ, "float8e4m3fnuz"),
                       (T.FLOAT8E5M2, "float8e5m2"), (T.FLOAT8E5M2FNUZ, "float8e5m2fnuz"),
                       (T.FLOAT8E8M0, "float8e8m0")]:
        split_case(f"split18_{tag}", 18, dtype, [3, 5], 2, axis=1, split_input=[2, 3],
                   expected_lengths=[2, 3], typed=True)
    # SplitToSequence: scalar split with remainder, keepdims 0, 1-D split, empty sequence, bfloat16 at 24.
    sequence_case("sts11_scalar_remainder_float", 11, T.FLOAT, [8, 2], split=3)
    sequence_case("sts11_nokeepdims_axis1_int32", 11, T.INT32, [2, 3, 2], axis=1, keepdims=0, typed=True)
    sequence_case("sts11_int32_lengths_double", 11, T.DOUBLE, [2, 5], axis=-1, split=[1, 0, 4],
                  split_dtype=T.INT32, typed=True)
    sequence_case("sts11_empty_sequence", 11, T.FLOAT, [0, 3])
    sequence_case("sts24_bfloat16", 24, T.BFLOAT16, [6], split=[2, 4])
    sequence_case("sts11_keepdims0_ignored_with_split", 11, T.INT64, [4, 2], keepdims=0, split=2)
    concat_cases()


if __name__ == "__main__":
    main()
