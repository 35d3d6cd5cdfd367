//! burn's dtypes as the core crate's element types: the split moves bits,
//! so only the width matters (burn's booleans are stored as bytes or
//! 32-bit words, `Flex32` as `f32`).

use burn::tensor::{BoolStore, DType};
use wgpu_split::ElementType;

use crate::error::BurnSplitError;

/// The element type whose bits a `dtype` tensor holds.
///
/// # Errors
///
/// [`BurnSplitError::UnsupportedDType`] for quantized tensors.
pub fn element_type(dtype: DType) -> Result<ElementType, BurnSplitError> {
    Ok(match dtype {
        DType::F64 => ElementType::Double,
        DType::F32 | DType::Flex32 => ElementType::Float,
        DType::F16 => ElementType::Float16,
        DType::BF16 => ElementType::BFloat16,
        DType::I64 => ElementType::Int64,
        DType::I32 => ElementType::Int32,
        DType::I16 => ElementType::Int16,
        DType::I8 => ElementType::Int8,
        DType::U64 => ElementType::Uint64,
        DType::U32 | DType::Bool(BoolStore::U32) => ElementType::Uint32,
        DType::U16 => ElementType::Uint16,
        DType::U8 => ElementType::Uint8,
        DType::Bool(BoolStore::U8 | BoolStore::Native) => ElementType::Bool,
        DType::QFloat(_) => {
            return Err(BurnSplitError::UnsupportedDType {
                dtype,
                why: "quantized values are packed in blocks whose scales are stored apart; dequantize first",
            });
        }
    })
}
