//! Host tensors: typed round trips, data checked against the shape, and
//! parameters widened from every integer and float type.

use half::f16;
use wgpu_split::{ElementType, HostTensor, ParamValues, ResolveError, TensorError};

#[test]
fn typed_round_trips() {
    let t = HostTensor::from_slice(&[3], &[f16::from_f32(1.5), f16::NAN, f16::NEG_ZERO]).unwrap();
    let back = t.to_vec::<f16>().unwrap();
    assert_eq!(back[0].to_bits(), f16::from_f32(1.5).to_bits());
    assert_eq!(back[2].to_bits(), f16::NEG_ZERO.to_bits());
    assert_eq!(
        t.to_vec::<f32>(),
        Err(TensorError::ElementTypeMismatch {
            expected: ElementType::Float,
            actual: ElementType::Float16
        })
    );
    let c = HostTensor::from_complex128(&[1], &[[1.0, -2.0]]).unwrap();
    assert_eq!(c.to_complex128().unwrap(), vec![[1.0, -2.0]]);
    let b = HostTensor::from_bools(&[2], &[true, false]).unwrap();
    assert_eq!(b.to_bools().unwrap(), vec![true, false]);
    let s = HostTensor::from_strings(&[2], &["a", "bc"]).unwrap();
    assert_eq!(s.to_strings().unwrap(), vec!["a", "bc"]);
    assert_eq!(
        s.as_bytes(),
        Err(TensorError::NoPackedBytes {
            element_type: ElementType::String
        })
    );
}

#[test]
fn lengths_are_checked() {
    assert!(matches!(
        HostTensor::from_raw(ElementType::Int4, &[3], vec![0]),
        Err(TensorError::DataLength {
            expected: 2,
            actual: 1,
            ..
        })
    ));
    assert!(matches!(
        HostTensor::from_raw(ElementType::Float, &[usize::MAX, 2], vec![]),
        Err(TensorError::ShapeOverflow { .. })
    ));
    assert!(HostTensor::from_strings(&[3], &["x"]).is_err());
    assert_eq!(
        HostTensor::from_raw(ElementType::String, &[0], vec![]),
        Err(TensorError::NoPackedBytes {
            element_type: ElementType::String
        })
    );
}

#[test]
fn params_widen_every_integer_type() {
    let t = HostTensor::from_slice(&[2], &[u64::MAX, 3]).unwrap();
    assert_eq!(
        t.to_param().unwrap().values(),
        &ParamValues::Int(vec![u64::MAX as i128, 3])
    );
    let t = HostTensor::from_slice(&[1], &[-3i8]).unwrap();
    assert_eq!(t.to_param().unwrap().values(), &ParamValues::Int(vec![-3]));
    let t = HostTensor::from_slice(&[], &[2.5f32]).unwrap();
    assert_eq!(
        t.to_param().unwrap().values(),
        &ParamValues::Float(vec![2.5])
    );
    let t = HostTensor::from_bools(&[1], &[true]).unwrap();
    assert!(matches!(
        t.to_param(),
        Err(ResolveError::NonNumericParam { .. })
    ));
}
