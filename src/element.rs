//! Element types: every ONNX `TensorProto` data type, described by what a split
//! needs to know about it (its ONNX code and its width in bits).

use std::fmt;

/// An ONNX tensor element type.
///
/// Split only moves bits, so the one property that matters for execution is
/// [`bit_width`](ElementType::bit_width). Sub-byte types (4 and 2 bits) are
/// packed little-end first: element 0 sits in the lowest bits of byte 0.
///
/// # Examples
///
/// ```
/// use wgpu_split::ElementType;
///
/// assert_eq!(ElementType::Float16.bit_width(), Some(16));
/// assert_eq!(ElementType::Int4.bit_width(), Some(4));
/// assert_eq!(ElementType::String.bit_width(), None);
/// assert_eq!(ElementType::from_onnx_code(1), Some(ElementType::Float));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ElementType {
    /// 32-bit IEEE float (`FLOAT`, code 1).
    Float,
    /// Unsigned 8-bit integer (`UINT8`, code 2).
    Uint8,
    /// Signed 8-bit integer (`INT8`, code 3).
    Int8,
    /// Unsigned 16-bit integer (`UINT16`, code 4).
    Uint16,
    /// Signed 16-bit integer (`INT16`, code 5).
    Int16,
    /// Signed 32-bit integer (`INT32`, code 6).
    Int32,
    /// Signed 64-bit integer (`INT64`, code 7).
    Int64,
    /// Variable-length byte string (`STRING`, code 8); host path only.
    String,
    /// Boolean stored as one byte (`BOOL`, code 9).
    Bool,
    /// IEEE half precision (`FLOAT16`, code 10).
    Float16,
    /// 64-bit IEEE float (`DOUBLE`, code 11).
    Double,
    /// Unsigned 32-bit integer (`UINT32`, code 12).
    Uint32,
    /// Unsigned 64-bit integer (`UINT64`, code 13).
    Uint64,
    /// Pair of 32-bit floats, real first (`COMPLEX64`, code 14).
    Complex64,
    /// Pair of 64-bit floats, real first (`COMPLEX128`, code 15).
    Complex128,
    /// Brain float 16 (`BFLOAT16`, code 16).
    BFloat16,
    /// 8-bit float e4m3, finite (`FLOAT8E4M3FN`, code 17).
    Float8E4M3Fn,
    /// 8-bit float e4m3, finite, unsigned zero (`FLOAT8E4M3FNUZ`, code 18).
    Float8E4M3FnUz,
    /// 8-bit float e5m2 (`FLOAT8E5M2`, code 19).
    Float8E5M2,
    /// 8-bit float e5m2, finite, unsigned zero (`FLOAT8E5M2FNUZ`, code 20).
    Float8E5M2FnUz,
    /// Unsigned 4-bit integer, two per byte (`UINT4`, code 21).
    Uint4,
    /// Signed 4-bit integer, two per byte (`INT4`, code 22).
    Int4,
    /// 4-bit float e2m1, two per byte (`FLOAT4E2M1`, code 23).
    Float4E2M1,
    /// 8-bit exponent-only float (`FLOAT8E8M0`, code 24).
    Float8E8M0,
    /// Unsigned 2-bit integer, four per byte (`UINT2`, code 25).
    Uint2,
    /// Signed 2-bit integer, four per byte (`INT2`, code 26).
    Int2,
}

impl ElementType {
    /// Every element type, in ONNX code order.
    pub const ALL: [ElementType; 26] = [
        Self::Float,
        Self::Uint8,
        Self::Int8,
        Self::Uint16,
        Self::Int16,
        Self::Int32,
        Self::Int64,
        Self::String,
        Self::Bool,
        Self::Float16,
        Self::Double,
        Self::Uint32,
        Self::Uint64,
        Self::Complex64,
        Self::Complex128,
        Self::BFloat16,
        Self::Float8E4M3Fn,
        Self::Float8E4M3FnUz,
        Self::Float8E5M2,
        Self::Float8E5M2FnUz,
        Self::Uint4,
        Self::Int4,
        Self::Float4E2M1,
        Self::Float8E8M0,
        Self::Uint2,
        Self::Int2,
    ];

    /// The `TensorProto.DataType` code of this type.
    pub fn onnx_code(self) -> i32 {
        // ALL is in code order starting at 1, so the position is the code.
        Self::ALL
            .iter()
            .position(|&t| t == self)
            .map_or(0, |i| i as i32 + 1)
    }

    /// The type with the given `TensorProto.DataType` code, or `None` for
    /// `UNDEFINED` (0) and codes this crate does not know (the ONNX reader
    /// turns that into [`crate::TensorError::UnknownElementType`]).
    pub fn from_onnx_code(code: i32) -> Option<Self> {
        usize::try_from(code)
            .ok()
            .and_then(|c| c.checked_sub(1))
            .and_then(|i| Self::ALL.get(i).copied())
    }

    /// Width of one element in bits, or `None` for [`ElementType::String`].
    pub fn bit_width(self) -> Option<u32> {
        use ElementType::*;
        Some(match self {
            String => return None,
            Uint2 | Int2 => 2,
            Uint4 | Int4 | Float4E2M1 => 4,
            Uint8 | Int8 | Bool | Float8E4M3Fn | Float8E4M3FnUz | Float8E5M2 | Float8E5M2FnUz
            | Float8E8M0 => 8,
            Uint16 | Int16 | Float16 | BFloat16 => 16,
            Float | Int32 | Uint32 => 32,
            Double | Int64 | Uint64 | Complex64 => 64,
            Complex128 => 128,
        })
    }

    /// True for the types narrower than a byte, which are packed several per byte.
    pub fn is_sub_byte(self) -> bool {
        self.bit_width().is_some_and(|w| w < 8)
    }

    /// True for the signed and unsigned integer types of 8 bits or more.
    pub fn is_integer(self) -> bool {
        use ElementType::*;
        matches!(
            self,
            Uint8 | Int8 | Uint16 | Int16 | Int32 | Int64 | Uint32 | Uint64
        )
    }

    /// True for `float16`, `bfloat16`, `float` and `double`.
    pub fn is_standard_float(self) -> bool {
        use ElementType::*;
        matches!(self, Float16 | BFloat16 | Float | Double)
    }

    /// The lower-case ONNX name of the type, as in `tensor(float16)`.
    pub fn name(self) -> &'static str {
        use ElementType::*;
        match self {
            Float => "float",
            Uint8 => "uint8",
            Int8 => "int8",
            Uint16 => "uint16",
            Int16 => "int16",
            Int32 => "int32",
            Int64 => "int64",
            String => "string",
            Bool => "bool",
            Float16 => "float16",
            Double => "double",
            Uint32 => "uint32",
            Uint64 => "uint64",
            Complex64 => "complex64",
            Complex128 => "complex128",
            BFloat16 => "bfloat16",
            Float8E4M3Fn => "float8e4m3fn",
            Float8E4M3FnUz => "float8e4m3fnuz",
            Float8E5M2 => "float8e5m2",
            Float8E5M2FnUz => "float8e5m2fnuz",
            Uint4 => "uint4",
            Int4 => "int4",
            Float4E2M1 => "float4e2m1",
            Float8E8M0 => "float8e8m0",
            Uint2 => "uint2",
            Int2 => "int2",
        }
    }

    /// Bytes needed to store `count` elements densely packed, or `None` for
    /// strings and on overflow.
    pub fn byte_len(self, count: usize) -> Option<usize> {
        let bits = count.checked_mul(self.bit_width()? as usize)?;
        Some(bits.div_ceil(8))
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_cover_onnx() {
        for (i, t) in ElementType::ALL.iter().enumerate() {
            assert_eq!(t.onnx_code(), i as i32 + 1);
            assert_eq!(ElementType::from_onnx_code(t.onnx_code()), Some(*t));
        }
        assert_eq!(ElementType::Float8E8M0.onnx_code(), 24);
        assert_eq!(ElementType::Int2.onnx_code(), 26);
        for bad in [0, -1, 27, i32::MAX, i32::MIN] {
            assert_eq!(ElementType::from_onnx_code(bad), None);
        }
    }

    #[test]
    fn widths_match_the_semantics_table() {
        use ElementType::*;
        let table: &[(&[ElementType], Option<u32>)] = &[
            (&[Uint2, Int2], Some(2)),
            (&[Int4, Uint4, Float4E2M1], Some(4)),
            (
                &[
                    Bool,
                    Int8,
                    Uint8,
                    Float8E4M3Fn,
                    Float8E4M3FnUz,
                    Float8E5M2,
                    Float8E5M2FnUz,
                    Float8E8M0,
                ],
                Some(8),
            ),
            (&[Float16, BFloat16, Int16, Uint16], Some(16)),
            (&[Float, Int32, Uint32], Some(32)),
            (&[Double, Int64, Uint64, Complex64], Some(64)),
            (&[Complex128], Some(128)),
            (&[String], None),
        ];
        let mut seen = 0;
        for (types, width) in table {
            for t in *types {
                assert_eq!(t.bit_width(), *width, "{t}");
                seen += 1;
            }
        }
        assert_eq!(seen, ElementType::ALL.len());
    }

    #[test]
    fn byte_len_packs_sub_byte_types() {
        assert_eq!(ElementType::Int4.byte_len(3), Some(2));
        assert_eq!(ElementType::Int2.byte_len(5), Some(2));
        assert_eq!(ElementType::Complex128.byte_len(2), Some(32));
        assert_eq!(ElementType::String.byte_len(2), None);
        assert_eq!(ElementType::Double.byte_len(usize::MAX), None);
    }
}
