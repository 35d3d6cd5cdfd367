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
    fn from_cube<const D: usize>(tensor: CubeTensor) -> Tensor<D, Self>;
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

            fn from_cube<const D: usize>(tensor: CubeTensor) -> Tensor<D, Self> {
                #[cfg(feature = "fusion")]
                let tensor = fusion::register(tensor);
                Tensor::from_primitive::<Cube>(tensor)
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
    use burn_fusion::stream::StreamId;
    use burn_fusion::{FusionTensor, NoOp, get_client};
    use burn_ir::{InitOperationIr, OperationIr, OperationOutput};

    /// Registers a written buffer with the fusion client as an initialised
    /// tensor, as burn's own `from_data` does.
    pub(super) fn register(tensor: CubeTensor) -> FusionTensor<FusionCubeRuntime> {
        let client = get_client::<CubeBackend>(&tensor.device);
        let (shape, dtype) = (tensor.meta.shape().clone(), tensor.dtype);
        let handle = CubeFusionHandle::from(tensor);
        let init = InitOperationIr::create(shape, dtype, || client.register_tensor_handle(handle));
        client
            .register(
                StreamId::current(),
                OperationIr::Init(init),
                NoOp::<CubeBackend>::new(),
            )
            .output()
    }
}
