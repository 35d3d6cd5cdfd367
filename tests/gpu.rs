//! The GPU path against the host path, byte for byte.

mod common;

use common::{Rng, assert_outputs_equal, gpu, naive_split, random_tensor};
use wgpu_split::{ElementType, ResolvedSplit, host};

#[test]
fn smoke_every_type() {
    let Some(gpu) = gpu("smoke_every_type") else {
        return;
    };
    let mut rng = Rng::new(5);
    for element_type in ElementType::ALL {
        let shape = [3, 7, 5];
        let input = random_tensor(&mut rng, element_type, &shape);
        for axis in 0..3 {
            let lengths = rng.lengths(shape[axis], 3);
            let split = ResolvedSplit::new(&shape, axis, lengths, true).unwrap();
            let actual = gpu.split_resolved(&split, &input).unwrap();
            assert_outputs_equal(
                &naive_split(&input, &split),
                &actual,
                &format!("{element_type} axis {axis} {:?}", split.lengths()),
            );
            assert_outputs_equal(&host::split(&input, &split).unwrap(), &actual, "host");
        }
    }
}
