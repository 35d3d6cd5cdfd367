//! Host tensors: a shape, an element type and the elements, either as densely
//! packed little-endian bytes or, for strings, as one byte string per element.

use half::{bf16, f16};

use crate::element::ElementType;
use crate::semantics::{ParamTensor, ParamValues, ResolveError, element_count};

pub(crate) mod error;
pub(crate) use error::TensorError;

#[cfg(target_endian = "big")]
compile_error!("wgpu-split stores tensors little-endian and assumes a little-endian host");

/// A Rust type whose values are stored bit for bit as one ONNX element type.
pub trait NativeElement: bytemuck::Pod {
    /// The ONNX element type this Rust type stores.
    const ELEMENT_TYPE: ElementType;
}

macro_rules! native_element {
    ($($rust:ty => $onnx:ident),* $(,)?) => {
        $(impl NativeElement for $rust {
            const ELEMENT_TYPE: ElementType = ElementType::$onnx;
        })*
    };
}

native_element!(
    f32 => Float, f64 => Double, f16 => Float16, bf16 => BFloat16,
    i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64,
    u8 => Uint8, u16 => Uint16, u32 => Uint32, u64 => Uint64,
);

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Storage {
    Bytes(Vec<u8>),
    Strings(Vec<Vec<u8>>),
}

/// A tensor in host memory.
///
/// Fixed-width types hold their elements as packed little-endian bytes (the
/// ONNX `raw_data` layout: sub-byte types several per byte from the low bits
/// up, bool one byte each, complex as real then imaginary). Strings hold one
/// byte string per element.
///
/// # Examples
///
/// ```
/// use wgpu_split::{ElementType, HostTensor};
///
/// let t = HostTensor::from_slice(&[2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
/// assert_eq!(t.element_type(), ElementType::Float);
/// assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
///
/// // Four int4 elements in two bytes, element 0 in the low nibble.
/// let q = HostTensor::from_raw(ElementType::Int4, &[4], vec![0x21, 0x43]).unwrap();
/// assert_eq!(q.as_bytes().unwrap(), &[0x21, 0x43]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HostTensor {
    shape: Vec<usize>,
    element_type: ElementType,
    storage: Storage,
}

impl HostTensor {
    /// A tensor of a [`NativeElement`] type from its values in row-major order.
    ///
    /// # Errors
    ///
    /// [`TensorError::DataLength`] when `values.len()` differs from the shape's
    /// element count; [`TensorError::ShapeOverflow`].
    pub fn from_slice<T: NativeElement>(
        shape: &[usize],
        values: &[T],
    ) -> Result<Self, TensorError> {
        Self::from_raw(
            T::ELEMENT_TYPE,
            shape,
            bytemuck::cast_slice(values).to_vec(),
        )
    }

    /// A `bool` tensor (one byte per element, 0 or 1).
    ///
    /// # Errors
    ///
    /// As [`HostTensor::from_slice`].
    pub fn from_bools(shape: &[usize], values: &[bool]) -> Result<Self, TensorError> {
        let bytes = values.iter().map(|&b| u8::from(b)).collect();
        Self::from_raw(ElementType::Bool, shape, bytes)
    }

    /// A `complex64` tensor from `[real, imaginary]` pairs.
    ///
    /// # Errors
    ///
    /// As [`HostTensor::from_slice`].
    pub fn from_complex64(shape: &[usize], values: &[[f32; 2]]) -> Result<Self, TensorError> {
        let bytes = bytemuck::cast_slice(values).to_vec();
        Self::from_raw(ElementType::Complex64, shape, bytes)
    }

    /// A `complex128` tensor from `[real, imaginary]` pairs.
    ///
    /// # Errors
    ///
    /// As [`HostTensor::from_slice`].
    pub fn from_complex128(shape: &[usize], values: &[[f64; 2]]) -> Result<Self, TensorError> {
        let bytes = bytemuck::cast_slice(values).to_vec();
        Self::from_raw(ElementType::Complex128, shape, bytes)
    }

    /// A tensor of any fixed-width type from its packed little-endian bytes
    /// (the way to build float8, 4-bit and 2-bit tensors).
    ///
    /// # Errors
    ///
    /// [`TensorError::NoPackedBytes`] for [`ElementType::String`];
    /// [`TensorError::DataLength`] when `bytes.len()` differs from what the shape
    /// needs; [`TensorError::ShapeOverflow`].
    pub fn from_raw(
        element_type: ElementType,
        shape: &[usize],
        bytes: Vec<u8>,
    ) -> Result<Self, TensorError> {
        let count = checked_count(shape)?;
        let Some(expected) = element_type.byte_len(count) else {
            return match element_type.bit_width() {
                None => Err(TensorError::NoPackedBytes { element_type }),
                Some(_) => Err(TensorError::ShapeOverflow {
                    shape: shape.iter().map(|&d| d as u64).collect(),
                }),
            };
        };
        if bytes.len() != expected {
            return Err(TensorError::DataLength {
                element_type,
                shape: shape.iter().map(|&d| d as u64).collect(),
                expected: expected as u128,
                actual: bytes.len(),
                unit: "bytes",
            });
        }
        Ok(HostTensor {
            shape: shape.to_vec(),
            element_type,
            storage: Storage::Bytes(bytes),
        })
    }

    /// A `string` tensor from its elements as byte strings (ONNX strings are
    /// bytes, usually UTF-8).
    ///
    /// # Errors
    ///
    /// [`TensorError::DataLength`] when the element count differs from the shape's.
    pub fn from_byte_strings(shape: &[usize], values: Vec<Vec<u8>>) -> Result<Self, TensorError> {
        let count = checked_count(shape)?;
        if values.len() != count {
            return Err(TensorError::DataLength {
                element_type: ElementType::String,
                shape: shape.iter().map(|&d| d as u64).collect(),
                expected: count as u128,
                actual: values.len(),
                unit: "strings",
            });
        }
        Ok(HostTensor {
            shape: shape.to_vec(),
            element_type: ElementType::String,
            storage: Storage::Strings(values),
        })
    }

    /// A `string` tensor from Rust strings.
    ///
    /// # Errors
    ///
    /// As [`HostTensor::from_byte_strings`].
    pub fn from_strings<S: AsRef<str>>(shape: &[usize], values: &[S]) -> Result<Self, TensorError> {
        let values = values.iter().map(|s| s.as_ref().as_bytes().to_vec());
        Self::from_byte_strings(shape, values.collect())
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The element type.
    pub fn element_type(&self) -> ElementType {
        self.element_type
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        // The constructors checked that the product fits.
        self.shape.iter().product()
    }

    /// True when the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The packed little-endian bytes of a fixed-width tensor.
    ///
    /// # Errors
    ///
    /// [`TensorError::NoPackedBytes`] for a string tensor.
    pub fn as_bytes(&self) -> Result<&[u8], TensorError> {
        match &self.storage {
            Storage::Bytes(b) => Ok(b),
            Storage::Strings(_) => Err(TensorError::NoPackedBytes {
                element_type: self.element_type,
            }),
        }
    }

    /// The elements of a string tensor as byte strings.
    ///
    /// # Errors
    ///
    /// [`TensorError::ElementTypeMismatch`] for a fixed-width tensor.
    pub fn byte_strings(&self) -> Result<&[Vec<u8>], TensorError> {
        match &self.storage {
            Storage::Strings(s) => Ok(s),
            Storage::Bytes(_) => Err(TensorError::ElementTypeMismatch {
                expected: ElementType::String,
                actual: self.element_type,
            }),
        }
    }

    /// The elements of a string tensor as Rust strings (invalid UTF-8 is
    /// replaced with U+FFFD; use [`HostTensor::byte_strings`] for exact bytes).
    ///
    /// # Errors
    ///
    /// [`TensorError::ElementTypeMismatch`] for a fixed-width tensor.
    pub fn to_strings(&self) -> Result<Vec<String>, TensorError> {
        let strings = self.byte_strings()?;
        Ok(strings
            .iter()
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect())
    }

    /// The elements as a [`NativeElement`] type.
    ///
    /// # Errors
    ///
    /// [`TensorError::ElementTypeMismatch`] when `T` does not store this tensor's type.
    pub fn to_vec<T: NativeElement>(&self) -> Result<Vec<T>, TensorError> {
        self.expect_type(T::ELEMENT_TYPE)?;
        Ok(bytemuck::pod_collect_to_vec(self.as_bytes()?))
    }

    /// The elements of a `bool` tensor (any non-zero byte is `true`).
    ///
    /// # Errors
    ///
    /// [`TensorError::ElementTypeMismatch`] for any other type.
    pub fn to_bools(&self) -> Result<Vec<bool>, TensorError> {
        self.expect_type(ElementType::Bool)?;
        Ok(self.as_bytes()?.iter().map(|&b| b != 0).collect())
    }

    /// The elements of a `complex64` tensor as `[real, imaginary]` pairs.
    ///
    /// # Errors
    ///
    /// [`TensorError::ElementTypeMismatch`] for any other type.
    pub fn to_complex64(&self) -> Result<Vec<[f32; 2]>, TensorError> {
        self.expect_type(ElementType::Complex64)?;
        Ok(bytemuck::pod_collect_to_vec(self.as_bytes()?))
    }

    /// The elements of a `complex128` tensor as `[real, imaginary]` pairs.
    ///
    /// # Errors
    ///
    /// [`TensorError::ElementTypeMismatch`] for any other type.
    pub fn to_complex128(&self) -> Result<Vec<[f64; 2]>, TensorError> {
        self.expect_type(ElementType::Complex128)?;
        Ok(bytemuck::pod_collect_to_vec(self.as_bytes()?))
    }

    /// This tensor as operator parameters (split lengths or an axis): integer
    /// types widen to `i128`, standard floats to `f64`.
    ///
    /// # Errors
    ///
    /// [`ResolveError::NonNumericParam`] for any other element type.
    pub fn to_param(&self) -> Result<ParamTensor, ResolveError> {
        use ElementType::*;
        let values = match self.element_type {
            Int8 => ints(&self.values::<i8>()),
            Uint8 => ints(&self.values::<u8>()),
            Int16 => ints(&self.values::<i16>()),
            Uint16 => ints(&self.values::<u16>()),
            Int32 => ints(&self.values::<i32>()),
            Uint32 => ints(&self.values::<u32>()),
            Int64 => ints(&self.values::<i64>()),
            Uint64 => ints(&self.values::<u64>()),
            Float16 => floats(self.values::<f16>().into_iter().map(f64::from)),
            BFloat16 => floats(self.values::<bf16>().into_iter().map(f64::from)),
            Float => floats(self.values::<f32>().into_iter().map(f64::from)),
            Double => floats(self.values::<f64>()),
            other => {
                return Err(ResolveError::NonNumericParam {
                    element_type: other,
                });
            }
        };
        ParamTensor::new(self.element_type, self.shape.clone(), values)
    }

    /// The elements as `T`, whose type the caller has matched (a string
    /// tensor has none).
    fn values<T: bytemuck::Pod>(&self) -> Vec<T> {
        match &self.storage {
            Storage::Bytes(bytes) => bytemuck::pod_collect_to_vec(bytes),
            Storage::Strings(_) => Vec::new(),
        }
    }

    fn expect_type(&self, expected: ElementType) -> Result<(), TensorError> {
        if self.element_type == expected {
            Ok(())
        } else {
            Err(TensorError::ElementTypeMismatch {
                expected,
                actual: self.element_type,
            })
        }
    }
}

/// The element count of `shape`.
///
/// # Errors
///
/// [`TensorError::ShapeOverflow`] when it does not fit `usize` (see
/// [`element_count`]).
pub(crate) fn checked_count(shape: &[usize]) -> Result<usize, TensorError> {
    element_count(shape).map_err(|_| TensorError::ShapeOverflow {
        shape: shape.iter().map(|&d| d as u64).collect(),
    })
}

fn ints<T: Copy + Into<i128>>(values: &[T]) -> ParamValues {
    ParamValues::Int(values.iter().map(|&v| v.into()).collect())
}

fn floats(values: impl IntoIterator<Item = f64>) -> ParamValues {
    ParamValues::Float(values.into_iter().collect())
}
