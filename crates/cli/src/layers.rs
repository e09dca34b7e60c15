//! The stack the user asked for: `--ext`, `--trace`, `--map` and
//! `--manifest` turned into an ordered list of layers (top first), each
//! checked before the program starts.
//!
//! Built-in extensions are checked by building them here, with the same
//! code the runtime runs (their crates are `no_std` and build anywhere);
//! extension objects are checked by [`crate::extobj`].

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use strata_ext::Extension as _;

use crate::args::{LayerSource, RunArgs};

/// Built-in extension names.
pub const BUILTINS: [&str; 7] = ["null", "count", "ids", "trace", "map", "tracemap", "policy"];

/// One layer: a built-in's name or an extension object's absolute path, and
/// its argument text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    pub name: String,
    pub args: String,
}

impl Layer {
    pub fn is_builtin(&self, name: &str) -> bool {
        self.name == name
    }
}

/// Why the stack cannot be built. Every variant ends strata with status 2.
#[derive(Debug, thiserror::Error)]
pub enum LayerError {
    #[error("unknown extension '{0}' (built in: null, count, trace, map; or the path of an extension object, e.g. ./libx.so)")]
    Unknown(String),
    #[error("extension {name}: {msg}")]
    Args { name: String, msg: String },
    #[error("{}: {msg}", path.display())]
    Manifest { path: PathBuf, msg: String },
    #[error(transparent)]
    Object(#[from] crate::extobj::ExtObjError),
    #[error("at most {max} layers (got {got})")]
    TooMany { max: usize, got: usize },
    #[error("{0}")]
    Usage(String),
}

/// Most layers in one stack (the runtime's limit).
pub const MAX_LAYERS: usize = 16;

/// Builds and checks the stack for `a`.
pub fn from_args(a: &RunArgs) -> Result<Vec<Layer>, LayerError> {
    if a.trace.is_none() && (a.trace_failed || a.trace_json || a.trace_ring.is_some()) {
        return Err(LayerError::Usage(
            "--trace-failed, --trace-json and --trace-ring go with --trace".into(),
        ));
    }
    let mut out = Vec::new();
    let mut checked = Vec::new();
    for (_, src) in &a.order {
        match src {
            LayerSource::Ext(i) => {
                let spec = a.ext.get(*i).map(String::as_str).unwrap_or("");
                out.push(parse_ext(spec, Path::new("."))?);
            }
            LayerSource::Manifest(i) => {
                if let Some(p) = a.manifest.get(*i) {
                    let m = manifest(p)?;
                    checked.resize(out.len(), false);
                    checked.extend(m.iter().map(|_| true));
                    out.extend(m);
                }
            }
            LayerSource::Trace => {
                let mut args = Vec::new();
                if let Some(f) = a.trace.as_deref().filter(|f| !f.is_empty()) {
                    args.push(format!("trace={f}"));
                }
                if a.trace_failed {
                    args.push("failed".into());
                }
                if a.trace_json {
                    args.push("format=json".into());
                }
                out.push(Layer {
                    name: "trace".into(),
                    args: args.join(","),
                });
            }
            LayerSource::Map => out.push(Layer {
                name: "map".into(),
                args: a.map.join(";"),
            }),
            LayerSource::Policy(i) => out.push(Layer {
                name: "policy".into(),
                args: a.policy_text.get(*i).cloned().unwrap_or_default(),
            }),
        }
    }
    if out.len() > MAX_LAYERS {
        return Err(LayerError::TooMany {
            max: MAX_LAYERS,
            got: out.len(),
        });
    }
    checked.resize(out.len(), false);
    for (l, done) in out.iter_mut().zip(checked) {
        if !done {
            check(l)?;
        }
    }
    Ok(out)
}

/// Parses `NAME` or `NAME:ARGS`; a NAME with a `/` is an extension object
/// (relative to `base`).
fn parse_ext(spec: &str, base: &Path) -> Result<Layer, LayerError> {
    let (name, args) = spec.split_once(':').unwrap_or((spec, ""));
    if name.contains('/') {
        let p = base.join(name);
        return Ok(Layer {
            name: p.to_string_lossy().into_owned(),
            args: args.to_string(),
        });
    }
    if !BUILTINS.contains(&name) {
        return Err(LayerError::Unknown(name.to_string()));
    }
    Ok(Layer {
        name: name.to_string(),
        args: args.to_string(),
    })
}

/// Checks one layer; extension objects get their absolute path.
fn check(l: &mut Layer) -> Result<(), LayerError> {
    if l.args.contains(['\t', '\n']) {
        return Err(LayerError::Args {
            name: l.name.clone(),
            msg: "arguments may not contain tabs or newlines".into(),
        });
    }
    let bad = |e: strata_ext::InitError| LayerError::Args {
        name: l.name.clone(),
        msg: String::from_utf8_lossy(e.message()).into_owned(),
    };
    crate::hostcheck::install();
    match l.name.as_str() {
        "null" | "count" | "ids" if !l.args.is_empty() => Err(LayerError::Args {
            name: l.name.clone(),
            msg: format!("{} takes no arguments (got '{}')", l.name, l.args),
        }),
        "null" | "count" | "ids" => Ok(()),
        "trace" => strata_ext_trace::Trace::new(&l.args).map(drop).map_err(bad),
        "map" => strata_ext_map::Map::new(&l.args).map(drop).map_err(bad),
        "policy" => strata_ext_policy::Sandbox::new(&l.args).map(drop).map_err(bad),
        "tracemap" => match l.args.split_once('@') {
            Some((t, m)) => match strata_ext_trace::Trace::new(t) {
                Ok(_) => strata_ext_map::Map::new(m).map(drop).map_err(bad),
                Err(e) => Err(bad(e)),
            },
            None => Err(LayerError::Args {
                name: l.name.clone(),
                msg: "tracemap takes TRACE_ARGS@MAP_ARGS".into(),
            }),
        },
        path => {
            let obj = crate::extobj::check(Path::new(path))?;
            l.name = obj.path.to_string_lossy().into_owned();
            Ok(())
        }
    }
}

/// The `[[layer]]` tables of a manifest.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    #[serde(default)]
    layer: Vec<ManifestLayer>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestLayer {
    ext: toml::Spanned<String>,
    #[serde(default)]
    args: Option<String>,
    #[serde(default)]
    params: Option<toml::Spanned<toml::Table>>,
}

/// Reads a manifest: its layers, top first, each checked (errors name the
/// manifest and the line and column of the layer's `ext`).
pub fn manifest(path: &Path) -> Result<Vec<Layer>, LayerError> {
    let err = |msg: String| LayerError::Manifest {
        path: path.to_path_buf(),
        msg,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(crate::preflight::io_text(&e)))?;
    let layers = parse_manifest(&text, path.parent().unwrap_or(Path::new("."))).map_err(err)?;
    let mut out = Vec::new();
    for (mut l, at) in layers {
        check(&mut l).map_err(|e| err(format!("{at}: {e}")))?;
        out.push(l);
    }
    Ok(out)
}

/// `line L, column C` of byte offset `at` in `text` (1-based).
pub fn position(text: &str, at: usize) -> String {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.chars().count(), |i| before[i + 1..].chars().count())
        + 1;
    format!("line {line}, column {col}")
}

fn parse_manifest(text: &str, base: &Path) -> Result<Vec<(Layer, String)>, String> {
    let m: Manifest = toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| position(text, s.start))
            .unwrap_or_else(|| "somewhere".into());
        format!("{at}: {}", e.message())
    })?;
    if m.layer.is_empty() {
        return Err("no [[layer]] tables".into());
    }
    let mut out = Vec::new();
    for l in m.layer {
        let at = position(text, l.ext.span().start);
        let mut layer = parse_ext(l.ext.get_ref(), base).map_err(|e| format!("{at}: {e}"))?;
        match (l.args, l.params) {
            (Some(_), Some(p)) => {
                return Err(format!(
                    "{}: give either args or params, not both",
                    position(text, p.span().start)
                ))
            }
            (Some(a), None) => layer.args = a,
            (None, Some(p)) => {
                let ppos = position(text, p.span().start);
                layer.args = params_text(&layer.name, p.get_ref()).map_err(|e| format!("{ppos}: {e}"))?;
            }
            (None, None) => {}
        }
        out.push((layer, at));
    }
    Ok(out)
}

/// A params table as argument text: `key=value` items joined by commas
/// (`true` gives the bare key, `false` omits it); for `map`, the `map` key
/// is a list of mappings joined by `;`.
fn params_text(ext: &str, t: &toml::Table) -> Result<String, String> {
    if ext == "map" {
        let mut v = Vec::new();
        for (k, val) in t {
            if k != "map" {
                return Err(format!(
                    "map takes one parameter, map = [\"PROGRAM_PATH=HOST_PATH[:ro|:discard]\", ...] (got '{k}')"
                ));
            }
            let arr = val.as_array().ok_or("map must be a list of strings")?;
            for e in arr {
                v.push(e.as_str().ok_or("map must be a list of strings")?.to_string());
            }
        }
        return Ok(v.join(";"));
    }
    let mut s = String::new();
    for (k, val) in t {
        let item = match val {
            toml::Value::String(x) => format!("{k}={x}"),
            toml::Value::Integer(n) => format!("{k}={n}"),
            toml::Value::Boolean(true) => k.clone(),
            toml::Value::Boolean(false) => continue,
            _ => return Err(format!("parameter '{k}' must be a string, an integer or a boolean")),
        };
        if !s.is_empty() {
            s.push(',');
        }
        let _ = write!(s, "{item}");
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_layers_in_order() {
        let m = r#"
[[layer]]
ext = "trace"
params = { trace = "%file", failed = true, s = 64 }

[[layer]]
ext = "map"
params = { map = ["/data=/tmp", "/etc/x=/tmp/y:ro"] }

[[layer]]
ext = "./libx.so"
args = "a=b"
"#;
        let v: Vec<Layer> = parse_manifest(m, Path::new("/m"))
            .unwrap()
            .into_iter()
            .map(|(l, _)| l)
            .collect();
        assert_eq!(v[0].name, "trace");
        assert_eq!(v[0].args, "failed,s=64,trace=%file");
        assert_eq!(v[1].args, "/data=/tmp;/etc/x=/tmp/y:ro");
        assert_eq!(v[2].name, "/m/./libx.so");
        assert_eq!(v[2].args, "a=b");
    }

    #[test]
    fn manifest_errors_name_line_and_column() {
        let e = parse_manifest("[[layer]]\next = \"trace\"\nbogus = 1\n", Path::new(".")).unwrap_err();
        assert!(e.starts_with("line 3, column 1:"), "{e}");
        assert!(e.contains("bogus"), "{e}");
        let e = parse_manifest("[[layer]]\next = \"nope\"\n", Path::new(".")).unwrap_err();
        assert!(
            e.starts_with("line 2, column 7:") && e.contains("unknown extension 'nope'"),
            "{e}"
        );
        let e = parse_manifest("[[layer]\next = 1\n", Path::new(".")).unwrap_err();
        assert!(e.starts_with("line 1, column "), "{e}");
        let e = parse_manifest("", Path::new(".")).unwrap_err();
        assert_eq!(e, "no [[layer]] tables");
        let e = parse_manifest("[[layer]]\next = \"map\"\nparams = { dir = 3 }\n", Path::new(".")).unwrap_err();
        assert!(e.starts_with("line 3, column 10:"), "{e}");
    }

    #[test]
    fn unknown_names() {
        assert!(matches!(parse_ext("bogus:1", Path::new(".")), Err(LayerError::Unknown(n)) if n == "bogus"));
        assert_eq!(parse_ext("count", Path::new(".")).unwrap().args, "");
        assert_eq!(parse_ext("./x.so:k=v", Path::new("/b")).unwrap().name, "/b/./x.so");
    }
}
