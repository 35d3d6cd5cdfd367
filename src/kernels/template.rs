//! WGSL templates: the kernels' WGSL lives in `shaders/*.wgsl` as WGSL,
//! with named holes (`{{name}}`) that Rust fills. A file holds one or more
//! fragments, each starting at a line `//#fragment <name>`; a fragment is
//! filled once per use (per destination slot, per output, per unrolled
//! step) by [`Template::fill`], the one function that fills holes.

use std::fmt::Display;

/// The fragments of one template file, by name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Template {
    file: &'static str,
    text: &'static str,
}

/// The line that starts a fragment.
const FRAGMENT: &str = "//#fragment ";

impl Template {
    /// A template over `text`, the contents of `shaders/<file>`.
    pub const fn new(file: &'static str, text: &'static str) -> Self {
        Template { file, text }
    }

    /// Its file under `shaders/`.
    pub fn file(&self) -> &'static str {
        self.file
    }

    /// The text of fragment `name` (up to the next fragment or the end).
    fn fragment(&self, name: &str) -> &'static str {
        let marker = format!("{FRAGMENT}{name}\n");
        let start = self
            .text
            .find(&marker)
            .map(|at| at + marker.len())
            .unwrap_or_else(|| panic!("shaders/{} has no fragment {name}", self.file));
        let rest = &self.text[start..];
        let end = rest.find(FRAGMENT).unwrap_or(rest.len());
        &rest[..end]
    }

    /// Fragment `name` with every `{{hole}}` replaced by its value.
    ///
    /// # Panics
    ///
    /// When the fragment does not exist, a value names no hole, or a hole is
    /// left unfilled: the templates are part of the crate, so each is a bug
    /// that the shader tests (which render every kernel) catch.
    pub fn fill(&self, name: &str, holes: &[(&str, &dyn Display)]) -> String {
        let mut text = self.fragment(name).to_string();
        for (hole, value) in holes {
            let marker = format!("{{{{{hole}}}}}");
            assert!(
                text.contains(&marker),
                "shaders/{}: fragment {name} has no hole {hole}",
                self.file
            );
            text = text.replace(&marker, &value.to_string());
        }
        if let Some(at) = text.find("{{") {
            let hole: String = text[at..].chars().take_while(|&c| c != '\n').collect();
            panic!(
                "shaders/{}: fragment {name} leaves {hole} unfilled",
                self.file
            );
        }
        text
    }

    /// Fragment `name` once per item of `items`, concatenated.
    pub fn repeat<T>(
        &self,
        name: &str,
        items: impl IntoIterator<Item = T>,
        holes: impl Fn(&T) -> Vec<(&'static str, String)>,
    ) -> String {
        items
            .into_iter()
            .map(|item| {
                let values = holes(&item);
                let refs: Vec<(&str, &dyn Display)> = values
                    .iter()
                    .map(|(name, value)| (*name, value as &dyn Display))
                    .collect();
                self.fill(name, &refs)
            })
            .collect()
    }
}
