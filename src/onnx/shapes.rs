//! Input shapes as a model declares them: numbers, named (symbolic)
//! dimensions, or nothing; and their values once the names are given.

use std::collections::HashMap;
use std::fmt;

use super::dim_expr::evaluate;
use super::proto::TypeProto;
use super::scope::{Definition, Scope};
use crate::element::ElementType;

/// One dimension of a declared shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A number.
    Known(usize),
    /// A name (`batch`) or an expression of names
    /// (`floor(height/2 - 1/2) + 1`), given a value with `--dim`-style
    /// bindings: [`Dim::value`].
    Symbolic(String),
    /// Declared with neither a number nor a name.
    Unknown,
}

impl Dim {
    /// The dimension's size with `names` bound: a number as it is, a name
    /// or an expression of names evaluated exactly; `None` when a name is
    /// unbound or the expression is not a whole non-negative number.
    ///
    /// ```
    /// use std::collections::HashMap;
    /// use wgpu_split::onnx::Dim;
    ///
    /// let names = HashMap::from([("height".to_string(), 320)]);
    /// let dim = Dim::Symbolic("floor(floor(height/2 - 1/2)/2) + 1".into());
    /// assert_eq!(dim.value(&names), Some(80));
    /// assert_eq!(Dim::Symbolic("width".into()).value(&names), None);
    /// ```
    pub fn value(&self, names: &HashMap<String, usize>) -> Option<usize> {
        match self {
            Dim::Known(n) => Some(*n),
            Dim::Symbolic(text) => evaluate(text, names),
            Dim::Unknown => None,
        }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Known(n) => write!(f, "{n}"),
            Dim::Symbolic(name) => write!(f, "{name}"),
            Dim::Unknown => write!(f, "?"),
        }
    }
}

/// The element type and shape the model declares for `name`: its
/// `value_info`, graph input or output entry, or its initializer's dims.
pub(crate) fn declared(scope: &Scope, name: &str) -> (Option<ElementType>, Option<Vec<Dim>>) {
    if let Some(Definition::Initializer(t)) = scope.define(name) {
        let shape = t
            .dims
            .iter()
            .map(|&d| usize::try_from(d).map_or(Dim::Unknown, Dim::Known))
            .collect();
        return (element_type(t.data_type), Some(shape));
    }
    let Some(tensor) = scope
        .info(name)
        .and_then(|v| v.r#type.as_ref())
        .and_then(|t: &TypeProto| t.tensor_type.as_ref())
    else {
        return (None, None);
    };
    let shape = tensor.shape.as_ref().map(|s| {
        s.dim
            .iter()
            .map(|d| match (d.dim_value, &d.dim_param) {
                (Some(v), _) => usize::try_from(v).map_or(Dim::Unknown, Dim::Known),
                (None, Some(p)) if !p.is_empty() => Dim::Symbolic(p.clone()),
                _ => Dim::Unknown,
            })
            .collect()
    });
    (element_type(tensor.elem_type), shape)
}

fn element_type(code: Option<i32>) -> Option<ElementType> {
    code.and_then(ElementType::from_onnx_code)
}
