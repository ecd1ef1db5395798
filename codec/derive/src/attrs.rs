//! The one parser of field attributes, `#[bitlens(...)]` and `#[batch(...)]` alike: what the
//! user wrote, with spans, before it is checked against the field's type. The keys each
//! namespace takes, and their roles, are the table in `forms.rs`; the container's and the
//! variant's own attributes follow.

use crate::forms::{CompressedParams, FixedParams, Form, Key, Ns, Prev, Relative, Spec};
use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Expr, Ident, LitBool, LitStr, Token};

/// The attributes of one field (or of an array's element), in either namespace.
#[derive(Default)]
pub struct FieldAttrs {
    pub name: Option<LitStr>,
    /// The wire forms given (one, once `kind_of` has checked), each with the span its errors
    /// point at.
    pub forms: Vec<(Form, Span)>,
    pub max_len: Option<(Expr, Span)>,
    pub element: Option<(Box<FieldAttrs>, Span)>,
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
    /// `#[batch(packed)]`: a varint integer.
    pub packed: Option<Span>,
    /// `#[batch(abs_max = N)]`: the range check of a signed integer.
    pub abs_max: Option<(Expr, Span)>,
    /// `#[batch(max_id = N)]`: the largest network id.
    pub max_id: Option<(Expr, Span)>,
    /// `#[batch(pod)]`: one unchecked copy.
    pub pod: Option<Span>,
    /// Every key given, with its span, for "conflicts with" errors.
    pub keys: Vec<(Key, Span)>,
}

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

/// `= value`, with the value's span.
fn value_of(meta: &ParseNestedMeta<'_>) -> syn::Result<(Expr, Span)> {
    let e: Expr = meta.value()?.parse()?;
    let span = e.span();
    Ok((e, span))
}

/// The message for a key `ns` does not take.
fn unknown_key(ns: Ns, key: &str) -> String {
    let list = Key::list(ns);
    match ns {
        Ns::Bitlens => format!("unknown bitlens attribute `{key}` (expected one of {list})"),
        Ns::Batch => format!("unknown batch attribute `{key}` (expected one of: {list})"),
    }
}

impl FieldAttrs {
    /// The field attributes of namespace `ns` among `attrs`.
    pub fn parse(attrs: &[syn::Attribute], ns: Ns) -> syn::Result<FieldAttrs> {
        let mut out = FieldAttrs::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident(ns.attribute())) {
            attr.parse_nested_meta(|meta| out.item(ns, meta))?;
        }
        Ok(out)
    }

    fn item(&mut self, ns: Ns, meta: ParseNestedMeta<'_>) -> syn::Result<()> {
        let written = ident_of(&meta);
        let Some(key) = Key::parse(ns, &written) else {
            return Err(meta.error(unknown_key(ns, &written)));
        };
        let span = meta.path.span();
        self.keys.push((key, span));
        let name = key.name();
        match key {
            Key::Name => once(&mut self.name, meta.value()?.parse()?, &meta, name),
            Key::Range => {
                let e: Expr = meta.value()?.parse()?;
                let (lo, hi) = range_bounds(&e)?;
                self.form(Form::Range(lo, hi), e.span(), &meta)
            }
            Key::Bits => {
                let (e, sp) = value_of(&meta)?;
                self.form(Form::Bits(e), sp, &meta)
            }
            Key::Compressed => {
                let spec = compressed(&meta, span)?;
                let sp = match &spec {
                    Spec::Params(p) => p.span,
                    Spec::Path(e) => e.span(),
                };
                self.form(Form::Compressed(spec), sp, &meta)
            }
            Key::Quaternion => {
                let spec = quaternion(&meta, span)?;
                self.form(Form::Quaternion(spec), span, &meta)
            }
            Key::Fixed => {
                let spec = fixed(&meta, span)?;
                let sp = match &spec {
                    Spec::Params(p) => p.span,
                    Spec::Path(e) => e.span(),
                };
                self.form(Form::Fixed(spec), sp, &meta)
            }
            Key::Len => {
                let (e, sp) = value_of(&meta)?;
                self.form(Form::Len(e), sp, &meta)
            }
            Key::WString => self.form(Form::WString, span, &meta),
            Key::ObjectIndex => {
                let r = relative(&meta, span, true)?;
                self.form(Form::ObjectIndex(r), span, &meta)
            }
            Key::IntRelative => {
                let r = relative(&meta, span, false)?;
                self.form(Form::IntRelative(r), span, &meta)
            }
            Key::Sparse => {
                let max = sparse(&meta, span)?;
                self.form(Form::Sparse(max), span, &meta)
            }
            Key::MaxLen => once(&mut self.max_len, value_of(&meta)?, &meta, name),
            Key::Element => {
                let mut inner = FieldAttrs::default();
                meta.parse_nested_meta(|m| inner.item(ns, m))?;
                once(&mut self.element, (Box::new(inner), span), &meta, name)
            }
            Key::SparseIndex => once(&mut self.sparse_index, span, &meta, name),
            Key::Align => once(&mut self.align, span, &meta, name),
            Key::AlignAfter => once(&mut self.align_after, span, &meta, name),
            Key::Check => {
                self.check.push(meta.value()?.parse()?);
                Ok(())
            }
            Key::CheckAfter => {
                self.check_after.push(meta.value()?.parse()?);
                Ok(())
            }
            Key::If | Key::Unless => {
                let flag = field_ref(&meta)?;
                if self.guard.is_some() {
                    return Err(meta.error("give one guard: `if = flag` or `unless = flag`"));
                }
                self.guard = Some((flag, key == Key::If, span));
                Ok(())
            }
            Key::Flag => once(&mut self.flag, meta.value()?.parse()?, &meta, name),
            Key::Flatten => once(&mut self.flatten, span, &meta, name),
            Key::Skip => once(&mut self.skip, span, &meta, name),
            Key::Packed => once(&mut self.packed, span, &meta, name),
            Key::AbsMax => once(
                &mut self.abs_max,
                (meta.value()?.parse()?, span),
                &meta,
                name,
            ),
            Key::MaxId => once(
                &mut self.max_id,
                (meta.value()?.parse()?, span),
                &meta,
                name,
            ),
            Key::Pod => once(&mut self.pod, span, &meta, name),
        }
    }

    /// Records a wire form (each key once).
    fn form(&mut self, form: Form, span: Span, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let key = form.key();
        if self.forms.iter().any(|(f, _)| f.key() == key) {
            return Err(meta.error(format!("`{}` is given twice (keep one)", key.name())));
        }
        self.forms.push((form, span));
        Ok(())
    }

    /// `range = MIN..=MAX`: its bounds and span.
    pub fn range(&self) -> Option<(&Expr, &Expr, Span)> {
        self.forms.iter().find_map(|(f, s)| {
            let Form::Range(lo, hi) = f else { return None };
            Some((lo, hi, *s))
        })
    }

    /// The first key given that `keep` refuses, with its span.
    pub fn first_refused(&self, keep: impl Fn(Key) -> bool) -> Option<(Key, Span)> {
        self.keys.iter().find(|(k, _)| !keep(*k)).copied()
    }
}

/// `compressed(min = A, max = B, resolution = R)`, its precomputed form, or `compressed = CONST`.
fn compressed(meta: &ParseNestedMeta<'_>, span: Span) -> syn::Result<Spec<CompressedParams>> {
    if meta.input.peek(Token![=]) {
        return Ok(Spec::Path(meta.value()?.parse()?));
    }
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
    Ok(Spec::Params(p))
}

/// `quaternion(bits = N)` or `quaternion = CONST`.
fn quaternion(meta: &ParseNestedMeta<'_>, span: Span) -> syn::Result<Spec<Expr>> {
    if meta.input.peek(Token![=]) {
        return Ok(Spec::Path(meta.value()?.parse()?));
    }
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
    Ok(Spec::Params(bits))
}

/// `fixed(integer_bits = I, fraction_bits = F, min = A, max = B, unsigned)` or `fixed = CONST`.
fn fixed(meta: &ParseNestedMeta<'_>, span: Span) -> syn::Result<Spec<FixedParams>> {
    if meta.input.peek(Token![=]) {
        return Ok(Spec::Path(meta.value()?.parse()?));
    }
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
    Ok(Spec::Params(p))
}

/// `object_index(max_objects = N, previous = P)` (`is_index`) or `int_relative(previous = P)`.
fn relative(meta: &ParseNestedMeta<'_>, span: Span, is_index: bool) -> syn::Result<Relative> {
    let mut r = Relative {
        max_objects: None,
        previous: None,
        span,
    };
    if meta.input.is_empty() || meta.input.peek(Token![,]) {
        return Ok(r);
    }
    meta.parse_nested_meta(|m| {
        if m.path.is_ident("max_objects") && is_index {
            let e: Expr = m.value()?.parse()?;
            once(&mut r.max_objects, e, &m, "max_objects")
        } else if m.path.is_ident("previous") {
            let e: Expr = m.value()?.parse()?;
            let prev = match &e {
                Expr::Path(p) if p.path.get_ident().is_some_and(is_field_like) => Prev::Field(
                    p.path
                        .get_ident()
                        .cloned()
                        .unwrap_or_else(|| Ident::new("_", Span::call_site())),
                ),
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
            Err(m.error("expected `previous = ...` (a constant or an earlier field)"))
        }
    })?;
    Ok(r)
}

/// `sparse(max_objects = N)`: `N`.
fn sparse(meta: &ParseNestedMeta<'_>, span: Span) -> syn::Result<Expr> {
    let mut max = None;
    meta.parse_nested_meta(|m| {
        if m.path.is_ident("max_objects") {
            let e: Expr = m.value()?.parse()?;
            once(&mut max, e, &m, "max_objects")
        } else {
            Err(m.error("expected `max_objects = N` (the end-of-list sentinel)"))
        }
    })?;
    max.ok_or_else(|| {
        syn::Error::new(
            span,
            "a sparse array needs its object slots: `sparse(max_objects = 4096)`",
        )
    })
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
