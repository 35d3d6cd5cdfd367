//! Tensors stored as external data: the bytes are read from a file named
//! relative to the model's directory, range-checked before anything is
//! allocated.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path};

use super::error::OnnxError;
use super::proto::TensorProto;
use super::tensor_proto::tensor_from_proto;
use crate::element::ElementType;
use crate::error::Result;
use crate::tensor::{HostTensor, TensorError, checked_count};

/// `TensorProto.DataLocation.EXTERNAL`.
const EXTERNAL: i32 = 1;

/// Whether `t` keeps its data in an external file.
pub(crate) fn is_external(t: &TensorProto) -> bool {
    t.data_location == Some(EXTERNAL) || !t.external_data.is_empty()
}

/// Converts `t` into a tensor, reading external data relative to `dir`
/// (the model's directory; `None` for a model read from bytes).
///
/// # Errors
///
/// [`OnnxError::ExternalData`] for external data without a directory, a
/// `location` that is absolute or leaves the directory, a file that cannot
/// be read or is shorter than the range, a `length` that differs from what
/// the dimensions need; and the errors of [`tensor_from_proto`].
pub(crate) fn tensor_at(t: &TensorProto, dir: Option<&Path>) -> Result<HostTensor> {
    if !is_external(t) {
        return tensor_from_proto(t);
    }
    let name = t.name.clone().unwrap_or_default();
    let fail = |detail: String| OnnxError::ExternalData {
        tensor: name.clone(),
        detail,
    };
    let entry = |key: &str| {
        t.external_data
            .iter()
            .find(|e| e.key.as_deref() == Some(key))
            .and_then(|e| e.value.clone())
    };
    let number = |key: &str| -> Result<Option<u64>> {
        match entry(key) {
            None => Ok(None),
            Some(v) => {
                Ok(Some(v.parse().map_err(|_| {
                    fail(format!("{key} {v:?} is not a byte count"))
                })?))
            }
        }
    };
    let location = entry("location").ok_or_else(|| fail("no location is given".into()))?;
    let relative = Path::new(&location);
    if !relative
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(fail(format!(
            "location {location:?} must be a relative path inside the model's directory"
        ))
        .into());
    }
    let dir = dir.ok_or_else(|| {
        fail(format!(
            "the model was read from bytes, so {location:?} has no directory to be read from"
        ))
    })?;
    let expected = expected_bytes(t)?;
    let offset = number("offset")?.unwrap_or(0);
    if let Some(length) = number("length")?
        && length != expected
    {
        return Err(fail(format!(
            "length {length} differs from the {expected} bytes its dimensions need"
        ))
        .into());
    }
    let path = dir.join(relative);
    let mut file =
        std::fs::File::open(&path).map_err(|e| fail(format!("{}: {e}", path.display())))?;
    let size = file
        .metadata()
        .map_err(|e| fail(format!("{}: {e}", path.display())))?
        .len();
    if offset.checked_add(expected).is_none_or(|end| end > size) {
        return Err(fail(format!(
            "{} holds {size} bytes; bytes {offset}..+{expected} are asked for",
            path.display()
        ))
        .into());
    }
    let mut raw = vec![0u8; expected as usize];
    file.seek(SeekFrom::Start(offset))
        .and_then(|_| file.read_exact(&mut raw))
        .map_err(|e| fail(format!("{}: {e}", path.display())))?;
    let inline = TensorProto {
        raw_data: Some(raw),
        data_location: None,
        external_data: Vec::new(),
        ..t.clone()
    };
    tensor_from_proto(&inline)
}

/// The bytes `t`'s dimensions and element type need.
fn expected_bytes(t: &TensorProto) -> Result<u64> {
    let code = t.data_type.unwrap_or(0);
    let element_type = ElementType::from_onnx_code(code)
        .filter(|e| e.bit_width().is_some())
        .ok_or(TensorError::UnknownElementType { code })?;
    let shape = t
        .dims
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| OnnxError::MalformedTensor {
            name: t.name.clone().unwrap_or_default(),
            detail: "negative dimension".into(),
        })?;
    let count = checked_count(&shape)?;
    let bytes = element_type
        .byte_len(count)
        .ok_or(TensorError::ShapeOverflow {
            shape: shape.iter().map(|&d| d as u64).collect(),
        })?;
    Ok(bytes as u64)
}
