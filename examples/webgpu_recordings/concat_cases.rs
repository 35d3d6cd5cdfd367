//! The concats recorded: the inverse of every split case that has one
//! (every kernel's samples, split_bench's cases, every element width, the
//! framework calls, a spread of output counts), and the concats only a
//! concat has: an input given twice, inputs that take no part, runs long
//! enough for copies.

use super::cases::Forced;
use wgpu_split::frameworks::Torch;
use wgpu_split::{ElementType, ResolvedConcat};

use super::cases::{Case, WIDTHS, bench_cases, count_cases, kernel_cases, width_cases};

/// A concat to record, by name.
pub struct ConcatCase {
    pub name: String,
    pub element_type: ElementType,
    pub concat: ResolvedConcat,
}

/// The concat that undoes `case`'s split, when there is one (a split of
/// contiguous pieces covering its axis).
fn inverse(case: Case) -> Option<ConcatCase> {
    Some(ConcatCase {
        name: format!("concat_{}", case.name),
        element_type: case.element_type,
        concat: ResolvedConcat::inverse_of(&case.split)?,
    })
}

fn case(name: &str, t: ElementType, concat: ResolvedConcat) -> ConcatCase {
    ConcatCase {
        name: name.to_string(),
        element_type: t,
        concat,
    }
}

/// Per kernel, the inverse of its cases in the split suite (its spec's
/// samples first): a kernel that moves concats runs them forced.
pub fn kernel_concat_cases() -> Vec<(Forced, ConcatCase)> {
    kernel_cases()
        .into_iter()
        .filter_map(|(kernel, c)| Some((kernel, inverse(c)?)))
        .collect()
}

/// The inverses of split_bench's cases and of the width cases: planned by
/// every strategy (and, for the widths, every kernel forced).
pub fn varied_concat_cases() -> Vec<(ConcatCase, bool)> {
    let bench = bench_cases().into_iter().map(|c| (c, false));
    let widths = width_cases().into_iter().map(|c| (c, true));
    bench
        .chain(widths)
        .filter_map(|(c, forced)| Some((inverse(c)?, forced)))
        .collect()
}

/// Concats of 1 to 100 inputs (a spread: past 7 inputs a pass's pieces
/// take more than one dispatch), inverses of the split's count cases.
pub fn count_concat_cases() -> Vec<ConcatCase> {
    const COUNTS: [usize; 12] = [1, 2, 3, 6, 7, 8, 9, 15, 20, 33, 64, 100];
    count_cases()
        .into_iter()
        .enumerate()
        .filter(|(i, _)| COUNTS.contains(&(i + 1)))
        .filter_map(|(_, c)| inverse(c))
        .collect()
}

/// Concats past one dispatch's pieces, for staged plans: the inverses of
/// the split's staged cases and of its count cases of 8 and more.
pub fn staged_concat_cases() -> Vec<ConcatCase> {
    const COUNTS: [usize; 4] = [8, 15, 33, 100];
    let counts = count_cases()
        .into_iter()
        .enumerate()
        .filter(|(i, _)| COUNTS.contains(&(i + 1)))
        .map(|(_, c)| c);
    super::cases::staged_cases()
        .into_iter()
        .chain(counts)
        .filter_map(inverse)
        .collect()
}

/// What only a concat has: one tensor given twice or three times (the
/// aliasing layouts then bind one region for all of them), inputs that
/// take no part (torch's legacy `[0]`), an empty input, a stack, and
/// runs long enough that copies move them.
pub fn own_concat_cases() -> Vec<ConcatCase> {
    use ElementType::{Float, Float16, Int4, Uint8};
    let mut cases = Vec::new();
    for t in WIDTHS {
        cases.push(case(
            &format!("twice_{t}"),
            t,
            ResolvedConcat::new(&[[5, 7], [5, 7]], 1).expect("a valid concat"),
        ));
    }
    let new = |shapes: &[&[usize]], axis| ResolvedConcat::new(shapes, axis).expect("valid");
    cases.extend([
        case(
            "thrice_with_another_f16",
            Float16,
            new(&[&[8, 24], &[8, 8], &[8, 24], &[8, 24]], 1),
        ),
        case(
            "torch_cat_skipped_u8",
            Uint8,
            Torch::cat(&[vec![0], vec![3, 5], vec![0], vec![3, 2]], 1).expect("a valid call"),
        ),
        case(
            "empty_input_i4",
            Int4,
            new(&[&[4, 0], &[4, 6], &[4, 0], &[4, 2]], 1),
        ),
        case(
            "stack_f16",
            Float16,
            ResolvedConcat::stack(&[[4, 3], [4, 3], [4, 3]], 2).expect("a valid stack"),
        ),
        case("copies_axis0_f32", Float, new(&[&[16, 64], &[48, 64]], 0)),
        case(
            "copies_rows_f32",
            Float,
            new(&[&[8, 256], &[8, 512], &[8, 256]], 1),
        ),
        case(
            "yolo_c2f_f16",
            Float16,
            new(&[&[1, 16, 8, 8], &[1, 16, 8, 8], &[1, 16, 8, 8]], 1),
        ),
    ]);
    cases
}
