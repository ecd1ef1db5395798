//! Fields: the wire form a field's type and attributes say, checked against the type with errors
//! at the attribute's span: each [`Form`] of the table (`forms.rs`) becomes a [`Kind`] here, or
//! the type's own form when no attribute gives one.

use crate::attrs::FieldAttrs;
use crate::forms::{
    CfSchema, CompressedParams, FixedParams, Form, Key, Kind, Prev, PrevCode, Relative, Role, Spec,
};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, GenericArgument, Ident, PathArguments, Type};

/// Everything generated for a container, shared by its fields.
pub struct Ctx<'a> {
    pub krate: &'a syn::Path,
    /// Constants (specs) and compile-time checks, emitted beside the impl.
    pub items: Vec<TokenStream>,
    /// Whether checks that name field types can be emitted as free constants (not when the
    /// container is generic: they might name its parameters).
    pub concrete: bool,
    next: usize,
}

impl<'a> Ctx<'a> {
    pub fn new(krate: &'a syn::Path, concrete: bool) -> Self {
        Ctx {
            krate,
            items: Vec::new(),
            concrete,
            next: 0,
        }
    }

    fn fresh(&mut self, what: &str) -> Ident {
        self.next += 1;
        format_ident!("__BITLENS_{}_{}", what, self.next)
    }

    /// A compile-time check: `cond` must hold, else `msg` at `span`.
    fn check(&mut self, span: Span, cond: TokenStream, msg: &str, names_types: bool) {
        if names_types && !self.concrete {
            return;
        }
        self.items.push(quote_spanned! {span=>
            const _: () = ::core::assert!(#cond, #msg);
        });
    }
}

/// The shape of a Rust type, as far as the derive needs it.
enum Shape<'t> {
    SmallInt(&'static str),
    WideInt(&'static str),
    Bool,
    F32,
    F64,
    String,
    Vec(&'t Type),
    Option(&'t Type),
    Array(&'t Type, &'t Expr),
    Other,
}

const SMALL: [&str; 9] = [
    "i8", "i16", "i32", "i64", "u8", "u16", "u32", "usize", "isize",
];
const WIDE: [&str; 3] = ["u64", "i128", "u128"];

fn shape(ty: &Type) -> Shape<'_> {
    match ty {
        Type::Array(a) => Shape::Array(&a.elem, &a.len),
        Type::Group(g) => shape(&g.elem),
        Type::Paren(p) => shape(&p.elem),
        Type::Path(p) if p.qself.is_none() => {
            let Some(last) = p.path.segments.last() else {
                return Shape::Other;
            };
            let name = last.ident.to_string();
            let generic = match &last.arguments {
                PathArguments::AngleBracketed(a) if a.args.len() == 1 => match &a.args[0] {
                    GenericArgument::Type(t) => Some(t),
                    _ => None,
                },
                _ => None,
            };
            if let Some(i) = SMALL.iter().position(|s| *s == name) {
                return Shape::SmallInt(SMALL[i]);
            }
            if let Some(i) = WIDE.iter().position(|s| *s == name) {
                return Shape::WideInt(WIDE[i]);
            }
            match (name.as_str(), generic) {
                ("bool", None) => Shape::Bool,
                ("f32", None) => Shape::F32,
                ("f64", None) => Shape::F64,
                ("String", None) => Shape::String,
                ("Vec", Some(t)) => Shape::Vec(t),
                ("Option", Some(t)) => Shape::Option(t),
                _ => Shape::Other,
            }
        }
        _ => Shape::Other,
    }
}

fn is_f32(ty: &Type) -> bool {
    matches!(shape(ty), Shape::F32)
}

fn is_u8(ty: &Type) -> bool {
    matches!(shape(ty), Shape::SmallInt("u8"))
}

/// An integer literal's value (with an optional minus sign), when `e` is one.
pub fn int_lit(e: &Expr) -> Option<i128> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<i128>().ok(),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => int_lit(expr).map(|v| -v),
        Expr::Group(g) => int_lit(&g.expr),
        Expr::Paren(p) => int_lit(&p.expr),
        _ => None,
    }
}

/// A float (or integer) literal's value, when `e` is one.
fn float_lit(e: &Expr) -> Option<f64> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(f),
            ..
        }) => f.base10_parse::<f64>().ok(),
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<f64>().ok(),
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => float_lit(expr).map(|v| -v),
        Expr::Group(g) => float_lit(&g.expr),
        Expr::Paren(p) => float_lit(&p.expr),
        _ => None,
    }
}

/// An integer expression: a literal becomes an `i128` literal (an unsuffixed one would be an
/// `i32` and overflow), anything else stays as written.
pub fn num(e: &Expr) -> Expr {
    match int_lit(e) {
        Some(v) => {
            let lit = proc_macro2::Literal::i128_suffixed(v);
            syn::parse_quote!(#lit)
        }
        None => e.clone(),
    }
}

fn err<T>(span: Span, msg: impl std::fmt::Display) -> syn::Result<T> {
    Err(syn::Error::new(span, msg))
}

/// The bounds of a primitive integer type.
fn type_bounds(t: &str) -> (i128, i128) {
    match t {
        "i8" => (i8::MIN.into(), i8::MAX.into()),
        "i16" => (i16::MIN.into(), i16::MAX.into()),
        "i32" | "isize" => (i32::MIN.into(), i32::MAX.into()),
        "i64" => (i64::MIN.into(), i64::MAX.into()),
        "u8" => (0, u8::MAX.into()),
        "u16" => (0, u16::MAX.into()),
        "u32" => (0, u32::MAX.into()),
        "u64" | "usize" => (0, u64::MAX.into()),
        "i128" => (i128::MIN, i128::MAX),
        _ => (0, i128::MAX),
    }
}

/// Looks up an earlier field by name: its place, wire name, type, and whether it is guarded.
pub trait Siblings {
    fn earlier(&self, name: &Ident) -> Option<(TokenStream, String, Type, bool)>;
}

/// Resolves the wire form of a value of type `ty` with attributes `a` (wrappers excluded: the
/// caller handles Option, guards, checks and align). `span` is the field's, for errors.
pub fn kind_of(
    ctx: &mut Ctx<'_>,
    ty: &Type,
    a: &FieldAttrs,
    span: Span,
    sib: &dyn Siblings,
) -> syn::Result<Kind> {
    one_form(a)?;
    if let Some((_, s)) = &a.element
        && !matches!(shape(ty), Shape::Vec(_))
    {
        return err(*s, "`element(...)` describes the elements of a Vec");
    }
    let sh = shape(ty);
    let Some((form, fs)) = a.forms.first() else {
        return own_kind(ctx, ty, sh, a, span, sib);
    };
    let fs = *fs;
    match form {
        Form::Range(lo, hi) => range_kind(ctx, ty, &sh, lo, hi, fs),
        Form::Bits(n) => bits_kind(ctx, &sh, n, fs),
        Form::Compressed(c) => {
            let vector = match sh {
                Shape::F32 => false,
                Shape::Array(e, len) if is_f32(e) && int_lit(len) == Some(3) => true,
                _ => {
                    return err(
                        fs,
                        "`compressed` takes an f32 (a compressed float) or [f32; 3] (a compressed vector)",
                    );
                }
            };
            compressed_kind(ctx, c, fs, vector)
        }
        Form::Quaternion(q) => quaternion_kind(ctx, &sh, q, fs),
        Form::Fixed(f) => fixed_kind(ctx, ty, &sh, f, fs),
        Form::Len(len) => {
            if !matches!(sh, Shape::Vec(e) if is_u8(e)) {
                return err(
                    fs,
                    "`len` gives the fixed length of a Vec<u8> of raw bytes ([u8; N] needs none)",
                );
            }
            Ok(Kind::BytesVec { len: num(len) })
        }
        Form::WString => {
            if !matches!(sh, Shape::String) {
                return err(fs, "`wstring` takes a String field");
            }
            let Some((max_len, _)) = &a.max_len else {
                return err(
                    fs,
                    "a wide string needs its longest length in UTF-16 units: add `max_len = 31`",
                );
            };
            Ok(Kind::WStr {
                max_len: num(max_len),
            })
        }
        Form::ObjectIndex(r) => object_index_kind(&sh, r, sib),
        Form::IntRelative(r) => {
            let ok = matches!(
                sh,
                Shape::SmallInt("u32" | "i64") | Shape::WideInt("u64" | "i128" | "u128")
            );
            if !ok {
                return err(
                    r.span,
                    "`int_relative` reads values up to u32::MAX: use a u32, i64 or u64 field",
                );
            }
            let previous = prev_code(r, sib)?;
            Ok(Kind::IntRelative { previous })
        }
        Form::Sparse(m) => {
            let Shape::Vec(element) = sh else {
                return err(
                    fs,
                    "`sparse` describes a Vec of elements with a `sparse_index` field",
                );
            };
            if let Some(v) = int_lit(m)
                && !(1..=i128::from(i32::MAX)).contains(&v)
            {
                return err(m.span(), format!("max_objects = {v} (use 1 to 2147483647)"));
            }
            Ok(Kind::Sparse {
                max_objects: num(m),
                element: element.clone(),
            })
        }
    }
}

/// A field has one wire form: the keys of forms and bounds given, but a bound with the form it
/// goes with (`max_len` with `wstring`), are at most one.
fn one_form(a: &FieldAttrs) -> syn::Result<()> {
    let given: Vec<(Key, Span)> = a
        .keys
        .iter()
        .filter(|(k, _)| matches!(k.role(), Role::Form | Role::Bound))
        .copied()
        .collect();
    let conflicting: Vec<&(Key, Span)> = given
        .iter()
        .filter(|(k, _)| !given.iter().any(|(o, _)| k.joins(*o)))
        .collect();
    if let [(k1, _), (k2, s2), ..] = conflicting[..] {
        let (k1, k2) = (k1.name(), k2.name());
        return err(
            *s2,
            format!(
                "`{k2}` conflicts with `{k1}` on the same field (a field has one wire form: keep one)"
            ),
        );
    }
    Ok(())
}

/// The form of a type without a form attribute: a String or Vec bounded by `max_len`, else the
/// type's own `BitPacked`.
fn own_kind(
    ctx: &mut Ctx<'_>,
    ty: &Type,
    sh: Shape<'_>,
    a: &FieldAttrs,
    span: Span,
    sib: &dyn Siblings,
) -> syn::Result<Kind> {
    match sh {
        Shape::String => match &a.max_len {
            Some((max_len, _)) => Ok(Kind::Str {
                max_len: num(max_len),
            }),
            None => err(
                span,
                "a String needs its longest length: add `#[bitlens(max_len = 31)]` (a reader refuses longer ones)",
            ),
        },
        Shape::Vec(element) => vec_kind(ctx, element, a, span, sib),
        _ => {
            if let Some((_, ms)) = &a.max_len {
                return err(*ms, "`max_len` bounds a String or a Vec");
            }
            Ok(Kind::Plain(ty.clone()))
        }
    }
}

/// A `Vec<T>` with `max_len`, each element of the form `element(...)` says.
fn vec_kind(
    ctx: &mut Ctx<'_>,
    element: &Type,
    a: &FieldAttrs,
    span: Span,
    sib: &dyn Siblings,
) -> syn::Result<Kind> {
    let Some((max_len, _)) = &a.max_len else {
        return err(
            span,
            "a Vec needs its largest count: add `#[bitlens(max_len = 32)]` (a reader refuses larger counts before it allocates)",
        );
    };
    let none = FieldAttrs::default();
    let inner = a.element.as_ref().map_or(&none, |(e, _)| &**e);
    if ctx.concrete {
        // Stream::array needs `Default` elements: said at the element type, with the fix.
        let k = ctx.krate;
        ctx.items.push(quote::quote_spanned! {element.span()=>
            const _: () = #k::packed::vec_element::<#element>();
        });
    }
    let element = kind_of(ctx, element, inner, element.span(), sib)?;
    if let Kind::ObjectIndex {
        previous: PrevCode::Field { .. },
        ..
    }
    | Kind::IntRelative {
        previous: PrevCode::Field { .. },
    } = element
    {
        return err(
            span,
            "an array element cannot take `previous` from a field (use a constant)",
        );
    }
    Ok(Kind::Array {
        max_len: num(max_len),
        element: Box::new(element),
    })
}

/// `bits = N`: raw bits of an integer up to 64 bits or a bool.
fn bits_kind(ctx: &mut Ctx<'_>, sh: &Shape<'_>, n: &Expr, bs: Span) -> syn::Result<Kind> {
    let (tname, width) = match *sh {
        Shape::SmallInt(t) | Shape::WideInt(t) => (t, type_bounds(t)),
        Shape::Bool => ("bool", (0, 1)),
        _ => return err(bs, "`bits` sends an integer (or bool) field as raw bits"),
    };
    if matches!(tname, "i128" | "u128" | "usize" | "isize") {
        return err(
            bs,
            format!("`bits` takes integers up to 64 bits, not {tname}"),
        );
    }
    let type_width = if tname == "bool" {
        1
    } else {
        128 - (width.1 - width.0).leading_zeros()
    };
    if let Some(v) = int_lit(n) {
        if !(1..=64).contains(&v) {
            return err(bs, format!("bits = {v}: raw bits are 1 to 64 wide"));
        }
        if v as u32 > type_width {
            return err(
                bs,
                format!(
                    "bits = {v} is wider than the field's {tname} ({type_width} bits): use a wider type or fewer bits"
                ),
            );
        }
    } else {
        ctx.check(
            bs,
            quote!((#n) >= 1 && (#n) <= 64),
            "raw bits are 1 to 64 wide",
            false,
        );
    }
    Ok(Kind::Bits(num(n)))
}

/// `quaternion(bits = N)` or `quaternion = CONST` on a `[f32; 4]`.
fn quaternion_kind(
    ctx: &mut Ctx<'_>,
    sh: &Shape<'_>,
    q: &Spec<Expr>,
    qs: Span,
) -> syn::Result<Kind> {
    let ok = matches!(sh, Shape::Array(e, len) if is_f32(e) && int_lit(len) == Some(4));
    if !ok {
        return err(qs, "`quaternion` takes a rotation [f32; 4] ([x, y, z, w])");
    }
    let k = ctx.krate;
    let spec = ctx.fresh("QUAT");
    match q {
        Spec::Params(bits) => {
            if let Some(b) = int_lit(bits)
                && !(2..=16).contains(&b)
            {
                return err(
                    bits.span(),
                    format!(
                        "quaternion bits = {b}: use 2 to 16 bits per component (9 to 12 is usual)"
                    ),
                );
            }
            ctx.items.push(quote_spanned! {bits.span()=>
                const #spec: #k::SmallestThree = match #k::SmallestThree::new_const(#bits) {
                    ::core::option::Option::Some(q) => q,
                    ::core::option::Option::None => ::core::panic!("quaternion bits must be 2 to 16"),
                };
            });
        }
        Spec::Path(p) => ctx.items.push(quote! {
            const #spec: #k::SmallestThree = #p;
        }),
    }
    Ok(Kind::Quaternion { spec })
}

/// `object_index(max_objects = N, previous = P)` on an integer that holds `N`.
fn object_index_kind(sh: &Shape<'_>, r: &Relative, sib: &dyn Siblings) -> syn::Result<Kind> {
    let (Shape::SmallInt(t) | Shape::WideInt(t)) = *sh else {
        return err(r.span, "`object_index` takes an integer field");
    };
    let Some(max_objects) = r.max_objects.clone() else {
        return err(
            r.span,
            "an object index needs its object slots: `object_index(max_objects = 4096)`",
        );
    };
    if let Some(m) = int_lit(&max_objects) {
        if !(0..=i128::from(i32::MAX)).contains(&m) {
            return err(
                max_objects.span(),
                format!("max_objects = {m} (use 0 to 2147483647)"),
            );
        }
        if m > type_bounds(t).1 {
            return err(
                max_objects.span(),
                format!(
                    "max_objects = {m} does not fit the field's {t} (the end-of-list index is read too): use a wider type"
                ),
            );
        }
    }
    let previous = prev_code(r, sib)?;
    Ok(Kind::ObjectIndex {
        max_objects: num(&max_objects),
        previous,
    })
}

fn range_kind(
    ctx: &mut Ctx<'_>,
    ty: &Type,
    sh: &Shape<'_>,
    lo: &Expr,
    hi: &Expr,
    rs: Span,
) -> syn::Result<Kind> {
    let (tname, wide) = match sh {
        Shape::SmallInt(t) => (*t, false),
        Shape::WideInt(t) => (*t, true),
        _ => {
            return err(
                rs,
                "`range` bounds an integer field (floats take `compressed(...)`)",
            );
        }
    };
    let k = ctx.krate;
    match (int_lit(lo), int_lit(hi)) {
        (Some(a), Some(b)) => {
            if a > b {
                return err(
                    rs,
                    format!(
                        "range {a}..={b} is empty: its minimum exceeds its maximum (swap the bounds)"
                    ),
                );
            }
            let (tl, th) = type_bounds(tname);
            if a < tl || b > th {
                return err(
                    rs,
                    format!(
                        "range {a}..={b} does not fit the field's type {tname} ({tl}..={th}): use a wider type or a narrower range"
                    ),
                );
            }
        }
        _ => {
            ctx.check(
                rs,
                {
                    let (lo, hi) = (num(lo), num(hi));
                    quote!((#lo) as i128 <= (#hi) as i128)
                },
                "the range is empty: its minimum exceeds its maximum (swap the bounds)",
                false,
            );
            ctx.check(
                rs,
                {
                    let (lo, hi) = (num(lo), num(hi));
                    quote!((#lo) as i128 >= <#ty as #k::packed::IntBounds>::LOW
                        && (#hi) as i128 <= <#ty as #k::packed::IntBounds>::HIGH)
                },
                "the range does not fit the field's type: use a wider type or a narrower range",
                true,
            );
        }
    }
    Ok(if wide {
        Kind::Int128 {
            min: num(lo),
            max: num(hi),
        }
    } else {
        Kind::Int {
            min: num(lo),
            max: num(hi),
        }
    })
}

/// `compressed(...)` or `compressed = CONST` (`span` its attribute's), a float or a vector.
fn compressed_kind(
    ctx: &mut Ctx<'_>,
    c: &Spec<CompressedParams>,
    span: Span,
    vector: bool,
) -> syn::Result<Kind> {
    let k = ctx.krate.clone();
    let spec = ctx.fresh("CF");
    // The range's stability, decided at compile time: a warning at the attribute when it is not
    // stable (or too large to decide), as bitlens-schema warns when it loads the range.
    // The call is spanned at the attribute, paths and all (rustc drops a deprecation warning
    // whose span comes from the derive's own tokens).
    let check = quote_spanned! {span=>
        const _: () = __BitlensStableRange::<{ __bitlens_range_stability(&#spec) }>::check();
    };
    ctx.items.push(quote! {
        const _: () = {
            use #k::packed::stable_range::{
                StableRange as __BitlensStableRange, range_stability as __bitlens_range_stability,
            };
            #check
        };
    });
    match c {
        Spec::Path(p) => {
            ctx.items
                .push(quote! { const #spec: #k::CompressedFloat = #p; });
            Ok(Kind::Compressed {
                spec,
                vector,
                params: CfSchema::Precomputed,
            })
        }
        Spec::Params(p) if p.delta.is_some() || p.max_integer_value.is_some() => {
            for (key, given) in [("max", &p.max), ("resolution", &p.resolution)] {
                if let Some(e) = given {
                    return err(
                        e.span(),
                        format!(
                            "`{key}` with the precomputed `delta`/`max_integer_value`: give the range (min, max, resolution) or its constants (min, delta, max_integer_value), not both"
                        ),
                    );
                }
            }
            let need = |e: &Option<Expr>, what: &str| {
                e.clone().ok_or_else(|| {
                    syn::Error::new(
                        p.span,
                        format!("precomputed compressed float without `{what}` (give min, delta and max_integer_value)"),
                    )
                })
            };
            let min = need(&p.min, "min")?;
            let delta = need(&p.delta, "delta")?;
            let m = need(&p.max_integer_value, "max_integer_value")?;
            ctx.items.push(quote_spanned! {p.span=>
                const #spec: #k::CompressedFloat = match #k::CompressedFloat::from_params_const(
                    #min,
                    #k::CompressedFloatParams {
                        max_integer_value: #m,
                        bits: #k::bits_required(0, (#m) as i64),
                        delta: #delta,
                    },
                ) {
                    ::core::option::Option::Some(c) => c,
                    ::core::option::Option::None => ::core::panic!(
                        "invalid precomputed compressed float: min and delta finite, delta above 0, max_integer_value 1 to 4294967040"
                    ),
                };
            });
            Ok(Kind::Compressed {
                spec,
                vector,
                params: CfSchema::Precomputed,
            })
        }
        Spec::Params(p) => {
            let need = |e: &Option<Expr>, what: &str, hint: &str| {
                e.clone().ok_or_else(|| {
                    syn::Error::new(
                        p.span,
                        format!("a compressed float without `{what}` (add `{what} = {hint}`: the step decides the bits it takes)"),
                    )
                })
            };
            let min = need(&p.min, "min", "-512.0")?;
            let max = need(&p.max, "max", "512.0")?;
            let res = need(&p.resolution, "resolution", "0.01")?;
            if let (Some(a), Some(b)) = (float_lit(&min), float_lit(&max))
                && a >= b
            {
                return err(
                    p.span,
                    format!(
                        "compressed float min {a} is not below max {b} (swap them, or fix one)"
                    ),
                );
            }
            if let Some(r) = float_lit(&res)
                && r <= 0.0
            {
                return err(
                    res.span(),
                    format!(
                        "compressed float resolution {r} is not positive (give the step, e.g. 0.01)"
                    ),
                );
            }
            ctx.items.push(quote_spanned! {p.span=>
                const #spec: #k::CompressedFloat = match #k::CompressedFloat::new_const(#min, #max, #res) {
                    ::core::option::Option::Some(c) => c,
                    ::core::option::Option::None => ::core::panic!(
                        "invalid compressed float: finite bounds, min below max, resolution above 0"
                    ),
                };
            });
            Ok(Kind::Compressed {
                spec,
                vector,
                params: CfSchema::Range(Box::new((min, max, res))),
            })
        }
    }
}

/// `fixed(...)` or `fixed = CONST` (`span` its attribute's) on the Q format's storage integer.
fn fixed_kind(
    ctx: &mut Ctx<'_>,
    ty: &Type,
    sh: &Shape<'_>,
    f: &Spec<FixedParams>,
    span: Span,
) -> syn::Result<Kind> {
    let k = ctx.krate;
    let spec = ctx.fresh("FIXED");
    let tname = match sh {
        Shape::SmallInt(t) | Shape::WideInt(t) if !matches!(*t, "usize" | "isize") => *t,
        _ => {
            return err(
                span,
                "`fixed` takes the integer that holds the raw Q value (i16 for Q8.8, u32 for an unsigned Q16.16, ...)",
            );
        }
    };
    match f {
        Spec::Path(p) => ctx.items.push(quote! { const #spec: #k::FixedPoint = #p; }),
        Spec::Params(p) => {
            let need = |e: &Option<Expr>, what: &str| {
                e.clone().ok_or_else(|| {
                    syn::Error::new(
                        p.span,
                        format!("a fixed-point field without `{what}` (give integer_bits, fraction_bits, min and max)"),
                    )
                })
            };
            let ib = need(&p.integer_bits, "integer_bits")?;
            let fb = need(&p.fraction_bits, "fraction_bits")?;
            let min = need(&p.min, "min")?;
            let max = need(&p.max, "max")?;
            let signed = !p.unsigned;
            if let (Some(i), Some(fr)) = (int_lit(&ib), int_lit(&fb)) {
                let width: i128 = tname[1..].parse().unwrap_or(0);
                if i + fr != width || tname.starts_with('i') != signed {
                    return err(
                        p.span,
                        format!(
                            "Q{i}.{fr}{} is held in {} {}-bit storage, not the field's {tname} (make them agree)",
                            if signed { "" } else { " unsigned" },
                            if signed { "signed" } else { "unsigned" },
                            i + fr
                        ),
                    );
                }
            }
            if let (Some(a), Some(b)) = (int_lit(&min), int_lit(&max))
                && a > b
            {
                return err(
                    p.span,
                    format!(
                        "fixed-point range {a}..={b} is empty: its minimum exceeds its maximum (swap the bounds)"
                    ),
                );
            }
            ctx.items.push(quote_spanned! {p.span=>
                const #spec: #k::FixedPoint = match #k::FixedPoint::new_const(#ib, #fb, #signed, #min, #max) {
                    ::core::option::Option::Some(q) => q,
                    ::core::option::Option::None => ::core::panic!(
                        "invalid fixed-point format: integer_bits + fraction_bits must be 8, 16, 32, 64 or 128, min <= max, and the bounds must fit"
                    ),
                };
            });
        }
    }
    ctx.check(
        span,
        quote!(<#ty as #k::fixed::FixedStorage>::BITS == #spec.storage_bits()
            && <#ty as #k::fixed::FixedStorage>::SIGNED == #spec.signed()),
        "the fixed-point format's storage (integer_bits + fraction_bits, signedness) is not the field's type",
        true,
    );
    Ok(Kind::Fixed { spec })
}

fn prev_code(r: &Relative, sib: &dyn Siblings) -> syn::Result<PrevCode> {
    match &r.previous {
        None => Ok(PrevCode::Const(syn::parse_quote!(-1))),
        Some(Prev::Const(e)) => Ok(PrevCode::Const(num(e))),
        Some(Prev::Field(name)) => {
            let Some((place, wire, ty, guarded)) = sib.earlier(name) else {
                return err(
                    name.span(),
                    format!(
                        "no earlier field `{name}` (`previous` names an integer field declared above this one)"
                    ),
                );
            };
            let is_int = matches!(shape(&ty), Shape::SmallInt(_) | Shape::WideInt(_));
            if !is_int || guarded {
                return err(
                    name.span(),
                    format!(
                        "`{name}` is not an integer field that is always present (refer to one)"
                    ),
                );
            }
            Ok(PrevCode::Field { place, wire })
        }
    }
}

/// Whether `ty` is `Option<T>`, and `T`.
pub fn option_inner(ty: &Type) -> Option<&Type> {
    match shape(ty) {
        Shape::Option(t) => Some(t),
        _ => None,
    }
}

/// Whether `ty` is `bool`.
pub fn is_bool(ty: &Type) -> bool {
    matches!(shape(ty), Shape::Bool)
}

/// Whether `ty` is a primitive integer.
pub fn is_int(ty: &Type) -> bool {
    matches!(shape(ty), Shape::SmallInt(_) | Shape::WideInt(_))
}
