//! A burn tensor as the cubecl tensor under it, and back.
//!
//! burn 0.22 routes every tensor through its dispatch layer to one cubecl
//! backend, `burn_cubecl::Cube`: the plain `CubeBackend`, or with the
//! `fusion` feature `Fusion<CubeBackend>`, whose tensors are lazy ids that
//! the fusion client resolves (running the fused work that produces them)
//! and into which a finished buffer is registered back as an
//! initialised tensor.

use burn::tensor::{BackendPrimitive, Bool, Float, Int, Tensor, kind::Basic};
use burn_cubecl::Cube;
use burn_cubecl::tensor::CubeTensor;

use crate::error::BurnSplitError;

/// The tensor kinds the splitter accepts: float, int and bool tensors.
pub trait SplitKind: Basic + BackendPrimitive<Cube> + Sized {
    /// The cubecl tensor holding `tensor`'s data (with fusion: after the
    /// fused work that produces it has been run).
    ///
    /// # Errors
    ///
    /// [`BurnSplitError::NotWgpu`] for a tensor of another backend, or an
    /// autodiff tensor.
    fn into_cube<const D: usize>(tensor: Tensor<D, Self>) -> Result<CubeTensor, BurnSplitError>;

    /// A burn tensor over `tensor`'s buffer.
    fn from_cube<const D: usize>(tensor: CubeTensor) -> Tensor<D, Self> {
        let mut one = Self::from_cubes(vec![tensor]);
        one.pop().expect("one tensor in, one out")
    }

    /// Burn tensors over the buffers of `tensors` (with fusion: registered
    /// in one operation, not one per tensor).
    fn from_cubes<const D: usize>(tensors: Vec<CubeTensor>) -> Vec<Tensor<D, Self>>;
}

fn not_wgpu(e: burn::tensor::PrimitiveConversionError) -> BurnSplitError {
    BurnSplitError::NotWgpu {
        detail: format!("{e:?}"),
    }
}

macro_rules! split_kind {
    ($kind:ty, $resolve:ident) => {
        impl SplitKind for $kind {
            fn into_cube<const D: usize>(
                tensor: Tensor<D, Self>,
            ) -> Result<CubeTensor, BurnSplitError> {
                let primitive = tensor.try_into_primitive::<Cube>().map_err(not_wgpu)?;
                #[cfg(feature = "fusion")]
                let primitive = {
                    let client = primitive.client.clone();
                    client.$resolve::<burn_cubecl::CubeBackend>(primitive)
                };
                Ok(primitive)
            }

            fn from_cubes<const D: usize>(tensors: Vec<CubeTensor>) -> Vec<Tensor<D, Self>> {
                #[cfg(feature = "fusion")]
                let tensors = fusion::register(tensors);
                tensors
                    .into_iter()
                    .map(Tensor::from_primitive::<Cube>)
                    .collect()
            }
        }
    };
}

split_kind!(Float, resolve_tensor_float);
split_kind!(Int, resolve_tensor_int);
split_kind!(Bool, resolve_tensor_bool);

#[cfg(feature = "fusion")]
mod fusion {
    use burn_cubecl::CubeBackend;
    use burn_cubecl::fusion::{CubeFusionHandle, FusionCubeRuntime};
    use burn_cubecl::tensor::CubeTensor;
    use burn_fusion::stream::{Operation, StreamId};
    use burn_fusion::{ExecutionError, FusionTensor, get_client};
    use burn_ir::{CustomOpIr, HandleContainer, OperationIr, TensorIr};

    /// Hands written buffers to the fusion server under their tensor ids
    /// when the server reaches the operation (as burn's `from_data` does,
    /// for all outputs at once).
    #[derive(Debug)]
    struct Publish {
        outputs: Vec<(TensorIr, CubeFusionHandle)>,
    }

    impl Operation<FusionCubeRuntime> for Publish {
        fn execute(
            &self,
            handles: &mut HandleContainer<CubeFusionHandle>,
        ) -> Result<(), ExecutionError> {
            for (ir, handle) in &self.outputs {
                handles.register_handle(ir.id, handle.clone());
            }
            Ok(())
        }
    }

    /// Registers written buffers with the fusion client as initialised
    /// tensors, in one operation.
    pub(super) fn register(tensors: Vec<CubeTensor>) -> Vec<FusionTensor<FusionCubeRuntime>> {
        let Some(first) = tensors.first() else {
            return Vec::new();
        };
        let client = get_client::<CubeBackend>(&first.device);
        let outputs: Vec<(TensorIr, CubeFusionHandle)> = tensors
            .into_iter()
            .map(|t| {
                let id = client.create_empty_handle();
                let ir = TensorIr::uninit(id, t.meta.shape().clone(), t.dtype);
                (ir, CubeFusionHandle::from(t))
            })
            .collect();
        let irs: Vec<TensorIr> = outputs.iter().map(|(ir, _)| ir.clone()).collect();
        let op = CustomOpIr::new("wgpu-split outputs", &[], &irs);
        client.register(
            StreamId::current(),
            OperationIr::Custom(op),
            Publish { outputs },
        )
    }
}
