//! Parsing of `#[bitlens(...)]` attributes: what the user wrote, with spans, before it is checked
//! against the field's type.

use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Expr, Ident, LitBool, LitStr, Token};

/// A value given either as parameters or as a path to a constant of the spec's type.
pub enum Spec<P> {
    Params(P),
    Path(Expr),
}

pub struct CompressedParams {
    pub min: Option<Expr>,
    pub max: Option<Expr>,
    pub resolution: Option<Expr>,
    pub delta: Option<Expr>,
    pub max_integer_value: Option<Expr>,
    pub span: Span,
}

pub struct FixedParams {
    pub integer_bits: Option<Expr>,
    pub fraction_bits: Option<Expr>,
    pub min: Option<Expr>,
    pub max: Option<Expr>,
    pub unsigned: bool,
    pub span: Span,
}

/// Where a relative index or integer finds its previous value.
#[derive(Clone)]
pub enum Prev {
    Field(Ident),
    Const(Expr),
}

pub struct Relative {
    pub max_objects: Option<Expr>,
    pub previous: Option<Prev>,
    pub span: Span,
}

/// The attributes of one field (or of an array's element).
#[derive(Default)]
pub struct FieldAttrs {
    pub name: Option<LitStr>,
    pub range: Option<(Expr, Expr, Span)>,
    pub bits: Option<(Expr, Span)>,
    pub compressed: Option<Spec<CompressedParams>>,
    pub quaternion: Option<(Spec<Expr>, Span)>,
    pub fixed: Option<Spec<FixedParams>>,
    pub max_len: Option<(Expr, Span)>,
    pub len: Option<(Expr, Span)>,
    pub wstring: Option<Span>,
    pub element: Option<(Box<FieldAttrs>, Span)>,
    pub object_index: Option<Relative>,
    pub int_relative: Option<Relative>,
    pub sparse: Option<(Expr, Span)>,
    pub sparse_index: Option<Span>,
    pub align: Option<Span>,
    pub align_after: Option<Span>,
    pub check: Vec<LitStr>,
    pub check_after: Vec<LitStr>,
    /// `if = flag` (true) or `unless = flag` (false).
    pub guard: Option<(Ident, bool, Span)>,
    pub flag: Option<LitStr>,
    pub flatten: Option<Span>,
    pub skip: Option<Span>,
    /// Spans of every key given, for "conflicts with" errors.
    pub keys: Vec<(String, Span)>,
}

const FIELD_KEYS: &str = "name, range, bits, compressed, quaternion, fixed, max_len, len, wstring, \
    element, object_index, int_relative, sparse, sparse_index, align, align_after, check, \
    check_after, if, unless, flag, flatten, skip";

pub fn ident_of(meta: &ParseNestedMeta<'_>) -> String {
    meta.path
        .get_ident()
        .map(|i| i.to_string())
        .unwrap_or_default()
}

pub fn once<T>(
    slot: &mut Option<T>,
    v: T,
    meta: &ParseNestedMeta<'_>,
    key: &str,
) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error(format!("`{key}` is given twice (keep one)")));
    }
    *slot = Some(v);
    Ok(())
}

/// A field name or a string naming one: `if = at_rest` or `if = "at_rest"`.
fn field_ref(meta: &ParseNestedMeta<'_>) -> syn::Result<Ident> {
    let input = meta.value()?;
    if input.peek(LitStr) {
        let s: LitStr = input.parse()?;
        return s
            .parse::<Ident>()
            .map_err(|_| syn::Error::new(s.span(), "expected the name of a field of this struct"));
    }
    input.parse::<Ident>()
}

impl FieldAttrs {
    pub fn parse(attrs: &[syn::Attribute]) -> syn::Result<FieldAttrs> {
        let mut out = FieldAttrs::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("bitlens")) {
            attr.parse_nested_meta(|meta| out.item(meta))?;
        }
        Ok(out)
    }

    fn item(&mut self, meta: ParseNestedMeta<'_>) -> syn::Result<()> {
        let key = ident_of(&meta);
        let span = meta.path.span();
        self.keys.push((key.clone(), span));
        match key.as_str() {
            "name" => once(&mut self.name, meta.value()?.parse()?, &meta, "name"),
            "range" => {
                let e: Expr = meta.value()?.parse()?;
                let (lo, hi) = range_bounds(&e)?;
                once(&mut self.range, (lo, hi, e.span()), &meta, "range")
            }
            "bits" => {
                let e: Expr = meta.value()?.parse()?;
                let sp = e.span();
                once(&mut self.bits, (e, sp), &meta, "bits")
            }
            "compressed" => {
                let spec = if meta.input.peek(Token![=]) {
                    Spec::Path(meta.value()?.parse()?)
                } else {
                    let mut p = CompressedParams {
                        min: None,
                        max: None,
                        resolution: None,
                        delta: None,
                        max_integer_value: None,
                        span,
                    };
                    meta.parse_nested_meta(|m| {
                        let k = ident_of(&m);
                        let slot = match k.as_str() {
                            "min" => &mut p.min,
                            "max" => &mut p.max,
                            "resolution" => &mut p.resolution,
                            "delta" => &mut p.delta,
                            "max_integer_value" => &mut p.max_integer_value,
                            _ => {
                                return Err(m.error(
                                    "expected `min`, `max`, `resolution` (or the precomputed \
                                     `min`, `delta`, `max_integer_value`)",
                                ));
                            }
                        };
                        let e: Expr = m.value()?.parse()?;
                        once(slot, e, &m, &k)
                    })?;
                    Spec::Params(p)
                };
                once(&mut self.compressed, spec, &meta, "compressed")
            }
            "quaternion" => {
                let spec = if meta.input.peek(Token![=]) {
                    Spec::Path(meta.value()?.parse()?)
                } else {
                    let mut bits = None;
                    meta.parse_nested_meta(|m| {
                        if m.path.is_ident("bits") {
                            let e: Expr = m.value()?.parse()?;
                            once(&mut bits, e, &m, "bits")
                        } else {
                            Err(m.error("expected `bits = N` (bits per component, 2 to 16)"))
                        }
                    })?;
                    let bits = bits.ok_or_else(|| {
                        syn::Error::new(
                            span,
                            "a quaternion needs its bits per component: `quaternion(bits = 10)`",
                        )
                    })?;
                    Spec::Params(bits)
                };
                once(&mut self.quaternion, (spec, span), &meta, "quaternion")
            }
            "fixed" => {
                let spec = if meta.input.peek(Token![=]) {
                    Spec::Path(meta.value()?.parse()?)
                } else {
                    let mut p = FixedParams {
                        integer_bits: None,
                        fraction_bits: None,
                        min: None,
                        max: None,
                        unsigned: false,
                        span,
                    };
                    meta.parse_nested_meta(|m| {
                        let k = ident_of(&m);
                        let slot = match k.as_str() {
                            "integer_bits" => &mut p.integer_bits,
                            "fraction_bits" => &mut p.fraction_bits,
                            "min" => &mut p.min,
                            "max" => &mut p.max,
                            "unsigned" => {
                                p.unsigned = if m.input.peek(Token![=]) {
                                    m.value()?.parse::<LitBool>()?.value
                                } else {
                                    true
                                };
                                return Ok(());
                            }
                            _ => {
                                return Err(m.error(
                                    "expected `integer_bits`, `fraction_bits`, `min`, `max` or \
                                     `unsigned`",
                                ));
                            }
                        };
                        let e: Expr = m.value()?.parse()?;
                        once(slot, e, &m, &k)
                    })?;
                    Spec::Params(p)
                };
                once(&mut self.fixed, spec, &meta, "fixed")
            }
            "max_len" => {
                let e: Expr = meta.value()?.parse()?;
                let sp = e.span();
                once(&mut self.max_len, (e, sp), &meta, "max_len")
            }
            "len" => {
                let e: Expr = meta.value()?.parse()?;
                let sp = e.span();
                once(&mut self.len, (e, sp), &meta, "len")
            }
            "wstring" => once(&mut self.wstring, span, &meta, "wstring"),
            "element" => {
                let mut inner = FieldAttrs::default();
                meta.parse_nested_meta(|m| inner.item(m))?;
                once(&mut self.element, (Box::new(inner), span), &meta, "element")
            }
            "object_index" | "int_relative" => {
                let mut r = Relative {
                    max_objects: None,
                    previous: None,
                    span,
                };
                let is_index = key == "object_index";
                if !meta.input.is_empty() && !meta.input.peek(Token![,]) {
                    meta.parse_nested_meta(|m| {
                        if m.path.is_ident("max_objects") && is_index {
                            let e: Expr = m.value()?.parse()?;
                            once(&mut r.max_objects, e, &m, "max_objects")
                        } else if m.path.is_ident("previous") {
                            let e: Expr = m.value()?.parse()?;
                            let prev = match &e {
                                Expr::Path(p) if p.path.get_ident().is_some_and(is_field_like) => {
                                    Prev::Field(
                                        p.path
                                            .get_ident()
                                            .cloned()
                                            .unwrap_or_else(|| Ident::new("_", Span::call_site())),
                                    )
                                }
                                Expr::Lit(syn::ExprLit {
                                    lit: syn::Lit::Str(s),
                                    ..
                                }) => Prev::Field(s.parse()?),
                                _ => Prev::Const(e),
                            };
                            once(&mut r.previous, prev, &m, "previous")
                        } else if is_index {
                            Err(m.error("expected `max_objects = N` or `previous = ...`"))
                        } else {
                            Err(m.error(
                                "expected `previous = ...` (a constant or an earlier field)",
                            ))
                        }
                    })?;
                }
                let slot = if is_index {
                    &mut self.object_index
                } else {
                    &mut self.int_relative
                };
                once(slot, r, &meta, &key)
            }
            "sparse" => {
                let mut max = None;
                meta.parse_nested_meta(|m| {
                    if m.path.is_ident("max_objects") {
                        let e: Expr = m.value()?.parse()?;
                        once(&mut max, e, &m, "max_objects")
                    } else {
                        Err(m.error("expected `max_objects = N` (the end-of-list sentinel)"))
                    }
                })?;
                let max = max.ok_or_else(|| {
                    syn::Error::new(
                        span,
                        "a sparse array needs its object slots: `sparse(max_objects = 4096)`",
                    )
                })?;
                once(&mut self.sparse, (max, span), &meta, "sparse")
            }
            "sparse_index" => once(&mut self.sparse_index, span, &meta, "sparse_index"),
            "align" => once(&mut self.align, span, &meta, "align"),
            "align_after" => once(&mut self.align_after, span, &meta, "align_after"),
            "check" => {
                self.check.push(meta.value()?.parse()?);
                Ok(())
            }
            "check_after" => {
                self.check_after.push(meta.value()?.parse()?);
                Ok(())
            }
            "if" | "unless" => {
                let flag = field_ref(&meta)?;
                once(
                    &mut self.guard,
                    (flag, key == "if", span),
                    &meta,
                    "if/unless",
                )
            }
            "flag" => once(&mut self.flag, meta.value()?.parse()?, &meta, "flag"),
            "flatten" => once(&mut self.flatten, span, &meta, "flatten"),
            "skip" => once(&mut self.skip, span, &meta, "skip"),
            _ => Err(meta.error(format!(
                "unknown bitlens attribute `{key}` (expected one of {FIELD_KEYS})"
            ))),
        }
    }

    /// The first key of `keys` given, with its span.
    pub fn first_of(&self, keys: &[&str]) -> Option<(&str, Span)> {
        self.keys
            .iter()
            .find(|(k, _)| keys.contains(&k.as_str()))
            .map(|(k, s)| (k.as_str(), *s))
    }
}

/// A lower-case identifier: a field name rather than a constant.
fn is_field_like(i: &Ident) -> bool {
    let s = i.to_string();
    s.chars()
        .next()
        .is_some_and(|c| c.is_lowercase() || c == '_')
}

/// `a..=b` or `a..b` (then `b - 1`).
pub fn range_bounds(e: &Expr) -> syn::Result<(Expr, Expr)> {
    match e {
        Expr::Range(r) => {
            let (Some(lo), Some(hi)) = (&r.start, &r.end) else {
                return Err(syn::Error::new(
                    e.span(),
                    "a range needs both bounds: `range = 0..=100`",
                ));
            };
            let hi: Expr = match r.limits {
                syn::RangeLimits::Closed(_) => (**hi).clone(),
                syn::RangeLimits::HalfOpen(_) => syn::parse_quote!((#hi) - 1),
            };
            Ok(((**lo).clone(), hi))
        }
        _ => Err(syn::Error::new(
            e.span(),
            "expected a range: `range = 0..=100`",
        )),
    }
}

/// The attributes of a struct or enum (the type itself).
pub struct ContainerAttrs {
    pub name: Option<LitStr>,
    pub krate: syn::Path,
    pub protocol: Option<LitStr>,
    pub id: Option<Expr>,
    pub id_bits: Option<(u32, Span)>,
    pub mtu: Option<Expr>,
    pub tag_name: Option<LitStr>,
}

impl ContainerAttrs {
    pub fn parse(attrs: &[syn::Attribute], packet_set: bool) -> syn::Result<ContainerAttrs> {
        let mut out = ContainerAttrs {
            name: None,
            krate: syn::parse_quote!(::bitlens_codec),
            protocol: None,
            id: None,
            id_bits: None,
            mtu: None,
            tag_name: None,
        };
        for attr in attrs.iter().filter(|a| a.path().is_ident("bitlens")) {
            attr.parse_nested_meta(|meta| {
                let key = ident_of(&meta);
                match key.as_str() {
                    "name" => once(&mut out.name, meta.value()?.parse()?, &meta, "name"),
                    "crate" => {
                        let path: LitStr = meta.value()?.parse()?;
                        out.krate = path.parse()?;
                        Ok(())
                    }
                    "tag_name" if !packet_set => {
                        once(&mut out.tag_name, meta.value()?.parse()?, &meta, "tag_name")
                    }
                    "protocol" if packet_set => {
                        once(&mut out.protocol, meta.value()?.parse()?, &meta, "protocol")
                    }
                    "id" if packet_set => once(&mut out.id, meta.value()?.parse()?, &meta, "id"),
                    "id_bits" if packet_set => {
                        let lit: syn::LitInt = meta.value()?.parse()?;
                        let bits: u32 = lit.base10_parse()?;
                        if bits != 32 && bits != 64 {
                            return Err(syn::Error::new(
                                lit.span(),
                                format!("id_bits = {bits}: a protocol id has 32 or 64 bits"),
                            ));
                        }
                        once(&mut out.id_bits, (bits, lit.span()), &meta, "id_bits")
                    }
                    "mtu" if packet_set => once(&mut out.mtu, meta.value()?.parse()?, &meta, "mtu"),
                    _ if packet_set => Err(meta.error(format!(
                        "unknown packet set attribute `{key}` (expected protocol, id, id_bits, \
                         mtu or crate)"
                    ))),
                    _ => Err(meta.error(format!(
                        "unknown bitlens attribute `{key}` on a type (expected name, tag_name or \
                         crate; field attributes go on the fields)"
                    ))),
                }
            })?;
        }
        Ok(out)
    }
}

/// The attributes of an enum variant.
#[derive(Default)]
pub struct VariantAttrs {
    pub name: Option<LitStr>,
    pub check: Vec<LitStr>,
    pub check_after: Vec<LitStr>,
}

impl VariantAttrs {
    pub fn parse(attrs: &[syn::Attribute]) -> syn::Result<VariantAttrs> {
        let mut out = VariantAttrs::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("bitlens")) {
            attr.parse_nested_meta(|meta| {
                let key = ident_of(&meta);
                match key.as_str() {
                    "name" => once(&mut out.name, meta.value()?.parse()?, &meta, "name"),
                    "check" => {
                        out.check.push(meta.value()?.parse()?);
                        Ok(())
                    }
                    "check_after" => {
                        out.check_after.push(meta.value()?.parse()?);
                        Ok(())
                    }
                    _ => Err(meta.error(format!(
                        "unknown variant attribute `{key}` (expected name, check or check_after; \
                         field attributes go on the variant's fields)"
                    ))),
                }
            })?;
        }
        Ok(out)
    }
}
