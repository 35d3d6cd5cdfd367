//! Runs ONNX backend node-test directories: `model.onnx` with one split or
//! concat node (possibly among `Constant` and `Identity` nodes feeding it
//! constants) and any number of `test_data_set_*/{input,output}_N.pb`. Used
//! by the conformance tests and the `onnx_node_test` example; the executors
//! (one for splits, one for concats) are parameters, so the same runner
//! checks the host path and the GPU path.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{OnnxError, SplitModel, malformed_model, read_sequence, read_tensor};
use crate::error::{Error, Result};
use crate::semantics::{ConcatOperator, Operator};
use crate::tensor::HostTensor;

/// Why a node test failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Failure {
    /// Loading, binding or executing failed.
    #[error(transparent)]
    Error(#[from] Error),
    /// A concat node, and no concat executor was given.
    #[error("a {op_type} node needs a concat executor (run it with run_with)")]
    NoConcatExecutor {
        /// The node's operator type.
        op_type: String,
    },
    /// An output differs from the expected one.
    #[error("data set {data_set}, output {output}: {detail}")]
    OutputMismatch {
        /// The data set directory name.
        data_set: String,
        /// The output position (or sequence element).
        output: usize,
        /// What differs.
        detail: String,
    },
}

/// One `test_data_set_*` directory: the feeds and the expected outputs
/// (a sequence output, or the sequence input of `ConcatFromSequence`, is
/// flattened into its tensors).
#[derive(Debug, Clone, PartialEq)]
pub struct DataSet {
    /// The directory name, e.g. `test_data_set_0`.
    pub name: String,
    /// One tensor per graph input, in order.
    pub inputs: Vec<HostTensor>,
    /// The expected outputs.
    pub expected: Vec<HostTensor>,
}

/// A loaded node-test directory.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeTest {
    dir: PathBuf,
    model: SplitModel,
    data_sets: Vec<DataSet>,
}

impl NodeTest {
    /// Loads `dir/model.onnx` and every `dir/test_data_set_*`.
    ///
    /// # Errors
    ///
    /// [`OnnxError::Io`] for missing files, [`OnnxError::MalformedModel`] for a
    /// directory without data sets, and every model and tensor reading error.
    pub fn load(dir: &Path) -> Result<Self> {
        let entries = std::fs::read_dir(dir).map_err(|e| OnnxError::io(dir, &e))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| OnnxError::io(dir, &e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("test_data_set_") && entry.path().is_dir() {
                names.push(name);
            }
        }
        Self::from_files(dir, &names, &|file| std::fs::read(dir.join(file)))
    }

    /// A node test from its files' bytes, where there is no file system
    /// (the web): `read` gives the file at a path relative to `dir`
    /// (`model.onnx`, `test_data_set_0/input_0.pb`, ...), `data_sets`
    /// names the data-set directories (in any order; they run in name
    /// order). `dir` only names the test.
    ///
    /// # Errors
    ///
    /// As [`NodeTest::load`].
    pub fn from_files(
        dir: &Path,
        data_sets: &[String],
        read: &dyn Fn(&str) -> std::io::Result<Vec<u8>>,
    ) -> Result<Self> {
        let file =
            |name: &str| read(name).map_err(|e| Error::from(OnnxError::io(dir.join(name), &e)));
        let model = SplitModel::from_bytes(&file("model.onnx")?)?;
        let mut names = data_sets.to_vec();
        names.sort();
        if names.is_empty() {
            return Err(malformed_model(format!(
                "{} holds no test_data_set_* directory",
                dir.display()
            )));
        }
        let data_sets = names
            .into_iter()
            .map(|name| {
                let set = load_data_set(&model, &|f: &str| file(&format!("{name}/{f}")))?;
                Ok(DataSet { name, ..set })
            })
            .collect::<Result<_>>()?;
        Ok(NodeTest {
            dir: dir.to_path_buf(),
            model,
            data_sets,
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The model.
    pub fn model(&self) -> &SplitModel {
        &self.model
    }

    /// The data sets, in name order.
    pub fn data_sets(&self) -> &[DataSet] {
        &self.data_sets
    }

    /// Runs every data set through `execute` (operator, data tensor -> outputs)
    /// and compares each output bit-exactly. Returns the number of outputs checked.
    ///
    /// # Errors
    ///
    /// The first error `execute` or binding returns,
    /// [`Failure::NoConcatExecutor`] for a concat node (see
    /// [`NodeTest::run_with`]), or [`Failure::OutputMismatch`] for the first
    /// output that differs.
    pub fn run<F>(&self, mut execute: F) -> Result<usize, Failure>
    where
        F: FnMut(&Operator, &HostTensor) -> Result<Vec<HostTensor>>,
    {
        self.run_sets(&mut execute, None)
    }

    /// [`NodeTest::run`] with a concat executor too (operator, inputs ->
    /// output) for `Concat` and `ConcatFromSequence` nodes.
    ///
    /// # Errors
    ///
    /// As [`NodeTest::run`].
    pub fn run_with<F, C>(&self, mut split: F, mut concat: C) -> Result<usize, Failure>
    where
        F: FnMut(&Operator, &HostTensor) -> Result<Vec<HostTensor>>,
        C: FnMut(&ConcatOperator, &[&HostTensor]) -> Result<HostTensor>,
    {
        self.run_sets(&mut split, Some(&mut concat))
    }

    fn run_sets(
        &self,
        split: &mut dyn FnMut(&Operator, &HostTensor) -> Result<Vec<HostTensor>>,
        mut concat: Option<&mut ConcatExecutor<'_>>,
    ) -> Result<usize, Failure> {
        let mut checked = 0;
        for set in &self.data_sets {
            let actual = if self.model.is_concat() {
                let Some(concat) = concat.as_mut() else {
                    return Err(Failure::NoConcatExecutor {
                        op_type: self.model.op_type().to_string(),
                    });
                };
                let (operator, inputs) = self.model.bind_concat(&set.inputs)?;
                vec![concat(&operator, &inputs)?]
            } else {
                let (operator, data) = self.model.bind(&set.inputs)?;
                split(&operator, data)?
            };
            compare_outputs(&set.name, &set.expected, &actual)?;
            checked += actual.len();
        }
        Ok(checked)
    }
}

/// A concat executor: operator and inputs to the output.
type ConcatExecutor<'a> = dyn FnMut(&ConcatOperator, &[&HostTensor]) -> Result<HostTensor> + 'a;

/// Pass and fail counts of [`run_directories`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    /// Directories whose every output matched.
    pub passed: usize,
    /// Directories that failed to load, run or match.
    pub failed: usize,
}

/// Loads and runs each directory, writing `PASS <dir>` or `FAIL <dir>: <reason>`
/// per directory and a closing `N passed, M failed` line to `out`.
///
/// A malformed directory is a `FAIL` line with its reason; nothing panics.
/// Concat directories fail with [`Failure::NoConcatExecutor`]: run them
/// with [`run_directories_with`].
///
/// # Errors
///
/// Only errors writing to `out`.
pub fn run_directories<F>(
    dirs: &[PathBuf],
    mut execute: F,
    out: &mut dyn Write,
) -> std::io::Result<Summary>
where
    F: FnMut(&Operator, &HostTensor) -> Result<Vec<HostTensor>>,
{
    run_all(dirs, &mut execute, None, out)
}

/// [`run_directories`] with a concat executor for `Concat` and
/// `ConcatFromSequence` directories.
///
/// # Errors
///
/// Only errors writing to `out`.
pub fn run_directories_with<F, C>(
    dirs: &[PathBuf],
    mut split: F,
    mut concat: C,
    out: &mut dyn Write,
) -> std::io::Result<Summary>
where
    F: FnMut(&Operator, &HostTensor) -> Result<Vec<HostTensor>>,
    C: FnMut(&ConcatOperator, &[&HostTensor]) -> Result<HostTensor>,
{
    run_all(dirs, &mut split, Some(&mut concat), out)
}

fn run_all(
    dirs: &[PathBuf],
    split: &mut dyn FnMut(&Operator, &HostTensor) -> Result<Vec<HostTensor>>,
    mut concat: Option<&mut ConcatExecutor<'_>>,
    out: &mut dyn Write,
) -> std::io::Result<Summary> {
    let mut summary = Summary::default();
    for dir in dirs {
        match NodeTest::load(dir)
            .map_err(Failure::from)
            .and_then(|test| test.run_sets(split, concat.as_deref_mut()))
        {
            Ok(_) => {
                summary.passed += 1;
                writeln!(out, "PASS {}", dir.display())?;
            }
            Err(e) => {
                summary.failed += 1;
                writeln!(out, "FAIL {}: {e}", dir.display())?;
            }
        }
    }
    writeln!(out, "{} passed, {} failed", summary.passed, summary.failed)?;
    Ok(summary)
}

/// A data set of `model`, its files read by `read` (a name inside the
/// data set's directory); unnamed.
fn load_data_set(model: &SplitModel, read: &dyn Fn(&str) -> Result<Vec<u8>>) -> Result<DataSet> {
    let read = |file: String| read(&file);
    let inputs = if model.op_type() == "ConcatFromSequence" {
        read_sequence(&read("input_0.pb".to_string())?)?
    } else {
        (0..model.graph_inputs().len())
            .map(|i| read_tensor(&read(format!("input_{i}.pb"))?))
            .collect::<Result<Vec<_>>>()?
    };
    let expected = if model.op_type() == "SplitToSequence" {
        read_sequence(&read("output_0.pb".to_string())?)?
    } else {
        (0..model.graph_output_count())
            .map(|i| read_tensor(&read(format!("output_{i}.pb"))?))
            .collect::<Result<Vec<_>>>()?
    };
    Ok(DataSet {
        name: String::new(),
        inputs,
        expected,
    })
}

/// Compares outputs by count, element type, shape and bytes (or strings).
///
/// # Errors
///
/// [`Failure::OutputMismatch`] naming the first difference.
pub fn compare_outputs(
    data_set: &str,
    expected: &[HostTensor],
    actual: &[HostTensor],
) -> Result<(), Failure> {
    let mismatch = |output: usize, detail: String| Failure::OutputMismatch {
        data_set: data_set.to_string(),
        output,
        detail,
    };
    if expected.len() != actual.len() {
        return Err(mismatch(
            expected.len().min(actual.len()),
            format!("expected {} outputs, got {}", expected.len(), actual.len()),
        ));
    }
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        if e.element_type() != a.element_type() {
            let detail = format!(
                "element type {} expected, got {}",
                e.element_type(),
                a.element_type()
            );
            return Err(mismatch(i, detail));
        }
        if e.shape() != a.shape() {
            let detail = format!("shape {:?} expected, got {:?}", e.shape(), a.shape());
            return Err(mismatch(i, detail));
        }
        if e != a {
            let detail = match (e.as_bytes(), a.as_bytes()) {
                (Ok(eb), Ok(ab)) => {
                    let at = eb.iter().zip(ab).position(|(x, y)| x != y).unwrap_or(0);
                    format!("bytes differ first at byte {at}")
                }
                _ => "string elements differ".to_string(),
            };
            return Err(mismatch(i, detail));
        }
    }
    Ok(())
}
