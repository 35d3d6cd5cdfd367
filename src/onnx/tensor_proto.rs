//! `TensorProto` and `SequenceProto` to and from [`HostTensor`]s, from every
//! storage field, with sizes checked before anything is allocated.

use super::decode;
use super::error::OnnxError;
use super::proto::{self, SequenceProto, TensorProto};
use crate::element::ElementType;
use crate::error::{Error, Result};
use crate::tensor::{HostTensor, TensorError, checked_count};

/// Decodes a serialized `TensorProto`.
///
/// # Errors
///
/// [`OnnxError::ProtobufDecode`] for bytes that are not a `TensorProto`;
/// [`TensorError::UnknownElementType`](crate::TensorError::UnknownElementType),
/// [`TensorError::ShapeOverflow`](crate::TensorError::ShapeOverflow),
/// [`TensorError::DataLength`](crate::TensorError::DataLength) and
/// [`OnnxError::MalformedTensor`] of the tensor's own fields (its type, its
/// dimensions against its data, external data).
pub fn read_tensor(bytes: &[u8]) -> Result<HostTensor> {
    tensor_from_proto(&decode::<TensorProto>(bytes, "TensorProto")?)
}

/// Decodes a serialized `SequenceProto` of tensors.
///
/// # Errors
///
/// [`OnnxError::ProtobufDecode`], [`OnnxError::MalformedTensor`] for a sequence of
/// something other than tensors, and each tensor's errors as
/// [`read_tensor`] gives them.
pub fn read_sequence(bytes: &[u8]) -> Result<Vec<HostTensor>> {
    let sequence = decode::<SequenceProto>(bytes, "SequenceProto")?;
    let elem_type = sequence
        .elem_type
        .unwrap_or(proto::sequence_elem_type::TENSOR);
    if elem_type != proto::sequence_elem_type::TENSOR {
        return Err(OnnxError::MalformedTensor {
            name: sequence.name.unwrap_or_default(),
            detail: format!("sequence of element kind {elem_type}; only tensor sequences are read"),
        }
        .into());
    }
    sequence
        .tensor_values
        .iter()
        .map(tensor_from_proto)
        .collect()
}

/// Converts a `TensorProto` into a [`HostTensor`], from whichever field holds
/// the data: `raw_data`, `float_data`, `int32_data` (8/16-bit and packed
/// sub-byte types), `int64_data`, `double_data`, `uint64_data`, `string_data`;
/// complex values as pairs.
///
/// Sizes are checked against the dimensions before anything is allocated, so
/// dimensions that claim terabytes fail with [`TensorError::DataLength`].
///
/// # Errors
///
/// [`TensorError::UnknownElementType`], [`TensorError::ShapeOverflow`],
/// [`TensorError::DataLength`], and [`OnnxError::MalformedTensor`] for negative
/// dimensions or external data.
pub fn tensor_from_proto(t: &TensorProto) -> Result<HostTensor> {
    let name = t.name.clone().unwrap_or_default();
    let malformed = |detail: &str| -> Error {
        OnnxError::MalformedTensor {
            name: name.clone(),
            detail: detail.to_string(),
        }
        .into()
    };
    let code = t.data_type.unwrap_or(0);
    let element_type =
        ElementType::from_onnx_code(code).ok_or(TensorError::UnknownElementType { code })?;
    if t.data_location == Some(1) || !t.external_data.is_empty() {
        return Err(malformed("external data is not supported"));
    }
    let shape = t
        .dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| malformed("negative dimension")))
        .collect::<Result<Vec<_>>>()?;
    let count = checked_count(&shape)?;
    if element_type == ElementType::String {
        if t.raw_data.is_some() {
            return Err(malformed("a string tensor cannot use raw_data"));
        }
        return Ok(HostTensor::from_byte_strings(
            &shape,
            t.string_data.clone(),
        )?);
    }
    if let Some(raw) = &t.raw_data {
        return Ok(HostTensor::from_raw(element_type, &shape, raw.clone())?);
    }
    let bytes = typed_field_bytes(t, element_type, &shape, count)?;
    Ok(HostTensor::from_raw(element_type, &shape, bytes)?)
}

/// The little-endian bytes of the typed `*_data` field that stores `element_type`.
fn typed_field_bytes(
    t: &TensorProto,
    element_type: ElementType,
    shape: &[usize],
    count: usize,
) -> Result<Vec<u8>> {
    use ElementType::*;
    let bits = element_type.bit_width().unwrap_or(0) as usize;
    // How many values the field must hold: pairs for complex, one packed byte
    // per value for sub-byte types, one value per element otherwise.
    let expected = match element_type {
        Complex64 | Complex128 => count as u128 * 2,
        _ if bits < 8 => (count as u128 * bits as u128).div_ceil(8),
        _ => count as u128,
    };
    let check = |actual: usize| {
        if actual as u128 == expected {
            Ok(())
        } else {
            Err(TensorError::DataLength {
                element_type,
                shape: shape.iter().map(|&d| d as u64).collect(),
                expected,
                actual,
                unit: "values",
            })
        }
    };
    Ok(match element_type {
        Float | Complex64 => {
            check(t.float_data.len())?;
            t.float_data.iter().flat_map(|v| v.to_le_bytes()).collect()
        }
        Double | Complex128 => {
            check(t.double_data.len())?;
            t.double_data.iter().flat_map(|v| v.to_le_bytes()).collect()
        }
        Int64 => {
            check(t.int64_data.len())?;
            t.int64_data.iter().flat_map(|v| v.to_le_bytes()).collect()
        }
        Uint64 => {
            check(t.uint64_data.len())?;
            t.uint64_data.iter().flat_map(|v| v.to_le_bytes()).collect()
        }
        Uint32 => {
            check(t.uint64_data.len())?;
            t.uint64_data
                .iter()
                .flat_map(|&v| (v as u32).to_le_bytes())
                .collect()
        }
        _ => {
            // int32_data: one element per value (8, 16, 32 bits; 16-bit floats
            // as their bit patterns), or one packed byte per value (sub-byte).
            check(t.int32_data.len())?;
            let width = bits.div_ceil(8);
            t.int32_data
                .iter()
                .flat_map(|v| v.to_le_bytes().into_iter().take(width))
                .collect()
        }
    })
}

/// Converts a [`HostTensor`] into a `TensorProto` (`raw_data`, or
/// `string_data` for strings).
#[cfg_attr(not(feature = "analysis"), allow(dead_code))]
pub fn tensor_to_proto(name: &str, tensor: &HostTensor) -> TensorProto {
    let mut t = TensorProto {
        dims: tensor.shape().iter().map(|&d| d as i64).collect(),
        data_type: Some(tensor.element_type().onnx_code()),
        name: Some(name.to_string()),
        ..TensorProto::default()
    };
    match tensor.byte_strings() {
        Ok(strings) => t.string_data = strings.to_vec(),
        Err(_) => t.raw_data = tensor.as_bytes().ok().map(<[u8]>::to_vec),
    }
    t
}
