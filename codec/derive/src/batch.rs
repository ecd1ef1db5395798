//! `#[derive(BatchStruct)]` and `#[derive(MessageEnum)]`: byte-aligned batch messages (seed
//! 002, `bitlens_batch`) from `#[batch(...)]` attributes, and the enum of a protocol's messages.
//!
//! Each field becomes one call of a `ByteStream` primitive, with the schema interpreter's range
//! checks around it (checked before a write and after a read), and one inline table of the
//! schema language's `[batch.struct.NAME]` (SCHEMA.md "Message batches").

use crate::attrs::{ident_of, once, range_bounds};
use crate::fields::int_lit;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Expr, Fields, Ident, LitStr, Type};

/// `#[batch(...)]` on the struct or enum.
struct Container {
    name: Option<LitStr>,
    message_type: Option<Expr>,
    handler: Option<Type>,
    exact_size: Option<Span>,
    krate: syn::Path,
}

fn container(attrs: &[syn::Attribute], message_set: bool) -> syn::Result<Container> {
    let mut out = Container {
        name: None,
        message_type: None,
        handler: None,
        exact_size: None,
        krate: syn::parse_quote!(::bitlens_batch),
    };
    for attr in attrs.iter().filter(|a| a.path().is_ident("batch")) {
        attr.parse_nested_meta(|meta| {
            let key = ident_of(&meta);
            match key.as_str() {
                "crate" => {
                    let path: LitStr = meta.value()?.parse()?;
                    out.krate = path.parse()?;
                    Ok(())
                }
                "name" if !message_set => once(&mut out.name, meta.value()?.parse()?, &meta, &key),
                "message_type" if !message_set => {
                    once(&mut out.message_type, meta.value()?.parse()?, &meta, &key)
                }
                "exact_size" if !message_set => {
                    let span = meta.path.span();
                    once(&mut out.exact_size, span, &meta, &key)
                }
                "handler" if message_set => {
                    once(&mut out.handler, meta.value()?.parse()?, &meta, &key)
                }
                _ if message_set => Err(meta.error(format!(
                    "unknown key `{key}` on a message enum (it takes `handler` and `crate`; each \
                     message's type and name are on its struct: `#[batch(message_type = N)]`)"
                ))),
                _ => Err(meta.error(format!(
                    "unknown key `{key}` on a batch struct (expected `name`, `message_type`, \
                     `exact_size` or `crate`)"
                ))),
            }
        })?;
    }
    Ok(out)
}

/// `#[batch(...)]` on a field, or inside `element(...)`.
#[derive(Default)]
struct FieldAttrs {
    name: Option<LitStr>,
    packed: Option<Span>,
    range: Option<(Expr, Expr, Span)>,
    abs_max: Option<(Expr, Span)>,
    max_len: Option<(Expr, Span)>,
    max_id: Option<(Expr, Span)>,
    pod: Option<Span>,
    element: Option<(Box<FieldAttrs>, Span)>,
    guard: Option<(Ident, bool, Span)>,
    skip: Option<Span>,
    keys: Vec<(String, Span)>,
}

const FIELD_KEYS: &str =
    "name, packed, range, abs_max, max_len, max_id, pod, element, if, unless, skip";

impl FieldAttrs {
    fn parse(attrs: &[syn::Attribute]) -> syn::Result<FieldAttrs> {
        let mut out = FieldAttrs::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("batch")) {
            attr.parse_nested_meta(|meta| out.item(meta))?;
        }
        Ok(out)
    }

    fn item(&mut self, meta: ParseNestedMeta<'_>) -> syn::Result<()> {
        let key = ident_of(&meta);
        let span = meta.path.span();
        self.keys.push((key.clone(), span));
        match key.as_str() {
            "name" => once(&mut self.name, meta.value()?.parse()?, &meta, &key),
            "packed" => once(&mut self.packed, span, &meta, &key),
            "pod" => once(&mut self.pod, span, &meta, &key),
            "skip" => once(&mut self.skip, span, &meta, &key),
            "range" => {
                let e: Expr = meta.value()?.parse()?;
                let (lo, hi) = range_bounds(&e)?;
                once(&mut self.range, (lo, hi, e.span()), &meta, &key)
            }
            "abs_max" => once(
                &mut self.abs_max,
                (meta.value()?.parse()?, span),
                &meta,
                &key,
            ),
            "max_len" => once(
                &mut self.max_len,
                (meta.value()?.parse()?, span),
                &meta,
                &key,
            ),
            "max_id" => once(
                &mut self.max_id,
                (meta.value()?.parse()?, span),
                &meta,
                &key,
            ),
            "if" | "unless" => {
                let input = meta.value()?;
                let flag: Ident = if input.peek(LitStr) {
                    let s: LitStr = input.parse()?;
                    s.parse()?
                } else {
                    input.parse()?
                };
                if self.guard.is_some() {
                    return Err(meta.error("give one guard: `if = flag` or `unless = flag`"));
                }
                self.guard = Some((flag, key == "if", span));
                Ok(())
            }
            "element" => {
                let mut inner = FieldAttrs::default();
                meta.parse_nested_meta(|m| inner.item(m))?;
                once(&mut self.element, (Box::new(inner), span), &meta, &key)
            }
            _ => Err(meta.error(format!(
                "unknown batch attribute `{key}` (expected one of: {FIELD_KEYS})"
            ))),
        }
    }

    /// The first key given that `kind` does not take, as an error saying what does.
    fn refuse_others(&self, allowed: &[&str], what: &str) -> syn::Result<()> {
        for (k, span) in &self.keys {
            let general = ["name", "if", "unless", "skip"];
            if !allowed.contains(&k.as_str()) && !general.contains(&k.as_str()) {
                return Err(syn::Error::new(
                    *span,
                    format!("`{k}` does not apply to {what} (it takes: {})", {
                        let mut keys: Vec<&str> = allowed.to_vec();
                        keys.extend(general);
                        keys.join(", ")
                    }),
                ));
            }
        }
        Ok(())
    }
}

/// A range check.
enum Check {
    None,
    /// `range = MIN..=MAX` on an unsigned value.
    Range(Expr, Expr),
    /// `abs_max = N` on a signed value.
    Abs(Expr),
}

/// How one field (or array element) goes on the wire.
enum Kind {
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
    match (&a.range, &a.abs_max) {
        (Some(_), Some((_, s))) => Err(syn::Error::new(
            *s,
            "give `range` (unsigned) or `abs_max` (signed), not both",
        )),
        (Some((_, _, s)), None) | (None, Some((_, s))) if !INTS.contains(&prim) => {
            Err(syn::Error::new(
                *s,
                format!("range checks apply to integers, not `{prim}` (remove it)"),
            ))
        }
        (Some((_, _, s)), None) if signed => Err(syn::Error::new(
            *s,
            format!(
                "a signed `{prim}` takes `abs_max = N` (|v| <= N), not `range`: the batch \
                 layer's errors carry unsigned values"
            ),
        )),
        (Some((lo, _, s)), None) if int_lit(lo).is_some_and(|l| l < 0) => Err(syn::Error::new(
            *s,
            format!("an unsigned `{prim}` has no negative values: start the range at 0 or above"),
        )),
        (Some((lo, hi, s)), None) => {
            if let (Some(l), Some(h)) = (int_lit(lo), int_lit(hi))
                && l > h
            {
                return Err(syn::Error::new(
                    *s,
                    format!("the range's minimum {l} is greater than its maximum {h} (swap them)"),
                ));
            }
            Ok(Check::Range(lo.clone(), hi.clone()))
        }
        (None, Some((_, s))) if !signed => Err(syn::Error::new(
            *s,
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
fn kind_of(ty: &Type, a: &FieldAttrs, span: Span) -> syn::Result<Kind> {
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
        if elem == "u8" && a.range.is_none() {
            a.refuse_others(&["pod"], "raw bytes `[u8; N]`")?;
            return Ok(Kind::Bytes);
        }
        a.refuse_others(&["pod", "range", "abs_max"], "a plain-old-data array")?;
        return Ok(Kind::Pod(elem, check_of(a, elem)?));
    }
    if let Some(p) = primitive(ty) {
        if p == "bool" {
            a.refuse_others(&[], "a bool")?;
            return Ok(Kind::Bool);
        }
        if a.packed.is_some() {
            if !["u32", "u64", "i32", "i64"].contains(&p) {
                return Err(syn::Error::new(
                    a.packed.unwrap_or(span),
                    format!("`packed` applies to u32, u64, i32 and i64, not `{p}`"),
                ));
            }
            a.refuse_others(&["packed", "range", "abs_max"], "a packed integer")?;
            return Ok(Kind::Packed(p, check_of(a, p)?));
        }
        a.refuse_others(&["range", "abs_max"], &format!("a `{p}`"))?;
        return Ok(Kind::Le(p, check_of(a, p)?));
    }
    let seg = last_segment(ty).ok_or_else(|| {
        syn::Error::new(ty.span(), "a batch field's type is a path (a primitive, String, Vec<T>, InlineStr<N>, NetworkId or a batch struct)")
    })?;
    let name = seg.ident.to_string();
    match name.as_str() {
        "String" => {
            a.refuse_others(&["max_len"], "a String")?;
            let max = required(
                &a.max_len,
                span,
                "a String needs its longest length in bytes: `#[batch(max_len = 64)]`",
            )?;
            Ok(Kind::Str(max))
        }
        "InlineStr" => {
            a.refuse_others(&[], "an InlineStr (its capacity is its maximum)")?;
            Ok(Kind::Inline)
        }
        "NetworkId" => {
            a.refuse_others(&["max_id"], "a NetworkId")?;
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
            a.refuse_others(&["max_id"], "an Option<NetworkId>")?;
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
            a.refuse_others(&["element"], "an InlineVec (its capacity is its maximum)")?;
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
                a.refuse_others(&["max_len"], "a byte vector Vec<u8>")?;
                return Ok(Kind::ByteVec(max));
            }
            a.refuse_others(&["max_len", "element"], "a Vec")?;
            array_of(elem, a, span, max, false)
        }
        _ => {
            if a.pod.is_some() {
                a.refuse_others(&["pod"], "a plain-old-data struct")?;
                return Ok(Kind::PodStruct);
            }
            a.refuse_others(&[], "a batch struct")?;
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

/// The code and schema text of one value.
struct Gen {
    serialize: TokenStream,
    min: TokenStream,
    max: TokenStream,
    /// True when the value may sit in a `pod` struct: fixed width, nothing checked on read.
    plain: TokenStream,
    /// Code that evaluates to the schema's `type = ..., keys` text (no braces, no name).
    schema: TokenStream,
    /// Compile-time assertions.
    asserts: TokenStream,
}

fn le_call(k: &syn::Path, prim: &str, name: &TokenStream, place: &TokenStream) -> TokenStream {
    let method = Ident::new(prim, Span::call_site());
    if prim == "u8" {
        quote!(#k::ByteStream::u8(s, #name, &mut #place)?;)
    } else {
        quote!(<S as #k::LittleEndian>::#method(s, #name, &mut #place)?;)
    }
}

fn check_code(
    k: &syn::Path,
    check: &Check,
    value: &TokenStream,
    all: bool,
    err: &TokenStream,
) -> TokenStream {
    let st = quote!(#k::structs);
    match (check, all) {
        (Check::None, _) => quote!(),
        (Check::Range(lo, hi), false) => {
            quote!(#st::check_range(#value as u64, (#lo) as u64, (#hi) as u64, at, #err)?;)
        }
        (Check::Abs(m), false) => quote!(#st::check_abs(#value as i64, (#m) as u64, at, #err)?;),
        (Check::Range(lo, hi), true) => {
            quote!(#st::check_range_all(&#value[..], (#lo) as u64, (#hi) as u64, at, #err)?;)
        }
        (Check::Abs(m), true) => quote!(#st::check_abs_all(&#value[..], (#m) as u64, at, #err)?;),
    }
}

/// The declared range a trace records with the value read next (`ByteStream::trace_range`):
/// `range` as given, `abs_max` as `-abs_max..=abs_max`. A range of the type's every value is no
/// range, as the schema interpreter reads `min = 0, max = u32::MAX`.
fn trace_range_code(k: &syn::Path, check: &Check, prim: &str) -> TokenStream {
    match check {
        Check::None => quote!(),
        Check::Range(lo, hi) => {
            let t = Ident::new(prim, Span::call_site());
            quote! {
                if S::READING && !((#lo) as u64 == 0 && (#hi) as u64 == <#t>::MAX as u64) {
                    #k::ByteStream::trace_range(s, (#lo) as i128, (#hi) as i128);
                }
            }
        }
        Check::Abs(m) => quote! {
            if S::READING {
                #k::ByteStream::trace_range(s, -((#m) as i128), (#m) as i128);
            }
        },
    }
}

fn check_text(check: &Check) -> TokenStream {
    match check {
        Check::None => quote!(::std::string::String::new()),
        Check::Range(lo, hi) => {
            quote!(::std::format!(", min = {}, max = {}", (#lo) as u64, (#hi) as u64))
        }
        Check::Abs(m) => quote!(::std::format!(", abs_max = {}", (#m) as u64)),
    }
}

fn is_checked(check: &Check) -> bool {
    !matches!(check, Check::None)
}

fn size_of(prim: &str) -> usize {
    match prim {
        "u8" | "i8" | "bool" => 1,
        "u16" | "i16" => 2,
        "u32" | "i32" | "f32" => 4,
        _ => 8,
    }
}

/// A value read or written by one stream call, its range checked before a write and after a
/// read (the schema interpreter's order), `bytes` its fewest and most bytes.
#[allow(clippy::too_many_arguments)]
fn checked_value(
    k: &syn::Path,
    call: TokenStream,
    check: &Check,
    place: &TokenStream,
    err: &TokenStream,
    schema_ty: &str,
    bytes: (TokenStream, TokenStream),
    plain: TokenStream,
) -> Gen {
    let check_now = check_code(k, check, place, false, err);
    let text = check_text(check);
    let (min, max) = bytes;
    Gen {
        serialize: quote! {
            let at = #k::ByteStream::base(s) + #k::ByteStream::position(s);
            if S::WRITING { #check_now }
            #call
            if S::READING { #check_now }
        },
        min,
        max,
        plain,
        schema: quote!(::std::format!("type = \"{}\"{}", #schema_ty, #text)),
        asserts: quote!(),
    }
}

/// A string or byte vector: a packed length in `0..=max`, then the bytes.
fn length_prefixed(
    call: TokenStream,
    max: TokenStream,
    st: &TokenStream,
    schema_ty: &str,
    what: &str,
) -> Gen {
    let too_long = format!("{what} is at most 65529 (the largest body)");
    Gen {
        serialize: call,
        min: quote!(1),
        max: quote!(#st::varint_len(#max) + (#max)),
        plain: quote!(false),
        schema: quote!(::std::format!("type = \"{}\", max_len = {}", #schema_ty, #max)),
        asserts: quote!(assert!((#max) <= #st::MAX_BODY, #too_long);),
    }
}

/// Code for one value at `place`, traced as `name`, its range errors naming `err`.
fn generate(
    k: &syn::Path,
    kind: &Kind,
    ty: &Type,
    place: &TokenStream,
    name: &TokenStream,
    err: &TokenStream,
) -> Gen {
    let st = quote!(#k::structs);
    let size = quote!(::core::mem::size_of::<#ty>());
    let none = quote!();
    match kind {
        Kind::Bool => Gen {
            serialize: quote!(#k::ByteStream::bool(s, #name, &mut #place)?;),
            min: quote!(1),
            max: quote!(1),
            plain: quote!(false),
            schema: quote!(::std::string::String::from("type = \"bool\"")),
            asserts: none,
        },
        Kind::Le(p, check) => {
            let traced = trace_range_code(k, check, p);
            let call = le_call(k, p, name, place);
            let call = quote!(#traced #call);
            let n = size_of(p);
            let plain = !is_checked(check);
            let mut g = checked_value(
                k,
                call,
                check,
                place,
                err,
                p,
                (quote!(#n), quote!(#n)),
                quote!(#plain),
            );
            g.asserts = range_asserts(check, p);
            g
        }
        Kind::Packed(p, check) => {
            let call = match *p {
                "u32" => quote!(#k::ByteStream::packed_u32(s, #name, &mut #place)?;),
                "u64" => quote!(#k::ByteStream::varint(s, #name, &mut #place)?;),
                "i32" => quote!(#k::ByteStream::packed_i32(s, #name, &mut #place)?;),
                _ => quote!(#k::ByteStream::packed_i64(s, #name, &mut #place)?;),
            };
            let traced = trace_range_code(k, check, p);
            let call = quote!(#traced #call);
            let max: usize = if p.ends_with("32") { 5 } else { 10 };
            let schema_ty = format!("packed_{p}");
            let mut g = checked_value(
                k,
                call,
                check,
                place,
                err,
                &schema_ty,
                (quote!(1), quote!(#max)),
                quote!(false),
            );
            g.asserts = range_asserts(check, p);
            g
        }
        Kind::Str(max) => length_prefixed(
            quote!(#k::ByteStream::string(s, #name, &mut #place, #max)?;),
            quote!(#max),
            &st,
            "string",
            "a String's max_len",
        ),
        Kind::Inline => length_prefixed(
            quote!(#k::ByteStream::text(s, #name, &mut #place)?;),
            quote!(<#ty>::CAPACITY),
            &st,
            "string",
            "an InlineStr's capacity",
        ),
        Kind::ByteVec(max) => length_prefixed(
            quote!(#k::ByteStream::byte_vec(s, #name, &mut #place, #max)?;),
            quote!(#max),
            &st,
            "bytes",
            "a byte vector's max_len",
        ),
        Kind::Bytes => Gen {
            serialize: quote! {
                #k::ByteStream::slice(s, #name, &mut #place[..], #k::SliceKind::Bytes)?;
            },
            min: size.clone(),
            max: size.clone(),
            plain: quote!(true),
            schema: quote!(::std::format!("type = \"bytes\", len = {}", #size)),
            asserts: none,
        },
        Kind::Pod(p, check) => {
            let before = check_code(k, check, place, true, err);
            let text = check_text(check);
            let plain = !is_checked(check);
            let n = size_of(p);
            Gen {
                serialize: quote! {
                    let at = #k::ByteStream::base(s) + #k::ByteStream::position(s);
                    if S::WRITING { #before }
                    #k::ByteStream::pod(s, #name, &mut #place)?;
                    if S::READING { #before }
                },
                min: size.clone(),
                max: size.clone(),
                plain: quote!(#plain),
                schema: quote!(::std::format!(
                    "type = \"pod\", element = \"{}\", len = {}{}",
                    #p,
                    #size / #n,
                    #text
                )),
                asserts: range_asserts(check, p),
            }
        }
        Kind::PodStruct => Gen {
            serialize: quote!(#k::ByteStream::pod(s, #name, &mut #place)?;),
            min: size.clone(),
            max: size.clone(),
            plain: quote!(<#ty as #k::BatchStruct>::PLAIN),
            schema: quote!({
                <#ty as #k::BatchStruct>::define(w);
                ::std::format!(
                    "type = \"pod\", element = {}",
                    #st::toml_str(<#ty as #k::BatchStruct>::STRUCT_NAME)
                )
            }),
            asserts: quote! {
                assert!(
                    <#ty as #k::BatchStruct>::PLAIN,
                    "a `pod` struct is sent in one unchecked copy: its fields must be fixed-width \
                     numbers, pod arrays, raw bytes or pod structs, without range checks or guards"
                );
                assert!(
                    <#ty as #k::BatchStruct>::MIN_BYTES == #size
                        && <#ty as #k::BatchStruct>::MAX_BYTES == #size,
                    "a `pod` struct's fields must fill its memory exactly (#[repr(C)], no padding)"
                );
            },
        },
        Kind::Struct => Gen {
            serialize: quote! {
                #k::ByteStream::scope(s, #name, |s| <#ty as #k::BatchStruct>::serialize_fields(&mut #place, s))?;
            },
            min: quote!(<#ty as #k::BatchStruct>::MIN_BYTES),
            max: quote!(<#ty as #k::BatchStruct>::MAX_BYTES),
            plain: quote!(false),
            schema: quote!({
                <#ty as #k::BatchStruct>::define(w);
                ::std::format!("type = {}", #st::toml_str(<#ty as #k::BatchStruct>::STRUCT_NAME))
            }),
            asserts: none,
        },
        Kind::Array {
            max_len,
            element,
            element_ty,
            inline,
        } => {
            let item = quote!((*item));
            let empty = quote!("");
            // An element's range errors name the array it is in (its own trace name: "" for
            // an array inside an array), as the schema interpreter's do.
            let e = generate(k, element, element_ty, &item, &empty, name);
            let (eser, emin, emax, eschema, easserts) =
                (&e.serialize, &e.min, &e.max, &e.schema, &e.asserts);
            // A Vec is sized by a count checked against the bytes that remain: each element's
            // memory must be paid for by its bytes on the wire.
            let grows = (!inline).then(|| {
                quote! {
                    assert!(
                        ::core::mem::size_of::<#element_ty>() <= 64 * (#emin),
                        "a Vec element takes more than 64 bytes of memory per byte it takes on \
                         the wire: a hostile count would make a reader allocate that much (hold \
                         large elements in a Vec of their own, or use InlineVec)"
                    );
                }
            });
            Gen {
                serialize: quote! {
                    let v = &mut #place;
                    let mut n = #k::ArrayStorage::count(v);
                    #k::ByteStream::length(s, #name, &mut n, #max_len, #emin)?;
                    if S::READING {
                        #k::ArrayStorage::reset(v, n);
                    }
                    #k::ByteStream::scope(s, #name, |s| {
                        for (i, item) in #k::ArrayStorage::items_mut(v).iter_mut().enumerate() {
                            #k::ByteStream::index(s, i, |s| {
                                #eser
                                ::core::result::Result::Ok(())
                            })?;
                        }
                        ::core::result::Result::Ok(())
                    })?;
                },
                min: quote!(1),
                max: quote!(#st::varint_len(#max_len) + (#max_len) * (#emax)),
                plain: quote!(false),
                schema: quote!(::std::format!(
                    "type = \"array\", max_len = {}, element = {{ {} }}",
                    #max_len,
                    #eschema
                )),
                asserts: quote! {
                    #easserts
                    assert!(
                        (#emin) >= 1,
                        "an array element must take at least one byte: a count of empty \
                         elements is not bounded by the bytes that remain"
                    );
                    assert!((#max_len) <= #st::MAX_BODY, "an array's max_len is at most 65529 (the largest body)");
                    #grows
                },
            }
        }
        Kind::ObjectId(max) => Gen {
            serialize: quote!(#k::link::serialize_object_id_bytes(s, #name, &mut #place, (#max) as u32)?;),
            min: quote!(1),
            max: quote!(5),
            plain: quote!(false),
            schema: quote!(::std::format!(
                "type = \"packed_u32\", min = 1, max = {}",
                (#max) as u32
            )),
            asserts: id_asserts(max),
        },
        Kind::Reference(max) => Gen {
            // Any id in range is accepted: the game resolves it in its linking context when it
            // handles the message.
            serialize: quote! {
                #k::link::serialize_id_bytes(s, #name, &mut #place, (#max) as u32, &#k::__derive::AnyId)?;
            },
            min: quote!(1),
            max: quote!(5),
            plain: quote!(false),
            schema: quote!(::std::format!("type = \"packed_u32\", max = {}", (#max) as u32)),
            asserts: id_asserts(max),
        },
    }
}

/// The compile-time checks of a `max_id`: a network id in `1..=u32::MAX`.
fn id_asserts(max: &Expr) -> TokenStream {
    quote!(assert!(
        (#max) as i128 >= 1 && (#max) as i128 <= u32::MAX as i128,
        "max_id lies in 1..=4294967295 (a network id is a u32, 0 for none)"
    );)
}

/// The compile-time checks of a range on `prim`: `0 <= min <= max <= prim::MAX`, or
/// `abs_max >= 0` (constant expressions too; literals are checked with a span already).
fn range_asserts(check: &Check, prim: &str) -> TokenStream {
    let t = Ident::new(prim, Span::call_site());
    match check {
        Check::None => quote!(),
        Check::Range(lo, hi) => quote!(assert!(
            (#lo) as i128 >= 0 && (#lo) as i128 <= (#hi) as i128 && (#hi) as i128 <= #t::MAX as i128,
            "a range lies in 0..=the type's largest value, its minimum at most its maximum"
        );),
        Check::Abs(m) => quote!(assert!((#m) as i128 >= 0, "abs_max is at least 0");),
    }
}

pub fn expand_struct(input: &DeriveInput) -> syn::Result<TokenStream> {
    let c = container(&input.attrs, false)?;
    let k = &c.krate;
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            input.generics.span(),
            "#[derive(BatchStruct)] takes structs without generic parameters",
        ));
    }
    let fields = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(n) => n.named.iter().collect::<Vec<_>>(),
            Fields::Unit => Vec::new(),
            Fields::Unnamed(u) => {
                return Err(syn::Error::new(
                    u.span(),
                    "a batch struct's fields need names (they name the trace and the schema)",
                ));
            }
        },
        _ => {
            return Err(syn::Error::new(
                input.ident.span(),
                "#[derive(BatchStruct)] takes structs; the enum of a protocol's messages takes \
                 #[derive(MessageEnum)]",
            ));
        }
    };
    let ident = &input.ident;
    let type_name = c
        .name
        .as_ref()
        .map_or_else(|| ident.unraw().to_string(), LitStr::value);
    // The name is a TOML table key of the schema (`[batch.struct.NAME]`).
    let plain_name = type_name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && type_name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !plain_name {
        let span = c.name.as_ref().map_or(ident.span(), LitStr::span);
        return Err(syn::Error::new(
            span,
            format!(
                "\"{type_name}\" cannot name a batch struct: use letters, digits and `_`, not starting with a digit"
            ),
        ));
    }
    let mut serialize = Vec::new();
    let mut mins = Vec::new();
    let mut maxes = Vec::new();
    let mut plain = Vec::new();
    let mut schema = Vec::new();
    let mut asserts = Vec::new();
    // Earlier fields: (ident, wire name, is an unguarded bool).
    let mut earlier: Vec<(Ident, String, bool)> = Vec::new();
    let st_toml = quote!(#k::structs::toml_str);
    for f in fields {
        let Some(id) = f.ident.clone() else { continue };
        let a = FieldAttrs::parse(&f.attrs)?;
        let wire = a
            .name
            .as_ref()
            .map_or_else(|| id.unraw().to_string(), LitStr::value);
        if let Some(span) = a.skip {
            if a.keys.len() > 1 {
                return Err(syn::Error::new(
                    span,
                    "a skipped field takes no other attribute",
                ));
            }
            serialize.push(quote! {
                if S::READING { self.#id = ::core::default::Default::default(); }
            });
            continue;
        }
        if earlier.iter().any(|(_, w, _)| *w == wire) {
            let span = a.name.as_ref().map_or(id.span(), LitStr::span);
            return Err(syn::Error::new(
                span,
                format!(
                    "two fields have the wire name \"{wire}\" (rename one with `name = \"...\"`)"
                ),
            ));
        }
        let kind = kind_of(&f.ty, &a, f.ty.span())?;
        let place = quote!(self.#id);
        let name = quote!(#wire);
        let g = generate(k, &kind, &f.ty, &place, &name, &name);
        let (ser, min, max, fixed, text) = (g.serialize, g.min, g.max, g.plain, g.schema);
        // A failed assertion points at the field.
        asserts.push(respan(g.asserts, f.ty.span()));
        let ty = &f.ty;
        match &a.guard {
            None => {
                serialize.push(quote!({ #ser }));
                mins.push(min);
                schema.push(quote!(
                    ::std::format!("{{ name = {}, {} }}", #st_toml(#wire), #text)
                ));
            }
            Some((flag, when, _)) => {
                let Some((_, flag_wire, _)) =
                    earlier.iter().find(|(f, _, is_bool)| f == flag && *is_bool)
                else {
                    return Err(syn::Error::new(
                        flag.span(),
                        format!(
                            "`{flag}` is not an earlier bool field that is always present: a \
                             guard names one"
                        ),
                    ));
                };
                let key = if *when { "if" } else { "unless" };
                let cond = if *when {
                    quote!(self.#flag)
                } else {
                    quote!(!self.#flag)
                };
                serialize.push(quote! {
                    if #cond {
                        #ser
                    } else if S::WRITING {
                        if self.#id != <#ty as ::core::default::Default>::default() {
                            return ::core::result::Result::Err(#k::structs::guarded_value(
                                #k::ByteStream::base(s) + #k::ByteStream::position(s),
                                #wire,
                            ));
                        }
                    } else {
                        self.#id = ::core::default::Default::default();
                    }
                });
                mins.push(quote!(0));
                schema.push(quote!(::std::format!(
                    "{{ name = {}, {}, {} = {} }}",
                    #st_toml(#wire),
                    #text,
                    #key,
                    #st_toml(#flag_wire)
                )));
            }
        }
        maxes.push(max);
        plain.push(if a.guard.is_some() {
            quote!(false)
        } else {
            fixed
        });
        let is_bool = a.guard.is_none() && matches!(kind, Kind::Bool);
        earlier.push((id, wire, is_bool));
    }
    let size_upper_bound = match c.exact_size {
        Some(_) => quote!(#k::structs::exact_size(self)),
        None => quote!(<Self as #k::BatchStruct>::MAX_BYTES),
    };
    if let (Some(span), None) = (c.exact_size, &c.message_type) {
        return Err(syn::Error::new(
            span,
            "`exact_size` is a message's size bound: it goes with `message_type = N`",
        ));
    }
    let message = c.message_type.as_ref().map(|t| {
        quote! {
            impl #k::MessageBody for #ident {
                const TYPE: u8 = #t;
                const NAME: &'static str = #type_name;

                #[inline]
                fn size_upper_bound(&self) -> usize {
                    #size_upper_bound
                }

                #[inline]
                fn serialize<S: #k::ByteStream>(&mut self, s: &mut S) -> #k::Result<()> {
                    <Self as #k::BatchStruct>::serialize_fields(self, s)
                }
            }
        }
    });
    let max_body = message.as_ref().filter(|_| c.exact_size.is_none()).map(|_| {
        quote! {
            assert!(
                <#ident as #k::BatchStruct>::MAX_BYTES <= #k::structs::MAX_BODY,
                "a message's fields may take more than the largest body (65529 bytes): lower a max_len"
            );
        }
    });
    Ok(quote! {
        // The generated code casts bounds and repeats checks a person would not write.
        #[allow(clippy::all)]
        const _: () = {
            impl #k::BatchStruct for #ident {
                const STRUCT_NAME: &'static str = #type_name;
                const MIN_BYTES: usize = 0 #(+ #mins)*;
                const MAX_BYTES: usize = 0 #(+ #maxes)*;
                const PLAIN: bool = true #(&& #plain)*;

                #[inline]
                fn serialize_fields<S: #k::ByteStream>(&mut self, s: &mut S) -> #k::Result<()> {
                    #(#serialize)*
                    ::core::result::Result::Ok(())
                }

                fn define(w: &mut #k::SchemaWriter) {
                    // Always built: `define` checks that no other struct has this name.
                    let fields: ::std::vec::Vec<::std::string::String> = ::std::vec![#(#schema),*];
                    w.define(#type_name, &fields);
                }
            }
            #message
            const _: () = {
                #(#asserts)*
                #max_body
            };
        };
    })
}

/// `t` with every token at `span` (compile-time assertions report the field, not the derive).
fn respan(t: TokenStream, span: Span) -> TokenStream {
    use proc_macro2::TokenTree;
    t.into_iter()
        .map(|tt| match tt {
            TokenTree::Group(g) => {
                let mut ng = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                ng.set_span(span);
                TokenTree::Group(ng)
            }
            mut other => {
                other.set_span(span);
                other
            }
        })
        .collect()
}

pub fn expand_enum(input: &DeriveInput) -> syn::Result<TokenStream> {
    let c = container(&input.attrs, true)?;
    let k = &c.krate;
    let ident = &input.ident;
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new(
            input.generics.span(),
            "#[derive(MessageEnum)] takes an enum without generic parameters",
        ));
    }
    let Data::Enum(e) = &input.data else {
        return Err(syn::Error::new(
            ident.span(),
            "#[derive(MessageEnum)] takes the enum of a protocol's messages: one variant \
             `Name(Message)` per message type",
        ));
    };
    let mut variants = Vec::new();
    let mut tys = Vec::new();
    for v in &e.variants {
        if let Some(attr) = v.attrs.iter().find(|a| a.path().is_ident("batch")) {
            return Err(syn::Error::new(
                attr.span(),
                "a variant takes no #[batch(...)]: its message's type and name are on the \
                 message struct (`#[batch(message_type = N, name = \"...\")]`)",
            ));
        }
        let ty = match &v.fields {
            Fields::Unnamed(u) if u.unnamed.len() == 1 => u.unnamed[0].ty.clone(),
            _ => {
                return Err(syn::Error::new(
                    v.span(),
                    "each variant holds one message: `Name(Message)`, where Message is a \
                     #[derive(BatchStruct)] struct with #[batch(message_type = N)] (a \
                     hand-written MessageBody goes in a hand-written MessageSet)",
                ));
            }
        };
        variants.push(v.ident.clone());
        tys.push(ty);
    }
    if variants.is_empty() {
        return Err(syn::Error::new(
            ident.span(),
            "a message enum needs a variant",
        ));
    }
    let body = quote!(#k::MessageBody);
    let decode_arms = variants.iter().zip(&tys).map(|(v, ty)| {
        quote! {
            t if t == <#ty as #body>::TYPE => #ident::#v(raw.decode::<#ty>()?),
        }
    });
    let read_arms = tys.iter().map(|ty| {
        quote! {
            t if t == <#ty as #body>::TYPE => #k::structs::read_body_as::<#ty, T>(raw, tracer),
        }
    });
    let dispatch_arms = tys.iter().map(|ty| {
        quote! {
            t if t == <#ty as #body>::TYPE => #k::handle_raw::<#ty>(raw, ctx, handler),
        }
    });
    let each = |f: TokenStream| {
        let arms = variants.iter().map(|v| quote!(#ident::#v(m) => { #f }));
        quote!(match self { #(#arms)* })
    };
    let type_arms = variants
        .iter()
        .zip(&tys)
        .map(|(v, ty)| quote!(#ident::#v(_) => <#ty as #body>::TYPE,));
    let bound = each(quote!(#body::size_upper_bound(m)));
    let push = each(quote!(w.push(stage, m)));
    let encode = each(quote!(#k::encode_message(dst, 0, stage, m, #k::max_body(#k::MAX_MTU))));
    let send = each(quote!(system.send(to, channel, stage, m, handler)));
    let handled = c.handler.as_ref().map(|h| {
        quote! {
            impl #k::Dispatch for #h {
                fn dispatch(
                    &mut self,
                    ctx: &#k::NetworkContext,
                    raw: &#k::RawMessage<'_>,
                ) -> #k::Result<()> {
                    let handler = self;
                    match raw.header.message_type {
                        #(#dispatch_arms)*
                        // A type the set does not list: skipped by its length.
                        _ => ::core::result::Result::Ok(()),
                    }
                }
            }

            impl #ident {
                /// Sends it through a [`MessageSystem`](bitlens_batch::MessageSystem), handled
                /// at once on loopback.
                ///
                /// # Errors
                /// As `MessageSystem::send`.
                pub fn send(
                    &mut self,
                    system: &mut #k::MessageSystem,
                    to: &[#k::ClientId],
                    channel: #k::Channel,
                    stage: #k::UpdateStage,
                    handler: &mut #h,
                ) -> #k::Result<()> {
                    #send
                }
            }
        }
    });
    let schema_defs = tys
        .iter()
        .map(|ty| quote!(<#ty as #k::BatchStruct>::define(&mut w);));
    let n = tys.len();
    Ok(quote! {
        #[allow(clippy::all)]
        const _: () = {
            impl #k::MessageEnum for #ident {
                const TYPES: &'static [(u8, &'static str)] =
                    &[#((<#tys as #body>::TYPE, <#tys as #body>::NAME)),*];

                fn read_body<T: #k::__derive::Tracer>(
                    raw: &#k::RawMessage<'_>,
                    tracer: T,
                ) -> (#k::Result<()>, T) {
                    match raw.header.message_type {
                        #(#read_arms)*
                        _ => (::core::result::Result::Err(#k::structs::unlisted_type(raw)), tracer),
                    }
                }

                fn decode(raw: &#k::RawMessage<'_>) -> #k::Result<::core::option::Option<Self>> {
                    ::core::result::Result::Ok(::core::option::Option::Some(
                        match raw.header.message_type {
                            #(#decode_arms)*
                            _ => return ::core::result::Result::Ok(::core::option::Option::None),
                        },
                    ))
                }

                fn message_type(&self) -> u8 {
                    match self { #(#type_arms)* }
                }

                fn size_upper_bound(&self) -> usize {
                    #bound
                }

                fn push(
                    &mut self,
                    w: &mut #k::BatchWriter<'_>,
                    stage: #k::UpdateStage,
                ) -> #k::Result<bool> {
                    #push
                }

                fn encode(&mut self, dst: &mut [u8], stage: #k::UpdateStage) -> #k::Result<usize> {
                    #encode
                }

                fn schema() -> ::std::string::String {
                    let mut w = #k::SchemaWriter::new();
                    #(#schema_defs)*
                    #k::structs::set_text(<Self as #k::MessageEnum>::TYPES, w)
                }
            }

            impl #ident {
                /// Decodes a raw message: `Ok(None)` for a type the set does not list.
                ///
                /// # Errors
                /// The decode error, naming the message.
                pub fn decode(raw: &#k::RawMessage<'_>) -> #k::Result<::core::option::Option<Self>> {
                    <Self as #k::MessageEnum>::decode(raw)
                }

                /// Its message type.
                pub fn message_type(&self) -> u8 {
                    <Self as #k::MessageEnum>::message_type(self)
                }

                /// Its size upper bound.
                pub fn size_upper_bound(&self) -> usize {
                    <Self as #k::MessageEnum>::size_upper_bound(self)
                }

                /// Appends it to a batch (`Ok(false)` when its bound does not fit).
                ///
                /// # Errors
                /// As `BatchWriter::push`.
                pub fn push(
                    &mut self,
                    w: &mut #k::BatchWriter<'_>,
                    stage: #k::UpdateStage,
                ) -> #k::Result<bool> {
                    <Self as #k::MessageEnum>::push(self, w, stage)
                }

                /// Encodes header and body at the start of `dst`, returning the bytes used.
                ///
                /// # Errors
                /// As `bitlens_batch::encode_message`.
                pub fn encode(&mut self, dst: &mut [u8], stage: #k::UpdateStage) -> #k::Result<usize> {
                    <Self as #k::MessageEnum>::encode(self, dst, stage)
                }

                /// The `[batch]` section of the schema language that describes the set.
                pub fn schema() -> ::std::string::String {
                    <Self as #k::MessageEnum>::schema()
                }

            }

            #handled
            const _: () = {
                let types = <#ident as #k::MessageEnum>::TYPES;
                let mut i = 0;
                while i < #n {
                    let mut j = i + 1;
                    while j < #n {
                        assert!(
                            types[i].0 != types[j].0,
                            "two messages of the enum have one message type"
                        );
                        assert!(
                            !#k::structs::same_str(types[i].1, types[j].1),
                            "two messages of the enum have one name (rename one: \
                             #[batch(name = \"...\")])"
                        );
                        j += 1;
                    }
                    i += 1;
                }
            };
        };
    })
}
