//! A deliberately naive per-element concat oracle: for every output
//! element, the input and the input element it comes from, computed from
//! the shapes alone (no runs, no mirror split).

use super::{assert_outputs_equal, naive_split, read_element, strides, write_element};
use wgpu_split::{ElementType, HostTensor, ResolvedConcat};

/// How the oracle joins its inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Join {
    /// Along an existing axis.
    Cat(usize),
    /// On a new axis.
    Stack(usize),
    /// Every input flattened, one after the other.
    Flatten,
}

/// The oracle's output shape.
fn output_shape(inputs: &[&HostTensor], join: Join) -> Vec<usize> {
    match join {
        Join::Cat(axis) => {
            let mut shape = inputs[0].shape().to_vec();
            shape[axis] = inputs.iter().map(|t| t.shape()[axis]).sum();
            shape
        }
        Join::Stack(axis) => {
            let mut shape = inputs[0].shape().to_vec();
            shape.insert(axis, inputs.len());
            shape
        }
        Join::Flatten => vec![inputs.iter().map(|t| t.len()).sum()],
    }
}

/// Input index and the element's index in that input, for output element `flat`.
fn source(inputs: &[&HostTensor], join: Join, out_shape: &[usize], flat: usize) -> (usize, usize) {
    let out_strides = strides(out_shape);
    let mut coords: Vec<usize> = (0..out_shape.len())
        .map(|d| flat / out_strides[d] % out_shape[d])
        .collect();
    let input = match join {
        Join::Flatten => {
            let mut rest = flat;
            let input = inputs.iter().position(|t| {
                let inside = rest < t.len();
                if !inside {
                    rest -= t.len();
                }
                inside
            });
            return (input.unwrap(), rest);
        }
        Join::Cat(axis) => {
            let mut c = coords[axis];
            let input = inputs
                .iter()
                .position(|t| {
                    let inside = c < t.shape()[axis];
                    if !inside {
                        c -= t.shape()[axis];
                    }
                    inside
                })
                .unwrap();
            coords[axis] = c;
            input
        }
        Join::Stack(axis) => coords.remove(axis),
    };
    let in_strides = strides(inputs[input].shape());
    let index = coords.iter().zip(&in_strides).map(|(c, s)| c * s).sum();
    (input, index)
}

/// The concatenation of `inputs` (all of one element type) as `join` says.
pub fn naive_concat(inputs: &[&HostTensor], join: Join) -> HostTensor {
    let element_type: ElementType = inputs[0].element_type();
    let shape = output_shape(inputs, join);
    let count: usize = shape.iter().product();
    match element_type.bit_width() {
        Some(bits) => {
            let bits = bits as usize;
            let mut out = vec![0u8; (count * bits).div_ceil(8)];
            for flat in 0..count {
                let (input, index) = source(inputs, join, &shape, flat);
                let value = read_element(inputs[input].as_bytes().unwrap(), bits, index);
                write_element(&mut out, bits, flat, &value);
            }
            HostTensor::from_raw(element_type, &shape, out).unwrap()
        }
        None => {
            let out = (0..count)
                .map(|flat| {
                    let (input, index) = source(inputs, join, &shape, flat);
                    inputs[input].byte_strings().unwrap()[index].clone()
                })
                .collect();
            HostTensor::from_byte_strings(&shape, out).unwrap()
        }
    }
}

/// `tensor` with the unused high bits of a sub-byte tensor's last byte
/// cleared, as every output of the crate has them.
pub fn canonical(tensor: &HostTensor) -> HostTensor {
    let (Some(bits), Ok(bytes)) = (tensor.element_type().bit_width(), tensor.as_bytes()) else {
        return tensor.clone();
    };
    let mut bytes = bytes.to_vec();
    let used = tensor.len() * bits as usize % 8;
    if used != 0 {
        let last = bytes.len() - 1;
        bytes[last] &= (1u8 << used) - 1;
    }
    HostTensor::from_raw(tensor.element_type(), tensor.shape(), bytes).unwrap()
}

/// Concatenates on the host and checks the result against the oracle, and
/// that the mirror split of the result gives the inputs back.
pub fn check_concat(inputs: &[HostTensor], concat: &ResolvedConcat, join: Join, context: &str) {
    let refs: Vec<&HostTensor> = inputs.iter().collect();
    let actual = HostTensor::concat(&refs, concat).unwrap();
    let taking: Vec<&HostTensor> = (0..inputs.len())
        .filter(|&i| concat.mirror_output(i).is_some())
        .map(|i| &inputs[i])
        .collect();
    if taking.is_empty() {
        // torch's cat of only skipped tensors.
        assert_eq!(actual.shape(), &[0], "{context}");
        return;
    }
    let expected = naive_concat(&taking, join);
    assert_outputs_equal(&[expected], std::slice::from_ref(&actual), context);
    // split(mirror, concat(xs)) == xs, through the host path and the naive
    // split, of the output seen as the mirror's input (the same bytes).
    let view = reshaped(&actual, concat.mirror().input_shape());
    let parts = view.split(concat.mirror()).unwrap();
    assert_outputs_equal(&naive_split(&view, concat.mirror()), &parts, context);
    for (input, part) in taking.iter().zip(&parts) {
        assert_eq!(input.element_type(), part.element_type());
        assert_eq!(input.len(), part.len(), "{context}");
        match (canonical(input).as_bytes(), part.as_bytes()) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{context}"),
            _ => assert_eq!(input.byte_strings(), part.byte_strings(), "{context}"),
        }
    }
}

/// `tensor` with another shape of the same element count (row-major, so
/// the same bytes).
pub fn reshaped(tensor: &HostTensor, shape: &[usize]) -> HostTensor {
    assert_eq!(tensor.len(), shape.iter().product::<usize>());
    match tensor.as_bytes() {
        Ok(bytes) => HostTensor::from_raw(tensor.element_type(), shape, bytes.to_vec()).unwrap(),
        Err(_) => {
            HostTensor::from_byte_strings(shape, tensor.byte_strings().unwrap().to_vec()).unwrap()
        }
    }
}
