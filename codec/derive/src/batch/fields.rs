//! A batch field's wire form: the `ByteStream` primitive its type and `#[batch(...)]` keys say
//! ([`Kind`]), and its range check ([`Check`]), with errors at the attribute.

use crate::attrs::FieldAttrs;
use crate::fields::int_lit;
use crate::forms::Key;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Expr, Type};

/// A range check.
pub enum Check {
    None,
    /// `range = MIN..=MAX` on an unsigned value.
    Range(Expr, Expr),
    /// `abs_max = N` on a signed value.
    Abs(Expr),
}

/// How one field (or array element) goes on the wire.
pub enum Kind {
    Bool,
    /// A little-endian primitive: `u8` ... `f64`.
    Le(&'static str, Check),
    /// A packed integer: `u32`, `u64` (varint), `i32`, `i64` (zig-zag, varint).
    Packed(&'static str, Check),
    Str(Expr),
    Inline,
    ByteVec(Expr),
    /// `[u8; N]`.
    Bytes,
    /// `[T; N]` of a primitive, in one copy.
    Pod(&'static str, Check),
    PodStruct,
    Struct,
    Array {
        max_len: Expr,
        element: Box<Kind>,
        element_ty: Type,
        /// An `InlineVec` (its storage does not grow with the count).
        inline: bool,
    },
    ObjectId(Expr),
    Reference(Expr),
}

const INTS: [&str; 8] = ["u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64"];

/// The last segment of a type path, with its generic arguments.
fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

fn primitive(ty: &Type) -> Option<&'static str> {
    let seg = last_segment(ty)?;
    if !seg.arguments.is_none() {
        return None;
    }
    [
        "bool", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f32", "f64",
    ]
    .into_iter()
    .find(|p| seg.ident == p)
}

fn generic_arg(seg: &syn::PathSegment) -> Option<&Type> {
    match &seg.arguments {
        syn::PathArguments::AngleBracketed(a) => a.args.iter().find_map(|g| match g {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        }),
        _ => None,
    }
}

fn check_of(a: &FieldAttrs, prim: &str) -> syn::Result<Check> {
    let signed = prim.starts_with('i');
    match (a.range(), a.abs_max.as_ref().map(|(e, s)| (e, *s))) {
        (Some(_), Some((_, s))) => Err(syn::Error::new(
            s,
            "give `range` (unsigned) or `abs_max` (signed), not both",
        )),
        (Some((_, _, s)), None) | (None, Some((_, s))) if !INTS.contains(&prim) => {
            Err(syn::Error::new(
                s,
                format!("range checks apply to integers, not `{prim}` (remove it)"),
            ))
        }
        (Some((_, _, s)), None) if signed => Err(syn::Error::new(
            s,
            format!(
                "a signed `{prim}` takes `abs_max = N` (|v| <= N), not `range`: the batch \
                 layer's errors carry unsigned values"
            ),
        )),
        (Some((lo, _, s)), None) if int_lit(lo).is_some_and(|l| l < 0) => Err(syn::Error::new(
            s,
            format!("an unsigned `{prim}` has no negative values: start the range at 0 or above"),
        )),
        (Some((lo, hi, s)), None) => {
            if let (Some(l), Some(h)) = (int_lit(lo), int_lit(hi))
                && l > h
            {
                return Err(syn::Error::new(
                    s,
                    format!("the range's minimum {l} is greater than its maximum {h} (swap them)"),
                ));
            }
            Ok(Check::Range(lo.clone(), hi.clone()))
        }
        (None, Some((_, s))) if !signed => Err(syn::Error::new(
            s,
            format!(
                "`abs_max` applies to signed integers; an unsigned `{prim}` takes `range = MIN..=MAX`"
            ),
        )),
        (None, Some((e, _))) => {
            if let Some(v) = int_lit(e)
                && v < 0
            {
                return Err(syn::Error::new(
                    e.span(),
                    "`abs_max` is a magnitude: at least 0",
                ));
            }
            Ok(Check::Abs(e.clone()))
        }
        (None, None) => Ok(Check::None),
    }
}

/// The wire form of a field of type `ty` with attributes `a`.
pub fn kind_of(ty: &Type, a: &FieldAttrs, span: Span) -> syn::Result<Kind> {
    if let Type::Array(arr) = ty {
        let elem = primitive(&arr.elem).ok_or_else(|| {
            syn::Error::new(
                arr.elem.span(),
                "an array field holds primitives (`[u8; N]` raw bytes, `[f32; N]`, `[i32; N]`, \
                 ...: one copy); for structs use `Vec<T>` with `max_len`",
            )
        })?;
        if elem == "bool" {
            return Err(syn::Error::new(
                arr.elem.span(),
                "`[bool; N]` is not plain old data; use `[u8; N]` or a `Vec<bool>` with `max_len`",
            ));
        }
        if elem == "u8" && a.range().is_none() {
            refuse_others(a, &[Key::Pod], "raw bytes `[u8; N]`")?;
            return Ok(Kind::Bytes);
        }
        refuse_others(
            a,
            &[Key::Pod, Key::Range, Key::AbsMax],
            "a plain-old-data array",
        )?;
        return Ok(Kind::Pod(elem, check_of(a, elem)?));
    }
    if let Some(p) = primitive(ty) {
        if p == "bool" {
            refuse_others(a, &[], "a bool")?;
            return Ok(Kind::Bool);
        }
        if a.packed.is_some() {
            if !["u32", "u64", "i32", "i64"].contains(&p) {
                return Err(syn::Error::new(
                    a.packed.unwrap_or(span),
                    format!("`packed` applies to u32, u64, i32 and i64, not `{p}`"),
                ));
            }
            refuse_others(
                a,
                &[Key::Packed, Key::Range, Key::AbsMax],
                "a packed integer",
            )?;
            return Ok(Kind::Packed(p, check_of(a, p)?));
        }
        refuse_others(a, &[Key::Range, Key::AbsMax], &format!("a `{p}`"))?;
        return Ok(Kind::Le(p, check_of(a, p)?));
    }
    let seg = last_segment(ty).ok_or_else(|| {
        syn::Error::new(ty.span(), "a batch field's type is a path (a primitive, String, Vec<T>, InlineStr<N>, NetworkId or a batch struct)")
    })?;
    let name = seg.ident.to_string();
    match name.as_str() {
        "String" => {
            refuse_others(a, &[Key::MaxLen], "a String")?;
            let max = required(
                &a.max_len,
                span,
                "a String needs its longest length in bytes: `#[batch(max_len = 64)]`",
            )?;
            Ok(Kind::Str(max))
        }
        "InlineStr" => {
            refuse_others(a, &[], "an InlineStr (its capacity is its maximum)")?;
            Ok(Kind::Inline)
        }
        "NetworkId" => {
            refuse_others(a, &[Key::MaxId], "a NetworkId")?;
            let max = required(
                &a.max_id,
                span,
                "a NetworkId needs the protocol's largest id: `#[batch(max_id = 65535)]`",
            )?;
            Ok(Kind::ObjectId(max))
        }
        "Option"
            if generic_arg(seg)
                .and_then(last_segment)
                .is_some_and(|s| s.ident == "NetworkId") =>
        {
            refuse_others(a, &[Key::MaxId], "an Option<NetworkId>")?;
            let max = required(
                &a.max_id,
                span,
                "an Option<NetworkId> needs the protocol's largest id: `#[batch(max_id = 65535)]`",
            )?;
            Ok(Kind::Reference(max))
        }
        "Option" => Err(syn::Error::new(
            ty.span(),
            "batch fields have no Option: send a bool and guard the field with \
             `#[batch(if = flag)]` (absent reads as Default)",
        )),
        "InlineVec" => {
            let elem = generic_arg(seg).ok_or_else(|| {
                syn::Error::new(ty.span(), "InlineVec<T, N> needs its element type")
            })?;
            refuse_others(
                a,
                &[Key::Element],
                "an InlineVec (its capacity is its maximum)",
            )?;
            array_of(elem, a, span, syn::parse_quote!(<#ty>::CAPACITY), true)
        }
        "Vec" => {
            let elem = generic_arg(seg)
                .ok_or_else(|| syn::Error::new(ty.span(), "Vec<T> needs its element type"))?;
            let max = required(
                &a.max_len,
                span,
                "a Vec needs its longest length: `#[batch(max_len = 32)]` (a reader checks \
                     the count against it before anything grows)",
            )?;
            if primitive(elem) == Some("u8") && a.element.is_none() {
                refuse_others(a, &[Key::MaxLen], "a byte vector Vec<u8>")?;
                return Ok(Kind::ByteVec(max));
            }
            refuse_others(a, &[Key::MaxLen, Key::Element], "a Vec")?;
            array_of(elem, a, span, max, false)
        }
        _ => {
            if a.pod.is_some() {
                refuse_others(a, &[Key::Pod], "a plain-old-data struct")?;
                return Ok(Kind::PodStruct);
            }
            refuse_others(a, &[], "a batch struct")?;
            Ok(Kind::Struct)
        }
    }
}

/// The value of an attribute the field's type needs, or `why` at the field.
fn required(slot: &Option<(Expr, Span)>, span: Span, why: &str) -> syn::Result<Expr> {
    slot.as_ref()
        .map(|(e, _)| e.clone())
        .ok_or_else(|| syn::Error::new(span, why))
}

/// An array of `elem` with at most `max_len` elements, its element's attributes in
/// `element(...)`.
fn array_of(
    elem: &Type,
    a: &FieldAttrs,
    span: Span,
    max_len: Expr,
    inline: bool,
) -> syn::Result<Kind> {
    let inner = match &a.element {
        Some((e, _)) => e,
        None => &Box::default(),
    };
    if inner.guard.is_some() || inner.skip.is_some() || inner.name.is_some() {
        return Err(syn::Error::new(
            span,
            "`element(...)` takes the element's wire attributes (packed, range, abs_max, \
             max_len, max_id, pod), not name, if, unless or skip",
        ));
    }
    let element = kind_of(elem, inner, span)?;
    Ok(Kind::Array {
        max_len,
        element: Box::new(element),
        element_ty: elem.clone(),
        inline,
    })
}

/// The first key given that a field of `what` does not take (`allowed`, and the keys every
/// field takes), as an error saying what it takes.
fn refuse_others(a: &FieldAttrs, allowed: &[Key], what: &str) -> syn::Result<()> {
    let general = [Key::Name, Key::If, Key::Unless, Key::Skip];
    match a.first_refused(|k| allowed.contains(&k) || general.contains(&k)) {
        None => Ok(()),
        Some((k, span)) => {
            let keys: Vec<&str> = allowed.iter().chain(&general).map(|k| k.name()).collect();
            Err(syn::Error::new(
                span,
                format!(
                    "`{}` does not apply to {what} (it takes: {})",
                    k.name(),
                    keys.join(", ")
                ),
            ))
        }
    }
}
