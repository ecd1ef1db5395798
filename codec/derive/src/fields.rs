//! Fields: the wire form a field's type and attributes say ([`Kind`]), checked with errors at the
//! attribute's span, and the three things generated from it: the serialize statements, the
//! fewest bits, and the schema keys.

use crate::attrs::{CompressedParams, FieldAttrs, FixedParams, Prev, Relative, Spec};
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

/// What a field is on the wire.
pub enum Kind {
    /// Through the type's own [`BitPacked`] impl.
    Plain(Type),
    /// `int_as` over a range (integers up to 32 bits, and `i64`).
    Int {
        min: Expr,
        max: Expr,
    },
    /// `int128` over a range (`u64`, `i128`, `u128`).
    Int128 {
        min: Expr,
        max: Expr,
    },
    Bits(Expr),
    Compressed {
        spec: Ident,
        vector: bool,
        params: CfSchema,
    },
    Quaternion {
        spec: Ident,
    },
    Fixed {
        spec: Ident,
    },
    Str {
        max_len: Expr,
    },
    WStr {
        max_len: Expr,
    },
    BytesVec {
        len: Expr,
    },
    Array {
        max_len: Expr,
        element: Box<Kind>,
    },
    Sparse {
        max_objects: Expr,
        element: Type,
    },
    ObjectIndex {
        max_objects: Expr,
        previous: PrevCode,
    },
    IntRelative {
        previous: PrevCode,
    },
}

/// How the schema writes a compressed float: its range and resolution, or its precomputed
/// constants (taken from the spec at run time).
pub enum CfSchema {
    Range(Box<(Expr, Expr, Expr)>),
    Precomputed,
}

/// A previous value resolved: a constant, or a sibling field's place and wire name.
#[derive(Clone)]
pub enum PrevCode {
    Const(Expr),
    Field { place: TokenStream, wire: String },
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
    let value_keys = [
        "range",
        "bits",
        "compressed",
        "quaternion",
        "fixed",
        "max_len",
        "len",
        "wstring",
        "object_index",
        "int_relative",
        "sparse",
    ];
    let given: Vec<(&str, Span)> = a
        .keys
        .iter()
        .filter(|(k, _)| value_keys.contains(&k.as_str()))
        .map(|(k, s)| (k.as_str(), *s))
        .collect();
    // max_len goes with wstring; everything else stands alone.
    let conflicting: Vec<&(&str, Span)> = given
        .iter()
        .filter(|(k, _)| !(*k == "max_len" && a.wstring.is_some()))
        .collect();
    if conflicting.len() > 1 {
        let (k2, s2) = conflicting[1];
        let (k1, _) = conflicting[0];
        return err(
            *s2,
            format!(
                "`{k2}` conflicts with `{k1}` on the same field (a field has one wire form: keep one)"
            ),
        );
    }
    if let Some((_, s)) = &a.element
        && !matches!(shape(ty), Shape::Vec(_))
    {
        return err(*s, "`element(...)` describes the elements of a Vec");
    }
    let sh = shape(ty);
    if let Some((lo, hi, rs)) = &a.range {
        return range_kind(ctx, ty, &sh, lo, hi, *rs);
    }
    if let Some((n, bs)) = &a.bits {
        let (tname, width) = match sh {
            Shape::SmallInt(t) | Shape::WideInt(t) => (t, type_bounds(t)),
            Shape::Bool => ("bool", (0, 1)),
            _ => return err(*bs, "`bits` sends an integer (or bool) field as raw bits"),
        };
        if matches!(tname, "i128" | "u128" | "usize" | "isize") {
            return err(
                *bs,
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
                return err(*bs, format!("bits = {v}: raw bits are 1 to 64 wide"));
            }
            if v as u32 > type_width {
                return err(
                    *bs,
                    format!(
                        "bits = {v} is wider than the field's {tname} ({type_width} bits): use a wider type or fewer bits"
                    ),
                );
            }
        } else {
            ctx.check(
                *bs,
                quote!((#n) >= 1 && (#n) <= 64),
                "raw bits are 1 to 64 wide",
                false,
            );
        }
        return Ok(Kind::Bits(num(n)));
    }
    if let Some(c) = &a.compressed {
        let vector = match sh {
            Shape::F32 => false,
            Shape::Array(e, len) if is_f32(e) && int_lit(len) == Some(3) => true,
            _ => {
                return err(
                    compressed_span(c),
                    "`compressed` takes an f32 (a compressed float) or [f32; 3] (a compressed vector)",
                );
            }
        };
        return compressed_kind(ctx, c, vector);
    }
    if let Some((q, qs)) = &a.quaternion {
        let ok = matches!(sh, Shape::Array(e, len) if is_f32(e) && int_lit(len) == Some(4));
        if !ok {
            return err(*qs, "`quaternion` takes a rotation [f32; 4] ([x, y, z, w])");
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
        return Ok(Kind::Quaternion { spec });
    }
    if let Some(f) = &a.fixed {
        return fixed_kind(ctx, ty, &sh, f);
    }
    if let Some(r) = &a.object_index {
        let (Shape::SmallInt(t) | Shape::WideInt(t)) = sh else {
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
        let previous = prev_code(ctx, r, sib)?;
        return Ok(Kind::ObjectIndex {
            max_objects: num(&max_objects),
            previous,
        });
    }
    if let Some(r) = &a.int_relative {
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
        let previous = prev_code(ctx, r, sib)?;
        return Ok(Kind::IntRelative { previous });
    }
    if let Some((m, ms)) = &a.sparse {
        let Shape::Vec(element) = sh else {
            return err(
                *ms,
                "`sparse` describes a Vec of elements with a `sparse_index` field",
            );
        };
        if let Some(v) = int_lit(m)
            && !(1..=i128::from(i32::MAX)).contains(&v)
        {
            return err(m.span(), format!("max_objects = {v} (use 1 to 2147483647)"));
        }
        return Ok(Kind::Sparse {
            max_objects: num(m),
            element: element.clone(),
        });
    }
    if let Some(ws) = a.wstring {
        if !matches!(sh, Shape::String) {
            return err(ws, "`wstring` takes a String field");
        }
        let Some((max_len, _)) = &a.max_len else {
            return err(
                ws,
                "a wide string needs its longest length in UTF-16 units: add `max_len = 31`",
            );
        };
        return Ok(Kind::WStr {
            max_len: num(max_len),
        });
    }
    if let Some((len, ls)) = &a.len {
        let ok = matches!(sh, Shape::Vec(e) if is_u8(e));
        if !ok {
            return err(
                *ls,
                "`len` gives the fixed length of a Vec<u8> of raw bytes ([u8; N] needs none)",
            );
        }
        return Ok(Kind::BytesVec { len: num(len) });
    }
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
        Shape::Vec(element) => {
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
        _ => {
            if let Some((_, ms)) = &a.max_len {
                return err(*ms, "`max_len` bounds a String or a Vec");
            }
            Ok(Kind::Plain(ty.clone()))
        }
    }
}

fn compressed_span(c: &Spec<CompressedParams>) -> Span {
    match c {
        Spec::Params(p) => p.span,
        Spec::Path(e) => e.span(),
    }
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

fn compressed_kind(
    ctx: &mut Ctx<'_>,
    c: &Spec<CompressedParams>,
    vector: bool,
) -> syn::Result<Kind> {
    let k = ctx.krate.clone();
    let spec = ctx.fresh("CF");
    // The range's stability, decided at compile time: a warning at the attribute when it is not
    // stable (or too large to decide), as bitlens-schema warns when it loads the range.
    // The call is spanned at the attribute, paths and all (rustc drops a deprecation warning
    // whose span comes from the derive's own tokens).
    let span = compressed_span(c);
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

fn fixed_kind(
    ctx: &mut Ctx<'_>,
    ty: &Type,
    sh: &Shape<'_>,
    f: &Spec<FixedParams>,
) -> syn::Result<Kind> {
    let k = ctx.krate;
    let spec = ctx.fresh("FIXED");
    let span = match f {
        Spec::Params(p) => p.span,
        Spec::Path(e) => e.span(),
    };
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

fn prev_code(ctx: &mut Ctx<'_>, r: &Relative, sib: &dyn Siblings) -> syn::Result<PrevCode> {
    let _ = ctx;
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

// ---- generation ---------------------------------------------------------------------------------

fn prev_tokens(p: &PrevCode) -> TokenStream {
    match p {
        PrevCode::Const(e) => quote!((#e) as i64),
        PrevCode::Field { place, .. } => quote!((#place) as i64),
    }
}

impl Kind {
    /// Statements serializing the value at `place` (an lvalue) under the wire name `name` (an
    /// expression of type `&str`) on the stream `s`; each ends with `?;`.
    pub fn serialize(&self, k: &syn::Path, place: &TokenStream, name: &TokenStream) -> TokenStream {
        match self {
            Kind::Plain(ty) => quote! {
                <#ty as #k::BitPacked>::serialize_field(&mut #place, s, #name)?;
            },
            Kind::Int { min, max } => quote! {
                s.int_as(#name, &mut #place, (#min) as _, (#max) as _)?;
            },
            Kind::Int128 { min, max } => quote! {
                #k::packed::int128_as(s, #name, &mut #place, (#min) as i128, (#max) as i128)?;
            },
            Kind::Bits(n) => quote! {
                #k::packed::bits_as(s, #name, &mut #place, (#n) as u32)?;
            },
            Kind::Compressed { spec, vector, .. } => {
                if *vector {
                    quote! { s.compressed_vec3(#name, &mut #place, &#spec)?; }
                } else {
                    quote! { s.compressed_f32(#name, &mut #place, &#spec)?; }
                }
            }
            Kind::Quaternion { spec } => quote! {
                s.quaternion(#name, &mut #place, &#spec)?;
            },
            Kind::Fixed { spec } => quote! {
                s.fixed_as(#name, &mut #place, &#spec)?;
            },
            Kind::Str { max_len } => quote! {
                s.string(#name, &mut #place, (#max_len) as usize)?;
            },
            Kind::WStr { max_len } => quote! {
                s.wstring(#name, &mut #place, (#max_len) as usize)?;
            },
            Kind::BytesVec { len } => quote! {
                s.bytes_vec(#name, &mut #place, (#len) as usize)?;
            },
            Kind::Array { max_len, element } => {
                let min = element.min_bits(k);
                let elem = element.serialize_element(k);
                quote! {
                    s.array(#name, &mut #place, (#max_len) as usize, #min, |s, __e| {
                        #elem
                        ::core::result::Result::Ok(())
                    })?;
                }
            }
            Kind::Sparse { max_objects, .. } => quote! {
                #k::packed::sparse_array(s, #name, &mut #place, (#max_objects) as i64)?;
            },
            Kind::ObjectIndex {
                max_objects,
                previous,
            } => {
                let prev = prev_tokens(previous);
                quote! {
                    {
                        let mut __x = (#place) as i64;
                        s.object_index(#name, #prev, &mut __x, (#max_objects) as i64)?;
                        if S::READING {
                            #place = __x as _;
                        }
                    }
                }
            }
            Kind::IntRelative { previous } => {
                let prev = prev_tokens(previous);
                quote! {
                    {
                        let mut __x = (#place) as i64;
                        s.int_relative(#name, #prev, &mut __x)?;
                        if S::READING {
                            #place = __x as _;
                        }
                    }
                }
            }
        }
    }

    /// Statements serializing an array element `__e: &mut T` (name `""`; a struct's fields
    /// straight into the element's scope).
    fn serialize_element(&self, k: &syn::Path) -> TokenStream {
        match self {
            Kind::Plain(ty) => quote! {
                <#ty as #k::BitPacked>::serialize(__e, s)?;
            },
            other => other.serialize(k, &quote!(*__e), &quote!("")),
        }
    }

    /// The fewest bits a value takes (a `usize` constant expression).
    pub fn min_bits(&self, k: &syn::Path) -> TokenStream {
        match self {
            Kind::Plain(ty) => quote!(<#ty as #k::BitPacked>::MIN_BITS),
            Kind::Int { min, max } => {
                quote!(#k::bits_required((#min) as i64, (#max) as i64) as usize)
            }
            Kind::Int128 { min, max } => {
                quote!(#k::packed::int128_bits((#min) as i128, (#max) as i128))
            }
            Kind::Bits(n) => quote!((#n) as usize),
            Kind::Compressed { spec, vector, .. } => {
                let n = if *vector { 3usize } else { 1 };
                quote!(#n * #spec.width() as usize)
            }
            Kind::Quaternion { spec } | Kind::Fixed { spec } => quote!(#spec.width() as usize),
            Kind::Str { max_len } | Kind::WStr { max_len } | Kind::Array { max_len, .. } => {
                quote!(#k::packed::count_bits((#max_len) as usize))
            }
            Kind::BytesVec { len } => quote!((#len) as usize * 8),
            Kind::Sparse { .. } | Kind::ObjectIndex { .. } | Kind::IntRelative { .. } => quote!(1),
        }
    }

    /// An expression of type `String`: the field's schema keys (`type = ...` and its
    /// parameters), with the schema writer `w` in scope.
    pub fn schema(&self, k: &syn::Path) -> TokenStream {
        let p = quote!(#k::packed);
        match self {
            Kind::Plain(ty) => quote!(<#ty as #k::BitPacked>::schema_type(w)),
            Kind::Int { min, max } => quote! {
                ::std::format!("type = \"int\", min = {}, max = {}", (#min) as i64, (#max) as i64)
            },
            Kind::Int128 { min, max } => quote! {
                ::std::format!(
                    "type = \"int128\", min = {}, max = {}",
                    #p::toml_int((#min) as i128),
                    #p::toml_int((#max) as i128)
                )
            },
            Kind::Bits(n) => quote!(::std::format!("type = \"bits\", bits = {}", #n)),
            Kind::Compressed {
                spec,
                vector,
                params,
            } => {
                let t = if *vector {
                    "compressed_vector"
                } else {
                    "compressed_float"
                };
                match params {
                    CfSchema::Range(range) => {
                        let (min, max, res) = &**range;
                        quote! {
                            ::std::format!(
                                "type = \"{}\", min = {}, max = {}, resolution = {}",
                                #t,
                                #p::toml_f32({ let v: f32 = #min; v }),
                                #p::toml_f32({ let v: f32 = #max; v }),
                                #p::toml_f32({ let v: f32 = #res; v })
                            )
                        }
                    }
                    CfSchema::Precomputed => quote! {
                        ::std::format!(
                            "type = \"{}\", min = {}, delta = {}, max_integer_value = {}",
                            #t,
                            #p::toml_f32(#spec.min()),
                            #p::toml_f32(#spec.params().delta),
                            #spec.params().max_integer_value
                        )
                    },
                }
            }
            Kind::Quaternion { spec } => {
                quote!(::std::format!("type = \"quaternion\", bits = {}", #spec.bits()))
            }
            Kind::Fixed { spec } => quote! {
                ::std::format!(
                    "type = \"fixed\", integer_bits = {}, fraction_bits = {}, min = {}, max = {}{}",
                    #spec.integer_bits(),
                    #spec.fraction_bits(),
                    #spec.min(),
                    #spec.max(),
                    if #spec.signed() { "" } else { ", unsigned = true" }
                )
            },
            Kind::Str { max_len } => {
                quote!(::std::format!("type = \"string\", max_len = {}", #max_len))
            }
            Kind::WStr { max_len } => {
                quote!(::std::format!("type = \"wstring\", max_len = {}", #max_len))
            }
            Kind::BytesVec { len } => quote!(::std::format!("type = \"bytes\", len = {}", #len)),
            Kind::Array { max_len, element } => {
                let e = element.schema(k);
                quote!(::std::format!(
                    "type = \"array\", max_len = {}, element = {{ {} }}",
                    #max_len,
                    #e
                ))
            }
            Kind::Sparse {
                max_objects,
                element,
            } => quote! {
                {
                    let keys = <#element as #k::BitPacked>::schema_type(w);
                    let index = <#element as #k::packed::SparseElement>::INDEX_NAME;
                    ::std::format!(
                        "type = \"sparse_array\", max_objects = {}, element = {}{}",
                        #max_objects,
                        #p::toml_str(#p::named_type(&keys)),
                        if index == "index" {
                            ::std::string::String::new()
                        } else {
                            ::std::format!(", index_name = {}", #p::toml_str(index))
                        }
                    )
                }
            },
            Kind::ObjectIndex {
                max_objects,
                previous,
            } => {
                let prev = prev_schema(k, previous);
                quote!(::std::format!(
                    "type = \"object_index\", max_objects = {}, previous = {}",
                    #max_objects,
                    #prev
                ))
            }
            Kind::IntRelative { previous } => {
                let prev = prev_schema(k, previous);
                quote!(::std::format!("type = \"int_relative\", previous = {}", #prev))
            }
        }
    }
}

fn prev_schema(k: &syn::Path, p: &PrevCode) -> TokenStream {
    match p {
        PrevCode::Const(e) => quote!(((#e) as i64).to_string()),
        PrevCode::Field { wire, .. } => quote!(#k::packed::toml_str(#wire)),
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
