//! candle's split calls (`candle-core/src/tensor.rs`). Dimensions are
//! candle's `Dim`: an index, or from the end (`D::Minus1` is -1 here).

use super::{FrameworkError, check_count, dim_index, even_sections, resolved};
use crate::semantics::resolved::ResolvedSplit;

/// `Tensor::chunk(chunks, dim)`: NumPy's `array_split` rule, the remainder
/// to the **first** pieces (5 into 4 gives [2, 1, 1, 1]); a dimension
/// shorter than `chunks` gives `n` pieces of 1 (none when empty).
///
/// # Errors
///
/// [`FrameworkError::ChunksNotPositive`] for 0 (candle divides by zero and
/// panics, huggingface/candle#3778); [`FrameworkError::DimOutOfRange`].
///
/// # Examples
///
/// ```
/// use wgpu_split::frameworks::candle;
///
/// assert_eq!(candle::chunk(&[5, 3], 4, 0).unwrap().lengths(), &[2, 1, 1, 1]);
/// assert_eq!(candle::chunk(&[3, 3], 5, 0).unwrap().lengths(), &[1, 1, 1]);
/// ```
pub fn chunk(shape: &[usize], chunks: usize, dim: i64) -> Result<ResolvedSplit, FrameworkError> {
    const CALL: &str = "candle chunk";
    let axis = dim_index(CALL, shape, dim)?;
    if chunks == 0 {
        return Err(FrameworkError::ChunksNotPositive {
            call: CALL,
            chunks: 0,
        });
    }
    let n = shape[axis];
    let count = chunks.min(n);
    check_count(count as u128)?;
    resolved(shape, axis, even_sections(n, count), true)
}
